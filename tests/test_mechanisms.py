"""Mechanism switches (engine/mechanisms.py): one typed configuration, validated when made, in
effect only where it is used, part of the evaluator's cache keys."""

from __future__ import annotations

import dataclasses

import pytest

from engine.errors import WarplineError
from engine.mechanisms import MECHANISMS, REGISTRY, MechanismConfig, current, enabled, using, without


def test_every_mechanism_is_a_documented_field() -> None:
    names = [f.name for f in dataclasses.fields(MechanismConfig)]
    assert names == [m.name for m in REGISTRY] == list(MECHANISMS)
    for f in dataclasses.fields(MechanismConfig):
        assert f.default is True and len(f.metadata["description"]) > 40
        assert all(r in MECHANISMS for r in f.metadata["requires"])


def test_switches_are_scoped_and_names_checked() -> None:
    assert all(enabled(name) for name in MECHANISMS)
    with without(["grid_share", "schedule"]):
        assert not enabled("grid_share") and not enabled("schedule") and enabled("sass")
    assert enabled("grid_share") and enabled("schedule")
    with pytest.raises(WarplineError, match="unknown mechanism nope; known: execution"):
        with without(["nope"]):
            pass
    with pytest.raises(KeyError):
        enabled("l2_footprint")          # a rule the run of the sampled warps replaced: no switch


def test_switching_one_off_switches_off_what_requires_it() -> None:
    config = MechanismConfig().without(["sass"])
    assert config.off >= {"sass", "sass_order", "half_pipe_split", "renamed_copies", "cas_retry", "sass_issue_slots"}
    assert config.schedule
    with pytest.raises(WarplineError, match="sass_order requires sass"):
        MechanismConfig(sass=False)
    with pytest.raises(WarplineError, match="true or false"):
        MechanismConfig(execution="yes")


def test_a_configuration_is_hashable_and_in_effect_only_inside_using() -> None:
    config = MechanismConfig().without(["execution"])
    assert hash(config) != hash(MechanismConfig()) and config == MechanismConfig(execution=False)
    with using(config):
        assert current() is config and not enabled("execution")
    assert current() == MechanismConfig()
    with pytest.raises(WarplineError, match="not a mechanism configuration"):
        with using(frozenset()):
            pass


def test_the_evaluator_keeps_figures_apart_per_configuration() -> None:
    from pathlib import Path

    from engine.evaluation import Evaluator, state_for
    from engine.inputs import resolve_inputs

    root = Path(__file__).resolve().parents[1] / "samples"
    inputs = resolve_inputs(root / "ptx" / "copy.sm_90.ptx", profile="h100", launch_file=root / "copy.launch.toml")
    evaluator = Evaluator()
    on = evaluator.evaluate(inputs, state_for(inputs), trace=False, only=["pipeline"])
    off = evaluator.evaluate(inputs, state_for(inputs), trace=False, only=["pipeline"],
                             mechanisms=MechanismConfig().without(["execution"]))
    again = evaluator.evaluate(inputs, state_for(inputs), trace=False, only=["pipeline"])
    assert on.memory.execution is not None and off.memory.execution is None
    assert again.memory is on.memory
