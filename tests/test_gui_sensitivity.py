"""The window's Sensitivity tab (issue 32): the engine's ranking as a tornado chart, computed in
the background only while shown, stale after an edit, kept per state."""

from __future__ import annotations

import pytest

from engine.evaluation.sensitivity import sensitivity
from gui.models.block_table import KEYS
from tests.test_gui_support import make_window, wait_complete


@pytest.fixture()
def window(qtbot, tmp_path, monkeypatch):
    return make_window(qtbot, tmp_path, monkeypatch)


def _show(window, qtbot):
    panel = window.results_panel
    window.results_dock.show()
    window.results_dock.raise_()
    panel.tabs.setCurrentWidget(panel.sensitivity)
    return panel.sensitivity


def test_tornado_shows_the_engines_ranking_and_follows_edits(window, qtbot):
    tab = window.results_panel.sensitivity
    assert tab.runs == 0, "nothing runs while the tab is hidden"
    tab = _show(window, qtbot)
    qtbot.waitUntil(lambda: tab.result is not None, timeout=60_000)
    session = window.session
    expected = sensitivity(session.inputs, session.state, step=0.1)
    assert tab.result.ranked_keys() == expected.ranked_keys()
    assert [r.plus for r in tab.result.rows] == [r.plus for r in expected.rows]
    assert tab.chart.titles == [r.parameter.title for r in expected.rows]
    assert tab.table.rowCount() == len(expected.rows)
    assert tab.table.item(0, 0).text() == expected.rows[0].parameter.title
    first = tab.result
    runs = tab.runs
    # an edit makes it stale and recomputes it for the new state
    model = window.block_view.model_
    row = next(k for k, r in enumerate(model.rows) if r.is_global_access and r.lat_comm > 0)
    model.setData(model.index(row, KEYS.index("lat_comm")), "3000")
    wait_complete(qtbot, window)
    qtbot.waitUntil(lambda: tab.result is not first and tab.runs > runs, timeout=60_000)
    assert tab.result.base_kernel_cycles == window.session.result.models["pipeline"].kernel_cycles
    # undo: the first state's result comes back at once, without a run
    runs = tab.runs
    window.session.undo_stack.undo()
    wait_complete(qtbot, window)
    qtbot.waitUntil(lambda: tab.result is first, timeout=5000)
    assert tab.runs == runs


def test_cancel_and_step(window, qtbot):
    tab = _show(window, qtbot)
    qtbot.waitUntil(lambda: tab._runner.busy, timeout=10_000)
    tab.cancel()
    assert not tab._runner.busy
    assert "Cancelled" in tab.caption.text()
    tab.step_spin.setValue(25)
    qtbot.waitUntil(lambda: tab.result is not None and tab.result.step == pytest.approx(0.25), timeout=60_000)
    assert "25" in tab.table.horizontalHeaderItem(2).text()
