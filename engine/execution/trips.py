"""Loop trip counts as the sampled warps ran them.

A warp's path is the sequence of basic blocks it entered; a loop's header is entered once per
pass (once more when the loop tests at its top: that last visit only leaves), and a pass that
comes from outside the loop's body starts an *entry*. The trip count of a
loop is the passes per entry, averaged over every entry of every sampled warp (the figure the
BLOCK table and Many-BSP multiply a loop body by), and the most passes one warp made per entry
(a single wave is as slow as its slowest warp).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.analysis.cfg import ControlFlowGraph, top_tested


@dataclass(frozen=True)
class ExecutedTrips:
    """One loop over the sample: passes per entry (mean, slowest warp's) and the entries seen."""

    mean: float
    slowest: float
    entries: int
    warps: int


def executed_trips(paths: list[np.ndarray], cfg: ControlFlowGraph) -> dict[str, ExecutedTrips]:
    """Per loop key, its passes per entry over the warps' ``paths`` (loops no warp entered: none)."""
    out: dict[str, ExecutedTrips] = {}
    for loop in cfg.loops:
        tested_at_top = top_tested(cfg, loop)     # the last pass of each entry only tests
        body = np.zeros(len(cfg.blocks), dtype=bool)
        body[list(loop.body)] = True
        passes_total = entries_total = 0
        slowest = 0.0
        warps = 0
        for seq in paths:
            if not len(seq):
                continue
            at_header = seq == loop.header_block
            passes = int(at_header.sum())
            if not passes:
                continue
            previous = np.empty(len(seq), dtype=bool)
            previous[0] = False
            previous[1:] = body[seq[:-1]]
            entries = int((at_header & ~previous).sum())
            entries = max(entries, 1)
            if tested_at_top:
                passes = max(passes - entries, 0)
            passes_total += passes
            entries_total += entries
            slowest = max(slowest, passes / entries)
            warps += 1
        if entries_total:
            out[loop.key] = ExecutedTrips(passes_total / entries_total, slowest, entries_total, warps)
    return out
