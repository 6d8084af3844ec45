"""The Qt-free facade of the desktop app: it must agree with the engine's own entry points and
turn every user edit into the right model input."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from engine.errors import WarplineError
from engine.inputs import resolve_inputs
from engine.manybsp import predict_manybsp
from engine.pipeline.adapter import simulate_kernel
from engine.workbench import (
    MANYBSP_STAGE,
    PEERS_STAGE,
    SWEEP_STAGE,
    Cancelled,
    Workbench,
    curves_csv,
    initial_state,
    is_overridden,
    parse_cell_value,
    read_ncu_cycles,
    with_cell_edit,
    with_iterations,
)

ROOT = Path(__file__).resolve().parents[1]
HOTSPOT = ROOT / "samples" / "ptx" / "hotspot.sm_90.ptx"


@pytest.fixture(scope="module")
def inputs():
    return resolve_inputs(HOTSPOT)


@pytest.fixture()
def bench():
    return Workbench()


def global_load_row(result) -> int:
    return next(r.index for r in result.manybsp.rows if r.is_global_access and r.lat_comm > 0)


def test_defaults_match_engine_entry_points(inputs, bench):
    state = initial_state(inputs)
    assert state.kernel == inputs.kernel_name and state.launch == inputs.launch
    result = bench.compute(inputs, state)
    profile = bench.profile(state.profile)
    mb = predict_manybsp(inputs.module, inputs.kernel_name, profile, state.launch, resources=inputs.resources)
    assert result.manybsp.kernel_exec_cycle == mb.kernel_exec_cycle
    sim = simulate_kernel(inputs.module, inputs.kernel_name, profile, state.launch,
                          occupancy=result.resident_blocks)
    assert result.simulation.cycles == sim.cycles
    assert len(result.simulation.trace.issues) == len(sim.trace.issues)
    models = [p.model for p in result.predictions]
    assert models[:2] == ["Many-BSP", "Pipeline simulation"] and len(models) > 4
    many = result.predictions[0]
    assert many.microseconds == pytest.approx(many.cycles / profile.device.clock_mhz)
    assert result.errors == {}
    # One sweep point per resident-blocks value, for every model shown.
    assert set(result.sweep) >= {"Many-BSP", "Pipeline simulation"}
    assert [p[0] for p in result.sweep["Many-BSP"]] == list(range(1, result.max_blocks + 1))


def test_latency_edit_reaches_both_models_and_reset_restores(inputs, bench):
    state = initial_state(inputs)
    base = bench.compute(inputs, state, sweep=False)
    row = global_load_row(base)
    old = next(r.lat_comm for r in base.manybsp.rows if r.index == row)
    edited = with_cell_edit(state, row, "lat_comm", old * 4)
    assert is_overridden(edited, row, "lat_comm") and not is_overridden(state, row, "lat_comm")
    result = bench.compute(inputs, edited, sweep=False)
    assert result.manybsp.kernel_exec_cycle > base.manybsp.kernel_exec_cycle
    assert result.simulation.cycles > base.simulation.cycles
    assert f"latency:{row}:lat_comm" in result.manybsp.overridden
    back = with_cell_edit(edited, row, "lat_comm", None, reset=True)
    assert back == state
    again = bench.compute(inputs, back, sweep=False)
    assert again.manybsp.kernel_exec_cycle == base.manybsp.kernel_exec_cycle
    assert again.simulation.cycles == base.simulation.cycles


def test_occupancy_choice_changes_simulation_and_manybsp_rho(inputs, bench):
    state = initial_state(inputs)
    full = bench.compute(inputs, state, sweep=False)
    one = bench.compute(inputs, replace(state, occupancy=1), sweep=False)
    assert one.resident_blocks == 1 and one.description.resident_blocks == 1
    assert one.simulation.cycles > full.simulation.cycles
    assert one.manybsp.prediction["rho"] == 1
    # The Many-BSP sweep evaluates the same equations at each ρ.
    swept = bench.compute(inputs, state)
    assert dict(swept.sweep["Many-BSP"])[1] == one.manybsp.kernel_exec_cycle
    # The chosen occupancy is clipped to what the launch allows.
    big = bench.compute(inputs, replace(state, occupancy=10_000), sweep=False)
    assert big.resident_blocks == full.max_blocks


def test_iterations_override_and_trip_counts(inputs, bench):
    state = initial_state(inputs)
    base = bench.compute(inputs, state, sweep=False)
    loop_step = next(s for s in base.manybsp.level1 if s.iterations > 1)
    more = bench.compute(inputs, with_iterations(state, loop_step.index, loop_step.iterations * 10), sweep=False)
    assert more.manybsp.kernel_exec_cycle > base.manybsp.kernel_exec_cycle
    (loop,) = base.analysis.loop_info
    tripped = bench.compute(inputs, state.with_launch(trip_overrides={loop.key: 7}), sweep=False)
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
        bench.compute(inputs, initial_state(inputs), cancel=cancel)


def test_early_results_come_simulation_first_then_models_then_the_sweep(inputs, bench):
    seen = []
    progress = []
    final = bench.compute(inputs, initial_state(inputs), partial=seen.append,
                          progress=lambda f, what: progress.append((f, what)))
    assert len(seen) == 2 and not any(r.complete for r in seen)
    timeline, models = seen
    # 1: the simulation and its Gantt layout only; Many-BSP has no row yet (not an error row)
    assert timeline.pending == (MANYBSP_STAGE, PEERS_STAGE, SWEEP_STAGE)
    assert timeline.simulation is not None and timeline.timeline is not None
    assert timeline.manybsp is None and not timeline.peers and not timeline.sweep
    assert [p.model for p in timeline.predictions] == ["Pipeline simulation"]
    assert "Many-BSP" not in timeline.errors
    # 2: every model but the occupancy sweep
    assert models.pending == (SWEEP_STAGE,) and models.manybsp is not None and models.peers
    assert models.simulation is timeline.simulation and not models.sweep
    assert [p.cycles for p in models.predictions] == [p.cycles for p in final.predictions]
    assert final.complete and final.pending == () and final.sweep["Pipeline simulation"]
    fractions = [f for f, _ in progress]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0


def test_profile_error_is_reported_not_raised(inputs, bench):
    result = bench.compute(inputs, replace(initial_state(inputs), profile="no-such-gpu"))
    assert "no-such-gpu" in result.errors["profile"] and result.manybsp is None


def test_curves_csv(inputs, bench):
    result = bench.compute(inputs, initial_state(inputs))
    lines = curves_csv(result).splitlines()
    assert lines[0].split(",")[0] == "blocks_per_sm" and "Many-BSP" in lines[0]
    assert len(lines) == result.max_blocks + 1


def test_read_ncu_cycles_long_and_raw_layouts(tmp_path):
    long = tmp_path / "long.csv"
    long.write_text(
        '==PROF== Connected to process\n'
        '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"\n'
        '"0","calculate_temp(int, float *)","Command line profiler metrics","gpc__cycles_elapsed.max",'
        '"cycle","12,000"\n'
        '"0","calculate_temp(int, float *)","Command line profiler metrics","sm__warps_active","warp","5"\n'
        '"1","other(int)","Command line profiler metrics","gpc__cycles_elapsed.max","cycle","99"\n')
    # The mangled kernel name matches the demangled "calculate_temp(...)" launch only.
    assert read_ncu_cycles(long, "_Z14calculate_tempiPf") == 12000
    assert read_ncu_cycles(long) == pytest.approx((12000 + 99) / 2)
    raw = tmp_path / "raw.csv"
    raw.write_text('"ID","Kernel Name","gpc__cycles_elapsed.max"\n"","","cycle"\n"0","k","1,500"\n"1","k","2500"\n')
    assert read_ncu_cycles(raw) == 2000
    bad = tmp_path / "bad.csv"
    bad.write_text('"ID","Kernel Name","dram__bytes"\n"0","k","5"\n')
    with pytest.raises(WarplineError, match="gpc__cycles_elapsed.max"):
        read_ncu_cycles(bad)
