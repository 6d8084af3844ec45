"""A kernel's SASS as a listing to read: every instruction with its address, its text and the PTX
instruction it belongs to (the rules of :mod:`engine.sass.mapping`), what the window's SASS tab
shows and what an Nsight Compute source page is matched against."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.ptx.parsed_module import Function, Module
from engine.sass.listing import SassInstruction
from engine.sass.mapping import _live, line_owners
from engine.sass.rewrite import Rewritten

INSTRUCTION_BYTES = 16          # every architecture nvdisasm 13 reads (sm_75 and newer)


@dataclass(frozen=True)
class SassLine:
    position: int               # 0-based, in the function
    opcode: str                 # LDG.E.SYS
    predicate: str              # "@!P0" or ""
    operands: str
    owner: int | None           # 0-based PTX instruction (None: none, or a slow path)

    @property
    def address(self) -> int:
        """Byte offset from the function's start (what Nsight Compute shows, less the base)."""
        return self.position * INSTRUCTION_BYTES

    @property
    def text(self) -> str:
        head = f"{self.predicate} {self.opcode}" if self.predicate else self.opcode
        operands = ", ".join(part.strip() for part in self.operands.split(",")) if self.operands else ""
        return f"{head} {operands}".strip()

    @property
    def base(self) -> str:
        return self.opcode.split(".", 1)[0]


@dataclass(frozen=True)
class SassListing:
    kernel: str
    arch: str
    lines: tuple[SassLine, ...]

    def of_instruction(self, index: int) -> list[SassLine]:
        """The SASS lines of 0-based PTX instruction ``index``."""
        return [line for line in self.lines if line.owner == index]


def annotate(kernel: Function, module: Module, listing: Sequence[SassInstruction], rewritten: Rewritten,
             arch: str) -> SassListing:
    """The listing's live code with each line's PTX owner."""
    code = _live(listing)
    owners = line_owners(kernel, module, listing, rewritten)
    lines = tuple(SassLine(s.position, s.opcode, s.predicate, s.operands, owners[p]) for p, s in enumerate(code))
    return SassListing(kernel.name, arch, lines)
