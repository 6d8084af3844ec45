"""Where each global access is served (L1, L2, DRAM) and what that costs one SM.

From an access's pattern (:class:`AccessInfo`: sectors and lines per warp request, the share of
sectors new to the block, the share new to the whole GPU) and the launch on a profile:

* **L1** serves the sectors the block touched just before (same iteration, earlier accesses, or
  the loop's previous iteration), for loads that L1 may cache, as far as the working set of the
  SM's resident blocks fits in the L1 left beside their shared memory (hits scale down by
  capacity / working set beyond that);
* **DRAM** serves the sectors no block touched before (``dram_ratio``: compulsory traffic), as
  far as the whole grid has not read them already: ``grid_reuse`` (:mod:`engine.memory.footprint`)
  is the share of them that are first touches of their buffer, and the re-reads are L2 hits while
  the kernel's footprint fits in L2 (beyond it, the share that does not fit misses again);
* **L2** serves the rest: sectors other blocks brought in, and L1 capacity misses.

The cost of one warp request on its SM is the slowest of the three levels at the rate each gives
one SM when every SM streams (``[pipeline.memory]`` of the profile): the L1/LSU data path moves
one 128-byte wavefront per ``l1_lam`` (every request passes it, hit or miss, one wavefront per
line it touches), L2 ``l2_lam`` and DRAM ``dram_lam`` per 128 bytes, counted by 32-byte sector
for loads and by line for stores (L2 takes a partial write a line at a time); atomics on spread
addresses take L2's atomic units ``atomic_distinct_lane_lam`` per lane (at most one per sector).
A grid with fewer blocks than SMs shares L2 and DRAM among fewer SMs: their per-SM rates scale
with the share of SMs busy, capped at what one SM's path takes (DRAM at the all-SM L2 rate, L2 at
the L1 rate: an estimate, not measured). The latency is that of the slowest level a request's
lines need (a line needs a level when any of its sectors does), plus the time the request's last
line waits behind its others.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.caches import l1_data_bytes as carved_l1_data_bytes
from engine.mechanisms import enabled
from engine.memory.access_report import AccessInfo
from engine.memory.patterns import LINE, SECTOR
from engine.units import AccessKind

SECTORS_PER_LINE = LINE // SECTOR
# An access whose block re-reads less than a tenth of its sectors has no neighbour to use the
# other half of a 64-byte DRAM fetch.
ISOLATED_MISS = 0.9
# L2 is two partitions, each caching for the SMs beside it: a line SMs on both sides read is held
# twice, so data the whole grid shares has half the capacity (stores measured on the H100: of
# 64 and 128 MB written, 22 and 19 MB stayed in its 50 MB L2).
L2_SHARED_SHARE = 0.5


@dataclass(frozen=True)
class LevelShares:
    """Shares of an access's requested sectors served by each level (they sum to 1)."""

    l1: float
    l2: float
    dram: float


@dataclass(frozen=True)
class SmContext:
    """What the level model needs to know about the launch on one SM."""

    resident_blocks: int = 1
    shared_bytes_per_block: int = 0      # static + dynamic shared memory of one block
    active_sm_share: float = 1.0         # SMs with work / SMs of the GPU
    # Blocks of the grid over the blocks the GPU runs at once (0: not known, taken as many).
    # Blocks of one wave that read the same data miss together; only later waves find it in L2.
    waves: float = 0.0
    warps_per_block: int = 1             # the warps that contend for a block's shared data
    # the cache simulation of the sampled requests at this occupancy (engine.caches
    # SimulatedLevels): where present, every executed access's level shares come from it
    simulated: Any = field(default=None, compare=False, hash=False)


def l1_data_bytes(profile: Any, sm: SmContext) -> float:
    """L1 capacity left for data beside the resident blocks' shared memory (the driver's carve-out
    for them; :func:`engine.caches.l1_data_bytes`)."""
    return float(carved_l1_data_bytes(profile.device, sm.resident_blocks, sm.shared_bytes_per_block))


def simulated(access: AccessInfo, sm: SmContext | None) -> Any:
    """The cache simulation that covers ``access`` (None: the pattern rules below apply)."""
    sim = sm.simulated if sm is not None else None
    if sim is None or not access.executed or sim.shares(access.index) is None:
        return None
    return sim


def level_shares(access: AccessInfo, profile: Any, sm: SmContext) -> LevelShares | None:
    """Where the access's sectors come from; None without a pattern."""
    sim = simulated(access, sm)
    if sim is not None:
        l1, l2, dram = sim.shares(access.index)
        if access.kind == AccessKind.STORE:
            # stores write through to L2; what reaches DRAM during the kernel is what L2 cannot keep
            l1, dram = 0.0, sim.written_share
            l2 = 1.0 - dram
        return LevelShares(l1=l1, l2=l2, dram=dram)
    if access.dram_ratio is None or access.sectors_per_request is None:
        return None
    dram = min(max(access.dram_ratio, 0.0), 1.0)
    if access.grid_reuse is not None and access.grid_reuse < 1.0:
        # Re-reads of a buffer the grid already brought in: L2 hits when the data the kernel
        # touches between two reads of the same sector fits in L2. An affine address's re-reads
        # follow the block order (a stencil's neighbour rows come back a few blocks later): with
        # the 1/grid_reuse reads of each sector taken evenly over the kernel, that reuse distance
        # is the kernel's footprint x grid_reuse. Reads through loaded indices come back at
        # random, after most of their own buffer went by, while the rest of the kernel's data
        # moved on by one sweep's share (a CSR product's x, 4 MB gathered 128 times, stays in L2
        # while 136 MB of matrix streams past it). Beyond the capacity, the share that does not
        # fit misses again.
        capacity = float(getattr(profile.device, "l2_cache_bytes", None) or 0.0) * L2_SHARED_SHARE
        kernel = access.kernel_footprint_bytes or 0.0
        distance = kernel
        if access.method == "affine" and access.neighbour_distance_share is not None:
            # a halo comes back with the next block along an axis: the data between is the
            # blocks launched in between (a row of blocks, for the row below)
            distance = kernel * access.neighbour_distance_share
        elif access.method == "affine":
            distance = kernel * access.grid_reuse
        elif access.buffer_footprint_bytes:
            own = min(access.buffer_footprint_bytes, kernel)
            distance = own + (kernel - own) * access.grid_reuse
        kept = 1.0 if distance <= capacity else (capacity / distance if distance else 0.0)
        if sm.waves > 0:
            kept *= max(0.0, 1.0 - 1.0 / sm.waves)   # re-reads by the first wave's blocks miss too
        dram *= access.grid_reuse + (1.0 - access.grid_reuse) * (1.0 - kept)
    l1 = 0.0
    if access.l1_cached and access.block_miss is not None:
        reuse = max(1.0 - access.block_miss, 0.0)
        working_set = sm.resident_blocks * (access.block_footprint_bytes or 0.0)
        capacity = l1_data_bytes(profile, sm)
        fits = 1.0 if working_set <= capacity else capacity / working_set
        l1 = min(reuse * fits, 1.0 - dram)
    return LevelShares(l1=l1, l2=max(1.0 - l1 - dram, 0.0), dram=dram)


def write_back_share(access: AccessInfo, profile: Any) -> float:
    """The share of a store's DRAM sectors written back while the kernel runs. L2 keeps the
    last ``l2_dirty_bytes`` of stores dirty and writes back only what comes beyond (measured:
    24.8 MB on the H100, 29.6 MB on the H200, after 48-256 MiB of stores); reads of other data
    (``read_only`` bytes) take part of that room, down to ``l2_dirty_bytes_streaming`` when they
    are as many as the stores (21.1 / 23.7 MB), in proportion to their share of the traffic.
    ``written``/``read_only``: the store's ``kernel_written_bytes``/``kernel_read_only_bytes``.
    1 for other accesses, without the figures, or with mechanism ``l2_write_back`` off.

    Only the traffic (the DRAM bytes Nsight Compute counts during the kernel) uses it: the
    simulator keeps charging a store's sectors to DRAM's bandwidth, because on suite v2's
    tuning part the store-bound kernels already ran slower than the model, and freeing them of
    the write-back made the simulator 0.6 (H100) and 0.9 (H200) points worse."""
    memory = profile.pipeline.memory
    alone = memory.get("l2_dirty_bytes")
    written = access.kernel_written_bytes or 0.0
    if access.kind != AccessKind.STORE or not alone or written <= 0:
        return 1.0
    read_only = access.kernel_read_only_bytes or 0.0
    streaming = memory.get("l2_dirty_bytes_streaming", alone)
    read_share = read_only / (read_only + written)
    held = max(0.0, alone + (streaming - alone) * 2.0 * read_share)
    return max(0.0, written - held) / written


# A store whose lanes touch at least this share of a sector each is scattered (one lane per sector)
SCATTERED_SECTORS_PER_LANE = 0.75
MIB = float(1 << 20)


@dataclass(frozen=True)
class ScatteredStore:
    """What one lane of a scattered store or atomic costs (``[[pipeline.scattered_stores]]`` at
    its buffer's footprint): DRAM bytes read and written during the kernel, SM cycles with every
    SM issuing."""

    read_bytes: float
    write_bytes: float
    sm_cycles: float


def scattered_store(access: AccessInfo, profile: Any) -> ScatteredStore | None:
    """The measured cost per lane of a store or atomic whose lanes land on data-dependent sectors
    of their own (an index scatter, a hashed histogram), read at the footprint of the buffer it
    writes; None for other accesses, without a measured table, or with mechanism
    ``scattered_stores`` off. The table was measured with one store per 4-byte slot on average."""
    table = _scattered_store_table(access, profile)
    footprint = access.buffer_footprint_bytes
    if table is None or not footprint:
        return None
    # straight between the measured footprints, held at the first and last beyond them
    footprints, *columns = zip(*table, strict=True)
    return ScatteredStore(*(float(np.interp(footprint / MIB, footprints, column)) for column in columns))


def scattered_rate_factor(access: AccessInfo, factor: float, profile: Any, sim: Any = None) -> float:
    """How much longer DRAM takes over a gather's bytes than over as many streamed: the share of
    them that are lone-sector fetches at random places (``factor - 1``, as the traffic counts
    them) moves at most at the bandwidth where the scattered curve measured DRAM saturated
    (``[pipeline.dram_loaded_scattered]``'s last share of the streaming peak: 0.61 on the H100).
    With the caches simulated (``sim``), only gathers whose blocks read over most of their buffer
    are at random places (a thread walking its own segment streams its DRAM pages however its
    lanes spread). 1 for affine accesses, stores, without the curve, or with
    ``scattered_dram_load`` off."""
    if access.kind != AccessKind.LOAD or access.method == "affine" or not enabled("scattered_dram_load"):
        return 1.0
    if sim is not None and access.index not in sim.caches.random_gathers:
        return 1.0
    curve = getattr(profile.pipeline, "dram_loaded_scattered", ()) or ()
    saturation = max((float(share) for share, _ in curve), default=0.0)
    if not 0.0 < saturation < 1.0:
        return 1.0
    scattered = min(1.0, max(0.0, factor - 1.0))
    return (1.0 - scattered) + scattered / saturation


def _scattered_store_table(access: AccessInfo, profile: Any) -> Any:
    """The ``[[pipeline.scattered_stores]]`` rows that apply to ``access``: a store or atomic
    whose lanes land on sectors of their own at random places (through loaded indices, or hashed
    onto lines the run found at random: ``AccessInfo.random_lines``); None otherwise or without
    them. (Every irregular store, wrapped or divided indices included, was tried: such a store
    still streams DRAM pages, and it made v3's held-out part 2 points worse on the H100.)"""
    scattered = access.data_dependent or access.random_lines
    if access.kind not in (AccessKind.STORE, AccessKind.ATOMIC) or not scattered or access.uniform_address:
        return None
    table = getattr(profile.pipeline, "scattered_stores", {}).get("store" if access.kind == AccessKind.STORE else "red")
    lanes = access.active_lanes or 0.0
    if not table or lanes <= 0 or (access.sectors_per_request or 0.0) < SCATTERED_SECTORS_PER_LANE * lanes:
        return None
    return table


def random_sector_cycles_per_byte(access: AccessInfo, profile: Any) -> float | None:
    """SM cycles per DRAM byte that a store or atomic scattered one lane per sector through
    loaded indices moves (fills and write-backs, all SMs issuing): the
    ``[[pipeline.scattered_stores]]`` row of the largest footprint measured, where nearly every
    store misses L2 and the time is DRAM's. None for other accesses or without the table."""
    table = _scattered_store_table(access, profile)
    if table is None:
        return None
    _, read_bytes, write_bytes, sm_cycles = max(table, key=lambda row: row[0])
    moved = float(read_bytes) + float(write_bytes)
    return float(sm_cycles) / moved if moved > 0 else None


def _rate(memory: dict[str, float], key: str, fallback: float) -> float:
    value = memory.get(key)
    return float(value) if value is not None else fallback


def level_times(access: AccessInfo, shares: LevelShares, profile: Any, sm: SmContext,
                fallback: tuple[float, float], fills: bool = True) -> dict[str, float]:
    """Cycles one warp request of ``access`` keeps each level busy on its SM. ``fills``: L1's
    time includes the profile's ``l1_fill_lam`` for what a load brings in from beyond L1
    (measured for loads into registers; an asynchronous copy into shared memory, not measured,
    is charged without it)."""
    memory = profile.pipeline.memory
    dram_lam = _rate(memory, "dram_lam", fallback[0])
    l2_lam = _rate(memory, "l2_lam", dram_lam)
    l1_lam = _rate(memory, "l1_lam", _rate(memory, "shared_lam", 1.0))
    share = min(max(sm.active_sm_share, 0.0), 1.0)
    sim = simulated(access, sm)
    gain = float(memory.get("l2_shared_read_gain", 1.0) or 1.0)
    if sim is not None and access.kind == AccessKind.LOAD and gain > 1.0:
        # lines every SM reads are held in both L2 partitions and reach each SM from the near
        # one: l2_lam is the rate of lines one SM reads alone (half of them across the partitions).
        # Measured with whole lines (LDG.128, cp.async); a gather of one sector per line is held
        # by the slices' request rate, not by the path the data travels: no gain, full gain from
        # two sectors per line on
        per_line = (access.sectors_per_request or 0.0) / max(1.0, access.lines_per_request or 1.0)
        streamed = min(1.0, max(0.0, per_line - 1.0))
        l2_lam = l2_lam / (1.0 + (gain - 1.0) * sim.shared_share(access.index) * streamed)
    # Fewer busy SMs share the GPU-wide levels, so each gets more of them; one SM's own path
    # caps that: DRAM no faster than L2 streams to every SM at once, L2 no faster than L1.
    l2_lam_sm = max(l2_lam * share, l1_lam)
    dram_lam_sm = max(dram_lam * share, l2_lam)
    sectors = access.sectors_per_request or 0.0
    lines = max(1.0, access.lines_per_request or 1.0)
    beyond_l1 = sectors * (1.0 - shares.l1) / SECTORS_PER_LINE     # lines' worth from L2 or DRAM
    through_l2 = beyond_l1 * l2_lam_sm
    atomic_lane_lam = memory.get("atomic_distinct_lane_lam")
    if access.kind == AccessKind.ATOMIC and atomic_lane_lam is not None:
        # L2's atomic units run each lane's operation; lanes sharing a sector are at most one
        # sector's worth apart (a measured rate per lane, all SMs issuing, so shared like L2's)
        lanes_out = min(access.active_lanes if access.active_lanes is not None else 32.0, sectors or 32.0)
        through_l2 = max(through_l2, lanes_out * float(atomic_lane_lam) * share)
    elif access.kind != AccessKind.LOAD:
        # writes and atomics reach L2 a line at a time, however few of its bytes they change
        through_l2 = max(through_l2, lines * l2_lam_sm)
    factor = dram_fetch_factor(access, sm)
    moved = sectors * factor * shares.dram * SECTOR          # DRAM bytes of one request
    dram = moved / LINE * dram_lam_sm * scattered_rate_factor(access, factor, profile, sim)
    scattered = scattered_store(access, profile)
    if scattered is not None:
        # measured with every SM issuing: fewer busy SMs share DRAM's random-access rate
        dram = max(dram, (access.active_lanes or 0.0) * scattered.sm_cycles * share)
    if sim is not None:
        per_byte = random_sector_cycles_per_byte(access, profile)
        if per_byte is not None:
            # the simulated fills and write-backs of a scatter move at DRAM's random-sector rate,
            # not the streaming one (a sector here, another in a different DRAM page there)
            dram = max(dram, moved * per_byte * share)
    l1 = l1_request_cycles(access, memory, l1_lam)
    fill_lam = memory.get("l1_fill_lam")
    if fills and fill_lam is not None and access.kind == AccessKind.LOAD:
        # what comes from beyond L1 passes its data stage too, beside the hits (l1_hit_rate.cu:
        # 1.69 cycles more per 128 bytes from L2); a request that misses entirely stays bound by
        # L2's rate, so this shows where hits and misses mix within one access
        l1 += float(fill_lam) * beyond_l1
    return {
        "L1": l1,
        "L2": through_l2,
        "DRAM": dram,
    }


# Wavefronts an L1 request over several lines takes at least, however its words spread over the
# banks: the linediag benchmark cannot see below 2.7 cycles per request (its own issue rate), and a
# coalesced read straddling two lines costs two (suite v2's tuning stencils, as the one-per-line
# model had it), so only requests over more lines than this are charged by their banks and tags.
L1_MIN_WAVEFRONTS = 2.0


def l1_request_cycles(access: AccessInfo, memory: Any, l1_lam: float) -> float:
    """Cycles one warp request keeps L1 busy. Its data banks serve one 4-byte word each per
    wavefront, so a request takes as many wavefronts as the most distinct words one bank must
    serve; its tag stage looks up ``l1_line_lam`` cycles' worth per line (measured: lanes over
    16 or 32 lines in 32 banks cost a quarter of lanes over as many lines in one bank), and a
    request over two lines or more takes at least ``L1_MIN_WAVEFRONTS``. Without the measured tag
    rate, or with mechanism ``l1_banks`` off, every line is a wavefront (the one-bank case). A load
    request takes at least the profile's ``l1_request_lam``."""
    lines = max(1.0, access.lines_per_request or 1.0)
    line_lam = memory.get("l1_line_lam")
    if line_lam is None or access.l1_bank_degree is None or not enabled("l1_banks"):
        cycles = lines * l1_lam
    else:
        cycles = max(access.l1_bank_degree * l1_lam, min(lines, L1_MIN_WAVEFRONTS) * l1_lam, lines * float(line_lam))
    floor = memory.get("l1_request_lam")
    if floor is not None and access.kind == AccessKind.LOAD:
        # measured: load requests that hit L1 on one line each keep it 1.09 cycles apiece, not
        # one wavefront's 1.0 (two lines a request: 2.02, the wavefronts'); l1_hit_rate.cu
        cycles = max(cycles, float(floor))
    return cycles


def dram_fetch_factor(access: AccessInfo, sm: SmContext | None = None) -> float:
    """DRAM sectors read per requested sector: DRAM is read 64 bytes at a time, so a load that
    wants one sector of a line fetches two (a random gather moves twice its bytes); requests of
    two or more sectors per line fetch what they ask for, and so does a walk whose block goes on
    to read the neighbouring sector (the second half of the fetch is then an L2 hit). Stores
    write the sectors they change, and first read those they leave partly unwritten
    (``fill_share``)."""
    sectors = access.sectors_per_request or 0.0
    sim = simulated(access, sm)
    if sim is not None:
        return sim.fetch_factor(access.index) if access.kind != AccessKind.STORE else sim.fill_factor
    if access.kind == AccessKind.STORE:
        return 1.0 + access.fill_share      # a partly written sector is read before it is written
    if access.kind != AccessKind.LOAD or sectors <= 0:
        return 1.0
    if access.block_miss is not None and access.block_miss < ISOLATED_MISS:
        return 1.0
    lines = max(1.0, access.lines_per_request or 1.0)
    isolated = max(1.0, 2.0 * lines / sectors)
    if access.paired_share is not None:
        # sectors whose neighbour the block reads one iteration before or after (a row walked
        # 32 bytes per iteration): both halves of the fetch are used, the second from L2
        return 1.0 + (isolated - 1.0) * (1.0 - access.paired_share)
    return isolated


def _waits(access: AccessInfo, shares: LevelShares, profile: Any, sm: SmContext) -> tuple[float, float]:
    """(share of requests that wait for DRAM, share that wait for L2 or DRAM). A request waits
    for its slowest sector. Sectors of one line come and go together, so a line needs a level as
    soon as one of its sectors does: with s/lines sectors per line, the share of requests reaching
    L2 (DRAM) is that many times the share of sectors reaching it. (Where a line's sectors miss
    together that counts too many waits; the replay's exact count of waiting requests was tried
    and made suite v3 worse, 12.3 / 25.5 -> 13.1 / 30.2 % on the H100: what else makes requests
    wait, as L1 hits on lines still in flight, is missing first; docs/validation.md.)"""
    lines = max(1.0, access.lines_per_request or 1.0)
    per_line = max(1.0, (access.sectors_per_request or 1.0) / lines)
    dram, beyond_l1 = shares.dram, shares.dram + shares.l2
    sim = simulated(access, sm)
    if sim is not None and access.kind == AccessKind.LOAD and enabled("inflight_hits"):
        # L1 hits on lines still being filled wait for the fill (replay_requests), which comes
        # from where the access's own misses come from over the grid: the replay's fills are
        # the sample's first touches, DRAM's, where the grid mostly finds the line in L2 (a
        # table every block reads); without misses of its own, from L2
        waiting = sum(sim.waiting_hits(access.index))
        to_dram = waiting * dram / beyond_l1 if beyond_l1 > 0 else 0.0
        dram, beyond_l1 = min(1.0, dram + to_dram), min(1.0, beyond_l1 + waiting)
    needs_dram = min(1.0, dram * per_line)
    needs_l2 = max(min(1.0, beyond_l1 * per_line), needs_dram)
    if (access.kind == AccessKind.LOAD and access.uniform_address and needs_l2 > 0 and enabled("inflight_hits")
            and (access.buffer_footprint_bytes or 0.0) > l1_data_bytes(profile, sm)):
        # Every warp of the SM streams through the same buffer, asking for the same line at
        # nearly the same time (nbody's pos[j]): one misses, the others hit a line still in
        # flight and wait for the same fill. Their L1 hits (93 % measured on nbody_naive) cost
        # what the fill costs: 203 cycles per iteration measured, against 72 when the same data
        # comes from shared memory. A buffer that fits in L1 (a table read over and over, as
        # sinf's reduction table) stays there after its first fill: real hits. (The replay sees
        # such waits within a block; the blocks an SM runs side by side wait on each other too.)
        needs_dram = needs_dram / needs_l2
        needs_l2 = 1.0
    return needs_dram, needs_l2


def dram_wait_share(access: AccessInfo, shares: LevelShares, profile: Any, sm: SmContext) -> float:
    """The share of ``access``'s warp requests whose latency is DRAM's: the part of its Λ that
    grows when the rest of the GPU loads DRAM."""
    return _waits(access, shares, profile, sm)[0]


def global_access_cost(access: AccessInfo, shares: LevelShares, profile: Any, sm: SmContext,
                       fallback: tuple[float, float]) -> tuple[float, float]:
    """(λ, Λ) of one warp request of ``access`` on its SM. ``fallback``: the profile's DRAM
    (λ, Λ) of a coalesced request, standing in for figures the profile lacks."""
    memory = profile.pipeline.memory
    dram_Lam = _rate(memory, "dram_Lam", fallback[1])
    l2_Lam = _rate(memory, "l2_Lam", dram_Lam)
    l1_Lam = _rate(memory, "l1_Lam", _rate(memory, "shared_Lam", l2_Lam))
    lam = max(level_times(access, shares, profile, sm, fallback).values())
    lines = max(1.0, access.lines_per_request or 1.0)
    needs_dram, needs_l2 = _waits(access, shares, profile, sm)
    latency = needs_dram * dram_Lam + (needs_l2 - needs_dram) * l2_Lam + (1.0 - needs_l2) * l1_Lam
    table = getattr(profile.pipeline, "line_latency", ())
    if table and enabled("line_latency"):
        # the request waits for the last of its lines: measured per level for 1..32 lines
        l1_x, l2_x, dram_x = line_extra(table, lines)
        return lam, latency + needs_dram * dram_x + (needs_l2 - needs_dram) * l2_x + (1.0 - needs_l2) * l1_x
    return lam, latency + lam * (1.0 - 1.0 / lines)


def line_extra(table: Any, lines: float) -> tuple[float, float, float]:
    """(L1, L2, DRAM) cycles a request of ``lines`` lines waits beyond a one-line request: the
    profile's ``[pipeline.line_latency]`` read on a log scale of the line count (each doubling
    adds about as much), held at its last point beyond it."""
    x = math.log2(min(max(lines, 1.0), table[-1][0]))
    for low, high in zip(table, table[1:], strict=False):
        x0, x1 = math.log2(low[0]), math.log2(high[0])
        if x <= x1:
            f = (x - x0) / (x1 - x0)
            return tuple(a + (b - a) * f for a, b in zip(low[1:], high[1:], strict=True))  # type: ignore[return-value]
    return tuple(table[-1][1:])  # type: ignore[return-value]
