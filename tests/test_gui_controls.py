"""Inputs panel, exports, close/recovery prompts, the background worker and ``run_app``."""

from __future__ import annotations

import csv
import time

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox

from engine.evaluation import state_for as initial_state
from engine.session_file import save_session
from engine.state import with_cell_edit
from gui.worker import ComputeWorker
from tests.test_gui_support import HOTSPOT, cycles, make_window, wait_complete


@pytest.fixture()
def window(qtbot, tmp_path, monkeypatch):
    return make_window(qtbot, tmp_path, monkeypatch)


def test_launch_edits_are_validated_and_undoable(window, qtbot):
    panel = window.inputs_panel
    state = window.session.state
    panel.grid_edit.setText("0,4")
    panel._dim_edited("grid", panel.grid_edit)
    assert "at least 1" in window.statusBar().currentMessage() and window.session.state is state
    panel.block_edit.setText("64,32")               # 2048 threads: over the CUDA limit
    panel._dim_edited("block", panel.block_edit)
    assert "1024" in window.statusBar().currentMessage() and window.session.state is state
    panel.grid_edit.setText("20,20")
    panel._dim_edited("grid", panel.grid_edit)
    wait_complete(qtbot, window)
    assert window.session.state.launch.grid == (20, 20, 1)
    assert window.session.result.manybsp.params.n_b == 400
    window.undo_action.trigger()
    wait_complete(qtbot, window)
    assert window.session.state == state


def test_trip_count_and_argument_edits(window, qtbot):
    panel = window.inputs_panel
    _, sim0 = cycles(window)
    item = panel.loops_table.item(0, 3)
    inferred = panel.loops_table.item(0, 2).text()
    item.setText("-1")
    assert "non-negative" in window.statusBar().currentMessage()
    panel.loops_table.item(0, 3).setText("6")
    wait_complete(qtbot, window)
    loop = panel.loops_table.item(0, 0).text()
    assert window.session.state.launch.trip_overrides == {loop: 6}
    assert panel.loops_table.item(0, 2).text() == inferred          # the inferred value stays shown
    assert panel.loops_table.item(0, 3).font().bold() and cycles(window)[1] > sim0
    # Argument 0 (pyramid height) drives the inferred trip count when no override is set.
    window.undo_action.trigger()
    wait_complete(qtbot, window)
    panel.args_table.item(0, 2).setText("5")
    wait_complete(qtbot, window)
    assert window.session.state.launch.args[0] == 5
    assert panel.loops_table.item(0, 2).text() != inferred
    panel.args_table.item(0, 2).setText("x")
    assert "not a number" in window.statusBar().currentMessage()


def test_profile_switch_and_bad_profile_file(window, qtbot, tmp_path):
    panel = window.inputs_panel
    index = panel.profile_combo.findData("gtx1070")
    assert index >= 0
    panel.profile_combo.setCurrentIndex(index)
    panel._profile_chosen(index)
    wait_complete(qtbot, window)
    result = window.session.result
    first = next(iter(result.models.values()))
    assert result.profile.name == "gtx1070" and first.microseconds == pytest.approx(
        first.kernel_cycles / result.profile.device.clock_mhz)
    assert window.session.state.profile == "gtx1070"
    bad = tmp_path / "bad.toml"
    bad.write_text("[device]\nname = 3\n")
    before = window.session.state
    from PySide6.QtWidgets import QFileDialog

    QFileDialog.getOpenFileName = staticmethod(lambda *a, **k: (str(bad), ""))
    try:
        panel._profile_chosen(panel.profile_combo.findData(None))
    finally:
        del QFileDialog.getOpenFileName
    assert "bad.toml" in window.statusBar().currentMessage() and window.session.state is before


def test_all_csv_exports_write_engine_tables(window, tmp_path, monkeypatch):
    targets = iter([tmp_path / "block.csv", tmp_path / "steps.csv", tmp_path / "curves.csv",
                    tmp_path / "predictions.csv"])
    monkeypatch.setattr(window.exports, "_save_path", lambda *a: next(targets))
    window.exports.ask_block_csv()
    window.exports.ask_supersteps_csv()
    window.exports.ask_curves_csv()
    assert str(tmp_path / "curves.csv") in window.statusBar().currentMessage()   # names the file
    window.exports.ask_predictions_csv()
    result = window.session.result
    with open(tmp_path / "block.csv", newline="") as fh:
        block = list(csv.DictReader(fh))
    assert [int(r["inst"]) for r in block] == [b.index for b in result.manybsp.block]
    with open(tmp_path / "steps.csv", newline="") as fh:
        steps = list(csv.DictReader(fh))
    assert sum(r["level"] == "1" for r in steps) == len(result.manybsp.level1)
    with open(tmp_path / "curves.csv", newline="") as fh:
        curves = list(csv.DictReader(fh))
    assert len(curves) == result.max_blocks
    assert float(curves[0]["manybsp_kernel_cycles"]) == pytest.approx(
        dict(result.sweep.kernel_cycles("manybsp"))[1], abs=0.0501)
    with open(tmp_path / "predictions.csv", newline="") as fh:
        lines = fh.read().splitlines()
    # what the figures were computed from comes first, as comment lines
    assert lines[0].startswith("# file: ") and any(line.startswith("# edits: ") for line in lines)
    predictions = {r["model"]: r for r in csv.DictReader(line for line in lines if not line.startswith("# "))}
    assert float(predictions["pipeline"]["kernel_cycles"]) == pytest.approx(
        result.models["pipeline"].kernel_cycles, abs=0.0501)


def test_close_prompts_on_unsaved_changes(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch)
    monkeypatch.undo()                      # the real confirm_discard again
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    session = window.session
    session.apply(with_cell_edit(session.state, 47, "lat_comm", 999.0), "edit")
    asked = []
    monkeypatch.setattr(QMessageBox, "question",
                        staticmethod(lambda *a, **k: asked.append(a[2]) or QMessageBox.StandardButton.Cancel))
    window.close()
    assert asked and window.isVisible()     # cancelled: still open, edits kept
    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.StandardButton.Discard))
    wait_complete(qtbot, window)
    window.close()
    assert not window.isVisible()


def test_recovery_is_offered_at_start(qtbot, tmp_path, monkeypatch):
    from gui import app as app_module
    from tests.test_gui_support import restore_all

    window = make_window(qtbot, tmp_path, monkeypatch, open_sample=False)
    from engine.inputs import resolve_inputs
    from engine.session_file import recovery_path

    # An autosave without an owner (as older versions wrote it) is an orphan.
    state = with_cell_edit(initial_state(resolve_inputs(HOTSPOT)), 47, "lat_comm", 321.0)
    save_session(recovery_path(), HOTSPOT, state)
    monkeypatch.setattr(app_module, "choose_recovery", restore_all)
    assert app_module._offer_recovery(window)
    wait_complete(qtbot, window)
    assert window.session.state == state and window.session.session_path is None


def test_worker_delivers_only_the_newest_result(qtbot):
    from engine.inputs import resolve_inputs

    inputs = resolve_inputs(HOTSPOT)
    base = initial_state(inputs)
    worker = ComputeWorker()
    delivered = []
    worker.resultReady.connect(delivered.append)
    states = [with_cell_edit(base, 47, "lat_comm", 500.0 + 100 * k) for k in range(6)]
    for state in states:
        worker.submit(inputs, state)
    qtbot.waitUntil(lambda: not worker.busy, timeout=60_000)
    time.sleep(0.05)
    QApplication.processEvents()
    assert [r.state for r in delivered] == [states[-1]]
    worker.stop()


def test_run_app_opens_the_sample_and_reports_a_broken_file(qtbot, tmp_path, monkeypatch):
    from gui.app import run_app
    from gui.main_window import MainWindow

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setattr(MainWindow, "confirm_discard", lambda self: True)
    bad = tmp_path / "broken.ptx"
    bad.write_text(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k( {\n ret;\n")
    seen = {}

    def fake_exec(app) -> int:
        # Stands in for the event loop (a real exec() in a pytest-qt run stops later tests'
        # timers): wait for the window's first complete result, look at it, close it.
        windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        window = windows[-1]
        qtbot.addWidget(window)
        wait_complete(qtbot, window)
        seen["title"] = window.windowTitle()
        seen["banner"] = window.banner.label.text()
        window.close()
        return 0

    monkeypatch.setattr(QApplication, "exec", fake_exec)
    assert run_app([str(bad)]) == 0
    assert seen["title"].startswith("Warpline — hotspot.sm_90.ptx")
    assert "broken.ptx" in seen["banner"] and "line" in seen["banner"]


def test_profile_without_manybsp_keeps_its_tables_and_refuses_the_prediction(window, qtbot):
    # c2050 (001) has no [manybsp] section: its Many-BSP figures are derived, the launch overheads
    # cannot be, so the BLOCK table and the superstep tree are filled and the prediction is refused.
    panel = window.inputs_panel
    index = panel.profile_combo.findData("c2050")
    assert index >= 0
    panel.profile_combo.setCurrentIndex(index)
    panel._profile_chosen(index)
    wait_complete(qtbot, window)
    result = window.session.result
    assert result.profile.name == "c2050" and result.manybsp is not None
    assert not window.banner.isHidden() and "no [manybsp] section" in window.banner.label.text()
    assert "block_lnch_ovh" in window.banner.label.text()
    preds = {r.model: r.kernel_cycles for r in result.models.values()}
    assert preds["manybsp"] is None and preds["pipeline"] > 0
    assert window.results_panel.table.item(0, 1).text() == "—"
    table, tree = window.block_view.model_, window.superstep_view.model_
    assert table.rowCount() == len(window.session.inputs.function.instructions) == len(result.manybsp.block)
    assert tree.rowCount() == len(result.manybsp.level1) > 1
    assert tree.rowCount(tree.index(0, 0)) == len(result.manybsp.level1[0].children) > 0
    # The derivation view marks every figure the profile does not state, with its provenance.
    derivation = window.results_panel.derivation
    shown = {derivation.item(k, 0).text(): (derivation.item(k, 2).text(), derivation.item(k, 3).text())
             for k in range(derivation.rowCount())}
    assert shown["mem_lat"] == ("profile: derived", shown["mem_lat"][1])
    assert "pipeline.memory.global_Lam" in shown["mem_lat"][1]
    assert shown["mu"][0] == "profile: placeholder" and shown["block_lnch_ovh"][0] == "profile: missing"
    assert shown["Many-BSP prediction"][0] == "refused" and derivation.item(0, 0).font().italic()
    assert any("derived from the pipeline figures" in w for w in result.warnings)
    window.undo_action.trigger()
    wait_complete(qtbot, window)
    assert window.banner.isHidden() and window.block_view.model_.rowCount() > 0
    assert "mem_lat" not in {derivation.item(k, 0).text() for k in range(derivation.rowCount())}
