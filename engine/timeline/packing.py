"""Where bars go, fast on a trace of a million rows: the sub-row of each of a lane's overlapping
bars, the split of a table's bars into lanes, and the warp slots that warps never active at the
same time share. The compiled kernels release the GIL: the GUI lays out in its worker thread."""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit

from engine.pipeline.trace import Trace


@njit(cache=True, nogil=True)   # runs in the GUI's worker thread: let the UI thread run meanwhile
def _pack_rows_core(x0: np.ndarray, x1: np.ndarray, rows: int) -> np.ndarray:  # pragma: no cover
    out = np.zeros(len(x0), np.int8)
    end = np.full(rows, -np.inf)
    for i in range(len(x0)):
        best = 0
        for r in range(rows):
            if end[r] <= x0[i]:
                best = r
                break
            if end[r] < end[best]:
                best = r
        out[i] = best
        end[best] = max(end[best], x1[i])
    return out


def pack_rows(x0: np.ndarray, x1: np.ndarray, rows: int) -> np.ndarray:
    """Row (0..rows-1) per bar, bars sorted by x0: the lowest row free at the bar's start, else
    the row that frees up first (overlap only when more than ``rows`` bars are in flight)."""
    if not len(x0):
        return np.zeros(0, np.int8)
    return _pack_rows_core(np.ascontiguousarray(x0, np.float64), np.ascontiguousarray(x1, np.float64), rows)


def warp_ids(trace: Trace) -> np.ndarray:
    """Every warp id in the trace (issuing or stalling), ascending: ``np.union1d`` of the two
    tables' warps, without sorting them."""
    issues, stalls = trace.issues["warp"], trace.stalls["warp"]
    top = max(int(issues.max()) if len(issues) else -1, int(stalls.max()) if len(stalls) else -1)
    if top < 0 or min(int(issues.min()) if len(issues) else 0, int(stalls.min()) if len(stalls) else 0) < 0:
        return np.union1d(issues, stalls).astype(np.int64)
    seen = np.zeros(top + 1, bool)
    seen[issues] = True
    seen[stalls] = True
    return np.flatnonzero(seen)


@njit(cache=True, nogil=True)
def _spans_core(index: np.ndarray, t: np.ndarray, n: int) -> tuple:  # pragma: no cover - compiled
    """Per index 0..n-1 (negative: skipped), the least and greatest ``t`` (0 where none)."""
    first = np.zeros(n)
    last = np.zeros(n)
    seen = np.zeros(n, np.bool_)
    for i in range(len(index)):
        k = index[i]
        if k < 0:
            continue
        v = t[i]
        if not seen[k]:
            seen[k] = True
            first[k] = v
            last[k] = v
        elif v < first[k]:
            first[k] = v
        elif v > last[k]:
            last[k] = v
    return first, last


def warp_slots(trace: Trace, warps: np.ndarray) -> np.ndarray:
    """Slot per warp (indexed like ``warps``): greedy interval packing of each warp's active span
    [first issue, last issue], so warps sharing a slot never overlap in time."""
    issues = trace.issues
    # each warp's first and last issue (0 for a warp that never issues: every simulated warp
    # issues, the guard keeps odd input safe)
    index = np.full(int(max(warps.max(), issues["warp"].max(initial=0))) + 1 if len(warps) else 1, -1, np.int64)
    index[warps] = np.arange(len(warps))
    first, last = _spans_core(index[issues["warp"]], issues["issue"], len(warps))
    slot = np.zeros(len(warps), dtype=np.int64)
    free: list[tuple[float, int]] = []
    n_slots = 0
    for i in np.lexsort((warps, first)):
        if free and free[0][0] <= first[i]:
            _, s = heapq.heappop(free)
        else:
            s, n_slots = n_slots, n_slots + 1
        slot[i] = s
        heapq.heappush(free, (float(last[i]), s))
    return slot


@njit(cache=True, nogil=True)   # the worker thread lays out while the UI thread draws the last result
def _split_core(groups: np.ndarray, n_groups: int, x0: np.ndarray, x1: np.ndarray,
                rows: np.ndarray) -> tuple:  # pragma: no cover - compiled
    """A stable counting sort of the bars by group (groups outside 0..n_groups-1 are left out):
    each group's start in the output, the output columns, and whether every group came out
    sorted by x0 (the simulator writes each warp's rows in time order, so it nearly always is)."""
    n = len(groups)
    bounds = np.zeros(n_groups + 1, np.int64)
    for i in range(n):
        g = groups[i]
        if 0 <= g < n_groups:
            bounds[g + 1] += 1
    for g in range(n_groups):
        bounds[g + 1] += bounds[g]
    fill = bounds[:-1].copy()
    total = bounds[n_groups]
    out_rows = np.empty(total, np.int64)
    out_x0 = np.empty(total, np.float64)
    out_x1 = np.empty(total, np.float64)
    in_order = True
    for i in range(n):
        g = groups[i]
        if g < 0 or g >= n_groups:
            continue
        p = fill[g]
        fill[g] = p + 1
        out_rows[p] = rows[i]
        out_x0[p] = x0[i]
        out_x1[p] = x1[i]
        if p > bounds[g] and out_x0[p] < out_x0[p - 1]:
            in_order = False
    return bounds, out_rows, out_x0, out_x1, in_order


def split_by_group(groups: np.ndarray, n_groups: int, x0: np.ndarray, x1: np.ndarray,
                rows: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Split bars by group, each group sorted by x0 (stable, so trace order breaks ties): the
    order of ``np.lexsort((x0, groups))``, one slice of shared columns per group."""
    bounds, rows_s, x0_s, x1_s, in_order = _split_core(groups, n_groups, x0, x1, rows)
    if not in_order:                   # rows not in time order: sort by x0 first (stable)
        by_x = np.argsort(x0, kind="stable")
        bounds, rows_s, x0_s, x1_s, _ = _split_core(groups[by_x], n_groups, x0[by_x], x1[by_x], rows[by_x])
    return [(rows_s[bounds[k]:bounds[k + 1]], x0_s[bounds[k]:bounds[k + 1]], x1_s[bounds[k]:bounds[k + 1]])
            for k in range(n_groups)]
