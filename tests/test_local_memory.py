"""Local memory (mechanism ``local_memory``): lines and sectors per request from how local memory
interleaves a warp's threads, the measured in-L1 / beyond-L1 / store rates, and local arrays
that ptxas keeps in registers."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

from engine.analysis import analyze_kernel
from engine.launch import Launch
from engine.mechanisms import without
from engine.memory import analyze_memory, memory_cost_overrides
from engine.memory.costs import local_access_cost
from engine.memory.hierarchy import SmContext
from engine.pipeline.adapter import in_registers, issue_scales
from engine.profiles import load_profile
from engine.ptx import parse_ptx
from engine.units import MemorySpace

KERNEL = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_p0)
{
  .local .align 4 .b8 __local_depot0[32];
  .reg .pred %p<4>; .reg .b32 %r<20>; .reg .b64 %rd<20>; .reg .f32 %f<8>;
  mov.u64 %rd9, __local_depot0;
  cvta.local.u64 %rd8, %rd9;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 1;
  st.local.f32 [%rd9+8], %f1;
  ld.local.v4.f32 {%f2, %f3, %f4, %f5}, [%rd9];
  ld.global.u32 %r3, [%rd8];
  and.b32 %r4, %r3, 7;
  mul.wide.u32 %rd10, %r4, 4;
  add.s64 %rd11, %rd9, %rd10;
  st.local.f32 [%rd11], %f1;
  setp.eq.u32 %p1, %r2, 0;
  @%p1 bra $L_end;
  st.local.f32 [%rd9+4], %f1;
$L_end:
  ret;
}
"""


@pytest.fixture(scope="module")
def report():
    module = parse_ptx(KERNEL)
    launch = Launch(grid=(4, 1, 1), block=(64, 1, 1))
    return analyze_memory(analyze_kernel(module.kernel("k"), launch, module), launch, module)


def local(report, kind: str) -> list:
    return [a for a in report.accesses if a.space is MemorySpace.LOCAL and a.kind == kind]


def test_one_line_per_word_when_every_lane_uses_the_same_offset(report):
    store, data_indexed, odd_lanes = local(report, "store")
    (vector,) = local(report, "load")
    # word w of lane l sits at (w × 32 + l) × 4: a 4-byte offset shared by the lanes is one line
    assert store.uniform_address and (store.lines_per_request, store.sectors_per_request) == (1, 4)
    # a 16-byte access is four words: four lines, each with a sector per 8 lanes
    assert (vector.lines_per_request, vector.sectors_per_request) == (4, 16)
    assert vector.block_footprint_bytes == 32 * 64
    # the even lanes branch away: half the lanes store, still one line and four sectors
    assert odd_lanes.active_lanes == pytest.approx(16) and odd_lanes.sectors_per_request == 4
    # an index loaded from memory: spread over the frame's 8 slots (8 × (1 − (7/8)^32) lines)
    assert data_indexed.method == "estimate" and not data_indexed.uniform_address
    assert data_indexed.lines_per_request == pytest.approx(8 * (1 - (7 / 8) ** 32))
    # per sector group of 8 lanes: 8 × (1 − (7/8)^8) distinct words
    assert data_indexed.sectors_per_request == pytest.approx(4 * 8 * (1 - (7 / 8) ** 8))


def test_measured_rates_by_case(report):
    h100 = load_profile("h100")
    m = h100.pipeline.memory
    sm = SmContext(resident_blocks=8)
    store, data_indexed, odd_lanes = local(report, "store")
    (vector,) = local(report, "load")
    assert local_access_cost(store, h100, sm) == (m["local_store_lam"], m["local_store_lam"])
    assert local_access_cost(odd_lanes, h100, sm)[0] == m["local_store_partial_lam"]
    # sectors, at the measured rate per line of four
    assert local_access_cost(data_indexed, h100, sm)[0] == pytest.approx(
        data_indexed.sectors_per_request * m["local_store_partial_lam"] / 4)
    # 64 threads × 32 B × 8 blocks fit in L1: four lines at the in-L1 rate, an L1 hit's latency
    lam, Lam = local_access_cost(vector, h100, sm)
    assert lam == pytest.approx(4 * m["local_l1_lam"]) and Lam == pytest.approx(m["local_Lam"] + 3 * m["local_l1_lam"])
    # the same data for blocks whose local data outgrows L1: the rate measured beyond it
    big = replace(vector, block_footprint_bytes=1 << 20)
    assert local_access_cost(big, h100, sm)[0] == pytest.approx(4 * m["local_lam"])
    # the mechanism off: every local access keeps the flat local_lam of the profile's rule
    with without(["local_memory"]):
        assert all(a.index not in memory_cost_overrides(report, h100, sm)
                   for a in report.accesses if a.space is MemorySpace.LOCAL)


def test_local_arrays_ptxas_keeps_in_registers_issue_their_sass():
    module = parse_ptx(KERNEL)
    launch = Launch(grid=(4, 1, 1), block=(64, 1, 1))
    analysis = analyze_kernel(module.kernel("k"), launch, module)
    stores = [i for i, c in enumerate(analysis.classifications) if c.space is MemorySpace.LOCAL and c.is_store]
    # a SASS map in which the first store became 6 moves and the second stayed an STL
    sass = SimpleNamespace(weights={stores[0]: 6.0, stores[1]: 1.0},
                           class_weights={stores[0]: {"alu": 6.0}, stores[1]: {"ldst": 1.0}})
    assert in_registers(analysis, sass) == {stores[0]}
    profile = load_profile("h100")
    scales = issue_scales(analysis, profile, {stores[0]: 6.0}, in_registers(analysis, sass))
    assert scales[stores[0]] == 6.0
    with without(["local_memory"]):
        assert in_registers(analysis, sass) == frozenset()


def test_the_cache_simulation_tells_what_l1_serves_of_local_loads(report):
    """Where the replay ran the local load, its L1 share (from the block's own stores kept in L1,
    and what L1 could hold) weighs the in-L1 and beyond-L1 rates, instead of all-or-nothing by
    footprint."""
    h100 = load_profile("h100")
    m = h100.pipeline.memory
    (vector,) = local(report, "load")
    executed = replace(vector, executed=True)

    class Replayed:
        def shares(self, index: int):
            return (0.25, 0.75, 0.0) if index == vector.index else None

    sm = SmContext(resident_blocks=8, simulated=Replayed())
    lam, Lam = local_access_cost(executed, h100, sm)
    per_line = 0.25 * m["local_l1_lam"] + 0.75 * m["local_lam"]
    assert lam == pytest.approx(4 * per_line)
    assert Lam == pytest.approx(0.25 * m["local_Lam"] + 0.75 * m["l2_Lam"] + 3 * per_line)
    # without the replay the footprint rule stands: this small frame fits, every line in L1
    assert local_access_cost(executed, h100, SmContext(resident_blocks=8))[0] == pytest.approx(4 * m["local_l1_lam"])
