"""What the GPU really executes: each PTX instruction's SASS, from ptxas and nvdisasm.

``sass_map(ptx, kernel, arch)`` assembles the kernel with one ``.loc`` per PTX instruction
(:mod:`engine.sass.rewrite`), disassembles it with line numbers (:mod:`engine.sass.assemble`,
:mod:`engine.sass.listing`) and turns the listing into per-instruction weights
(:mod:`engine.sass.mapping`): how many SASS instructions one execution of each PTX instruction
costs, with their opcodes and unit classes (:mod:`engine.sass.classes`). Results are cached in
memory and on disk (:mod:`engine.sass.map_cache`). Without the tools, or when ptxas rejects the file,
the answer is a :class:`SassUnavailable` with the reason: callers keep counting PTX.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from engine.errors import WarplineError
from engine.ptx import parse_ptx
from engine.ptx.index import kernel_source
from engine.ptx.parsed_module import Module
from engine.sass import map_cache as cache
from engine.sass.annotated import SassLine, SassListing, annotate
from engine.sass.assemble import ToolFailure, disassemble
from engine.sass.classes import CLASSES, sass_class
from engine.sass.listing import SassListingError, parse_listing
from engine.sass.mapping import map_kernel
from engine.sass.mapping_result import SassMap, SassUnavailable
from engine.sass.rewrite import rewrite
from engine.sass.tools import SassTools, find_tools

__all__ = ["CLASSES", "SassError", "SassLine", "SassListing", "SassMap", "SassTools", "SassUnavailable",
           "find_tools", "sass_class", "sass_listing", "sass_map"]

_TARGET = re.compile(r"^\s*\.target\s+([^\s,/]+)", re.MULTILINE)
# nvdisasm 13 (and ptxas 13) know Turing and newer only.
OLDEST_SM = 75


class SassError(WarplineError):
    """A request that cannot name what to map (no such kernel, unreadable file)."""


def _text_of(ptx: str | os.PathLike[str]) -> tuple[str, str]:
    if isinstance(ptx, os.PathLike) or ("\n" not in ptx and Path(ptx).is_file()):
        path = Path(ptx)
        try:
            return path.read_text(encoding="utf-8-sig"), str(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise SassError(f"{path}: cannot read the PTX file: {exc}") from None
    return ptx, "<string>"


def _arch(arch: str | int | None, text: str) -> str | None:
    found = _TARGET.search(text)
    target = found.group(1) if found and found.group(1).startswith("sm_") else None
    if arch is None or arch == "":
        return target
    name = f"sm_{arch}" if isinstance(arch, int) or not str(arch).startswith("sm_") else str(arch)
    # The file's sm_90a (wgmma, setmaxnreg) on a 9.0 GPU must stay sm_90a: plain sm_90 rejects it.
    if target and target != name and target.rstrip("af") == name:
        return target
    return name


def sass_map(ptx: str | os.PathLike[str], kernel: str, arch: str | int | None = None, *,
             module: Module | None = None, tools: SassTools | None = None) -> SassMap | SassUnavailable:
    """Per-PTX-instruction SASS weights of ``kernel`` (its exact, mangled name) in ``ptx`` (a
    path or the PTX text), assembled for ``arch`` (``"sm_90"``, ``90``; default: the file's
    ``.target``; pass the GPU profile's to see what that GPU runs).

    ``module``, when given, must be the parse of exactly this text (the caller's, to avoid a second
    parse); instruction indices are those of ``module.kernel(kernel).instructions``. ``tools``
    overrides the lookup of ptxas/nvdisasm. Never starts a tool for a (text, kernel, arch, tools)
    it has answered before, in this process or (for maps) an earlier one."""
    prepared = _prepare(ptx, kernel, arch, tools)
    if isinstance(prepared, SassUnavailable):
        return prepared
    text, filename, arch_name, found_tools = prepared
    key = cache.cache_key(text, kernel, arch_name, found_tools.fingerprint())
    remembered = cache.lookup(key)
    if remembered is not None:
        return remembered
    assembled, parsed = _parsed(text, filename, kernel, module)
    outcome = _compute(assembled, parsed, kernel, arch_name, found_tools)
    cache.store(key, outcome)
    return outcome


def sass_listing(ptx: str | os.PathLike[str], kernel: str, arch: str | int | None = None, *,
                 module: Module | None = None, tools: SassTools | None = None) -> SassListing | SassUnavailable:
    """Every SASS instruction of ``kernel`` as ptxas assembles it for ``arch`` (arguments as for
    :func:`sass_map`), each with the PTX instruction it belongs to (the map's own rule): what the
    window's SASS tab lists. Remembered in this process per (text, kernel, arch, tools)."""
    prepared = _prepare(ptx, kernel, arch, tools)
    if isinstance(prepared, SassUnavailable):
        return prepared
    text, filename, arch_name, found_tools = prepared
    key = cache.cache_key(text, kernel, arch_name, found_tools.fingerprint()) + ":listing"
    remembered = _listings.get(key)
    if remembered is not None:
        return remembered
    assembled, parsed = _parsed(text, filename, kernel, module)
    rewritten = rewrite(assembled, parsed)
    raw = disassemble(rewritten.text, kernel, arch_name, found_tools)
    if isinstance(raw, ToolFailure):
        outcome: SassListing | SassUnavailable = SassUnavailable(raw.reason)
    else:
        try:
            functions = parse_listing(raw.listing, raw.stalls)
        except SassListingError as exc:
            outcome = SassUnavailable(str(exc))
        else:
            if kernel not in functions:
                outcome = SassUnavailable(f"nvdisasm listed no function {kernel!r}")
            else:
                outcome = annotate(parsed.kernel(kernel), parsed, functions[kernel], rewritten, arch_name)
    _listings[key] = outcome
    while len(_listings) > LISTINGS_KEPT:
        _listings.pop(next(iter(_listings)))
    return outcome


LISTINGS_KEPT = 32
_listings: dict[str, SassListing | SassUnavailable] = {}


def _prepare(ptx: str | os.PathLike[str], kernel: str, arch: str | int | None,
             tools: SassTools | None) -> tuple[str, str, str, SassTools] | SassUnavailable:
    """(text, file name, architecture, tools), or why no SASS can be had."""
    text, filename = _text_of(ptx)
    arch_name = _arch(arch, text)
    if arch_name is None:
        return SassUnavailable("the PTX .target names no sm_XX architecture and none was given")
    digits = "".join(ch for ch in arch_name[3:] if ch.isdigit())
    if not digits or int(digits) < OLDEST_SM:
        return SassUnavailable(f"{arch_name}: ptxas and nvdisasm 13 handle sm_{OLDEST_SM} and newer only")
    found_tools = tools or find_tools()
    if isinstance(found_tools, str):
        return SassUnavailable(found_tools)
    return text, filename, arch_name, found_tools


def _parsed(text: str, filename: str, kernel: str, module: Module | None) -> tuple[str, Module]:
    """The text to assemble and its parse (``module`` when the caller has parsed it already)."""
    assembled = text
    if module is None:
        # Only this kernel and what it calls: in a 25 MB library, parsing and rewriting the
        # other 251 kernels cost 18 s. Its instructions keep their indices (and the key is the
        # whole file's, so the answer is the same either way).
        try:
            assembled, _ = kernel_source(text, kernel, filename, all_functions=True)
        except WarplineError as exc:
            raise SassError(str(exc)) from None
    parsed = module if module is not None else parse_ptx(assembled, filename)
    try:
        parsed.kernel(kernel)
    except KeyError:
        names = ", ".join(k.name for k in parsed.kernels) or "none"
        raise SassError(f"{filename}: no kernel {kernel!r} (kernels: {names})") from None
    return assembled, parsed


def _compute(text: str, module: Module, kernel: str, arch: str, tools: SassTools) -> SassMap | SassUnavailable:
    rewritten = rewrite(text, module)
    listing = disassemble(rewritten.text, kernel, arch, tools)
    if isinstance(listing, ToolFailure):
        return SassUnavailable(listing.reason)
    try:
        functions = parse_listing(listing.listing, listing.stalls)
    except SassListingError as exc:
        return SassUnavailable(str(exc))
    if kernel not in functions:
        return SassUnavailable(f"nvdisasm listed no function {kernel!r}")
    return map_kernel(module.kernel(kernel), module, functions[kernel], rewritten, arch, tools.ptxas)
