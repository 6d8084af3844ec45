"""Bytes each memory level moves for a whole kernel launch, and the level that limits it.

Per global access, the memory-level model (:mod:`engine.memory.hierarchy`) gives the shares of
its sectors served by L1, L2 and DRAM and the cycles one warp request keeps each level busy on its
SM. Multiplied by how often every warp of the grid runs the access, that gives the kernel's bytes
per level (comparable with Nsight Compute's ``dram__bytes_read.sum`` / ``dram__bytes_write.sum``
and ``lts__t_sector_hit_rate.pct``) and the level with the most busy cycles: the limiting one.
Accesses without a pattern are left out and counted in ``unanalysed``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from engine.memory.access_report import AccessInfo, MemoryReport, pattern_note
from engine.memory.hierarchy import (
    SmContext,
    dram_fetch_factor,
    level_shares,
    level_times,
    random_sector_cycles_per_byte,
    scattered_store,
    simulated,
    write_back_share,
)
from engine.memory.patterns import SECTOR
from engine.units import AccessKind, MemorySpace


@dataclass(frozen=True)
class AccessTraffic:
    """One access over the whole launch."""

    index: int
    requests: float            # warp requests in the grid
    l1_hit: float              # share of its sectors served by L1
    l2_hit: float              # share of its L1 misses served by L2
    dram_bytes: float          # read (loads) or written (stores, atomics) in DRAM
    limiting_level: str        # the level its requests keep busiest


@dataclass(frozen=True)
class KernelTraffic:
    """Bytes per level for the launch (sectors × 32 B) and the limiting level."""

    l1_bytes: float = 0.0
    l2_bytes: float = 0.0
    dram_read_bytes: float = 0.0
    dram_write_bytes: float = 0.0
    busy_cycles: dict[str, float] = field(default_factory=dict)   # level -> Σ cycles on one SM's share
    accesses: dict[int, AccessTraffic] = field(default_factory=dict)
    unanalysed: int = 0        # global accesses without a pattern (not counted above)
    # of dram_read_bytes: what gathers (addresses not affine) fetch one sector per 64-byte DRAM
    # read, which loads DRAM as scattered requests do ([pipeline.dram_loaded_scattered])
    dram_scattered_bytes: float = 0.0
    # sectors x 32 B that global loads, stores and atomics ask L1 for (what L1 hits are a share of)
    requested_bytes: float = 0.0
    # of the stores' sectors, those L1 held (it updates them; the store still goes on to L2)
    store_l1_bytes: float = 0.0
    # sectors x 32 B that reach L2 (loads L1 missed, stores, atomics), and of them those L2 had not:
    # loads and atomics served by DRAM, partly written sectors it fills first
    l2_accessed_bytes: float = 0.0
    l2_missed_bytes: float = 0.0

    @property
    def l1_hit_rate(self) -> float | None:
        """Sector lookups that hit in L1 over the sectors global loads, stores and atomics asked
        it for: loads L1 served and stores to sectors L1 held (a store writes through to L2
        either way, and allocates nothing); the quantity ``validate`` compares with Nsight
        Compute's ``l1tex__t_sector_hit_rate``."""
        hits = self.l1_bytes + self.store_l1_bytes
        return hits / self.requested_bytes if self.requested_bytes > 0 else None

    @property
    def limiting_level(self) -> str | None:
        if not self.busy_cycles or max(self.busy_cycles.values()) <= 0:
            return None
        return max(self.busy_cycles, key=lambda level: self.busy_cycles[level])

    @property
    def l2_hit_rate(self) -> float | None:
        """Of the sectors that reach L2 (loads L1 missed, stores, atomics), the share it had: a
        write allocates its sector without reading it, so only a partly written sector L2 must
        fill from DRAM misses; loads and atomics miss where DRAM serves them. Nsight Compute's
        ``lts__t_sector_hit_rate`` counts the same way. (Before any access is analysed: bytes
        L2 served over bytes that reached it.)"""
        if self.l2_accessed_bytes > 0:
            return max(0.0, 1.0 - self.l2_missed_bytes / self.l2_accessed_bytes)
        reached = self.l2_bytes + self.dram_read_bytes + self.dram_write_bytes
        return self.l2_bytes / reached if reached else None

    def summary(self) -> str:
        """The launch's traffic in one line: bytes per level, L2 hit rate, limiting level."""
        def mb(x: float) -> str:
            return f"{x / 1e6:,.1f} MB"

        hit = self.l2_hit_rate
        text = (f"memory (whole launch, global accesses): L1 {mb(self.l1_bytes)}, L2 {mb(self.l2_bytes)}"
                f" (hit rate {f'{100 * hit:.0f} %' if hit is not None else '—'}), DRAM read "
                f"{mb(self.dram_read_bytes)}, written {mb(self.dram_write_bytes)}; limiting level: "
                f"{self.limiting_level or '—'}")
        if self.unanalysed:
            text += f" ({self.unanalysed} access(es) without a pattern not counted)"
        return text

    def as_dict(self) -> dict[str, Any]:
        return {"l1_bytes": self.l1_bytes, "l2_bytes": self.l2_bytes, "dram_read_bytes": self.dram_read_bytes,
                "dram_write_bytes": self.dram_write_bytes, "l2_hit_rate": self.l2_hit_rate,
                "dram_scattered_bytes": self.dram_scattered_bytes, "l1_hit_rate": self.l1_hit_rate,
                "limiting_level": self.limiting_level, "unanalysed_accesses": self.unanalysed}


def _warp_requests(a: Any, executions: Mapping[int, float], warps_in_grid: int) -> float:
    """The launch's warp requests of access ``a``: one per warp execution, less the executed
    warps whose lanes are all off (they issue none)."""
    return float(executions.get(a.index, 0.0)) * warps_in_grid * float(a.issuing_share)


def _local_l1(a: Any, sm: SmContext, executions: Mapping[int, float], warps_in_grid: int) -> tuple[float, float]:
    """(sector bytes L1 held, sector bytes asked) of a local access the cache simulation replayed;
    (0, 0) without it."""
    sim = simulated(a, sm)
    if sim is None or a.sectors_per_request is None:
        return 0.0, 0.0
    asked = _warp_requests(a, executions, warps_in_grid) * a.sectors_per_request * SECTOR
    return asked * sim.shares(a.index)[0], asked


def kernel_traffic(report: MemoryReport, profile: Any, sm: SmContext, executions: Mapping[int, float],
                   warps_in_grid: int, sms: int = 1) -> KernelTraffic:
    """The launch's traffic. ``executions``: how often one warp runs each instruction index;
    ``warps_in_grid``: warps of the whole launch; ``sms``: SMs the busy cycles are spread over."""
    fallback = profile.global_memory_lambdas(1.0)
    l1 = l2 = dram_read = dram_write = scattered = requested = store_l1 = 0.0
    l2_accessed = l2_missed = 0.0      # sector bytes that reach L2, and of them those it had not
    busy = {"L1": 0.0, "L2": 0.0, "DRAM": 0.0}
    per_access: dict[int, AccessTraffic] = {}
    unanalysed = 0
    # Bytes: blocks of the first wave that read the same sector at once all wait for DRAM, but L2
    # merges their misses into one read of it: the bytes see no first-wave misses
    # (``SmContext.waves`` 0), the busy cycles do.
    by_bytes = replace(sm, waves=0.0) if sm.waves else sm
    for a in report.accesses:
        if a.space is MemorySpace.LOCAL:
            # local data reaches L2 only as L1 lets it; its L1 lookups count in the hit rate as
            # Nsight Compute's l1tex__t_sector_hit_rate counts them (where the replay has them)
            hits, asked = _local_l1(a, sm, executions, warps_in_grid)
            requested += asked
            if a.kind == AccessKind.LOAD:
                l1 += hits
            else:
                store_l1 += hits
            continue
        if a.space is not MemorySpace.GLOBAL:
            continue
        shares = level_shares(a, profile, sm)
        if shares is None:
            unanalysed += 1
            continue
        moved_shares = shares if by_bytes is sm else level_shares(a, profile, by_bytes) or shares
        requests = _warp_requests(a, executions, warps_in_grid)
        sector_bytes = requests * (a.sectors_per_request or 0.0) * SECTOR
        requested += sector_bytes
        l1 += sector_bytes * moved_shares.l1
        l2 += sector_bytes * moved_shares.l2
        factor = dram_fetch_factor(a, sm)
        moved = sector_bytes * moved_shares.dram * factor
        sim = simulated(a, sm)
        table = _scattered_lanes(a, scattered_store(a, profile), requests)
        # the measured table prices the scatter alone in L2; with the caches simulated, the replay
        # also sees the launch's other data evicting it: the larger of the two
        if table is not None and (sim is None or sum(table) >= moved):
            read, written = table
            moved = read + written
            dram_read += read
            dram_write += written
            scattered += moved
            l2_accessed += requests * (a.active_lanes or 0.0) * SECTOR
            l2_missed += read
        elif a.kind == AccessKind.LOAD:
            dram_read += moved
            l2_accessed += sector_bytes * (1.0 - moved_shares.l1)
            l2_missed += sector_bytes * moved_shares.dram
            if a.method != "affine":
                # a gather (addresses not affine in the indices): a factor of 2 is a 64-byte
                # read per sector, every fetch at a random place. Affine isolated sectors (a
                # tile's halo column) walk DRAM rows in order and load it as streams do.
                scattered += moved * min(1.0, max(0.0, factor - 1.0))
        elif sim is not None:
            # the simulated share of the dirty bytes that reach DRAM while the kernel runs, each
            # partly written sector read first
            written = sector_bytes * moved_shares.dram
            dram_write += written
            dram_read += moved - written
            l2 += sector_bytes * (1.0 - moved_shares.dram)
            if random_sector_cycles_per_byte(a, profile) is not None:
                scattered += moved      # a scatter's fills and write-backs: random single sectors
            l2_accessed += sector_bytes
            if a.kind == AccessKind.STORE:
                simulated_shares = sim.shares(a.index)
                store_l1 += sector_bytes * (simulated_shares[0] if simulated_shares else 0.0)
                l2_missed += moved - written          # the fills of partly written sectors
            else:
                l2_missed += written
        else:
            # what L2 still holds dirty at the end is written after the kernel: L2 traffic now
            held = 1.0 - write_back_share(a, profile)
            filled = sector_bytes * moved_shares.dram * a.fill_share * (1.0 - held)
            moved *= 1.0 - held
            l2 += sector_bytes * moved_shares.dram * held
            dram_read += filled
            dram_write += moved - filled
            l2_accessed += sector_bytes
            l2_missed += filled if a.kind == AccessKind.STORE else sector_bytes * moved_shares.dram
        times = level_times(a, shares, profile, sm, fallback)
        for level, cycles in times.items():
            busy[level] += cycles * requests / max(sms, 1)
        miss = 1.0 - shares.l1
        per_access[a.index] = AccessTraffic(a.index, requests, shares.l1, shares.l2 / miss if miss > 0 else 0.0,
                                            moved, max(times, key=lambda level: times[level]))
    return KernelTraffic(l1, l2, dram_read, dram_write, busy, per_access, unanalysed, scattered, requested,
                         store_l1, l2_accessed, l2_missed)


def _scattered_lanes(a: AccessInfo, lane: Any, requests: float) -> tuple[float, float] | None:
    """DRAM bytes (read, written) of a scattered store or atomic's lanes, each lane's sector fill
    and write-back as measured at its buffer's footprint (``lane``: a ``ScatteredStore``; None:
    not a scatter). The table has one store per slot; with more (a histogram's many adds to few
    bins) the buffer's compulsory bytes are shared by as many stores."""
    if lane is None:
        return None
    lanes = requests * (a.active_lanes or 0.0)
    slots = (a.buffer_footprint_bytes or 0.0) / max(a.width_bytes, 1)
    lanes_per_slot = min(1.0, slots / lanes) if lanes > 0 else 1.0
    return lanes * lane.read_bytes * lanes_per_slot, lanes * lane.write_bytes * lanes_per_slot


def traffic_rows(report: MemoryReport, traffic: KernelTraffic) -> list[dict[str, Any]]:
    """One display row per analysed access (global, shared, local, constant): its pattern and, for
    global ones, where its sectors are served over the launch (the window's Memory tab).
    Instruction numbers are 1-based, as in the BLOCK table."""
    rows = []
    for a in report.accesses:
        t = traffic.accesses.get(a.index)
        rows.append({
            "#": a.index + 1, "instruction": a.text, "space": a.space.value, "kind": a.kind,
            "sectors/req": a.sectors_per_request, "lines/req": a.lines_per_request,
            "L1 hit %": None if t is None else 100.0 * t.l1_hit,
            "L2 hit %": None if t is None else 100.0 * t.l2_hit,
            "DRAM MB": None if t is None else t.dram_bytes / 1e6,
            "limit": "" if t is None else t.limiting_level,
            "note": pattern_note(a),
        })
    return rows
