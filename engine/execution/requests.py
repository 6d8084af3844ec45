"""A memory instruction's lanes as the warp requests the memory system sees.

A warp executes a memory instruction once for all its active lanes; the load/store unit turns
that into one *request* of the 32-byte sectors and 128-byte lines the lanes' bytes fall in.
Banked memories (shared memory, and L1's data array for a global load that hits) serve a request
in as many *wavefronts* as the most distinct 4-byte words one of their 32 banks must deliver
(lanes reading the same word share it); accesses of 8 or 16 bytes are served a half or a
quarter warp at a time, each phase with its own conflicts.

The executing lanes come as sorted global lane numbers (warp = lane // 32); one compiled pass
groups them by warp.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

SECTOR_SHIFT = 5
LINE_SHIFT = 7


@njit(cache=True, nogil=True, inline="always")
def _insertion_sort(keys, other, n):      # pragma: no cover - compiled
    """Sorts keys[:n] (and other[:n] alongside) in place: at most 128 values, cheaper than np.sort."""
    for i in range(1, n):
        k = keys[i]
        o = other[i]
        j = i - 1
        while j >= 0 and keys[j] > k:
            keys[j + 1] = keys[j]
            other[j + 1] = other[j]
            j -= 1
        keys[j + 1] = k
        other[j + 1] = o


@njit(cache=True, nogil=True)
def _wavefronts(address, lanes, first, last, width, words, spare, counts):   # pragma: no cover
    """Bank wavefronts of lanes first..last-1 of one warp (``address`` bytes, ``width`` each)."""
    words_per_lane = max(1, width // 4)
    phases = min(words_per_lane, 4)
    per_phase = 32 // phases
    total = 0
    for phase in range(phases):
        n = 0
        for i in range(first, last):
            if (lanes[i] & 31) // per_phase != phase:
                continue
            base = address[i] >> np.uint64(2)
            for k in range(words_per_lane):
                words[n] = base + np.uint64(k)
                n += 1
        if n == 0:
            continue
        _insertion_sort(words, spare, n)
        counts[:] = 0
        for j in range(n):
            if j == 0 or words[j] != words[j - 1]:
                counts[np.int64(words[j] & np.uint64(31))] += 1
        total += counts.max()
    return max(total, 1)


@njit(cache=True, nogil=True)
def _requests(lanes, address, width, stores, want_sectors):   # pragma: no cover - compiled
    n = lanes.shape[0]
    warps = np.empty(n, dtype=np.int64)
    active = np.empty(n, dtype=np.int64)
    sectors = np.empty(n, dtype=np.int64)
    lines = np.empty(n, dtype=np.int64)
    bank = np.empty(n, dtype=np.int64)
    distinct = np.empty(n, dtype=np.int64)
    e_row = np.empty(2 * n, dtype=np.int64)
    e_line = np.empty(2 * n, dtype=np.int64)
    e_sectors = np.empty(2 * n, dtype=np.uint8)
    e_bytes = np.zeros((2 * n, 4), dtype=np.uint32)
    words = np.empty(128, dtype=np.uint64)
    spare = np.empty(128, dtype=np.uint64)
    counts = np.zeros(32, dtype=np.int64)
    sec = np.empty(64, dtype=np.uint64)
    msk = np.empty(64, dtype=np.uint64)
    rows = 0
    entries = 0
    start = 0
    while start < n:
        warp = lanes[start] >> 5
        stop = start
        while stop < n and (lanes[stop] >> 5) == warp:
            stop += 1
        warps[rows] = warp
        active[rows] = stop - start
        bank[rows] = _wavefronts(address, lanes, start, stop, width, words, spare, counts)
        m = stop - start
        for i in range(m):
            words[i] = address[start + i]
        _insertion_sort(words, spare, m)
        d = 0
        for j in range(m):
            if j == 0 or words[j] != words[j - 1]:
                d += 1
        distinct[rows] = d
        sectors[rows] = 0
        lines[rows] = 0
        if want_sectors:
            k = 0
            for i in range(start, stop):
                lo = address[i]
                hi = lo + np.uint64(max(width, 1) - 1)
                s0 = lo >> np.uint64(SECTOR_SHIFT)
                s1 = hi >> np.uint64(SECTOR_SHIFT)
                off = np.int64(lo & np.uint64(31))
                span = min(width, 32 - off)
                sec[k] = s0
                if span >= 32:
                    msk[k] = np.uint64(0xFFFFFFFF)
                else:
                    msk[k] = ((np.uint64(1) << np.uint64(span)) - np.uint64(1)) << np.uint64(off)
                k += 1
                if s1 != s0:
                    rest = width - span
                    sec[k] = s1
                    msk[k] = np.uint64(0xFFFFFFFF) if rest >= 32 else (np.uint64(1) << np.uint64(rest)) - np.uint64(1)
                    k += 1
            _insertion_sort(sec, msk, k)
            ns = 0
            nl = 0
            last_sector = np.uint64(0xFFFFFFFFFFFFFFFF)
            last_line = np.uint64(0xFFFFFFFFFFFFFFFF)
            for j in range(k):
                s = sec[j]
                line = s >> np.uint64(LINE_SHIFT - SECTOR_SHIFT)
                q = np.int64(s & np.uint64(3))
                if s != last_sector:
                    ns += 1
                    last_sector = s
                if line != last_line:
                    nl += 1
                    last_line = line
                    e_row[entries] = rows
                    e_line[entries] = np.int64(line)
                    e_sectors[entries] = 0
                    entries += 1
                e_sectors[entries - 1] |= np.uint8(1 << q)
                if stores:
                    e_bytes[entries - 1, q] |= np.uint32(msk[j])
            sectors[rows] = ns
            lines[rows] = nl
        rows += 1
        start = stop
    return (warps[:rows], active[:rows], sectors[:rows], lines[:rows], bank[:rows], distinct[:rows],
            e_row[:entries], e_line[:entries], e_sectors[:entries], e_bytes[:entries])


@dataclass
class Requests:
    """One step's requests: per warp its active lanes, sectors, lines, bank wavefronts and distinct
    addresses; and the (request, line, sector mask, written-byte masks) entries for the caches."""

    warps: np.ndarray
    active: np.ndarray
    sectors: np.ndarray
    lines: np.ndarray
    bank_degree: np.ndarray
    distinct: np.ndarray
    entry_row: np.ndarray
    entry_line: np.ndarray
    entry_sectors: np.ndarray
    entry_bytes: np.ndarray


def warp_requests(lanes: np.ndarray, address: np.ndarray, width: int, stores: bool = False,
                  sectors: bool = True) -> Requests:
    """The requests of ``lanes`` (sorted) accessing ``width`` bytes at ``address`` (uint64)."""
    return Requests(*_requests(np.ascontiguousarray(lanes, dtype=np.int64),
                               np.ascontiguousarray(address, dtype=np.uint64), int(width), bool(stores),
                               bool(sectors)))
