"""Bounded, cancellable simulation: budgets checked before a run (sampled whole waves or a refusal
that says "bounded"), a cancel flag the compiled core polls, a time budget, Ctrl+C in the CLI."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from engine.cli import main as cli_main
from engine.cli.options import parse_range
from engine.errors import SimulationError, WarplineError
from engine.evaluation import Cancelled, Evaluator, state_for
from engine.inputs import resolve_inputs
from engine.pipeline.simulator import Limits, SimulationCancelled, simulate, warp_instructions

ROOT = Path(__file__).resolve().parents[1]
HOTSPOT = ROOT / "samples" / "ptx" / "hotspot.sm_90.ptx"
from engine.pipeline.simulator import DEFAULT_MAX_WARP_INSTRUCTIONS  # noqa: E402

LOOP = "$L__BB0_5"


def _description(**kw):
    inputs = resolve_inputs(HOTSPOT, profile="h100", use_ptxas=False, **kw)
    ev = Evaluator()
    prepared = ev._prepare(inputs, state_for(inputs))
    ev._describe(inputs, prepared)
    return prepared.description


@pytest.mark.parametrize("options, expect", [
    (["--trip", f"{LOOP}=1000000000"], r"would issue ([\d,]+) warp instructions"),
    (["--arg", "0=1000000"], r"would issue ([\d,]+) warp instructions"),
    (["--grid", "2147483647", "--block", "16,16"], r"blocks simulated, extrapolated"),
])
def test_huge_launches_end_with_a_bounded_result(options, expect, capsys):
    import re

    rc = cli_main(["predict", str(HOTSPOT), "--profile", "h100", "--no-ptxas", *options])
    out = capsys.readouterr().out
    found = re.search(expect, out)
    assert rc == 0 and "bounded" in out and found, out
    if found.groups():   # the refusal names a count far over the default budget
        assert int(found.group(1).replace(",", "")) > 100 * DEFAULT_MAX_WARP_INSTRUCTIONS
    assert "Many-BSP" in out


def test_a_session_with_a_trip_count_of_10_to_the_18(tmp_path):
    from engine.session_file import load_session, save_session

    inputs = resolve_inputs(HOTSPOT, profile="h100", use_ptxas=False)
    state = replace(state_for(inputs), launch=replace(inputs.launch, trip_overrides={LOOP: 10**18}))
    loaded = load_session(save_session(tmp_path / "big.warpline", HOTSPOT, state)).state
    ev = Evaluator().evaluate(inputs, loaded, sweep=True)
    assert ev.finished and ev.errors["simulation"].startswith("bounded: the simulation would issue")
    assert ev.models["manybsp"].figures is not None            # the analytical side still answers


def test_counts_do_not_wrap_at_int64():
    d = _description(trips={LOOP: 10**18})
    assert warp_instructions(d) > 2**63                       # int64 would have wrapped
    with pytest.raises(SimulationError, match="bounded"):
        simulate(d, trace=False)


def test_sampled_waves_scale_to_the_full_run():
    d = _description(grid=(132 * 400, 1, 1), block=(16, 16, 1))
    full = simulate(d, trace=False, bounds=Limits(None))
    budget = warp_instructions(d) // 3
    sampled = simulate(d, trace=False, bounds=Limits(budget))
    assert 0 < sampled.sampled_blocks < d.blocks and "bounded" in sampled.note
    assert sampled.sampled_blocks % d.resident_blocks == 0     # whole waves
    assert abs(float(sampled.cycles) / float(full.cycles) - 1) < 0.02


def test_the_core_stops_on_the_cancel_flag():
    d = _description(args={0: 100_000})
    total = warp_instructions(d)
    with pytest.raises(SimulationCancelled) as info:
        simulate(d, trace=False, bounds=Limits(None, None, lambda: True))
    assert info.value.issued < total // 10


def test_a_newer_edit_cancels_a_running_evaluation():
    inputs = resolve_inputs(HOTSPOT, profile="h100", use_ptxas=False, args={0: 100_000})
    newer = threading.Event()
    threading.Timer(0.5, newer.set).start()
    with pytest.raises(Cancelled):
        Evaluator().evaluate(inputs, max_warp_instructions=None, cancel=newer.is_set)


def test_the_time_budget_stops_a_run():
    d = _description(args={0: 100_000})
    with pytest.raises(SimulationError, match="time budget of 0.2 s"):
        simulate(d, trace=False, bounds=Limits(None, 0.2))


def test_ranges_are_refused_before_they_are_built(capsys):
    with pytest.raises(WarplineError, match="100,000,000,000 points; at most 100,000"):
        parse_range("1:100000000000", "--warps")
    assert cli_main(["sweep", str(HOTSPOT), "--profile", "h100", "--no-ptxas", "--blocks", "1:100000"]) == 0
    assert "7..100000 resident block(s) per SM cannot be reached" in capsys.readouterr().out
    assert cli_main(["export", str(HOTSPOT), "--profile", "h100", "--no-ptxas", "--curves-csv", "x.csv",
                     "--curve-warps", "1:1000000000"]) == 2
    assert "at most 100,000" in capsys.readouterr().err


def test_ctrl_c_stops_a_long_simulation_with_exit_130():
    proc = subprocess.Popen(
        [sys.executable, "main.py", "predict", str(HOTSPOT), "--profile", "h100", "--no-ptxas",
         "--arg", "0=100000", "--max-warp-instructions", "2000000000", "--model", "pipeline"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        # The run takes minutes; wait until its compute thread exists, i.e. the core is running.
        for _ in range(600):
            if _has_simulation_thread(proc.pid) or proc.poll() is not None:
                break
            threading.Event().wait(0.05)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err


def _has_simulation_thread(pid: int) -> bool:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as handle:
                if handle.read().startswith("warpline-sim"):
                    return True
        except OSError:
            continue
    return False
