"""PTX rewritten so that ptxas's line table names Warpline's instructions.

Every instruction of every function body gets its own ``.loc`` directive whose line number
encodes (function, instruction index): function ``k`` owns the line numbers
``base_k + 1 .. base_k + n_k``. The line table ptxas writes with ``-lineinfo`` then tells, for
each SASS instruction, which PTX instruction it came from, without depending on how the input
was laid out (several statements on one line, statements over several lines) or on the
``.file`` numbering ptxas keeps in the cubin.

The original ``.file``/``.loc`` lines and the DWARF ``.section`` blocks are removed (their
``function_name``/``inlined_at`` attributes point into those sections), and a ``debug`` target
becomes a plain one: the rewritten file carries line information only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.ptx.parsed_module import Module

FILE_NAME = "warpline.ptx"
# ``\b`` keeps ``.local`` declarations: only the ``.loc`` and ``.file`` directives go.
_DROPPED = re.compile(r"^\s*(?:\.loc\b|\.file\b|@@DWARF\b)")
_DEBUG_TARGET = re.compile(r"(\.target\b[^\n]*?)\s*,\s*debug\b")
_HEADER = re.compile(r"^\s*\.(?:version|target|address_size)\b")


@dataclass(frozen=True)
class Rewritten:
    """The text to assemble and the line-number ranges of each function body."""

    text: str
    bases: dict[str, int]     # function name -> line number of its instruction 0, minus one
    sizes: dict[str, int]     # function name -> instructions in its body

    def locate(self, line: int) -> tuple[str, int] | None:
        """(function name, instruction index) that a line of the line table stands for."""
        for name, base in self.bases.items():
            if base < line <= base + self.sizes[name]:
                return name, line - base - 1
        return None


def rewrite(text: str, module: Module) -> Rewritten:
    """``text`` (the file ``module`` was parsed from) with one ``.loc`` per instruction."""
    lines = text.split("\n")
    inserts: dict[int, list[tuple[int, int]]] = {}
    bases: dict[str, int] = {}
    sizes: dict[str, int] = {}
    next_base = 0
    for function in module.functions:
        if function.body is None or function.name in bases:
            continue
        bases[function.name] = next_base
        sizes[function.name] = len(function.body)
        for instr in function.body:
            inserts.setdefault(instr.location.line, []).append((instr.location.column, next_base + instr.index + 1))
        next_base += len(function.body)

    out: list[str] = []
    depth = 0          # brace depth inside a removed .section block
    in_section = False
    header_end = 0
    for number, line in enumerate(lines, start=1):
        stripped = line.lstrip()
        if in_section or stripped.startswith(".section"):
            in_section = True
            depth += line.count("{") - line.count("}")
            if depth <= 0 and "}" in line:
                in_section, depth = False, 0
            out.append("")
            continue
        if _DROPPED.match(line):
            out.append("")
            continue
        if _HEADER.match(line):
            line = _DEBUG_TARGET.sub(r"\1", line)
            header_end = len(out) + 1
        # Insert from the right so that earlier columns stay valid; a statement may share its
        # line with others (``{ add ...; mul ...; }``), so the .loc goes on a line of its own.
        for column, loc_line in sorted(inserts.get(number, ()), reverse=True):
            cut = max(column - 1, 0)
            line = f"{line[:cut]}\n.loc 1 {loc_line} 1\n{line[cut:]}"
        out.append(line)
    out.insert(header_end, f'.file 1 "{FILE_NAME}"')
    return Rewritten("\n".join(out), bases, sizes)
