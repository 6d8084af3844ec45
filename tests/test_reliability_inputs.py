"""Hostile inputs end in one located line: devices given as files, Nsight Compute CSVs with 0
cycles or a huge cell, sessions with Infinity or 0 measured cycles; the CLI parses only the chosen
kernel of a file (found through the kernel index)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli import main as cli_main
from engine.errors import TableFormatError, WarplineError
from engine.evaluation import state_for
from engine.inputs import resolve_inputs
from engine.ncu import load_ncu_csv, measured_cycles
from engine.session_file import load_session, session_to_dict

ROOT = Path(__file__).resolve().parents[1]
HOTSPOT = ROOT / "samples" / "ptx" / "hotspot.sm_90.ptx"

HEADER = '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'


@pytest.mark.parametrize("options, what", [
    ([str(HOTSPOT), "--launch", "/dev/zero"], "launch file"),
    ([str(HOTSPOT), "--profile", "/dev/zero"], "profile"),
    (["/dev/zero"], "PTX file"),
])
def test_dev_zero_is_refused_in_one_line(options, what, capsys):
    assert cli_main(["info", *options, "--no-ptxas"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "/dev/zero: not a regular file" in err and what in err


def test_ncu_csv_with_zero_cycles_or_a_huge_cell(tmp_path):
    zero = tmp_path / "zero.csv"
    zero.write_text(HEADER + '"0","calculate_temp(int)","gpc__cycles_elapsed.max","cycle","0"\n')
    with pytest.raises(TableFormatError, match="is not a positive number of cycles"):
        measured_cycles(zero, "calculate_temp")
    huge = tmp_path / "huge.csv"
    huge.write_text(HEADER + '"0","' + "k" * (200 * 1024) + '","gpc__cycles_elapsed.max","cycle","5"\n')
    with pytest.raises(TableFormatError, match=r"row 2.*not a readable CSV row"):
        load_ncu_csv(huge)
    with pytest.raises(TableFormatError, match="not a regular file"):
        load_ncu_csv("/dev/zero")


@pytest.mark.parametrize("measured, message", [(0, "0 cycles"), (float("inf"), "finite"), (-3, "below 0")])
def test_sessions_refuse_measured_cycles_that_are_not_positive_and_finite(tmp_path, measured, message):
    inputs = resolve_inputs(HOTSPOT, use_ptxas=False)
    data = session_to_dict(HOTSPOT, state_for(inputs))
    data["measured_cycles"] = measured
    path = tmp_path / "s.warpline"
    path.write_text(json.dumps(data))          # Python writes inf as JSON's Infinity
    with pytest.raises(WarplineError, match=f"measured_cycles.*{message}"):
        load_session(path)


def test_the_cli_parses_only_the_chosen_kernel(tmp_path, capsys):
    text = HOTSPOT.read_text()
    broken = ("\n.visible .entry other_kernel()\n{\n\tthis is not an instruction;\n\tret;\n}\n")
    path = tmp_path / "two.ptx"
    path.write_text(text + broken)
    assert cli_main(["predict", str(path), "--kernel", "calculate_temp", "--profile", "h100",
                     "--no-ptxas", "--model", "manybsp"]) == 0
    assert "Many-BSP" in capsys.readouterr().out
    assert cli_main(["info", str(path), "--kernel", "other_kernel", "--no-ptxas"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:" in err and err.count("\n") == 1
