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
  starts ``block_overhead`` later.

Cost: sleeping warps wait in a heap keyed by the time their operands are ready and their
subsystem is free; awake warps are bits in per-(block, subsystem) masks and blocks with awake
warps are bits in per-subsystem masks, so a round visits only warps that can issue.
"""

from __future__ import annotations

import numpy as np
from numba import njit

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
    P_RECORD, P_NSUB, P_MAXDEPTH = range(13)
N_PARAMS = 13

# error codes
ERR_NONE = 0
ERR_BARRIER_DEADLOCK = 1
ERR_STUCK = 2

INF = np.int64(2**62)

# de Bruijn sequence: the index of a one-bit word ``x`` is DEBRUIJN_INDEX[(x * DEBRUIJN) >> 58 & 63]
DEBRUIJN = np.int64(0x03F79D71B4CB0A89)
DEBRUIJN_INDEX = np.zeros(64, np.int64)
for _bit in range(64):
    DEBRUIJN_INDEX[(((1 << _bit) * 0x03F79D71B4CB0A89) & (2**64 - 1)) >> 58] = _bit
MAX_WARPS_PER_BLOCK = 64  # a block's awake warps are bits of one int64
MAX_RESIDENT_BLOCKS = 64  # and a subsystem's blocks with awake warps too


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def _advance(slot, prog_kind, prog_a, prog_b, pool, s_pc, s_pos, s_stack, s_sp):
    """Move ``slot`` to its next static instruction; -1 when its path is exhausted."""
    pc = s_pc[slot]
    pos = s_pos[slot]
    while True:
        kind = prog_kind[pc]
        if kind == RUN:
            if pos < prog_b[pc]:
                instr = pool[prog_a[pc] + pos]
                s_pc[slot] = pc
                s_pos[slot] = pos + 1
                return instr
            pc += 1
            pos = 0
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
            s_pos[slot] = 0
            return -1


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def _heap_push(heap_t, heap_s, size, t, s):
    """Min-heap of (time, slot) of the sleeping warps; returns the new size."""
    k = size
    heap_t[k] = t
    heap_s[k] = s
    while k > 0:
        parent = (k - 1) >> 1
        if heap_t[parent] <= heap_t[k]:
            break
        heap_t[parent], heap_t[k] = heap_t[k], heap_t[parent]
        heap_s[parent], heap_s[k] = heap_s[k], heap_s[parent]
        k = parent
    return size + 1


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def _heap_pop(heap_t, heap_s, size):
    """Remove the earliest entry; returns (slot, new size)."""
    top = heap_s[0]
    size -= 1
    heap_t[0] = heap_t[size]
    heap_s[0] = heap_s[size]
    k = 0
    while True:
        left = 2 * k + 1
        if left >= size:
            break
        child = left
        if left + 1 < size and heap_t[left + 1] < heap_t[left]:
            child = left + 1
        if heap_t[k] <= heap_t[child]:
            break
        heap_t[child], heap_t[k] = heap_t[k], heap_t[child]
        heap_s[child], heap_s[k] = heap_s[k], heap_s[child]
        k = child
    return top, size


# per-block state rows
B_BLOCK, B_FINISHED, B_ARRIVED, B_BARMAX, B_LASTC, B_START, B_ORDER, B_ORDER_COPY, B_QUEUE, \
    B_MASK = range(10)
N_BLOCK_FIELDS = 10

# per-slot state: rows of one int64 matrix, so helpers take one argument for all of it
F_STATE, F_GID, F_PC, F_POS, F_SP, F_NEXT, F_UNIT, F_READY, F_DCAUSE, F_GAP, F_EARLIEST, F_FAIL, \
    F_LASTC, F_AWAKE, F_BSLOT = range(15)
N_FIELDS = 15


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def _wake(ss, s, t, sub_free, slot_mask, blk_mask, unit_blocks, unit_awake, wpb, nsub):
    """Slot ``s`` may issue from now on: mark it among the candidates of its block and unit."""
    u = ss[F_UNIT, s]
    b = ss[F_BSLOT, s]  # a table look-up: integer division is the slowest thing in the loop
    ss[F_AWAKE, s] = 1
    slot_mask[b * nsub + u] |= np.int64(1) << (s - b * wpb)
    blk_mask[b] |= np.int64(1) << u
    unit_blocks[u] |= np.int64(1) << b
    unit_awake[u] += 1


@njit(cache=True, error_model="numpy", _nrt=False)
def simulate_core(params, unit, lam, Lam, ismem, isbar, dep_ptr, dep_src,
                  prog_kind, prog_a, prog_b, pool, path_start, warp_path,
                  tr_warp, tr_block, tr_instr, tr_sub, tr_issue, tr_complete,
                  st_warp, st_start, st_end, st_cause,
                  unit_busy, cause_ticks, instr_count, instr_wait, out,
                  work_slots, work_stack, work_done, work_heap, work_slot_mask, work_blocks, work_units):
    """Run the simulation; fills the trace buffers and aggregates, writes the summary to ``out``.

    ``out``: [end_tick, issued, trace_rows, stall_rows, stopped_early, error, error_block,
    trace_truncated, rounds].

    Only warps that can issue now ("awake") are visited: sleeping ones wait in a heap keyed by
    their earliest issue time, and blocks without an awake warp on a free subsystem are skipped,
    so a tick costs about the number of blocks, not the number of warps.
    """
    n_blocks = params[P_BLOCKS]
    wpb = params[P_WPB]
    gamma = min(params[P_GAMMA], n_blocks)
    il = params[P_IL]
    ticks = params[P_TICKS]
    gap = params[P_GAP]
    bovh = params[P_BOVH]
    wovh = params[P_WOVH]
    gto = params[P_POLICY] == 1
    budget = params[P_BUDGET]
    record = params[P_RECORD] != 0
    nsub = params[P_NSUB]
    n_static = unit.shape[0]
    tr_cap = tr_warp.shape[0]
    tickf = float(ticks)  # the trace is written in cycles straight into the caller's tables
    st_cap = st_warp.shape[0]

    nslots = gamma * wpb
    # work arrays come from the caller: the function is compiled without numba's reference
    # counting (_nrt=False), which otherwise costs an atomic operation per array use
    ss = work_slots
    s_stack = work_stack
    s_pc = ss[F_PC]
    s_pos = ss[F_POS]
    s_sp = ss[F_SP]
    done = work_done
    heap_t = work_heap[0]
    heap_s = work_heap[1]
    hsize = 0
    slot_mask = work_slot_mask  # [block * nsub + unit]: bit w = warp w of the block is awake
    blk_mask = work_blocks[B_MASK]  # bit u: the block has an awake warp for subsystem u
    unit_awake = work_units[0]
    sub_free = work_units[1]
    free = work_units[2]
    unit_blocks = work_units[3]  # bit b: block b has an awake warp for this subsystem
    b_block = work_blocks[B_BLOCK]
    b_finished = work_blocks[B_FINISHED]
    b_arrived = work_blocks[B_ARRIVED]
    b_barmax = work_blocks[B_BARMAX]
    b_lastc = work_blocks[B_LASTC]
    b_start = work_blocks[B_START]
    border = work_blocks[B_ORDER]
    order = work_blocks[B_ORDER_COPY]
    launch_q = work_blocks[B_QUEUE]
    for b in range(gamma):
        b_block[b] = -1
        border[b] = b
        for wi in range(wpb):
            ss[F_BSLOT, b * wpb + wi] = b

    n_issued = 0
    rounds = 0
    n_tr = 0
    n_st = 0
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

    t = 0
    cycle_end = 0  # first tick of the next cycle; the issue count restarts there
    cnt = 0
    rr = 0
    greedy = -1
    greedy_gid = -1
    stopped = 0
    while True:
        # ---- launch blocks into free block slots (at start, and after a retirement) --------
        for qi in range(pending):
            b = launch_q[qi]
            if next_block < n_blocks:
                start = b_start[b]
                b_block[b] = next_block
                b_finished[b] = 0
                b_arrived[b] = 0
                b_barmax[b] = 0
                b_lastc[b] = 0
                for wi in range(wpb):
                    w = b * wpb + wi
                    ss[F_GID, w] = next_block * wpb + wi
                    ss[F_STATE, w] = ACTIVE
                    s_pc[w] = path_start[warp_path[wi]]
                    s_pos[w] = 0
                    s_sp[w] = 0
                    ss[F_LASTC, w] = 0
                    ss[F_GAP, w] = start + wi * wovh
                    ss[F_AWAKE, w] = 0
                    for q in range(n_static):
                        done[w * n_static + q] = 0
                    ins = _advance(w, prog_kind, prog_a, prog_b, pool, s_pc, s_pos, s_stack, s_sp)
                    ss[F_NEXT, w] = ins
                    ss[F_UNIT, w] = unit[ins]
                    ss[F_READY, w] = 0
                    ss[F_DCAUSE, w] = COMPUTE_DEPENDENCY
                    ss[F_EARLIEST, w] = ss[F_GAP, w]
                    f0 = sub_free[ss[F_UNIT, w]]
                    ss[F_FAIL, w] = SUBSYSTEM_BUSY if f0 > ss[F_GAP, w] else ISSUE_LIMIT
                    key = ss[F_GAP, w] if ss[F_GAP, w] > f0 else f0
                    if key <= t:
                        _wake(ss, w, t, sub_free, slot_mask, blk_mask, unit_blocks, unit_awake, wpb, nsub)
                    else:
                        hsize = _heap_push(heap_t, heap_s, hsize, key, w)
                    if ss[F_GAP, w] > 0:
                        cause_ticks[NOT_RESIDENT] += ss[F_GAP, w]
                        if record and n_st < st_cap:
                            st_warp[n_st] = ss[F_GID, w]
                            st_start[n_st] = 0.0
                            st_end[n_st] = ss[F_GAP, w] / tickf
                            st_cause[n_st] = NOT_RESIDENT
                            n_st += 1
                next_block += 1
        pending = 0
        if budget >= 0 and t > budget:
            stopped = 1
            break
        if t >= cycle_end:
            cycle_end = (t // ticks + 1) * ticks
            cnt = 0
        # ---- wake the warps whose time has come -----------------------------------------
        while hsize > 0 and heap_t[0] <= t:
            w, hsize = _heap_pop(heap_t, heap_s, hsize)
            f0 = sub_free[ss[F_UNIT, w]]
            if f0 > t:
                # its subsystem got busy meanwhile: sleep on until it is free (saves rounds)
                ss[F_FAIL, w] = SUBSYSTEM_BUSY
                hsize = _heap_push(heap_t, heap_s, hsize, f0, w)
            else:
                _wake(ss, w, t, sub_free, slot_mask, blk_mask, unit_blocks, unit_awake, wpb, nsub)
        rounds += 1
        free_mask = np.int64(0)
        for u in range(nsub):
            free[u] = 1 if (sub_free[u] <= t and unit_awake[u] > 0) else 0
            if free[u] != 0:
                free_mask |= np.int64(1) << u
        any_free = free_mask != 0
        if greedy >= 0 and (ss[F_GID, greedy] != greedy_gid or ss[F_STATE, greedy] == DONE):
            greedy = -1  # that warp is gone; its slot holds a younger one
        # ---- visit candidates in policy order ---------------------------------------------
        first_issued = -1
        last_issued = -1
        if any_free and not (il > 0 and cnt >= il):
            # the blocks to visit, one (b, lo, hi) slot range at a time. GTO: the greedy warp,
            # then blocks oldest first. LRR: rr's block from rr, the blocks after it, the
            # blocks before it, rr's block up to rr; blocks without an awake warp on a free
            # subsystem are jumped over through per-unit block masks
            if gto:
                for bi in range(gamma):
                    order[bi] = border[bi]
            else:
                rr_block = ss[F_BSLOT, rr]
            stop = False
            k = 0
            phase = 0
            cursor = 0
            while not stop:
                if free_mask == 0:
                    break  # every subsystem with a waiting warp is taken: the round is over
                if gto:
                    if k > gamma:
                        break
                    k += 1
                    if k == 1:
                        if greedy < 0:
                            continue
                        lo = greedy
                        hi = greedy + 1
                        b = ss[F_BSLOT, greedy]
                    else:
                        b = order[k - 2]
                        lo = b * wpb
                        hi = lo + wpb
                elif phase == 0:
                    b = rr_block
                    lo = rr
                    hi = b * wpb + wpb
                    phase = 1
                    cursor = rr_block + 1
                elif phase <= 2:
                    limit = gamma if phase == 1 else rr_block
                    cb = np.int64(0)
                    if cursor < limit:
                        for u2 in range(nsub):
                            if (free_mask >> u2) & 1:
                                cb |= unit_blocks[u2]
                        cb &= ~((np.int64(1) << cursor) - 1)
                        if limit < 64:
                            cb &= (np.int64(1) << limit) - 1
                    if cb == 0:
                        phase += 1
                        cursor = 0
                        continue
                    lowb = cb & -cb
                    b = DEBRUIJN_INDEX[((lowb * DEBRUIJN) >> 58) & 63]
                    cursor = b + 1
                    lo = b * wpb
                    hi = lo + wpb
                elif phase == 3:
                    phase = 4
                    b = rr_block
                    lo = b * wpb
                    hi = rr
                    if hi <= lo:
                        continue
                else:
                    break
                # skip blocks without an awake warp on a free subsystem
                if blk_mask[b] & free_mask == 0:
                    continue
                # visit the block's awake warps on free subsystems in slot order, through bit
                # masks (one step per candidate, not per warp); masks are re-read after every
                # issue, so a warp a barrier release wakes later in the order is still seen
                slot0 = b * wpb
                pos = lo - slot0
                hi_bit = hi - slot0
                hi_mask = np.int64(-1) if hi_bit >= 64 else (np.int64(1) << hi_bit) - 1
                while pos < 64:
                    m = blk_mask[b] & free_mask
                    if m == 0:
                        break
                    cand = np.int64(0)
                    for u2 in range(nsub):
                        if (m >> u2) & 1:
                            cand |= slot_mask[b * nsub + u2]
                    cand &= hi_mask & ~((np.int64(1) << pos) - 1)
                    if gto and k > 1 and greedy >= slot0 and greedy < slot0 + wpb:
                        cand &= ~(np.int64(1) << (greedy - slot0))
                    if cand == 0:
                        break
                    low = cand & -cand
                    wi = DEBRUIJN_INDEX[((low * DEBRUIJN) >> 58) & 63]
                    s = slot0 + wi
                    pos = wi + 1
                    # ---- issue ------------------------------------------------------------
                    i = ss[F_NEXT, s]
                    u = unit[i]
                    ss[F_AWAKE, s] = 0
                    slot_mask[b * nsub + u] &= ~low
                    if slot_mask[b * nsub + u] == 0:
                        blk_mask[b] &= ~(np.int64(1) << u)
                        unit_blocks[u] &= ~(np.int64(1) << b)
                    unit_awake[u] -= 1
                    complete = t + Lam[i]
                    sub_free[u] = t + lam[i]
                    free[u] = 0
                    free_mask &= ~(np.int64(1) << u)
                    unit_busy[u] += lam[i]
                    cnt += 1
                    n_issued += 1
                    if first_issued < 0:
                        first_issued = s
                    last_issued = s
                    g0 = ss[F_GAP, s]
                    r0 = ss[F_READY, s]
                    c0 = g0
                    if r0 > g0:
                        cause_ticks[ss[F_DCAUSE, s]] += r0 - g0
                        if record and n_st < st_cap:
                            st_warp[n_st] = ss[F_GID, s]
                            st_start[n_st] = g0 / tickf
                            st_end[n_st] = r0 / tickf
                            st_cause[n_st] = ss[F_DCAUSE, s]
                            n_st += 1
                        c0 = r0
                    if t > c0:
                        cause_ticks[ss[F_FAIL, s]] += t - c0
                        if record and n_st < st_cap:
                            st_warp[n_st] = ss[F_GID, s]
                            st_start[n_st] = c0 / tickf
                            st_end[n_st] = t / tickf
                            st_cause[n_st] = ss[F_FAIL, s]
                            n_st += 1
                    instr_count[i] += 1
                    instr_wait[i] += t - g0
                    if record:
                        if n_tr < tr_cap:
                            tr_warp[n_tr] = ss[F_GID, s]
                            tr_block[n_tr] = b_block[b]
                            tr_instr[n_tr] = i
                            tr_sub[n_tr] = u
                            tr_issue[n_tr] = t / tickf
                            tr_complete[n_tr] = complete / tickf
                            n_tr += 1
                        else:
                            truncated = 1
                    done[s * n_static + i] = complete
                    if complete > ss[F_LASTC, s]:
                        ss[F_LASTC, s] = complete
                    if complete > max_complete:
                        max_complete = complete
                    ss[F_GAP, s] = t + gap
                    # which slots need their next instruction (a barrier may release all)
                    fetch_lo = s
                    fetch_hi = s + 1
                    base = 0  # barrier release time for the fetched warps (0: none)
                    if isbar[i] != 0:
                        ss[F_STATE, s] = AT_BARRIER
                        ss[F_EARLIEST, s] = INF
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
                            stop = True
                            break
                        else:
                            fetch_hi = fetch_lo  # wait at the barrier
                    for f in range(fetch_lo, fetch_hi):
                        ss[F_STATE, f] = ACTIVE
                        nxt = _advance(f, prog_kind, prog_a, prog_b, pool, s_pc, s_pos, s_stack, s_sp)
                        if nxt < 0:
                            # ---- the warp issued its last instruction ------------------------
                            ss[F_STATE, f] = DONE
                            ss[F_EARLIEST, f] = INF
                            finished_warps += 1
                            finish_sum += ss[F_GAP, f]
                            if record and n_st < st_cap:
                                st_warp[n_st] = ss[F_GID, f]
                                st_start[n_st] = ss[F_GAP, f] / tickf
                                st_end[n_st] = -1.0  # patched with the end time below
                                st_cause[n_st] = FINISHED
                                n_st += 1
                            if ss[F_LASTC, f] > b_lastc[b]:
                                b_lastc[b] = ss[F_LASTC, f]
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
                        ss[F_NEXT, f] = nxt
                        ss[F_UNIT, f] = unit[nxt]
                        ready = base
                        cause = BARRIER if base > 0 else COMPUTE_DEPENDENCY
                        row = f * n_static
                        for e in range(dep_ptr[nxt], dep_ptr[nxt + 1]):
                            c = done[row + dep_src[e]]
                            if c > ready:
                                ready = c
                                cause = MEMORY_DEPENDENCY if ismem[dep_src[e]] != 0 else COMPUTE_DEPENDENCY
                        ss[F_READY, f] = ready
                        ss[F_DCAUSE, f] = cause
                        e0 = ready if ready > ss[F_GAP, f] else ss[F_GAP, f]
                        ss[F_EARLIEST, f] = e0
                        # a warp sleeps until its operands are ready and its subsystem is free
                        # (a lower bound: the subsystem may be taken again by then); the wait
                        # after the operands is charged to the subsystem if it is busy then,
                        # else to the issue limit (other warps issue first)
                        f0 = sub_free[ss[F_UNIT, f]]
                        ss[F_FAIL, f] = SUBSYSTEM_BUSY if f0 > e0 else ISSUE_LIMIT
                        key = e0 if e0 > f0 else f0
                        if key <= t:
                            _wake(ss, f, t, sub_free, slot_mask, blk_mask, unit_blocks, unit_awake, wpb, nsub)
                            free[ss[F_UNIT, f]] = 1
                            free_mask |= np.int64(1) << ss[F_UNIT, f]
                        else:
                            hsize = _heap_push(heap_t, heap_s, hsize, key, f)
                    if stop:
                        break
                    if il > 0 and cnt >= il:
                        stop = True
                        break
        if err != ERR_NONE:
            break
        if gto:
            # greedy: stay on the warp that issued first this round (the greedy one if it could)
            if first_issued >= 0:
                greedy = first_issued
                greedy_gid = ss[F_GID, first_issued]
        elif last_issued >= 0:
            rr = last_issued + 1
            if rr >= nslots:
                rr = 0
        # ---- when can anything happen next? -----------------------------------------------
        il_full = il > 0 and cnt >= il
        next_cycle = cycle_end
        nt = INF
        # a sleeper whose subsystem was taken after it went to sleep would only wake to sleep
        # again: re-key it now (the same thing its round would do) and save that empty round
        while hsize > 0:
            w = heap_s[0]
            f0 = sub_free[ss[F_UNIT, w]]
            if f0 <= heap_t[0]:
                break
            w, hsize = _heap_pop(heap_t, heap_s, hsize)
            ss[F_FAIL, w] = SUBSYSTEM_BUSY
            hsize = _heap_push(heap_t, heap_s, hsize, f0, w)
        if hsize > 0:
            nt = heap_t[0]
        for u in range(nsub):
            if unit_awake[u] > 0:
                e = sub_free[u] if sub_free[u] > t else t
                if il_full and e < next_cycle:
                    e = next_cycle
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
    if stopped:
        end = budget
    cause_ticks[FINISHED] += finished_warps * end - finish_sum
    if record:
        for k in range(n_st):
            if st_end[k] == -1.0:
                st_end[k] = end / tickf
    out[0] = end
    out[1] = n_issued
    out[2] = n_tr
    out[3] = n_st
    out[4] = stopped
    out[5] = err
    out[6] = err_block
    out[7] = truncated
    out[8] = rounds
