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


def test_ncu_rows_without_the_trailing_rule_columns_are_read(tmp_path):
    # Newer ncu versions add rule columns after "Metric Value" and leave them out of a row
    # that no rule fired for (samples/measured/v2-h100-stalls/stalls.csv is such an export).
    real = load_ncu_csv(ROOT / "samples" / "measured" / "v2-h100-stalls" / "stalls.csv")
    assert real and all(launch.cycles for launch in real)
    rules = HEADER.rstrip("\n") + ',"Rule Name","Rule Type"\n'
    short = tmp_path / "short.csv"
    short.write_text(rules + '"0","k(int)","gpc__cycles_elapsed.max","cycle","1,234",\n'
                     '"0","k(int)","sm__warps_active.avg","warp","3","Occupancy","OPT"\n')
    (launch,) = load_ncu_csv(short)
    assert launch.cycles == 1234 and launch.metrics["sm__warps_active.avg"] == 3
    cut = tmp_path / "cut.csv"
    cut.write_text(rules + '"0","k(int)","gpc__cycles_elapsed.max"\n')
    with pytest.raises(TableFormatError, match=r"row 2.*found 3 \(no 'Metric Unit' cell\)"):
        load_ncu_csv(cut)
    infinite = tmp_path / "id.csv"
    infinite.write_text(HEADER + '"inf","k(int)","gpc__cycles_elapsed.max","cycle","5"\n')
    with pytest.raises(TableFormatError, match=r"row 2, column 'ID': launch ID 'inf' is not a whole number"):
        load_ncu_csv(infinite)


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
