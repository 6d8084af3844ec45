"""DRAM latency under load (engine/pipeline/dram_under_load.py): the measured curve in the profiles, its
validation, and the simulation solved together with the DRAM bandwidth share it draws."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from engine.errors import ProfileError
from engine.evaluation import Evaluator, state_for
from engine.inputs import resolve_inputs
from engine.mechanisms import without
from engine.pipeline.dram_under_load import (
    curve_for_writes,
    extra_latency,
    peak_dram_bytes_per_cycle,
    queue_cycles,
    simulate_under_dram_load,
)
from engine.pipeline.simulator import simulate
from engine.profiles import SHIPPED_DIR, load_profile, parse_profile
from engine.state import with_cell_edit
from tests.micro_script import make_profile_module

ROOT = Path(__file__).resolve().parents[1]
V2 = ROOT / "samples" / "v2"


def _inputs(family: str, config: str, profile: str = "h100"):
    return resolve_inputs(V2 / "ptx" / f"{family}.sm_90.ptx", profile=profile,
                          launch_file=V2 / f"{family}.launch.toml", config=config)


@pytest.fixture(scope="module")
def saxpy():
    """A grid-stride saxpy: two loads and a store per element, all from DRAM."""
    inputs = _inputs("gridstride", "gs_saxpy/g528-b256")
    return inputs, Evaluator().evaluate(inputs, state_for(inputs), trace=False)


# ---- the profiles ---------------------------------------------------------------------------------

def test_profiles_carry_the_measured_curve_of_their_own_gpu() -> None:
    script = make_profile_module()
    GPUS, derive_loaded = script.GPUS, script.derive_loaded
    for key in ("h100", "h200"):
        curve = load_profile(key).pipeline.dram_loaded
        assert curve == derive_loaded(GPUS[key].results("loaded"))
        shares = [u for u, _ in curve]
        assert shares[0] == 0 and shares[-1] == 1 and shares == sorted(shares)
    # the raw runs: the H100's latency more than triples at its top bandwidth, the H200's less
    assert load_profile("h100").pipeline.dram_loaded[-1][1] > 2000
    assert 1000 < load_profile("h200").pipeline.dram_loaded[-1][1] < 1500


def _with_curve(shares: str, extra: str) -> str:
    text = (SHIPPED_DIR / "h100.toml").read_text()
    text = re.sub(r"(?m)^bandwidth_share = .*$", f"bandwidth_share = {shares}", text)
    return re.sub(r"(?m)^extra_Lam = .*$", f"extra_Lam = {extra}", text)


@pytest.mark.parametrize(("shares", "extra", "key", "phrase"), [
    ("[0, 0.5, 1]", "[0, 10]", "extra_Lam", "2 values for 3"),
    ("[0, 0.6, 0.5, 1]", "[0, 1, 2, 3]", "bandwidth_share", "rise strictly"),
    ("[0.1, 1]", "[0, 5]", "bandwidth_share", "from 0 to 1"),
    ("[0, 0.9]", "[0, 5]", "bandwidth_share", "from 0 to 1"),
    ("[0, 0.5, 1]", "[0, 50, 20]", "extra_Lam", "must not fall"),
    ("[0, 0.5, 1]", "[0, nan, 20]", "extra_Lam", "finite"),
    ("[0, 0.5, 1]", "[0, -1, 20]", "extra_Lam", ">= 0"),
    ("[0, 1.5]", "[0, 5]", "bandwidth_share", "<= 1"),
    ("[]", "[]", "bandwidth_share", "non-empty list"),
    ('["a", 1]', "[0, 5]", "bandwidth_share", "list of numbers"),
    ("[0, true]", "[0, 5]", "bandwidth_share", "list of numbers"),
])
def test_a_bad_curve_is_refused_with_its_key_and_line(shares, extra, key, phrase) -> None:
    text = _with_curve(shares, extra)
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "bad.toml")
    assert info.value.key == f"pipeline.dram_loaded.{key}"
    assert phrase in info.value.message
    assert info.value.line is not None and key in text.splitlines()[info.value.line - 1]


def test_the_curve_is_read_between_its_points() -> None:
    curve = ((0.0, 0.0), (0.5, 0.0), (0.8, 100.0), (1.0, 500.0))
    assert extra_latency(curve, 0.3) == 0
    assert extra_latency(curve, 0.65) == pytest.approx(50.0)
    assert extra_latency(curve, 0.9) == pytest.approx(300.0)
    assert extra_latency(curve, 1.7) == 500.0 and extra_latency(curve, -1) == 0
    assert extra_latency((), 0.9) == 0


# ---- the description -------------------------------------------------------------------------------

def test_only_requests_that_go_to_dram_wait_longer(saxpy) -> None:
    _, ev = saxpy
    d = ev.description
    waiting = [i for i, ins in enumerate(d.instructions) if ins.dram_wait > 0]
    # the two streamed loads go to DRAM in full; the store is not waited for
    assert len(waiting) == 2 and all(d.instructions[i].dram_wait == 1.0 for i in waiting)
    assert all(not d.instructions[i].name.startswith("st.") for i in waiting)
    later = d.with_dram_delay(100)
    for i, (a, b) in enumerate(zip(d.instructions, later.instructions, strict=True)):
        assert b.Lam - a.Lam == (100 if i in waiting else 0)
    assert d.with_dram_delay(0) is d


def test_a_latency_the_user_types_is_not_delayed(saxpy) -> None:
    inputs, ev = saxpy
    load = next(i for i, ins in enumerate(ev.description.instructions) if ins.dram_wait > 0)
    state = with_cell_edit(state_for(inputs), load + 1, "lat_comm", 700.0)
    edited = Evaluator().evaluate(inputs, state, trace=False)
    ins = edited.description.instructions[load]
    assert float(ins.Lam) == 700.0 and ins.dram_wait == 0
    # the other load still waits for the busy DRAM
    assert sum(x.dram_wait > 0 for x in edited.description.instructions) == 1
    assert edited.dram_under_load is not None and edited.dram_under_load.extra_cycles > 0


# ---- the solution ---------------------------------------------------------------------------------

def test_the_solution_is_the_measured_latency_at_the_share_it_draws(saxpy) -> None:
    _, ev = saxpy
    under_load = ev.dram_under_load
    assert under_load is not None and 2 <= under_load.simulations <= 8
    assert under_load.extra_cycles > 100 and 0.5 < under_load.bandwidth_share < 1
    d = ev.description.with_dram_delay(under_load.extra_cycles)
    sim = simulate(d, trace=False)
    assert sim.cycles == ev.simulation.cycles
    # x = curve(share) - the queue the run already has, to a hundredth of the load's latency; the
    # curve is the one for the share of the bytes saxpy writes (tests/test_mixed_dram.py)
    pipeline = ev.profile.pipeline
    curve = curve_for_writes(pipeline.dram_loaded, pipeline.dram_loaded_mixed, under_load.written_share)
    gap = curve(under_load.bandwidth_share) - queue_cycles(ev.description, sim) - under_load.extra_cycles
    assert abs(gap) <= 0.01 * (ev.profile.pipeline.memory["dram_Lam"] + under_load.extra_cycles)
    plain = simulate(ev.description, trace=False)
    assert sim.cycles > plain.cycles
    assert ev.models["pipeline"].sm_cycles == pytest.approx(float(sim.cycles))
    assert "DRAM at" in ev.models["pipeline"].note


def test_more_bytes_never_make_the_launch_faster(saxpy) -> None:
    _, ev = saxpy
    d, profile = ev.description, ev.profile
    bytes_ = ev.traffic.dram_read_bytes + ev.traffic.dram_write_bytes
    times = [float(simulate_under_dram_load(d, bytes_ * f, profile)[0].cycles) for f in (0.25, 0.5, 1.0, 1.5)]
    assert times == sorted(times)
    assert times[0] == float(simulate(d, trace=False).cycles)   # a quarter of the bytes: idle latency


def test_without_the_curve_or_the_mechanism_the_simulation_is_the_plain_one(saxpy) -> None:
    inputs, ev = saxpy
    bytes_ = ev.traffic.dram_read_bytes + ev.traffic.dram_write_bytes
    plain = simulate(ev.description, trace=False).cycles
    flat = replace(ev.profile, pipeline=replace(ev.profile.pipeline, dram_loaded=()))
    sim, under_load = simulate_under_dram_load(ev.description, bytes_, flat)
    assert under_load is None and sim.cycles == plain
    sim, under_load = simulate_under_dram_load(ev.description, None, ev.profile)
    assert under_load is None and sim.cycles == plain
    with without(["loaded_dram_latency"]):
        off = Evaluator().evaluate(inputs, state_for(inputs), trace=False)
    assert off.dram_under_load is None
    assert all(ins.dram_wait == 0 for ins in off.description.instructions)
    assert off.models["pipeline"].sm_cycles == pytest.approx(float(plain))


def test_a_launch_that_barely_uses_dram_runs_once() -> None:
    inputs = _inputs("half", "h2_fma_chain/b256")
    ev = Evaluator().evaluate(inputs, state_for(inputs), trace=False)
    assert ev.dram_under_load is None or (ev.dram_under_load.simulations == 1 and ev.dram_under_load.extra_cycles == 0)


def test_the_peak_is_the_profiles_dram_rate_on_every_sm() -> None:
    h100 = load_profile("h100")
    peak = peak_dram_bytes_per_cycle(h100)
    assert peak == pytest.approx(128 / h100.pipeline.memory["dram_lam"] * h100.device.sm_count)
    # about 3.0 TB/s at the 1.98 GHz the microbenchmarks ran at
    assert 2.9e12 < peak * 1.98e9 < 3.2e12


def test_the_occupancy_sweep_point_is_the_prediction_at_that_occupancy(saxpy) -> None:
    inputs, _ = saxpy
    state = state_for(inputs)
    swept = Evaluator().evaluate(inputs, state, sweep=True, trace=False)
    for blocks, cycles in swept.sweep.kernel_cycles("pipeline"):
        direct = Evaluator().evaluate(inputs, replace(state, occupancy=blocks), trace=False)
        assert direct.models["pipeline"].kernel_cycles == cycles
