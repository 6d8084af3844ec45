"""The memory-level model (engine/memory/hierarchy.py): which level serves each access, against
what Nsight Compute measured on suite v2 kernels, and how capacity and busy SMs change it."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from pathlib import Path

import pytest

from engine.analysis import analyze_kernel
from engine.inputs import resolve_inputs
from engine.memory import analyze_memory
from engine.memory.hierarchy import SmContext, global_access_cost, l1_data_bytes, level_shares
from engine.pipeline.adapter import _find_function

V2 = Path(__file__).resolve().parents[1] / "samples" / "v2"


def _report(family: str, config: str, declared: bool = True):
    """The memory report of a suite v2 launch; ``declared=False`` drops its [launch.data] (stand-ins)."""
    inputs = resolve_inputs(V2 / "ptx" / f"{family}.sm_90.ptx", profile="h100",
                            launch_file=V2 / f"{family}.launch.toml", config=config)
    launch = inputs.launch if declared else replace(inputs.launch, data={})
    analysis = analyze_kernel(_find_function(inputs.module, inputs.kernel_name), launch, inputs.module)
    return analyze_memory(analysis, launch, inputs.module), inputs.profile


def _load_hit_share(report, profile, sm: SmContext) -> float:
    """L1 hits over all requested load sectors, weighted by sectors per request."""
    loads = [a for a in report.accesses if a.kind == "load" and a.sectors_per_request is not None]
    hits = sum(level_shares(a, profile, sm).l1 * a.sectors_per_request for a in loads)
    return hits / sum(a.sectors_per_request for a in loads)


def test_row_walk_hits_l1_as_measured() -> None:
    # one thread per row, four floats per iteration: a new 32-byte sector every other iteration,
    # so 1 of 8 requested sectors misses. Nsight Compute on the H100: L1 sector hit rate 87.5 %.
    report, profile = _report("strided", "row_sum/b128")
    assert _load_hit_share(report, profile, SmContext(resident_blocks=2)) == pytest.approx(0.875, abs=0.01)


def test_column_walk_has_no_l1_reuse() -> None:
    # consecutive columns per warp, one row per step: every sector is new (ncu: 0.0 % L1 hits)
    report, profile = _report("strided", "col_sum/b128")
    assert _load_hit_share(report, profile, SmContext(resident_blocks=2)) == pytest.approx(0.0, abs=1e-6)


def test_capacity_and_shared_memory_shrink_l1_hits() -> None:
    report, profile = _report("strided", "row_sum/b128")
    access = next(a for a in report.accesses if a.kind == "load" and a.block_miss and a.block_miss > 0.1)
    roomy = level_shares(access, profile, SmContext(resident_blocks=1))
    assert access.block_footprint_bytes and access.block_footprint_bytes > 0
    # resident blocks whose working sets exceed what is left of L1 beside 200 KB of shared memory
    blocks = 4
    crowded_sm = SmContext(resident_blocks=blocks, shared_bytes_per_block=50_000)
    left = l1_data_bytes(profile, crowded_sm)
    # the driver carves 228 KB for the blocks' 204 KB; 256 - 228 - 12 KB is left (measured)
    assert left == (256 - 228 - 12) * 1024
    crowded = level_shares(access, profile, crowded_sm)
    need = blocks * access.block_footprint_bytes
    assert crowded.l1 == pytest.approx(roomy.l1 * min(1.0, left / need))
    assert crowded.l1 < roomy.l1 and crowded.dram == roomy.dram
    assert crowded.l1 + crowded.l2 + crowded.dram == pytest.approx(1.0)


def test_stores_and_cg_loads_are_not_served_by_l1() -> None:
    report, profile = _report("strided", "row_sum/b128")
    store = next(a for a in report.accesses if a.kind == "store")
    assert level_shares(store, profile, SmContext()).l1 == 0.0
    load = next(a for a in report.accesses if a.kind == "load" and a.block_miss is not None and a.block_miss < 0.5)
    bypass = dataclasses.replace(load, text=load.text.replace("ld.global.nc", "ld.global.cg"), l1_cached=False)
    assert level_shares(load, profile, SmContext()).l1 > 0.9
    assert level_shares(bypass, profile, SmContext()).l1 == 0.0


def test_a_grid_smaller_than_the_gpu_gets_more_dram_bandwidth_per_sm() -> None:
    report, profile = _report("strided", "col_sum/b128")
    load = next(a for a in report.accesses if a.kind == "load" and a.sectors_per_request is not None)
    shares = level_shares(load, profile, SmContext())
    fallback = profile.global_memory_lambdas(1.0)
    full, _ = global_access_cost(load, shares, profile, SmContext(active_sm_share=1.0), fallback)
    tenth, _ = global_access_cost(load, shares, profile, SmContext(active_sm_share=0.1), fallback)
    memory = profile.pipeline.memory
    assert full == pytest.approx(memory["dram_lam"])         # a coalesced line from DRAM, all SMs busy
    assert tenth == pytest.approx(max(memory["dram_lam"] * 0.1, memory["l2_lam"]))


def test_loaded_indices_get_a_lane_pattern_from_stand_in_values() -> None:
    from engine.memory.hierarchy import dram_fetch_factor

    report, _ = _report("gather", "gather_f32/rand-b128", declared=False)
    gather = next(a for a in report.accesses if a.kind == "load" and a.method == "lanes")
    assert gather.sectors_per_request == 32 and gather.lines_per_request == 32   # src[idx[i]] scatters
    assert dram_fetch_factor(gather) == 2.0                                       # 64 B per isolated sector
    coalesced = next(a for a in report.accesses if a.kind == "load" and a.method == "affine")
    assert dram_fetch_factor(coalesced) == 1.0
    # a CSR row start loaded once per warp stays warp-uniform: col[rowptr[r] + lane] is coalesced
    spmv, _ = _report("spmv", "spmv_csr_vector/b128", declared=False)
    row_walk = [a for a in spmv.accesses if a.kind == "load" and a.method == "lanes"
                and a.sectors_per_request is not None and a.sectors_per_request <= 5]
    assert row_walk


def test_divergent_constant_loads_serialise_and_broadcasts_do_not() -> None:
    from engine.mechanisms import without
    from engine.memory import memory_cost_overrides
    from engine.units import MemorySpace

    lookup, profile = _report("constmem", "const_table_lookup/b128")
    walk = [a for a in lookup.accesses if a.space is MemorySpace.CONST]
    assert walk and all(not a.uniform_address and a.distinct_addresses == 32 for a in walk)
    costs = memory_cost_overrides(lookup, profile)
    per_address = profile.pipeline.memory["constant_divergent_cycles"]
    assert all(costs[a.index][0] == pytest.approx(32 * per_address) for a in walk)
    # Horner's coefficients: every lane reads the same one (a broadcast), whatever the loop does
    poly, _ = _report("constmem", "const_poly/b128")
    coefficients = [a for a in poly.accesses if a.space is MemorySpace.CONST]
    assert coefficients and all(a.uniform_address for a in coefficients)
    # ... one constant-cache access each, at the LDC rate measured on that kernel
    uniform = profile.pipeline.memory["constant_uniform_lam"]
    poly_costs = memory_cost_overrides(poly, profile)
    assert all(poly_costs[a.index][0] == pytest.approx(uniform) for a in coefficients)
    assert per_address > uniform > 1.0
    with without(["constant_serialisation"]):
        assert not any(a.index in memory_cost_overrides(lookup, profile) for a in walk)
        assert not any(a.index in memory_cost_overrides(poly, profile) for a in coefficients)


def test_a_stream_every_warp_reads_at_once_waits_for_the_fill() -> None:
    # nbody_naive: every warp of the SM reads pos[j] at once. ncu: 93 % L1 hits, yet 203 cycles
    # per iteration against 72 for the shared-memory version: the hits wait for the line the
    # first warp asked for. Its latency is the fill's (L2), not a mean weighted by the hits.
    from engine.mechanisms import without

    report, profile = _report("nbody", "nbody_naive/b128")
    sm = SmContext(resident_blocks=2)
    stream = next(a for a in report.accesses
                  if a.kind == "load" and a.uniform_address and a.sectors_per_request is not None)
    assert stream.buffer_footprint_bytes == pytest.approx(32768 * 16, rel=0.01)
    assert stream.buffer_footprint_bytes > l1_data_bytes(profile, sm)
    shares = level_shares(stream, profile, sm)
    assert shares.l1 >= 0.75
    fallback = (1.0, 500.0)
    _, waited = global_access_cost(stream, shares, profile, sm, fallback)
    l2_latency = profile.pipeline.memory["l2_Lam"]
    assert waited >= l2_latency
    with without(["inflight_hits"]):
        _, averaged = global_access_cost(stream, shares, profile, sm, fallback)
    assert averaged < 0.5 * l2_latency
    # a buffer that fits in L1 (a table read over and over) keeps its hits' L1 latency
    table = replace(stream, buffer_footprint_bytes=1024.0)
    _, small = global_access_cost(table, shares, profile, sm, fallback)
    assert small == pytest.approx(averaged)


def test_a_scatter_add_into_a_buffer_that_fits_in_l2_reads_it_from_dram_once() -> None:
    # out[idx[i]] += in[i] over 16M threads, idx uniform over 1M slots (4 MB): Nsight Compute on
    # the H100 measured 141 MB of DRAM traffic (the two 64 MB input streams and `out` once), not
    # a sector per atomic (537 MB)

    def atomic_dram_share() -> float:
        report, profile = _report("atomics", "atomic_spread_global/b128")
        atomic = next(a for a in report.accesses if a.kind == "atomic")
        return level_shares(atomic, profile, SmContext(resident_blocks=16, waves=62.0)).dram

    assert atomic_dram_share() < 0.03      # 4 MB of 537 MB, and the first wave's misses


def test_spread_atomics_take_l2_atomic_units_per_lane() -> None:
    from engine.memory.hierarchy import level_times

    report, profile = _report("atomics", "atomic_spread_global/b128")
    atomic = next(a for a in report.accesses if a.kind == "atomic")
    sm = SmContext(resident_blocks=16, waves=62.0)
    times = level_times(atomic, level_shares(atomic, profile, sm), profile, sm, profile.global_memory_lambdas(1.0))
    per_lane = profile.pipeline.memory["atomic_distinct_lane_lam"]
    assert times["L2"] == pytest.approx(32 * per_lane)           # 32 random lanes, 32 sectors
    # a grid on half the SMs has twice their share of the atomic units
    half = dataclasses.replace(sm, active_sm_share=0.5)
    assert level_times(atomic, level_shares(atomic, profile, half), profile, half,
                       profile.global_memory_lambdas(1.0))["L2"] == pytest.approx(16 * per_lane)

