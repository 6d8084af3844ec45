"""Model inputs from a memory report: Many-BSP ``n_ma`` and Pipeline-simulator (λ, Λ)."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from typing import Any

from engine.mechanisms import enabled
from engine.memory.access_report import AccessInfo, MemoryReport
from engine.memory.hierarchy import (
    SECTORS_PER_LINE,
    SmContext,
    dram_wait_share,
    global_access_cost,
    l1_data_bytes,
    level_shares,
    level_times,
    simulated,
)
from engine.units import AccessKind, MemorySpace, Unit


def n_ma_by_instruction(report: MemoryReport) -> dict[int, int]:
    """Many-BSP ``n_ma`` of each analysed global access: the 128-byte lines a warp request
    touches (1 when it fits one line). Lines, not sectors, because 000 counts a coalesced
    4-byte access as 1 and an 8-byte one as 2: exactly its lines. Unknown accesses are absent
    (the caller keeps the profile's default)."""
    return {
        a.index: max(1, math.ceil(a.lines_per_request - 1e-9))
        for a in report.accesses
        if a.space is MemorySpace.GLOBAL and a.lines_per_request is not None
    }




# A shared-memory atomic reads its word and writes it back: two wavefronts of the shared-memory
# data path where a load takes one.
SHARED_ATOMIC_WAVEFRONTS = 2


def cas_retry_passes(lanes: float, contenders: int) -> tuple[float, float]:
    """(mean, last) passes per warp of a compare-and-swap retry loop in which ``contenders`` warps,
    ``lanes`` active lanes each, update one address together. A pass reads the word, computes the
    new value and swaps it in if the word is unchanged: of all the swaps that follow one read,
    only the first lane's succeeds (a warp's lanes run one after another, and the first success
    changes the word for every other warp). So each pass of the group retires one lane; every
    warp keeps passing until its last lane is through, and a warp leaves once it is: the k-th
    warp to finish made ``lanes × k`` passes, ``lanes × (contenders + 1) / 2`` on average, and the
    group ends after ``lanes × contenders`` passes."""
    lanes = max(1.0, float(lanes))
    contenders = max(1, int(contenders))
    return lanes * (contenders + 1) / 2.0, lanes * contenders


def retry_passes(report: MemoryReport, sm: SmContext, retried: Collection[int]) -> dict[int, tuple[float, float]]:
    """(mean, last) passes per execution of each shared-memory atomic that ptxas made into a retry
    loop (``retried``: PTX instruction indices, from the SASS map). Where the sampled warps ran it,
    the passes follow from their addresses, word by word
    (:func:`engine.execution.recorder.cas_contention`); otherwise lanes on one address contend
    with the block's other warps (:func:`cas_retry_passes`) and lanes on distinct addresses pass
    once. A global atomic's retry loop (rare: float adds
    are native in global memory on sm_75 and newer) is not costed: it keeps the serialisation rule."""
    out: dict[int, tuple[float, float]] = {}
    if not enabled("cas_retry"):
        return out
    for a in report.accesses:
        if a.index not in retried or a.kind != AccessKind.ATOMIC or a.space is not MemorySpace.SHARED:
            continue
        lanes = a.active_lanes if a.active_lanes is not None and a.mask_note is None else 32.0
        if a.cas_passes is not None:        # the run's addresses: every word's contention
            out[a.index] = a.cas_passes
        elif a.uniform_address:
            out[a.index] = cas_retry_passes(lanes, max(1, round(sm.warps_per_block * a.issue_share)))
        else:
            out[a.index] = (1.0, 1.0)
    return out


def _retry_loop_cost(profile: Any, passes: tuple[float, float], bank_degree: float | None = None
                     ) -> tuple[float, float]:
    """(λ, Λ) of a retry-loop atomic. Each pass keeps the shared-memory path busy for its load
    and its swap (:data:`SHARED_ATOMIC_WAVEFRONTS`); the load's bank conflicts fall as lanes
    retire, from the request's ``bank_degree`` wavefronts to one, about (degree + 1) / 2 a pass
    (measured: 18.5 wavefronts a pass for 32 words of one bank, 3 for one word). A warp waits for
    its own passes, one after another: the measured ``shared_cas_pass_cycles`` each (8 warps of
    32 lanes on one word: 144 passes by the rule, 13,694 cycles a warp; measured 150 and 13,115);
    without that figure, the chain load → add → swap → compare from the profile's latencies."""
    shared = profile.cost_for_opcode("ld.shared.b32", Unit.LDST, space=MemorySpace.SHARED, width_bytes=4)
    alu = profile.cost_for_opcode("add.rn.f32", Unit.ALU)
    degree = max(1.0, bank_degree) if bank_degree is not None else 1.0
    per_pass_lam = shared.lam * (SHARED_ATOMIC_WAVEFRONTS + (degree + 1.0) / 2.0)
    pipeline = getattr(profile, "pipeline", None)
    measured = pipeline.memory.get("shared_cas_pass_cycles") if pipeline is not None else None
    mean, last = passes
    lam = mean * per_pass_lam
    if measured:
        return lam, max(lam, mean * float(measured))
    return lam, max(lam, last * (2 * shared.Lam + 2 * alu.Lam))


def memory_cost_overrides(report: MemoryReport, profile: Any, sm: SmContext | None = None,
                          passes: Mapping[int, tuple[float, float]] | None = None,
                          dram_waits: dict[int, float] | None = None,
                          levels: dict[int, tuple[float, float]] | None = None,
                          copies: Collection[int] = ()) -> dict[int, tuple[float, float]]:
    """(λ, Λ) per analysed access for the Pipeline simulator.

    Global: each request's sectors are split between L1, L2 and DRAM and charged at the slowest
    level (:mod:`engine.memory.hierarchy`; ``sm`` describes the launch on one SM, by default one
    block of a GPU-filling grid). Shared: D = extra wavefronts = mean degree − 1.

    Atomics on one address (:attr:`AccessInfo.uniform_address`) serialise: in shared memory each
    active lane is one more wavefront; in global memory every SM's atomics queue at the one L2
    slice that owns the address (:func:`same_address_cycles` GPU cycles per warp request), so one
    SM's warp instruction takes that × SMs of its LDST pipeline (all SMs contend alike). Constant
    loads whose lanes share an address cost the measured LDC rate (``constant_uniform_lam``).

    Atomics that ptxas made into compare-and-swap retry loops cost their ``passes``
    (:func:`retry_passes`).

    ``dram_waits``, when given, receives for each global access charged by cache level the share
    of its warp requests that wait for DRAM (:func:`~engine.memory.hierarchy.dram_wait_share`),
    where that share is above 0: the part of its Λ that grows when the GPU loads DRAM.

    ``levels``, when given, receives for each asynchronous copy (``copies``: cp.async
    instructions) charged by cache level the cycles a warp request keeps L2 and DRAM busy for its
    SM (per warp that runs it), and its λ is then its L1 time alone: the simulator queues the copy
    at each level beside the LSU pipe (StaticInstruction.level_lam). Otherwise λ is the slowest
    level's time (one memory pipe)."""
    sm = sm or SmContext()
    degrees = {a.index: a.bank_conflict_mean for a in report.accesses}
    out: dict[int, tuple[float, float]] = {
        index: _retry_loop_cost(profile, counts, degrees.get(index)) for index, counts in (passes or {}).items()}
    pipeline = getattr(profile, "pipeline", None)
    serial = pipeline.memory.get("atomic_same_address_cycles") if pipeline is not None else None
    request = pipeline.memory.get("atomic_same_address_request_cycles") if pipeline is not None else None
    divergent_const = pipeline.memory.get("constant_divergent_cycles") if pipeline is not None else None
    uniform_const = pipeline.memory.get("constant_uniform_lam") if pipeline is not None else None
    sm_count = getattr(getattr(profile, "device", None), "sm_count", 1) or 1
    gathers_l2: dict[int, float] = {}     # lone-line gathers: L2 cycles per warp request
    for a in report.accesses:
        if a.index in out:
            continue
        # Lanes that run the atomic: known from the masks, else 1 (at least one atomic per warp
        # instruction: a guard on loaded data, such as a ballot's leader, leaves it unknown).
        lanes = a.active_lanes if a.active_lanes is not None and a.mask_note is None else 1.0
        serialised = a.kind == AccessKind.ATOMIC and a.uniform_address and enabled("atomic_serialisation")
        if serialised and a.space is MemorySpace.SHARED:
            out[a.index] = profile.shared_memory_lambdas(max(lanes - 1.0, 0.0))
        elif serialised and a.space is MemorySpace.GLOBAL and serial:
            lam, Lam = profile.global_memory_lambdas(1.0)
            charged = max(lam, same_address_cycles(lanes, serial, request) * sm_count)
            out[a.index] = (charged, Lam + (charged - lam))
        elif a.space is MemorySpace.CONST and divergent_const and not a.uniform_address \
                and a.distinct_addresses and enabled("constant_serialisation"):
            base = profile.cost_for_opcode("ld.const.f32", Unit.LDST, space=MemorySpace.CONST, width_bytes=4)
            charged = max(base.lam, a.distinct_addresses * divergent_const)
            out[a.index] = (charged, base.Lam + (charged - base.lam))
        elif a.space is MemorySpace.CONST and uniform_const and a.uniform_address \
                and enabled("constant_serialisation"):
            # an LDC (a constant load ptxas folds into its consumer is not issued at all)
            base = profile.cost_for_opcode("ld.const.f32", Unit.LDST, space=MemorySpace.CONST, width_bytes=4)
            charged = max(base.lam, float(uniform_const))
            out[a.index] = (charged, base.Lam + (charged - base.lam))
        elif a.space is MemorySpace.LOCAL and a.lines_per_request is not None and enabled("local_memory"):
            local = local_access_cost(a, profile, sm)
            if local is not None:
                out[a.index] = local
        elif a.space is MemorySpace.SHARED and a.bank_conflict_mean is not None:
            out[a.index] = profile.shared_memory_lambdas(max(a.bank_conflict_mean - 1.0, 0.0))
        elif a.space is MemorySpace.GLOBAL and a.sectors_per_request is not None:
            shares = level_shares(a, profile, sm)
            if shares is not None:
                fallback = profile.global_memory_lambdas(1.0)
                cost = global_access_cost(a, shares, profile, sm, fallback)
                if levels is not None and a.index in copies:
                    times = level_times(a, shares, profile, sm, fallback, fills=False)
                    cost = (times["L1"], cost[1])
                    levels[a.index] = (times["L2"] * a.issuing_share, times["DRAM"] * a.issuing_share)
                out[a.index] = _issued_share(a, cost, profile)
                if dram_waits is not None and (wait := dram_wait_share(a, shares, profile, sm)) > 0:
                    dram_waits[a.index] = wait * a.issuing_share
                if _lone_line_gather(a):
                    gathers_l2[a.index] = level_times(a, shares, profile, sm, fallback)["L2"] * a.issuing_share
    _gathers_beside_atomics(report, out, gathers_l2, frozenset(passes or ()))
    return out


def _lone_line_gather(a: AccessInfo) -> bool:
    """A global load whose requests want one or two sectors of each line they touch (a gather's
    words, each on a line of its own): L2 serves it a line request at a time."""
    lines = a.lines_per_request or 0.0
    return (a.kind == AccessKind.LOAD and lines > 1.0
            and (a.sectors_per_request or 0.0) <= 2.0 * lines)


def _gathers_beside_atomics(report: MemoryReport, out: dict[int, tuple[float, float]],
                            gathers_l2: Mapping[int, float], retried: frozenset[int]) -> None:
    """L2's slices serve a gather's line requests and the atomics' lanes alike: a RED per lane
    beside a gather of a word per lane takes as long as the two apart, added (``l2_kinds.cu``,
    k_mixed against k_gather and k_red at 8 MB: 4.90 SM cycles per pair, 2.04 + 2.98 alone;
    bench/micro/results/h100-2026-11-28-l2-kinds-schedulers). The simulator runs global atomics
    on L2's atomic units and loads on the SM's memory pipe, side by side; so the L2 time of the
    kernel's lone-line gathers (per the warps that run them) joins the atomics' λ there, in
    proportion to each atomic's own. Needs the run's execution counts; with mechanism
    ``atomic_units`` off the atomics are on the memory pipe with the loads already."""
    execution = report.execution
    executed = getattr(execution, "executed", None)
    if not gathers_l2 or executed is None or not execution.ok or not enabled("atomic_units"):
        return
    atomics = [a.index for a in report.accesses
               if a.kind == AccessKind.ATOMIC and a.space is MemorySpace.GLOBAL and a.index in out
               and a.index not in retried and not a.uniform_address and a.index < len(executed)]
    busy = sum(float(executed[i]) * out[i][0] for i in atomics)
    loads = sum(float(executed[i]) * t for i, t in gathers_l2.items() if i < len(executed))
    if busy <= 0 or loads <= 0:
        return
    factor = 1.0 + loads / busy
    for i in atomics:
        lam, Lam = out[i]
        out[i] = (lam * factor, Lam + lam * (factor - 1.0))


def _issued_share(a: Any, cost: tuple[float, float], profile: Any) -> tuple[float, float]:
    """The (λ, Λ) of a warp's global access averaged over the warps that run it: the run found
    a share of them (``issue_share``) with a lane accessing memory; the others (every lane
    predicated off, or a ``cp.async`` with src-size 0 that only zero-fills shared memory) make
    no request and cost what a shared access without conflicts costs."""
    share = a.issuing_share
    if share >= 1.0:
        return cost
    empty = profile.shared_memory_lambdas(0.0)
    return (share * cost[0] + (1.0 - share) * empty[0], share * cost[1] + (1.0 - share) * empty[1])


def local_access_cost(a: Any, profile: Any, sm: SmContext) -> tuple[float, float] | None:
    """(λ, Λ) of a local-memory request of ``a.lines_per_request`` lines, from the profile's
    measured local rates (None when it has none: the flat ``local_lam`` stays).

    A load L1 serves costs ``local_l1_lam`` per line (measured with 32 bytes per thread); one it
    misses, the rate measured with 512 KB per SM (``local_lam``) and L2's latency. The share L1
    serves comes from the cache simulation where it replayed the access, else it is all while
    the local data of the SM's resident blocks fits beside their shared memory and none beyond.
    A store writes through to L2 whatever L1 holds, sector by sector: ``a.sectors_per_request``
    at a quarter of ``local_store_lam`` (measured per line of four sectors, every lane storing at
    one offset), or of ``local_store_partial_lam`` when the sectors are partly written (some
    lanes, or lanes at different offsets). A store does not hold the warp."""
    memory = profile.pipeline.memory
    lines = max(float(a.lines_per_request), 1.0)
    if a.kind == AccessKind.LOAD:
        in_l1, beyond, hit = memory.get("local_l1_lam"), memory.get("local_lam"), memory.get("local_Lam")
        if in_l1 is None or beyond is None or hit is None:
            return None
        sim = simulated(a, sm)
        if sim is not None:
            # the replayed requests say which share L1 served (the block's own stores kept it)
            kept = sim.shares(a.index)[0]
        else:
            footprint = (a.block_footprint_bytes or 0.0) * sm.resident_blocks
            kept = 1.0 if footprint <= l1_data_bytes(profile, sm) else 0.0
        per_line = kept * in_l1 + (1.0 - kept) * beyond
        latency = kept * hit + (1.0 - kept) * memory.get("l2_Lam", hit)
        return lines * per_line, latency + (lines - 1) * per_line
    full = memory.get("local_store_lam")
    if full is None:
        return None
    # lanes that cannot be told are taken as all active (AccessInfo.mask_note)
    every_lane = a.mask_note is not None or (a.active_lanes or 0.0) >= 32 - 1e-9
    per_line = full if a.uniform_address and every_lane else memory.get("local_store_partial_lam", full)
    # the write to L2 moves sectors: the measured rates are per line of four
    sectors = a.sectors_per_request if a.sectors_per_request is not None else lines * SECTORS_PER_LINE
    lam = max(sectors, 1.0) * per_line / SECTORS_PER_LINE
    return lam, lam


def same_address_cycles(lanes: float, per_lane: float, single: float | None = None) -> float:
    """GPU cycles one warp request of ``lanes`` active lanes holds the L2 slice of one address.
    Measured at both ends: ``per_lane`` per lane when all 32 lanes add (every thread of a grid),
    ``single`` for a request with one lane (a warp's leader); between them, linear in the lanes.
    Without ``single``, every lane costs ``per_lane``."""
    if single is None:
        return lanes * per_lane
    full = 32 * per_lane
    return single + (full - single) * max(lanes - 1.0, 0.0) / 31


def executions_per_warp(analysis: Any, index: int) -> int:
    """How often one warp executes an instruction: the product of its enclosing loops' trip
    counts (unknown trip counts count once)."""
    n, cfg = 1, analysis.cfg
    loop = cfg.loop_of(cfg.block_of(index))
    while loop is not None:
        trip = analysis.trip_counts.get(loop.key)
        n *= trip.value if trip is not None and trip.value is not None else 1
        loop = cfg.loop_by_header(loop.parent) if loop.parent is not None else None
    return n


def kernel_memory_summary(report: MemoryReport, analysis: Any) -> dict[str, float | None]:
    """Kernel-wide figures comparable with Nsight Compute's l1tex metrics: global sectors per
    request of loads and of stores, and shared bank conflicts (extra wavefronts) per request,
    each weighted by how often every access issues a request (its executions, times the share of
    them with an active lane). None where an access of that kind has no pattern (the figure
    would be a guess)."""
    def mean(accesses: list[AccessInfo], value: Callable[[AccessInfo], float | None]) -> float | None:
        accesses = [a for a in accesses if a.issue_share > 0]
        values = [value(a) for a in accesses]
        known = [v for v in values if v is not None]
        if not accesses or len(known) < len(values):
            return None
        weights = [executions_per_warp(analysis, a.index) * a.issue_share for a in accesses]
        return sum(w * v for w, v in zip(weights, known, strict=True)) / sum(weights)

    def kind(space: MemorySpace, load: bool) -> list[AccessInfo]:
        wanted = AccessKind.LOAD if load else AccessKind.STORE
        return [a for a in report.accesses if a.space is space and a.kind == wanted]

    def conflicts(a: AccessInfo) -> float | None:
        return None if a.bank_conflict_mean is None else a.bank_conflict_mean - 1

    return {
        "global_load_sectors_per_request": mean(kind(MemorySpace.GLOBAL, True), lambda a: a.sectors_per_request),
        "global_store_sectors_per_request": mean(kind(MemorySpace.GLOBAL, False), lambda a: a.sectors_per_request),
        "shared_load_conflicts_per_request": mean(kind(MemorySpace.SHARED, True), conflicts),
        "shared_store_conflicts_per_request": mean(kind(MemorySpace.SHARED, False), conflicts),
    }

