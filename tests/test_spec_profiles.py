"""The profiles made from specifications (tools/spec_profiles.py): current, valid, and marked as
not measured here wherever their figures are shown."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from engine.evaluation.caveats import profile_statement
from engine.profiles import list_profiles, load_profile

ROOT = Path(__file__).resolve().parents[1]
SPEC = {"a100": 80, "l40s": 89, "l4": 89, "rtx4090": 89, "b200": 100, "rtx5090": 120}


def _script():
    spec = importlib.util.spec_from_file_location("spec_profiles", ROOT / "tools" / "spec_profiles.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("spec_profiles", module)      # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_shipped_files_are_what_the_script_writes():
    assert _script().main(["--check"]) == 0, "regenerate: .venv/bin/python tools/spec_profiles.py"


@pytest.mark.parametrize("name, version", sorted(SPEC.items()))
def test_each_is_of_its_architecture_and_says_it_was_not_measured(name, version):
    profile = load_profile(name)
    assert name in list_profiles()
    assert profile.device.sm_version == version
    assert profile.provenance is not None and not profile.provenance.measured_here
    assert profile_statement(profile) == f"{name}: from specifications, not measured here"
    # every unit section and the memory section name where their figures come from
    assert all(unit.source for unit in profile.units.values())
    assert "bandwidth" in profile.pipeline.source or "issue_limit" in profile.pipeline.source


def test_measured_profiles_carry_no_mark():
    assert profile_statement(load_profile("h100")) == ""
    assert load_profile("h100").provenance.measured_here


def test_one_default_per_architecture():
    defaults: dict[int, list[str]] = {}
    for name in list_profiles():
        profile = load_profile(name)
        if profile.device.default_for_target and profile.device.sm_version is not None:
            defaults.setdefault(profile.device.sm_version, []).append(name)
    assert all(len(names) == 1 for names in defaults.values()), defaults
