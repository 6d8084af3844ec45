"""Dark mode (issue 15, item 9): the window follows the system palette. With a dark palette the
charts, the marked cells, the source highlights and the error banner switch to dark colours with
readable text; stall colours stay apart from the background; a palette change while running
re-colours the open window; exports stay light (they go into reports)."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QApplication

from engine.pipeline.trace import STALL_CAUSES
from gui.gantt.colors import DATA_PALETTE, STALL_PALETTE, heat_color, stall_color
from gui.models.block_table import KEYS
from gui.theme import DARK, LIGHT, contrast, current, dark_palette, is_dark
from tests.test_gui_support import make_window, wait_complete

READABLE = 4.5        # WCAG minimum contrast of body text


@pytest.fixture()
def dark_app(qapp):
    saved = QPalette(qapp.palette())
    qapp.setPalette(dark_palette())
    yield qapp
    qapp.setPalette(saved)


def rgb_distance(a: QColor, b: QColor) -> float:
    return float(np.linalg.norm(np.array([a.red() - b.red(), a.green() - b.green(), a.blue() - b.blue()])))


def test_theme_follows_the_palette(qapp):
    assert not is_dark(qapp.palette()) and current(qapp.palette()) is LIGHT
    assert is_dark(dark_palette()) and current(dark_palette()) is DARK
    for theme in (LIGHT, DARK):
        background = theme.chart_background
        assert contrast(theme.chart_text, background) >= READABLE, theme.name
        assert contrast(theme.banner_text, theme.banner_fill) >= READABLE, theme.name
        # every stall cause and every data colour stands out from the chart's background ...
        for cause in ("memory_dependency", "compute_dependency", "barrier", "subsystem_busy", "issue_limit"):
            assert rgb_distance(stall_color(STALL_CAUSES.index(cause), theme), QColor(background)) > 60, cause
        for data in DATA_PALETTE:
            assert rgb_distance(QColor(data), QColor(background)) > 60, (theme.name, data)
        # ... while "no warp here" (finished, idle) stays close to it
        assert rgb_distance(stall_color(STALL_CAUSES.index("finished"), theme), QColor(background)) < 60
        assert rgb_distance(heat_color("idle", theme), QColor(background)) < 60
    assert STALL_PALETTE["finished"] == LIGHT.idle


def test_dark_palette_gives_a_readable_dark_window(dark_app, qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch)
    text = window.palette().color(QPalette.ColorRole.Text)
    # the chart: dark background, light axis text and legend
    view = window.gantt.view
    assert view.theme() is DARK
    background = view.graphics.backgroundBrush().color()
    assert background == QColor(DARK.chart_background)
    for side in ("left", "bottom"):
        assert contrast(view.plot.getAxis(side).textPen().color(), background) >= READABLE
    legend = [label for _sample, label in view.legend.items]
    assert legend and all(contrast(QColor(label.opts["color"]), background) >= READABLE for label in legend)
    # the curves and the bottleneck bars
    results = window.results_panel
    curves_bg = results.plot_widget.backgroundBrush().color()
    assert curves_bg == QColor(DARK.chart_background)
    assert contrast(results.plot.getAxis("left").textPen().color(), curves_bg) >= READABLE
    assert all(contrast(QColor(label.opts["color"]), curves_bg) >= READABLE for _s, label in results.legend.items)
    assert results.verdict.chart.backgroundBrush().color() == QColor(DARK.chart_background)
    # an edited latency cell: a dark marker under the palette's light text
    model = window.block_view.model_
    row = next(k for k, r in enumerate(model.rows) if r.is_global_access and r.lat_comm > 0)
    index = model.index(row, KEYS.index("lat_comm"))
    model.setData(index, "1500")
    wait_complete(qtbot, window)
    cell = model.data(index, Qt.ItemDataRole.BackgroundRole).color()
    assert contrast(text, cell) >= READABLE
    # the highlighted source lines
    window.side_tabs.setCurrentWidget(window.source_panel)
    window.block_view.select_instruction(50)
    ptx = window.source_panel.ptx
    selection = ptx.extraSelections()[0]
    fill = QColor(selection.format.background().color())
    assert contrast(ptx.palette().color(QPalette.ColorRole.Text), fill) >= READABLE
    # the error banner
    window.show_error("Row 3: a refused value")
    assert DARK.banner_fill in window.banner.styleSheet()
    # a figure exported from a dark window is a light one
    out = window.exports.timeline(tmp_path / "dark.png", 800, 500)
    image = QImage(str(out))
    assert QColor(image.pixel(image.width() - 3, image.height() // 2)) == QColor(LIGHT.chart_background)


def test_a_palette_change_recolours_the_open_window(qapp, qtbot, tmp_path, monkeypatch):
    saved = QPalette(qapp.palette())
    window = make_window(qtbot, tmp_path, monkeypatch)
    view, results = window.gantt.view, window.results_panel
    assert view.theme() is LIGHT
    try:
        qapp.setPalette(dark_palette())
        QApplication.processEvents()
        assert view.theme() is DARK
        assert view.graphics.backgroundBrush().color() == QColor(DARK.chart_background)
        assert results.plot_widget.backgroundBrush().color() == QColor(DARK.chart_background)
        assert all(QColor(label.opts["color"]) == QColor(DARK.chart_text) for _s, label in view.legend.items)
        finished = [item for item in view.bar_items() if item.name == "finished"]
        assert all(item.color == QColor(DARK.idle) for item in finished)
        assert DARK.banner_fill in window.banner.styleSheet()
        # the BLOCK table's frozen columns (a widget with a style sheet of its own) follow too
        table = window.block_view
        assert table.frozen.palette().color(QPalette.ColorRole.Base) == table.palette().color(QPalette.ColorRole.Base)
        assert is_dark(table.frozen.palette())
    finally:
        qapp.setPalette(saved)
        QApplication.processEvents()
    assert view.theme() is LIGHT
    assert view.graphics.backgroundBrush().color() == QColor(LIGHT.chart_background)
    assert LIGHT.banner_fill in window.banner.styleSheet()
