"""The headless command line: JSON shape, loop trip counts from arguments, clean errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli import main
from engine.conventions import STAND_IN_VALUE

ROOT = Path(__file__).resolve().parents[1]
MM = ROOT / "samples" / "ptx" / "mm.sm_90.ptx"
HOTSPOT = ROOT / "samples" / "ptx" / "hotspot.sm_90.ptx"


def run_json(capsys, *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("width, tiles", [(2048, 128), (1024, 64), (256, 16)])
def test_info_reports_tile_loop_trip_count_from_width_argument(capsys, width, tiles):
    out = run_json(capsys, "info", str(MM), "--kernel", "matrixMulSquare", "--profile", "h100",
                   "--grid", "8,8", "--block", "16,16", "--arg", f"3={width}", "--no-ptxas")
    (kernel,) = out["kernels"]
    outer = [loop for loop in kernel["loops"] if loop["depth"] == 1]
    assert len(outer) == 1
    assert outer[0]["trip_count"] == tiles
    assert kernel["instructions"]["total"] > 0


def test_info_reports_hotspot_pyramid_loop(capsys):
    out = run_json(capsys, "info", str(HOTSPOT), "--profile", "gtx760", "--arg", "0=5", "--no-ptxas")
    (kernel,) = out["kernels"]
    assert kernel["instructions"]["barrier"] >= 2
    assert [loop["trip_count"] for loop in kernel["loops"]] == [5]
    assert kernel["occupancy"]["blocks_per_sm"] >= 1
    assert kernel["occupancy"]["limiter"] in ("threads", "warps", "registers", "shared_memory", "block_slots")


def test_info_lists_every_kernel_of_a_file(capsys):
    out = run_json(capsys, "info", str(MM), "--no-ptxas")
    names = [k["name"] for k in out["kernels"]]
    assert len(names) == 3 and all(k["loops"] for k in out["kernels"])


def test_a_loop_bound_without_a_value_takes_the_stand_in_and_says_so(tmp_path, capsys):
    # A copy away from its launch file: the tile-loop bound is a parameter the launch does not
    # give. It takes the stand-in (one rule for every model), the loop's trip count follows from
    # it, and the assumption names the parameter, the value and how to give the real one.
    ptx = tmp_path / "mm.ptx"
    ptx.write_text(MM.read_text())
    out = run_json(capsys, "info", str(ptx), "--kernel", "matrixMulSquare", "--no-ptxas")
    kernel = out["kernels"][0]
    outer = [loop for loop in kernel["loops"] if loop["depth"] == 1]
    assert outer[0]["trip_count"] == STAND_IN_VALUE // 16
    (supplied,) = kernel["supplied_arguments"]
    assert (supplied["index"], supplied["value"], supplied["how"]) == (3, STAND_IN_VALUE, "stand-in")
    argument = next(a for a in kernel["assumptions"] if a["kind"] == "argument")
    assert argument["fill_in"] == "--arg 3=VALUE" and argument["assumed"] == f"{STAND_IN_VALUE:,}"
    assert kernel["caveats"]["rests_on_assumptions"]
    # given, the guess is gone
    out = run_json(capsys, "info", str(ptx), "--kernel", "matrixMulSquare", "--no-ptxas", "--arg", "3=256",
                   "--grid", "16,16", "--block", "16,16")
    kernel = out["kernels"][0]
    assert [loop["trip_count"] for loop in kernel["loops"] if loop["depth"] == 1] == [16]
    assert kernel["assumptions"] == [] and not kernel["caveats"]["rests_on_assumptions"]


def test_unknown_launch_configuration_is_refused(capsys):
    assert main(["info", str(MM), "--launch", str(ROOT / "samples" / "mm.launch.toml"), "--config", "nope"]) == 2
    assert "no launch named 'nope'" in capsys.readouterr().err


def test_malformed_ptx_gives_location_and_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(\n{\n  add.s32 %r1, %r2;\n")
    assert main(["info", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.ptx:" in err and "Traceback" not in err


def test_bad_option_values_are_refused(capsys):
    assert main(["info", str(MM), "--grid", "0,4", "--block", "16"]) == 2
    assert "grid" in capsys.readouterr().err
    assert main(["info", str(MM), "--arg", "3=abc"]) == 2
    assert "--arg" in capsys.readouterr().err


def test_unknown_command_is_one_line_with_the_command_list():
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, str(root / "main.py"), "simulate-everything", "x.ptx"],
                          capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "unknown command 'simulate-everything'" in lines[0]
    assert "predict" in lines[0] and "batch" in lines[0]


def test_help_lists_every_command_and_each_command_has_help():
    """A help line with a '%' (sensitivity's "±X %") once made `main.py --help` fail in argparse."""
    import argparse

    from engine.cli import build_parser
    from engine.cli.command_registry import command_names

    parser = build_parser()
    text = parser.format_help()
    assert all(name in text for name in command_names())
    assert "±X %," in text
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, command_parser in commands.choices.items():
        assert command_parser.format_help().startswith("usage: main.py " + name)


def test_triton_reqntid_sets_the_default_launch(capsys):
    import json

    root = Path(__file__).resolve().parents[1]
    ptx = root / "tests" / "corpus" / "triton" / "vector_add.cc75.ptx"
    assert main(["info", str(ptx), "--profile", "h100", "--json", "--no-ptxas"]) == 0
    info = json.loads(capsys.readouterr().out)["kernels"][0]
    assert info["launch"]["block"] == [128, 1, 1] and ".reqntid" in info["launch"]["source"]
    per_sm = info["occupancy"]["blocks_per_sm"]
    assert info["launch"]["blocks"] == 132 * per_sm and "one wave" in info["launch"]["source"]
    # predict needs no --grid/--block for it
    assert main(["predict", str(ptx), "--profile", "h100", "--model", "pipeline", "--no-ptxas"]) == 0


def test_no_ptxas_is_honoured_by_every_model(capsys):
    import json

    root = Path(__file__).resolve().parents[1]
    ptx = str(root / "samples" / "ptx" / "hotspot.sm_75.ptx")
    assert main(["info", ptx, "--profile", "h100", "--no-ptxas", "--json"]) == 0
    estimate = json.loads(capsys.readouterr().out)["kernels"][0]["registers"]
    figures = []
    for extra in (["--no-ptxas"], ["--regs", str(estimate)]):
        assert main(["predict", ptx, "--profile", "h100", "--json", *extra]) == 0
        out = json.loads(capsys.readouterr().out)
        figures.append({k: v["kernel_cycles"] for k, v in out["models"].items()})
    # the estimate is what every model ran with: the same figures as giving that count by hand
    assert figures[0] == figures[1]
