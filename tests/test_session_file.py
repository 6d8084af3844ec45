"""Session files: lossless round trip, atomic save, validation errors that name the key."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from engine.errors import WarplineError
from engine.evaluation import state_for as initial_state
from engine.evaluation.compare import BaselineFigures
from engine.inputs import resolve_inputs
from engine.session_file import StoredBaseline, load_session, recovery_path, save_session, session_to_dict
from engine.state import with_cell_edit, with_iterations

ROOT = Path(__file__).resolve().parents[1]
HOTSPOT = ROOT / "samples" / "ptx" / "hotspot.sm_90.ptx"


@pytest.fixture(scope="module")
def edited_state():
    inputs = resolve_inputs(HOTSPOT, use_ptxas=False)
    state = initial_state(inputs)
    state = with_cell_edit(state, 47, "lat_comm", 900.0)
    state = with_cell_edit(state, 12, "fu1", "16+1")
    state = with_cell_edit(state, 13, "issue", None)      # a blanked cell (dual issue)
    state = with_cell_edit(state, 14, "n_ma", 2)
    state = with_iterations(state, 2, 5)
    launch = replace(state.launch, args={**state.launch.args, "n": 3}, trip_overrides={"$L__BB0_5": 4},
                     regs_per_thread=40, smem_dynamic=128, data={1: "linear:0.5:3", "0": "random:0:100"})
    return replace(state, launch=launch, occupancy=3, policy="gto", measured_cycles=12345.0)


def test_round_trip_keeps_every_field(tmp_path, edited_state):
    path = save_session(tmp_path / "s.warpline", HOTSPOT, edited_state)
    data = load_session(path)
    assert data.ptx_path == HOTSPOT.resolve()
    assert data.state == edited_state
    # Parameter index 0 and a parameter named "n" stay distinct kinds of key.
    assert 0 in data.state.launch.args and "n" in data.state.launch.args


def test_save_is_atomic_and_leaves_no_temporary(tmp_path, edited_state, monkeypatch):
    path = tmp_path / "s.warpline"
    save_session(path, HOTSPOT, edited_state)
    before = path.read_text()

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        save_session(path, HOTSPOT, replace(edited_state, occupancy=1))
    assert path.read_text() == before                      # the old session is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.warpline"]


@pytest.mark.parametrize("mutate, key", [
    (lambda d: d.update(format="other"), "format"),
    (lambda d: d.pop("kernel"), "kernel"),
    (lambda d: d["launch"].update(grid="big"), "launch.grid"),
    (lambda d: d["launch"].update(block=[2048, 1, 1]), "launch"),
    (lambda d: d["overrides"]["latencies"].update({"3": {"lat_comp": -1}}), "overrides.latencies.3.lat_comp"),
    (lambda d: d["overrides"]["latencies"].update({"x": {"lat_comp": 1}}), "overrides.latencies.x"),
    (lambda d: d["overrides"]["block_cells"].append([1, "u", 3]), "overrides.block_cells"),
    (lambda d: d["overrides"]["iterations"].update({"2": "many"}), "overrides.iterations.2"),
    (lambda d: d.update(occupancy=0), "occupancy"),
    (lambda d: d.update(policy="fifo"), "policy"),
    (lambda d: d.update(version=99), "version"),
    (lambda d: d["launch"]["trip_overrides"].update({"$L": -2}), "launch.trip_overrides"),
])
def test_invalid_sessions_name_the_key(tmp_path, edited_state, mutate, key):
    data = session_to_dict(HOTSPOT, edited_state)
    mutate(data)
    path = tmp_path / "bad.warpline"
    path.write_text(json.dumps(data))
    with pytest.raises(WarplineError) as info:
        load_session(path)
    message = str(info.value)
    assert message.startswith(str(path)) and key in message


def test_not_json_names_line_and_column(tmp_path):
    path = tmp_path / "broken.warpline"
    path.write_text('{\n  "format": "warpline-session",\n  oops\n}')
    with pytest.raises(WarplineError, match=r"broken\.warpline:3:3: not valid JSON"):
        load_session(path)


def test_missing_file(tmp_path):
    with pytest.raises(WarplineError, match="cannot read"):
        load_session(tmp_path / "none.warpline")


def test_recovery_path_follows_xdg_data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert recovery_path() == tmp_path / "warpline" / "recovery.warpline"


# ---------------------------------------------------------------------------- baselines (issue 15)

FIGURES = BaselineFigures({"pipeline": 10234.5, "manybsp": None, "mwp_cwp": 9000.0},
                          {"issuing": 0.25, "memory_dependency": 0.5, "barrier": 0.0},
                          "memory-bound: warps wait for global loads", 9234.5)


def _baseline(state, label="hotspot, h100, before the edit"):
    return StoredBaseline(label, HOTSPOT.resolve(), "ab" * 32, state, FIGURES)


def test_baselines_round_trip_and_bump_the_version(tmp_path, edited_state):
    plain = initial_state(resolve_inputs(HOTSPOT, use_ptxas=False))
    baselines = (_baseline(plain), _baseline(edited_state, "after the edit"))
    path = save_session(tmp_path / "s.warpline", HOTSPOT, edited_state, baselines=baselines)
    raw = json.loads(path.read_text())
    assert raw["version"] == 2 and len(raw["baselines"]) == 2
    data = load_session(path)
    assert data.baselines == baselines
    assert data.baselines[1].state == edited_state and data.baselines[0].figures.models["manybsp"] is None
    # no baselines: still written as version 1, which earlier versions read
    again = save_session(tmp_path / "t.warpline", HOTSPOT, edited_state)
    assert json.loads(again.read_text())["version"] == 1 and "baselines" not in json.loads(again.read_text())
    assert load_session(again).baselines == ()


def test_a_version_1_session_without_baselines_still_opens(tmp_path, edited_state):
    data = session_to_dict(HOTSPOT, edited_state)
    data["version"] = 1
    path = tmp_path / "old.warpline"
    path.write_text(json.dumps(data))
    loaded = load_session(path)
    assert loaded.state == edited_state and loaded.baselines == ()


@pytest.mark.parametrize("mutate, key, reason", [
    (lambda b: b["figures"]["models"].update(pipeline=float("nan")), "baselines[0].figures.models.pipeline",
     "finite"),
    (lambda b: b["figures"]["models"].update(pipeline=float("inf")), "baselines[0].figures.models.pipeline",
     "finite"),
    (lambda b: b["figures"]["models"].update(pipeline=-3), "baselines[0].figures.models.pipeline", "below 0"),
    (lambda b: b["figures"]["models"].update(pipeline="fast"), "baselines[0].figures.models.pipeline",
     "expected a number"),
    (lambda b: b["figures"]["shares"].update(barrier=1.5), "baselines[0].figures.shares.barrier", "above 1"),
    (lambda b: b["figures"].update(cycles=float("-inf")), "baselines[0].figures.cycles", "finite"),
    (lambda b: b["figures"].pop("verdict"), "baselines[0].figures.verdict", "missing"),
    (lambda b: b.pop("figures"), "baselines[0].figures", "missing"),
    (lambda b: b.update(label=7), "baselines[0].label", "expected a string"),
    (lambda b: b.update(ptx_sha256="12ab"), "baselines[0].ptx_sha256", "SHA-256"),
    (lambda b: b["state"]["launch"].update(grid="big"), "baselines[0].state.launch.grid", "expected a list"),
    (lambda b: b["state"]["overrides"]["latencies"].update({"3": {"lat_comm": float("nan")}}),
     "baselines[0].state.overrides.latencies.3.lat_comm", "finite"),
    (lambda b: b["state"].update(policy="fifo"), "baselines[0].state.policy", "not one of"),
    (lambda b: b["state"].update(measured_cycles=float("inf")), "baselines[0].state.measured_cycles", "finite"),
])
def test_a_bad_baseline_names_its_key_and_reason(tmp_path, edited_state, mutate, key, reason):
    data = session_to_dict(HOTSPOT, edited_state, baselines=[_baseline(edited_state)])
    mutate(data["baselines"][0])
    path = tmp_path / "bad.warpline"
    path.write_text(json.dumps(data))          # NaN and Infinity as Python's json writes them
    with pytest.raises(WarplineError) as info:
        load_session(path)
    message = str(info.value)
    assert message.startswith(f"{path}: session key {key!r}: ") and reason in message


def test_a_baseline_that_is_not_an_object_is_located(tmp_path, edited_state):
    data = session_to_dict(HOTSPOT, edited_state)
    data.update(version=2, baselines=[_baseline_to_json(edited_state), "pinned"])
    path = tmp_path / "bad.warpline"
    path.write_text(json.dumps(data))
    with pytest.raises(WarplineError, match=r"session key 'baselines\[1\]': expected an object"):
        load_session(path)


def _baseline_to_json(state):
    return session_to_dict(HOTSPOT, state, baselines=[_baseline(state)])["baselines"][0]
