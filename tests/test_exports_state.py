"""Exports carry the what-if (issue 32, part 6): the picture's title names the edits and the
occupancy (or "as computed") and draws a pinned baseline, CSVs start with comment lines naming
what they were computed from, stall rows and trace events name their instructions, and every
output file gets the user's umask."""

from __future__ import annotations

import csv
import json
import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from engine.evaluation import Evaluator, state_for
from engine.evaluation.provenance import AS_COMPUTED, comment_lines, edits, state_text
from engine.fileio import csv_text, write_text_atomic
from engine.inputs import resolve_inputs
from engine.state import with_cell_edit, with_iterations
from gui.models.block_table import KEYS
from tests.test_gui_support import make_window, wait_complete

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
HOTSPOT = SAMPLES / "ptx" / "hotspot.sm_90.ptx"


def test_state_in_words():
    inputs = resolve_inputs(HOTSPOT, launch_file=SAMPLES / "hotspot.launch.toml", profile="h100")
    state = state_for(inputs)
    ev = Evaluator().evaluate(inputs, state, only=["pipeline"], trace=False)
    assert state_text(ev) == f"{ev.max_blocks} blocks/SM (as many as fit) · {AS_COMPUTED}"
    edited = with_iterations(with_cell_edit(replace(state, occupancy=3), 12, "lat_comm", 2000.0), 2, 5)
    ev2 = Evaluator().evaluate(inputs, edited, only=["pipeline"], trace=False)
    assert edits(edited) == ["#12 lat_comm = 2000", "superstep L1 #2 × 5"]
    assert state_text(ev2) == f"3 of {ev.max_blocks} blocks/SM (set) · edited: #12 lat_comm = 2000, superstep L1 #2 × 5"
    lines = dict(line.split(": ", 1) for line in comment_lines(ev2, HOTSPOT))
    assert lines["file"] == str(HOTSPOT) and "calculate_temp" in lines["kernel"]
    assert lines["profile"].startswith("h100") and "grid 43×43×1, block 16×16×1" in lines["launch"]
    assert lines["edits"] == "#12 lat_comm = 2000; superstep L1 #2 × 5"


@pytest.mark.parametrize("umask, expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_written_files_follow_the_umask(tmp_path, umask, expected):
    old = os.umask(umask)
    try:
        out = write_text_atomic(tmp_path / "a.json", "{}")
        csv_text(["a"], [[1]], tmp_path / "a.csv")
    finally:
        os.umask(old)
    for path in (out, tmp_path / "a.csv"):
        assert stat.S_IMODE(path.stat().st_mode) == expected
    # a file replaced keeps the mode its owner gave it
    os.chmod(out, 0o640)
    write_text_atomic(out, "{ }")
    assert stat.S_IMODE(out.stat().st_mode) == 0o640


def test_cli_trace_csv_and_chrome_name_the_run_and_the_instructions(tmp_path):
    from engine.cli import main as cli_main

    out, trace = tmp_path / "t.csv", tmp_path / "t.json"
    assert cli_main(["trace", str(HOTSPOT), "--launch", str(SAMPLES / "hotspot.launch.toml"), "--profile", "h100",
                     "--csv", str(out), "--chrome-trace", str(trace)]) == 0
    text = out.read_text(encoding="utf-8").splitlines()
    comments = [line for line in text if line.startswith("# ")]
    assert [c.split(":")[0] for c in comments] == ["# file", "# kernel", "# profile", "# launch", "# occupancy",
                                                   "# policy", "# edits"]
    assert comments[-1] == f"# edits: none ({AS_COMPUTED})"
    rows = list(csv.DictReader(line for line in text if not line.startswith("#")))
    stall = next(r for r in rows if r["kind"] == "stall" and r["cause"] == "memory_dependency")
    assert stall["instruction"] and stall["name"] and stall["held_by_name"].startswith("ld.")
    doc = json.loads(trace.read_text(encoding="utf-8"))
    events = [e for e in doc["traceEvents"] if e.get("cat") == "stall" and e["name"] == "barrier"]
    assert events and all(e["args"]["held_by_name"].startswith("bar.") for e in events)


@pytest.fixture()
def window(qtbot, tmp_path, monkeypatch):
    return make_window(qtbot, tmp_path, monkeypatch)


def test_exported_png_of_an_edited_session_names_the_edit(window, qtbot, tmp_path):
    model = window.block_view.model_
    row = next(k for k, r in enumerate(model.rows) if r.is_global_access and r.lat_comm > 0)
    number = model.rows[row].index
    assert window.pin_baseline()
    model.setData(model.index(row, KEYS.index("lat_comm")), "3000")
    session = window.session
    session.apply(replace(session.state, occupancy=4), "Occupancy 4 blocks/SM")
    wait_complete(qtbot, window)
    saved = window.session.save(tmp_path / "edited.warpline")
    # reopened, the edited session's export names the edit and the occupancy
    assert window.open_file(saved)
    wait_complete(qtbot, window)
    out = window.exports.timeline(tmp_path / "edited.png", 1400, 900)
    title = QImage(str(out)).text("Title")
    assert f"#{number} lat_comm = 3000" in title
    assert "4 of 8 blocks/SM (set)" in title
    # the CSV says the same
    csv_out = tmp_path / "edited.csv"
    window.exports.trace_csv(csv_out)
    head = csv_out.read_text(encoding="utf-8").splitlines()[:8]
    assert f"# edits: #{number} lat_comm = 3000" in head
    assert stat.S_IMODE(csv_out.stat().st_mode) == 0o666 & ~_umask()
    assert stat.S_IMODE(saved.stat().st_mode) == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
