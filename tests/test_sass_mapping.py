"""SASS weights per PTX instruction (engine.sass) on small hand-written kernels.

These need ptxas and nvdisasm (the nvidia-cuda-nvcc / nvidia-cuda-nvdisasm wheels, dependencies
of Warpline); without them they are skipped with the reason.
"""

from __future__ import annotations

import pytest

from engine.ptx import parse_ptx
from engine.sass import SassMap, SassUnavailable, cache, find_tools, sass_map

TOOLS = find_tools()
needs_tools = pytest.mark.skipif(isinstance(TOOLS, str), reason=f"SASS tools missing: {TOOLS}")

HEADER = ".version {version}\n.target sm_90\n.address_size 64\n\n"

SIN_DIV = """
.visible .entry k_sin(
	.param .u64 k_sin_param_0
)
{
	.reg .b32 	%r<4>;
	.reg .f32 	%f<4>;
	.reg .b64 	%rd<4>;

	ld.param.u64 	%rd1, [k_sin_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %tid.x;
	mul.wide.u32 	%rd3, %r1, 4;
	add.s64 	%rd2, %rd2, %rd3;
	ld.global.f32 	%f1, [%rd2];
	sin.approx.f32 	%f2, %f1;
	div.rn.f32 	%f3, %f2, %f1;
	st.global.f32 	[%rd2], %f3;
	ret;
}
"""

BROADCAST = """
.visible .entry k_lds(
	.param .u64 k_lds_param_0
)
{
	.reg .b32 	%r<8>;
	.reg .f32 	%f<12>;
	.reg .b64 	%rd<4>;
	.shared .align 16 .b8 tile[256];

	ld.param.u64 	%rd1, [k_lds_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %tid.x;
	mul.wide.u32 	%rd3, %r1, 4;
	add.s64 	%rd2, %rd2, %rd3;
	ld.global.f32 	%f1, [%rd2];
	shl.b32 	%r2, %r1, 2;
	mov.u32 	%r3, tile;
	add.s32 	%r4, %r3, %r2;
	st.shared.f32 	[%r4], %f1;
	bar.sync 	0;
	ld.shared.f32 	%f2, [tile];
	ld.shared.f32 	%f3, [tile+4];
	ld.shared.f32 	%f4, [tile+8];
	ld.shared.f32 	%f5, [tile+12];
	mul.f32 	%f6, %f1, %f2;
	fma.rn.f32 	%f7, %f1, %f3, %f6;
	fma.rn.f32 	%f8, %f1, %f4, %f7;
	fma.rn.f32 	%f9, %f1, %f5, %f8;
	st.global.f32 	[%rd2], %f9;
	ret;
}
"""

LOOP = """
.visible .entry k_loop(
	.param .u64 k_loop_param_0,
	.param .u32 k_loop_param_1
)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<8>;
	.reg .f32 	%f<6>;
	.reg .b64 	%rd<6>;

	ld.param.u64 	%rd1, [k_loop_param_0];
	ld.param.u32 	%r2, [k_loop_param_1];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %tid.x;
	mov.f32 	%f1, 0f00000000;
	mov.u32 	%r3, 0;
	setp.lt.s32 	%p1, %r2, 1;
	@%p1 bra 	$L__done;
$L__loop:
	mad.lo.s32 	%r4, %r3, 1024, %r1;
	mul.wide.u32 	%rd3, %r4, 4;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.f32 	%f2, [%rd4];
	fma.rn.f32 	%f1, %f2, %f2, %f1;
	add.s32 	%r3, %r3, 1;
	setp.lt.s32 	%p2, %r3, %r2;
	@%p2 bra 	$L__loop;
$L__done:
	mul.wide.u32 	%rd5, %r1, 4;
	add.s64 	%rd5, %rd2, %rd5;
	st.global.f32 	[%rd5], %f1;
	ret;
}
"""

# A loop of run-time length the way nvcc writes it: a guard, then the loop's set-up (the code that
# falls through into it), then a body ptxas unrolls with remainder code around it.
COUNTED_LOOP = """
.visible .entry k_counted(
	.param .u64 k_counted_param_0,
	.param .u32 k_counted_param_1
)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<8>;
	.reg .f32 	%f<6>;
	.reg .b64 	%rd<6>;

	ld.param.u64 	%rd1, [k_counted_param_0];
	ld.param.u32 	%r2, [k_counted_param_1];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %tid.x;
	mul.wide.u32 	%rd5, %r1, 4;
	add.s64 	%rd5, %rd2, %rd5;
	ld.global.f32 	%f1, [%rd5];
	setp.lt.s32 	%p1, %r2, 1;
	@%p1 bra 	$L__done;
	mov.u32 	%r3, 0;
$L__loop:
	fma.rn.f32 	%f1, %f1, 0f3F7FDF3B, 0f3E800000;
	add.s32 	%r3, %r3, 1;
	setp.lt.s32 	%p2, %r3, %r2;
	@%p2 bra 	$L__loop;
$L__done:
	st.global.f32 	[%rd5], %f1;
	ret;
}
"""

# nvcc -lineinfo output style: .loc lines with function_name/inlined_at, a .file table and a
# DWARF string section, and a debug target.
WITH_LOC = """
.visible .entry k_loc(
	.param .u64 k_loc_param_0
)
{
	.local .align 4 .b8 	__local_depot0[16];
	.reg .b64 	%SPL;
	.reg .f32 	%f<4>;
	.reg .b64 	%rd<3>;
	.loc	1 5 0
	mov.u64 	%SPL, __local_depot0;
	ld.param.u64 	%rd1, [k_loc_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	.loc	1 6 3
	ld.global.f32 	%f1, [%rd2];
	.loc	2 40 7, function_name $L__info_string0, inlined_at 1 6 3
	sin.approx.f32 	%f2, %f1;
	.loc	1 7 3
	st.local.f32 	[%SPL], %f2;
	ld.local.f32 	%f3, [%SPL];
	st.global.f32 	[%rd2], %f3;  ret;
}
	.file	1 "k.cu"
	.file	2 "/usr/include/helpers.h"
	.section	.debug_str
	{
$L__info_string0:
.b8 104,101,108,112,0
	}
"""


def _source(body: str, version: str = "8.0") -> str:
    return HEADER.format(version=version) + body


def _map(text: str, kernel: str, tmp_path, monkeypatch) -> SassMap:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cache.clear_memory()
    found = sass_map(text, kernel)
    assert isinstance(found, SassMap), getattr(found, "reason", found)
    return found


def _index(text: str, kernel: str, opcode: str, nth: int = 0) -> int:
    body = parse_ptx(text, "t.ptx").kernel(kernel).instructions
    return [i.index for i in body if i.full_opcode.startswith(opcode)][nth]


@needs_tools
def test_sin_approx_becomes_two_instructions_and_division_several(tmp_path, monkeypatch) -> None:
    text = _source(SIN_DIV)
    m = _map(text, "k_sin", tmp_path, monkeypatch)
    sin = _index(text, "k_sin", "sin.approx")
    assert m.weights[sin] == 2
    assert "MUFU.SIN" in m.opcodes[sin] and m.class_weights[sin]["sfu"] == 1
    div = _index(text, "k_sin", "div.rn")
    # Fast path only: the reciprocal seed, Newton steps and the check; the slow-path subroutine
    # ptxas appends is left out.
    assert 6 <= m.weights[div] <= 12
    assert "MUFU.RCP" in m.opcodes[div] and "CALL.REL.NOINC" not in m.opcodes[div]
    assert any("slow paths" in note for note in m.notes)
    # cvta and the 64-bit multiply fold into the address arithmetic.
    assert m.weights[_index(text, "k_sin", "cvta")] == 0
    assert abs(sum(m.weights.values()) + m.overhead - m.static_sass) < 1e-6


@needs_tools
def test_four_broadcast_shared_loads_share_one_lds128(tmp_path, monkeypatch) -> None:
    text = _source(BROADCAST)
    m = _map(text, "k_lds", tmp_path, monkeypatch)
    loads = [_index(text, "k_lds", "ld.shared", k) for k in range(4)]
    assert [m.weights[i] for i in loads] == [0.25] * 4
    assert all(m.opcodes[i] == ("LDS.128",) for i in loads)
    assert m.classes[loads[0]] == ("ldst",)


@needs_tools
def test_unrolled_loop_keeps_per_iteration_weights(tmp_path, monkeypatch) -> None:
    text = _source(LOOP)
    m = _map(text, "k_loop", tmp_path, monkeypatch)
    ld = _index(text, "k_loop", "ld.global")
    fma = _index(text, "k_loop", "fma")
    bra = _index(text, "k_loop", "bra", 1)
    # ptxas unrolls the loop 4 times: 4 LDGs per SASS pass, one per PTX iteration.
    assert list(m.unroll.values()) == [4]
    assert m.weights[ld] == 1 and m.weights[fma] == 1
    assert m.weights[bra] == 0.25          # one backward branch per 4 PTX iterations
    body = range(_index(text, "k_loop", "mad"), bra + 1)
    assert 3 <= sum(m.weights[i] for i in body) <= 6   # 8 PTX instructions per iteration


@needs_tools
def test_existing_loc_and_debug_sections_are_replaced(tmp_path, monkeypatch) -> None:
    text = _source(WITH_LOC).replace(".target sm_90", ".target sm_90, debug")
    m = _map(text, "k_loc", tmp_path, monkeypatch)
    sin = _index(text, "k_loc", "sin.approx")
    st = _index(text, "k_loc", "st.global")
    assert m.weights[sin] == 2
    assert m.opcodes[st] == ("STG.E",)
    assert m.weights[_index(text, "k_loc", "ret")] == 1


@needs_tools
def test_ptx_newer_than_the_system_ptxas(tmp_path, monkeypatch) -> None:
    # ptxas 13.0 (a CUDA 13.0 toolkit) reads PTX up to 9.0; the wheel's ptxas reads 9.5.
    text = _source(SIN_DIV, version="9.5")
    m = _map(text, "k_sin", tmp_path, monkeypatch)
    assert m.weights[_index(text, "k_sin", "sin.approx")] == 2


@needs_tools
def test_instruction_indices_are_the_parsers(tmp_path, monkeypatch) -> None:
    text = _source(LOOP) + _source(SIN_DIV).split("\n", 4)[4]
    module = parse_ptx(text, "two.ptx")
    m = _map(text, "k_sin", tmp_path, monkeypatch)
    kernel = module.kernel("k_sin")
    assert set(m.weights) == {i.index for i in kernel.instructions}
    assert m.kernel == "k_sin" and m.arch == "sm_90"


def test_unknown_kernel_is_a_warpline_error(tmp_path, monkeypatch) -> None:
    from engine.sass import SassError

    if isinstance(TOOLS, str):
        pytest.skip(f"SASS tools missing: {TOOLS}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with pytest.raises(SassError, match="no kernel named 'nope'"):
        sass_map(_source(SIN_DIV), "nope")


def test_old_architectures_fall_back_with_a_reason() -> None:
    found = sass_map(_source(SIN_DIV).replace("sm_90", "sm_61"), "k_sin")
    assert isinstance(found, SassUnavailable) and "sm_75" in found.reason


COLLATZ = """
.visible .entry k_steps(
	.param .u64 k_steps_param_0
)
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<12>;

	ld.param.u64 	%rd1, [k_steps_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %tid.x;
	cvt.u64.u32 	%rd3, %r1;
	add.s64 	%rd4, %rd3, 27;
	mov.u32 	%r2, 0;
$L__loop:
	and.b64 	%rd5, %rd4, 1;
	setp.eq.b64 	%p1, %rd5, 1;
	mul.lo.s64 	%rd6, %rd4, 3;
	add.s64 	%rd7, %rd6, 1;
	shr.u64 	%rd8, %rd4, 1;
	selp.b64 	%rd4, %rd7, %rd8, %p1;
	add.s32 	%r2, %r2, 1;
	setp.gt.u64 	%p2, %rd4, 1;
	@%p2 bra 	$L__loop;
	mul.wide.u32 	%rd9, %r1, 4;
	add.s64 	%rd10, %rd2, %rd9;
	st.global.u32 	[%rd10], %r2;
	ret;
}
"""


@needs_tools
def test_an_integer_loop_of_64_bit_halves_is_not_taken_as_unrolled(tmp_path, monkeypatch) -> None:
    text = _source(COLLATZ)
    m = _map(text, "k_steps", tmp_path, monkeypatch)
    # no float or memory instruction to count copies by: most instructions come as two SASS
    # halves, which is not ptxas unrolling the loop twice
    assert list(m.unroll.values()) == [1]
    assert m.weights[_index(text, "k_steps", "setp.gt.u64")] == 2   # ISETP + ISETP.EX
    body = range(_index(text, "k_steps", "and.b64"), _index(text, "k_steps", "bra") + 1)
    assert sum(m.weights[i] for i in body) >= 12                    # 9 PTX instructions a pass


# Every thread adds to one shared float `iters` times: sm_90 has no shared-memory float add, so
# ptxas makes each atom.shared.add.f32 a loop of LDS, FADD and ATOMS.CAST.SPIN.
SHARED_FLOAT_ADD = """
.visible .entry k_cas(
	.param .u64 k_cas_param_0,
	.param .u32 k_cas_param_1
)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<8>;
	.reg .f32 	%f<6>;
	.reg .b64 	%rd<4>;
	.shared .align 4 .f32 total;

	ld.param.u64 	%rd1, [k_cas_param_0];
	ld.param.u32 	%r1, [k_cas_param_1];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r2, %tid.x;
	cvt.rn.f32.u32 	%f1, %r2;
	mov.u32 	%r3, 0;
	mov.u32 	%r4, total;
$L__loop:
	add.s32 	%r3, %r3, 1;
	cvt.rn.f32.s32 	%f2, %r3;
	mul.f32 	%f3, %f1, %f2;
	atom.shared.add.f32 	%f4, [%r4], %f3;
	setp.lt.s32 	%p1, %r3, %r1;
	@%p1 bra 	$L__loop;
	bar.sync 	0;
	setp.ne.s32 	%p2, %r2, 0;
	@%p2 bra 	$L__done;
	ld.shared.f32 	%f5, [total];
	st.global.f32 	[%rd2], %f5;
$L__done:
	ret;
}
"""


@needs_tools
def test_a_shared_float_atomic_is_a_retry_loop_counted_with_its_ptx_loop(tmp_path, monkeypatch) -> None:
    text = _source(SHARED_FLOAT_ADD)
    m = _map(text, "k_cas", tmp_path, monkeypatch)
    atom = _index(text, "k_cas", "atom.shared")
    # the compare-and-swap loop is a pass of the atomic, not a loop of the kernel: it neither
    # hides the atomic (weight 0, as when the PTX loop's home was the outer SASS loop) nor sets
    # the unrolling (LDS + ATOMS per pass are not two copies of one access: counted as such, the
    # loop looked unrolled 8 times and each pass weighed 3)
    assert "ATOMS.CAST.SPIN" in m.opcodes[atom] and "LDS" in m.opcodes[atom]
    assert 4 <= m.retry_body[atom] == m.weights[atom] <= 8
    # each further pass adds the loop's instructions to the count
    counts = [0] * (max(m.weights) + 1)
    counts[atom] = 1
    assert m.executed(counts, {atom: 3.0}) - m.executed(counts) == pytest.approx(2 * m.retry_body[atom])


@needs_tools
def test_a_shuffle_fallback_that_rejoins_is_not_taken_for_a_loop(tmp_path, monkeypatch) -> None:
    """scan_partials inlines a five-step warp scan twice in its loop. ptxas places the second
    copy's fallback (a warp not converged) after the kernel's EXIT and jumps back from it: a
    backward jump whose target the path to it does not pass. Taken for a loop, it made the span
    from the rejoin point the loop's home, and the first copy's shuffles weighed 0."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "samples" / "v2" / "ptx" / "scan.sm_90.ptx"
    text = path.read_text()
    kernel = next(f.name for f in parse_ptx(text, "scan.ptx").functions if "scan_partials" in f.name)
    m = _map(text, kernel, tmp_path, monkeypatch)
    body = parse_ptx(text, "scan.ptx").kernel(kernel).instructions
    shuffles = [i.index for i in body if i.opcode == "shfl"]
    assert len(shuffles) == 10
    # one SHFL per PTX shuffle in each copy (the fallback's copies stay outside the loop's home)
    assert [m.weights[i] for i in shuffles] == [1.0] * 10
    assert list(m.unroll.values()) == [1]


@needs_tools
def test_a_join_point_is_counted_with_the_code_after_the_if(tmp_path, monkeypatch) -> None:
    """ptxas ends an ``if`` whose lanes may diverge with a BSYNC at the join; every warp that
    reaches the join runs it, those that skipped the body too. Nsight Compute's source counters
    of `scan_block_blelloch` (bench/results/device-v3-source-counts-2026-11-28) count it once per
    BSSY of the up- and down-sweep loops: it belongs to the instruction after the body, not to
    the body's last store."""
    from pathlib import Path

    path = Path(__file__).parents[1] / "samples" / "v3" / "ptx" / "scansort.sm_90.ptx"
    text = path.read_text(encoding="utf-8")
    kernel = "_Z19scan_block_blellochPKfPfS1_i"
    m = _map(text, kernel, tmp_path, monkeypatch)
    body = {i.index: i for i in parse_ptx(text, str(path)).kernel(kernel).instructions}
    joins = [i for i, ops in m.opcodes.items() if any(op.startswith("BSYNC") for op in ops)]
    assert len(joins) >= 2
    # the two loops' joins sit with the code after their bodies (a shift, a branch), not with
    # the shared store that ends each body
    assert sum(1 for i in joins if not body[i].full_opcode.startswith("st.shared")) >= 2


@needs_tools
def test_a_shuffle_fallback_for_diverged_warps_is_not_counted(tmp_path, monkeypatch) -> None:
    """ptxas guards a warp-wide shuffle it cannot prove converged with ``BRA.DIV`` to a fallback
    after the kernel's EXIT (``WARPSYNC.COLLECTIVE``, the shuffle, ``ENDCOLLECTIVE``, the loop's
    arithmetic again). Nsight Compute's source counters of `radix_local_4bit`
    (bench/results/device-v3-source-counts-2026-11-28) count every fallback instruction 0 times:
    the warps that shuffle are converged. Counted, they made its executed instructions 24 % high."""
    from pathlib import Path

    path = Path(__file__).parents[1] / "samples" / "v3" / "ptx" / "scansort.sm_90.ptx"
    text = path.read_text(encoding="utf-8")
    kernel = "_Z16radix_local_4bitPKjPjS1_ii"
    m = _map(text, kernel, tmp_path, monkeypatch)
    body = parse_ptx(text, str(path)).kernel(kernel).instructions
    shuffles = [i.index for i in body if i.opcode == "shfl"]
    assert shuffles
    assert all(sum(op.startswith("SHFL") for op in m.opcodes[i]) == 1 for i in shuffles)
    assert not any(op.startswith(("ENDCOLLECTIVE", "WARPSYNC.COLLECTIVE")) for ops in m.opcodes.values() for op in ops)
    assert any("slow paths" in note for note in m.notes)


def test_loop_tails_count_per_entry_by_the_iterations_left_over() -> None:
    from engine.sass.mapping_result import LoopTail

    # 5 set-up instructions; a tail of 18 instructions holding 3 iterations (6 each) where the
    # steady state spends 4 per iteration
    tail = LoopTail(entry=(2, 3), latch=9, unroll=4, setup=5.0, tail=18.0, tail_iterations=3,
                    home_per_iteration=4.0)
    counts = [0] * 12
    counts[3], counts[9] = 1, 8              # one entry, 8 iterations: two full passes, nothing left
    assert tail.per_warp(counts) == 5.0
    counts[9] = 7                            # 3 left: 3 x (6 - 4) more than the weights charge
    assert tail.per_warp(counts) == 5.0 + 6.0
    counts[3], counts[9] = 2, 11             # entered twice, 5.5 on average: 1.5 left per entry
    assert tail.per_warp(counts) == pytest.approx(2 * (5.0 + 1.5 * 2.0))
    counts[3] = counts[2] = 0                # never entered
    assert tail.per_warp(counts) == 0.0


@needs_tools
def test_a_short_loop_pays_its_set_up_and_remainder_code_per_entry(tmp_path, monkeypatch) -> None:
    text = _source(COUNTED_LOOP)
    m = _map(text, "k_counted", tmp_path, monkeypatch)
    entry = _index(text, "k_counted", "mov.u32", 1)
    latch = _index(text, "k_counted", "bra", 1)
    (tail,) = m.loop_tails
    assert tail.entry == (entry,) and tail.latch == latch
    assert tail.unroll == list(m.unroll.values())[0] > 1
    assert tail.setup + tail.tail > 0 and tail.tail_iterations >= 1
    counts = [1.0] * len(m.weights)
    for i in range(entry + 1, latch + 1):
        counts[i] = float(tail.unroll)       # a whole number of steady-state passes
    whole = m.executed(counts)
    counts[entry + 1:latch + 1] = [float(tail.unroll + 1)] * (latch - entry)
    one_more = m.executed(counts)
    # one iteration more runs in the remainder code, which costs what it holds per iteration
    assert one_more - whole == pytest.approx(tail.tail / tail.tail_iterations)
    counts[entry + 1:latch + 1] = [float(tail.unroll)] * (latch - entry)
    weighted = sum(m.weights[i] * n for i, n in enumerate(counts)) + m.overhead
    assert whole == pytest.approx(weighted + tail.setup)      # nothing left over: the set-up alone
    assert any("counted per entry" in note for note in m.notes)
