"""A memory instruction's lanes as the warp requests the memory system sees.

A warp executes a memory instruction once for all its active lanes; the load/store unit turns
that into one *request* of the 32-byte sectors and 128-byte lines the lanes' bytes fall in.
Shared memory serves a request in as many *wavefronts* as the most distinct 4-byte words one of
its 32 banks must deliver (lanes reading the same word share it); accesses of 8 or 16 bytes are
served a half or a quarter warp at a time, each phase with its own conflicts.

All functions take the executing lanes as sorted global lane numbers (warp = lane // 32) and
work on a ``[warps, 32]`` matrix per request, so a step of the run costs a few numpy calls.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SECTOR_SHIFT = 5
LINE_SHIFT = 7
SENTINEL = np.uint64(0xFFFFFFFFFFFFFFFF)


@dataclass
class WarpMatrix:
    """The lanes of one step grouped by warp: ``warps`` (ascending global warp numbers), ``row``
    of each lane, ``lane`` within the warp."""

    warps: np.ndarray
    row: np.ndarray
    lane: np.ndarray

    @classmethod
    def of(cls, lanes: np.ndarray) -> WarpMatrix:
        warp = lanes >> 5
        warps, row = np.unique(warp, return_inverse=True)
        return cls(warps, row, lanes & 31)

    def spread(self, values: np.ndarray, fill: np.uint64 = SENTINEL) -> np.ndarray:
        out = np.full((len(self.warps), 32), fill, dtype=np.uint64)
        out[self.row, self.lane] = values
        return out

    def active_lanes(self) -> np.ndarray:
        return np.bincount(self.row, minlength=len(self.warps))


def distinct_per_row(matrix: np.ndarray) -> np.ndarray:
    """Distinct values per row, the sentinel not counted (the matrix is sorted in place)."""
    matrix.sort(axis=1)
    new = np.empty(matrix.shape, dtype=bool)
    new[:, 0] = True
    np.not_equal(matrix[:, 1:], matrix[:, :-1], out=new[:, 1:])
    new &= matrix != SENTINEL
    return new.sum(axis=1)


@dataclass
class GlobalRequests:
    """One step's global (or local) requests: per warp its sectors, lines and bank degree; and
    the (request, line, sector mask, written-byte masks) entries for the cache simulation."""

    warps: np.ndarray
    active: np.ndarray
    sectors: np.ndarray
    lines: np.ndarray
    bank_degree: np.ndarray
    entry_row: np.ndarray          # request (row of ``warps``) of each line entry
    entry_line: np.ndarray         # line number (address >> 7)
    entry_sectors: np.ndarray      # 4-bit mask of the line's sectors the request touches
    entry_bytes: np.ndarray | None  # [entries, 4] uint32 masks of the bytes written per sector


def global_requests(lanes: np.ndarray, address: np.ndarray, width: int, stores: bool) -> GlobalRequests:
    """The requests of lanes ``lanes`` accessing ``width`` bytes at ``address`` (uint64)."""
    wm = WarpMatrix.of(lanes)
    active = wm.active_lanes()
    sector = address >> np.uint64(SECTOR_SHIFT)
    last = (address + np.uint64(max(width, 1) - 1)) >> np.uint64(SECTOR_SHIFT)
    straddles = bool((last != sector).any())
    if straddles:                                      # wide or misaligned: every sector it covers
        extra = last != sector
        lanes = np.concatenate([lanes, lanes[extra]])
        sector = np.concatenate([sector, last[extra]])
        address = np.concatenate([address, last[extra] << np.uint64(SECTOR_SHIFT)])
        order = np.argsort(lanes, kind="stable")
        lanes, sector, address = lanes[order], sector[order], address[order]
    warp = lanes >> 5
    rows = np.searchsorted(wm.warps, warp)
    order = np.lexsort((sector, rows))
    r_sorted, s_sorted = rows[order], sector[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (r_sorted[1:] != r_sorted[:-1]) | (s_sorted[1:] != s_sorted[:-1])
    sectors = np.bincount(r_sorted[new], minlength=len(wm.warps))
    line_of = s_sorted >> np.uint64(LINE_SHIFT - SECTOR_SHIFT)
    new_line = np.ones(len(order), dtype=bool)
    new_line[1:] = (r_sorted[1:] != r_sorted[:-1]) | (line_of[1:] != line_of[:-1])
    lines = np.bincount(r_sorted[new_line], minlength=len(wm.warps))
    starts = np.flatnonzero(new_line)
    bit = (np.uint64(1) << (s_sorted & np.uint64(3))).astype(np.uint8)
    entry_sectors = np.bitwise_or.reduceat(bit, starts) if len(starts) else np.zeros(0, dtype=np.uint8)
    entry_bytes = None
    if stores:
        a_sorted = address[order]
        offset = (a_sorted & np.uint64(31)).astype(np.int64)
        span = np.minimum(width, 32 - offset)
        mask = ((np.uint64(1) << span.astype(np.uint64)) - np.uint64(1)) << offset.astype(np.uint64)
        quarter = (s_sorted & np.uint64(3)).astype(np.int64)
        per = np.zeros((len(order), 4), dtype=np.uint64)
        per[np.arange(len(order)), quarter] = mask
        entry_bytes = np.bitwise_or.reduceat(per, starts, axis=0).astype(np.uint32) if len(starts) \
            else np.zeros((0, 4), dtype=np.uint32)
    bank_degree = bank_wavefronts(wm, lanes_sorted_address(lanes, address, straddles), width)
    return GlobalRequests(wm.warps, active, sectors, lines, bank_degree, r_sorted[starts],
                          line_of[starts].astype(np.int64), entry_sectors, entry_bytes)


def lanes_sorted_address(lanes: np.ndarray, address: np.ndarray, straddles: bool) -> np.ndarray:
    """One address per executing lane (the first of a lane's copies when its access straddles)."""
    if not straddles:
        return address
    first = np.ones(len(lanes), dtype=bool)
    first[1:] = lanes[1:] != lanes[:-1]
    return address[first]


def bank_wavefronts(wm: WarpMatrix, address: np.ndarray, width: int) -> np.ndarray:
    """Per request, the most distinct 4-byte words one of the 32 banks serves, summed over the
    phases of an 8- or 16-byte access (a half or a quarter warp each)."""
    words_per_lane = max(1, width // 4)
    phases = min(words_per_lane, 4)
    lanes_per_phase = 32 // phases
    total = np.zeros(len(wm.warps), dtype=np.int64)
    for phase in range(phases):
        in_phase = (wm.lane // lanes_per_phase) == phase
        if not in_phase.any():
            continue
        rows, lane = wm.row[in_phase], wm.lane[in_phase]
        columns = []
        for k in range(words_per_lane):
            matrix = np.full((len(wm.warps), 32), SENTINEL, dtype=np.uint64)
            matrix[rows, lane] = (address[in_phase] >> np.uint64(2)) + np.uint64(k)
            columns.append(matrix)
        words = np.concatenate(columns, axis=1) if len(columns) > 1 else columns[0]
        present = np.bincount(rows, minlength=len(wm.warps)) > 0
        total += np.where(present, _bank_degree(words), 0)
    return np.maximum(total, 1)


def _bank_degree(words: np.ndarray) -> np.ndarray:
    """The most distinct words one bank serves, per row of ``words`` (SENTINEL: no lane)."""
    keys = ((words & np.uint64(31)) << np.uint64(58)) | (words & np.uint64((1 << 58) - 1))
    keys = np.where(words == SENTINEL, SENTINEL, keys)
    keys.sort(axis=1)
    new = np.empty(keys.shape, dtype=bool)
    new[:, 0] = True
    np.not_equal(keys[:, 1:], keys[:, :-1], out=new[:, 1:])
    new &= keys != SENTINEL
    bank = np.minimum((keys >> np.uint64(58)).astype(np.int64), 31)
    flat = np.arange(len(keys))[:, None] * 32 + bank
    counts = np.bincount(flat[new], minlength=len(keys) * 32).reshape(len(keys), 32)
    return np.maximum(counts.max(axis=1), 1)


def shared_wavefronts(lanes: np.ndarray, address: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """(active lanes, wavefronts) per warp of a shared-memory access."""
    wm = WarpMatrix.of(lanes)
    return wm.active_lanes(), bank_wavefronts(wm, address, width)


def distinct_addresses(lanes: np.ndarray, address: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(active lanes, distinct addresses) per warp: a constant-cache request serves one address
    at a time."""
    wm = WarpMatrix.of(lanes)
    return wm.active_lanes(), distinct_per_row(wm.spread(address))
