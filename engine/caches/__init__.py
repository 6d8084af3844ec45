"""Cache simulation: where each sampled request's sectors are served (L1, L2 or DRAM).

The run of the sampled warps (:mod:`engine.execution`) logs every global, local and texture
request in issue order, one entry per 128-byte line it touches with the 32-byte sectors it
wants. :func:`simulate_caches` replays that log through

* **L1**: one per block, sectored (four 32-byte sectors per 128-byte line), set-associative with
  LRU replacement, of the SM's L1 data capacity (what the launch's shared memory leaves of the
  combined L1/shared array) divided among the blocks resident on the SM: blocks of one SM are far
  apart in launch order and share no data, so each has its share of the capacity. Loads that may
  be cached allocate; ``.cg``/``.cv``/volatile loads, stores (write-through) and atomics go to L2.
* **L2**: one for the GPU, sectored, set-associative with LRU over hashed sets, of the profile's
  effective capacity (a line read by SMs of both L2 partitions is held twice: half the size,
  ``L2_EFFECTIVE_SHARE``). A missing sector is read from DRAM with its 64-byte neighbour
  (``DRAM_FETCH_BYTES``). Stores write back: a line evicted with dirty sectors writes them to
  DRAM, after reading any sector it only partly wrote.

The result (:class:`CacheResult`) gives, per instruction, the share of its requested sectors each
level served and the DRAM bytes it caused, over the *measured* blocks of the sample, and the
launch's DRAM bytes and hit rates extrapolated from them (:func:`launch_traffic`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numba import njit

from engine.execution import Execution

SECTOR = 32
LINE = 128
DRAM_FETCH_BYTES = 64           # DRAM reads 64 bytes at a time: a missing sector brings its neighbour
L2_EFFECTIVE_SHARE = 0.5        # data shared by every SM occupies both L2 partitions (measured, see docs)
L1_WAYS = 16
L2_WAYS = 16
# measured (bench/micro/results/h100-2026-11-27-geometry-call{1,2}: a single thread chasing a ring
# through L1 with no shared memory carved out): every load hits up to 208 KB, 85 % at 224 KB, 50 %
# at 256 KB, none at 320 KB. So about 40 KB of the 256 KB array are not L1 data, misses fade in
# (the victim is not the least recently used line), and lines 4, 16 or 64 KB apart never conflict
# (the set index is hashed).
L1_UNAVAILABLE_BYTES = 40 * 1024
FULL = np.uint32(0xFFFFFFFF)

# request kinds (engine.execution.recorder)
LOAD_CACHED, LOAD_UNCACHED, STORE, ATOMIC = 0, 1, 2, 3


@dataclass(frozen=True)
class CacheConfig:
    """Geometry of the simulated caches (bytes)."""

    l1_bytes_per_block: int
    l2_bytes: int
    l1_ways: int = L1_WAYS
    l2_ways: int = L2_WAYS
    dram_fetch_bytes: int = DRAM_FETCH_BYTES
    wave_blocks: int = 0               # blocks the GPU runs at once (0: not known)


@dataclass
class CacheResult:
    """Per instruction (dict index -> value) over the measured requests, and launch-level sums."""

    l1_share: dict[int, float] = field(default_factory=dict)
    l2_share: dict[int, float] = field(default_factory=dict)
    dram_share: dict[int, float] = field(default_factory=dict)
    dram_read_per_request: dict[int, float] = field(default_factory=dict)   # bytes
    requests: dict[int, int] = field(default_factory=dict)
    sectors: dict[int, int] = field(default_factory=dict)
    measured_blocks: int = 0
    dram_read_bytes: float = 0.0          # over the measured blocks
    dirty_bytes: float = 0.0              # distinct bytes the measured blocks' stores leave dirty
    fill_bytes: float = 0.0               # DRAM reads of partly written sectors (write-back fills)
    l2_sector_accesses: int = 0
    l2_sector_hits: int = 0
    l1_sector_accesses: int = 0
    l1_sector_hits: int = 0
    config: CacheConfig | None = None
    footprints: dict[int, Any] = field(default_factory=dict)   # buffer -> BufferFootprint
    store_sector_bytes: float = 0.0       # bytes of the sectors the measured stores and atomics touch

    @property
    def l2_hit_rate(self) -> float | None:
        return self.l2_sector_hits / self.l2_sector_accesses if self.l2_sector_accesses else None

    @property
    def l1_hit_rate(self) -> float | None:
        return self.l1_sector_hits / self.l1_sector_accesses if self.l1_sector_accesses else None


@njit(cache=True, nogil=True)
def _hash_set(line: np.int64, sets: np.int64) -> np.int64:       # pragma: no cover - compiled
    x = np.uint64(line) * np.uint64(0x9E3779B97F4A7C15)
    return np.int64((x >> np.uint64(24)) % np.uint64(sets))


@njit(cache=True, nogil=True)
def _replay(req_block, req_kind, req_order, flush_at, entry_start, entry_line, entry_sectors, entry_bytes,
            n_blocks, l1_sets, l1_ways, l2_sets, l2_ways, fetch_pairs,
            out_l1, out_l2, out_cold, out_again, out_cold_bytes, out_again_bytes):   # pragma: no cover
    """Replays the requests in ``req_order`` (L2 emptied before position ``flush_at``); per request
    the sectors L1 and L2 served, the DRAM sectors read for data the replay never saw before
    (cold) and for data it saw and lost (again), with the DRAM bytes of each."""
    l1_tag = np.full((n_blocks, l1_sets, l1_ways), -1, dtype=np.int64)
    l1_valid = np.zeros((n_blocks, l1_sets, l1_ways), dtype=np.uint8)
    l1_age = np.zeros((n_blocks, l1_sets, l1_ways), dtype=np.int64)
    l2_tag = np.full((l2_sets, l2_ways), -1, dtype=np.int64)
    l2_valid = np.zeros((l2_sets, l2_ways), dtype=np.uint8)
    l2_dirty = np.zeros((l2_sets, l2_ways, 4), dtype=np.uint32)
    l2_age = np.zeros((l2_sets, l2_ways), dtype=np.int64)
    seen = dict()
    seen[np.int64(-1)] = np.uint8(0)
    clock = 0
    for k in range(req_order.shape[0]):
        if k == flush_at:
            l2_tag[:] = -1
            l2_valid[:] = 0
            l2_dirty[:] = 0
        r = req_order[k]
        blk = req_block[r]
        kind = req_kind[r]
        for e in range(entry_start[r], entry_start[r + 1]):
            clock += 1
            line = entry_line[e]
            want = np.uint8(entry_sectors[e])
            miss = want
            if kind == 0 and l1_sets > 0:
                s1 = _hash_set(line, l1_sets)
                way = -1
                for w in range(l1_ways):
                    if l1_tag[blk, s1, w] == line:
                        way = w
                        break
                if way < 0:
                    # an empty way if there is one, else a pseudo-random victim (measured: misses
                    # fade in beyond the capacity instead of all at once, as LRU would have them)
                    for w in range(l1_ways):
                        if l1_tag[blk, s1, w] == -1:
                            way = w
                            break
                    if way < 0:
                        way = np.int64((np.uint64(clock) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) % l1_ways
                    l1_tag[blk, s1, way] = line
                    l1_valid[blk, s1, way] = 0
                hit = want & l1_valid[blk, s1, way]
                miss = want & ~hit
                l1_valid[blk, s1, way] |= want
                l1_age[blk, s1, way] = clock
                for q in range(4):
                    if hit >> q & 1:
                        out_l1[r] += 1
            if miss == 0:
                continue
            known = seen.get(line, np.uint8(0))
            seen[line] = np.uint8(known | miss)
            s2 = _hash_set(line, l2_sets)
            way = -1
            for w in range(l2_ways):
                if l2_tag[s2, w] == line:
                    way = w
                    break
            if way < 0:
                # an empty way if there is one, else a pseudo-random victim: the L2 ring measured
                # with one thread keeps hitting past its capacity (25 MB near, 50 MB with the far
                # partition), as a cyclic sweep through an LRU cache would not
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
            l2_age[s2, way] = clock
            valid = l2_valid[s2, way]
            before = valid                           # what the line held before this request
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
                if covered:
                    out_l2[r] += 1
                else:
                    cold = not (known >> q & 1)
                    fetched = np.uint8(1 << q)
                    if fetch_pairs:
                        fetched |= np.uint8(1 << (q ^ 1))
                    moved = 0
                    for p in range(4):
                        if (fetched >> p & 1) and not (valid >> p & 1):
                            moved += 32
                    if cold:
                        out_cold[r] += 1
                        out_cold_bytes[r] += moved
                    else:
                        out_again[r] += 1
                        out_again_bytes[r] += moved
                    valid |= fetched
                if kind == 3:
                    l2_dirty[s2, way, q] |= entry_bytes[e, q]
            l2_valid[s2, way] = valid


def cache_config(profile: object, resident_blocks: int, shared_bytes_per_block: int) -> CacheConfig:
    """The caches a launch sees on ``profile``'s GPU at ``resident_blocks`` per SM."""
    device = profile.device
    total = int(getattr(device, "l1_cache_bytes", None) or 0)
    reserved = int(getattr(device, "reserved_shared_memory_per_block", 1024) or 0)
    used = resident_blocks * (shared_bytes_per_block + reserved if shared_bytes_per_block else 0)
    carveouts = [c for c in getattr(device, "shared_memory_carveouts", ()) or () if c >= used]
    carved = min(carveouts) if carveouts else used          # the driver's smallest carve-out that fits
    l1 = max(0, total - carved - L1_UNAVAILABLE_BYTES) // max(1, resident_blocks)
    l2 = int((getattr(device, "l2_cache_bytes", None) or 0) * L2_EFFECTIVE_SHARE)
    wave = int(getattr(device, "sm_count", 0) or 0) * max(1, resident_blocks)
    return CacheConfig(l1_bytes_per_block=l1, l2_bytes=l2, wave_blocks=wave)


_DEBUG = bool(os.environ.get("WARPLINE_DEBUG_CACHES"))     # per-buffer extrapolation on stdout
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
    by_linear = {sample.linear[b]: b for b in sets if sample.role[b] != "spread"}
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





def reuse_distance(buffer: int, footprints: dict[int, BufferFootprint], rates: dict[int, float]) -> float:
    """Distinct sectors the kernel touches between two reads of one sector of ``buffer``, its
    reads spread evenly over the launch: while the buffer's footprint comes round once, every
    other buffer moves its own rate's worth (at most its footprint)."""
    own = footprints[buffer]
    rate = rates.get(buffer, 0.0)
    if rate <= 0:
        return own.sectors
    period = own.sectors / rate                        # blocks' worth of time to read it all once
    return sum(min(f.sectors, rates.get(b, 0.0) * period) if b != buffer else f.sectors
               for b, f in footprints.items())


def simulate_caches(execution: Execution, config: CacheConfig, gathers: frozenset[int] = frozenset()
                    ) -> CacheResult:
    """Replays the sampled requests (the blocks a row before the window first, then the window, in
    issue order) and extrapolates the DRAM traffic to the grid (:func:`grid_footprint`).
    ``gathers``: instructions whose addresses come from loaded data: their buffers are re-read
    at random over the launch, not by the blocks just before."""
    result = CacheResult(config=config)
    sample = execution.sample
    log = execution.log
    if sample is None or not log or not len(log["request_instruction"]):
        return result
    instr = log["request_instruction"].astype(np.int64)
    block = log["request_block"].astype(np.int64)
    kind = log["request_kind"].astype(np.int64)
    n_req = len(instr)
    role = np.array(sample.role)
    measured = np.array(sample.measured, dtype=bool)
    in_before = role[block] == "before"
    in_window = role[block] == "window"
    before_order = np.flatnonzero(in_before)
    grid = execution.grid or (sample.grid_blocks, 1, 1)
    row = grid[0] if grid[1] > 1 else grid[0] * grid[1]
    if len(before_order) and config.wave_blocks and row < config.wave_blocks:
        # the row before runs in the same wave as the window: their requests interleave, as the
        # run issued them (a panel the rows share is fetched once for all of them)
        order = np.flatnonzero(in_before | in_window).astype(np.int64)
        before_order = before_order[:0]
    else:
        order = np.concatenate([before_order, np.flatnonzero(in_window)]).astype(np.int64)
    entry_request = log["entry_request"]
    starts = np.searchsorted(entry_request, np.arange(n_req + 1)).astype(np.int64)
    entry_owner = np.repeat(np.arange(n_req), np.diff(starts))
    lines, masks = log["entry_line"], log["entry_sectors"].astype(np.int64)
    G = sample.grid_blocks
    # the footprint of every buffer over the grid, from every executed block's sets
    buffers = lines >> BUFFER_LINE_SHIFT
    read_entry = np.isin(kind[entry_owner], (LOAD_CACHED, LOAD_UNCACHED, ATOMIC))
    # footprints in the sectors DRAM moves: with 64-byte fetches a sector brings its pair, asked
    # for or not, so a first touch of one sector is two sectors of data (the cold bytes' unit)
    fetch_pairs = config.dram_fetch_bytes >= 2 * SECTOR
    fetched = (masks | ((masks & 0b0101) << 1) | ((masks & 0b1010) >> 1)) if fetch_pairs else masks
    footprints: dict[int, BufferFootprint] = {}
    gathered = np.isin(instr[entry_owner], list(gathers)) if gathers else np.zeros(len(lines), dtype=bool)
    for b in np.unique(buffers[read_entry]).tolist():
        sel = read_entry & (buffers == b)
        fp = grid_footprint(execution, grid, b, lines[sel], fetched[sel], block[entry_owner[sel]])
        footprints[b] = replace(fp, scattered=bool(gathered[sel].any()))
    result.footprints = footprints
    # a row of blocks between the row before and the window moves this many bytes through L2
    flush_at = -1
    if len(before_order):
        per_block_bytes = sum(f.sectors for f in footprints.values()) * SECTOR / max(G, 1)
        if row * per_block_bytes > config.l2_bytes:
            flush_at = len(before_order)
    l1_lines = config.l1_bytes_per_block // LINE
    l1_sets = max(0, l1_lines // config.l1_ways)
    l2_sets = max(1, config.l2_bytes // LINE // config.l2_ways)
    out = {k: np.zeros(n_req, dtype=np.int64) for k in ("l1", "l2", "cold", "again", "cold_b", "again_b")}
    _replay(block, kind, order, flush_at, starts, lines, log["entry_sectors"], log["entry_bytes"],
            sample.blocks, l1_sets, config.l1_ways, l2_sets, config.l2_ways,
            fetch_pairs, out["l1"], out["l2"], out["cold"], out["again"],
            out["cold_b"], out["again_b"])
    chosen = measured[block]
    n_measured = int(measured.sum())
    sectors = np.bincount(entry_owner, weights=_popcount4(log["entry_sectors"]), minlength=n_req)
    # cold misses beyond what the grid's footprint allows are data earlier blocks brought in
    request_buffer = np.full(n_req, -1, dtype=np.int64)
    request_buffer[entry_owner] = buffers
    keep = np.ones(n_req, dtype=np.float64)
    plane = grid[0] * grid[1] if grid[2] > 1 else grid[0] if grid[1] > 1 else 1
    fetched_sectors = np.bincount(entry_owner, weights=_popcount4(fetched), minlength=n_req)   # footprint units
    rates = {b: float(fetched_sectors[chosen & (request_buffer == b)].sum()) / max(1, n_measured)
             for b in footprints}
    for b, fp in footprints.items():
        sel = chosen & (request_buffer == b)
        # sectors of data the first touches moved (a 64-byte fetch brings a sector's pair): the
        # unit the footprint counts, so a pair fetched once is not taken for two first touches
        cold = float(out["cold_b"][sel].sum()) / SECTOR
        if cold <= 0:
            continue
        # of the sample's first touches, the grid's first touches are the footprint's share; the
        # rest re-read data unsampled blocks brought in, which L2 still holds if what the kernel
        # touches while the buffer comes round again fits (reuse_distance)
        compulsory = min(1.0, fp.sectors * n_measured / max(G, 1) / cold)
        if fp.scattered:
            distance = reuse_distance(b, footprints, rates)
        else:
            # re-read from a neighbour the sample did not run: the one a plane (or row) before
            distance = plane * sum(f.sectors for f in footprints.values()) / max(G, 1)
        kept = min(1.0, config.l2_bytes / max(SECTOR * distance, 1.0))
        keep[request_buffer == b] = compulsory + (1.0 - compulsory) * (1.0 - kept)
        if _DEBUG:
            print("buffer", b, "cold", cold, "F", fp.sectors, "q", compulsory, "scattered", fp.scattered,
                  "distance", distance, "kept", kept, "rate", rates.get(b))
    if _DEBUG:
        for b in footprints:
            sel = chosen & (request_buffer == b)
            print("buffer", b, {k: float(v[sel].sum()) for k, v in out.items()})
    cold_kept = out["cold"] * keep
    dram = cold_kept + out["again"]
    dram_bytes = out["cold_b"] * keep + out["again_b"]
    l2 = out["l2"] + out["cold"] - cold_kept
    # every sector of the grid's footprint comes from DRAM once: the measured blocks pay their
    # share of it even where blocks outside the measured part fetched it first in the replay
    # (blocks of one wave share a panel: whichever asks first misses, and the run asks in turn)
    for b, fp in footprints.items():
        sel = chosen & (request_buffer == b) & np.isin(kind, (LOAD_CACHED, LOAD_UNCACHED, ATOMIC))
        share = fp.sectors * n_measured / max(G, 1)
        have = float(dram_bytes[sel].sum()) / SECTOR       # sectors of data moved, as the footprint
        served_by_l2 = float(l2[sel].sum())
        if have >= share or served_by_l2 <= 0:
            continue
        moved = min(share - have, served_by_l2)
        fraction = moved / served_by_l2
        dram[sel] += l2[sel] * fraction
        dram_bytes[sel] += l2[sel] * fraction * float(SECTOR)
        l2[sel] -= l2[sel] * fraction
    for index in np.unique(instr[chosen]).tolist():
        sel = chosen & (instr == index)
        total = float(sectors[sel].sum())
        result.requests[index] = int(sel.sum())
        result.sectors[index] = int(total)
        if total <= 0:
            continue
        result.l1_share[index] = float(out["l1"][sel].sum()) / total
        result.dram_share[index] = min(1.0 - result.l1_share[index], float(dram[sel].sum()) / total)
        result.l2_share[index] = max(0.0, 1.0 - result.l1_share[index] - result.dram_share[index])
        result.dram_read_per_request[index] = float(dram_bytes[sel].sum()) / max(1, int(sel.sum()))
    result.measured_blocks = n_measured
    result.dram_read_bytes = float(dram_bytes[chosen].sum())
    loads_l1 = chosen & (kind == LOAD_CACHED)
    result.l1_sector_accesses = int(sectors[loads_l1].sum())
    result.l1_sector_hits = int(out["l1"][loads_l1].sum())
    result.l2_sector_accesses = int((l2[chosen] + dram[chosen]).sum())
    result.l2_sector_hits = int(l2[chosen].sum())
    stored = chosen & ((kind == STORE) | (kind == ATOMIC))
    result.store_sector_bytes = float(sectors[stored].sum()) * SECTOR
    if stored.any():
        loads = np.isin(kind[entry_owner], (LOAD_CACHED, LOAD_UNCACHED, ATOMIC))
        read_sectors = np.unique(np.concatenate([lines[loads] * 4 + q for q in range(4)]
                                                )[np.concatenate([(masks[loads] >> q & 1).astype(bool)
                                                                  for q in range(4)])])
        dirty, fills = _dirty_bytes(log, starts, stored, read_sectors)
        written_sel = np.isin(kind[entry_owner], (STORE, ATOMIC))
        cap = 0.0
        for b in np.unique(buffers[written_sel]).tolist():
            sel = written_sel & (buffers == b)
            cap += grid_footprint(execution, grid, b, lines[sel], masks[sel], block[entry_owner[sel]]).sectors
        scale = G / max(1, n_measured)
        if dirty * scale > cap * SECTOR > 0:
            ratio = cap * SECTOR / (dirty * scale)
            dirty, fills = dirty * ratio, fills * ratio
        result.dirty_bytes, result.fill_bytes = dirty, fills
    return result


def _popcount4(bits: np.ndarray) -> np.ndarray:
    b = bits.astype(np.int64)
    return (b & 1) + (b >> 1 & 1) + (b >> 2 & 1) + (b >> 3 & 1)


def _dirty_bytes(log: dict[str, np.ndarray], starts: np.ndarray, stored: np.ndarray,
                 read_sectors: np.ndarray | None = None) -> tuple[float, float]:
    """Distinct 32-byte sectors the ``stored`` requests write, and those only partly written
    (L2 reads them from DRAM before writing them back)."""
    rows = np.flatnonzero(stored)
    if not len(rows):
        return 0.0, 0.0
    lengths = starts[rows + 1] - starts[rows]
    offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    entries = np.repeat(starts[rows], lengths) + offsets
    lines = log["entry_line"][entries]
    masks = log["entry_bytes"][entries]
    keys = np.concatenate([lines * 4 + q for q in range(4)])
    written = np.concatenate([masks[:, q] for q in range(4)]).astype(np.uint64)
    present = written != 0
    keys, written = keys[present], written[present]
    if not len(keys):
        return 0.0, 0.0
    order = np.argsort(keys, kind="stable")
    keys, written = keys[order], written[order]
    first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    merged = np.bitwise_or.reduceat(written, first)
    partial = merged != np.uint64(0xFFFFFFFF)
    if read_sectors is not None and partial.any():
        # a sector the kernel also reads is in L2 already: writing part of it needs no fill
        partial &= ~np.isin(keys[first], read_sectors)
    return float(len(first) * SECTOR), float(int(partial.sum()) * SECTOR)


@dataclass(frozen=True)
class LaunchTraffic:
    """DRAM bytes of the whole launch, extrapolated from the measured blocks."""

    dram_read_bytes: float
    dram_write_bytes: float
    l2_hit_rate: float | None
    l1_hit_rate: float | None
    scale: float            # launch blocks / measured blocks


def launch_traffic(result: CacheResult, grid_blocks: int, retained_dirty_bytes: float) -> LaunchTraffic:
    """The launch's DRAM traffic during the kernel: the measured blocks' reads and written bytes
    times the blocks they stand for; written data reaches DRAM only beyond what L2 keeps dirty
    when the kernel ends (``retained_dirty_bytes``, measured per GPU), partly written sectors
    first read from DRAM."""
    scale = grid_blocks / max(1, result.measured_blocks)
    dirty = result.dirty_bytes * scale
    written = max(0.0, dirty - retained_dirty_bytes)
    share = written / dirty if dirty > 0 else 0.0
    reads = result.dram_read_bytes * scale + result.fill_bytes * scale * share
    return LaunchTraffic(reads, written, result.l2_hit_rate, result.l1_hit_rate, scale)


@dataclass(frozen=True)
class SimulatedLevels:
    """The cache simulation as the cost and traffic models read it: per executed access the
    shares of its sectors each level serves and its DRAM bytes per request, and the launch's
    DRAM traffic."""

    caches: CacheResult
    traffic: LaunchTraffic

    def shares(self, index: int) -> tuple[float, float, float] | None:
        c = self.caches
        if index not in c.l1_share:
            return None
        return c.l1_share[index], c.l2_share[index], c.dram_share[index]

    @property
    def written_share(self) -> float:
        """Share of the sectors stores send to L2 that L2 writes to DRAM while the kernel runs:
        what reaches DRAM is the distinct dirty data beyond what L2 keeps, however many stores
        wrote each sector."""
        sent = self.caches.store_sector_bytes * self.traffic.scale
        return min(1.0, self.traffic.dram_write_bytes / sent) if sent > 0 else 0.0

    @property
    def fill_factor(self) -> float:
        """DRAM bytes per byte written back: a partly written sector is read before it is written."""
        written = self.traffic.dram_write_bytes
        if written <= 0:
            return 1.0
        dirty = self.caches.dirty_bytes * self.traffic.scale
        fills = self.caches.fill_bytes * self.traffic.scale * (written / dirty if dirty > 0 else 0.0)
        return 1.0 + fills / written

    def dram_bytes_per_request(self, index: int) -> float | None:
        return self.caches.dram_read_per_request.get(index)

    def fetch_factor(self, index: int) -> float:
        """DRAM bytes read per 32 bytes of the access's sectors DRAM serves (2 for a lone sector
        of a 64-byte fetch, 1 when both halves are wanted)."""
        c = self.caches
        requests, sectors = c.requests.get(index, 0), c.sectors.get(index, 0)
        dram = c.dram_share.get(index, 0.0) * sectors
        if not requests or dram <= 0:
            return 1.0
        return max(1.0, c.dram_read_per_request.get(index, 0.0) * requests / (SECTOR * dram))


def simulated_levels(execution: Execution, profile: object, resident_blocks: int,
                     shared_bytes_per_block: int, gathers: frozenset[int] = frozenset()) -> SimulatedLevels | None:
    """The simulation at this occupancy, kept on the execution (an edit of a latency reuses it).
    ``gathers``: instructions whose addresses come from loaded data (:func:`simulate_caches`)."""
    if not execution.ok:
        return None
    config = cache_config(profile, resident_blocks, shared_bytes_per_block)
    memo = execution.memo.setdefault("caches", {})
    result = memo.get((config, gathers))
    if result is None:
        result = memo[(config, gathers)] = simulate_caches(execution, config, gathers)
    memory = getattr(getattr(profile, "pipeline", None), "memory", {}) or {}
    sample = execution.sample
    assert sample is not None
    alone = float(memory.get("l2_dirty_bytes", 0.0) or 0.0)
    streaming = float(memory.get("l2_dirty_bytes_streaming", alone) or alone)
    first = launch_traffic(result, sample.grid_blocks, alone)
    # L2 keeps less dirty data when reads share it: measured with stores alone and with as many
    # reads as stores, straight between the two, and down to none when reads are all the traffic
    dirty = result.dirty_bytes * first.scale
    read_share = first.dram_read_bytes / (first.dram_read_bytes + dirty) if dirty > 0 else 0.0
    if read_share <= 0.5:
        retained = alone + (streaming - alone) * 2.0 * read_share
    else:
        retained = streaming * (1.0 - read_share) * 2.0
    return SimulatedLevels(result, launch_traffic(result, sample.grid_blocks, retained))
