"""Execution trace of a simulation (numpy structured arrays) and its aggregates.

Two tables, times in cycles (float64; exact whenever ticks-per-cycle is a power of two, which
covers every λ/Λ of 001's tables):

* ``issues``: one row per issued warp instruction: warp, block, instr, subsystem, issue, complete;
* ``stalls``: one row per interval in which a warp issued nothing: warp, start, end, cause.
  A warp's time from its previous issue (+ the warp issue interval) to its next issue splits into
  a dependency part (operands or barrier) and a contention part (subsystem busy / issue limit);
  ``not_resident`` runs from 0 to a warp's first possible issue, ``finished`` from its last
  issue to the end of the simulation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

STALL_CAUSES: tuple[str, ...] = (
    "memory_dependency",
    "compute_dependency",
    "barrier",
    "subsystem_busy",
    "issue_limit",
    "not_resident",
    "finished",
)

ISSUE_DTYPE = np.dtype([("warp", np.int32), ("block", np.int32), ("instr", np.int32),
                        ("subsystem", np.int16), ("issue", np.float64), ("complete", np.float64)])
STALL_DTYPE = np.dtype([("warp", np.int32), ("start", np.float64), ("end", np.float64),
                        ("cause", np.int8)])


@dataclass
class Trace:
    """The recorded rows. ``truncated``: the issue table hit its row limit (the run went on)."""

    issues: np.ndarray
    stalls: np.ndarray
    truncated: bool = False

    def issue_order(self, warp: int) -> np.ndarray:
        """Static instruction indices warp ``warp`` issued, in order."""
        return self.issues["instr"][self.issues["warp"] == warp]

    def stalls_of(self, cause: str) -> np.ndarray:
        return self.stalls[self.stalls["cause"] == STALL_CAUSES.index(cause)]


@dataclass
class Aggregates:
    """Totals kept even without a trace (cheap to count while simulating)."""

    unit_busy_cycles: dict[str, float]      # Σ λ of the instructions issued on each subsystem
    utilisation: dict[str, float]            # busy / total cycles
    stall_cycles: dict[str, float]           # warp-cycles lost per cause, summed over warps
    issue_count: np.ndarray                  # per static instruction: warp instructions issued
    average_wait: np.ndarray                 # per static instruction: mean cycles from the warp's
    #                                          previous issue (+interval) to this issue
    # per static instruction: mean cycles it waited, operands ready, for its busy subsystem (the
    # queue in front of a memory pipeline); None where not counted
    average_queue: np.ndarray | None = None

    def table(self, names: list[str] | tuple[str, ...]) -> list[dict[str, object]]:
        """llvm-mca style rows: instruction, issues, average wait."""
        return [{"index": i, "instruction": names[i], "issued": int(self.issue_count[i]),
                 "average_wait": float(self.average_wait[i])} for i in range(len(names))]
