"""PTX front end: a real kernel through analysis, profile costs and the simulator."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from engine.analysis import analyze_kernel
from engine.errors import ModelError
from engine.evaluation import Evaluation, Evaluator, state_for
from engine.inputs import KernelInputs, resolve_inputs
from engine.launch import load_launch_file
from engine.manybsp import Overrides
from engine.pipeline import PipelineOverrides, describe_kernel, ratio_memory_cost
from engine.pipeline.description import Loop
from engine.profiles import load_profile
from engine.ptx import load_ptx
from engine.sass import find_tools
from engine.state import WorkbenchState

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


@pytest.fixture(scope="module")
def mm() -> tuple[object, object, dict[str, object]]:
    module = load_ptx(SAMPLES / "ptx" / "mm.sm_90.ptx")
    launches = {launch.name: launch for launch in load_launch_file(SAMPLES / "mm.launch.toml").launches}
    return module, load_profile("h100"), launches


def test_tile_loop_becomes_one_loop_node_with_its_trip_count(mm) -> None:
    module, profile, launches = mm
    launch = launches["case"]
    d = describe_kernel(module, launch.kernel, profile, launch)
    loops = [node for node in d.paths[0] if isinstance(node, Loop)]
    assert [loop.count for loop in loops] == [10]            # wA / TILE = 320 / 32
    assert d.warps_per_block == 32
    assert d.blocks == -(-200 // profile.device.sm_count)    # the busiest SM's share
    assert any(x.barrier for x in d.instructions)
    assert any(x.memory and x.deps for x in d.instructions)
    assert not d.notes                                        # every trip count was inferred


@pytest.fixture(scope="module")
def mm_inputs():
    """The tiled matrix multiply's inputs per launch of its launch file, for the evaluator."""
    def inputs(config: str) -> KernelInputs:
        return resolve_inputs(SAMPLES / "ptx" / "mm.sm_90.ptx", launch_file=SAMPLES / "mm.launch.toml",
                              config=config, profile="h100")
    return inputs


def pipeline_run(inputs: KernelInputs, state: WorkbenchState | None = None) -> Evaluation:
    ev = Evaluator().evaluate(inputs, state, only=["pipeline"], trace=False)
    assert ev.errors == {} and ev.simulation is not None
    return ev


def test_each_scheduler_has_its_own_narrow_pipes() -> None:
    """MUFU (4 lanes a scheduler), FP64 (16) and tensor cores (1) are each scheduler's own on the
    H100 (bench/micro/pipe_schedulers.cu); FP32 (32 lanes, a warp a cycle) and the memory path
    stay SM-wide; Kepler's units, which the profile does not divide among its schedulers, too."""
    from engine.pipeline.adapter import scheduler_pipes

    names = ("alu", "fp64", "sfu", "ldst", "tensor", "control")
    assert scheduler_pipes(load_profile("h100"), names, 4) == {"fp64", "sfu", "tensor"}
    assert scheduler_pipes(load_profile("h100"), ("alu", "sfu"), 4) == {"sfu"}
    assert scheduler_pipes(load_profile("h100"), names, 1) == frozenset()
    assert scheduler_pipes(load_profile("gtx760"), names, 4) == frozenset()


def test_simulated_kernel_follows_its_edits(mm_inputs) -> None:
    inputs = mm_inputs("tile16-1024")
    state = state_for(inputs)
    base = pipeline_run(inputs, state)
    assert base.simulation.instructions_issued == base.description.total_warp_instructions()
    # a slower global load makes the kernel slower; a trip-count override halves the work
    function = next(f for f in inputs.module.functions if f.name == inputs.kernel_name)
    analysis = analyze_kernel(function, inputs.launch, inputs.module)
    loads = [i + 1 for i, c in enumerate(analysis.classifications) if c.is_global_memory and c.is_load]
    assert loads

    def slower(ov: Overrides) -> None:
        for row in loads:
            ov.latencies[row] = {"lat_comm": 2000.0}

    slow = pipeline_run(inputs, state.with_overrides(slower))
    assert slow.simulation.cycles > base.simulation.cycles
    key = next(k for k, t in analysis.trip_counts.items() if t.value == 64)   # the tile loop: 1024 / 16
    half = pipeline_run(inputs, state.with_launch(trip_overrides={key: 32}))
    assert half.simulation.instructions_issued < base.simulation.instructions_issued
    one_block = pipeline_run(inputs, replace(state, occupancy=1))
    assert one_block.simulation.cycles > base.simulation.cycles


def test_evaluation_gives_every_model(mm_inputs) -> None:
    ev = Evaluator().evaluate(mm_inputs("case"), trace=False)
    assert {"pipeline", "roofline", "volkov", "mwp_cwp", "wfg_star", "gpumech_gto"} <= set(ev.models)
    assert all(r.figures.sm_cycles > 0 for r in ev.models.values())
    assert ev.models["pipeline"].figures.sm_cycles >= ev.models["roofline"].figures.sm_cycles * (1 - 1e-9)


def test_unknown_kernel_is_refused(mm) -> None:
    module, profile, launches = mm
    with pytest.raises(ModelError, match="no kernel"):
        describe_kernel(module, "nope", profile, launches["case"])


def test_memory_mapper_g_changes_memory_costs_only(mm) -> None:
    module, profile, launches = mm
    launch = launches["case"]
    base = describe_kernel(module, launch.kernel, profile, launch)
    conflicted = describe_kernel(module, launch.kernel, profile, launch, overrides=PipelineOverrides(
        memory_cost=ratio_memory_cost(profile, dram_ratio=2.0, conflict_degree=3.0)))
    changed = [i for i, (a, b) in enumerate(zip(base.instructions, conflicted.instructions, strict=True))
               if (a.lam, a.Lam) != (b.lam, b.Lam)]
    assert changed and all(base.instructions[i].memory for i in changed)
    shared = [i for i in changed if "shared" in base.instructions[i].name]
    assert shared and all(conflicted.instructions[i].lam > base.instructions[i].lam for i in shared)


BRANCHY_PTX = """
.version 8.0
.target sm_90
.address_size 64

.visible .entry k(
	.param .u64 k_param_0,
	.param .u32 k_param_1
)
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<8>;
	.reg .f32 	%f<4>;
	.reg .b64 	%rd<4>;

	ld.param.u64 	%rd1, [k_param_0];
	ld.param.u32 	%r1, [k_param_1];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r2, 0;
	mov.f32 	%f1, 0f00000000;
	setp.gt.s32 	%p3, %r1, 100;
	@%p3 bra 	$L__end;
$L__loop:
	ld.global.f32 	%f2, [%rd2];
	setp.gt.f32 	%p1, %f2, 0f3F000000;
	@%p1 bra 	$L__skip;
	add.f32 	%f1, %f1, %f2;
	mul.f32 	%f1, %f1, %f2;
$L__skip:
	add.s32 	%r2, %r2, 1;
	setp.lt.s32 	%p2, %r2, %r1;
	@%p2 bra 	$L__loop;
$L__end:
	st.global.f32 	[%rd2], %f1;
	ret;
}
"""


def test_branches_uniform_resolved_and_data_dependent_split_by_probability() -> None:
    from engine.launch import Launch
    from engine.mechanisms import without
    from engine.ptx import parse_ptx

    module = parse_ptx(BRANCHY_PTX)
    profile = load_profile("h100")
    small = Launch(grid=(1, 1, 1), block=(32, 1, 1), args={1: 8})
    # executed, the warp runs the 8 iterations it runs (the data decide the inner branch)
    d = describe_kernel(module, "k", profile, small)
    assert d.traced and sum(loop.count for loop in d.paths[0] if isinstance(loop, Loop)) == 8
    with without(["execution"]):     # the static rule, for what execution cannot run
        _check_static_branch_rule(module, profile, small)


def _check_static_branch_rule(module, profile, small) -> None:
    from engine.launch import Launch

    d = describe_kernel(module, "k", profile, small)
    loops = [node for node in d.paths[0] if isinstance(node, Loop)]
    assert [loop.count for loop in loops] == [4, 4]            # default p = 0.5 of 8 iterations
    branch = next(i for i, x in enumerate(d.instructions) if "$L__skip" in x.name)
    d = describe_kernel(module, "k", profile, small,
                        overrides=PipelineOverrides(branch_probability={branch: 0.25}))
    loops = [node for node in d.paths[0] if isinstance(node, Loop)]
    sizes = sorted((loop.count, sum(len(r.instructions) for r in loop.body)) for loop in loops)
    assert [count for count, _ in sizes] == [2, 6]
    assert sizes[0][1] < sizes[1][1]                            # the 2 taken iterations skip the body
    # n = 200 > 100: the uniform guard skips the loop, decided from the argument value
    big = Launch(grid=(1, 1, 1), block=(32, 1, 1), args={1: 200})
    assert not any(isinstance(node, Loop) for node in describe_kernel(module, "k", profile, big).paths[0])


def _col_sum_description(**changes: object):
    from engine.inputs import resolve_inputs
    from engine.pipeline.adapter import _find_function, build_description
    from engine.sass.mapping_result import SassMap

    v2 = Path(__file__).resolve().parents[1] / "samples" / "v2"
    inputs = resolve_inputs(v2 / "ptx" / "strided.sm_90.ptx", profile="h100",
                            launch_file=v2 / "strided.launch.toml", config="col_sum/b128")
    analysis = analyze_kernel(_find_function(inputs.module, inputs.kernel_name), inputs.launch, inputs.module)
    # what ptxas does to this loop (engine.sass maps it so): four PTX iterations per SASS pass
    sass = SassMap(kernel=analysis.function.name, arch="sm_90", tool="test", weights={}, opcodes={},
                   classes={}, class_weights={}, unroll={"28-43": 4})
    return build_description(analysis, inputs.profile, inputs.launch, None, module=inputs.module, sass=sass)


def test_unrolled_copies_get_registers_of_their_own() -> None:
    from engine.mechanisms import without
    from engine.pipeline.description import Run
    from engine.pipeline.simulator import simulate

    with without(["execution"]):     # the static path's loop: a traced path is straight-line
        d = _col_sum_description()
    loop = next(n for n in d.paths[0] if isinstance(n, Loop) and n.count == 512 // 16)
    (run,) = loop.body
    assert isinstance(run, Run) and run.renamed is not None
    body = 43 - 28 + 1
    assert len(run.instructions) == 4 * body - 3         # the inner backward branches go
    assert d.extra_slots == 3 * (body - 1)
    # ... from the schedule, not from the count: the PTX runs its branch every iteration
    assert loop.dropped == ((43, 3),)
    counts = d.dynamic_counts(0)
    assert counts[43] == counts[42] == counts[28]
    # the last copy completes into the instructions' own slots (the next pass reads them)
    assert {w for w, _ in run.renamed} >= set(range(28, 44))
    loads = [k for k, i in enumerate(run.instructions) if "ld.global" in d.instructions[i].name]
    consumers = [k for k, i in enumerate(run.instructions) if "add.f32" in d.instructions[i].name]
    assert len(loads) == 16 and max(loads) < min(consumers)   # all 16 loads before the first add
    renamed_cycles = simulate(d, trace=False).cycles
    with without(["renamed_copies", "execution"]):
        plain = _col_sum_description()
    assert plain.extra_slots == 0
    # the PTX's reused registers hold each copy's loads back behind the previous copy's adds
    assert simulate(plain, trace=False).cycles > 1.5 * renamed_cycles


def test_sass_expansions_scale_class_default_costs_only() -> None:
    from engine.pipeline.adapter import PipelineOverrides, _instructions
    from engine.ptx import parse_ptx

    text = (".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
            ".reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n.reg .f32 %f<4>;\n"
            "mov.u32 %r1, %tid.x;\ncvt.u64.u32 %rd1, %r1;\nshr.u64 %rd2, %rd1, 1;\n"
            "sin.approx.f32 %f1, %f2;\nret;\n}\n")
    analysis = analyze_kernel(parse_ptx(text, "k.ptx").kernel("k"))
    profile = load_profile("h100")
    shr, sin = 2, 3
    plain, _ = _instructions(analysis, profile, PipelineOverrides(), {})
    weighted, _ = _instructions(analysis, profile, PipelineOverrides(), {shr: 2.0, sin: 2.0})
    # shr.u64 is two SASS instructions, and its λ is the class default (one SASS instruction's)
    assert weighted[shr].lam == 2 * plain[shr].lam
    # sin.approx's λ was measured on the PTX instruction, its FMUL + MUFU.SIN included
    assert weighted[sin].lam == plain[sin].lam
    # Many-BSP* takes the same factors for its rows' issue and FU cycles
    from engine.pipeline.adapter import issue_scales

    assert issue_scales(analysis, profile, {shr: 2.0, sin: 2.0, 0: 0.0, 1: 0.5}) == {shr: 2.0, sin: 1.0, 0: 0.0,
                                                                                      1: 0.5}


def test_contended_compare_and_swap_loops_take_a_pass_per_lane_of_every_warp() -> None:
    from engine.memory.costs import cas_retry_passes

    # four warps of 32 lanes on one word: each pass of the group retires one lane
    assert cas_retry_passes(32, 4) == (80.0, 128.0)
    assert cas_retry_passes(1, 1) == (1.0, 1.0)
    assert cas_retry_passes(0, 0) == (1.0, 1.0)


def _describe_atomics(config: str):
    """The Pipeline-model description of a suite v2 atomics launch on the H100."""
    from engine.inputs import resolve_inputs
    from engine.pipeline.adapter import build_description

    v2 = SAMPLES / "v2"
    inputs = resolve_inputs(v2 / "ptx" / "atomics.sm_90.ptx", profile="h100",
                            launch_file=v2 / "atomics.launch.toml", config=config)
    analysis = analyze_kernel(inputs.module.kernel(inputs.kernel_name), inputs.launch, inputs.module)
    return build_description(analysis, inputs.profile, inputs.launch, module=inputs.module)


@pytest.mark.skipif(isinstance(find_tools(), str), reason="SASS tools missing")
def test_a_shared_float_atomic_costs_its_retry_passes_and_blocks_the_warp(tmp_path, monkeypatch) -> None:
    # every thread adds 8 values to one shared float: ptxas makes each add a compare-and-swap loop,
    # and Nsight Compute on the H100 counted 154M, 217M and 384M executed warp instructions for
    # blocks of 4, 8 and 16 warps (3M if each atomic passed once)
    from engine.mechanisms import without

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    describe = _describe_atomics
    small, large = describe("atomic_same_shared/b128"), describe("atomic_same_shared/b512")
    passes_small, passes_large = dict(small.retry_passes), dict(large.retry_passes)
    assert passes_small and set(passes_small) == set(passes_large)
    atom = min(passes_small)
    assert passes_small[atom] == 80.0 and passes_large[atom] == 272.0      # 32 x (W + 1) / 2
    # the pipe is busy for every pass; the next instruction waits for the group's last pass
    assert large.instructions[atom].lam > 3 * small.instructions[atom].lam
    assert large.instructions[atom].Lam > 500 * 23
    # (the atomic's result is unused: only the retry loop makes the warp wait)
    assert any(atom in x.deps for x in large.instructions[atom + 1:atom + 3])
    with without(["cas_retry"]):
        plain = describe("atomic_same_shared/b512")
    assert plain.retry_passes == () and plain.instructions[atom].lam < small.instructions[atom].lam


def test_packed_half_arithmetic_on_one_pipe_runs_at_half_the_alternating_rate() -> None:
    from types import SimpleNamespace

    from engine.mechanisms import without
    from engine.pipeline.adapter import packed_half_scale

    def sass(opcodes: dict[int, tuple[str, ...]]) -> SimpleNamespace:
        return SimpleNamespace(opcodes=opcodes, weights=dict.fromkeys(opcodes, 1.0))

    # ptxas alternating the two forms, as in the microbenchmark that measured the λ: as measured
    assert packed_half_scale(sass({1: ("HFMA2",), 2: ("HFMA2.MMA",), 3: ("FFMA",)})) == (frozenset({1, 2}), 1.0)
    # a chain left as plain HFMA2 (suite v2's h2_fma_chain, -35 % before): one pipe, twice the λ
    members, factor = packed_half_scale(sass({k: ("HFMA2",) for k in range(16)} | {16: ("HFMA2.MMA",)}))
    assert len(members) == 17 and factor == pytest.approx(2 * 16 / 17)
    assert packed_half_scale(None) == (frozenset(), 1.0)
    with without(["half_pipe_split"]):
        assert packed_half_scale(sass({1: ("HFMA2",)})) == (frozenset(), 1.0)


def test_an_atomic_whose_old_value_nothing_reads_does_not_hold_the_warp() -> None:
    # atomic_spread_global: `atomicAdd(&bins[h], v)` with the result unused, a RED in SASS; the
    # CAS loop of a max keeps its old value in use and keeps its latency (an L2 round trip)
    describe = _describe_atomics

    def atomics(d):
        return [x for x in d.instructions if x.name.startswith("atom.")]

    (red,) = atomics(describe("atomic_spread_global/b256"))
    assert red.Lam == red.lam
    cas = atomics(describe("atomic_cas_max/b256"))
    assert cas and all(x.Lam > x.lam + 200 for x in cas)


def test_blocks_launch_at_the_profiles_serial_rate(mm) -> None:
    # block_lnch_ovh + warp_lnch_ovh per warp of one scheduler: the fit that measured both
    from engine.mechanisms import without

    module, profile, launches = mm
    launch = launches["case"]
    d = describe_kernel(module, launch.kernel, profile, launch)
    mb, device = profile.manybsp, profile.device
    per_scheduler = -(-d.warps_per_block // device.schedulers_per_sm)
    assert float(d.block_launch_interval) == pytest.approx(mb.block_lnch_ovh + mb.warp_lnch_ovh * per_scheduler)
    with without(["launch_queue"]):
        assert describe_kernel(module, launch.kernel, profile, launch).block_launch_interval == 0


def test_a_freed_block_slot_restarts_after_the_measured_turnaround(mm) -> None:
    # about 300 cycles per block when one empty block fits on the SM: twice the SM-wide rate
    from engine.mechanisms import without
    from tests.micro_script import make_profile_module

    module, profile, launches = mm
    launch = launches["case"]
    script = make_profile_module()
    GPUS, derive_turnaround = script.GPUS, script.derive_turnaround
    turnaround = profile.pipeline.block_turnaround
    assert turnaround == derive_turnaround(GPUS["h100"].results("turn"), profile.manybsp.warp_lnch_ovh)
    assert 250 < turnaround < 330 and turnaround > 1.5 * profile.manybsp.block_lnch_ovh
    d = describe_kernel(module, launch.kernel, profile, launch)
    assert float(d.block_launch_overhead) == pytest.approx(turnaround)
    with without(["block_turnaround"]):
        plain = describe_kernel(module, launch.kernel, profile, launch)
    assert float(plain.block_launch_overhead) == pytest.approx(profile.manybsp.block_lnch_ovh)
    # the SM-wide launch rate is the same either way
    assert plain.block_launch_interval == d.block_launch_interval


@pytest.mark.parametrize(("value", "phrase"), [("nan", "finite"), ("-5", ">= 0"), ('"slow"', "number")])
def test_a_bad_block_turnaround_is_refused_with_its_key(value, phrase) -> None:
    import re

    from engine.errors import ProfileError
    from engine.profiles import SHIPPED_DIR, parse_profile

    text = re.sub(r"(?m)^block_turnaround = .*$", f"block_turnaround = {value}",
                  (Path(SHIPPED_DIR) / "h100.toml").read_text())
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "bad.toml")
    assert info.value.key == "pipeline.blocks.block_turnaround"
    assert phrase in info.value.message
