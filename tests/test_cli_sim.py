"""sweep, trace and export from the command line."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from engine.cli import main
from engine.cli.options import parse_range
from engine.errors import WarplineError

ROOT = Path(__file__).resolve().parents[1]
HOTSPOT = str(ROOT / "samples" / "ptx" / "hotspot.sm_90.ptx")


def test_parse_range():
    assert parse_range("1:4", "--blocks") == [1, 2, 3, 4]
    assert parse_range("8:32:8", "--blocks") == [8, 16, 24, 32]
    assert parse_range("5", "--blocks") == [5]
    for bad in ("0:4", "4:1", "a:b", "1:2:0"):
        with pytest.raises(WarplineError, match="--blocks"):
            parse_range(bad, "--blocks")


def test_sweep_writes_one_curve_per_model(tmp_path, capsys):
    out = tmp_path / "curves.csv"
    assert main(["sweep", HOTSPOT, "--profile", "h100", "--warps", "8:64:8", "--csv", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    # hotspot's 16x16 blocks are 8 warps: 8..64 warps are 1..8 blocks, every one reachable
    assert [int(r["resident_warps"]) for r in rows] == [8, 16, 24, 32, 40, 48, 56, 64]
    assert [int(r["resident_blocks"]) for r in rows] == list(range(1, 9))
    for model in ("manybsp", "pipeline", "roofline", "volkov", "mwp_cwp", "wfg_star", "gpumech_rr"):
        assert all(float(r[f"{model}_kernel_cycles"]) > 0 for r in rows)
    sim = [float(r["pipeline_kernel_cycles"]) for r in rows]
    assert sim[0] > sim[-1]  # more warps resident, less time


def test_sweep_says_which_occupancies_cannot_be_reached(capsys):
    mm = str(ROOT / "samples" / "ptx" / "mm.sm_90.ptx")
    # the README's example: mm's case launch has 32-warp blocks, so 8..64 warps are 1 or 2 blocks
    assert main(["sweep", mm, "--profile", "h100", "--warps", "8:64:8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [row[0] for row in out["rows"]] == [1, 2]
    assert any("8 warps is not a whole number" in n for n in out["notes"])
    assert main(["sweep", HOTSPOT, "--profile", "h100", "--blocks", "1:40", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [row[0] for row in out["rows"]] == list(range(1, 9))
    assert any("cannot be reached" in n and "9..40" in n for n in out["notes"])


def test_trace_csv_and_chrome_trace(tmp_path, capsys):
    csv_path, json_path = tmp_path / "t.csv", tmp_path / "t.json"
    assert main(["trace", HOTSPOT, "--profile", "h100", "--csv", str(csv_path), "--chrome-trace", str(json_path),
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    with csv_path.open() as fh:     # the "# file: …" lines first (what the run was), then the table
        rows = list(csv.DictReader(line for line in fh if not line.startswith("# ")))
    assert sum(r["kind"] == "issue" for r in rows) == summary["issue_rows"] == summary["instructions_issued"]
    assert sum(r["kind"] == "stall" for r in rows) == summary["stall_rows"]
    events = json.loads(json_path.read_text())["traceEvents"]
    assert sum(1 for e in events if e.get("ph") == "X") >= summary["issue_rows"]


def test_png_without_a_renderer_is_a_one_line_error(tmp_path, capsys):
    assert main(["export", HOTSPOT, "--profile", "h100", "--png", str(tmp_path / "g.png")]) == 2
    assert "needs the drawing layer" in capsys.readouterr().err


def test_trace_needs_an_output(capsys):
    assert main(["trace", HOTSPOT, "--profile", "h100"]) == 2
    assert "--csv" in capsys.readouterr().err


def test_export_png_and_tables(tmp_path, capsys, qapp):
    from gui.render import QtRenderer

    png, block = tmp_path / "g.png", tmp_path / "block.csv"
    assert main(["export", HOTSPOT, "--profile", "gtx1070", "--png", str(png), "--width", "800", "--height", "500",
                 "--block-csv", str(block)], renderer=QtRenderer()) == 0
    from PySide6.QtGui import QImage

    image = QImage(str(png))
    assert (image.width(), image.height()) == (800, 500)
    header = block.read_text().splitlines()[0]
    assert header.startswith("inst,op,issue,fu1")


def test_without_a_profile_the_cli_uses_the_apps_default_and_says_so(tmp_path, capsys):
    chosen, explicit = tmp_path / "default.csv", tmp_path / "h100.csv"
    assert main(["trace", HOTSPOT, "--csv", str(chosen)]) == 0
    assert "no --profile given, using 'h100'" in capsys.readouterr().err
    assert main(["trace", HOTSPOT, "--profile", "h100", "--csv", str(explicit)]) == 0
    assert chosen.read_text() == explicit.read_text()
    # An sm_52 file has no shipped profile of its own: the fallback is 000's GPU.
    assert main(["predict", str(ROOT / "samples" / "ptx" / "mm.sm_52.ptx"), "--model", "manybsp", "--no-ptxas"]) == 0
    captured = capsys.readouterr()
    assert "using 'gtx1070'" in captured.err and "on gtx1070" in captured.out
