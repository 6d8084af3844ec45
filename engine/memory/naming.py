"""Shared-memory layout of a kernel and the display names of address forms."""

from __future__ import annotations

import re

from engine.memory.affine import Affine
from engine.ptx.parsed_module import Function, Module, Variable
from engine.ptx.symbols import symbols_named


def shared_layout(function: Function, module: Module | None = None) -> dict[str, int]:
    """Byte offset of each ``.shared`` variable the kernel names: declaration order (module
    scope first), each aligned to its ``.align`` (else its element size), from 0; ``.extern``
    (dynamic) arrays follow the static ones, as the CUDA runtime places them."""
    used = symbols_named(function)
    declared = [*(module.variables if module is not None else []), *function.variables]
    shared = [v for v in declared if v.state_space == "shared" and v.name in used]
    ordered = [v for v in shared if v.size_bytes is not None] + [v for v in shared if v.size_bytes is None]
    out: dict[str, int] = {}
    offset = 0
    for v in ordered:
        align = v.align or _element_size(v)
        offset = -(-offset // align) * align
        out[v.name] = offset
        offset += v.size_bytes or 0
    return out


def _element_size(v: Variable) -> int:
    digits = "".join(ch for ch in v.type if ch.isdigit())
    return max(1, int(digits) // 8) if digits else 1


_LOCAL_STATIC = re.compile(r"^_ZZ.*E(\d+)(\w+)$")


def _short(symbol: str) -> str:
    """``_ZZ15transpose_tiledPfPKfiiE4tile`` -> ``tile`` (a function-local static's name)."""
    m = _LOCAL_STATIC.match(symbol)
    return m.group(2)[: int(m.group(1))] if m and len(m.group(2)) >= int(m.group(1)) else symbol


def _atom_rank(atom: str) -> tuple[int, str]:
    order = ("param", "&", "tid.", "laneid", "ctaid.", "i(")
    return next((k for k, p in enumerate(order) if atom.startswith(p)), len(order)), atom


def format_affine(form: Affine) -> str:
    """``param1 + 4·tid.x + 64·tid.y + 4096·i($L__BB0_3) + 12``."""
    parts: list[str] = []
    for atom, c in sorted(form.terms, key=lambda t: _atom_rank(t[0])):
        name = _short(atom[1:]) if atom.startswith("&") else atom
        mag = "" if abs(c) == 1 else f"{abs(c)}·"
        parts.append(("- " if c < 0 else "+ ") + mag + name)
    if form.const or not parts:
        parts.append(("- " if form.const < 0 else "+ ") + str(abs(form.const)))
    text = " ".join(parts)
    return text[2:] if text.startswith("+ ") else "-" + text[2:]
