"""Which lanes run next: the interpreter's scheduling step, compiled.

Each warp runs from the lowest instruction any of its live lanes waits at (lanes that diverged
reconverge there); warps waiting at the same instruction run together, so that one call of the
interpreter covers them all. Done in one numba call per step instead of a dozen numpy calls,
which dominated kernels that branch every few instructions (10^5 labels: 3 steps per label).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from engine.execution.fast import run_fast


@njit(cache=True, nogil=True)
def ready_groups(pc: Any, at_barrier: Any, n: int, n_warps: int) -> Any:      # pragma: no cover - compiled
    """``(starts, warp_bounds, warps, lane_bounds, lanes)``: group ``g`` starts at instruction
    ``starts[g]`` (ascending) with the warps ``warps[warp_bounds[g]:warp_bounds[g + 1]]`` whose
    lowest live instruction it is (ascending) and, of those, the lanes waiting there
    (``lanes[lane_bounds[g]:lane_bounds[g + 1]]``, warp by warp, lane by lane). A lane is live
    when its ``pc`` is below ``n`` (not exited) and it is not held at a barrier. No group: no
    lane is live."""
    lowest = np.empty(n_warps, dtype=np.int64)
    for w in range(n_warps):
        m = n
        for k in range(w * 32, w * 32 + 32):
            p = pc[k]
            if p < m and not at_barrier[k]:
                m = p
        lowest[w] = m
    order = np.argsort(lowest, kind="mergesort")     # stable: warps ascending within a start
    groups = 0
    for k in range(n_warps):
        if lowest[order[k]] < n and (k == 0 or lowest[order[k]] != lowest[order[k - 1]]):
            groups += 1
    starts = np.empty(groups, dtype=np.int64)
    warp_bounds = np.zeros(groups + 1, dtype=np.int64)
    lane_bounds = np.zeros(groups + 1, dtype=np.int64)
    warps = np.empty(n_warps, dtype=np.int64)
    lanes = np.empty(n_warps * 32, dtype=np.int64)
    g = -1
    nw = 0
    nl = 0
    for k in range(n_warps):
        w = order[k]
        p = lowest[w]
        if p >= n:
            break                                    # sorted: every later warp has exited or waits
        if g < 0 or starts[g] != p:
            g += 1
            starts[g] = p
        warps[nw] = w
        nw += 1
        for lane in range(w * 32, w * 32 + 32):
            if pc[lane] == p and not at_barrier[lane]:
                lanes[nl] = lane
                nl += 1
        warp_bounds[g + 1] = nw
        lane_bounds[g + 1] = nl
    return starts, warp_bounds, warps[:nw], lane_bounds, lanes[:nl]


# what run_steps returns as its status
IDLE = 0            # no lane is live at the start of a step: release barriers, or the run is over
STEP_DONE = 1       # a step ended and the caller must look (barriers held, budgets, trace, time)
TO_PYTHON = 2       # group ``g`` needs the interpreter, from instruction ``at`` (its start: at == -1)
UNKNOWN_GUARD = 3   # the branch at instruction ``at`` depends on a predicate some lane lacks

STEPS_PER_CALL = 256    # steps between the caller's checks of the clock and of cancellation


@njit(cache=True, nogil=True, inline="always")
def _enter(group_warps: Any, block: int, counters: Any, trace_warps: Any,
           trace_blocks: Any) -> None:      # pragma: no cover - compiled
    """Record that ``group_warps`` entered ``block`` (as ``Recorder.enter``)."""
    t = counters[2]
    for k in range(group_warps.shape[0]):
        trace_warps[t + k] = group_warps[k]
        trace_blocks[t + k] = block
    counters[2] = t + group_warps.shape[0]


@njit(cache=True, nogil=True, inline="always")
def _branch(pc: Any, lanes: Any, regs: Any, known: Any, row: int, negated: bool, target: int,
            fall_through: int) -> bool:      # pragma: no cover - compiled
    """A guarded direct branch for ``lanes`` (as ``Machine._branch``); False, with nothing
    changed, when a lane's predicate is unknown."""
    for k in range(lanes.shape[0]):
        if not known[row, lanes[k]]:
            return False
    for k in range(lanes.shape[0]):
        lane = lanes[k]
        pc[lane] = target if (regs[row, lane] != 0) != negated else fall_through
    return True


@njit(cache=True, nogil=True)
def run_steps(pc: Any, at_barrier: Any, n: int, n_warps: int, block_start: Any, block_end: Any, block_of: Any,
              executed: Any, br_kind: Any, br_target: Any, br_row: Any, br_neg: Any, counters: Any,
              max_lane_instructions: int, max_steps: int, trace_warps: Any, trace_blocks: Any,
              regs: Any, known: Any, specials: Any, op: Any, typ: Any, width: Any, styp: Any, swidth: Any,
              mode: Any, cmp: Any, combine: Any, dst: Any, dst2: Any, guard: Any, guard_neg: Any, kind: Any,
              val: Any, base: Any) -> Any:      # pragma: no cover - compiled
    """Steps of the interpreter's run loop that need no interpreted instruction: segments of
    compiled arithmetic ending in a direct branch or at the end of their block, for every group
    :func:`ready_groups` forms, as ``Machine._segment`` runs them (same order, counts and trace).

    ``counters``: [lane-instructions, steps, trace entries] (updated). Returns ``(status, g, at,
    starts, warp_bounds, warps, lane_bounds, lanes)`` with the groups of the step it stopped in."""
    empty = np.zeros(0, dtype=np.int64)
    bounds = np.zeros(1, dtype=np.int64)
    for _ in range(STEPS_PER_CALL):
        if counters[2] + n_warps > trace_warps.shape[0]:
            return STEP_DONE, 0, -1, empty, bounds, empty, bounds, empty   # the caller empties the trace
        starts, warp_bounds, warps, lane_bounds, lanes = ready_groups(pc, at_barrier, n, n_warps)
        if starts.shape[0] == 0:
            return IDLE, 0, -1, starts, warp_bounds, warps, lane_bounds, lanes
        for g in range(starts.shape[0]):
            start = starts[g]
            if op[start] <= 0 and br_kind[start] == 0:
                return TO_PYTHON, g, -1, starts, warp_bounds, warps, lane_bounds, lanes
            group_warps = warps[warp_bounds[g]:warp_bounds[g + 1]]
            group_lanes = lanes[lane_bounds[g]:lane_bounds[g + 1]]
            nw = group_warps.shape[0]
            nl = group_lanes.shape[0]
            if block_start[start]:
                _enter(group_warps, block_of[start], counters, trace_warps, trace_blocks)
            end = block_end[start]
            i = start
            if op[i] > 0:
                j = run_fast(i, end, group_lanes, regs, known, specials, op, typ, width, styp, swidth, mode, cmp,
                         combine, dst, dst2, guard, guard_neg, kind, val, base)
                for k in range(i, j):
                    executed[k] += nw
                counters[0] += (j - i) * nl
                i = j
            if i >= end:
                for k in range(nl):
                    pc[group_lanes[k]] = end
                continue
            if br_kind[i] == 0:
                return TO_PYTHON, g, i, starts, warp_bounds, warps, lane_bounds, lanes
            executed[i] += nw
            counters[1] += 1
            counters[0] += nl
            target = br_target[i]
            if br_kind[i] == 1:
                for k in range(nl):
                    pc[group_lanes[k]] = target
                continue
            if not _branch(pc, group_lanes, regs, known, br_row[i], br_neg[i], target, i + 1):
                return UNKNOWN_GUARD, g, i, starts, warp_bounds, warps, lane_bounds, lanes
        if at_barrier.any() or counters[0] > max_lane_instructions or counters[1] > max_steps:
            return STEP_DONE, 0, -1, empty, bounds, empty, bounds, empty
    return STEP_DONE, 0, -1, empty, bounds, empty, bounds, empty
