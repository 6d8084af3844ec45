"""The evaluation core (what the window, the CLI and validate all call): it must agree with the
engine's own entry points and turn every user edit into the right model input."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from engine.errors import WarplineError
from engine.evaluation import (
    PART_DERIVATION,
    PART_MODELS,
    PART_SWEEP,
    PART_TIMELINE,
    Cancelled,
    Evaluator,
    state_for,
    sweep_csv,
)
from engine.inputs import resolve_inputs
from engine.manybsp import predict_manybsp
from engine.ncu import measured_cycles
from engine.pipeline import describe_kernel, simulate
from engine.state import is_overridden, parse_cell_value, with_cell_edit, with_iterations

ROOT = Path(__file__).resolve().parents[1]
HOTSPOT = ROOT / "samples" / "ptx" / "hotspot.sm_90.ptx"


@pytest.fixture(scope="module")
def inputs():
    return resolve_inputs(HOTSPOT)


@pytest.fixture()
def bench():
    return Evaluator()


def initial_state(inputs):
    return state_for(inputs)


def global_load_row(result) -> int:
    return next(r.index for r in result.manybsp.rows if r.is_global_access and r.lat_comm > 0)


def test_defaults_match_engine_entry_points(inputs, bench):
    state = initial_state(inputs)
    assert state.kernel == inputs.kernel_name and state.launch == inputs.launch
    result = bench.evaluate(inputs, state, sweep=True)
    profile = bench.profile(state.profile)
    mb = predict_manybsp(inputs.module, inputs.kernel_name, profile, state.launch, resources=inputs.resources)
    assert result.manybsp.kernel_exec_cycle == mb.kernel_exec_cycle
    # the Pipeline model's own parts: the kernel's description at the evaluation's occupancy, simulated
    sim = simulate(describe_kernel(inputs.module, inputs.kernel_name, profile, state.launch,
                                   occupancy=result.resident_blocks))
    assert result.simulation.cycles == sim.cycles
    assert len(result.simulation.trace.issues) == len(sim.trace.issues)
    models = list(result.models)
    assert models[:3] == ["manybsp", "manybsp_star", "pipeline"] and len(models) > 4
    many = result.models["manybsp"].figures
    assert many.sm_cycles == mb.kernel_exec_cycle
    assert many.kernel_cycles == many.sm_cycles + profile.device.kernel_launch_cycles
    assert many.microseconds == pytest.approx(many.kernel_cycles / profile.device.clock_mhz)
    assert result.models["pipeline"].sm_cycles == float(sim.cycles)
    assert result.errors == {}
    # One sweep point per resident-blocks value, for every model shown.
    assert set(result.sweep.figures) >= {"manybsp", "pipeline"}
    assert result.sweep.blocks == list(range(1, result.max_blocks + 1))


def test_latency_edit_reaches_both_models_and_reset_restores(inputs, bench):
    state = initial_state(inputs)
    base = bench.evaluate(inputs, state, sweep=False)
    row = global_load_row(base)
    old = next(r.lat_comm for r in base.manybsp.rows if r.index == row)
    edited = with_cell_edit(state, row, "lat_comm", old * 4)
    assert is_overridden(edited, row, "lat_comm") and not is_overridden(state, row, "lat_comm")
    result = bench.evaluate(inputs, edited, sweep=False)
    assert result.manybsp.kernel_exec_cycle > base.manybsp.kernel_exec_cycle
    assert result.simulation.cycles > base.simulation.cycles
    assert f"latency:{row}:lat_comm" in result.manybsp.overridden
    back = with_cell_edit(edited, row, "lat_comm", None, reset=True)
    assert back == state
    again = bench.evaluate(inputs, back, sweep=False)
    assert again.manybsp.kernel_exec_cycle == base.manybsp.kernel_exec_cycle
    assert again.simulation.cycles == base.simulation.cycles


def test_occupancy_choice_changes_simulation_and_manybsp_rho(inputs, bench):
    state = initial_state(inputs)
    full = bench.evaluate(inputs, state, sweep=False)
    one = bench.evaluate(inputs, replace(state, occupancy=1), sweep=False)
    assert one.resident_blocks == 1 and one.description.resident_blocks == 1
    assert one.simulation.cycles > full.simulation.cycles
    assert one.manybsp.prediction["rho"] == 1
    # The Many-BSP sweep evaluates the same equations at each ρ.
    swept = bench.evaluate(inputs, state, sweep=True)
    assert dict(swept.sweep.kernel_cycles("manybsp"))[1] == one.models["manybsp"].kernel_cycles
    assert dict(swept.sweep.kernel_cycles("pipeline"))[1] == one.models["pipeline"].kernel_cycles
    assert dict(swept.sweep.kernel_cycles("manybsp"))[full.resident_blocks] == full.models["manybsp"].kernel_cycles
    # Every point of the curve is what a fresh evaluation at that occupancy predicts, in the
    # window's order of events or not (the memory costs depend on the resident blocks).
    for blocks, cycles in swept.sweep.kernel_cycles("pipeline"):
        fresh = Evaluator().evaluate(inputs, replace(state, occupancy=blocks), sweep=False)
        assert fresh.models["pipeline"].kernel_cycles == cycles, blocks
    # The chosen occupancy is clipped to what the launch allows.
    big = bench.evaluate(inputs, replace(state, occupancy=10_000), sweep=False)
    assert big.resident_blocks == full.max_blocks


def test_iterations_override_and_trip_counts(inputs, bench):
    state = initial_state(inputs)
    base = bench.evaluate(inputs, state, sweep=False)
    loop_step = next(s for s in base.manybsp.level1 if s.iterations > 1)
    more = bench.evaluate(inputs, with_iterations(state, loop_step.index, loop_step.iterations * 10), sweep=False)
    assert more.manybsp.kernel_exec_cycle > base.manybsp.kernel_exec_cycle
    (loop,) = base.analysis.loop_info
    tripped = bench.evaluate(inputs, state.with_launch(trip_overrides={loop.key: 7}), sweep=False)
    assert tripped.analysis.loop_info[0].trip_count.value == 7
    assert tripped.inferred_trips[loop.key].value == loop.trip_count.value   # inferred kept beside it
    assert tripped.simulation.cycles > base.simulation.cycles
    with pytest.raises(WarplineError, match="negative"):
        with_iterations(state, 1, -1)


@pytest.mark.parametrize("column, text, reason", [
    ("lat_comp", "-3", "negative"), ("lat_comm", "abc", "not a number"), ("lat_comp", "", "required"),
    ("n_ma", "1.5", "whole"), ("fu1", "3+x", "not a number"), ("fu1", "1+2+3", r"latency\+occupancy"),
    ("u", "1", "cannot be edited"), ("lat_comp", "inf", "finite"),
])
def test_invalid_cell_values_are_refused_with_a_reason(column, text, reason):
    with pytest.raises(WarplineError, match=reason):
        parse_cell_value(column, text)


def test_valid_cell_values():
    assert parse_cell_value("lat_comp", " 12.5 ") == 12.5
    assert parse_cell_value("fu4", "16+1") == "16+1"
    assert parse_cell_value("issue", "") is None


def test_cancel_check_stops_the_computation(inputs, bench):
    calls = []

    def cancel() -> bool:
        calls.append(1)
        return len(calls) > 2

    with pytest.raises(Cancelled):
        bench.evaluate(inputs, initial_state(inputs), cancel=cancel)


def test_parts_come_timeline_first_then_models_then_the_sweep(inputs, bench):
    seen = []
    progress = []
    final = bench.evaluate(inputs, initial_state(inputs), sweep=True,
                           on_part=lambda ev, parts: seen.append((ev, parts)),
                           progress=lambda f, what: progress.append((f, what)))
    assert [parts for _, parts in seen] == [(PART_TIMELINE,), (PART_MODELS, PART_DERIVATION), (PART_SWEEP,)]
    (timeline, _), (models, _), (swept, _) = seen
    # 1: the simulation and its timeline layout; only the simulation's figures
    assert timeline.simulation is not None and timeline.timeline is not None
    assert timeline.manybsp is None and list(timeline.models) == ["pipeline"] and timeline.sweep is None
    assert "Many-BSP" not in timeline.errors
    # 2: every model, the Many-BSP derivation; no sweep yet
    assert models.manybsp is not None and models.simulation is timeline.simulation and models.sweep is None
    assert {k: r.kernel_cycles for k, r in models.models.items()} == \
        {k: r.kernel_cycles for k, r in final.models.items()}
    assert swept.sweep is not None and final.parts == (PART_TIMELINE, PART_MODELS, PART_DERIVATION, PART_SWEEP)
    fractions = [f for f, _ in progress]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0


def test_profile_error_is_reported_not_raised(inputs, bench):
    result = bench.evaluate(inputs, replace(initial_state(inputs), profile="no-such-gpu"))
    assert "no-such-gpu" in result.errors["profile"] and result.manybsp is None
    assert all(r.figures is None and "no-such-gpu" in r.error for r in result.models.values())


def test_sweep_csv_has_unique_rounded_columns(inputs, bench):
    result = bench.evaluate(inputs, initial_state(inputs), sweep=True)
    lines = sweep_csv(result.sweep).splitlines()
    header = lines[0].split(",")
    assert header[:2] == ["resident_blocks", "resident_warps"] and "manybsp_kernel_cycles" in header
    assert len(header) == len(set(header))
    assert len(lines) == result.max_blocks + 1
    for cell in lines[1].split(",")[2:]:
        assert cell == "" or len(cell.split(".")[-1]) <= 1     # a tenth of a cycle


def test_measured_cycles_one_rule(tmp_path):
    long = tmp_path / "long.csv"
    long.write_text(
        '==PROF== Connected to process\n'
        '"ID","Kernel Name","Block Size","Grid Size","Section Name","Metric Name","Metric Unit","Metric Value"\n'
        '"0","calculate_temp(int, float *)","(16, 16, 1)","(43, 43, 1)","x","gpc__cycles_elapsed.max","cycle",'
        '"12,000"\n'
        '"1","calculate_temp(int, float *)","(16, 16, 1)","(43, 43, 1)","x","gpc__cycles_elapsed.max","cycle",'
        '"13,000"\n'
        '"2","calculate_temp(int, float *)","(16, 16, 1)","(43, 43, 1)","x","gpc__cycles_elapsed.max","cycle",'
        '"30,000"\n'
        '"3","other(int)","(32, 1, 1)","(1, 1, 1)","x","gpc__cycles_elapsed.max","cycle","99"\n')
    # The mangled kernel name matches the demangled launches; repeats give their median.
    assert measured_cycles(long, "_Z14calculate_tempiPf") == 13000
    assert measured_cycles(long, "_Z14calculate_tempiPf", (43, 43, 1), (16, 16, 1)) == 13000
    with pytest.raises(WarplineError, match="no launch of"):
        measured_cycles(long, "_Z14calculate_tempiPf", (1, 1, 1), (16, 16, 1))   # never another launch
    with pytest.raises(WarplineError, match="no launch of"):
        measured_cycles(long, "unknown_kernel")
    zero = tmp_path / "zero.csv"
    zero.write_text('"ID","Kernel Name","gpc__cycles_elapsed.max"\n"","","cycle"\n"0","k","0"\n')
    with pytest.raises(WarplineError, match="positive"):
        measured_cycles(zero, "k")
    bad = tmp_path / "bad.csv"
    bad.write_text('"ID","Kernel Name","dram__bytes"\n"0","k","5"\n')
    with pytest.raises(WarplineError, match="gpc__cycles_elapsed.max"):
        measured_cycles(bad, "k")
