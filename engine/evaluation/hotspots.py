"""Source hot spots: the simulated warp-cycles of a run attributed to PTX lines and CUDA lines.

The simulator counts, per static instruction, the warp instructions it issued and the mean
cycles each waited since its warp's previous issue (``Aggregates.issue_count`` and
``average_wait``). A warp spends each resident cycle either issuing (one warp-cycle per issued
instruction) or waiting for its next instruction, so

* issue cycles of instruction *i*  = its issue count,
* stall cycles of instruction *i*  = its issue count × its mean wait,

and the two, summed over the instructions, are exactly the run's resident warp-cycles (the
verdict's denominator: :mod:`engine.evaluation.verdict`). The stall cycles are charged to the
instruction that waited, the one a reader looks at to see *what* the warp was stuck on. Lines
then add up their instructions; a CUDA line is the ``.loc`` the instruction carries (``None``
without debug lines, kept as its own "no .loc" entry so the totals still add up).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

NO_LOC = "(no .loc)"


@dataclass(frozen=True)
class LineHeat:
    file: str
    line: int                     # 1-based; 0 for the "no .loc" entry
    issue_cycles: float
    stall_cycles: float
    instructions: tuple[int, ...]  # 1-based instruction numbers (the BLOCK table's)

    @property
    def total(self) -> float:
        return self.issue_cycles + self.stall_cycles


@dataclass(frozen=True)
class Hotspots:
    issue_cycles: np.ndarray      # per static instruction (0-based, the simulator's order)
    stall_cycles: np.ndarray
    ptx_lines: list[LineHeat]     # hottest first
    cuda_lines: list[LineHeat]    # hottest first

    @property
    def total(self) -> float:
        """Resident warp-cycles of the run: issue + stall cycles over every instruction."""
        return float(self.issue_cycles.sum() + self.stall_cycles.sum())

    def instruction_total(self, number: int) -> float:
        """Issue + stall cycles of 1-based instruction ``number``."""
        i = number - 1
        return float(self.issue_cycles[i] + self.stall_cycles[i]) if 0 <= i < len(self.issue_cycles) else 0.0

    def share(self, number: int) -> float:
        total = self.total
        return self.instruction_total(number) / total if total > 0 else 0.0

    def as_dict(self, limit: int | None = None) -> dict[str, Any]:
        def rows(lines: list[LineHeat]) -> list[dict[str, Any]]:
            return [{"file": h.file, "line": h.line, "issue_cycles": h.issue_cycles,
                     "stall_cycles": h.stall_cycles, "instructions": list(h.instructions)}
                    for h in lines[:limit]]

        return {"total_warp_cycles": self.total, "ptx_lines": rows(self.ptx_lines),
                "cuda_lines": rows(self.cuda_lines)}


def hotspots(evaluation: Any) -> Hotspots | None:
    """The hot spots of an evaluation (``engine.evaluation.Evaluation``); None without a simulation
    or an analysed kernel."""
    sim = getattr(evaluation, "simulation", None)
    analysis = getattr(evaluation, "analysis", None)
    if sim is None or analysis is None:
        return None
    return attribute(sim.aggregates, analysis.function.instructions)


def instruction_heat(aggregates: Any) -> tuple[np.ndarray, np.ndarray]:
    """Issue and stall warp-cycles per static instruction (0-based), vectorised: what the window's
    heat column reads after every edit."""
    count = np.asarray(aggregates.issue_count, dtype=np.float64)
    return count.copy(), count * np.asarray(aggregates.average_wait, dtype=np.float64)


def attribute(aggregates: Any, instructions: Sequence[Any]) -> Hotspots:
    """Per instruction and per line from the simulator's ``Aggregates``; ``instructions``: the
    kernel's parsed instructions in the simulator's order (``.location``, ``.cuda_location``)."""
    issue, stall = instruction_heat(aggregates)
    if len(issue) != len(instructions):
        raise ValueError(f"the simulation counted {len(issue)} instructions, the kernel has {len(instructions)}")
    ptx: dict[tuple[str, int], list[int]] = {}
    cuda: dict[tuple[str, int], list[int]] = {}
    for i, ins in enumerate(instructions):
        loc = ins.location
        ptx.setdefault((loc.file if loc else "", loc.line if loc else 0), []).append(i)
        c = ins.cuda_location
        cuda.setdefault((c.file, c.line) if c is not None else (NO_LOC, 0), []).append(i)
    return Hotspots(issue, stall, _lines(ptx, issue, stall), _lines(cuda, issue, stall))


def _lines(groups: dict[tuple[str, int], list[int]], issue: np.ndarray, stall: np.ndarray) -> list[LineHeat]:
    out = [LineHeat(file, line, float(issue[idx].sum()), float(stall[idx].sum()), tuple(i + 1 for i in idx))
           for (file, line), idx in groups.items()]
    out.sort(key=lambda h: (-h.total, h.file, h.line))
    return out
