"""Compiler conventions and the one rule for unknown inputs (engine.conventions), on real numba,
Triton and nvcc PTX: the values supplied, how each was obtained, and what the evaluation and the
command line make of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.analysis import analyze_kernel
from engine.cli import main
from engine.conventions import CONVENTION, COVERAGE, STAND_IN, STAND_IN_VALUE, complete_arguments
from engine.conventions.params import HANDLE, INTEGER, NUMBA, POINTER, TRITON, param_facts
from engine.evaluation import Evaluator
from engine.evaluation.caveats import MARK, figure_caveats
from engine.inputs import default_profile_for, resolve_inputs
from engine.mechanisms import without
from engine.ptx import parse_ptx

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus"
AXPY = CORPUS / "numba" / "axpy.cc90.lineinfo.ptx"
MATMUL = CORPUS / "triton" / "matmul.cc90.ptx"
# numba's axpy(out, a, x, y): each array is meminfo, parent, nitems, itemsize, data, shape, strides
OUT_SHAPE, OUT_STRIDE, X_STRIDE, Y_STRIDE = 5, 6, 14, 21


def completion(path: Path, **launch: object):
    inputs = resolve_inputs(path, profile="h100", use_ptxas=False, **launch)
    analysis = analyze_kernel(inputs.function, inputs.launch, inputs.module)
    return inputs, *complete_arguments(inputs.function, inputs.module, inputs.launch, analysis)


def test_numba_array_fields_follow_from_the_signature_and_the_launch():
    inputs, done, alternatives = completion(AXPY)
    assert done.frontend == NUMBA
    values = {v.index: v for v in done.supplied}
    # the guard i < out.shape[0] covers the launch: one element per thread
    assert values[OUT_SHAPE].value == inputs.launch.n_threads and values[OUT_SHAPE].how == COVERAGE
    # float32 arrays of layout A: strides of a contiguous array, an assumption (not exact)
    for stride in (OUT_STRIDE, X_STRIDE, Y_STRIDE):
        assert values[stride].value == 4 and values[stride].how == CONVENTION
    # the other arrays take out's shape (one group: one alternative moves all three)
    assert {values[13].value, values[20].value} == {inputs.launch.n_threads}
    assert values[13].group == values[20].group == values[OUT_SHAPE].group
    # the alternative doubles the strides and keeps the shapes
    layout = alternatives[values[OUT_STRIDE].group]
    assert {k: layout.args[k] for k in (OUT_STRIDE, X_STRIDE, Y_STRIDE)} == dict.fromkeys((6, 14, 21), 8)
    assert layout.args[OUT_SHAPE] == inputs.launch.n_threads


def test_a_given_shape_is_taken_by_the_arrays_that_share_it():
    inputs, done, _ = completion(AXPY, args={OUT_SHAPE: 1000})
    assert done.supplied_for(OUT_SHAPE) is None            # given
    assert done.supplied_for(13).value == done.supplied_for(20).value == 1000


def test_numba_axpy_without_arguments_predicts_what_the_given_strides_do():
    """The issue's case: predict on numba's axpy without --arg within 10 % of the run with the
    strides given (it was 4.5x off: unknown strides were scattered accesses)."""
    evaluator = Evaluator()
    inputs = resolve_inputs(AXPY, profile="h100", use_ptxas=False)
    given = resolve_inputs(AXPY, profile="h100", use_ptxas=False,
                           args={OUT_STRIDE: 4, X_STRIDE: 4, Y_STRIDE: 4, 2: inputs.launch.n_threads})
    with without(["sass"]):
        guessed = evaluator.evaluate(inputs, only=["pipeline"], trace=False).models["pipeline"].figures
        stated = evaluator.evaluate(given, only=["pipeline"], trace=False).models["pipeline"].figures
    assert abs(guessed.kernel_cycles - stated.kernel_cycles) <= 0.1 * stated.kernel_cycles


def test_triton_strides_pair_with_the_sizes_that_bound_their_index():
    inputs, done, alternatives = completion(MATMUL)
    assert done.frontend == TRITON
    values = {v.index: v for v in done.supplied}
    m, n, k = (values[i].value for i in (3, 4, 5))
    # a (M x K): stride_am = K, stride_ak = 1; b (K x N): stride_bk = N, stride_bn = 1; c: N, 1
    assert [values[i].value for i in range(6, 12)] == [k, 1, n, 1, n, 1]
    assert all(values[i].how == CONVENTION for i in range(6, 12))
    # M and N take the stand-in raised until the launch's last block finds a tile; K keeps it
    assert values[5].value == STAND_IN_VALUE and values[5].how == STAND_IN
    assert m == n > STAND_IN_VALUE
    # column-major alternative: the first dimension contiguous
    layout = alternatives[values[6].group]
    assert (layout.args[6], layout.args[7]) == (1, m)


def test_triton_matmul_counts_its_loads_and_lists_its_assumptions():
    inputs = resolve_inputs(MATMUL, profile="h100", use_ptxas=False)
    with without(["sass"]):
        ev = Evaluator().evaluate(inputs, only=["pipeline"], trace=False)
    loads = [a for a in ev.memory.accesses if a.kind == "load" and a.space.value == "global"]
    assert loads and all(a.sectors_per_request is not None for a in loads)
    assert ev.traffic.dram_read_bytes > 0
    kinds = {a.kind for a in ev.assumptions}
    assert {"argument", "layout", "launch"} <= kinds
    assert figure_caveats(ev).guessed


def test_texture_handles_and_pointers_need_no_value():
    ptx = CORPUS / "nvcc" / "textures.sm_90.ptx"
    module = parse_ptx(ptx.read_text(), str(ptx))
    kernel = next(k for k in module.kernels if any(i.opcode == "tex" for i in k.instructions))
    facts = param_facts(kernel, module, analyze_kernel(kernel, None, module))
    handles = [i for i, kind in facts.kinds.items() if kind == HANDLE]
    assert handles
    inputs = resolve_inputs(ptx, kernel=kernel.name, profile="h100", use_ptxas=False)
    analysis = analyze_kernel(inputs.function, inputs.launch, inputs.module)
    done, _ = complete_arguments(inputs.function, inputs.module, inputs.launch, analysis)
    assert not {v.index for v in done.supplied} & (set(handles) | {i for i, k in facts.kinds.items()
                                                                    if k == POINTER})


def test_a_signature_tells_pointers_from_64_bit_integers():
    ptx = """.version 8.0
.target sm_90
.address_size 64
.visible .entry _Z4fillPfm(.param .u64 _Z4fillPfm_param_0, .param .u64 _Z4fillPfm_param_1)
{
    .reg .pred %p<2>; .reg .b32 %r<5>; .reg .b64 %rd<8>; .reg .f32 %f<2>;
    ld.param.u64 %rd1, [_Z4fillPfm_param_0];
    ld.param.u64 %rd2, [_Z4fillPfm_param_1];
    mov.u32 %r1, %ctaid.x; mov.u32 %r2, %ntid.x; mov.u32 %r3, %tid.x;
    mad.lo.s32 %r4, %r1, %r2, %r3;
    cvt.u64.u32 %rd3, %r4;
    setp.ge.u64 %p1, %rd3, %rd2;
    @%p1 bra $L__done;
    cvta.to.global.u64 %rd4, %rd1;
    shl.b64 %rd5, %rd3, 2;
    add.s64 %rd6, %rd4, %rd5;
    mov.f32 %f1, 0f3F800000;
    st.global.f32 [%rd6], %f1;
$L__done:
    ret;
}
"""
    module = parse_ptx(ptx, "fill.ptx")
    kernel = module.kernels[0]
    facts = param_facts(kernel, module, analyze_kernel(kernel, None, module))
    assert facts.kinds == {0: POINTER, 1: INTEGER}
    launch = resolve_inputs("fill.ptx", module=module, profile="h100", grid=(10, 1, 1), block=(128, 1, 1),
                            use_ptxas=False).launch
    done, _ = complete_arguments(kernel, module, launch, analyze_kernel(kernel, launch, module))
    (n,) = done.supplied
    assert (n.index, n.value, n.how) == (1, 1280, COVERAGE)        # the guard covers 10 x 128 threads


@pytest.mark.parametrize("path, profile", [
    (CORPUS / "nvcc" / "memory.sm_80.ptx", "a100"),
    (CORPUS / "nvrtc" / "scan.compute_89.ptx", "l40s"),
    (CORPUS / "nvcc" / "memory.sm_100.ptx", "b200"),
    (CORPUS / "nvcc" / "memory.sm_120.ptx", "rtx5090"),
    (CORPUS / "nvcc" / "memory.sm_90.ptx", "h100"),
])
def test_info_picks_the_profile_of_the_ptx_architecture(capsys, path, profile):
    assert main(["info", str(path), "--no-ptxas", "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["profile"] == profile and out["profile_source"].startswith("the default for sm_")
    assert f"using {profile!r}" in captured.err
    if profile != "h100":
        assert out["profile_provenance"] == f"{profile}: from specifications, not measured here"


def test_an_architecture_without_a_profile_takes_the_nearest_newer_one():
    module = parse_ptx((CORPUS / "nvcc" / "memory.sm_86.ptx").read_text(), "memory.sm_86.ptx")
    name, why = default_profile_for(module)
    assert name == "l40s" and "sm_86" in why and "nearest newer" in why and "sm_89" in why


def test_predict_says_on_its_first_line_that_the_figures_rest_on_guesses(capsys):
    assert main(["predict", str(AXPY), "--profile", "h100", "--no-ptxas", "--model", "roofline",
                 "--no-effects"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(MARK) and "assumed input" in out[0]
    assert any(line.strip().startswith("assumptions (") for line in out)
    row = next(line for line in out if line.strip().startswith("Roofline"))
    assert MARK in row


def test_predict_json_lists_assumptions_with_effects(capsys):
    assert main(["predict", str(AXPY), "--profile", "h100", "--no-ptxas", "--model", "pipeline", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["caveats"]["rests_on_assumptions"] and out["models"]["pipeline"]["rests_on_assumptions"]
    layout = next(a for a in out["assumptions"] if a["kind"] == "layout")
    assert layout["effect"]["percent"] > 0 and layout["fill_in"].startswith("--arg 6=VALUE")
    assert {v["how"] for v in out["supplied_arguments"]} == {COVERAGE, CONVENTION}


def test_effects_past_their_budget_say_so_and_are_not_evaluated():
    """The command line skips the alternatives' re-evaluations past its bound, and each effect
    says why; without a bound they are evaluated."""
    inputs = resolve_inputs(AXPY, profile="h100", use_ptxas=False)
    skipped = Evaluator().evaluate(inputs, only=["pipeline"], trace=False, effects=True, effects_max_instructions=1)
    assert skipped.effects and all(e.alternative is None and "--effects evaluates" in e.error
                                   for e in skipped.effects.values())
    done = Evaluator().evaluate(inputs, only=["pipeline"], trace=False, effects=True, effects_max_instructions=None)
    assert done.effects.keys() == skipped.effects.keys()
    assert all(e.alternative is not None for e in done.effects.values())


def test_given_values_remove_the_marks(capsys, tmp_path):
    csv = tmp_path / "p.csv"
    common = ["predict", str(AXPY), "--profile", "h100", "--no-ptxas", "--model", "roofline", "--no-effects",
              "--grid", "1056", "--block", "256", "--csv", str(csv)]
    given = {5: 270336, 13: 270336, 20: 270336, 6: 4, 14: 4, 21: 4}
    args = [*common, *(f"--arg={i}={v}" for i, v in given.items())]
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert not any(MARK in line for line in out)
    comments, header = _csv_head(csv)
    assert header.split(",")[3] == "sm_cycles"
    assert comments and not any(line.startswith("# assumptions:") for line in comments)
    # one stride left out: marked again, in the text, the CSV header and its comment lines
    assert main([*common, *(f"--arg={i}={v}" for i, v in given.items() if i != Y_STRIDE)]) == 0
    assert capsys.readouterr().out.startswith(MARK)
    comments, header = _csv_head(csv)
    assert "sm_cycles (rests on 1 assumed input)" in header
    assert any(line.startswith(f"# assumptions: {MARK} the figures rest on 1 assumed input:") for line in comments)


def _csv_head(path) -> tuple[list[str], str]:
    """A CSV export's ``# `` comment lines (what it was computed from) and its header line."""
    lines = path.read_text().splitlines()
    comments = [line for line in lines if line.startswith("# ")]
    return comments, lines[len(comments)]


def test_csv_headers_of_guessed_figures_are_marked(tmp_path, capsys):
    csv = tmp_path / "p.csv"
    assert main(["predict", str(AXPY), "--profile", "h100", "--no-ptxas", "--model", "roofline",
                 "--no-effects", "--csv", str(csv)]) == 0
    comments, header = _csv_head(csv)
    assert "sm_cycles (rests on 3 assumed inputs)" in header and "launch_cycles," in header
    assert any(line.startswith(f"# assumptions: {MARK} the figures rest on 3 assumed inputs:") for line in comments)


def test_a_file_of_several_kernels_names_the_one_it_runs(capsys):
    path = CORPUS / "nvcc" / "memory.sm_90.ptx"
    assert main(["predict", str(path), "--profile", "h100", "--no-ptxas", "--model", "roofline",
                 "--no-effects"]) == 0
    err = capsys.readouterr().err
    assert "kernels; running the first" in err and "--kernel all" in err


def test_kernel_all_runs_every_kernel(capsys):
    path = CORPUS / "triton" / "vector_add.cc90.ptx"
    assert main(["predict", str(path), "--profile", "h100", "--no-ptxas", "--model", "roofline",
                 "--no-effects", "--kernel", "all", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [k["kernel"] for k in out["kernels"]] == ["vector_add"]
    assert main(["table", str(path), "--kernel", "all"]) == 2
    assert "one kernel at a time" in capsys.readouterr().err


def test_grid_alone_takes_the_block_from_reqntid(capsys):
    path = CORPUS / "triton" / "vector_add.cc90.ptx"
    out = json.loads(_run(capsys, "info", str(path), "--profile", "h100", "--no-ptxas", "--grid", "64"))
    launch = out["kernels"][0]["launch"]
    assert launch["grid"] == [64, 1, 1] and launch["block"] == [128, 1, 1] and ".reqntid" in launch["source"]
    assert not launch["source"].startswith("assumed")
    out = json.loads(_run(capsys, "info", str(path), "--profile", "h100", "--no-ptxas", "--block", "256"))
    assert out["kernels"][0]["launch"]["block"] == [256, 1, 1]


def _run(capsys, *argv: str) -> str:
    assert main([*argv, "--json"]) == 0
    return capsys.readouterr().out


TRITON_SPECIALISED = """//
// Generated by LLVM NVPTX Back-End
//
.version 8.4
.target sm_90a
.address_size 64
.extern .shared .align 16 .b8 global_smem[];
.visible .entry rows(
    .param .u64 .ptr .global .align 1 rows_param_0,
    .param .u32 rows_param_1,
    .param .u32 rows_param_2,
    .param .u32 rows_param_3
)
.reqntid 128
{
    .reg .pred %p<2>; .reg .b16 %rs<2>; .reg .b32 %r<12>; .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [rows_param_0];
    ld.param.u32 %r1, [rows_param_1];
    ld.param.u32 %r2, [rows_param_2];
    ld.param.u32 %r3, [rows_param_3];
    mov.u32 %r4, %tid.x;
    mov.u32 %r5, %ctaid.x;
    shr.u32 %r6, %r4, 6;
    shl.b32 %r7, %r5, 1;
    add.s32 %r8, %r7, %r6;
    rem.s32 %r9, %r8, %r1;
    and.b32 %r10, %r4, 63;
    mul.lo.s32 %r11, %r9, %r3;
    add.s32 %r11, %r11, %r10;
    mul.wide.s32 %rd2, %r11, 2;
    add.s64 %rd3, %rd1, %rd2;
    setp.lt.s32 %p1, %r10, %r2;
    @%p1 ld.global.b16 %rs1, [%rd3];
    ret;
}
"""


def test_a_stride_triton_compiled_away_leaves_its_index_bare():
    """``tl.load(a + rows[:, None] * stride_r + cols[None, :])`` after Triton specialised the
    column stride to 1: parameters (a, M, K, stride_r); the row stride is the row length K,
    the size that bounds the bare column index."""
    module = parse_ptx(TRITON_SPECIALISED, "rows.py.ptx")
    module.files[1] = "kernels.py"
    inputs = resolve_inputs("rows.py.ptx", module=module, profile="h100", use_ptxas=False)
    assert inputs.launch.block == (128, 1, 1)
    analysis = analyze_kernel(inputs.function, inputs.launch, module)
    done, alternatives = complete_arguments(inputs.function, module, inputs.launch, analysis)
    assert done.frontend == TRITON
    values = {v.index: v for v in done.supplied}
    k = values[2].value
    assert values[3].value == k and values[3].how == CONVENTION
    # the alternative keeps the compiled-away unit stride and pads the rows instead
    assert alternatives[values[3].group].args[3] == 2 * k
