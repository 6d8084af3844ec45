"""Declared data patterns (``[launch.data]``, ``--data``): what the integers behind a pointer are,
so that gathers through them and branches on them are analysed on those values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.analysis import analyze_kernel
from engine.analysis.loaded_data import LoadedData, parse_loaded_data
from engine.errors import LaunchError
from engine.launch import Launch, load_launch_file
from engine.memory import analyze_memory
from engine.ptx import parse_ptx

ROOT = Path(__file__).resolve().parents[1]

# out[i] = src[idx[i]] (i < n), and a CSR row walk: one warp per row, p = rowptr[r] + lane while
# p < rowptr[r + 1], reading x[col[p]]
GATHER = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry g(.param .u64 g_src, .param .u64 g_idx, .param .u64 g_out)
{
  .reg .pred %p<4>; .reg .b32 %r<12>; .reg .b64 %rd<16>; .reg .f32 %f<4>;
  ld.param.u64 %rd1, [g_src];
  ld.param.u64 %rd2, [g_idx];
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;
  mul.wide.s32 %rd5, %r4, 4;
  add.s64 %rd6, %rd4, %rd5;
  ld.global.nc.u32 %r5, [%rd6];
  mul.wide.s32 %rd7, %r5, 4;
  add.s64 %rd8, %rd3, %rd7;
  ld.global.nc.f32 %f1, [%rd8];
  ret;
}
.visible .entry row(.param .u64 row_ptr, .param .u64 row_x)
{
  .reg .pred %p<4>; .reg .b32 %r<12>; .reg .b64 %rd<16>; .reg .f32 %f<4>;
  ld.param.u64 %rd1, [row_ptr];
  ld.param.u64 %rd2, [row_x];
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r3, %tid.x;
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd6, %rd3, %rd5;
  ld.global.nc.u32 %r5, [%rd6];
  ld.global.nc.u32 %r6, [%rd6+4];
  add.s32 %r7, %r5, %r3;
  setp.ge.s32 %p1, %r7, %r6;
  @%p1 bra $L_done;
  mul.wide.s32 %rd7, %r7, 4;
  add.s64 %rd8, %rd4, %rd7;
  ld.global.nc.f32 %f1, [%rd8];
$L_done:
  ret;
}
"""


def _report(kernel: str, data: dict) -> list:
    module = parse_ptx(GATHER)
    launch = Launch(grid=(64, 1, 1), block=(32, 1, 1), data=data)
    return analyze_memory(analyze_kernel(module.kernel(kernel), launch, module), launch, module).accesses


@pytest.mark.parametrize("text, expected", [
    ("random:0:1000", LoadedData("random", 0, 1000)),
    ("linear:16", LoadedData("linear", 16, 0)),
    ("linear:0.5:-3", LoadedData("linear", 0.5, -3)),
    ("constant:7", LoadedData("constant", 7)),
    ("offsets:4:28", LoadedData("offsets", 4, 28)),
])
def test_patterns_parse(text, expected):
    assert parse_loaded_data(text) == expected
    assert parse_loaded_data(expected.text) == expected


@pytest.mark.parametrize("text", ["", "sorted:1", "random:3", "random:5:2", "linear:inf", "linear:1e300",
                                  "constant:1.5", "linear:a", 7, "offsets:5:2", "offsets:-1:3", "offsets:1.5:3",
                                  "offsets:4"])
def test_bad_patterns_are_refused(text):
    with pytest.raises(LaunchError):
        parse_loaded_data(text)


def test_values_follow_the_pattern():
    element = np.arange(8)
    assert LoadedData("linear", 2.5, 1).values(element, element * 4).tolist() == [1, 3, 6, 8, 11, 13, 16, 18]
    rand = LoadedData("random", 10, 20).values(element, element * 4)
    assert ((rand >= 10) & (rand < 20)).all()
    assert (rand == LoadedData("random", 10, 20).values(element, element * 4)).all()   # equal addresses agree


def test_offsets_are_segment_starts_with_lengths_in_range():
    data = LoadedData("offsets", 4, 28)
    element = np.arange(5000)
    starts = data.values(element, element * 4)
    lengths = np.diff(starts)
    assert starts[0] == 0 and lengths.min() >= 4 and lengths.max() <= 28
    assert 15 < lengths.mean() < 17 and len(set(lengths.tolist())) == 25    # uniform over 4..28
    # any element directly, the same value as in a run from 0; the lengths repeat after a period
    far = np.array([123_456, 5 * (1 << 20) + 7])
    assert data.values(far, far)[0] == data.values(np.arange(123_457), None)[-1]
    assert np.diff(data.values(far[1] + np.arange(2), None))[0] == lengths[7]


def test_sorted_indices_make_a_gather_coalesced():
    scattered = _report("g", {})[1]            # stand-in values: random over 2^22 elements
    declared = _report("g", {1: "random:0:1048576"})[1]
    ordered = _report("g", {"g_idx": "linear:1"})[1]
    assert scattered.sectors_per_request > 28 and declared.sectors_per_request > 28
    assert ordered.sectors_per_request == 4 and ordered.lines_per_request == 1


def test_declared_row_starts_decide_which_lanes_run():
    # rowptr[r] = 10 r: rows of 10 entries, so lanes 0..9 of each warp read x
    (_, _, x) = _report("row", {0: "linear:10"})
    assert x.mask_note is None and x.active_lanes == 10 and x.sectors_per_request == 2
    # without a declaration the branch on loaded data cannot be told: every lane is taken
    (_, _, x) = _report("row", {})
    assert x.active_lanes == 32 and x.mask_note


# one thread per segment: p from starts[t] while p < starts[t + 1], reading x[p] (bottom-tested)
SEGMENTS = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry seg(.param .u64 seg_starts, .param .u64 seg_x)
{
  .reg .pred %p<4>; .reg .b32 %r<12>; .reg .b64 %rd<12>; .reg .f32 %f<4>;
  ld.param.u64 %rd1, [seg_starts];
  ld.param.u64 %rd2, [seg_x];
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;
  mul.wide.s32 %rd5, %r4, 4;
  add.s64 %rd6, %rd3, %rd5;
  ld.global.nc.u32 %r5, [%rd6];
  ld.global.nc.u32 %r6, [%rd6+4];
  setp.ge.s32 %p1, %r5, %r6;
  @%p1 bra $L_done;
  mov.u32 %r7, %r5;
$L_loop:
  mul.wide.s32 %rd7, %r7, 4;
  add.s64 %rd8, %rd4, %rd7;
  ld.global.nc.f32 %f1, [%rd8];
  add.s32 %r7, %r7, 1;
  setp.lt.s32 %p2, %r7, %r6;
  @%p2 bra $L_loop;
$L_done:
  ret;
}
"""


def test_lanes_that_left_a_per_thread_loop_do_not_load_in_its_later_iterations():
    module = parse_ptx(SEGMENTS)
    launch = Launch(grid=(64, 1, 1), block=(128, 1, 1), data={0: "offsets:4:28"})

    def walk():
        return analyze_memory(analyze_kernel(module.kernel("seg"), launch, module), launch, module).accesses[2]

    # the warp runs its longest segment (about 27 of 4..28); a lane whose own one ended drops out,
    # so on average (4 + 28) / 2 / 27 of the lanes load
    x = walk()
    assert x.mask_note is None and 15 < x.active_lanes < 23
    assert x.sectors_per_request < 26


def test_launch_files_read_and_check_the_data_table(tmp_path):
    good = tmp_path / "ok.launch.toml"
    good.write_text('[[launch]]\nname = "a"\ngrid = 4\nblock = 32\n[launch.data]\n"1" = "linear:1"\n'
                    'idx = "random:0:9"\n')
    (launch,) = load_launch_file(good).launches
    assert launch.data == {1: "linear:1", "idx": "random:0:9"}
    bad = tmp_path / "bad.launch.toml"
    bad.write_text('[[launch]]\nname = "a"\ngrid = 4\nblock = 32\n[launch.data]\n"1" = "linear:nan"\n')
    with pytest.raises(LaunchError, match="bad.launch.toml: launch 'a': data of argument 1"):
        load_launch_file(bad)


def test_suite_v2_launch_files_declare_their_index_data():
    gather = {launch.name: launch for launch in load_launch_file(ROOT / "samples/v2/gather.launch.toml").launches}
    assert index_data(gather["gather_f32/sorted-b256"]) == {1: "linear:1.0:0"}
    assert index_data(gather["gather_f32/rand-b256"]) == {1: "random:0:16777216"}


def index_data(launch) -> dict:
    """A launch's declared data less its floating-point ranges (``uniform:LO:HI``, which the suite
    generator writes for every float buffer): the integers the kernels index with."""
    floats = {key: pattern for key, pattern in launch.data.items() if pattern.startswith("uniform:")}
    assert all(len(pattern.split(":")) == 3 for pattern in floats.values()), floats
    return {key: pattern for key, pattern in launch.data.items() if key not in floats}
