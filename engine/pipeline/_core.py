"""The simulator's inner loop (numba). Only ``engine.pipeline.simulator`` calls it.

Everything is an int64 array (the trace: the caller's structured-table fields) so one compiled
version serves every kernel; time is in integer ticks. The arrays travel in a few records
(:class:`KernelArrays`, :class:`TraceBuffers`, :class:`Totals`, :class:`WorkArrays`, named tuples
numba types field by field) and the run's counters in one int64 vector (``R_*``). State is kept
per *slot* (a resident warp position); a block occupies ``warps_per_block`` consecutive slots and
a retiring block's slots go to the next block. The caller allocates every work array, so the
function compiles without numba's reference counting (``_nrt=False``), which would otherwise
cost atomic operations per array use.

:func:`simulate_core` is a loop over event ticks, each a few stages: launch blocks
(:func:`_launch_blocks`), wake slots (:func:`_wake`), select and issue (:func:`_issue_round`:
:func:`_pick_lrr` or :func:`_pick_gto`, then :func:`_issue`, whose completions and barrier
releases :func:`_fetch` the next instructions and :func:`_retire_warp` finished warps), and the
next event (:func:`_next_event`). Every stage is compiled inline (``inline="always"``), so the
loop numba compiles is the same flat code as one long function.

Semantics (``docs/pipeline.md`` has the long form; ``tests/sim_oracle.py`` restates them plainly):
* at a tick ``t`` one *round* visits the resident warps in policy order (LRR: round-robin from the
  slot after the last one that issued; GTO: the last issuing warp, then blocks oldest first);
  rounds repeat at the same tick while a warp could still issue;
* a warp issues its next instruction (program order) when its producers have completed, at least
  ``gap`` ticks have passed since its previous issue, its subsystem is free and fewer than IL
  instructions were issued in the current cycle;
* a barrier is released at the latest completion of the barrier instruction over the block's
  warps; a block retires when every instruction of its warps has completed, and the next block
  starts ``block_overhead`` later, and no sooner than ``P_BINT`` after the SM started the block
  before it (the SM launches blocks one at a time; 0: no such limit).

Cost (docs/pipeline.md, "Speed"): the work per issued instruction is a handful of bit operations,
not a visit of the warps.
* Each slot keeps its *wake* tick (operands ready and issue interval passed; INF when it is not
  waiting to issue). Slots are bits of 64-bit words: ``elig`` (wake <= now) and one mask per
  subsystem (the subsystem of the slot's next instruction). A scheduler pick is "first set bit of
  elig & (masks of the free subsystems), from a start position": a few word operations.
* Sleeping slots need no queue: the earliest wake is kept exactly (a minimum updated on each
  fetch), and only when time reaches it does one pass over the wake array (branch-free, so LLVM
  vectorises it) refresh ``elig`` and the minimum. That pass costs about what one heap operation
  did, and there is one per wake-up tick instead of a push and a pop per instruction.
* A slot whose subsystem is already busy beyond its operands' ready tick sleeps until the
  subsystem frees (nothing could issue it sooner), which saves an empty wake-up.
* The stall cause of the wait after the operands (subsystem busy at the ready tick, else issue
  limit) is a bit per slot too, decided for all slots waking at one tick with word operations.
* LRR's rounds at one tick are merged: picking "the first eligible slot circularly after the last
  one that issued" until none is left is the same order as repeating passes (a round only ends
  early to launch a retired block's successor first, which ``pass_left`` tracks).
* Empty rounds change nothing (no issue, no state), so when events happen is free to choose as
  long as no tick at which something can issue or wake is skipped; the trace and every figure are
  identical to the heap-based core this replaced (checked on random kernels of up to 640 slots).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

# stall causes (index into the cause totals; names in trace.STALL_CAUSES)
MEMORY_DEPENDENCY = 0
COMPUTE_DEPENDENCY = 1
BARRIER = 2
SUBSYSTEM_BUSY = 3
ISSUE_LIMIT = 4
NOT_RESIDENT = 5
FINISHED = 6
N_CAUSES = 7

# program items
RUN = 0
LOOP_BEGIN = 1
LOOP_END = 2
HALT = 3

# slot states
EMPTY = 0
ACTIVE = 1
AT_BARRIER = 2
DONE = 3

# parameter vector layout
P_BLOCKS, P_WPB, P_GAMMA, P_IL, P_TICKS, P_GAP, P_BOVH, P_WOVH, P_POLICY, P_BUDGET, \
    P_RECORD, P_NSUB, P_MAXDEPTH, P_NDONE, P_BINT, P_NSCHED = range(16)
N_PARAMS = 16

# the run's counters (one int64 vector): the summary the caller reads (the first N_SUMMARY), then
# the state the stages share between ticks
R_END, R_ISSUED, R_TRACE_ROWS, R_STALL_ROWS, R_STOPPED, R_ERROR, R_ERROR_BLOCK, R_TRUNCATED, R_ROUNDS, \
    R_FIN_ROWS, R_FINISHED_WARPS, R_FINISH_SUM, R_NEXT_BLOCK, R_RETIRED, R_MAX_COMPLETE, R_PENDING, \
    R_LAUNCHER_FREE, R_NEXT_WAKE, R_PARKED, R_SCHED = range(20)
N_SUMMARY = 9
# the SM's schedulers (one issue per cycle each, a warp slot belongs to scheduler slot mod their
# number): each one's issue slots used in the current cycle, R_SCHED + k; R_PARKED: slots parked
# until the next cycle
MAX_SCHEDULERS = 8
# pipes (subsystems, and the schedulers' copies of those each has its own) are bits of an int64
MAX_PIPES = 64
N_RUN = R_SCHED + MAX_SCHEDULERS

# why a run stopped early (R_STOPPED)
STOP_NONE = 0
STOP_CYCLE_BUDGET = 1
STOP_CANCELLED = 2
# Loop turns between two reads of the cancel flag: a turn is one event tick (tens of ns to a few
# µs), so a request is seen within milliseconds while the read costs nothing measurable.
CANCEL_POLL = 1024

# error codes
ERR_NONE = 0
ERR_BARRIER_DEADLOCK = 1
ERR_STUCK = 2

INF = np.int64(2**62)
# memory levels beyond the SM that a request keeps busy after it issued: L2, DRAM
N_LEVELS = 2
# asynchronous copies (cp.async): what an instruction does to its warp's copy groups
ASYNC_NONE, ASYNC_COPY, ASYNC_COMMIT, ASYNC_WAIT, ASYNC_WAIT_ALL = range(5)
# a warp's copy groups: the open group's latest completion, the committed groups' count, then
# their latest completions, oldest first (more pending groups than this merge the two oldest)
G_OPEN, G_COUNT, G_RING = 0, 1, 2
GROUP_RING = 8
N_GROUP_FIELDS = G_RING + GROUP_RING
MAX_WARPS_PER_BLOCK = 64
MAX_RESIDENT_BLOCKS = 64

# per-block state rows
B_BLOCK, B_FINISHED, B_ARRIVED, B_BARMAX, B_LASTC, B_START, B_ORDER, B_ORDER_COPY, B_QUEUE, B_ROT = range(10)
N_BLOCK_FIELDS = 10

# per-slot state: rows of one int64 matrix (slots padded to whole 64-bit words)
F_STATE, F_GID, F_PC, F_K, F_KEND, F_SP, F_NEXT, F_UNIT, F_READY, F_DCAUSE, F_GAP, F_WAKE, \
    F_LASTC, F_BSLOT, F_SLOT, F_HOLD = range(16)
N_FIELDS = 16


class KernelArrays(NamedTuple):
    """The encoded kernel (read only). Per instruction ``i``: ``lam``/``Lam`` (issue interval and
    latency, ticks), ``isbar`` and ``slots`` (issue slots in quarters: the SASS instructions one
    execution issues, 4 per SASS instruction; ``P_IL`` is in quarters too), ``gap`` (ticks after
    its issue before the warp may issue again: ptxas's stall counts; the wait beyond the issue
    interval is charged as a compute dependency). ``dep_src``: the
    completion slots instructions wait on (``P_NDONE`` per warp), ``dep_cause[e]`` the stall cause
    charged when dependence ``e`` is the one ready last (memory or compute, by its producer). The
    program (``prog_kind``/``prog_a``/``prog_b``: runs and loops, see :func:`_advance`) walks a
    pool of positions; per position the instruction (``pool``), its pipe (``pool_unit``; where
    ``pool_split`` is set each scheduler has its own copy of the subsystem, and a slot uses
    ``pool_unit`` + its scheduler), its range in ``dep_src`` and the completion slot it writes
    (its own instruction's or a renamed copy's). ``P_NSUB`` counts pipes, copies included.
    ``path_start[p]``: path ``p``'s first program item; ``warp_path[block % rows, warp]``: a
    warp's path. ``level_lam[i * N_LEVELS + q]``: the ticks one execution of ``i`` keeps memory
    level ``q`` (L2, DRAM) busy for the SM (0: none). ``async_op[i]``: what ``i`` does to its
    warp's groups of asynchronous copies (``ASYNC_*``); ``async_n[i]``: the groups a wait leaves
    pending."""

    lam: np.ndarray
    Lam: np.ndarray
    dep_cause: np.ndarray
    isbar: np.ndarray
    slots: np.ndarray
    gap: np.ndarray
    dep_src: np.ndarray
    prog_kind: np.ndarray
    prog_a: np.ndarray
    prog_b: np.ndarray
    pool: np.ndarray
    pool_unit: np.ndarray
    pool_split: np.ndarray
    pool_dlo: np.ndarray
    pool_dhi: np.ndarray
    pool_slot: np.ndarray
    path_start: np.ndarray
    warp_path: np.ndarray
    level_lam: np.ndarray
    async_op: np.ndarray
    async_n: np.ndarray


class TraceBuffers(NamedTuple):
    """The caller's trace tables, as field views: issue rows, stall rows, and ``fin_rows`` (the
    stall rows of cause FINISHED, one per warp, whose end is only known at the end)."""

    warp: np.ndarray
    block: np.ndarray
    instr: np.ndarray
    sub: np.ndarray
    issue: np.ndarray
    complete: np.ndarray
    st_warp: np.ndarray
    st_start: np.ndarray
    st_end: np.ndarray
    st_cause: np.ndarray
    fin_rows: np.ndarray


class Totals(NamedTuple):
    """Aggregates in ticks: busy time per subsystem, stall time per cause, per instruction the
    issues, the wait before issue and the part of it spent queueing for the subsystem, and the
    busy time of each memory level."""

    unit_busy: np.ndarray
    cause_ticks: np.ndarray
    instr_count: np.ndarray
    instr_wait: np.ndarray
    instr_queue: np.ndarray
    level_busy: np.ndarray


class WorkArrays(NamedTuple):
    """Work memory the caller allocates (so the core needs no reference counting): the slot
    fields (``N_FIELDS`` rows of ``64 * words``), the loop-counter stacks, the completion ticks
    (``P_NDONE`` per slot), ``(5 + nsub) * words`` mask words (elig, a scratch word per slot
    word, the stall-cause bits, the slots parked until the next cycle because their scheduler
    issued its share, then one slot mask per subsystem), the block rows, the
    subsystems' free ticks, the memory levels' (``N_LEVELS``) and each slot's copy groups
    (``N_GROUP_FIELDS`` per slot)."""

    slots: np.ndarray
    stack: np.ndarray
    done: np.ndarray
    masks: np.ndarray
    blocks: np.ndarray
    units: np.ndarray
    levels: np.ndarray
    groups: np.ndarray


class _Config(NamedTuple):
    """The run's constants (from ``params`` and the buffers' sizes)."""

    n_blocks: int
    wpb: int
    gamma: int
    il: int
    ticks: int
    nsched: int  # schedulers: a slot issues through scheduler slot % nsched (1: one SM-wide pool)
    il_sched: int  # each scheduler's issue slots per cycle (quarters, as il)
    gap: int
    bovh: int
    wovh: int
    bint: int  # the SM starts one block at a time: starts at least bint apart (0: no limit)
    gto: bool
    budget: int
    record: bool
    nsub: int
    n_done: int
    nslots: int
    nw: int
    all_units: int | np.int64  # every subsystem, as bits (an int64 in the compiled code)
    tr_cap: int
    st_cap: int
    tickf: float  # the trace is written in cycles straight into the caller's tables


class _Slots(NamedTuple):
    """Per-slot state: one 1-D view per field (plain base + index addressing in the hot loop)."""

    state: np.ndarray
    gid: np.ndarray
    pc: np.ndarray
    k: np.ndarray
    kend: np.ndarray
    sp: np.ndarray
    next: np.ndarray
    unit: np.ndarray
    ready: np.ndarray
    dcause: np.ndarray
    gap: np.ndarray
    wake: np.ndarray
    lastc: np.ndarray
    bslot: np.ndarray
    slot: np.ndarray
    hold: np.ndarray   # the tick before which the slot's stall count keeps it from issuing again


class _Masks(NamedTuple):
    """Slot bit masks and the subsystems' free ticks. ``fail_busy``: the stall cause of the wait
    after the operands, SUBSYSTEM_BUSY where set, else ISSUE_LIMIT; ``undecided`` slots get
    theirs when they wake (word operations for all). ``unit_mask[unit * nw + word]``: slots whose
    next instruction is on ``unit``."""

    elig: np.ndarray
    elig_new: np.ndarray
    fail_busy: np.ndarray
    undecided: np.ndarray
    unit_mask: np.ndarray
    sub_free: np.ndarray
    parked: np.ndarray


class _Blocks(NamedTuple):
    """Per block slot: the block it holds (-1: none), its warps finished and at the barrier, the
    latest completion at the barrier and overall, its next start; the age order (``order``, and
    ``order_copy`` kept for GTO's round) and the slots waiting for a block (``queue``)."""

    block: np.ndarray
    finished: np.ndarray
    arrived: np.ndarray
    barmax: np.ndarray
    lastc: np.ndarray
    start: np.ndarray
    order: np.ndarray
    order_copy: np.ndarray
    queue: np.ndarray
    rot: np.ndarray     # the block's scheduler rotation (see _scheduler)


def words_for(nslots: int) -> int:
    """64-bit words of a slot bit mask (the slot arrays are padded to ``64 * words``)."""
    return (nslots + 63) // 64


_STAGE = dict(cache=True, error_model="numpy", inline="always", _nrt=False)


@njit(**_STAGE)
def _bit(slot):
    return np.int64(1) << (slot & 63)


@njit(**_STAGE)
def _advance(kern, sl, stack, slot):
    """Move ``slot`` to its next static instruction and return its index in ``pool``; -1 when its
    path is exhausted. Within a run (the usual case) that is one compare: ``sl.k`` is the next pool
    index and ``sl.kend`` the run's end; ``sl.pc`` is the program item after the current run."""
    k = sl.k[slot]
    if k < sl.kend[slot]:
        sl.k[slot] = k + 1
        return k
    pc = sl.pc[slot]
    while True:
        kind = kern.prog_kind[pc]
        if kind == RUN:  # never empty: the encoder leaves empty runs out
            k = kern.prog_a[pc]
            sl.k[slot] = k + 1
            sl.kend[slot] = k + kern.prog_b[pc]
            sl.pc[slot] = pc + 1
            return k
        elif kind == LOOP_BEGIN:
            if kern.prog_a[pc] <= 0:
                pc = kern.prog_b[pc] + 1
            else:
                stack[slot, sl.sp[slot]] = kern.prog_a[pc]
                sl.sp[slot] += 1
                pc += 1
        elif kind == LOOP_END:
            top = sl.sp[slot] - 1
            stack[slot, top] -= 1
            if stack[slot, top] > 0:
                pc = kern.prog_a[pc] + 1
            else:
                sl.sp[slot] = top
                pc += 1
        else:
            sl.pc[slot] = pc
            return -1


@njit(**_STAGE)
def _units_mask(unit_mask, nw, fm, wd):
    """Slots of word ``wd`` whose next instruction is on a subsystem of ``fm`` (as bits)."""
    # over the set bits of fm: a plain loop over the subsystems gets vectorised into masked
    # gathers, several times slower for a handful of subsystems
    c = np.int64(0)
    m = fm
    while m != 0:
        c |= unit_mask[trailing_zeros(m) * nw + wd]
        m &= m - 1
    return c


@njit(**_STAGE)
def _first(lo, hi, mk, nw, fm, skip):
    """First slot in [lo, hi) that is eligible and whose subsystem is in ``fm`` (free subsystems
    as bits), leaving out slot ``skip``; -1 if none."""
    if lo >= hi:
        return -1
    w0 = lo >> 6
    w1 = (hi - 1) >> 6
    for wd in range(w0, w1 + 1):
        c = _units_mask(mk.unit_mask, nw, fm, wd) & mk.elig[wd]
        if wd == w0:
            c &= -(np.int64(1) << (lo & 63))  # bits >= lo
        if wd == w1:
            top = hi - (wd << 6)
            if top < 64:
                c &= (np.int64(1) << top) - 1
        if skip >= 0 and (skip >> 6) == wd:
            c &= ~(np.int64(1) << (skip & 63))
        if c != 0:
            return (wd << 6) + trailing_zeros(c)
    return -1


@njit(**_STAGE)
def _scan(wake, nw, t, elig_new):
    """``elig_new`` = slots with wake <= t; returns the earliest wake after t (INF: none).

    Branch-free so that LLVM vectorises the 64-slot inner loop."""
    nxt = INF
    for wd in range(nw):
        bits = np.int64(0)
        base = wd << 6
        for j in range(64):
            w = wake[base + j]
            le = w <= t
            bits |= np.int64(le) << j
            nxt = min(nxt, INF if le else w)
        elig_new[wd] = bits
    return nxt


@njit(**_STAGE)
def _record_stall(buf, cfg, run, gid, start, end, cause):
    """A stall row from tick ``start`` to ``end`` (when recording, while there is room)."""
    n_st = run[R_STALL_ROWS]
    if cfg.record and n_st < cfg.st_cap:
        buf.st_warp[n_st] = gid
        buf.st_start[n_st] = start / cfg.tickf
        buf.st_end[n_st] = end / cfg.tickf
        buf.st_cause[n_st] = cause
        run[R_STALL_ROWS] = n_st + 1


@njit(**_STAGE)
def _schedule_wake(sl, mk, run, w, u, e0, t):
    """Slot ``w`` (next instruction on ``u``) can issue from ``e0`` on: eligible now, or asleep
    until then, or until its subsystem frees if that is later (nothing could issue it sooner).
    Decides the stall cause of the wait after ``e0`` where it is known already."""
    ww = w >> 6
    wbit = _bit(w)
    f0 = mk.sub_free[u]
    mk.undecided[ww] &= ~wbit
    if f0 > e0:
        # its subsystem is busy at e0 already (and only gets busier): the wait after the
        # operands is the subsystem's
        mk.fail_busy[ww] |= wbit
    else:
        mk.fail_busy[ww] &= ~wbit
    if e0 <= t:
        sl.wake[w] = e0
        mk.elig[ww] |= wbit
    else:
        if f0 > e0:
            e0 = f0  # no wake-up before the subsystem frees
        else:
            mk.undecided[ww] |= wbit  # decided when it wakes up
        sl.wake[w] = e0
        if e0 < run[R_NEXT_WAKE]:
            run[R_NEXT_WAKE] = e0


@njit(**_STAGE)
def _next_position(kern, sl, mk, bk, cfg, w, kp):
    """Slot ``w`` waits for pool position ``kp`` next; returns its pipe (the subsystem, or its
    scheduler's copy of it where each scheduler has one)."""
    nw = cfg.nw
    sl.next[w] = kern.pool[kp]
    sl.slot[w] = kern.pool_slot[kp]
    u = kern.pool_unit[kp]
    if kern.pool_split[kp] != 0:
        u += _scheduler(sl, bk, cfg, w)
    sl.unit[w] = u
    mk.unit_mask[u * nw + (w >> 6)] |= _bit(w)
    return u


@njit(**_STAGE)
def _start_warp(kern, sl, mk, bk, buf, tot, work, cfg, run, w, gid, pc, start, t):
    """Warp ``gid`` takes slot ``w`` at program item ``pc``; its first issue at ``start``."""
    sl.gid[w] = gid
    sl.state[w] = ACTIVE
    sl.pc[w] = pc
    sl.k[w] = 0
    sl.kend[w] = 0
    sl.sp[w] = 0
    sl.lastc[w] = 0
    sl.gap[w] = start
    sl.hold[w] = 0
    for q in range(cfg.n_done):
        work.done[w * cfg.n_done + q] = 0
    for q in range(N_GROUP_FIELDS):
        work.groups[w * N_GROUP_FIELDS + q] = 0
    kp = _advance(kern, sl, work.stack, w)
    u = _next_position(kern, sl, mk, bk, cfg, w, kp)
    sl.ready[w] = 0
    sl.dcause[w] = COMPUTE_DEPENDENCY
    _schedule_wake(sl, mk, run, w, u, start, t)
    if start > 0:
        tot.cause_ticks[NOT_RESIDENT] += start
        _record_stall(buf, cfg, run, gid, 0, start, NOT_RESIDENT)


@njit(**_STAGE)
def _launch_blocks(kern, sl, mk, bk, buf, tot, work, cfg, run, t):
    """Stage 1: the next blocks into the block slots waiting in the launch queue (all of them at
    the start, then those a retirement freed)."""
    wpb = cfg.wpb
    for qi in range(run[R_PENDING]):
        b = bk.queue[qi]
        nb = run[R_NEXT_BLOCK]
        if nb >= cfg.n_blocks:
            continue
        start = bk.start[b]
        if cfg.bint > 0:
            if start < run[R_LAUNCHER_FREE]:
                start = run[R_LAUNCHER_FREE]
            run[R_LAUNCHER_FREE] = start + cfg.bint
        bk.block[b] = nb
        bk.finished[b] = 0
        bk.arrived[b] = 0
        bk.barmax[b] = 0
        bk.lastc[b] = 0
        bk.rot[b] = nb & (cfg.nsched - 1)
        for wi in range(wpb):
            pc = kern.path_start[kern.warp_path[nb % kern.warp_path.shape[0], wi]]
            _start_warp(kern, sl, mk, bk, buf, tot, work, cfg, run, b * wpb + wi, nb * wpb + wi, pc,
                        start + wi * cfg.wovh, t)
        run[R_NEXT_BLOCK] = nb + 1
    run[R_PENDING] = 0


@njit(**_STAGE)
def _wake(sl, mk, cfg, run, t, fm):
    """Stage 2: slots whose wake tick has come join ``elig``; the wait after the operands of those
    still undecided (ready now: t is their wake tick) goes to the subsystem if it is busy now,
    else to the issue limit (other warps issue first)."""
    nw = cfg.nw
    run[R_NEXT_WAKE] = _scan(sl.wake, nw, t, mk.elig_new)
    busy_units = ~fm & cfg.all_units
    for wd in range(nw):
        fresh = mk.elig_new[wd] & ~mk.elig[wd] & ~mk.parked[wd]
        mk.elig[wd] = mk.elig_new[wd] & ~mk.parked[wd]    # parked: back at the next cycle
        fresh &= mk.undecided[wd]
        if fresh != 0:
            busy = _units_mask(mk.unit_mask, nw, busy_units, wd)
            mk.fail_busy[wd] = (mk.fail_busy[wd] & ~fresh) | (fresh & busy)
            mk.undecided[wd] &= ~fresh


@njit(**_STAGE)
def _pick_gto(cfg, mk, bk, fm, greedy, k, gpos):
    """GTO's next slot of this round: the greedy warp, then blocks oldest first. ``k`` (0: the
    greedy warp, then 1 + index into the age order) and ``gpos`` (next slot to look at in the
    current block) carry the round's position; returns (slot or -1, k, gpos)."""
    gamma = cfg.gamma
    wpb = cfg.wpb
    nw = cfg.nw
    while True:
        if k == 0:
            # a retirement in this round moves its block to the end of the age order; the
            # round itself keeps the order it started with
            for bi in range(gamma):
                bk.order_copy[bi] = bk.order[bi]
            k = 1
            gpos = bk.order_copy[0] * wpb
            if greedy >= 0:
                s = _first(greedy, greedy + 1, mk, nw, fm, -1)
                if s >= 0:
                    return s, k, gpos
            continue
        if k > gamma:
            return -1, k, gpos
        if nw == 1:
            # no candidate anywhere: the round is over without a visit of the blocks
            c = _units_mask(mk.unit_mask, 1, fm, 0) & mk.elig[0]
            if greedy >= 0:
                c &= ~(np.int64(1) << greedy)
            if c == 0:
                return -1, k, gpos
        b = bk.order_copy[k - 1]
        s = _first(gpos, b * wpb + wpb, mk, nw, fm, greedy)
        if s >= 0:
            return s, k, s + 1
        k += 1
        if k <= gamma:
            gpos = bk.order_copy[k - 1] * wpb


@njit(**_STAGE)
def _pick_lrr(cfg, mk, fm, rr):
    """LRR's next slot: the first eligible one circularly from ``rr`` (-1: none)."""
    if cfg.nw == 1:
        # up to 64 slots (every GPU's case): the circular search is two bit operations
        c = _units_mask(mk.unit_mask, 1, fm, 0) & mk.elig[0]
        if c == 0:
            return -1
        c_hi = c & -(np.int64(1) << rr)  # slots from rr on
        return trailing_zeros(c_hi) if c_hi != 0 else trailing_zeros(c)
    s = _first(rr, cfg.nslots, mk, cfg.nw, fm, -1)
    if s < 0:
        s = _first(0, rr, mk, cfg.nw, fm, -1)
    return s


@njit(**_STAGE)
def _charge_wait(sl, mk, buf, tot, cfg, run, s, i, t):
    """The wait of slot ``s`` before issuing ``i`` at ``t``: from the issue interval to its
    operands (their producer's cause), then to ``t`` (subsystem busy or issue limit)."""
    g0 = sl.gap[s]
    r0 = sl.ready[s]
    c0 = g0
    if r0 > g0:
        dc = sl.dcause[s]
        tot.cause_ticks[dc] += r0 - g0
        _record_stall(buf, cfg, run, sl.gid[s], g0, r0, dc)
        c0 = r0
    if t > c0:
        fc = SUBSYSTEM_BUSY if mk.fail_busy[s >> 6] & _bit(s) else ISSUE_LIMIT
        tot.cause_ticks[fc] += t - c0
        if fc == SUBSYSTEM_BUSY:
            tot.instr_queue[i] += t - c0
        _record_stall(buf, cfg, run, sl.gid[s], c0, t, fc)
    tot.instr_count[i] += 1
    tot.instr_wait[i] += t - g0


@njit(**_STAGE)
def _record_issue(buf, cfg, run, gid, block, i, u, t, complete):
    """An issue row (when recording; past the buffer the trace is marked truncated)."""
    if cfg.record:
        n_tr = run[R_TRACE_ROWS]
        if n_tr < cfg.tr_cap:
            buf.warp[n_tr] = gid
            buf.block[n_tr] = block
            buf.instr[n_tr] = i
            buf.sub[n_tr] = u
            buf.issue[n_tr] = t / cfg.tickf
            buf.complete[n_tr] = complete / cfg.tickf
            run[R_TRACE_ROWS] = n_tr + 1
        else:
            run[R_TRUNCATED] = 1


@njit(**_STAGE)
def _arrive(sl, bk, cfg, run, s, b, complete):
    """Slot ``s`` of block slot ``b`` issued a barrier completing at ``complete``. Returns the
    slots that fetch their next instruction and the barrier's release tick, (lo, hi, release):
    the whole block once its last warp arrives, else none (0 for release: no barrier)."""
    sl.state[s] = AT_BARRIER
    bk.arrived[b] += 1
    if complete > bk.barmax[b]:
        bk.barmax[b] = complete
    if bk.arrived[b] == cfg.wpb:
        release = bk.barmax[b]
        bk.arrived[b] = 0
        bk.barmax[b] = 0
        return b * cfg.wpb, b * cfg.wpb + cfg.wpb, release
    if bk.arrived[b] + bk.finished[b] == cfg.wpb:
        run[R_ERROR] = ERR_BARRIER_DEADLOCK
        run[R_ERROR_BLOCK] = bk.block[b]
    return s, s, 0  # wait at the barrier


@njit(**_STAGE)
def _retire_warp(sl, bk, buf, cfg, run, f, b):
    """Slot ``f`` issued its warp's last instruction: the warp is done; its block retires when
    every warp is (its slots go to the launch queue). False on a barrier deadlock."""
    sl.state[f] = DONE
    run[R_FINISHED_WARPS] += 1
    run[R_FINISH_SUM] += sl.gap[f]
    n_st = run[R_STALL_ROWS]
    if cfg.record and n_st < cfg.st_cap:
        buf.st_warp[n_st] = sl.gid[f]
        buf.st_start[n_st] = sl.gap[f] / cfg.tickf
        buf.st_end[n_st] = -1.0  # patched with the end time in _finish
        buf.st_cause[n_st] = FINISHED
        buf.fin_rows[run[R_FIN_ROWS]] = n_st
        run[R_FIN_ROWS] += 1
        run[R_STALL_ROWS] = n_st + 1
    if sl.lastc[f] > bk.lastc[b]:
        bk.lastc[b] = sl.lastc[f]
    bk.finished[b] += 1
    if bk.arrived[b] > 0 and bk.arrived[b] + bk.finished[b] == cfg.wpb:
        run[R_ERROR] = ERR_BARRIER_DEADLOCK
        run[R_ERROR_BLOCK] = bk.block[b]
        return False
    if bk.finished[b] == cfg.wpb:
        # the block retires once all its results are in; the next one takes its slots a launch
        # overhead later, and it moves to the end of the age order
        run[R_RETIRED] += 1
        bk.block[b] = -1
        bk.start[b] = bk.lastc[b] + cfg.bovh
        gamma = cfg.gamma
        for bi in range(gamma):
            if bk.order[bi] == b:
                for bj in range(bi, gamma - 1):
                    bk.order[bj] = bk.order[bj + 1]
                bk.order[gamma - 1] = b
                break
        bk.queue[run[R_PENDING]] = b
        run[R_PENDING] += 1
    return True


@njit(**_STAGE)
def _fetch(kern, sl, mk, bk, buf, work, cfg, run, f, b, release, t):
    """Slot ``f`` moves to its next instruction, ready when its operands (and the barrier
    ``release``, if any) are and its last issue's stall count has passed (``hold``); or its warp
    is done. False on a barrier deadlock."""
    nw = cfg.nw
    sl.state[f] = ACTIVE
    mk.unit_mask[sl.unit[f] * nw + (f >> 6)] &= ~_bit(f)
    kp = _advance(kern, sl, work.stack, f)
    if kp < 0:
        return _retire_warp(sl, bk, buf, cfg, run, f, b)
    # per pool position (not per instruction): loaded side by side, not one after another
    un = _next_position(kern, sl, mk, bk, cfg, f, kp)
    ready = release
    cause = BARRIER if release > 0 else COMPUTE_DEPENDENCY
    if sl.hold[f] > ready:
        ready = sl.hold[f]
        cause = COMPUTE_DEPENDENCY
    row = f * cfg.n_done
    for e in range(kern.pool_dlo[kp], kern.pool_dhi[kp]):
        c = work.done[row + kern.dep_src[e]]
        if c > ready:
            ready = c
            cause = kern.dep_cause[e]
    sl.ready[f] = ready
    sl.dcause[f] = cause
    # ready at once (a barrier released): eligible in this very round
    _schedule_wake(sl, mk, run, f, un, ready if ready > sl.gap[f] else sl.gap[f], t)
    return True


@njit(**_STAGE)
def _level_wait(kern, tot, work, i, t):
    """Instruction ``i``, issued at ``t``, queues at each memory level it needs (L2, DRAM: each
    serves the SM's requests one after another, ``level_lam`` each) beside the LSU pipe that
    issued it; its result comes that much later than its latency: the longest wait."""
    wait = 0
    base = i * N_LEVELS
    for q in range(N_LEVELS):
        busy = kern.level_lam[base + q]
        if busy > 0:
            start = work.levels[q] if work.levels[q] > t else t
            work.levels[q] = start + busy
            tot.level_busy[q] += busy
            if start - t > wait:
                wait = start - t
    return wait


@njit(**_STAGE)
def _copy_groups(kern, work, s, i, complete):
    """Instruction ``i`` of slot ``s`` acts on the warp's asynchronous copy groups: a copy joins
    the open group, a commit closes it, a wait completes when every group older than the newest
    ``async_n[i]`` has (``wait_all``: the open group too). Returns ``i``'s completion."""
    op = kern.async_op[i]
    g = s * N_GROUP_FIELDS
    if op == ASYNC_COPY:
        if complete > work.groups[g + G_OPEN]:
            work.groups[g + G_OPEN] = complete
        return complete
    if op == ASYNC_COMMIT or op == ASYNC_WAIT_ALL:
        n = work.groups[g + G_COUNT]
        if n == GROUP_RING:        # full: the two oldest become one (the later of the two)
            if work.groups[g + G_RING + 1] < work.groups[g + G_RING]:
                work.groups[g + G_RING + 1] = work.groups[g + G_RING]
            for q in range(1, GROUP_RING):
                work.groups[g + G_RING + q - 1] = work.groups[g + G_RING + q]
            n -= 1
        work.groups[g + G_RING + n] = work.groups[g + G_OPEN]
        work.groups[g + G_COUNT] = n + 1
        work.groups[g + G_OPEN] = 0
        if op == ASYNC_COMMIT:
            return complete
    keep = 0 if op == ASYNC_WAIT_ALL else kern.async_n[i]
    n = work.groups[g + G_COUNT]
    if n <= keep:
        return complete
    done = n - keep
    for q in range(done):
        if work.groups[g + G_RING + q] > complete:
            complete = work.groups[g + G_RING + q]
    for q in range(keep):
        work.groups[g + G_RING + q] = work.groups[g + G_RING + done + q]
    work.groups[g + G_COUNT] = keep
    return complete


@njit(**_STAGE)
def _issue(kern, sl, mk, bk, buf, tot, work, cfg, run, s, t):
    """Slot ``s`` issues its next instruction at ``t``; then it (or, at a barrier's release, its
    whole block) fetches the next one. Returns the subsystem; -1 on a barrier deadlock."""
    b = sl.bslot[s]
    i = sl.next[s]
    u = sl.unit[s]  # = the instruction's subsystem, without waiting for i
    mk.elig[s >> 6] &= ~_bit(s)
    sl.wake[s] = INF
    complete = t + kern.Lam[i] + _level_wait(kern, tot, work, i, t)
    if kern.async_op[i] != ASYNC_NONE:
        complete = _copy_groups(kern, work, s, i, complete)
    mk.sub_free[u] = t + kern.lam[i]
    tot.unit_busy[u] += kern.lam[i]
    run[R_ISSUED] += 1
    _charge_wait(sl, mk, buf, tot, cfg, run, s, i, t)
    _record_issue(buf, cfg, run, sl.gid[s], bk.block[b], i, u, t, complete)
    work.done[s * cfg.n_done + sl.slot[s]] = complete
    if complete > sl.lastc[s]:
        sl.lastc[s] = complete
    if complete > run[R_MAX_COMPLETE]:
        run[R_MAX_COMPLETE] = complete
    sl.gap[s] = t + cfg.gap
    # which slots need their next instruction (a barrier may release all)
    lo = s
    hi = s + 1
    release = 0
    if kern.isbar[i] != 0:
        lo, hi, release = _arrive(sl, bk, cfg, run, s, b, complete)
        if run[R_ERROR] != ERR_NONE:
            return -1
    sl.hold[s] = t + kern.gap[i]
    for f in range(lo, hi):
        if not _fetch(kern, sl, mk, bk, buf, work, cfg, run, f, b, release, t):
            return -1
    return u


@njit(**_STAGE)
def _issue_round(kern, sl, mk, bk, buf, tot, work, cfg, run, t, fm, cnt, rr, greedy):
    """Stage 3: pick and issue, in policy order, until no free subsystem has an eligible slot or
    the cycle's issue slots are used. LRR's rounds at one tick are merged (see the module
    docstring); one ends early only to launch a retired block's successor first. Returns
    (cnt, rr, the first slot that issued or -1)."""
    il = cfg.il
    nslots = cfg.nslots
    first_issued = -1
    pass_left = nslots  # LRR: positions left in the current pass (round) after the last pick
    k = 0  # GTO: 0 = the greedy warp, then 1 + index into the age order
    gpos = 0  # GTO: next slot to look at in the current block
    while fm != 0 and not (il > 0 and cnt >= il):
        if cfg.gto:
            s, k, gpos = _pick_gto(cfg, mk, bk, fm, greedy, k, gpos)
            if s < 0:
                break
            q = _scheduler(sl, bk, cfg, s)
            if _parked(cfg, mk, run, s, q):
                continue
        else:
            s = _pick_lrr(cfg, mk, fm, rr)
            if s < 0:
                break
            q = _scheduler(sl, bk, cfg, s)
            if _parked(cfg, mk, run, s, q):
                continue
            d = s - rr
            if d < 0:
                d += nslots
            if d >= pass_left:
                # this pick belongs to the next round; a retired block's successor is
                # launched before that round starts
                if run[R_PENDING] > 0:
                    break
                run[R_ROUNDS] += 1
                pass_left = nslots
            pass_left -= d + 1
            rr = s + 1
            if rr >= nslots:
                rr = 0
        if first_issued < 0:
            first_issued = s
        cnt += kern.slots[sl.next[s]]
        if cfg.nsched > 1:
            run[R_SCHED + q] += kern.slots[sl.next[s]]
        u = _issue(kern, sl, mk, bk, buf, tot, work, cfg, run, s, t)
        if u < 0:
            break
        fm &= ~(np.int64(1) << u)
    return cnt, rr, first_issued


@njit(**_STAGE)
def _scheduler(sl, bk, cfg, s):
    """The scheduler slot ``s`` issues through. A block's warps take consecutive warp slots, and
    slot mod ``nsched`` is the scheduler; where the block has a multiple of ``nsched`` warps the SM
    rotates them by one scheduler per block it starts, so that warp 0 of successive blocks is not
    always on the same one (%warpid measured on the H100 and the H200: docs/pipeline.md,
    "Schedulers"; with blocks of 2 warps, warp 0 stays on even slots)."""
    # nsched is 1, 2, 4 or 8: a mask, not a division (this runs at every issue)
    m = cfg.nsched - 1
    if m == 0:
        return 0
    if cfg.wpb & m:
        return s & m
    b = sl.bslot[s]
    return (s - b * cfg.wpb + bk.rot[b]) & m


@njit(**_STAGE)
def _parked(cfg, mk, run, s, q):
    """Whether slot ``s``'s scheduler ``q`` has issued its share of this cycle: then the slot leaves
    ``elig`` until the next cycle (``parked``; the wait is the issue limit's) and the round picks
    another. Each scheduler of the SM issues for its own warps only: a scheduler whose warps all
    wait leaves its issue slot unused, however many warps the others have ready."""
    if cfg.nsched <= 1 or run[R_SCHED + q] < cfg.il_sched:
        return False
    b = _bit(s)
    mk.elig[s >> 6] &= ~b
    mk.parked[s >> 6] |= b
    run[R_PARKED] += 1
    return True


@njit(**_STAGE)
def _next_event(kern, mk, bk, cfg, run, t, cnt, cycle_end):
    """Stage 4: the next tick at which anything can happen (a slot wakes, a busy subsystem with
    an eligible slot frees, the next cycle's issue slots when this one's are used, a block
    launches); INF: none."""
    il_full = cfg.il > 0 and cnt >= cfg.il
    nw = cfg.nw
    nt = run[R_NEXT_WAKE]
    for u in range(cfg.nsub):
        any_elig = np.int64(0)
        for wd in range(nw):
            any_elig |= mk.elig[wd] & mk.unit_mask[u * nw + wd]
        if any_elig != 0:
            e = mk.sub_free[u] if mk.sub_free[u] > t else t
            if il_full and e < cycle_end:
                e = cycle_end
            if e < nt:
                nt = e
    if run[R_PARKED] > 0 and cycle_end < nt:
        nt = cycle_end     # the parked slots are back at the next cycle, when their schedulers issue
    if run[R_NEXT_BLOCK] < cfg.n_blocks:
        for qi in range(run[R_PENDING]):
            b = bk.queue[qi]
            if bk.start[b] < nt:
                nt = bk.start[b] if bk.start[b] > t else t
    return nt


@njit(**_STAGE)
def _new_cycle(cfg, mk, run, t, cycle_end, cnt):
    """At a cycle boundary the issue counts restart (the SM's and each scheduler's) and the
    parked slots are eligible again; returns (cycle_end, cnt)."""
    if t >= cycle_end:
        if cfg.nsched > 1:
            later = t < cycle_end + cfg.ticks    # the next cycle itself: a carry counts
            for q in range(cfg.nsched):
                c = run[R_SCHED + q]
                run[R_SCHED + q] = c - cfg.il_sched if later and c > cfg.il_sched else 0
            if run[R_PARKED] > 0:
                run[R_PARKED] = 0
                for wd in range(cfg.nw):
                    mk.elig[wd] |= mk.parked[wd]
                    mk.parked[wd] = 0
        # usually the next cycle: an integer division costs as much as a whole issue
        cycle_end += cfg.ticks
        # slots past the limit (an instruction of several SASS ones issued last) use the next
        # cycle's; a longer gap starts afresh
        il = cfg.il
        cnt = cnt - il if il > 0 and cnt > il and t < cycle_end else 0
        if t >= cycle_end:
            cycle_end = (t // cfg.ticks + 1) * cfg.ticks
    return cycle_end, cnt


@njit(**_STAGE)
def _free_units(mk, cfg, t):
    """The subsystems free at ``t``, as bits."""
    fm = np.int64(0)
    for u in range(cfg.nsub):
        if mk.sub_free[u] <= t:
            fm |= np.int64(1) << u
    return fm


@njit(**_STAGE)
def _config(params, buf, work):
    n_blocks = params[P_BLOCKS]
    gamma = min(params[P_GAMMA], n_blocks)
    wpb = params[P_WPB]
    nsub = params[P_NSUB]
    nslots = gamma * wpb
    il = params[P_IL]
    nsched = params[P_NSCHED] if il > 0 and params[P_NSCHED] > 1 else 1
    return _Config(n_blocks, wpb, gamma, il, params[P_TICKS], nsched, il // nsched, params[P_GAP], params[P_BOVH],
                   params[P_WOVH], params[P_BINT], params[P_POLICY] == 1, params[P_BUDGET],
                   params[P_RECORD] != 0, nsub, params[P_NDONE], nslots, (nslots + 63) >> 6,
                   np.int64(-1) if nsub >= 64 else (np.int64(1) << nsub) - 1,
                   buf.warp.shape[0], buf.st_warp.shape[0], float(params[P_TICKS]))


@njit(**_STAGE)
def _views(work, nw):
    """The work arrays as per-field views: slots, masks and blocks."""
    ss = work.slots
    sl = _Slots(ss[F_STATE], ss[F_GID], ss[F_PC], ss[F_K], ss[F_KEND], ss[F_SP], ss[F_NEXT], ss[F_UNIT],
                ss[F_READY], ss[F_DCAUSE], ss[F_GAP], ss[F_WAKE], ss[F_LASTC], ss[F_BSLOT], ss[F_SLOT],
                ss[F_HOLD])
    m = work.masks
    mk = _Masks(m[0:nw], m[nw:2 * nw], m[2 * nw:3 * nw], m[3 * nw:4 * nw], m[5 * nw:], work.units[0],
                m[4 * nw:5 * nw])
    wb = work.blocks
    bk = _Blocks(wb[B_BLOCK], wb[B_FINISHED], wb[B_ARRIVED], wb[B_BARMAX], wb[B_LASTC], wb[B_START],
                 wb[B_ORDER], wb[B_ORDER_COPY], wb[B_QUEUE], wb[B_ROT])
    return sl, mk, bk


@njit(**_STAGE)
def _reset(sl, bk, cfg, run):
    """Every slot empty and asleep; every block slot waiting for its first block (launched a
    block overhead after the start), in slot order."""
    for s in range(cfg.nw * 64):
        sl.wake[s] = INF
        sl.state[s] = EMPTY
    for b in range(cfg.gamma):
        bk.block[b] = -1
        bk.order[b] = b
        for wi in range(cfg.wpb):
            sl.bslot[b * cfg.wpb + wi] = b
        bk.start[b] = cfg.bovh
        bk.queue[b] = b
    run[:] = 0
    run[R_ERROR_BLOCK] = -1
    run[R_PENDING] = cfg.gamma
    run[R_NEXT_WAKE] = INF  # earliest wake of a slot that is not yet in elig (exact)


@njit(**_STAGE)
def _finish(buf, tot, cfg, run, t):
    """The run's end tick (the last completion, or where it stopped) and the FINISHED stalls."""
    end = run[R_MAX_COMPLETE]
    if run[R_STOPPED] == STOP_CYCLE_BUDGET:
        end = cfg.budget
    elif run[R_STOPPED] == STOP_CANCELLED:
        end = t
    tot.cause_ticks[FINISHED] += run[R_FINISHED_WARPS] * end - run[R_FINISH_SUM]
    if cfg.record:
        for k in range(run[R_FIN_ROWS]):
            buf.st_end[buf.fin_rows[k]] = end / cfg.tickf
    run[R_END] = end


# nogil: the GUI's worker thread runs this; without it the UI thread waits for the GIL in every
# Python callback (item models, paint methods) while a simulation or an occupancy sweep runs.
@njit(cache=True, error_model="numpy", _nrt=False, nogil=True)
def simulate_core(params, kern, buf, tot, work, run, cancel):
    """Run the simulation: fills the trace buffers (``TraceBuffers``) and the totals (``Totals``)
    and writes the summary to ``run`` (``N_RUN`` int64; the caller reads ``R_END`` ..
    ``R_ROUNDS``; ``R_STOPPED`` is STOP_CYCLE_BUDGET or STOP_CANCELLED for an early stop).
    ``kern``: :class:`KernelArrays`; ``work``: :class:`WorkArrays`. ``cancel``: a one-element
    array another thread sets non-zero to stop the run (read every CANCEL_POLL loop turns).

    Each loop turn is one event tick: launch blocks, wake slots, select and issue, then find the
    next tick at which anything can happen."""
    cfg = _config(params, buf, work)
    sl, mk, bk = _views(work, cfg.nw)
    _reset(sl, bk, cfg, run)
    t = 0
    cycle_end = 0  # first tick of the next cycle; the issue count restarts there
    cnt = 0
    rr = 0
    greedy = -1
    greedy_gid = -1
    polls = 0
    while True:
        _launch_blocks(kern, sl, mk, bk, buf, tot, work, cfg, run, t)
        if cfg.budget >= 0 and t > cfg.budget:
            run[R_STOPPED] = STOP_CYCLE_BUDGET
            break
        polls += 1
        if polls >= CANCEL_POLL:
            polls = 0
            if cancel[0] != 0:
                run[R_STOPPED] = STOP_CANCELLED
                break
        cycle_end, cnt = _new_cycle(cfg, mk, run, t, cycle_end, cnt)
        fm = _free_units(mk, cfg, t)
        if t >= run[R_NEXT_WAKE]:
            _wake(sl, mk, cfg, run, t, fm)
        run[R_ROUNDS] += 1
        if greedy >= 0 and (sl.gid[greedy] != greedy_gid or sl.state[greedy] == DONE):
            greedy = -1  # that warp is gone; its slot holds a younger one
        cnt, rr, first_issued = _issue_round(kern, sl, mk, bk, buf, tot, work, cfg, run, t, fm, cnt, rr, greedy)
        if run[R_ERROR] != ERR_NONE:
            break
        if cfg.gto and first_issued >= 0:
            # greedy: stay on the warp that issued first this round (the greedy one if it could)
            greedy = first_issued
            greedy_gid = sl.gid[first_issued]
        t_next = _next_event(kern, mk, bk, cfg, run, t, cnt, cycle_end)
        if t_next == INF:
            if run[R_RETIRED] < cfg.n_blocks:
                run[R_ERROR] = ERR_STUCK
            break
        t = t_next
    _finish(buf, tot, cfg, run, t)
