"""The cache simulation's steps: the requests' replay order and buffers' footprints, the replay,
the extrapolation of first touches to the grid, and the per-instruction shares and launch sums
(:func:`simulate_caches`); the DRAM traffic of a whole launch (:func:`launch_traffic`,
:func:`simulated_levels`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from engine.caches.buffer_footprints import BUFFER_LINE_SHIFT, BufferFootprint, grid_footprint, reuse_distance
from engine.caches.replay import replay_requests
from engine.execution import Execution
from engine.execution.issue_order import issue_order

SECTOR = 32
LINE = 128
DRAM_FETCH_BYTES = 64           # DRAM reads 64 bytes at a time: a missing sector brings its neighbour
L2_EFFECTIVE_SHARE = 0.5        # data shared by every SM occupies both L2 partitions (measured, see docs)
L1_WAYS = 16
L2_WAYS = 16
# The L2 room a sector takes, against one that every SM reads (held in both partitions, the
# capacity above: 1). Measured with random 4-byte accesses to buffers of 8-96 MB from every SM
# (bench/micro/l2_kinds.cu, results h100-2026-11-28-l2-kinds-schedulers): data each SM reads
# alone keeps hitting to about 37 MB (80 % hits at 48 MB, 56 % at 64), where lines every SM reads
# start missing at 24 MB: 25 / 37 of a room. (Atomics and stores keep hitting to about 45 MB,
# but a written sector that misses costs 64 bytes read and 96-105 bytes written back there, more
# than the write-back below counts: with their room at 25 / 45, random scatters' DRAM bytes fell
# further below the measurement, so written data keeps a whole room until write-backs are right.)
L2_ROOM_PRIVATE = 0.67
# measured (bench/micro/results/h200-2026-11-28-l1-carveout: a single thread chasing a ring through
# L1 in blocks of 0-227 KB dynamic shared memory): the driver carves the smallest option that
# holds the blocks the SM can run (1-thread blocks of 8-100 KB: 228 KB; 120 KB: 132; 140-160 KB:
# 164; 180 KB: 196), and every load hits up to 256 KB - carve-out - 12 KB (112, 80, 48, 16 KB),
# with no shared memory up to 216 KB (as with a 28 KB carve-out: the least the array keeps).
# Misses fade in beyond that (the victim is not the least recently used line), and lines 4, 16
# or 64 KB apart never conflict (the set index is hashed; h100-2026-11-27-geometry-call{1,2}).
L1_UNAVAILABLE_BYTES = 12 * 1024
L1_LEAST_CARVEOUT_BYTES = 28 * 1024
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
    # gathers whose blocks read over most of their buffer (its footprint re-read at random): the
    # instructions whose DRAM fetches land at random places
    random_gathers: frozenset[int] = frozenset()
    # per instruction, the share of its sectors on data other blocks read too (lines every SM
    # reads reach the SMs faster: the profile's l2_shared_read_gain)
    shared_share: dict[int, float] = field(default_factory=dict)
    # per load instruction, the shares of its sectors that hit L1 on a fill still under way
    # (replay_requests' waiting sectors): (fill from L2, fill from DRAM)
    l1_waiting_share: dict[int, tuple[float, float]] = field(default_factory=dict)

    @property
    def l2_hit_rate(self) -> float | None:
        return self.l2_sector_hits / self.l2_sector_accesses if self.l2_sector_accesses else None

    @property
    def l1_hit_rate(self) -> float | None:
        return self.l1_sector_hits / self.l1_sector_accesses if self.l1_sector_accesses else None


def l1_data_bytes(device: Any, resident_blocks: int, shared_bytes_per_block: int) -> int:
    """The L1 data an SM keeps beside ``resident_blocks`` blocks of ``shared_bytes_per_block``
    shared memory (each with the driver's reserve): the unified array less the driver's smallest
    carve-out that holds them (never below the least one) and the part that is no L1 data (see
    L1_UNAVAILABLE_BYTES)."""
    total = int(getattr(device, "l1_cache_bytes", None) or 0)
    reserved = int(getattr(device, "reserved_shared_memory_per_block", 1024) or 0)
    used = resident_blocks * (shared_bytes_per_block + reserved if shared_bytes_per_block else 0)
    carveouts = [c for c in getattr(device, "shared_memory_carveouts", ()) or () if c >= used]
    carved = min(carveouts) if carveouts else used
    return max(0, total - max(carved, L1_LEAST_CARVEOUT_BYTES) - L1_UNAVAILABLE_BYTES)


def cache_config(profile: Any, resident_blocks: int, shared_bytes_per_block: int) -> CacheConfig:
    """The caches a launch sees on ``profile``'s GPU at ``resident_blocks`` per SM."""
    device = profile.device
    l1 = l1_data_bytes(device, resident_blocks, shared_bytes_per_block) // max(1, resident_blocks)
    l2 = int((getattr(device, "l2_cache_bytes", None) or 0) * L2_EFFECTIVE_SHARE)
    wave = int(getattr(device, "sm_count", 0) or 0) * max(1, resident_blocks)
    return CacheConfig(l1_bytes_per_block=l1, l2_bytes=l2, wave_blocks=wave)


_DEBUG = bool(os.environ.get("WARPLINE_DEBUG_CACHES"))     # per-buffer extrapolation on stdout
@dataclass
class _Requests:
    """The sampled requests as arrays: per request its instruction, block and kind; per entry (a
    128-byte line one request touches) its request (``owner``), line, sector mask, buffer, and the
    sectors DRAM moves for it (``fetched``: with 64-byte fetches a sector brings its pair).
    Request ``r``'s entries are ``starts[r]:starts[r + 1]``."""

    instr: np.ndarray
    block: np.ndarray
    kind: np.ndarray
    starts: np.ndarray
    owner: np.ndarray
    lines: np.ndarray
    masks: np.ndarray
    buffers: np.ndarray
    fetched: np.ndarray
    fetch_pairs: bool

    @property
    def reads(self) -> np.ndarray:
        """Entries of loads and atomics (what brings data in)."""
        return np.isin(self.kind[self.owner], (LOAD_CACHED, LOAD_UNCACHED, ATOMIC))


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
    req = _requests(log, config)
    grid = execution.grid or (sample.grid_blocks, 1, 1)
    row = grid[0] if grid[1] > 1 else grid[0] * grid[1]
    order, n_before = _replay_order(sample, log, req.block, row, config)
    result.footprints = footprints = _footprints(execution, grid, req, gathers)
    private = {b: _private_share(fp, sample.grid_blocks) for b, fp in footprints.items()}
    rooms = _l2_rooms(req, private)
    out = _replay(sample, log, req, order, _flush_at(n_before, row, footprints, sample.grid_blocks, config),
                  config, _concurrency(footprints, rooms, sample.grid_blocks, config))
    chosen = np.array(sample.measured, dtype=bool)[req.block]
    n_measured = int(np.array(sample.measured, dtype=bool).sum())
    request_buffer = np.full(len(req.instr), -1, dtype=np.int64)
    request_buffer[req.owner] = req.buffers
    random_buffers = [b for b, fp in footprints.items() if fp.scattered]
    if random_buffers and gathers:
        result.random_gathers = frozenset(
            int(i) for i in np.unique(req.instr[np.isin(request_buffer, random_buffers)]) if int(i) in gathers)
    plane = grid[0] * grid[1] if grid[2] > 1 else grid[0] if grid[1] > 1 else 1
    rates = _read_rates(req, chosen, request_buffer, footprints, n_measured)
    worth = _measured_worth(req, footprints, np.array(sample.measured, dtype=bool), sample.blocks)
    keep, rehit = _kept_first_touches(req, out, footprints, chosen, request_buffer, rates, rooms, worth,
                                      sample.grid_blocks, plane, config)
    l2, dram, dram_bytes = _levels(req, out, keep, rehit, footprints, chosen, request_buffer, worth,
                                   sample.grid_blocks)
    sectors = np.bincount(req.owner, weights=_popcount4(log["entry_sectors"]), minlength=len(req.instr))
    shared = np.zeros(len(req.instr), dtype=np.float64)        # per request: its buffer's shared share
    for b, share in private.items():
        shared[request_buffer == b] = 1.0 - share
    _per_instruction(result, req, chosen, sectors, out["l1"], dram, dram_bytes, shared, out["waiting"])
    result.measured_blocks = n_measured
    result.dram_read_bytes = float(dram_bytes[chosen].sum())
    loads_l1 = chosen & (req.kind == LOAD_CACHED)
    result.l1_sector_accesses = int(sectors[loads_l1].sum())
    result.l1_sector_hits = int(out["l1"][loads_l1].sum())
    result.l2_sector_accesses = int((l2[chosen] + dram[chosen]).sum())
    result.l2_sector_hits = int(l2[chosen].sum())
    stored = chosen & ((req.kind == STORE) | (req.kind == ATOMIC))
    result.store_sector_bytes = float(sectors[stored].sum()) * SECTOR
    if stored.any():
        result.dirty_bytes, result.fill_bytes = _written_back(
            execution, grid, log, req, stored, n_measured, sample.grid_blocks,
            _RandomRewrites(footprints, rates, request_buffer, gathers, config.l2_bytes, rooms))
    return result


# A request over at least this many lines can tell a random placement from a strided one
PLACEMENT_LINES = 8
# ... and the instruction's requests are random where the gaps between their sorted lines vary
# this much (coefficient of variation): lines at a stride have equal gaps (0), lines drawn at
# random over a buffer gaps about as spread as they are large (1)
RANDOM_GAP_VARIATION = 0.5
PLACEMENT_REQUESTS = 256          # requests looked at per instruction, at most


def randomly_placed(execution: Execution, candidates: frozenset[int]) -> frozenset[int]:
    """Of ``candidates`` (instructions whose lanes' addresses are not affine but come from no
    loaded index: hashed, wrapped, divided), those whose requests land on lines at random: over
    the run's requests of eight lines or more, the median variation of the gaps between a
    request's sorted lines is at least RANDOM_GAP_VARIATION. A column read through ``i / n`` or
    ``i % n`` has equal gaps; a hash table probe does not."""
    log = execution.log
    if not candidates or not log or not len(log.get("request_instruction", ())):
        return frozenset()
    instr = log["request_instruction"].astype(np.int64)
    starts = _request_starts(log)
    sizes = np.diff(starts)
    lines = log["entry_line"]
    found: set[int] = set()
    for i in sorted(candidates):
        wide = np.flatnonzero((instr == i) & (sizes >= PLACEMENT_LINES))[:PLACEMENT_REQUESTS]
        variations = []
        for r in wide.tolist():
            gaps = np.diff(np.unique(lines[starts[r]:starts[r + 1]])).astype(np.float64)
            if len(gaps) >= PLACEMENT_LINES - 1 and gaps.mean() > 0:
                variations.append(float(gaps.std() / gaps.mean()))
        if variations and float(np.median(variations)) >= RANDOM_GAP_VARIATION:
            found.add(i)
    return frozenset(found)


def _request_starts(log: dict[str, np.ndarray]) -> np.ndarray:
    """Per request of the log, where its entries start (request ``r``'s are ``starts[r]:starts[r + 1]``)."""
    return np.searchsorted(log["entry_request"], np.arange(len(log["request_instruction"]) + 1)).astype(np.int64)


def _requests(log: dict[str, np.ndarray], config: CacheConfig) -> _Requests:
    """The execution's request log as :class:`_Requests`."""
    starts = _request_starts(log)
    lines, masks = log["entry_line"], log["entry_sectors"].astype(np.int64)
    # footprints in the sectors DRAM moves: with 64-byte fetches a sector brings its pair, asked
    # for or not, so a first touch of one sector is two sectors of data (the cold bytes' unit)
    fetch_pairs = config.dram_fetch_bytes >= 2 * SECTOR
    return _Requests(
        instr=log["request_instruction"].astype(np.int64), block=log["request_block"].astype(np.int64),
        kind=log["request_kind"].astype(np.int64), starts=starts,
        owner=np.repeat(np.arange(len(starts) - 1), np.diff(starts)), lines=lines, masks=masks,
        buffers=lines >> BUFFER_LINE_SHIFT,
        fetched=(masks | ((masks & 0b0101) << 1) | ((masks & 0b1010) >> 1)) if fetch_pairs else masks,
        fetch_pairs=fetch_pairs)


def _replay_order(sample: Any, log: dict[str, np.ndarray], block: np.ndarray, row: int, config: CacheConfig
                  ) -> tuple[np.ndarray, int]:
    """The requests in replay order (:func:`engine.execution.issue_order.issue_order`), and how
    many of them come first from the row before the window (0 where that row and the window
    are replayed interleaved)."""
    role = np.array(sample.role)
    in_before = role[block] == "before"
    in_window = role[block] == "window"
    selected = np.flatnonzero(in_before | in_window)
    n_before = int(in_before.sum())
    if n_before and config.wave_blocks and row < config.wave_blocks:
        # the row before runs in the same wave as the window: their requests interleave, as the
        # run issued them (a panel the rows share is fetched once for all of them)
        return issue_order(log, selected), 0
    return issue_order(log, selected, part=in_window[selected].astype(np.int64)), n_before


def _footprints(execution: Execution, grid: tuple[int, int, int], req: _Requests,
                gathers: frozenset[int]) -> dict[int, BufferFootprint]:
    """The footprint of every buffer read over the grid, from every executed block's sets."""
    read_entry = req.reads
    gathered = np.isin(req.instr[req.owner], list(gathers)) if gathers else np.zeros(len(req.lines), dtype=bool)
    footprints: dict[int, BufferFootprint] = {}
    for b in np.unique(req.buffers[read_entry]).tolist():
        sel = read_entry & (req.buffers == b)
        fp = grid_footprint(execution, grid, b, req.lines[sel], req.fetched[sel], req.block[req.owner[sel]])
        far = sel & gathered
        footprints[b] = replace(fp, scattered=bool(far.any())
                                and _reads_range_widely(req.lines[far], req.block[req.owner[far]]))
    return footprints


# a gather whose blocks each read over at least this share of the range the sample reads is
# taken as random; one whose blocks read narrow ranges (neighbour cells, a banded matrix's x) is
# re-read by blocks near in launch order, as a stencil is
WIDE_GATHER_SHARE = 0.5


def _reads_range_widely(lines: np.ndarray, blocks: np.ndarray) -> bool:
    """Whether the blocks' gathered lines range over most of the buffer the sample reads (the
    median block's span of lines against the whole sample's)."""
    if len(lines) < 2:
        return True
    whole = float(lines.max() - lines.min())
    if whole <= 0:
        return True
    order = np.argsort(blocks, kind="stable")
    blocks, lines = blocks[order], lines[order]
    bounds = np.flatnonzero(np.r_[True, blocks[1:] != blocks[:-1], True])
    spans = np.maximum.reduceat(lines, bounds[:-1]) - np.minimum.reduceat(lines, bounds[:-1])
    return float(np.median(spans)) >= WIDE_GATHER_SHARE * whole


def _flush_at(n_before: int, row: int, footprints: dict[int, BufferFootprint], grid_blocks: int,
              config: CacheConfig) -> int:
    """Where the replay empties L2 (-1: nowhere): after the row before when a row of blocks
    between it and the window moves more bytes through L2 than it holds."""
    if n_before:
        per_block_bytes = sum(f.sectors for f in footprints.values()) * SECTOR / max(grid_blocks, 1)
        if row * per_block_bytes > config.l2_bytes:
            return n_before
    return -1


def _private_share(footprint: BufferFootprint, grid_blocks: int) -> float:
    """The share of a block's sectors of a buffer that no other block reads: the grid's footprint
    over the blocks' summed sets (a row softmax's rows: 1; a GEMM's panels, read by a row and a
    column of blocks: little)."""
    if footprint.per_block <= 0:
        return 0.0
    return min(1.0, footprint.sectors / (max(grid_blocks, 1) * footprint.per_block))


def _l2_rooms(req: _Requests, private: dict[int, float]) -> dict[int, float]:
    """Per buffer, the L2 room one of its sectors takes against one every SM reads: for a buffer
    loads read, its share of data one SM reads alone (``private``, :func:`_private_share`) takes
    L2_ROOM_PRIVATE, the rest (others read it too) 1; a buffer only atomics touch is written data,
    a whole room (see L2_ROOM_PRIVATE)."""
    loaded = set(np.unique(req.buffers[np.isin(req.kind[req.owner], (LOAD_CACHED, LOAD_UNCACHED))]).tolist())
    return {b: (share * L2_ROOM_PRIVATE + 1.0 - share) if b in loaded else 1.0 for b, share in private.items()}


def _concurrency(footprints: dict[int, BufferFootprint], rooms: dict[int, float], grid_blocks: int,
                 config: CacheConfig) -> float:
    """How many blocks' worth of L2 room is taken while one block allocates a line: the blocks
    the GPU runs at once, the others counted by the share of a block's data no other block reads
    (:func:`_private_share`), each line by the room its data takes (:func:`_l2_rooms`). 0:
    nothing runs beside it."""
    at_once = min(config.wave_blocks, grid_blocks)
    per_block = sum(f.per_block for f in footprints.values())
    if at_once <= 1 or per_block <= 0:
        return 0.0
    private = min(1.0, sum(f.sectors for f in footprints.values()) / (grid_blocks * per_block))
    room = sum(rooms.get(b, 1.0) * f.per_block for b, f in footprints.items()) / per_block
    return (1.0 + (at_once - 1) * private) * room


def _replay(sample: Any, log: dict[str, np.ndarray], req: _Requests, order: np.ndarray, flush_at: int,
            config: CacheConfig, concurrency: float) -> dict[str, np.ndarray]:
    """Per request, the sectors L1 and L2 served and the DRAM sectors and bytes of first touches
    (cold) and of data read again after an eviction (again), from the compiled replay; and the
    expected sectors of its L2 hits on its own block's lines that the blocks running beside it
    would have evicted (lost)."""
    l1_lines = config.l1_bytes_per_block // LINE
    l1_sets = max(0, l1_lines // config.l1_ways)
    l2_sets = max(1, config.l2_bytes // LINE // config.l2_ways)
    n_req = len(req.instr)
    out = {k: np.zeros(n_req, dtype=np.int64) for k in ("l1", "l2", "cold", "again", "cold_b", "again_b")}
    out["lost"] = np.zeros(n_req, dtype=np.float64)
    out["waiting"] = np.zeros((n_req, 2), dtype=np.int64)
    segments, warps = _segments(log), _warps(log)
    replay_requests(req.block, req.kind, segments, warps, order, flush_at, req.starts, req.lines,
                    log["entry_sectors"], log["entry_bytes"], sample.blocks, l1_sets, config.l1_ways, l2_sets,
                    config.l2_ways, req.fetch_pairs, out["l1"], out["l2"], out["cold"], out["again"],
                    out["cold_b"], out["again_b"], concurrency, out["lost"], out["waiting"])
    _wait_for_own_misses(segments, warps, req, out)
    return out


def _wait_for_own_misses(segments: np.ndarray, warps: np.ndarray, req: _Requests,
                         out: dict[str, np.ndarray]) -> None:
    """A warp that misses L1 itself in a segment waits that long anyway: its hits on fills other
    warps started there (``out["waiting"]``) wait no longer than its own miss, so they count as
    plain hits. (The costs average each instruction's latency over its requests; a warp waits for
    the slowest of its loads, so a wait hidden behind the warp's own miss must not count.)"""
    waiting = out["waiting"]
    if not waiting.any() or not len(segments) or not len(warps):
        return
    missed = (out["l2"] + out["cold"] + out["again"]) > 0
    missed &= (req.kind == LOAD_CACHED) | (req.kind == LOAD_UNCACHED)
    key = segments * (int(warps.max()) + 1) + warps
    covered = np.isin(key, np.unique(key[missed]))
    waiting[covered] = 0


def _warps(log: dict[str, np.ndarray]) -> np.ndarray:
    """Per request, the warp that issued it (empty where the log has none)."""
    warp = log.get("request_warp")
    return np.zeros(0, dtype=np.int64) if warp is None else warp.astype(np.int64)


def _segments(log: dict[str, np.ndarray]) -> np.ndarray:
    """Per request, the segment of the run it was issued in (empty where the log has none)."""
    segment = log.get("request_segment")
    return segment.astype(np.int64) if segment is not None else np.zeros(0, dtype=np.int64)


def _measured_worth(req: _Requests, footprints: dict[int, BufferFootprint], measured: np.ndarray,
                    n_sampled: int) -> dict[int, float]:
    """Per buffer, how many of the grid's average blocks the measured blocks are worth in first
    touches: their count, times the distinct lines of the buffer a measured block reads over what
    a sampled block reads on average. The grid's first touches are shared by its blocks as their
    footprints are: measured blocks above a triangular domain's diagonal, which exit at once,
    owe none of them. (``measured``: per sampled block, whether it is measured.)"""
    n_measured = int(measured.sum())
    entry_block = req.block[req.owner]
    reads = req.reads
    worth: dict[int, float] = {}
    for b in footprints:
        on = reads & (req.buffers == b)
        pairs = np.unique(np.stack([entry_block[on], req.lines[on]], axis=1), axis=0) if on.any() \
            else np.zeros((0, 2), dtype=np.int64)
        sampled = len(pairs) / max(n_sampled, 1)
        mine = int(measured[pairs[:, 0]].sum()) / max(n_measured, 1) if len(pairs) else 0.0
        worth[b] = n_measured * (mine / sampled if sampled > 0 else 1.0)
    return worth


def _kept_first_touches(req: _Requests, out: dict[str, np.ndarray], footprints: dict[int, BufferFootprint],
                        chosen: np.ndarray, request_buffer: np.ndarray, rates: dict[int, float],
                        rooms: dict[int, float], worth: dict[int, float], grid_blocks: int, plane: int,
                        config: CacheConfig
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Per request, the share of its first touches (cold misses) that still go to DRAM over the
    grid (cold misses beyond what the grid's footprint allows are data earlier blocks brought in),
    and the share of its L2 hits in the replay that still hit over the grid.

    The second is below 1 for a table read at random (a gather through loaded indices) that L2
    cannot hold with everything else the kernel moves: the sample is too short for L2 to fill,
    so its re-reads all hit, while over the launch a random re-read of a line another block read
    finds it in L2 only as often as L2 holds it (the capacity over the reuse distance, as for the
    first touches); a block's re-reads of its own lines come soon after and still hit."""
    keep = np.ones(len(req.instr), dtype=np.float64)
    rehit = np.ones(len(req.instr), dtype=np.float64)
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
        compulsory = min(1.0, fp.sectors * worth[b] / max(grid_blocks, 1) / cold)
        if fp.scattered:
            distance = reuse_distance(b, footprints, rates, rooms)
        else:
            # re-read from a neighbour the sample did not run: the one a plane (or row) before
            distance = plane * sum(rooms.get(c, 1.0) * f.sectors for c, f in footprints.items()) / max(grid_blocks, 1)
        kept = min(1.0, config.l2_bytes / max(SECTOR * distance, 1.0))
        keep[request_buffer == b] = compulsory + (1.0 - compulsory) * (1.0 - kept)
        if fp.scattered and kept < 1.0:
            rehit[request_buffer == b] = 1.0 - _cross_block_share(req, b) * (1.0 - kept)
        if _DEBUG:
            print("buffer", b, "cold", cold, "F", fp.sectors, "q", compulsory, "scattered", fp.scattered,
                  "distance", distance, "kept", kept, "rate", rates.get(b))
    if _DEBUG:
        for b in footprints:
            sel = chosen & (request_buffer == b)
            print("buffer", b, {k: float(v[sel].sum()) for k, v in out.items()})
    return keep, rehit


def _read_rates(req: _Requests, chosen: np.ndarray, request_buffer: np.ndarray,
                footprints: dict[int, BufferFootprint], n_measured: int) -> dict[int, float]:
    """Per read buffer, the sectors DRAM moves for one measured block's requests."""
    fetched_sectors = np.bincount(req.owner, weights=_popcount4(req.fetched), minlength=len(req.instr))
    return {b: float(fetched_sectors[chosen & (request_buffer == b)].sum()) / max(1, n_measured)
            for b in footprints}


def _cross_block_share(req: _Requests, buffer: int) -> float:
    """Of the sample's re-reads of ``buffer``'s lines, the share a block makes of a line another
    block read (the rest re-read the block's own lines, soon after: a CSR row's neighbours)."""
    sel = req.buffers == buffer
    lines, blocks = req.lines[sel], req.block[req.owner[sel]]
    distinct = len(np.unique(lines))
    per_block = len(np.unique(np.stack([blocks, lines], axis=1), axis=0)) if len(lines) else 0
    rereads = len(lines) - distinct
    return min(1.0, max(0.0, (per_block - distinct) / rereads)) if rereads > 0 else 0.0


def _levels(req: _Requests, out: dict[str, np.ndarray], keep: np.ndarray, rehit: np.ndarray,
            footprints: dict[int, BufferFootprint], chosen: np.ndarray, request_buffer: np.ndarray,
            worth: dict[int, float], grid_blocks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per request, the sectors L2 and DRAM serve over the grid and the DRAM bytes (``worth``:
    per buffer, the measured blocks' worth in the grid's first touches, :func:`_measured_worth`)."""
    cold_kept = out["cold"] * keep
    # L2 hits of the replay that miss over the launch fetch as the request's first touches did:
    # re-reads of lines other blocks read (a gather's table), and of the block's own lines that
    # the blocks beside it push out meanwhile
    missed = np.minimum(out["l2"] * (1.0 - rehit) + out["lost"], out["l2"])
    per_sector = np.divide(out["cold_b"], out["cold"], out=np.full(len(keep), float(SECTOR)),
                           where=out["cold"] > 0)
    dram = cold_kept + out["again"] + missed
    dram_bytes = out["cold_b"] * keep + out["again_b"] + missed * per_sector
    l2 = out["l2"] - missed + out["cold"] - cold_kept
    # every sector of the grid's footprint comes from DRAM once: the measured blocks pay their
    # share of it even where blocks outside the measured part fetched it first in the replay
    # (blocks of one wave share a panel: whichever asks first misses, and the run asks in turn)
    for b, fp in footprints.items():
        sel = chosen & (request_buffer == b) & np.isin(req.kind, (LOAD_CACHED, LOAD_UNCACHED, ATOMIC))
        share = fp.sectors * worth[b] / max(grid_blocks, 1)
        have = float(dram_bytes[sel].sum()) / SECTOR       # sectors of data moved, as the footprint
        served_by_l2 = float(l2[sel].sum())
        if have >= share or served_by_l2 <= 0:
            continue
        moved = min(share - have, served_by_l2)
        fraction = moved / served_by_l2
        dram[sel] += l2[sel] * fraction
        dram_bytes[sel] += l2[sel] * fraction * float(SECTOR)
        l2[sel] -= l2[sel] * fraction
    return l2, dram, dram_bytes


def _per_instruction(result: CacheResult, req: _Requests, chosen: np.ndarray, sectors: np.ndarray,
                     l1: np.ndarray, dram: np.ndarray, dram_bytes: np.ndarray, shared: np.ndarray,
                     waiting: np.ndarray) -> None:
    """Each instruction's requests, sectors, share of them per level, DRAM bytes per request, and
    share of its sectors on data other blocks read too (``shared``: per request)."""
    for index in np.unique(req.instr[chosen]).tolist():
        sel = chosen & (req.instr == index)
        total = float(sectors[sel].sum())
        result.requests[index] = int(sel.sum())
        result.sectors[index] = int(total)
        if total <= 0:
            continue
        result.l1_share[index] = float(l1[sel].sum()) / total
        result.dram_share[index] = min(1.0 - result.l1_share[index], float(dram[sel].sum()) / total)
        result.l2_share[index] = max(0.0, 1.0 - result.l1_share[index] - result.dram_share[index])
        result.dram_read_per_request[index] = float(dram_bytes[sel].sum()) / max(1, int(sel.sum()))
        result.shared_share[index] = float((shared[sel] * sectors[sel]).sum()) / total
        waits = waiting[sel].sum(axis=0)
        if waits.any():
            result.l1_waiting_share[index] = (float(waits[0]) / total, float(waits[1]) / total)


@dataclass(frozen=True)
class _RandomRewrites:
    """What :func:`_written_back` needs to tell how often a sector written at random comes back
    to L2 after L2 has evicted it: the read buffers' footprints and per-block rates, each
    request's buffer, the instructions whose addresses come from loaded data, and L2's size."""

    footprints: dict[int, BufferFootprint]
    read_rates: dict[int, float]
    request_buffer: np.ndarray
    gathers: frozenset[int]
    l2_bytes: int
    rooms: dict[int, float] = field(default_factory=dict)


def _written_back(execution: Execution, grid: tuple[int, int, int], log: dict[str, np.ndarray],
                  req: _Requests, stored: np.ndarray, n_measured: int, grid_blocks: int,
                  rewrites: _RandomRewrites) -> tuple[float, float]:
    """The bytes the measured stores leave dirty and the write-back fills, per written buffer.

    A buffer written in launch order (each block its own part) reaches DRAM once per sector: at
    most its footprint over the grid. A buffer written through loaded indices (a scatter) is
    written again at random: a sector written again after L2 evicted it is allocated, filled
    (if partly written) and written back once more, so of the writes beyond the footprint those
    that miss count again, a miss as likely as L2's size falls short of what the kernel moves
    between two writes of one sector (the reuse distance, as for a gather's re-reads)."""
    lines, masks = req.lines, req.masks
    loads = req.reads
    read_sectors = np.unique(np.concatenate([lines[loads] * 4 + q for q in range(4)]
                                            )[np.concatenate([(masks[loads] >> q & 1).astype(bool)
                                                              for q in range(4)])])
    scale = grid_blocks / max(1, n_measured)
    written_sel = np.isin(req.kind[req.owner], (STORE, ATOMIC))
    dirty_total = fills_total = 0.0
    for b in np.unique(req.buffers[written_sel]).tolist():
        mine = stored & (rewrites.request_buffer == b)
        if not mine.any():
            continue
        dirty, fills = _dirty_bytes(log, req.starts, mine, read_sectors)
        sel = written_sel & (req.buffers == b)
        cap = grid_footprint(execution, grid, b, lines[sel], masks[sel], req.block[req.owner[sel]]).sectors
        writes = dirty * scale / SECTOR                 # sector writes over the grid
        if writes > cap > 0:
            allocations = cap
            scattered = bool(rewrites.gathers) and bool(np.isin(req.instr[mine], list(rewrites.gathers)).any())
            if scattered:
                allocations += (writes - cap) * (1.0 - _kept_in_l2(b, cap, writes / grid_blocks, rewrites))
            dirty, fills = dirty * allocations / writes, fills * allocations / writes
        dirty_total += dirty
        fills_total += fills
    return dirty_total, fills_total


def _kept_in_l2(buffer: int, written_sectors: float, write_rate: float, rewrites: _RandomRewrites) -> float:
    """The chance that a sector of ``buffer``, written at random at ``write_rate`` sectors per
    block, is still in L2 when it is written again."""
    footprints = dict(rewrites.footprints)
    rates = dict(rewrites.read_rates)
    own = footprints.get(buffer)
    footprints[buffer] = BufferFootprint(buffer, 0.0, (1.0, 1.0, 1.0), 0.0, 0.0,
                                         max(written_sectors, own.sectors if own else 0.0), True)
    rates[buffer] = rates.get(buffer, 0.0) + write_rate
    rooms = dict(rewrites.rooms)
    rooms[buffer] = 1.0                 # written data: a whole room (see L2_ROOM_PRIVATE)
    distance = reuse_distance(buffer, footprints, rates, rooms)
    return min(1.0, rewrites.l2_bytes / max(SECTOR * distance, 1.0))


def _popcount4(bits: np.ndarray) -> np.ndarray:
    b = bits.astype(np.int64)
    return np.asarray((b & 1) + (b >> 1 & 1) + (b >> 2 & 1) + (b >> 3 & 1))


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

    def shared_share(self, index: int) -> float:
        """The share of the instruction's sectors on data other blocks read too."""
        return self.caches.shared_share.get(index, 0.0)

    def waiting_hits(self, index: int) -> tuple[float, float]:
        """The shares of the instruction's sectors that hit L1 on a fill under way, filled from
        L2 and from DRAM: they wait as those misses do."""
        return self.caches.l1_waiting_share.get(index, (0.0, 0.0))

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
        of a 64-byte fetch, 1 when both halves are wanted; below 1 where some of its misses wait
        for a fetch another instruction's request started, which moves the bytes)."""
        c = self.caches
        requests, sectors = c.requests.get(index, 0), c.sectors.get(index, 0)
        dram = c.dram_share.get(index, 0.0) * sectors
        if not requests or dram <= 0:
            return 1.0
        return max(0.0, c.dram_read_per_request.get(index, 0.0) * requests / (SECTOR * dram))


def simulated_levels(execution: Execution, profile: object, resident_blocks: int,
                     shared_bytes_per_block: int, gathers: frozenset[int] = frozenset(),
                     sm_group: Execution | None = None) -> SimulatedLevels | None:
    """The simulation at this occupancy, kept on the execution (an edit of a latency reuses it).
    ``gathers``: instructions whose addresses come from loaded data (:func:`simulate_caches`);
    ``sm_group``: a run of blocks one SM holds at once, whose L1 hits on each other's lines
    are added (:func:`shared_l1_gain`)."""
    if not execution.ok:
        return None
    config = cache_config(profile, resident_blocks, shared_bytes_per_block)
    memo = execution.memo.setdefault("caches", {})
    # the group run is the same launch as ``execution``: its sample tells it apart (an id() could
    # be reused by a later run once this one is dropped)
    group_key = sm_group.sample if sm_group is not None else None
    result = memo.get((config, gathers, group_key))
    if result is None:
        result = simulate_caches(execution, config, gathers)
        if sm_group is not None:
            result = with_shared_l1(result, shared_l1_gain(sm_group, config))
        memo[(config, gathers, group_key)] = result
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


def shared_l1_gain(group: Execution, config: CacheConfig) -> dict[int, float]:
    """Per load instruction, the share of its sectors L1 serves when the blocks of ``group`` (one
    SM's, run together) share the SM's L1, beyond what each block's part of L1 serves it alone:
    a row of B that two of an SM's GEMM blocks read, a table every block looks up. The same
    requests are replayed twice, with one L1 per block and with one L1 of their summed size."""
    log = group.log
    if not group.ok or group.sample is None or not log or not len(log["request_instruction"]):
        return {}
    req = _requests(log, config)
    blocks = group.sample.blocks
    order = issue_order(log, np.arange(len(req.instr), dtype=np.int64))
    segments, warps = _segments(log), _warps(log)
    sectors = np.bincount(req.owner, weights=_popcount4(log["entry_sectors"]), minlength=len(req.instr))
    loads = req.kind == LOAD_CACHED
    if not loads.any() or config.l1_bytes_per_block <= 0:
        return {}

    def l1_hits(block_of: np.ndarray, n_l1: int, l1_bytes: int) -> np.ndarray:
        sets = max(0, l1_bytes // LINE // config.l1_ways)
        out = {k: np.zeros(len(req.instr), dtype=np.int64) for k in ("l1", "l2", "cold", "again", "cb", "ab")}
        replay_requests(block_of, req.kind, segments, warps, order, -1, req.starts, req.lines,
                        log["entry_sectors"], log["entry_bytes"], n_l1, sets, config.l1_ways, 1, config.l2_ways,
                        req.fetch_pairs, out["l1"], out["l2"], out["cold"], out["again"], out["cb"], out["ab"],
                        0.0, np.zeros(len(req.instr), dtype=np.float64),
                        np.zeros((len(req.instr), 2), dtype=np.int64))
        return out["l1"]

    private = l1_hits(req.block, blocks, config.l1_bytes_per_block)
    shared = l1_hits(np.zeros_like(req.block), 1, config.l1_bytes_per_block * blocks)
    gain: dict[int, float] = {}
    for index in np.unique(req.instr[loads]).tolist():
        sel = loads & (req.instr == index)
        total = float(sectors[sel].sum())
        if total > 0:
            extra = float(shared[sel].sum() - private[sel].sum()) / total
            if extra > 0:
                gain[index] = extra
    return gain


def with_shared_l1(result: CacheResult, gain: dict[int, float]) -> CacheResult:
    """``result`` with each load's L1 share raised by ``gain``: the sectors L1 now serves come
    off L2's share first (another block of the SM read them a moment before: L2 had them),
    then off DRAM's."""
    if not gain:
        return result
    l1, l2, dram = dict(result.l1_share), dict(result.l2_share), dict(result.dram_share)
    per_request = dict(result.dram_read_per_request)
    hits = dram_bytes = 0.0
    for index, extra in gain.items():
        if index not in l1:
            continue
        added = min(extra, 1.0 - l1[index])
        if added <= 0:
            continue
        from_l2 = min(l2[index], added)
        from_dram = min(dram[index], added - from_l2)
        if dram[index] > 0 and from_dram > 0:
            before = per_request[index]
            per_request[index] *= (dram[index] - from_dram) / dram[index]
            dram_bytes += (before - per_request[index]) * result.requests.get(index, 0)
        l1[index] += from_l2 + from_dram
        l2[index] -= from_l2
        dram[index] -= from_dram
        hits += (from_l2 + from_dram) * result.sectors.get(index, 0)
    return replace(result, l1_share=l1, l2_share=l2, dram_share=dram, dram_read_per_request=per_request,
                   l1_sector_hits=result.l1_sector_hits + int(round(hits)),
                   dram_read_bytes=max(0.0, result.dram_read_bytes - dram_bytes))
