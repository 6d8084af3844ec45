"""Matrix fragments: what a ``wmma.load`` or ``wmma.store`` touches.

A warp loads or stores one matrix fragment together: R rows (columns, for the ``col`` layout) of
B contiguous bytes each, ``ldm`` elements apart, from one address the whole warp gives. The GPU
moves it as 32 equal pieces, one per lane (ptxas makes an ``ldmatrix`` of four 8x8 matrices of a
16x16 half-precision fragment: lane L gives the address of row L % 16, 16-byte half L // 16).
Handing the memory model those 32 pieces, as if each lane had asked for its own, gives a
fragment's sectors and lines in global memory and its bank conflicts in shared memory with the
machinery of every other access.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from engine.ptx.parsed_module import Instruction, Operand, OperandKind

WARP = 32
# element bytes of a fragment's type suffix
_ELEMENT = {"f16": 2, "bf16": 2, "f32": 4, "tf32": 4, "s32": 4, "f64": 8, "s8": 1, "u8": 1}
_SHAPE = re.compile(r"^m(\d+)n(\d+)k(\d+)$")


@dataclass(frozen=True)
class Fragment:
    """One warp's matrix fragment: ``rows`` runs of ``row_bytes`` bytes, ``ldm`` elements of
    ``element_bytes`` apart."""

    matrix: str          # a, b, c or d
    rows: int
    row_bytes: int
    element_bytes: int

    @property
    def lane_bytes(self) -> int:
        """Bytes each of the 32 pieces holds."""
        return max(1, self.rows * self.row_bytes // WARP)

    def addresses(self, base: np.ndarray, ldm: np.ndarray) -> np.ndarray:
        """Per thread of a block (``base``, ``ldm``: every thread's operand values), the address of
        the piece its lane moves. The warp's first lane gives the fragment's address and stride
        (the instruction requires them equal across the warp)."""
        n = len(base)
        lane = np.arange(n) % WARP
        first = (np.arange(n) // WARP) * WARP
        stride = ldm[first].astype(np.int64) * self.element_bytes
        pieces_per_row = max(1, self.row_bytes // self.lane_bytes)
        rows_per_pass = max(1, WARP // pieces_per_row)
        row = lane % rows_per_pass
        piece = lane // rows_per_pass
        return base[first].astype(np.int64) + row * stride + piece * self.lane_bytes


def fragment_of(instr: Instruction) -> Fragment | None:
    """The fragment of a ``wmma.load.{a,b,c}`` / ``wmma.store.d`` (None for anything else, or a
    shape or type this reading does not know)."""
    if instr.opcode != "wmma":
        return None
    parts = instr.full_opcode.split(".")
    if len(parts) < 3 or parts[1] not in ("load", "store") or parts[2] not in ("a", "b", "c", "d"):
        return None
    shape = next((m for m in map(_SHAPE.match, parts) if m), None)
    element = _ELEMENT.get(parts[-1])
    layout = "col" if "col" in parts else "row"
    if shape is None or element is None:
        return None
    m, n, k = (int(x) for x in shape.groups())
    first, second = {"a": (m, k), "b": (k, n)}.get(parts[2], (m, n))
    rows, across = (first, second) if layout == "row" else (second, first)
    return Fragment(parts[2], rows, across * element, element)


def stride_operand(instr: Instruction) -> Operand | None:
    """The ``ldm`` operand (the last one; absent means the fragment's own width)."""
    last = instr.operands[-1] if instr.operands else None
    return last if last is not None and last.kind in (OperandKind.REGISTER, OperandKind.IMMEDIATE) else None
