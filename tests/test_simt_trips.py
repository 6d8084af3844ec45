"""Trip counts the data decides, from running sampled warps (engine.analysis.simt)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.analysis import LaunchValues, analyze_kernel, simt
from engine.ptx import load_ptx, parse_ptx

V2 = Path(__file__).resolve().parents[1] / "samples" / "v2" / "ptx"


def trips(ptx: str, kernel: str, **launch) -> dict:
    function = load_ptx(V2 / ptx).kernel(kernel)
    launch.setdefault("block", (128, 1, 1))
    launch.setdefault("grid", (64, 1, 1))
    return {lp.key: lp.trip_count for lp in analyze_kernel(function, LaunchValues(**launch)).loop_info}


def collatz(**launch) -> dict:
    return trips("triangular.sm_90.ptx", "_Z7collatzPKjPiii", **launch)


def test_a_while_loop_its_own_values_end_runs_the_exact_steps() -> None:
    # 27 takes 111 Collatz steps to reach 1 (the loop of collatz() runs once per step)
    (tc,) = collatz(args={2: 1 << 20, 3: 1000}, data={0: "constant:27"}).values()
    assert (tc.value, tc.slowest, tc.source) == (111, 111, "inferred")
    assert "sampled warps" in tc.reason and "and.pred" in tc.reason   # the static reason stays
    (capped,) = collatz(args={2: 1 << 20, 3: 40}, data={0: "constant:27"}).values()
    assert capped.value == 40


def test_the_slowest_lane_sets_a_warps_count() -> None:
    # random starts: each warp runs until its longest chain ends, so the mean over warps is
    # well above a single start's typical count, and the slowest warp is above the mean
    (tc,) = collatz(args={2: 1 << 20, 3: 1000}, data={0: "random:1:1048576"}).values()
    assert 150 < tc.value < tc.slowest <= 1000


def test_loops_whose_bounds_are_loaded_from_declared_data() -> None:
    scalar = "_Z15spmv_csr_scalarPKiS0_PKfS2_Pfi"   # one thread per row, unrolled by 4
    counts = trips("spmv.sm_90.ptx", scalar, args={5: 1 << 20}, data={0: "linear:16"})
    assert sorted(tc.value for tc in counts.values()) == [0, 4]          # 16 = 4 x 4, no remainder
    counts = trips("spmv.sm_90.ptx", scalar, args={5: 1 << 20}, data={0: "linear:13"})
    assert sorted(tc.value for tc in counts.values()) == [1, 3]          # 13 = 3 x 4 + 1
    vector = "_Z15spmv_csr_vectorPKiS0_PKfS2_Pfi"   # one warp per row: 16 lanes run once
    counts = trips("spmv.sm_90.ptx", vector, args={5: 1 << 20}, data={0: "linear:16"})
    assert sorted(tc.value for tc in counts.values()) == [0, 1]


def test_without_declared_data_the_count_stays_unknown() -> None:
    (tc,) = collatz(args={2: 1 << 20, 3: 1000}).values()
    assert not tc.known and "without declared data" in tc.reason


def test_a_branch_on_a_float_stops_the_run_and_says_where() -> None:
    counts = trips("atomics.sm_90.ptx", "_Z14atomic_cas_maxPKfPfii", args={2: 1 << 20, 3: 1})
    (tc,) = counts.values()
    assert not tc.known
    assert "did not decide it" in tc.reason and "setp.leu.f32" in tc.reason


def test_a_user_override_still_wins() -> None:
    (key,) = collatz(args={2: 1 << 20, 3: 1000}).keys()
    (tc,) = collatz(args={2: 1 << 20, 3: 1000}, data={0: "constant:27"}, trip_overrides={key: 5}).values()
    assert (tc.value, tc.source) == (5, "override") and "inferred: 111" in tc.reason


HALVING = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u32 n)
{
.reg .pred %p<4>;
.reg .b32 %r<8>;
    ld.param.u32 %r1, [n];
HEAD:
    shr.u32 %r1, %r1, 1;
    setp.ne.s32 %p1, %r1, 0;
    @%p1 bra HEAD;
    ret;
}
"""


def _halving_trip(text: str):
    """The trip count of the one loop of ``text`` (HALVING or a variant) for n = 1000, one warp."""
    f = parse_ptx(text, "h.ptx").kernel("k")
    (tc,) = [lp.trip_count for lp in analyze_kernel(f, LaunchValues(args={0: 1000}, block=(32, 1, 1),
                                                                     grid=(1, 1, 1))).loop_info]
    return tc


def test_a_halving_step_counts_its_passes() -> None:
    tc = _halving_trip(HALVING)
    assert tc.value == 10     # 1000 -> 500 -> ... -> 1 -> 0: ten shifts


def test_a_loop_that_never_ends_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simt, "MAX_ROUNDS", 500)
    tc = _halving_trip(HALVING.replace("shr.u32 %r1, %r1, 1", "or.b32 %r1, %r1, 1"))   # never reaches 0
    assert not tc.known and "still running after 500" in tc.reason


def test_sampled_blocks_cover_the_grid_within_the_lane_budget() -> None:
    blocks = simt._sample_blocks((1000, 3, 1), 256)
    assert len(blocks) <= simt.MAX_LANES // 256
    assert blocks[0] == (0, 0, 0) and blocks[-1] == (999, 2, 0)


SIZE_LOOP = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 n)
{
.reg .pred %p<4>;
.reg .b64 %rd<8>;
    ld.param.u64 %rd1, [n];
    mov.u64 %rd2, 0;
HEAD:
    add.s64 %rd2, %rd2, 1;
    shr.u64 %rd3, %rd1, %rd2;
    setp.ne.s64 %p1, %rd3, 0;
    @%p1 bra HEAD;
    ret;
}
"""


def test_a_64_bit_argument_without_a_value_is_not_taken_as_an_address() -> None:
    # numba passes array shapes as 64-bit arguments: placed at a buffer's 2^40 window, this
    # loop would run 41 times; without a value or declared data it is unknown, and says why
    f = parse_ptx(SIZE_LOOP, "s.ptx").kernel("k")
    launch = LaunchValues(block=(32, 1, 1), grid=(1, 1, 1))
    (tc,) = [lp.trip_count for lp in analyze_kernel(f, launch).loop_info]
    assert not tc.known and "argument 0 (n) has no value" in tc.reason
    given = LaunchValues(args={0: 1000}, block=(32, 1, 1), grid=(1, 1, 1))
    (tc,) = [lp.trip_count for lp in analyze_kernel(f, given).loop_info]
    assert tc.value == 10      # 1000 >> 10 == 0
