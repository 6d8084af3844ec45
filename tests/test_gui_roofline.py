"""The window's Roofline tab (issue 32): the engine's roofline drawn while the tab is shown, and
redrawn live after an edit."""

from __future__ import annotations

import pytest

from engine.evaluation.roofline import roofline
from gui.models.block_table import KEYS
from tests.test_gui_support import make_window, wait_complete


@pytest.fixture()
def window(qtbot, tmp_path, monkeypatch):
    return make_window(qtbot, tmp_path, monkeypatch)


def test_roofline_tab_follows_edits(window, qtbot):
    panel = window.results_panel
    window.results_dock.show()
    window.results_dock.raise_()
    tab = panel.roofline
    panel.tabs.setCurrentWidget(panel.plot_widget)
    assert tab.roofline is None, "not computed while hidden"
    panel.tabs.setCurrentWidget(tab)
    qtbot.waitUntil(lambda: tab.roofline is not None, timeout=5000)
    expected = roofline(window.session.result)
    assert tab.roofline.as_dict() == expected.as_dict()
    plot = tab.plot_widget
    used = [c for c in expected.compute if c.used]
    assert len(plot.labels) == 3 + 3 + len(used)      # each level's point and roof, each pipe in use named
    assert expected.bound in tab.caption.text()
    # an edit (a global load three times slower) redraws the chart with the new time
    model = window.block_view.model_
    row = next(k for k, r in enumerate(model.rows) if r.is_global_access and r.lat_comm > 0)
    before = tab.roofline.kernel_cycles
    model.setData(model.index(row, KEYS.index("lat_comm")), "3000")
    wait_complete(qtbot, window)
    qtbot.waitUntil(lambda: tab.roofline.kernel_cycles != before, timeout=5000)
    assert tab.roofline.kernel_cycles == window.session.result.models["pipeline"].kernel_cycles
    # the work box switches to the instruction roofline
    tab.work_box.setCurrentIndex(2)
    assert tab.roofline.work == "instruction"
    assert [c.name for c in tab.roofline.compute] == ["issue"]


def test_export_roofline_from_the_window(window, tmp_path):
    out = window.exports.roofline(tmp_path / "roof.svg", 800, 600)
    text = out.read_text(encoding="utf-8")
    assert "<svg" in text and "roofline" in text
