"""What-if sensitivity (issue 32, part 3): each knob scaled in a copy of the profile (or the
state) and evaluated by the evaluation core; ranked; text, JSON and CSV say the same."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from engine.errors import WarplineError
from engine.evaluation import Cancelled, Evaluator, state_for
from engine.evaluation.sensitivity import parameters, scaled_profile, sensitivity
from engine.inputs import resolve_inputs

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"


def _inputs(name: str, config: str | None = None, profile: str = "h100"):
    return resolve_inputs(SAMPLES / "ptx" / f"{name}.sm_90.ptx", launch_file=SAMPLES / f"{name}.launch.toml",
                          config=config, profile=profile)


@pytest.fixture(scope="module")
def hotspot():
    inputs = _inputs("hotspot")
    return inputs, sensitivity(inputs, step=0.2)


def test_hotspot_ranks_global_latency_first_or_says_why_not(hotspot):
    _, result = hotspot
    keys = result.ranked_keys()
    assert "latency:global" in keys and "bandwidth:DRAM" in keys and "clock" in keys and "occupancy" in keys
    base = result.base_kernel_cycles
    swings = [r.swing(base) for r in result.rows]
    assert swings == sorted(swings, reverse=True)
    if keys[0] != "latency:global":
        # the summary names where it ranks and the simulation's verdict, which is not latency
        summary = result.summary()
        assert f"ranks #{keys.index('latency:global') + 1}" in summary
        assert result.verdict and result.verdict in summary
        assert "memory latency limits" not in result.verdict
    # memory-side knobs (DRAM bandwidth, clock, occupancy) outrank every arithmetic latency; the
    # global latency need not: each thread's loads of the tile are all in flight before its shared
    # stores (docs/pipeline.md, "Issue order"), so the 2-D stencil's FMAs chain behind one wait
    arithmetic = [k for k in keys if k in ("latency:alu", "latency:sfu", "latency:control")]
    first_arithmetic = min(keys.index(k) for k in arithmetic)
    assert all(keys.index(k) < first_arithmetic for k in ("bandwidth:DRAM", "clock", "occupancy"))


def test_a_scaled_knob_is_the_evaluation_of_an_edited_profile_file(hotspot, tmp_path):
    """The DRAM latency +20 % row equals the evaluation of a profile TOML with those numbers."""
    inputs, result = hotspot
    text = (ROOT / "profiles" / "h100.toml").read_text(encoding="utf-8")
    for key, value in (("mem_lat", 688.4), ("global_Lam", 688.4), ("dram_Lam", 688.4)):
        text, n = re.subn(rf"^{key} = {value}\b", f"{key} = {value * 1.2:.6f}", text, flags=re.M)
        assert n == 1
    edited = tmp_path / "h100dram.toml"
    edited.write_text(text, encoding="utf-8")
    other = resolve_inputs(inputs.path, launch_file=SAMPLES / "hotspot.launch.toml", profile=str(edited))
    ev = Evaluator().evaluate(other, state_for(other), only=["pipeline"], trace=False)
    row = next(r for r in result.rows if r.parameter.key == "latency:DRAM")
    assert row.plus == pytest.approx(ev.models["pipeline"].kernel_cycles, abs=0.5)


def test_occupancy_at_its_limit_and_scaled_names(hotspot):
    inputs, result = hotspot
    row = next(r for r in result.rows if r.parameter.key == "occupancy")
    assert row.plus is None and "most that fit" in row.note
    assert row.minus is not None and "blocks/SM" in row.note
    ev = Evaluator().evaluate(inputs, only=["pipeline"], trace=False)
    knobs, _ = parameters(ev)
    clock = next(k for k in knobs if k.key == "clock")
    faster = scaled_profile(ev.profile, clock, 1.1)
    assert faster.device.clock_mhz == pytest.approx(1980 * 1.1)
    assert faster.pipeline.memory["dram_Lam"] == pytest.approx(688.4 * 1.1)
    assert faster.pipeline.memory["l1_Lam"] == ev.profile.pipeline.memory["l1_Lam"]   # the SM's own
    assert faster.name != ev.profile.name and faster.path is None
    wider = scaled_profile(ev.profile, next(k for k in knobs if k.key == "bandwidth:DRAM"), 1.25)
    assert wider.pipeline.memory["dram_lam"] == pytest.approx(ev.profile.pipeline.memory["dram_lam"] / 1.25)


def test_formats_agree(hotspot):
    _, result = hotspot
    payload = result.as_dict()
    text = result.csv().splitlines()
    assert any(line.startswith("# kernel: ") for line in text) and any(line.startswith("# edits: ") for line in text)
    rows = list(csv.DictReader(line for line in text if not line.startswith("# ")))
    assert [r["parameter"] for r in rows] == [p["parameter"] for p in payload["parameters"]] == result.ranked_keys()
    first = payload["parameters"][0]
    assert float(rows[0]["minus_delta_cycles"] or "nan") == pytest.approx(first["minus_delta_cycles"] or float("nan"),
                                                                          nan_ok=True)
    text = result.text()
    assert result.rows[0].parameter.title in text.splitlines()[3]


def test_bad_steps_and_cancel():
    inputs = _inputs("copy")
    for bad in (0, -0.1, 0.95, float("nan")):
        with pytest.raises(WarplineError, match="step"):
            sensitivity(inputs, step=bad)
    with pytest.raises(WarplineError, match="no parameter"):
        sensitivity(inputs, only=["latency:nonsense"])
    calls = []

    def cancel() -> bool:
        calls.append(1)
        return len(calls) > 3
    with pytest.raises(Cancelled):
        sensitivity(inputs, cancel=cancel)


def test_cli_sensitivity_json_and_csv(tmp_path, capsys):
    from engine.cli import main as cli_main

    out = tmp_path / "s.csv"
    ptx = str(SAMPLES / "ptx" / "copy.sm_90.ptx")
    assert cli_main(["sensitivity", ptx, "--launch", str(SAMPLES / "copy.launch.toml"), "--profile", "h100",
                     "--step", "15%", "--parameter", "bandwidth:DRAM", "--parameter", "clock", "--json",
                     "--csv", str(out)]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["step"] == pytest.approx(0.15)
    assert {p["parameter"] for p in payload["parameters"]} == {"bandwidth:DRAM", "clock"}
    dram = next(p for p in payload["parameters"] if p["parameter"] == "bandwidth:DRAM")
    assert dram["plus_delta_cycles"] < 0 < dram["minus_delta_cycles"]      # a copy streams DRAM
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0] == f"# file: {ptx}" and next(line for line in lines if not line.startswith("# ")).startswith(
        "rank,parameter,")
    with pytest.raises(SystemExit):
        cli_main(["sensitivity", ptx, "--step", "250"])
    assert "at most 90 %" in capsys.readouterr().err
