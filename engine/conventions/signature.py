"""A kernel's source-level signature, read from its mangled name: which parameters are pointers,
integers or floating-point numbers, and (numba) how each array argument spreads over the PTX
parameters.

nvcc and NVRTC mangle C++ kernels with the Itanium ABI (``_Z9matrixMulPfS_S_ii`` is
``matrixMul(float*, float*, float*, int, int)``); numba mangles its kernels the same way, each
array argument written ``Array<float, 1, A, mutable, aligned>`` (element type, dimensions,
layout). Kernels with C linkage (``extern "C"``, Triton) carry no signature.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.names import demangle

# Bytes of the C types a signature names (numba's element types included).
C_TYPE_BYTES = {
    "bool": 1, "char": 1, "signed char": 1, "unsigned char": 1,
    "short": 2, "unsigned short": 2, "half": 2, "__half": 2, "__nv_bfloat16": 2,
    "int": 4, "unsigned int": 4, "float": 4,
    "long": 8, "unsigned long": 8, "long long": 8, "unsigned long long": 8, "double": 8,
}
INTEGER_TYPES = {"bool", "char", "signed char", "unsigned char", "short", "unsigned short", "int",
                 "unsigned int", "long", "unsigned long", "long long", "unsigned long long"}
FLOAT_TYPES = {"half", "__half", "__nv_bfloat16", "float", "double"}


@dataclass(frozen=True)
class NumbaArray:
    """One numba array argument: its element type and size, dimensions and layout (C, F or A)."""

    element: str
    itemsize: int | None
    ndim: int
    layout: str


def signature_arguments(name: str) -> list[str] | None:
    """The argument types of a mangled kernel name, as the demangler writes them; None when the
    name is not mangled or cannot be read."""
    text = demangle(name)
    if text is name or not text.endswith(")"):
        return None
    depth = 0
    start = -1
    for i in range(len(text) - 1, -1, -1):
        ch = text[i]
        if ch in ")>":
            depth += 1
        elif ch in "(<":
            depth -= 1
            if depth == 0 and ch == "(":
                start = i
                break
    if start < 0:
        return None
    body = text[start + 1:-1].strip()
    if not body or body == "void":
        return []
    parts: list[str] = []
    depth = 0
    current = ""
    for ch in body:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    parts.append(current.strip())
    return parts


def numba_array(text: str) -> NumbaArray | None:
    """``Array<float, 2, C, mutable, aligned>`` -> NumbaArray("float", 4, 2, "C"); None otherwise."""
    if not text.startswith("Array<") or not text.endswith(">"):
        return None
    fields = [f.strip() for f in text[len("Array<"):-1].split(",")]
    if len(fields) < 3 or not fields[1].isdigit() or fields[2] not in ("C", "F", "A"):
        return None
    return NumbaArray(fields[0], C_TYPE_BYTES.get(fields[0]), int(fields[1]), fields[2])


def c_kind(text: str) -> str | None:
    """'pointer', 'integer' or 'float' for a C parameter type (``float const*``, ``unsigned
    long``), None for anything else (a structure passed by value, a template type)."""
    bare = text.replace("const", "").replace("volatile", "").replace("__restrict__", "").strip()
    if bare.endswith("*") or bare.endswith("&"):
        return "pointer"
    bare = " ".join(bare.split())
    if bare in INTEGER_TYPES:
        return "integer"
    if bare in FLOAT_TYPES:
        return "float"
    return None
