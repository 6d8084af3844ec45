"""Kernel resources: the ptxas report parser, the ptxas path with its cache, and the estimate."""

from __future__ import annotations

import shutil

import pytest

import engine.resources as resources
from engine.errors import WarplineError
from engine.ptx import parse_ptx
from engine.resources import (
    Resources,
    estimate_resources,
    kernel_resources,
    parse_ptxas_report,
    static_shared_bytes,
)

HAVE_PTXAS = shutil.which("ptxas") is not None
needs_ptxas = pytest.mark.skipif(not HAVE_PTXAS, reason="ptxas is not on PATH")

# Hand-written: module-scope shared (named by the kernel), an extern (dynamic) array, two
# function-scope arrays with different alignment, a loop and a barrier.
SCALE_PTX = """.version 8.0
.target sm_80
.address_size 64

.shared .align 4 .b8 gbuf[64];
.shared .align 4 .b8 unused[4096];
.extern .shared .align 16 .b8 dyn[];

.visible .entry scale(
	.param .u64 scale_param_0,
	.param .u32 scale_param_1
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<5>;
	.shared .align 8 .b8 tile[100];
	.shared .align 16 .b8 tile2[32];

	ld.param.u64 	%rd1, [scale_param_0];
	ld.param.u32 	%r1, [scale_param_1];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r2, %tid.x;
	mov.u32 	%r3, 0;
	mov.f32 	%f1, 0f00000000;
$L__BB0_1:
	mul.wide.u32 	%rd3, %r3, 4;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.f32 	%f2, [%rd4];
	add.f32 	%f1, %f1, %f2;
	st.shared.f32 	[tile], %f1;
	st.shared.f32 	[gbuf], %f1;
	st.shared.f32 	[tile2], %f1;
	st.shared.f32 	[dyn], %f1;
	add.s32 	%r3, %r3, 1;
	setp.lt.u32 	%p1, %r3, %r1;
	@%p1 bra 	$L__BB0_1;
	bar.sync 	0;
	ld.shared.f32 	%f3, [tile];
	add.s32 	%r4, %r2, %r3;
	st.global.f32 	[%rd2], %f3;
	ret;
}
"""

PTXAS_SM90 = """ptxas info    : 24 bytes gmem
ptxas info    : Function properties for _Z6helperf
    8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_Z3dynPf' for 'sm_90'
ptxas info    : Function properties for _Z3dynPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 23 registers, used 1 barriers
ptxas info    : Compile time = 14.211 ms
ptxas info    : Compiling entry function '_Z5spillPf' for 'sm_90'
ptxas info    : Function properties for _Z5spillPf
    248 bytes stack frame, 244 bytes spill stores, 244 bytes spill loads
ptxas info    : Used 24 registers, used 0 barriers, 248 bytes cumulative stack size
ptxas info    : Compile time = 15.981 ms
ptxas info    : Compiling entry function '_Z4tilePfPKfi' for 'sm_90'
ptxas info    : Function properties for _Z4tilePfPKfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 14 registers, used 1 barriers, 1152 bytes smem
ptxas info    : Compile time = 4.332 ms
"""

PTXAS_SM80 = """ptxas info    : 24 bytes gmem, 8 bytes cmem[4]
ptxas info    : Compiling entry function '_Z4tilePfPKfi' for 'sm_80'
ptxas info    : Function properties for _Z4tilePfPKfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 18 registers, used 1 barriers, 1152 bytes smem, 372 bytes cmem[0]
"""


# ---------------------------------------------------------------------- report parsing


def test_parse_ptxas_report_sm90():
    found = parse_ptxas_report(PTXAS_SM90)
    assert set(found) == {"_Z3dynPf", "_Z5spillPf", "_Z4tilePfPKfi"}  # the .func block is skipped
    tile = found["_Z4tilePfPKfi"]
    assert (tile.registers, tile.static_shared_bytes, tile.barriers, tile.arch) == (14, 1152, 1, "sm_90")
    assert tile.source == "ptxas" and not tile.spills
    spill = found["_Z5spillPf"]
    assert (spill.stack_frame_bytes, spill.spill_store_bytes, spill.spill_load_bytes) == (248, 244, 244)
    assert spill.spills and spill.static_shared_bytes == 0
    assert "Used 24 registers" in spill.report
    assert found["_Z3dynPf"].registers == 23


def test_parse_ptxas_report_with_cmem():
    tile = parse_ptxas_report(PTXAS_SM80)["_Z4tilePfPKfi"]
    assert (tile.registers, tile.static_shared_bytes, tile.barriers) == (18, 1152, 1)


def test_parse_ptxas_report_of_nothing():
    assert parse_ptxas_report("ptxas fatal   : Unsupported .version 9.5\n") == {}


# ---------------------------------------------------------------------- ptxas path


@needs_ptxas
def test_ptxas_on_text_and_file(tmp_path):
    result = kernel_resources(SCALE_PTX, "scale")
    assert result.source == "ptxas" and result.arch == "sm_80"       # arch from .target
    assert result.static_shared_bytes == 100 + 12 + 32 + 64           # tile, pad to 16, tile2, gbuf
    assert result.barriers == 1 and 4 <= result.registers <= 32
    path = tmp_path / "scale.ptx"
    path.write_text(SCALE_PTX)
    from_file = kernel_resources(path, arch=90)
    assert from_file.source == "ptxas" and from_file.arch == "sm_90"
    module = parse_ptx(SCALE_PTX, str(path))
    assert kernel_resources(module).source == "ptxas"                # a Module whose file exists


@needs_ptxas
def test_too_new_ptx_version_falls_back_with_a_reason():
    result = kernel_resources(SCALE_PTX.replace(".version 8.0", ".version 99.0"), "scale")
    assert result.source == "estimate"
    assert "newer than this ptxas supports" in result.reason


@needs_ptxas
def test_ptxas_failure_falls_back_with_its_message():
    result = kernel_resources(SCALE_PTX, "scale", "sm_12")   # an architecture ptxas rejects
    assert result.source == "estimate" and "ptxas failed" in result.reason
    assert result.arch == "sm_12"


def test_no_ptxas_on_path_gives_the_estimate(monkeypatch):
    monkeypatch.setattr(resources, "find_ptxas", lambda: None)
    result = kernel_resources(SCALE_PTX, "scale")
    assert result.source == "estimate"
    assert result.reason.startswith("ptxas is not installed")
    assert result.static_shared_bytes == 208


def test_ptxas_results_are_cached_by_text_and_arch(monkeypatch):
    calls: list[str] = []

    def fake_run(exe: str, text: str, arch: str, entry: str = "") -> dict[str, Resources]:
        calls.append(arch)
        return {"scale": Resources("scale", 42, 7, "ptxas", arch)}

    monkeypatch.setattr(resources, "run_ptxas", fake_run)
    monkeypatch.setattr(resources, "_CACHE", {})
    text = SCALE_PTX.replace("scale_param_1", "scale_param_x")  # a text no other test uses
    assert kernel_resources(text, "scale", ptxas="/fake/ptxas").registers == 42
    assert kernel_resources(text, "scale", ptxas="/fake/ptxas").registers == 42
    assert calls == ["sm_80"]
    kernel_resources(text, "scale", "sm_90", ptxas="/fake/ptxas")
    assert calls == ["sm_80", "sm_90"]


def test_a_large_file_is_assembled_one_kernel_at_a_time(monkeypatch, tmp_path):
    # all 252 kernels of a 25 MB library took ptxas 30 s; the one asked for, alone, 0.2 s
    from tests import ptx_gen

    seen: list[tuple[str, str]] = []

    def fake_run(exe: str, text: str, arch: str, entry: str = "") -> dict[str, Resources]:
        seen.append((entry, text))
        return {entry: Resources(entry, 40, 0, "ptxas", arch)}

    monkeypatch.setattr(resources, "run_ptxas", fake_run)
    monkeypatch.setattr(resources, "_CACHE", {})
    monkeypatch.setattr(resources, "ONE_KERNEL_BYTES", 1000)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    text = ptx_gen.library(kernels=3, instructions=40, funcs=2)
    wanted = "_Z14library_kernelILi1EEvPfS0_i"
    assert kernel_resources(text, wanted, ptxas="/fake/ptxas").registers == 40
    [(entry, assembled)] = seen
    assert entry == wanted
    # the other kernels' bodies are blank, every helper is still defined, lines are kept
    assert "_Z14library_kernelILi0EEvPfS0_i_param_0]" not in assembled
    assert assembled.count("helper_0_param_0];") == 1 and assembled.count("helper_1_param_0];") == 1
    assert assembled.count("\n") == text.count("\n")


def test_one_kernel_alone_gets_what_the_whole_file_gets(monkeypatch, tmp_path):
    exe = resources.find_ptxas()
    if exe is None:
        pytest.skip("ptxas is not installed")
    from tests import ptx_gen

    text = ptx_gen.library(kernels=3, instructions=80, funcs=2)
    whole = resources.run_ptxas(exe, text, "sm_90")
    assert not isinstance(whole, str), whole
    monkeypatch.setattr(resources, "_CACHE", {})
    monkeypatch.setattr(resources, "ONE_KERNEL_BYTES", 1000)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    for name, expected in whole.items():
        alone = kernel_resources(text, name, "sm_90", ptxas=exe)
        assert (alone.source, alone.registers, alone.static_shared_bytes) == \
            ("ptxas", expected.registers, expected.static_shared_bytes)


def test_unknown_kernel_is_a_user_error():
    with pytest.raises(WarplineError, match="no kernel 'nope'"):
        kernel_resources(SCALE_PTX, "nope", use_ptxas=False)


def test_module_without_its_file_uses_the_estimate():
    module = parse_ptx(SCALE_PTX, "<string>")
    result = kernel_resources(module, "scale")
    assert result.source == "estimate"


# ---------------------------------------------------------------------- estimate

STRAIGHT = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
	.reg .b32 %r<5>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [p];
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, 7;
	add.s32 %r3, %r1, %r2;
	add.s64 %rd2, %rd1, 8;
	st.global.u32 [%rd2], %r3;
	ret;
}
"""

LOOP = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{
	.reg .pred %p<2>;
	.reg .b32 %r<4>;
	mov.u32 %r1, 0;
	mov.u32 %r2, 5;
$L__loop:
	add.s32 %r1, %r1, %r2;
	add.s32 %r3, %r1, 1;
	setp.lt.s32 %p1, %r3, 10;
	@%p1 bra $L__loop;
	ret;
}
"""


def test_estimate_register_pressure_straight_line():
    module = parse_ptx(STRAIGHT)
    result = estimate_resources(module, module.kernel("k"))
    # Peak at add.s32: %rd1 (2 slots) + %r1 + %r2 + %r3 = 5; plus 4, rounded up to even: 10.
    assert "peak register pressure 5" in result.reason
    assert result.registers == 10 and result.source == "estimate"


def test_estimate_keeps_values_live_across_a_loop():
    module = parse_ptx(LOOP)
    result = estimate_resources(module, module.kernel("k"))
    # %r2 is read inside the loop, so it stays live to the back edge, next to %r1 and %r3.
    assert "peak register pressure 3" in result.reason
    assert result.registers == 8


def test_static_shared_bytes_alignment_extern_and_module_scope():
    module = parse_ptx(SCALE_PTX)
    kernel = module.kernel("scale")
    # tile[100] at 0, tile2 aligned to 16 -> 112..144, gbuf (named by the kernel) -> 208;
    # the extern array is dynamic and ``unused`` is never named.
    assert static_shared_bytes(module, kernel) == 208
    estimate = kernel_resources(SCALE_PTX, "scale", use_ptxas=False)
    assert estimate.static_shared_bytes == 208
    assert "ptxas not requested" in estimate.reason


def test_newer_ptx_is_assembled_by_the_wheels_ptxas_for_its_own_target() -> None:
    # Triton's .version 9.4 sm_90a matmul: the system's ptxas 13.0 is too old for it, the
    # nvidia-cuda-nvcc wheel's reads it; sm_90a code must be assembled as sm_90a, not sm_90.
    from engine.inputs import resolve_inputs
    from engine.sass.tools import find_ptxas

    exe = find_ptxas()
    if exe is None or "nvidia" not in exe:
        pytest.skip("the nvidia-cuda-nvcc package's ptxas is not installed")
    inputs = resolve_inputs("tests/corpus/triton/matmul.cc90.ptx", profile="h100")
    assert inputs.resources.source == "ptxas", inputs.resources.reason
    assert inputs.resources.arch == "sm_90a" and inputs.resources.spill_store_bytes > 0
