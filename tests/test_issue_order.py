"""The order the cache replay issues the sampled requests in (engine.execution.issue_order): a
warp's loads that need no loaded value leave together, loads behind a loaded value after every
warp's ready ones."""

from __future__ import annotations

import numpy as np
import pytest

from engine.analysis import analyze_kernel
from engine.caches import CacheConfig, simulate_caches
from engine.execution import execute_launch
from engine.execution.issue_order import issue_order, load_waits
from engine.launch import Launch
from engine.ptx import parse_ptx

_HEAD = """
.version 8.0
.target sm_90
.address_size 64
"""


def _kernel(name: str, params: tuple[str, str], registers: str, body: str) -> str:
    """A kernel of two pointer parameters (%rd3, %rd4 once made global) whose thread's global
    index is %r4, then ``body``."""
    a, b = params
    return _HEAD + f"""
.visible .entry {name}(.param .u64 {a}, .param .u64 {b})
{{
  {registers}
  ld.param.u64 %rd1, [{a}];
  ld.param.u64 %rd2, [{b}];
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;
{body}  ret;
}}
"""


# out = src[idx[i]]: the second load's address is the first load's value
GATHER = _kernel("g", ("g_src", "g_idx"), ".reg .b32 %r<12>; .reg .b64 %rd<16>; .reg .f32 %f<4>;", """\
  mul.wide.s32 %rd5, %r4, 4;
  add.s64 %rd6, %rd4, %rd5;
  ld.global.nc.u32 %r5, [%rd6];
  mul.wide.s32 %rd7, %r5, 4;
  add.s64 %rd8, %rd3, %rd7;
  ld.global.nc.f32 %f1, [%rd8];
""")

# each thread sums four consecutive floats of its own 32-byte sector (an unrolled loop's reads)
UNROLLED = _kernel("u", ("u_src", "u_out"), ".reg .b32 %r<12>; .reg .b64 %rd<16>; .reg .f32 %f<8>;", """\
  mul.wide.s32 %rd5, %r4, 32;
  add.s64 %rd6, %rd3, %rd5;
  ld.global.f32 %f1, [%rd6];
  ld.global.f32 %f2, [%rd6+4];
  ld.global.f32 %f3, [%rd6+8];
  ld.global.f32 %f4, [%rd6+12];
  add.f32 %f5, %f1, %f2;
  add.f32 %f6, %f3, %f4;
  add.f32 %f7, %f5, %f6;
  mul.wide.s32 %rd7, %r4, 4;
  add.s64 %rd8, %rd4, %rd7;
  st.global.f32 [%rd8], %f7;
""")


def _run(text: str, name: str, block: int, grid: int = 1, data: dict | None = None):
    module = parse_ptx(text)
    launch = Launch(grid=(grid, 1, 1), block=(block, 1, 1), data=data or {})
    analysis = analyze_kernel(module.kernel(name), launch, module)
    return analysis, execute_launch(analysis, launch, module)


def test_a_load_behind_a_loaded_address_waits_for_one_load() -> None:
    analysis, _ = _run(GATHER, "g", 64)
    body = analysis.function.instructions
    waits = load_waits(body, analysis.cfg.blocks)
    loads = [i for i, ins in enumerate(body) if ins.opcode == "ld" and "global" in ins.modifiers]
    params = [i for i, ins in enumerate(body) if ins.opcode == "ld" and "param" in ins.modifiers]
    assert [int(waits[i]) for i in loads] == [0, 1]        # idx[i], then src[idx[i]]
    assert all(waits[i] == 0 for i in params)
    # a parameter's value is not waited for: what depends on it alone waits for nothing
    assert int(waits[[i for i, ins in enumerate(body) if ins.opcode == "cvta"][0]]) == 0


def test_the_replay_issues_every_warps_ready_loads_before_the_loads_behind_them() -> None:
    _, execution = _run(GATHER, "g", 64, data={1: "random:0:1000"})
    log = execution.log
    order = issue_order(log, np.arange(len(log["request_instruction"]), dtype=np.int64))
    waits = log["request_waits"][order].tolist()
    warps = log["request_warp"][order].tolist()
    assert waits == [0, 0, 1, 1] and warps == [0, 1, 0, 1]
    # a hand-made log without segments keeps the run's order
    bare = {k: v for k, v in log.items() if k not in ("request_segment", "request_warp")}
    assert issue_order(bare, np.array([1, 0, 2], dtype=np.int64)).tolist() == [1, 0, 2]


def test_an_unrolled_warps_reads_of_one_sector_hit_l1_even_where_the_block_overflows_it() -> None:
    """32 warps read 8 lines each (32 KB) four times over, through a 16 KB L1: warp by warp, the
    second to fourth reads of each sector hit (3 / 4), where the run's lockstep order (all warps'
    first reads, then all second reads) has most lines evicted before their warp comes back."""
    _, execution = _run(UNROLLED, "u", 1024)
    config = CacheConfig(l1_bytes_per_block=16 << 10, l2_bytes=1 << 24)
    loads = execution.log["request_kind"] == 0
    assert loads.sum() == 4 * 32
    ordered = simulate_caches(execution, config)
    assert ordered.l1_sector_hits / ordered.l1_sector_accesses == pytest.approx(0.75)
    lockstep = dict(execution.log)
    del lockstep["request_segment"]
    execution.log = lockstep
    plain = simulate_caches(execution, config)
    assert plain.l1_sector_hits / plain.l1_sector_accesses < 0.6


def _log_execution(lines: list[int], sectors: list[int], segments: list[int]):
    """One block's load requests, one line entry each, with their segments."""
    from engine.execution import Execution
    from engine.execution.sampling import choose_blocks
    n = len(lines)
    log = {
        "request_instruction": np.arange(n, dtype=np.int32), "request_block": np.zeros(n, dtype=np.int32),
        "request_kind": np.zeros(n, dtype=np.int8), "request_warp": np.arange(n, dtype=np.int32),
        "request_segment": np.array(segments, dtype=np.int64), "entry_request": np.arange(n, dtype=np.int64),
        "entry_line": np.array(lines, dtype=np.int64), "entry_sectors": np.array(sectors, dtype=np.uint8),
        "entry_bytes": np.zeros((n, 4), dtype=np.uint32),
    }
    return Execution("k", choose_blocks((1, 1, 1), 1), 1, paths=[np.zeros(1, dtype=np.int32)],
                     executed=np.ones(n), log=log, grid=(1, 1, 1))


def test_a_sector_still_on_its_way_from_dram_is_an_l2_miss_without_bytes_of_its_own() -> None:
    """Warp 0 reads sector 0 of a line (DRAM fetches 64 bytes: sectors 0 and 1); warp 1 reads
    sector 1. In the same segment (a few cycles later) the fetch is still under way: a miss that
    moves nothing more. A segment later the sector is there: an L2 hit."""
    line = 1 << 40
    config = CacheConfig(l1_bytes_per_block=0, l2_bytes=1 << 24)
    same = simulate_caches(_log_execution([line, line], [0b0001, 0b0010], [5, 5]), config)
    assert same.l2_sector_hits == 0 and same.l2_sector_accesses == 2
    assert same.dram_read_bytes == pytest.approx(64)
    later = simulate_caches(_log_execution([line, line], [0b0001, 0b0010], [5, 6]), config)
    assert later.l2_sector_hits == 1 and later.dram_read_bytes == pytest.approx(64)


# each lane copies 16 bytes of the first n bytes to shared memory; lanes past n copy none
# (src-size 0: the destination is zero-filled), as a compiler's masked pipeline stage does
def _copy_kernel(operand: str) -> str:
    return _HEAD + f"""
.visible .entry c(.param .u64 c_src, .param .u32 c_n)
{{
  .reg .pred %p<3>; .reg .b32 %r<12>; .reg .b64 %rd<8>;
  .shared .align 16 .b8 buf[2048];
  ld.param.u64 %rd1, [c_src];
  ld.param.u32 %r1, [c_n];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r2, %tid.x;
  shl.b32 %r3, %r2, 4;
  setp.lt.u32 %p1, %r3, %r1;
  setp.ge.u32 %p2, %r3, %r1;
  selp.b32 %r4, 16, 0, %p1;
  cvt.u64.u32 %rd3, %r3;
  add.s64 %rd4, %rd2, %rd3;
  mov.u32 %r5, buf;
  add.u32 %r6, %r5, %r3;
  cp.async.cg.shared.global [%r6], [%rd4], 16, {operand};
  cp.async.commit_group;
  cp.async.wait_group 0;
  bar.sync 0;
  ret;
}}
"""


@pytest.mark.parametrize("operand", ["%r4", "%p2"])     # src-size, ignore-src
def test_a_cp_async_reads_only_its_src_size(operand: str) -> None:
    module = parse_ptx(_copy_kernel(operand))
    launch = Launch(grid=(1, 1, 1), block=(64, 1, 1), args={"c_n": 256})
    analysis = analyze_kernel(module.kernel("c"), launch, module)
    execution = execute_launch(analysis, launch, module)
    assert execution.ok
    index = next(i for i, ins in enumerate(analysis.function.instructions) if ins.opcode == "cp")
    stats = execution.access[index]
    # two warps reach it; only the first 16 lanes of warp 0 read: 256 bytes, 8 sectors
    assert stats.warp_executions == 2 and stats.requests == 1
    assert stats.active_lanes == 16 and stats.sectors == 8


def test_a_warp_access_without_active_lanes_costs_a_shared_access() -> None:
    from dataclasses import replace

    from engine.memory.access_report import AccessInfo
    from engine.memory.costs import _issued_share
    from engine.profiles import load_profile
    from engine.units import AccessKind, MemorySpace
    access = AccessInfo(0, 1, "ld.global.f32", MemorySpace.GLOBAL, 4, None, None, AccessKind.LOAD)

    def stub(issue_share: float, executed: bool) -> AccessInfo:
        return replace(access, issue_share=issue_share, executed=executed)

    profile = load_profile("h100")
    empty = profile.shared_memory_lambdas(0.0)
    cost = (40.0, 600.0)
    assert _issued_share(stub(1.0, True), cost, profile) == cost
    assert _issued_share(stub(0.0, True), cost, profile) == pytest.approx(empty)
    quarter = _issued_share(stub(0.25, True), cost, profile)
    assert quarter == pytest.approx((10.0 + 0.75 * empty[0], 150.0 + 0.75 * empty[1]))
    # a static view (not executed) is taken as issued by every warp
    assert _issued_share(stub(0.25, False), cost, profile) == cost


def test_an_access_no_sampled_warp_makes_moves_nothing_in_the_memory_report() -> None:
    from engine.memory import analyze_memory
    from engine.memory.executed import with_execution
    module = parse_ptx(_copy_kernel("%r4"))
    launch = Launch(grid=(1, 1, 1), block=(64, 1, 1), args={"c_n": 0})
    analysis = analyze_kernel(module.kernel("c"), launch, module)
    execution = execute_launch(analysis, launch, module)
    report = with_execution(analyze_memory(analysis, launch, module), execution)
    copy = next(a for a in report.accesses if a.text.startswith("cp.async"))
    assert copy.executed and copy.issue_share == 0.0
