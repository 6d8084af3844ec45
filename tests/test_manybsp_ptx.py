"""Many-BSP from PTX: the hotspot/knn/mm samples on the three 000 GPUs, and bad inputs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from engine.errors import LaunchError, ModelError, WarplineError
from engine.launch import Launch, load_launch_file
from engine.manybsp import Overrides, predict_manybsp
from engine.manybsp.device_figures import barrier_overhead
from engine.profiles import load_profile
from engine.ptx import load_ptx, parse_ptx

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent / "shared" / "reference" / "manybsp" / "cases.json"
GPUS = ("gtx760", "940mx", "gtx1070")
KERNELS = ("hotspot", "knn", "mm")

LOOPY = r"""
.version 7.0
.target sm_70
.address_size 64
.visible .entry loopy(.param .u64 p, .param .u32 n)
{
 .reg .pred %p<2>; .reg .b32 %r<6>; .reg .b64 %rd<5>; .reg .f64 %fd<3>;
 ld.param.u64 %rd1, [p];
 ld.param.u32 %r1, [n];
 cvta.to.global.u64 %rd2, %rd1;
 mov.u32 %r2, 0;
$L_loop:
 mul.wide.s32 %rd3, %r2, 8;
 add.s64 %rd4, %rd2, %rd3;
 ld.global.f64 %fd1, [%rd4];
 add.f64 %fd2, %fd1, %fd1;
 st.global.f64 [%rd4], %fd2;
 bar.sync 0;
 add.s32 %r2, %r2, 1;
 setp.lt.s32 %p1, %r2, %r1;
 @%p1 bra $L_loop;
 ret;
}
.visible .entry empty()
{
}
"""


def _case_launch(kernel: str) -> tuple:
    launch_file = load_launch_file(ROOT / "samples" / f"{kernel}.launch.toml")
    launch = next((x for x in launch_file.launches if x.reference_case), launch_file.launches[0])
    return load_ptx(launch_file.ptx), launch


def _measured(kernel: str, gpu: str) -> float | None:
    if not REFERENCE.exists():
        return None
    for case in json.loads(REFERENCE.read_text())["cases"]:
        if (case["kernel"], case["gpu"]) == (kernel, gpu):
            return case["worked"]["measured_kernel_exec_cycle"]
    return None


@pytest.mark.parametrize("gpu", GPUS)
@pytest.mark.parametrize("kernel", KERNELS)
def test_samples_predict(kernel: str, gpu: str) -> None:
    module, launch = _case_launch(kernel)
    result = predict_manybsp(module, launch.kernel, load_profile(gpu), launch)
    cycles = result.kernel_exec_cycle
    assert math.isfinite(cycles) and cycles > 0
    assert len(result.rows) == len(module.kernel(launch.kernel).instructions)
    assert [b.index for b in result.block] == [r.index for r in result.rows]
    assert result.level2 and result.level1
    assert sum(len(s.children) for s in result.level1) == len(result.level2)
    assert result.params.n_b == launch.n_blocks and result.params.n_t == launch.threads_per_block
    assert result.params.w == math.ceil(launch.threads_per_block / (32 * result.params.n_ws))
    measured = _measured(kernel, gpu)
    if measured is not None:
        # A sanity bound, not an accuracy claim (docs/manybsp.md lists the errors): the PTX is
        # compiled for a newer target than the report's, so the instruction stream differs.
        assert 0.3 * measured < cycles < 3 * measured, (kernel, gpu, cycles, measured)
    print(f"{kernel:8s} {gpu:8s} predicted {cycles:>10.0f}  measured {measured}")


def test_loop_trip_counts_feed_iterations() -> None:
    module = parse_ptx(LOOPY, "loopy.ptx")
    profile = load_profile("gtx1070")
    launch = Launch(grid=(4, 1, 1), block=(256, 1, 1), args={"n": 7})
    known = predict_manybsp(module, "loopy", profile, launch)
    in_loop = [s for s in known.level1 if s.start >= 5 and s.end <= 13]
    assert in_loop and all(s.iterations == 7 and s.iterations_known for s in in_loop)
    assert not any("trip count unknown" in w for w in known.warnings)
    rows = {r.index: r for r in known.rows}
    # Every thread reads the same 8-byte word (the address has no %tid): one line per warp.
    assert rows[7].is_global_access and rows[7].n_ma == 1
    coalesced_default = predict_manybsp(module, "loopy", profile, launch, memory=None)
    assert {r.index: r for r in coalesced_default.rows}[7].n_ma == 2  # 8-byte, assumed per-thread
    assert rows[10].is_barrier and rows[10].fu is None
    assert rows[10].lat_comp == barrier_overhead(profile, 256)


def test_unknown_trip_count_is_flagged_not_silent() -> None:
    module = parse_ptx(LOOPY, "loopy.ptx")
    launch = Launch(grid=(4, 1, 1), block=(256, 1, 1))
    result = predict_manybsp(module, "loopy", load_profile("gtx1070"), launch)
    unknown = [s for s in result.level1 if not s.iterations_known]
    assert unknown and all(s.iterations == 1 for s in unknown)
    assert any("trip count unknown, 1 iteration assumed" in w for w in result.warnings)
    # The user supplies it: the flag goes and the value is marked as an override.
    fixed = predict_manybsp(module, "loopy", load_profile("gtx1070"), launch,
                            Overrides(iterations={unknown[0].index: 5}))
    assert fixed.level1[unknown[0].index - 1].iterations == 5
    assert f"iterations:{unknown[0].index}" in fixed.overridden
    assert fixed.kernel_exec_cycle > result.kernel_exec_cycle


def test_default_costs_are_marked() -> None:
    module = parse_ptx(LOOPY, "loopy.ptx")
    result = predict_manybsp(module, "loopy", load_profile("gtx1070"),
                             Launch(grid=(4, 1, 1), block=(256, 1, 1), args={"n": 2}))
    defaults = [r.index for r in result.rows if r.is_default_cost]
    assert defaults
    assert any("default latency" in w and str(defaults[0]) in w for w in result.warnings)


def test_bad_inputs_raise_warpline_errors() -> None:
    module = parse_ptx(LOOPY, "loopy.ptx")
    profile = load_profile("gtx1070")
    launch = Launch(grid=(4, 1, 1), block=(256, 1, 1))
    with pytest.raises(ModelError, match="no instructions"):
        predict_manybsp(module, "empty", profile, launch)
    with pytest.raises(ModelError, match="no kernel 'nope'"):
        predict_manybsp(module, "nope", profile, launch)
    with pytest.raises(LaunchError):
        Launch(grid=(0, 1, 1), block=(256, 1, 1))
    with pytest.raises(WarplineError):
        predict_manybsp(module, "loopy", profile, launch, Overrides(params={"n_b": 0}))
