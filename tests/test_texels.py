"""1D texture fetches analysed as global loads (mechanism texel_addresses): the texel's bytes from
the components the kernel reads, integer-index fetches only, and the suite-v2x kernels' traffic."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.analysis import analyze_kernel
from engine.launch import load_launch_file
from engine.memory import analyze_memory
from engine.memory.access_report import pattern_note
from engine.memory.texels import texel_fetch
from engine.ptx import load_ptx, parse_ptx
from engine.units import MemorySpace

V2X = Path(__file__).resolve().parent.parent / "samples" / "v2x"

KERNEL = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_t, .param .u64 k_out)
{
  .reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .f32 %f<16>;
  ld.param.u64 %rd1, [k_t];
  ld.param.u64 %rd2, [k_out];
  mov.u32 %r1, %tid.x;
  tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd1, {%r1}];
  tex.1d.v4.f32.s32 {%f5, %f6, %f7, %f8}, [%rd1, {%r1}];
  tex.1d.v4.f32.f32 {%f9, %f10, %f11, %f12}, [%rd1, {%f1}];
  tex.2d.v4.f32.s32 {%f13, %f14, %f15, %f0}, [%rd1, {%r1, %r1}];
  add.f32 %f1, %f1, %f6;
  add.f32 %f1, %f1, %f9;
  add.f32 %f1, %f1, %f13;
  st.global.f32 [%rd2], %f1;
  ret;
}
"""


def test_texel_bytes_follow_the_components_read_and_only_integer_1d_fetches_count() -> None:
    function = parse_ptx(KERNEL).kernel("k")
    used = analyze_kernel(function).defuse
    texs = [i for i in function.instructions if i.opcode == "tex"]
    first, second, float_coord, two_d = (texel_fetch(i, used) for i in texs)
    assert first is not None and first.index_register == "%r1" and first.texel_bytes == 4     # x only
    assert second is not None and second.texel_bytes == 8                                     # y read: x, y
    assert float_coord is None and two_d is None


def _report(kernel: str, config: str):
    launch = load_launch_file(V2X / "texfetch.launch.toml").get(f"{kernel}/{config}")
    module = load_ptx(V2X / "ptx" / "texfetch.sm_90.ptx")
    return analyze_memory(analyze_kernel(module.kernel(launch.kernel), launch, module), launch, module)


def test_streaming_fetch_is_a_coalesced_global_read_of_the_texture_buffer() -> None:
    report = _report("tex1d_scale", "b256")
    tex = [a for a in report.accesses if a.text.startswith("tex.")]
    assert len(tex) == 1 and tex[0].space is MemorySpace.GLOBAL and tex[0].kind == "load"
    assert tex[0].method == "affine" and tex[0].width_bytes == 4
    assert tex[0].sectors_per_request == pytest.approx(4.0)      # 32 lanes x 4 bytes: 4 sectors
    assert pattern_note(tex[0]).startswith("1D texture fetch")


def test_gather_through_a_texture_scatters_over_the_sectors() -> None:
    tex = [a for a in _report("tex1d_gather", "b256").accesses if a.text.startswith("tex.")]
    assert len(tex) == 1 and tex[0].method == "lanes"
    assert tex[0].sectors_per_request > 28      # random indices: nearly a sector per lane


def test_stencil_neighbours_share_their_sectors() -> None:
    tex = [a for a in _report("tex1d_stencil3", "b256").accesses if a.text.startswith("tex.")]
    assert len(tex) == 3 and all(a.method == "affine" for a in tex)
    # the three neighbour reads touch the same lines: only one of them misses the block's L1
    assert sum(a.block_miss for a in tex) < 1.5
