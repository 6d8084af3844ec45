"""The window's Memory tab (issue 12): per access where its sectors are served, and the launch's
bytes per level, exactly the engine's traffic, read when the tab is on screen."""

from __future__ import annotations

import pytest

from engine.memory.traffic import traffic_rows
from tests.test_gui_support import make_window


@pytest.fixture()
def window(qtbot, tmp_path, monkeypatch):
    return make_window(qtbot, tmp_path, monkeypatch)


def test_memory_tab_shows_the_engines_traffic(window, qtbot):
    panel = window.results_panel
    window.results_dock.show()
    window.results_dock.raise_()
    panel.tabs.setCurrentWidget(panel.plot_widget)
    qtbot.waitUntil(lambda: window.session.result is not None and window.session.result.traffic is not None,
                    timeout=10000)
    assert panel.memory.rows == [], "not filled while the tab is hidden"
    panel.tabs.setCurrentWidget(panel.memory)
    qtbot.waitUntil(lambda: panel.memory.rows != [], timeout=5000)
    result = window.session.result
    assert panel.memory.rows == traffic_rows(result.memory, result.traffic)
    assert panel.memory.summary.text() == result.traffic.summary()
    table = panel.memory.table
    assert table.rowCount() == len(result.memory.accesses)
    first_global = next(r for r, row in enumerate(panel.memory.rows) if row["space"] == "global")
    header = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    hit = panel.memory.rows[first_global]["L1 hit %"]
    assert table.item(first_global, header.index("L1 hit %")).text() == f"{hit:,.1f}"
