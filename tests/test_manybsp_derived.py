"""Every shipped profile feeds the Many-BSP BLOCK table (issue 13, item 5).

A profile without a ``[manybsp]`` section (001's GPUs) gets Many-BSP figures derived from its
pipeline figures, each marked with where it came from; what cannot be derived (the launch
overheads) refuses the prediction with the reason, never the BLOCK table or the supersteps.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from engine.cli import main
from engine.errors import ModelError, ProfileError
from engine.evaluation import Evaluator, state_for
from engine.inputs import resolve_inputs
from engine.manybsp import predict_manybsp
from engine.manybsp.device_figures import MU_PLACEHOLDER, barrier_overhead, figure_source, manybsp_figures
from engine.profiles import (
    ASSUMED,
    DERIVED,
    MISSING,
    PLACEHOLDER,
    SHIPPED_DIR,
    load_profile,
    parse_profile,
)
from engine.ptx import load_ptx
from engine.units import Unit

ROOT = Path(__file__).resolve().parents[1]
HOTSPOT = ROOT / "samples" / "ptx" / "hotspot.sm_90.ptx"
KNN = ROOT / "samples" / "ptx" / "knn.sm_90.ptx"      # no barrier
SHIPPED = sorted(p.stem for p in SHIPPED_DIR.glob("*.toml"))
WITHOUT_SECTION = ("c2050", "gtx1060", "gtx650ti", "k620", "r9_380", "rtx2070")
# The figures eqs. 4-25 and the BLOCK table read from a profile's Many-BSP section.
USED = ("mem_lat", "barrier_overhead", "issue_cycle", "mu", "block_lnch_ovh", "warp_lnch_ovh")


def test_the_profiles_without_a_section_are_the_001_ones():
    # If a profile gains a [manybsp] section this list (and the docs' table) must follow.
    assert [name for name in SHIPPED if load_profile(name).manybsp is None] == list(WITHOUT_SECTION)


@pytest.fixture(scope="module")
def evaluator() -> Evaluator:
    return Evaluator()


@pytest.mark.parametrize("name", SHIPPED)
def test_every_profile_fills_the_block_table_and_the_superstep_tree(evaluator, name):
    inputs = resolve_inputs(HOTSPOT, profile=name, use_ptxas=False)
    ev = evaluator.evaluate(inputs, state_for(inputs), only=["manybsp"], trace=False)
    result = ev.manybsp
    assert result is not None, ev.errors
    assert len(result.block) == len(inputs.function.instructions) > 100
    assert len(result.level1) > 1 and all(step.children for step in result.level1)
    assert sum(len(step.children) for step in result.level1) == len(result.level2)
    figure = ev.models["manybsp"]
    if load_profile(name).manybsp is not None:
        assert not result.refused and figure.sm_cycles > 0
        return
    # Derived figures: the launch overheads are missing, so no number, and one line says why.
    assert figure.figures is None and figure.error == result.refused == ev.errors["Many-BSP"]
    assert "block_lnch_ovh" in figure.error and "warp_lnch_ovh" in figure.error and "\n" not in figure.error
    assert not result.prediction.quantities
    with pytest.raises(ModelError, match="refused"):
        _ = result.kernel_exec_cycle
    # The table uses the derived figures: the barrier row's latency, the global rows' mem_lat.
    profile = load_profile(name)
    barrier = next(r for r in result.rows if r.is_barrier)
    assert barrier.lat_comp == barrier_overhead(profile, inputs.launch.threads_per_block) > 0
    assert any("derived from the pipeline figures" in w and "pipeline.memory.global_Lam" in w
               for w in ev.warnings)


@pytest.mark.parametrize("name", WITHOUT_SECTION)
def test_derived_values_carry_their_provenance(name):
    profile = load_profile(name)
    figures = manybsp_figures(profile)
    assert profile.manybsp is None and figures.is_derived
    kinds = {key: figures.derived_value(key).kind for key in USED}
    assert kinds == {"mem_lat": DERIVED, "barrier_overhead": DERIVED, "issue_cycle": ASSUMED,
                     "mu": PLACEHOLDER, "block_lnch_ovh": MISSING, "warp_lnch_ovh": MISSING}
    assert all(figures.derived_value(key).provenance for key in USED)
    assert set(figures.missing) == {"block_lnch_ovh", "warp_lnch_ovh"}
    # mem_lat is the profile's global-memory latency Λ, and says so.
    assert figures.mem_lat == profile.pipeline.memory["global_Lam"] > 0
    assert figure_source(profile, "manybsp.mem_lat").startswith("derived:")
    assert "pipeline.memory.global_Lam" in figure_source(profile, "manybsp.mem_lat")
    assert figure_source(profile, "manybsp.mu").startswith("placeholder:")
    assert figure_source(profile, "manybsp.block_lnch_ovh").startswith("missing:")
    assert figures.mu == MU_PLACEHOLDER and figures.issue_cycle == 1
    # The barrier overhead is the bar.sync rule's Λ plus λ for each further warp of the block.
    rule = profile.cost_for_opcode("bar.sync", Unit.BARRIER)
    assert not rule.is_default and "bar.sync" in figure_source(profile, "manybsp.barrier_overhead")
    warp = profile.device.warp_size
    for threads in (warp, 4 * warp, profile.device.max_threads_per_block):
        expected = rule.Lam + (math.ceil(threads / warp) - 1) * rule.lam
        assert barrier_overhead(profile, threads) == pytest.approx(expected)


@pytest.mark.parametrize("name", ["gtx760", "940mx", "gtx1070", "h100", "h200"])
def test_a_stated_section_is_used_as_it_is(name):
    profile = load_profile(name)
    assert manybsp_figures(profile) is profile.manybsp and not profile.manybsp.derivation
    assert not profile.source_of("manybsp.mem_lat").startswith("derived")


def test_given_launch_overheads_lift_the_refusal(evaluator):
    inputs = resolve_inputs(HOTSPOT, profile="c2050", use_ptxas=False)
    state = state_for(inputs).with_overrides(
        lambda ov: ov.params.update(block_lnch_ovh=300.0, warp_lnch_ovh=10.0))
    ev = evaluator.evaluate(inputs, state, only=["manybsp"], trace=False)
    assert not ev.manybsp.refused and "Many-BSP" not in ev.errors
    assert ev.models["manybsp"].sm_cycles == ev.manybsp.kernel_exec_cycle > 0
    # The derived figures are what the equations read.
    assert ev.manybsp.params.mem_lat == 475 and ev.manybsp.params.mu == MU_PLACEHOLDER
    # One of the two given is not enough.
    half = state_for(inputs).with_overrides(lambda ov: ov.params.update(block_lnch_ovh=300.0))
    ev = evaluator.evaluate(inputs, half, only=["manybsp"], trace=False)
    assert ev.models["manybsp"].figures is None and "warp_lnch_ovh" in ev.manybsp.refused
    assert "block_lnch_ovh" not in ev.manybsp.refused


def _without_barrier_rule(name: str):
    text = (SHIPPED_DIR / f"{name}.toml").read_text()
    start = text.index('[[instruction]]\npattern = "bar.sync"')
    end = text.index("[[instruction]]", start + 1)
    return parse_profile(text[:start] + text[end:], f"{name}-nobar.toml")


def test_a_missing_barrier_rule_refuses_only_kernels_with_a_barrier():
    profile = _without_barrier_rule("c2050")
    figures = manybsp_figures(profile)
    assert "barrier_overhead" in figures.missing and figures.value_text("barrier_overhead") == "—"
    with pytest.raises(ProfileError, match="bar.sync"):
        barrier_overhead(profile, 256)
    hotspot = load_ptx(HOTSPOT)
    inputs = resolve_inputs(HOTSPOT, profile="c2050", use_ptxas=False)
    result = predict_manybsp(hotspot, inputs.kernel_name, profile, inputs.launch)
    assert "barrier_overhead" in result.refused and len(result.block) == len(inputs.function.instructions)
    assert all(r.lat_comp == 0 for r in result.rows if r.is_barrier)
    # knn has no barrier: only the launch overheads are missing.
    knn = load_ptx(KNN)
    inputs = resolve_inputs(KNN, profile="c2050", use_ptxas=False)
    result = predict_manybsp(knn, inputs.kernel_name, profile, inputs.launch)
    assert not any(r.is_barrier for r in result.rows)
    assert set(result.missing) == {"block_lnch_ovh", "warp_lnch_ovh"}


def test_predict_prints_the_derivation_warning_and_the_marked_parameters(capsys):
    assert main(["predict", str(HOTSPOT), "--profile", "gtx1060", "--no-ptxas", "--model", "manybsp",
                 "--derivation"]) == 0
    out = capsys.readouterr().out
    assert ("warning: Many-BSP parameters derived from the pipeline figures (profile 'gtx1060' has no "
            "[manybsp] section): mem_lat = 345 (from pipeline.memory.global_Lam)") in out
    assert "cannot be derived: block_lnch_ovh" in out
    assert "error [Many-BSP]: Many-BSP prediction refused" in out
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("    ")}
    assert "derived:" in lines["mem_lat"] and "placeholder:" in lines["mu"]
    assert "missing:" in lines["block_lnch_ovh"] and "derived:" in lines["barrier_overhead"]
