"""Suite v2x (the tuning supplement): its split and measurements load, and what its kernels showed
about the memory analysis (an unrolled loop's remainder that runs zero times)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from engine.analysis import analyze_kernel
from engine.cli import main
from engine.launch import load_launch_file
from engine.memory import analyze_memory
from engine.ptx import load_ptx
from engine.validation import SUITES, load_measurements

V2X = Path(__file__).resolve().parent.parent / "samples" / "v2x"


def test_split_is_the_sha256_rule_and_every_launch_was_measured_on_both_gpus() -> None:
    suite = SUITES["v2x"]
    kernels = []
    for launch_file in sorted(V2X.glob("*.launch.toml")):
        family = launch_file.name.split(".")[0]
        kernels += sorted({f"{family}/{x.name.split('/')[0]}" for x in load_launch_file(launch_file).launches})
    ranked = sorted(kernels, key=lambda k: hashlib.sha256(k.split("/")[1].encode()).hexdigest())
    assert len(kernels) == 12 and suite.held_out() == frozenset(ranked[:4])
    for gpu in ("h100", "h200"):
        measured = load_measurements(suite.runs[gpu])
        assert len(measured) == 48 and all(len(m.cycles) == 3 for m in measured.values())


def test_validate_reports_v2x_with_its_held_out_part(capsys) -> None:
    assert main(["validate", "--suite", "v2x", "--profile", "h200", "--only", "texfetch/", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["suite"] == "v2x" and len(out["rows"]) == 12
    assert {r["held_out"] for r in out["rows"] if "tex1d_scale" in r["configuration"]} == {True}
    assert {r["held_out"] for r in out["rows"] if "tex1d_gather" in r["configuration"]} == {False}


def test_loop_after_a_remainder_loop_that_runs_zero_times_is_analysed() -> None:
    # row_max_warp: nvcc unrolls the column loop by 4 and puts (cols / 32) mod 4 iterations in a
    # remainder loop first; with 1024 columns that runs zero times, and the main loop's index is
    # the one it started with, not unknown
    launch = load_launch_file(V2X / "rowwise.launch.toml").get("row_max_warp/b256")
    module = load_ptx(V2X / "ptx" / "rowwise.sm_90.ptx")
    report = analyze_memory(analyze_kernel(module.kernel(launch.kernel), launch, module), launch, module)
    loads = [a for a in report.accesses if a.kind == "load"]
    remainder, main_loop = loads[0], loads[1:]
    assert remainder.unknown_reason == "no lane executes it in the sampled blocks"
    assert len(main_loop) == 4
    for a in main_loop:
        assert a.unknown_reason is None and a.method == "lanes"
        assert a.sectors_per_request == 4.0     # a warp reads 32 consecutive floats of its row
