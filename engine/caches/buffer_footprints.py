"""Each buffer's footprint over the grid (the sectors every block of the launch touches, from the
executed blocks' sets) and the reuse distance of a buffer re-read at random."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.execution import Execution

BUFFER_LINE_SHIFT = 33          # a buffer's window (address >> 40) from a line number (address >> 7)


@dataclass(frozen=True)
class BufferFootprint:
    """One buffer's sectors over the whole grid, estimated from the sampled blocks."""

    buffer: int
    per_block: float            # mean distinct sectors one block touches
    growth: tuple[float, float, float]   # share of a block's sectors new to its neighbour along x, y, z
    span_sectors: float         # sectors between the lowest and highest the sample touched
    density: float              # share of the span taken as touched (1: the span caps the estimate)
    sectors: float              # the estimate: distinct sectors the grid touches
    # blocks far apart in launch order share its sectors as often as neighbours do (a table read
    # through random indices): its re-reads come back at random, not from the blocks just before
    scattered: bool = False


def _sector_sets(lines: np.ndarray, masks: np.ndarray, owner: np.ndarray) -> dict[int, np.ndarray]:
    """Distinct sectors (line * 4 + q) per owner."""
    sectors = np.concatenate([lines * 4 + q for q in range(4)])
    present = np.concatenate([(masks >> q & 1).astype(bool) for q in range(4)])
    owners = np.concatenate([owner] * 4)
    sectors, owners = sectors[present], owners[present]
    out: dict[int, np.ndarray] = {}
    if not len(sectors):
        return out
    order = np.lexsort((sectors, owners))
    sectors, owners = sectors[order], owners[order]
    bounds = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1], True])
    for a, b in zip(bounds[:-1], bounds[1:], strict=False):
        out[int(owners[a])] = np.unique(sectors[a:b])
    return out


def grid_footprint(execution: Execution, grid: tuple[int, int, int], buffer: int, lines: np.ndarray,
                   masks: np.ndarray, blocks: np.ndarray) -> BufferFootprint:
    """Distinct sectors of ``buffer`` the whole grid touches, from the sampled blocks' sets.

    In launch order a block's first touches are its sectors that neither its predecessor along x
    nor the block a row above touched (a stencil's halo, a GEMM panel along the axis it does not
    move with). Summed over the grid: the interior blocks' new sectors, the first column's (only
    the row above to share with), the first row's (only the left neighbour) and the first
    block's, each measured on sampled blocks that have those neighbours; never more than the span
    of addresses the sample reaches (a gather through random indices covers its table, however
    many blocks read it)."""
    sample = execution.sample
    assert sample is not None
    sets = _sector_sets(lines, masks, blocks)
    if not sets:
        return BufferFootprint(buffer, 0.0, (1.0, 1.0, 1.0), 0.0, 0.0, 0.0)
    by_linear = {sample.linear[b]: b for b in sets if sample.role[b] not in ("spread", "end")}
    gx = grid[0]
    row = grid[0] if grid[1] > 1 else grid[0] * grid[1]
    rows = grid[1] * grid[2] if grid[1] > 1 else grid[2]
    size, new_x, new_y, new_xy = [], [], [], []
    for lin, b in by_linear.items():
        mine = sets[b]
        if not len(mine):
            continue
        size.append(len(mine))
        left = by_linear.get(lin - 1) if lin % gx else None
        above = by_linear.get(lin - row) if rows > 1 and lin >= row else None
        if left is not None:
            new_x.append(len(np.setdiff1d(mine, sets[left], assume_unique=True)))
        if above is not None:
            new_y.append(len(np.setdiff1d(mine, sets[above], assume_unique=True)))
        if left is not None and above is not None:
            seen = np.union1d(sets[left], sets[above])
            new_xy.append(len(np.setdiff1d(mine, seen, assume_unique=True)))
    whole = float(np.mean(size)) if size else 0.0
    nx = float(np.mean(new_x)) if new_x else whole
    ny = float(np.mean(new_y)) if new_y else whole
    nxy = float(np.mean(new_xy)) if new_xy else (nx if not new_y else min(nx, ny))
    per_row = whole + (gx - 1) * nx                      # the first row of blocks
    estimate = per_row + (rows - 1) * (ny + (gx - 1) * nxy) if rows > 1 else per_row
    everything = np.concatenate(list(sets.values()))
    span = float(everything.max() - everything.min() + 1)
    growth = (nx / whole if whole else 1.0, ny / whole if whole else 1.0, 1.0)
    return BufferFootprint(buffer, whole, growth, span, 1.0,
                           max(min(estimate, span), float(len(np.unique(everything)))))





def reuse_distance(buffer: int, footprints: dict[int, BufferFootprint], rates: dict[int, float],
                   weights: dict[int, float] | None = None) -> float:
    """Distinct sectors the kernel touches between two reads of one sector of ``buffer``, its
    reads spread evenly over the launch: while the buffer's footprint comes round once, every
    other buffer moves its own rate's worth (at most its footprint). ``weights``: per buffer,
    the L2 room one of its sectors takes against a sector every SM reads (1, the default)."""
    own = footprints[buffer]
    rate = rates.get(buffer, 0.0)
    w = weights or {}
    if rate <= 0:
        return own.sectors * w.get(buffer, 1.0)
    period = own.sectors / rate                        # blocks' worth of time to read it all once
    return sum(w.get(b, 1.0) * (min(f.sectors, rates.get(b, 0.0) * period) if b != buffer else f.sectors)
               for b, f in footprints.items())
