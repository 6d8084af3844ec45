"""The occupancy sweep: every model's figures at 1..N resident blocks per SM.

One definition for the window's curves, ``sweep`` and ``export --curves-csv``. The sweep steps over
resident blocks per SM (the unit the occupancy rules and the window's slider speak); warps are
reported beside them. A requested point that cannot be reached is not computed and repeated: the
sweep says why (more blocks than fit on an SM, more than the SM's share of the grid, warps that
are not whole blocks).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from engine.errors import WarplineError
from engine.evaluation.figures import CycleFigures
from engine.evaluation.registry import models, title
from engine.fileio import csv_text

MAX_SWEEP_POINTS = 256


@dataclass
class Sweep:
    blocks: list[int]                          # resident blocks per SM, ascending
    warps_per_block: int
    figures: dict[str, list[CycleFigures | None]] = field(default_factory=dict)   # model id -> per point
    errors: dict[str, str] = field(default_factory=dict)   # model id -> why it has no curve
    notes: list[str] = field(default_factory=list)          # requested points not reached, and why

    @property
    def warps(self) -> list[int]:
        return [b * self.warps_per_block for b in self.blocks]

    def kernel_cycles(self, model_id: str) -> list[tuple[int, float]]:
        """(blocks, kernel cycles) of the points where ``model_id`` has a finite figure."""
        out = []
        for blocks, fig in zip(self.blocks, self.figures.get(model_id, []), strict=False):
            if fig is not None and math.isfinite(fig.kernel_cycles):
                out.append((blocks, fig.kernel_cycles))
        return out


def plan_blocks(max_blocks: int, blocks_on_sm: int, warps_per_block: int,
                blocks: Sequence[int] | None = None, warps: Sequence[int] | None = None
                ) -> tuple[list[int], list[str]]:
    """The resident-block counts to evaluate, and a note for every requested value left out.

    ``max_blocks``: what the occupancy rules allow; ``blocks_on_sm``: the SM's share of the grid
    (more resident blocks than that change nothing). Default: 1..min(both).
    """
    reachable = max(0, min(max_blocks, blocks_on_sm))
    notes: list[str] = []
    if warps is not None:
        requested: list[int] = []
        for w in warps:
            b = w // warps_per_block
            if w % warps_per_block:
                notes.append(f"{w} warps is not a whole number of {warps_per_block}-warp blocks"
                             + (f": {b} block(s) ({b * warps_per_block} warps) used" if b else ": skipped"))
            if b >= 1:
                requested.append(b)
    elif blocks is not None:
        requested = list(blocks)
    else:
        requested = list(range(1, reachable + 1))
    chosen: list[int] = []
    beyond_fit = sorted({b for b in requested if b > max_blocks})
    beyond_share = sorted({b for b in requested if blocks_on_sm < b <= max_blocks})
    if beyond_fit:
        notes.append(f"{_span(beyond_fit)} resident block(s) per SM cannot be reached: at most "
                     f"{max_blocks} fit on an SM with these resources")
    if beyond_share:
        notes.append(f"{_span(beyond_share)} resident block(s) per SM change nothing: each SM runs only "
                     f"{blocks_on_sm} block(s) of this grid")
    for b in requested:
        if 1 <= b <= reachable and b not in chosen:
            chosen.append(b)
    chosen.sort()
    if len(chosen) > MAX_SWEEP_POINTS:
        raise WarplineError(f"the sweep asks for {len(chosen)} occupancies; at most {MAX_SWEEP_POINTS}")
    return chosen, notes


def _span(values: list[int]) -> str:
    return str(values[0]) if len(values) == 1 else f"{values[0]}..{values[-1]}" \
        if values == list(range(values[0], values[-1] + 1)) else ", ".join(map(str, values))


def sweep_rows(sweep: Sweep, rounded: bool = True) -> tuple[list[str], list[list[object]]]:
    """Header and rows: blocks, warps, then each model's kernel cycles (unique column names)."""
    ids = [m.id for m in models() if m.id in sweep.figures]
    header = ["resident_blocks", "resident_warps", *(f"{i}_kernel_cycles" for i in ids)]
    rows = []
    for k, blocks in enumerate(sweep.blocks):
        row: list[object] = [blocks, blocks * sweep.warps_per_block]
        for i in ids:
            fig = sweep.figures[i][k]
            value = fig.as_dict(rounded)["kernel_cycles"] if fig is not None else None
            row.append("" if value is None or not math.isfinite(value) else value)
        rows.append(row)
    return header, rows


def sweep_csv(sweep: Sweep, path: str | None = None, header_of: Callable[[str], str] | None = None) -> str:
    """The sweep as CSV (kernel cycles, launch cost included, rounded to 0.1 cycle); ``header_of``
    marks the figure columns (``Caveats.csv_header`` of the evaluation, engine.evaluation.caveats)."""
    header, rows = sweep_rows(sweep)
    if header_of is not None:
        header = header[:2] + [header_of(h) for h in header[2:]]
    return csv_text(header, rows, path)


def describe_sweep(sweep: Sweep) -> list[str]:
    """One line per model that has no curve, then the notes."""
    return [f"{title(m)}: {why}" for m, why in sweep.errors.items()] + list(sweep.notes)


ProgressFn = Callable[[float], None]
