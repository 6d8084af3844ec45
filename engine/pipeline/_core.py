"""The simulator's inner loop (numba). Only ``engine.pipeline.simulator`` calls it.

Everything is an int64 array (the trace: the caller's structured-table fields) so one compiled
version serves every kernel; time is in integer ticks. State is kept per *slot* (a resident warp
position); a block occupies ``warps_per_block`` consecutive slots and a retiring block's slots go to
the next block. The caller allocates every work array, so the function compiles without numba's
reference counting (``_nrt=False``), which would otherwise cost atomic operations per array use.

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
    P_RECORD, P_NSUB, P_MAXDEPTH, P_NDONE, P_BINT = range(15)
N_PARAMS = 15

# why a run stopped early (out[4])
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
MAX_WARPS_PER_BLOCK = 64
MAX_RESIDENT_BLOCKS = 64

# per-block state rows
B_BLOCK, B_FINISHED, B_ARRIVED, B_BARMAX, B_LASTC, B_START, B_ORDER, B_ORDER_COPY, B_QUEUE = range(9)
N_BLOCK_FIELDS = 9

# per-slot state: rows of one int64 matrix (slots padded to whole 64-bit words)
F_STATE, F_GID, F_PC, F_K, F_KEND, F_SP, F_NEXT, F_UNIT, F_READY, F_DCAUSE, F_GAP, F_WAKE, \
    F_LASTC, F_BSLOT, F_SLOT = range(15)
N_FIELDS = 15


def words_for(nslots: int) -> int:
    """64-bit words of a slot bit mask (the slot arrays are padded to ``64 * words``)."""
    return (nslots + 63) // 64


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def _advance(slot, prog_kind, prog_a, prog_b, s_pc, s_k, s_kend, s_stack, s_sp):
    """Move ``slot`` to its next static instruction and return its index in ``pool``; -1 when its
    path is exhausted. Within a run (the usual case) that is one compare: ``s_k`` is the next pool
    index and ``s_kend`` the run's end; ``s_pc`` is the program item after the current run."""
    k = s_k[slot]
    if k < s_kend[slot]:
        s_k[slot] = k + 1
        return k
    pc = s_pc[slot]
    while True:
        kind = prog_kind[pc]
        if kind == RUN:  # never empty: the encoder leaves empty runs out
            k = prog_a[pc]
            s_k[slot] = k + 1
            s_kend[slot] = k + prog_b[pc]
            s_pc[slot] = pc + 1
            return k
        elif kind == LOOP_BEGIN:
            if prog_a[pc] <= 0:
                pc = prog_b[pc] + 1
            else:
                s_stack[slot, s_sp[slot]] = prog_a[pc]
                s_sp[slot] += 1
                pc += 1
        elif kind == LOOP_END:
            top = s_sp[slot] - 1
            s_stack[slot, top] -= 1
            if s_stack[slot, top] > 0:
                pc = prog_a[pc] + 1
            else:
                s_sp[slot] = top
                pc += 1
        else:
            s_pc[slot] = pc
            return -1


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def _first(lo, hi, elig, unit_mask, nw, fm, nsub, skip):
    """First slot in [lo, hi) that is eligible and whose subsystem is in ``fm`` (free subsystems
    as bits), leaving out slot ``skip``; -1 if none."""
    if lo >= hi:
        return -1
    w0 = lo >> 6
    w1 = (hi - 1) >> 6
    for wd in range(w0, w1 + 1):
        # over the set bits of fm: a plain loop over the subsystems gets vectorised into
        # masked gathers, several times slower for a handful of subsystems
        c = np.int64(0)
        m = fm
        while m != 0:
            c |= unit_mask[trailing_zeros(m) * nw + wd]
            m &= m - 1
        c &= elig[wd]
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


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
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


# nogil: the GUI's worker thread runs this; without it the UI thread waits for the GIL in every
# Python callback (item models, paint methods) while a simulation or an occupancy sweep runs.
@njit(cache=True, error_model="numpy", _nrt=False, nogil=True)
def simulate_core(params, unit, lam, Lam, dep_cause, isbar, slots, dep_src,
                  prog_kind, prog_a, prog_b, pool, pool_unit, pool_dlo, pool_dhi, pool_slot, path_start,
                  warp_path,
                  tr_warp, tr_block, tr_instr, tr_sub, tr_issue, tr_complete,
                  st_warp, st_start, st_end, st_cause,
                  unit_busy, cause_ticks, instr_count, instr_wait, instr_queue, out, fin_rows,
                  work_slots, work_stack, work_done, work_masks, work_blocks, work_units, cancel):
    """Run the simulation; fills the trace buffers and aggregates, writes the summary to ``out``.

    ``pool_unit``, ``pool_dlo``, ``pool_dhi``, ``pool_slot``: for each pool position the
    instruction's subsystem, its range in ``dep_src`` and the completion slot it writes (its own
    instruction's, or a renamed copy's; ``dep_src`` holds slots, ``P_NDONE`` of them per warp).
    ``dep_cause[e]``: the stall cause charged when dependence ``e`` (of ``dep_src``) is the one
    ready last (memory or compute dependency, by its producer).
    ``slots[i]``: the issue slots instruction ``i`` takes, in quarters (``P_IL`` is in quarters
    too): the SASS instructions one execution issues, 4 per SASS instruction.
    ``out``: [end_tick, issued, trace_rows, stall_rows, stopped_early, error, error_block,
    trace_truncated, rounds]; stopped_early is STOP_CYCLE_BUDGET or STOP_CANCELLED. ``cancel``: a
    one-element array another thread sets non-zero to stop the run (read every CANCEL_POLL loop
    turns). ``fin_rows`` receives the stall rows of cause FINISHED (one per
    warp), whose end is only known at the end. ``work_masks`` holds ``(2 + nsub) * words`` int64: elig, a scratch
    word per slot word, then one slot mask per subsystem.
    """
    n_blocks = params[P_BLOCKS]
    wpb = params[P_WPB]
    gamma = min(params[P_GAMMA], n_blocks)
    il = params[P_IL]
    ticks = params[P_TICKS]
    gap = params[P_GAP]
    bovh = params[P_BOVH]
    wovh = params[P_WOVH]
    bint = params[P_BINT]  # the SM starts one block at a time: starts at least bint apart
    gto = params[P_POLICY] == 1
    budget = params[P_BUDGET]
    record = params[P_RECORD] != 0
    nsub = params[P_NSUB]
    tr_cap = tr_warp.shape[0]
    tickf = float(ticks)  # the trace is written in cycles straight into the caller's tables
    st_cap = st_warp.shape[0]

    nslots = gamma * wpb
    all_units = np.int64(-1) if nsub >= 64 else (np.int64(1) << nsub) - 1  # as bits
    nw = (nslots + 63) >> 6
    ss = work_slots
    s_stack = work_stack
    s_pc = ss[F_PC]
    s_k = ss[F_K]
    s_kend = ss[F_KEND]
    s_sp = ss[F_SP]
    wake = ss[F_WAKE]
    # one 1-D view per field: plain base + index addressing in the hot loop
    s_state = ss[F_STATE]
    s_gid = ss[F_GID]
    s_next = ss[F_NEXT]
    s_unit = ss[F_UNIT]
    s_ready = ss[F_READY]
    s_dcause = ss[F_DCAUSE]
    s_gap = ss[F_GAP]
    s_lastc = ss[F_LASTC]
    s_bslot = ss[F_BSLOT]
    s_slot = ss[F_SLOT]
    n_done = params[P_NDONE]
    done = work_done
    elig = work_masks[0:nw]
    elig_new = work_masks[nw:2 * nw]
    # the stall cause of the wait after the operands, one bit per slot: SUBSYSTEM_BUSY where set,
    # else ISSUE_LIMIT; ``undecided`` slots get theirs when they wake (word operations for all)
    fail_busy = work_masks[2 * nw:3 * nw]
    undecided = work_masks[3 * nw:4 * nw]
    unit_mask = work_masks[4 * nw:]  # [unit * nw + word]: slots whose next instruction is on unit
    sub_free = work_units[0]
    b_block = work_blocks[B_BLOCK]
    b_finished = work_blocks[B_FINISHED]
    b_arrived = work_blocks[B_ARRIVED]
    b_barmax = work_blocks[B_BARMAX]
    b_lastc = work_blocks[B_LASTC]
    b_start = work_blocks[B_START]
    border = work_blocks[B_ORDER]
    order = work_blocks[B_ORDER_COPY]  # GTO: the age order at the start of the round
    launch_q = work_blocks[B_QUEUE]
    for s in range(nw * 64):
        wake[s] = INF
        s_state[s] = EMPTY
    for b in range(gamma):
        b_block[b] = -1
        border[b] = b
        for wi in range(wpb):
            s_bslot[b * wpb + wi] = b

    n_issued = 0
    rounds = 0
    n_tr = 0
    n_st = 0
    n_fin = 0
    truncated = 0
    finished_warps = 0
    finish_sum = 0
    next_block = 0
    retired = 0
    max_complete = 0
    err = ERR_NONE
    err_block = -1

    # block slots waiting for their (next) block, in the order they became free
    for b in range(gamma):
        b_start[b] = bovh
        launch_q[b] = b
    pending = gamma
    launcher_free = 0  # earliest start of the next block (the serial launch rate)

    t = 0
    next_wake = INF  # earliest wake of a slot that is not yet in elig (exact)
    cycle_end = 0  # first tick of the next cycle; the issue count restarts there
    cnt = 0
    rr = 0
    greedy = -1
    greedy_gid = -1
    stopped = STOP_NONE
    polls = 0
    while True:
        # ---- launch blocks into free block slots (at start, and after a retirement) --------
        for qi in range(pending):
            b = launch_q[qi]
            if next_block < n_blocks:
                start = b_start[b]
                if bint > 0:
                    if start < launcher_free:
                        start = launcher_free
                    launcher_free = start + bint
                b_block[b] = next_block
                b_finished[b] = 0
                b_arrived[b] = 0
                b_barmax[b] = 0
                b_lastc[b] = 0
                for wi in range(wpb):
                    w = b * wpb + wi
                    s_gid[w] = next_block * wpb + wi
                    s_state[w] = ACTIVE
                    s_pc[w] = path_start[warp_path[next_block % warp_path.shape[0], wi]]
                    s_k[w] = 0
                    s_kend[w] = 0
                    s_sp[w] = 0
                    s_lastc[w] = 0
                    s_gap[w] = start + wi * wovh
                    for q in range(n_done):
                        done[w * n_done + q] = 0
                    kp = _advance(w, prog_kind, prog_a, prog_b, s_pc, s_k, s_kend, s_stack, s_sp)
                    s_next[w] = pool[kp]
                    s_slot[w] = pool_slot[kp]
                    u = pool_unit[kp]
                    s_unit[w] = u
                    unit_mask[u * nw + (w >> 6)] |= np.int64(1) << (w & 63)
                    s_ready[w] = 0
                    s_dcause[w] = COMPUTE_DEPENDENCY
                    e0 = s_gap[w]
                    wake[w] = e0
                    ww = w >> 6
                    wbit = np.int64(1) << (w & 63)
                    undecided[ww] &= ~wbit
                    # the wait after e0 is charged to the subsystem if it is busy at e0
                    if sub_free[u] > e0:
                        fail_busy[ww] |= wbit
                    else:
                        fail_busy[ww] &= ~wbit
                    if e0 <= t:
                        elig[ww] |= wbit
                    else:
                        if sub_free[u] > e0:
                            # busy at e0 already (it only gets busier): no wake-up before it frees
                            wake[w] = sub_free[u]
                        else:
                            undecided[ww] |= wbit  # decided when it wakes up
                        if wake[w] < next_wake:
                            next_wake = wake[w]
                    if e0 > 0:
                        cause_ticks[NOT_RESIDENT] += e0
                        if record and n_st < st_cap:
                            st_warp[n_st] = s_gid[w]
                            st_start[n_st] = 0.0
                            st_end[n_st] = e0 / tickf
                            st_cause[n_st] = NOT_RESIDENT
                            n_st += 1
                next_block += 1
        pending = 0
        if budget >= 0 and t > budget:
            stopped = STOP_CYCLE_BUDGET
            break
        polls += 1
        if polls >= CANCEL_POLL:
            polls = 0
            if cancel[0] != 0:
                stopped = STOP_CANCELLED
                break
        if t >= cycle_end:
            # usually the next cycle: an integer division costs as much as a whole issue
            cycle_end += ticks
            # slots past the limit (an instruction of several SASS ones issued last) use the
            # next cycle's; a longer gap starts afresh
            cnt = cnt - il if il > 0 and cnt > il and t < cycle_end else 0
            if t >= cycle_end:
                cycle_end = (t // ticks + 1) * ticks
        fm = np.int64(0)  # free subsystems, as bits
        for u in range(nsub):
            if sub_free[u] <= t:
                fm |= np.int64(1) << u
        # ---- slots whose wake tick has come join elig ---------------------------------------
        if t >= next_wake:
            next_wake = _scan(wake, nw, t, elig_new)
            busy_units = ~fm & all_units
            for wd in range(nw):
                fresh = elig_new[wd] & ~elig[wd]
                elig[wd] = elig_new[wd]
                # the wait after the operands (ready now: t is their wake tick) goes to the
                # subsystem if it is busy now, else to the issue limit (other warps issue first)
                fresh &= undecided[wd]
                if fresh != 0:
                    busy = np.int64(0)
                    m = busy_units
                    while m != 0:
                        busy |= unit_mask[trailing_zeros(m) * nw + wd]
                        m &= m - 1
                    fail_busy[wd] = (fail_busy[wd] & ~fresh) | (fresh & busy)
                    undecided[wd] &= ~fresh
        rounds += 1
        if greedy >= 0 and (s_gid[greedy] != greedy_gid or s_state[greedy] == DONE):
            greedy = -1  # that warp is gone; its slot holds a younger one
        tf = t / tickf if record else 0.0  # the issue time in cycles, for the trace
        # ---- pick and issue, in policy order --------------------------------------------------
        first_issued = -1
        pass_left = nslots  # LRR: positions left in the current pass (round) after the last pick
        k = 0  # GTO: 0 = the greedy warp, then 1 + index into the age order
        gpos = 0  # GTO: next slot to look at in the current block
        while fm != 0 and not (il > 0 and cnt >= il):
            if gto:
                s = -1
                while True:
                    if k == 0:
                        # a retirement in this round moves its block to the end of the age
                        # order; the round itself keeps the order it started with
                        for bi in range(gamma):
                            order[bi] = border[bi]
                        k = 1
                        gpos = order[0] * wpb
                        if greedy >= 0:
                            s = _first(greedy, greedy + 1, elig, unit_mask, nw, fm, nsub, -1)
                            if s >= 0:
                                break
                        continue
                    if k > gamma:
                        break
                    if nw == 1:
                        # no candidate anywhere: the round is over without a visit of the blocks
                        c = np.int64(0)
                        m = fm
                        while m != 0:
                            c |= unit_mask[trailing_zeros(m)]
                            m &= m - 1
                        c &= elig[0]
                        if greedy >= 0:
                            c &= ~(np.int64(1) << greedy)
                        if c == 0:
                            break
                    b = order[k - 1]
                    s = _first(gpos, b * wpb + wpb, elig, unit_mask, nw, fm, nsub, greedy)
                    if s >= 0:
                        gpos = s + 1
                        break
                    k += 1
                    if k <= gamma:
                        gpos = order[k - 1] * wpb
                if s < 0:
                    break
            elif nw == 1:
                # up to 64 slots (every GPU's case): the circular search is two bit operations
                c = np.int64(0)
                m = fm
                while m != 0:
                    c |= unit_mask[trailing_zeros(m)]
                    m &= m - 1
                c &= elig[0]
                if c == 0:
                    break
                c_hi = c & -(np.int64(1) << rr)  # slots from rr on
                s = trailing_zeros(c_hi) if c_hi != 0 else trailing_zeros(c)
            else:
                s = _first(rr, nslots, elig, unit_mask, nw, fm, nsub, -1)
                if s < 0:
                    s = _first(0, rr, elig, unit_mask, nw, fm, nsub, -1)
                    if s < 0:
                        break
            if not gto:
                d = s - rr
                if d < 0:
                    d += nslots
                if d >= pass_left:
                    # this pick belongs to the next round; a retired block's successor is
                    # launched before that round starts
                    if pending > 0:
                        break
                    rounds += 1
                    pass_left = nslots
                pass_left -= d + 1
                rr = s + 1
                if rr >= nslots:
                    rr = 0
            # ---- issue slot s ---------------------------------------------------------------
            b = s_bslot[s]
            sw = s >> 6
            sbit = np.int64(1) << (s & 63)
            i = s_next[s]
            u = s_unit[s]  # = unit[i], without waiting for i
            elig[sw] &= ~sbit
            wake[s] = INF
            complete = t + Lam[i]
            sub_free[u] = t + lam[i]
            fm &= ~(np.int64(1) << u)
            unit_busy[u] += lam[i]
            cnt += slots[i]
            n_issued += 1
            if first_issued < 0:
                first_issued = s
            g0 = s_gap[s]
            r0 = s_ready[s]
            c0 = g0
            if r0 > g0:
                dc = s_dcause[s]
                cause_ticks[dc] += r0 - g0
                if record and n_st < st_cap:
                    st_warp[n_st] = s_gid[s]
                    st_start[n_st] = g0 / tickf
                    st_end[n_st] = r0 / tickf
                    st_cause[n_st] = dc
                    n_st += 1
                c0 = r0
            if t > c0:
                fc = SUBSYSTEM_BUSY if fail_busy[sw] & sbit else ISSUE_LIMIT
                cause_ticks[fc] += t - c0
                if fc == SUBSYSTEM_BUSY:
                    instr_queue[i] += t - c0
                if record and n_st < st_cap:
                    st_warp[n_st] = s_gid[s]
                    st_start[n_st] = c0 / tickf
                    st_end[n_st] = tf
                    st_cause[n_st] = fc
                    n_st += 1
            instr_count[i] += 1
            instr_wait[i] += t - g0
            if record:
                if n_tr < tr_cap:
                    tr_warp[n_tr] = s_gid[s]
                    tr_block[n_tr] = b_block[b]
                    tr_instr[n_tr] = i
                    tr_sub[n_tr] = u
                    tr_issue[n_tr] = tf
                    tr_complete[n_tr] = complete / tickf
                    n_tr += 1
                else:
                    truncated = 1
            done[s * n_done + s_slot[s]] = complete
            if complete > s_lastc[s]:
                s_lastc[s] = complete
            if complete > max_complete:
                max_complete = complete
            s_gap[s] = t + gap
            # which slots need their next instruction (a barrier may release all)
            fetch_lo = s
            fetch_hi = s + 1
            base = 0  # barrier release time for the fetched warps (0: none)
            if isbar[i] != 0:
                s_state[s] = AT_BARRIER
                b_arrived[b] += 1
                if complete > b_barmax[b]:
                    b_barmax[b] = complete
                if b_arrived[b] == wpb:
                    base = b_barmax[b]
                    b_arrived[b] = 0
                    b_barmax[b] = 0
                    fetch_lo = b * wpb
                    fetch_hi = fetch_lo + wpb
                elif b_arrived[b] + b_finished[b] == wpb:
                    err = ERR_BARRIER_DEADLOCK
                    err_block = b_block[b]
                    break
                else:
                    fetch_hi = fetch_lo  # wait at the barrier
            stop = False
            for f in range(fetch_lo, fetch_hi):
                s_state[f] = ACTIVE
                fw = f >> 6
                fbit = np.int64(1) << (f & 63)
                uo = s_unit[f]
                unit_mask[uo * nw + fw] &= ~fbit
                kp = _advance(f, prog_kind, prog_a, prog_b, s_pc, s_k, s_kend, s_stack, s_sp)
                if kp < 0:
                    # ---- the warp issued its last instruction --------------------------------
                    s_state[f] = DONE
                    finished_warps += 1
                    finish_sum += s_gap[f]
                    if record and n_st < st_cap:
                        st_warp[n_st] = s_gid[f]
                        st_start[n_st] = s_gap[f] / tickf
                        st_end[n_st] = -1.0  # patched with the end time below
                        st_cause[n_st] = FINISHED
                        fin_rows[n_fin] = n_st
                        n_fin += 1
                        n_st += 1
                    if s_lastc[f] > b_lastc[b]:
                        b_lastc[b] = s_lastc[f]
                    b_finished[b] += 1
                    if b_arrived[b] > 0 and b_arrived[b] + b_finished[b] == wpb:
                        err = ERR_BARRIER_DEADLOCK
                        err_block = b_block[b]
                        stop = True
                    elif b_finished[b] == wpb:
                        # the block retires once all its results are in; the next one
                        # takes its slots a launch overhead later
                        retired += 1
                        b_block[b] = -1
                        b_start[b] = b_lastc[b] + bovh
                        for bi in range(gamma):
                            if border[bi] == b:
                                for bj in range(bi, gamma - 1):
                                    border[bj] = border[bj + 1]
                                border[gamma - 1] = b
                                break
                        launch_q[pending] = b
                        pending += 1
                    continue
                # per pool position (not per instruction): loaded side by side, not one after another
                s_next[f] = pool[kp]
                s_slot[f] = pool_slot[kp]
                un = pool_unit[kp]
                s_unit[f] = un
                unit_mask[un * nw + fw] |= fbit
                ready = base
                cause = BARRIER if base > 0 else COMPUTE_DEPENDENCY
                row = f * n_done
                for e in range(pool_dlo[kp], pool_dhi[kp]):
                    c = done[row + dep_src[e]]
                    if c > ready:
                        ready = c
                        cause = dep_cause[e]
                s_ready[f] = ready
                s_dcause[f] = cause
                e0 = ready if ready > s_gap[f] else s_gap[f]
                f0 = sub_free[un]
                undecided[fw] &= ~fbit
                if f0 > e0:
                    # its subsystem is busy at e0 already (and only gets busier): the wait after
                    # the operands is the subsystem's
                    fail_busy[fw] |= fbit
                else:
                    fail_busy[fw] &= ~fbit
                if e0 <= t:
                    # ready at once (a barrier released): eligible in this very round
                    wake[f] = e0
                    elig[fw] |= fbit
                else:
                    if f0 > e0:
                        e0 = f0  # no wake-up before the subsystem frees
                    else:
                        undecided[fw] |= fbit  # decided when it wakes up
                    wake[f] = e0
                    if e0 < next_wake:
                        next_wake = e0
            if stop:
                break
        if err != ERR_NONE:
            break
        if gto and first_issued >= 0:
            # greedy: stay on the warp that issued first this round (the greedy one if it could)
            greedy = first_issued
            greedy_gid = s_gid[first_issued]
        # ---- when can anything happen next? -----------------------------------------------
        il_full = il > 0 and cnt >= il
        nt = next_wake
        for u in range(nsub):
            any_elig = np.int64(0)
            for wd in range(nw):
                any_elig |= elig[wd] & unit_mask[u * nw + wd]
            if any_elig != 0:
                e = sub_free[u] if sub_free[u] > t else t
                if il_full and e < cycle_end:
                    e = cycle_end
                if e < nt:
                    nt = e
        for qi in range(pending):
            b = launch_q[qi]
            if next_block < n_blocks and b_start[b] < nt:
                nt = b_start[b] if b_start[b] > t else t
        if nt == INF:
            if retired < n_blocks:
                err = ERR_STUCK
            break
        t = nt

    end = max_complete
    if stopped == STOP_CYCLE_BUDGET:
        end = budget
    elif stopped == STOP_CANCELLED:
        end = t
    cause_ticks[FINISHED] += finished_warps * end - finish_sum
    if record:
        for k in range(n_fin):
            st_end[fin_rows[k]] = end / tickf
    out[0] = end
    out[1] = n_issued
    out[2] = n_tr
    out[3] = n_st
    out[4] = stopped
    out[5] = err
    out[6] = err_block
    out[7] = truncated
    out[8] = rounds
