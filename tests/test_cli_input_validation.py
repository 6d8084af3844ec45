"""Command-line values are refused with a one-line reason: unknown argument and loop names,
non-finite or non-positive budgets and image sizes, unwritable outputs; PNG export needs no display."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli import main

ROOT = Path(__file__).resolve().parents[1]
HOTSPOT = str(ROOT / "samples" / "ptx" / "hotspot.sm_90.ptx")


def test_unknown_argument_name_lists_the_parameters(capsys):
    assert main(["predict", HOTSPOT, "--profile", "h100", "--arg", "nope=3"]) == 2
    err = capsys.readouterr().err
    assert "--arg nope" in err and "parameters:" in err and len(err.strip().splitlines()) == 1


def test_unknown_loop_name_lists_the_loops(capsys):
    assert main(["predict", HOTSPOT, "--profile", "h100", "--trip", "NOPE=5"]) == 2
    err = capsys.readouterr().err
    assert "--trip NOPE" in err and "$L__BB0_5" in err


@pytest.mark.parametrize("item, said", [("nope=linear:1", "parameters:"), ("1=linear:nan", "finite"),
                                        ("1=sorted:3", "kind must be one of"), ("1=random:5:5", "HI must be above LO"),
                                        ("1", "NAME=VALUE")])
def test_data_patterns_are_checked(item, said, capsys):
    assert main(["predict", HOTSPOT, "--profile", "h100", "--data", item]) == 2
    err = capsys.readouterr().err
    assert "--data" in err and said in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("value", ["nan", "-1", "0", "inf"])
def test_cycle_budget_must_be_positive_and_finite(value, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["trace", HOTSPOT, "--profile", "h100", "--csv", "x.csv", "--cycle-budget", value])
    assert stop.value.code == 2 and "--cycle-budget" in capsys.readouterr().err


@pytest.mark.parametrize("size", ["0", "-5", "100000", "abc"])
def test_png_sizes_are_checked(size, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["export", HOTSPOT, "--profile", "h100", "--png", "x.png", "--width", size])
    assert stop.value.code == 2 and "--width" in capsys.readouterr().err


def test_unwritable_output_is_a_one_line_error(tmp_path, capsys):
    target = tmp_path / "no-such-folder" / "out.csv"
    assert main(["export", HOTSPOT, "--profile", "h100", "--predictions-csv", str(target)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot write" in err and str(target) in err


def test_png_export_without_a_display(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    png = tmp_path / "t.png"
    done = subprocess.run([sys.executable, str(ROOT / "main.py"), "export", HOTSPOT, "--profile", "h100",
                           "--png", str(png), "--width", "640", "--height", "360"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
