"""Kernel names: demangling and the one kernel lookup every front end uses.

PTX keeps C++ kernels under their Itanium-mangled names (``_Z14matrixMulTiledILi32EEvPfS0_S0_ii``);
people know them as ``matrixMulTiled<32>(float*, float*, float*, int, int)`` or just
``matrixMulTiled``. :func:`find_kernel` accepts any of the three (or a unique part of one), so
``--kernel``, launch files, sessions and the window agree on what a name means.

Demangling uses the C++ runtime's own ``__cxa_demangle`` (libstdc++ or libc++abi, loaded with
ctypes); where neither library can be loaded, names are shown as they are written in the PTX.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Sequence
from typing import Any, Protocol

from engine.errors import WarplineError

MAX_NAME = 4096   # longer symbols are shown as written rather than handed to the demangler


class _Named(Protocol):
    name: str


@functools.lru_cache(maxsize=1)
def _demangler() -> tuple[Any, Any] | None:
    for library in ("stdc++", "c++abi", "c++"):
        path = ctypes.util.find_library(library)
        candidates = [path] if path else []
        candidates += ["libstdc++.so.6"] if library == "stdc++" else []
        for candidate in candidates:
            try:
                lib = ctypes.CDLL(candidate)
                func = lib.__cxa_demangle
            except (OSError, AttributeError):
                continue
            func.restype = ctypes.c_void_p
            func.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
            try:
                libc = ctypes.CDLL(None)
                free = libc.free
            except (OSError, AttributeError):
                continue
            free.argtypes = [ctypes.c_void_p]
            return func, free
    return None


@functools.lru_cache(maxsize=4096)
def demangle(name: str) -> str:
    """``_Z14matrixMulTiledILi32EEvPfS0_S0_ii`` -> ``void matrixMulTiled<32>(float*, ...)``;
    names that are not mangled (``extern "C"``, Triton's, numba's after its prefix) stay as they are."""
    if not name.startswith("_Z") or len(name) > MAX_NAME:
        return name
    tools = _demangler()
    if tools is None:
        return name
    func, free = tools
    status = ctypes.c_int(0)
    try:
        raw = name.encode("ascii")
    except UnicodeEncodeError:
        return name
    pointer = func(raw, None, None, ctypes.byref(status))
    if not pointer:
        return name
    try:
        text = ctypes.string_at(pointer).decode("utf-8", "replace")
    finally:
        free(pointer)
    return text if status.value == 0 and text else name


def base_name(name: str) -> str:
    """The bare function name: ``matrixMulTiled`` for both the mangled and the demangled form."""
    text = demangle(name)
    if text is name and name.startswith("_Z"):
        return _mangled_base(name)
    # Drop the arguments, the template arguments and the return type ("void f<32>(...)").
    head = text.split("(", 1)[0].split("<", 1)[0].strip()
    head = head.split()[-1] if head.split() else head
    return head.split("::")[-1]


def _mangled_base(name: str) -> str:
    """The first source name of a mangled symbol, without a demangler (``_Z3fooPf`` -> ``foo``)."""
    i = 2
    if name[i:i + 1] == "N":
        i += 1
        while i < len(name) and name[i] in "KVr":
            i += 1
    digits = ""
    while i < len(name) and name[i].isdigit():
        digits += name[i]
        i += 1
    return name[i:i + int(digits)] if digits else name


def display_name(name: str) -> str:
    """What the window and reports show: the demangled signature without its return type."""
    text = demangle(name)
    if text is name:
        return name
    paren = text.find("(")
    head = text[:paren] if paren >= 0 else text
    depth = 0
    split = -1
    for i, ch in enumerate(head):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == " " and depth == 0:
            split = i
    return text[split + 1:] if split >= 0 else text


def find_kernel(kernels: Sequence[_Named], wanted: str | None, where: str = "") -> Any:
    """The kernel ``wanted`` names: exact (mangled) name, demangled signature, bare name, or a
    part of one of them that matches a single kernel. None picks the first kernel.

    A ``WarplineError`` lists the kernels when nothing or more than one matches.
    """
    prefix = f"{where}: " if where else ""
    if not kernels:
        raise WarplineError(f"{prefix}the file defines no kernel (.entry with a body)")
    if wanted is None:
        return kernels[0]
    wanted = wanted.strip()
    for rule in (
        lambda k: k.name == wanted,
        lambda k: display_name(k.name) == wanted or demangle(k.name) == wanted,
        lambda k: base_name(k.name) == wanted,
        lambda k: wanted in k.name or wanted in display_name(k.name),
    ):
        matches = [k for k in kernels if rule(k)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            listed = ", ".join(display_name(k.name) for k in matches)
            raise WarplineError(f"{prefix}{wanted!r} matches several kernels: {listed}")
    listed = ", ".join(display_name(k.name) for k in kernels)
    raise WarplineError(f"{prefix}no kernel named {wanted!r} (kernels: {listed})")


def same_kernel(a: str, b: str) -> bool:
    """Two spellings (mangled, demangled, bare) of one kernel: Nsight Compute prints demangled
    names, launch files and PTX mangled ones."""
    return a == b or base_name(a) == base_name(b)
