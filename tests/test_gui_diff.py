"""The window with a second kernel as the comparison (issue 32): Edit › Compare with… loads and
evaluates it off the UI thread, the chart stacks both runs, the Compare tab fits a narrow dock and
the Diff tab aligns the instructions; the timeline export draws both."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from engine.evaluation.diff import ADDED, CHANGED
from gui.panels.compare import ComparePanel
from tests.test_gui_support import make_window, wait_complete

HOTSPOT = Path(__file__).resolve().parent.parent / "samples" / "ptx" / "hotspot.sm_90.ptx"


@pytest.fixture()
def window(qtbot, tmp_path, monkeypatch):
    return make_window(qtbot, tmp_path, monkeypatch)


@pytest.fixture()
def second_version(tmp_path):
    text = HOTSPOT.read_text(encoding="utf-8")
    edited = text.replace("add.f32 \t%f16, %f12, %f12;", "mul.f32 \t%f16, %f12, 0f40000000;")
    edited = edited.replace("fma.rn.f32 \t%f28, %f1, %f27, %f12;",
                            "fma.rn.f32 \t%f28, %f1, %f27, %f12;\n\tmov.f32 \t%f30, %f28;")
    path = tmp_path / "v2" / "hotspot.sm_90.ptx"
    path.parent.mkdir()
    path.write_text(edited, encoding="utf-8")
    return path


def test_compare_with_a_second_version(window, qtbot, second_version, tmp_path):
    window.compare_with(second_version)
    assert window.baseline.comparing
    qtbot.waitUntil(lambda: window.baseline.result is not None and not window.baseline.comparing, timeout=60_000)
    wait_complete(qtbot, window)
    assert "hotspot.sm_90.ptx" in window.baseline.label
    assert window.gantt.baseline is window.baseline.result          # stacked above the current run
    assert window.session.dirty                                      # a comparison is an unsaved change
    compare = window.results_panel.compare
    assert window.results_panel.tabs.currentWidget() is compare
    qtbot.waitUntil(lambda: bool(compare.rows), timeout=5000)
    # the Diff tab: the current kernel against the comparison (the second version)
    window.side_tabs.setCurrentWidget(window.diff_panel)
    panel = window.diff_panel
    qtbot.waitUntil(lambda: panel.result is not None, timeout=10_000)
    counts = panel.result.counts()
    # seen from the current kernel, the second version's extra instruction is missing here
    assert (counts[CHANGED], counts["removed"], counts[ADDED]) == (1, 1, 0)
    # the rows that differ: those two and any whose BLOCK cells changed (an issue cell beside the
    # extra instruction)
    assert panel.table.rowCount() == 2 + counts["cells_changed"] == len([r for r in panel.result.rows if r.marked])
    panel.only_changes.setChecked(False)
    assert panel.table.rowCount() == len(panel.result.rows)
    changed_row = next(k for k, r in enumerate(panel.shown_rows) if r.status == CHANGED)
    panel.table.selectRow(changed_row)
    selected = window.block_view.selectionModel().selectedRows()
    assert [window.block_view.model_.rows[i.row()].index for i in selected] == [panel.shown_rows[changed_row].after]
    # the exported timeline carries both runs
    out = window.exports.timeline(tmp_path / "both.png", 1200, 900)
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1200, 900)
    assert image.text("Title")


def test_compare_tab_fits_a_narrow_dock(window, qtbot):
    result = window.session.result
    panel = ComparePanel()
    qtbot.addWidget(panel)
    panel.resize(290, 500)       # the results dock at 1366 x 768
    panel.show()
    panel.set_current(result)
    panel.set_baseline(result, "itself")
    qtbot.waitUntil(lambda: bool(panel.rows), timeout=5000)
    header = panel.table.horizontalHeader()
    last = header.logicalIndex(header.count() - 1)
    assert header.sectionViewportPosition(last) + header.sectionSize(last) <= panel.table.viewport().width()
    assert panel.short                  # three-digit cycles at this width, exact ones in the tooltips
    assert panel.table.item(0, 1).toolTip().replace(",", "").isdigit()
    panel.resize(900, 500)
    qtbot.waitUntil(lambda: not panel.short, timeout=2000)
