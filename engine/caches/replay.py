"""The compiled replay of the sampled requests through L1 (per block) and L2 (the GPU's), in
issue order: set-associative, sectored, a pseudo-random victim (see :mod:`engine.caches`).

The replay runs a few blocks; the GPU runs a wave of them at once, each allocating lines of its
own in the same L2. A block that reads a line again it touched itself is charged for that: the
lines it allocated in between, times ``concurrency`` (how many blocks' private traffic that
stands for), are the lines L2 allocated meanwhile, and with a random victim a line survives each
allocation with probability 1 - 1/capacity, so exp(-allocations / capacity) overall
(``out_lost``: per request, the expected sectors of its L2 hits that would have missed)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _hash_set(line: np.int64, sets: np.int64) -> np.int64:       # pragma: no cover - compiled
    x = np.uint64(line) * np.uint64(0x9E3779B97F4A7C15)
    return np.int64((x >> np.uint64(24)) % np.uint64(sets))


@njit(cache=True, nogil=True)
def _l1_access(l1_tag: Any, l1_valid: Any, blk: Any, line: Any, want: Any, l1_sets: Any, l1_ways: Any,
               clock: Any) -> tuple[np.uint8, int, bool]:   # pragma: no cover - compiled
    """The sectors of ``want`` block ``blk``'s L1 held (its lookup hits), the line's way, and
    whether the line was allocated now; the line is allocated if missing and ``want``'s sectors
    are valid afterwards. Loads and stores alike: measured
    (bench/micro/l1_store_hits.cu), a load after a store of the same address hits L1, and a store
    to a sector an earlier store of the block wrote is a lookup hit, so a global store writes
    through to L2 and keeps its sectors in L1."""
    s1 = _hash_set(line, l1_sets)
    way = -1
    for w in range(l1_ways):
        if l1_tag[blk, s1, w] == line:
            way = w
            break
    fresh = way < 0
    if fresh:
        # an empty way if there is one, else a pseudo-random victim (measured: misses fade in
        # beyond the capacity instead of all at once, as LRU would have them)
        for w in range(l1_ways):
            if l1_tag[blk, s1, w] == -1:
                way = w
                break
        if way < 0:
            way = np.int64((np.uint64(clock) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) % l1_ways
        l1_tag[blk, s1, way] = line
        l1_valid[blk, s1, way] = 0
    hit = np.uint8(want & l1_valid[blk, s1, way])
    l1_valid[blk, s1, way] |= want
    return hit, way, fresh


@njit(cache=True, nogil=True)
def _l1_step(l1_tag: Any, l1_valid: Any, l1_fill: Any, blk: Any, line: Any, want: Any, l1_sets: Any,
             l1_ways: Any, clock: Any, kind: Any, segment: Any, warp: Any, out_l1: Any, out_waiting: Any,
             r: Any) -> tuple[Any, Any]:   # pragma: no cover - compiled
    """Request ``r``'s lookup of ``line`` in block ``blk``'s L1 (a load, ``kind`` 0, or a store):
    its hits counted, and for a load the hits on sectors another warp's miss of the same segment
    is still filling. As in L2 (:func:`replay_requests`), a block's warps issue a segment's loads
    within a few cycles, far less than a miss takes, so such a hit waits for that fill; not where
    the same warp started it (``warp``; its own later load of the line leaves with the first,
    whose value its consumers wait for anyway, or after that value came). ``out_waiting[r]``
    counts them by where the fill comes from: L2 (column 0) or DRAM (column 1); Nsight Compute
    counts them as L1 hits, as the replay does. Returns the sectors that go on to L2 (all of a store's)
    and the line's fill record (segment, sectors under way, those DRAM brings, the warp that
    asked: a view into ``l1_fill``, empty for a store)."""
    hit, way, fresh = _l1_access(l1_tag, l1_valid, blk, line, want, l1_sets, l1_ways, clock)
    fill = l1_fill[blk, _hash_set(line, l1_sets), way]
    out_l1[r] += _bits4(hit)
    if fresh:
        fill[0] = -1
    if kind != 0:
        return want, fill[:0]
    miss = want & ~hit
    if segment >= 0 and fill[0] == segment and (warp < 0 or fill[3] != warp):
        waiting = np.int64(hit) & fill[1]
        out_waiting[r, 0] += _bits4(waiting & ~fill[2])
        out_waiting[r, 1] += _bits4(waiting & fill[2])
    if segment >= 0 and miss != 0:
        if fill[0] != segment:
            fill[0], fill[1], fill[2] = segment, 0, 0
        fill[1] |= np.int64(miss)
        fill[3] = warp
    return miss, fill


@njit(cache=True, nogil=True)
def _l1_invalidate(l1_tag: Any, l1_valid: Any, blk: Any, line: Any, want: Any, l1_sets: Any,
                   l1_ways: Any) -> None:   # pragma: no cover - compiled
    """An atomic is done in L2, and the copy L1 held of its sectors is dropped: measured
    (bench/micro/l1_store_hits.cu, load_then_red), a load after a RED of the address it loaded
    before misses L1."""
    s1 = _hash_set(line, l1_sets)
    for w in range(l1_ways):
        if l1_tag[blk, s1, w] == line:
            l1_valid[blk, s1, w] &= ~want
            return


@njit(cache=True, nogil=True)
def _bits4(x: Any) -> int:   # pragma: no cover - compiled
    return int((x & 1) + (x >> 1 & 1) + (x >> 2 & 1) + (x >> 3 & 1))


@njit(cache=True, nogil=True)
def _mark_filling(l2_fill_segment: Any, l2_fill_block: Any, l2_filling: Any, s2: Any, way: Any, segment: Any,
                  blk: Any, bits: Any) -> None:   # pragma: no cover - compiled
    """Sectors ``bits`` of the line at (``s2``, ``way``) are on their way from DRAM for a request
    of block ``blk`` in ``segment`` (what that block's other requests of the segment wait for)."""
    if l2_fill_segment[s2, way] != segment or l2_fill_block[s2, way] != blk:
        l2_fill_segment[s2, way] = segment
        l2_fill_block[s2, way] = blk
        l2_filling[s2, way] = 0
    l2_filling[s2, way] |= bits


@njit(cache=True, nogil=True)
def _l2_find(l2_tag: Any, s2: Any, line: Any, l2_ways: Any) -> int:   # pragma: no cover - compiled
    """The way of set ``s2`` holding ``line``, -1 if none."""
    for w in range(l2_ways):
        if l2_tag[s2, w] == line:
            return w
    return -1


@njit(cache=True, nogil=True)
def _l2_allocate(l2_tag: Any, l2_valid: Any, l2_dirty: Any, s2: Any, line: Any, l2_ways: Any,
                 clock: Any) -> int:   # pragma: no cover - compiled
    """A way of set ``s2`` for ``line``, emptied: an empty one if there is one, else a pseudo-random
    victim (the L2 ring measured with one thread keeps hitting past its capacity, 25 MB near and 50
    MB with the far partition, as a cyclic sweep through an LRU cache would not)."""
    way = -1
    for w in range(l2_ways):
        if l2_tag[s2, w] == -1:
            way = w
            break
    if way < 0:
        way = np.int64((np.uint64(clock + 7) * np.uint64(0xD1B54A32D192ED03)) >> np.uint64(40)) % l2_ways
    l2_tag[s2, way] = line
    l2_valid[s2, way] = 0
    for q in range(4):
        l2_dirty[s2, way, q] = 0
    return way


@njit(cache=True, nogil=True)
def replay_requests(req_block: Any, req_kind: Any, req_segment: Any, req_warp: Any, req_order: Any, flush_at: Any,
                    entry_start: Any, entry_line: Any, entry_sectors: Any, entry_bytes: Any, n_blocks: Any,
                    l1_sets: Any, l1_ways: Any, l2_sets: Any, l2_ways: Any, fetch_pairs: Any, out_l1: Any,
                    out_l2: Any, out_cold: Any, out_again: Any, out_cold_bytes: Any, out_again_bytes: Any,
                    concurrency: Any, out_lost: Any, out_waiting: Any) -> None:   # pragma: no cover
    """Replays the requests in ``req_order`` (L2 emptied before position ``flush_at``); per request
    the sectors L1 and L2 served (for a store: the sectors L1 held, which it updates; every store
    goes on to L2), the DRAM sectors read for data the replay never saw before (cold) and for data
    it saw and lost (again), with the DRAM bytes of each; with ``concurrency`` > 0, ``out_lost``
    (float per request) gets the expected sectors of each request's L2 hits on lines its own
    block touched last that the GPU's other blocks would have evicted meanwhile; ``out_waiting``
    (requests x 2) the L1 hits that wait for a fill under way (:func:`_l1_step`).

    ``req_segment`` (per request; empty: not known) is the segment of the run it was issued in
    (:mod:`engine.execution.issue_order`): a block's requests of one segment leave its SM within
    a few cycles of each other, so a sector DRAM is still bringing in for an earlier request of
    the block in the segment (the pair of a 64-byte fetch) is no L2 hit but a miss that waits
    for that fetch and moves no bytes of its own, as a sector of the same request that the fetch
    brings. (The run steps every sampled block together; on the GPU they run on different SMs,
    not in step, so another block's fetch is taken as done.)"""
    l1_tag = np.full((n_blocks, l1_sets, l1_ways), -1, dtype=np.int64)
    l1_valid = np.zeros((n_blocks, l1_sets, l1_ways), dtype=np.uint8)
    l1_fill = np.full((n_blocks, l1_sets, l1_ways, 4), -1, dtype=np.int64)   # per line: _l1_step's record
    no_fill = l1_fill.reshape(-1)[:0]          # a request that marks no L1 fill
    warps = req_warp.shape[0] > 0
    l2_tag = np.full((l2_sets, l2_ways), -1, dtype=np.int64)
    l2_valid = np.zeros((l2_sets, l2_ways), dtype=np.uint8)
    l2_dirty = np.zeros((l2_sets, l2_ways, 4), dtype=np.uint32)
    # per L2 line, the segment and block whose requests DRAM fetches are still bringing sectors
    # for, and those sectors
    l2_fill_segment = np.full((l2_sets, l2_ways), -1, dtype=np.int64)
    l2_fill_block = np.full((l2_sets, l2_ways), -1, dtype=np.int64)
    l2_filling = np.zeros((l2_sets, l2_ways), dtype=np.uint8)
    segments = req_segment.shape[0] > 0
    seen = dict()
    seen[np.int64(-1)] = np.uint8(0)
    # per block, the L2 lines it has allocated so far; per line, the block that touched it last
    # and that block's count then
    allocated = np.zeros(n_blocks, dtype=np.int64)
    last_block = dict()
    last_block[np.int64(-1)] = np.int64(-1)
    last_count = dict()
    last_count[np.int64(-1)] = np.int64(0)
    l2_lines = float(l2_sets * l2_ways)
    clock = 0
    for k in range(req_order.shape[0]):
        if k == flush_at:
            l2_tag[:] = -1
            l2_valid[:] = 0
            l2_dirty[:] = 0
        r = req_order[k]
        blk = req_block[r]
        kind = req_kind[r]
        segment = req_segment[r] if segments else np.int64(-1)
        warp = np.int64(req_warp[r]) if warps else np.int64(-1)
        for e in range(entry_start[r], entry_start[r + 1]):
            clock += 1
            line = entry_line[e]
            want = np.uint8(entry_sectors[e])
            miss, fill = want, no_fill
            if (kind == 0 or kind == 2) and l1_sets > 0:
                miss, fill = _l1_step(l1_tag, l1_valid, l1_fill, blk, line, want, l1_sets, l1_ways, clock, kind,
                                      segment, warp, out_l1, out_waiting, r)
            elif kind == 3 and l1_sets > 0:
                _l1_invalidate(l1_tag, l1_valid, blk, line, want, l1_sets, l1_ways)
            if miss == 0:
                continue
            known = seen.get(line, np.uint8(0))
            seen[line] = np.uint8(known | miss)
            s2 = _hash_set(line, l2_sets)
            way = _l2_find(l2_tag, s2, line, l2_ways)
            lost = 0.0
            if way < 0:
                allocated[blk] += 1
                way = _l2_allocate(l2_tag, l2_valid, l2_dirty, s2, line, l2_ways, clock)
                l2_fill_segment[s2, way] = -1
                l2_filling[s2, way] = 0
            elif concurrency > 0.0 and kind != 2 and last_block.get(line, np.int64(-1)) == blk:
                lost = 1.0 - np.exp(-float(allocated[blk] - last_count[line]) * concurrency / l2_lines)
            last_block[line] = blk
            last_count[line] = allocated[blk]
            valid = l2_valid[s2, way]
            before = valid                           # what the line held before this request
            in_flight = np.uint8(0)
            if segment >= 0 and l2_fill_segment[s2, way] == segment and l2_fill_block[s2, way] == blk:
                in_flight = l2_filling[s2, way]
            if kind == 2:                                # a store: its bytes are dirty, no fetch
                for q in range(4):
                    if miss >> q & 1:
                        l2_dirty[s2, way, q] |= entry_bytes[e, q]
                        out_l2[r] += 1
                continue
            for q in range(4):
                if not (miss >> q & 1):
                    continue
                covered = (before >> q & 1) or l2_dirty[s2, way, q] == np.uint32(0xFFFFFFFF)
                if len(fill) and not (covered and not (in_flight >> q & 1)):
                    fill[2] |= 1 << q                # the load's L1 fill comes from DRAM
                if covered and (in_flight >> q & 1):
                    out_cold[r] += 1                 # waits for the fetch under way: no bytes of its own
                elif covered:
                    out_l2[r] += 1
                    if lost > 0.0:
                        out_lost[r] += lost
                else:
                    fetched = np.uint8(1 << q) | (np.uint8(1 << (q ^ 1)) if fetch_pairs else np.uint8(0))
                    moved = 32 * _bits4(fetched & ~valid)
                    if not (known >> q & 1):
                        out_cold[r] += 1
                        out_cold_bytes[r] += moved
                    else:
                        out_again[r] += 1
                        out_again_bytes[r] += moved
                    if segment >= 0:
                        _mark_filling(l2_fill_segment, l2_fill_block, l2_filling, s2, way, segment, blk,
                                      fetched & ~valid)
                    valid |= fetched
                if kind == 3:
                    l2_dirty[s2, way, q] |= entry_bytes[e, q]
            l2_valid[s2, way] = valid
