"""Window layout (issue 15 A–C): fits the screen, the chart's lanes keep a readable height, panel
widths stay put, the layout is saved and restored, the BLOCK table's frozen columns, the Source
tab's centring, the redo keys, stale errors after an undo and the chart's tooltip on leaving."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QSettings, QSize, Qt
from PySide6.QtGui import QAction, QFontMetrics, QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

import gui.main_window as main_window_module
from engine.evaluation.verdict import OUTSIDE
from engine.timeline.lanes import lane_group
from gui.gantt.lane_geometry import DEFAULT_LANE_PX, ISSUE_LANE_SHARE
from gui.models.block_table import FROZEN_KEYS, KEYS
from gui.window.layout_keeper import WindowLayout
from tests.test_gui_support import axis_labels, make_window, overlapping_labels, wait_complete


@pytest.fixture()
def window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(WindowLayout, "_available", lambda self: QSize(1366, 768))
    return make_window(qtbot, tmp_path, monkeypatch)


def settle(qtbot, window) -> None:
    qtbot.wait(50)      # the zero timers that size docks and splitters
    QApplication.processEvents()


def test_window_fits_a_1366x768_screen_with_nothing_clipped(window, qtbot):
    settle(qtbot, window)
    assert window.width() <= int(1366 * 0.9) and window.height() <= int(768 * 0.9)
    hint = window.minimumSizeHint()
    assert hint.width() <= 1366 and hint.height() <= 768
    window.resize(1366, 768)
    settle(qtbot, window)
    # compact screen: inputs and results share one tabbed dock, so the centre keeps its width
    assert window.tabifiedDockWidgets(window.inputs_dock) == [window.results_dock]
    for dock in (window.inputs_dock, window.results_dock):
        dock.raise_()
        settle(qtbot, window)
        assert dock.widget().width() >= dock.widget().minimumSizeHint().width(), dock.windowTitle()
    assert window.block_view.width() >= 300 and window.gantt.view.graphics.height() >= 250
    assert window.gantt.width() >= 600
    # the issue and subsystem lanes keep their pixel height above 64 warp lanes
    view = window.gantt.view
    lanes = view.layout_data.lanes
    for k, lane in enumerate(lanes):
        if lane_group(lane.kind).major:
            expected = DEFAULT_LANE_PX * (ISSUE_LANE_SHARE if lane.kind == "issue" else 1.0)
            assert view.lane_geometry.lane_band_px(k)[1] == pytest.approx(expected)
    top, height = view.lane_geometry.lane_band_px(len(lanes) - 1)
    assert top + height <= view.plot.getViewBox().height() + 1


def test_lanes_resize_and_warp_groups_collapse(window, qtbot):
    window.resize(1366, 768)
    window.chart_split.setSizes([150, 600])
    settle(qtbot, window)
    view = window.gantt.view
    lanes = view.layout_data.lanes
    sub = next(k for k, ln in enumerate(lanes) if ln.kind == "subsystem")
    view.lane_spin.setValue(40)
    assert view.lane_geometry.lane_band_px(sub)[1] == pytest.approx(40)
    groups = view.groups.warp_groups()
    # hotspot: 120 warps share 64 slot lanes, grouped by a block's worth (8) of slots
    assert len(groups) == 8 and all(len(g) == 8 for _, g in groups)
    label, members = groups[2]
    expanded_height = view.lane_geometry.lane_band_px(members[0])[1]
    view.groups.set_group_collapsed(label, True)
    bands = {view.lane_geometry.lane_band_px(k) for k in members}
    assert len(bands) == 1, "a collapsed group's lanes share one strip"
    # the other groups got the height back
    other = groups[0][1][0]
    assert view.lane_geometry.lane_band_px(other)[1] > expanded_height
    # a stall in the collapsed strip is still found by hover/click hit testing
    lane = lanes[members[0]]
    j = len(lane) // 2
    x = float((lane.x0[j] + lane.x1[j]) / 2)
    hit = view.interaction.bar_at(x, lane.y + lane.height / 2)
    assert hit is not None and hit[0] in members
    view.groups.set_all_collapsed(True)
    assert view.groups.collapsed_groups() == {g for g, _ in groups}
    view.groups.collapse_box.setChecked(False)
    assert view.groups.collapsed_groups() == set()


def test_thin_warp_lanes_collapse_until_the_user_chooses(window, qtbot):
    # 64 slot lanes under the subsystem lanes at 1366x768 got about 1.3 px each
    from gui.gantt.warp_groups import AUTO_COLLAPSE_PX

    window.resize(1366, 768)
    window.chart_split.setSizes([500, 250])
    settle(qtbot, window)
    view = window.gantt.view
    assert view.groups.collapse_is_automatic()
    labels = {label for label, _ in view.groups.warp_groups()}
    assert view.lane_geometry.warp_lanes_too_thin()
    assert view.groups.collapsed_groups() == labels and view.groups.collapse_box.isChecked()
    assert "Now automatic" in view.groups.collapse_box.toolTip()
    # more room: expanded again, by itself
    window.chart_split.setSizes([60, 2000])
    window.resize(1900, 1200)
    settle(qtbot, window)
    assert not view.lane_geometry.warp_lanes_too_thin(), view.graphics.height()
    assert view.groups.collapsed_groups() == set() and not view.groups.collapse_box.isChecked()
    warp = next(k for k, ln in enumerate(view.layout_data.lanes) if not lane_group(ln.kind).major)
    assert view.lane_geometry.lane_band_px(warp)[1] >= AUTO_COLLAPSE_PX
    # the user's choice holds from then on, whatever the size
    view.groups.collapse_box.click()      # collapse, then expand: as a user would
    assert view.groups.collapsed_groups() == labels
    view.groups.collapse_box.click()
    assert not view.groups.collapse_is_automatic() and "automatic" not in view.groups.collapse_box.toolTip()
    window.chart_split.setSizes([500, 250])
    window.resize(1366, 768)
    settle(qtbot, window)
    assert view.groups.collapsed_groups() == set()
    # View > Reset layout goes back to the automatic choice
    view.groups.set_collapse_auto()
    assert view.groups.collapse_is_automatic()
    assert view.groups.collapse_box.isChecked() == view.lane_geometry.warp_lanes_too_thin()


def test_panel_widths_stay_put_after_edits(window, qtbot):
    settle(qtbot, window)
    before = (window.inputs_dock.width(), window.results_dock.width(), window.table_split.sizes(),
              window.chart_split.sizes(), window.inputs_panel.kernel_combo.width())
    model = window.block_view.model_
    row = next(k for k, r in enumerate(model.rows) if r.is_global_access and r.lat_comm > 0)
    model.setData(model.index(row, KEYS.index("lat_comm")), "2000")
    wait_complete(qtbot, window)
    window.inputs_panel.occupancy.spin.setValue(3)
    wait_complete(qtbot, window)
    window.results_dock.raise_()
    wait_complete(qtbot, window)
    settle(qtbot, window)
    after = (window.inputs_dock.width(), window.results_dock.width(), window.table_split.sizes(),
             window.chart_split.sizes(), window.inputs_panel.kernel_combo.width())
    assert after == before
    # the kernel box holds the demangled name, the mangled one on hover
    combo = window.inputs_panel.kernel_combo
    assert combo.currentText().startswith("calculate_temp(") and "_Z" in combo.toolTip()


def test_layout_saved_restored_and_reset(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(WindowLayout, "_available", lambda self: QSize(1920, 1080))
    first = make_window(qtbot, tmp_path, monkeypatch, open_sample=False)
    settle(qtbot, first)
    # a big screen: inputs left, results right
    assert first.dockWidgetArea(first.inputs_dock) == Qt.DockWidgetArea.LeftDockWidgetArea
    assert first.dockWidgetArea(first.results_dock) == Qt.DockWidgetArea.RightDockWidgetArea
    first.resize(1500, 900)
    first.chart_split.setSizes([200, 600])
    first.table_split.setSizes([700, 300])
    first.gantt.view.lane_spin.setValue(33)
    first.block_view.set_column_visible("p", False)
    first.block_view.horizontalHeader().moveSection(KEYS.index("cuda_line"), 2)
    first.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, first.inputs_dock)
    settle(qtbot, first)
    qtbot.waitUntil(lambda: not first.window_layout.saver.isActive(), timeout=3000)   # saved by itself
    saved_columns = first.block_view.visible_columns()
    first.close()
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    assert settings.value("layout/geometry") is not None

    second = main_window_module.MainWindow(settings)
    qtbot.addWidget(second)
    second.show()
    settle(qtbot, second)
    # (the offscreen screen is 800 x 600, so Qt fits the restored geometry to it: the splitters
    # keep their proportions)
    top, chart = second.chart_split.sizes()
    left, right = second.table_split.sizes()
    assert top / (top + chart) == pytest.approx(0.25, abs=0.05)
    assert left / (left + right) == pytest.approx(0.7, abs=0.05)
    assert second.block_view.visible_columns() == saved_columns
    assert second.block_view.visible_columns()[:3] == ["inst", "text", "cuda_line"]
    assert "p" not in second.block_view.visible_columns()
    assert second.gantt.view.lane_height() == 33
    assert second.dockWidgetArea(second.inputs_dock) == Qt.DockWidgetArea.RightDockWidgetArea

    reset = next(a for a in second.menuBar().actions() if a.text() == "&View").menu().actions()
    next(a for a in reset if a.text() == "&Reset layout").trigger()
    settle(qtbot, second)
    assert second.dockWidgetArea(second.inputs_dock) == Qt.DockWidgetArea.LeftDockWidgetArea
    assert second.gantt.view.lane_height() == DEFAULT_LANE_PX
    assert second.block_view.visible_columns() == list(KEYS)
    top, chart = second.chart_split.sizes()
    assert chart > top, "the chart gets the larger share"
    monkeypatch.setattr(second, "confirm_discard", lambda: True)


def test_frozen_columns_editable_columns_next_and_row_numbers(window, qtbot):
    table = window.block_view
    assert table.visible_columns()[:5] == ["inst", "text", "lat_comp", "lat_comm", "n_ma"]
    frozen = table.frozen
    shown = [KEYS[c] for c in range(len(KEYS)) if not frozen.isColumnHidden(c)]
    assert shown == list(FROZEN_KEYS)
    table.resize(420, 300)
    settle(qtbot, table)
    table.horizontalScrollBar().setValue(table.horizontalScrollBar().maximum())
    settle(qtbot, table)
    assert table.horizontalScrollBar().maximum() > 0
    # the overlay stays at the left edge, as wide as the two columns, over the scrolled table
    assert frozen.isVisible() and frozen.x() == table.frameWidth()
    assert frozen.width() == table.frozen_width() > 0
    # scrolling to an editable cell leaves it right of the frozen pair
    index = table.model_.index(60, KEYS.index("lat_comp"))
    table.scrollTo(index)
    assert table.visualRect(index).left() >= table.frozen_width()
    # rows line up in both views
    table.verticalScrollBar().setValue(40)
    assert frozen.verticalScrollBar().value() == 40
    assert frozen.rowAt(5) == table.rowAt(5)
    # selection is shared
    table.select_instruction(100)
    assert {i.row() for i in frozen.selectionModel().selectedRows()} == {table.model_.row_of_instruction(100)}
    # three-digit numbers fit in "#", bold (overridden cells are bold) included
    font = table.font()
    font.setBold(True)
    widest = str(max(r.index for r in table.model_.rows))
    assert len(widest) >= 3
    assert table.columnWidth(KEYS.index("inst")) >= QFontMetrics(font).horizontalAdvance(widest) + 8


def test_source_line_centred_when_the_tab_is_shown(window, qtbot):
    window.resize(1366, 768)
    window.side_tabs.setCurrentWidget(window.superstep_view)    # Source hidden, as after a Gantt click
    window.block_view.select_instruction(120)
    window.side_tabs.setCurrentWidget(window.source_panel)
    settle(qtbot, window)
    ptx = window.source_panel.ptx
    line = window.block_view.model_.rows[window.block_view.model_.row_of_instruction(120)].location.line
    assert ptx.highlighted == [line]
    rect = ptx.cursorRect(ptx.textCursor())
    assert ptx.textCursor().blockNumber() == line - 1
    height = ptx.viewport().height()
    assert 0 <= rect.top() and rect.bottom() <= height
    assert abs(rect.center().y() - height / 2) <= ptx.fontMetrics().lineSpacing() * 2
    # with the tab shown, a click in the chart centres its line as well
    window.gantt.instructionClicked.emit(30)
    settle(qtbot, window)
    rect = ptx.cursorRect(ptx.textCursor())
    assert abs(rect.center().y() - height / 2) <= ptx.fontMetrics().lineSpacing() * 2


def _key(window, sequence: str) -> None:
    key = QKeySequence(sequence)[0]
    QTest.keyClick(window.block_view, key.key(), key.keyboardModifiers())


def test_redo_keys_and_stale_errors_cleared_by_undo(window, qtbot):
    shortcuts = [s.toString() for s in window.redo_action.shortcuts()]
    assert shortcuts == ["Ctrl+Shift+Z", "Ctrl+Y"]
    window.activateWindow()
    window.block_view.setFocus()
    ambiguous = []
    for action in window.findChildren(QAction):
        keys = {s.toString() for s in action.shortcuts()}
        if keys & {"Ctrl+Shift+Z", "Ctrl+Y"} and action is not window.redo_action:
            ambiguous.append(action.text())
    assert not ambiguous
    model = window.block_view.model_
    row = next(k for k, r in enumerate(model.rows) if r.is_global_access and r.lat_comm > 0)
    model.setData(model.index(row, KEYS.index("lat_comm")), "1500")
    wait_complete(qtbot, window)
    edited = window.session.state
    for redo in ("Ctrl+Shift+Z", "Ctrl+Y"):
        _key(window, "Ctrl+Z")
        assert window.session.state != edited
        window.show_error("Row 3: stale complaint")
        assert window.banner.isVisibleTo(window)
        _key(window, redo)
        assert window.session.state == edited, redo
        assert not window.banner.isVisibleTo(window), "an undo/redo clears the stale error"
    wait_complete(qtbot, window)


def test_chart_tooltip_hides_when_the_pointer_leaves(window, qtbot):
    view = window.gantt.view
    i, lane = next((i, ln) for i, ln in enumerate(view.layout_data.lanes) if ln.kind == "subsystem" and len(ln))
    j = len(lane) // 2
    # the bar's middle where the chart draws it (lanes are drawn scaled when many share the height)
    top, height = lane.bar_band(j)
    scale = view.lane_geometry.lane_h[i] / lane.height
    x, y = float((lane.x0[j] + lane.x1[j]) / 2), view.lane_geometry.lane_top[i] + (top - lane.y + height / 2) * scale
    view.plot.getViewBox().setXRange(lane.x0[j] - 5, lane.x1[j] + 5, padding=0)
    view.interaction.on_mouse_moved(view.interaction.scene_point(x, y))
    assert view.interaction.hover_text and view.interaction.tip.isVisible()
    QApplication.sendEvent(view, QEvent(QEvent.Type.Leave))
    assert view.interaction.hover_text == "" and not view.interaction.tip.isVisible()


def test_occupancy_plot_legend_outside_and_integer_ticks(window, qtbot):
    panel = window.results_panel
    legend_rect = panel.legend.sceneBoundingRect()
    plot_rect = panel.plot.getViewBox().sceneBoundingRect()
    assert not legend_rect.intersects(plot_rect)
    assert len(panel.legend.items) == len(panel.curves)
    ticks = panel.plot.getAxis("bottom").tickValues(1, 8, 300)
    assert all(float(v).is_integer() for _, values in ticks for v in values)
    empty = type(panel)(window.session)
    qtbot.addWidget(empty)
    (x0, x1), (y0, y1) = empty.plot.getViewBox().viewRange()
    assert x0 > 0 and x1 < 10 and y0 >= 2 and y1 <= 6
    assert np.isfinite([x0, x1, y0, y1]).all()


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_occupancy_axes_labels_readable_at_both_sizes(qtbot, tmp_path, monkeypatch, size):
    """The log-scale cycle labels of the curves never print over each other (pyqtgraph labels
    every 1…9 × 10^k when the range spans under a few decades), there are enough of them to read
    the curves, and the blocks axis shows whole numbers only, also for 32 blocks per SM in a
    narrow dock."""
    monkeypatch.setattr(WindowLayout, "_available", lambda self: QSize(*size))
    window = make_window(qtbot, tmp_path, monkeypatch)
    window.resize(*size)
    panel = window.results_panel
    window.results_dock.show()
    window.results_dock.raise_()
    panel.tabs.setCurrentWidget(panel.plot_widget)
    settle(qtbot, window)
    left, bottom = panel.plot.getAxis("left"), panel.plot.getAxis("bottom")
    labels = axis_labels(left)
    assert not overlapping_labels(labels), [t for _, t in labels]
    assert len(labels) >= 3, [t for _, t in labels]
    # the labels are the values at their ticks: 10k, 20k, 300k (hotspot: 9,000 to 310,000 cycles)
    values = [float(t[:-1]) * 1000 for _, t in labels if t.endswith("k")]
    assert len(values) == len(labels) and values == sorted(values)
    (_, _), (y0, y1) = panel.plot.getViewBox().viewRange()
    assert all(10 ** y0 <= v <= 10 ** y1 for v in values)
    # the axis title fits the plot's height
    assert left.label.boundingRect().width() <= panel.plot.getViewBox().height() + 1
    ticks = axis_labels(bottom)
    assert [t for _, t in ticks] == [str(k) for k in range(1, 9)]
    # the mm sample's two blocks: 1 and 2, not 1.0, 1.5, 2.0
    panel.plot.getViewBox().setRange(xRange=(0.7, 2.3), padding=0)
    settle(qtbot, window)
    assert [t for _, t in axis_labels(bottom)] == ["1", "2"]
    # 32 resident blocks in a dock 320 pixels wide: whole numbers, apart
    panel.plot_widget.resize(320, panel.plot_widget.height())
    panel.plot.getViewBox().setRange(xRange=(0.7, 32.3), yRange=(3.9, 4.1), padding=0)
    settle(qtbot, window)
    ticks = axis_labels(bottom)
    assert len(ticks) >= 3 and not overlapping_labels(ticks)
    assert all(t.isdigit() for _, t in ticks)
    # a fifth of a decade (10k to 12.6k cycles) still gets several round labels
    labels = axis_labels(left)
    assert len(labels) >= 2 and not overlapping_labels(labels), [t for _, t in labels]


def test_pinned_baseline_on_a_small_screen_keeps_lane_labels_apart(window, qtbot):
    """1366 x 768 with a baseline pinned and an error shown: two charts share the height, the
    lanes are squeezed, and a lane label that would print over its neighbour is left out; the
    baseline chart has no toolbar or time axis of its own (it follows the current chart's)."""
    window.resize(1366, 768)
    settle(qtbot, window)
    assert window.pin_baseline()
    model = window.block_view.model_
    row = next(k for k, r in enumerate(model.rows) if r.is_global_access and r.lat_comm > 0)
    model.setData(model.index(row, KEYS.index("lat_comm")), "2000")
    wait_complete(qtbot, window)
    window.show_error("Row 3: a refused value")
    settle(qtbot, window)
    gantt = window.gantt
    base, view = gantt.baseline_view, gantt.view
    assert base.trace is not None and not base.toolbar.isVisible()
    assert not base.plot.getAxis("bottom").isVisible()
    for chart in (base, view):
        labels = axis_labels(chart.plot.getAxis("left"))
        assert not overlapping_labels(labels), [t for _, t in labels]
        assert labels and labels[0][1] == "issue slots"
    # the two charts' lanes get about the same room
    ratio = base.plot.getViewBox().height() / view.plot.getViewBox().height()
    assert 0.6 < ratio < 1.4, ratio
    # the captions end in "…" rather than being cut, with the whole text on hover
    caption = gantt.caption
    assert caption.is_elided() and caption.shown_text().endswith("…")
    assert caption.text() in caption.toolTip() and "_Z" in caption.toolTip()
    # the baseline follows the current chart's colour mode, time unit and collapsed warps
    view.set_color_mode("class")
    view.time_axis.set_unit("us")
    view.groups.collapse_box.setChecked(True)
    assert base.color_mode() == "class" and base.time_axis.unit() == "us"
    assert base.groups.collapsed_groups() == {label for label, _ in base.groups.warp_groups()}


def test_warp_groups_can_be_filtered_out(window, qtbot, tmp_path):
    window.resize(1366, 768)
    window.chart_split.setSizes([150, 600])
    settle(qtbot, window)
    view = window.gantt.view
    groups = view.groups.warp_groups()
    label, members = groups[1]
    other = groups[0][1][0]
    before = view.lane_geometry.lane_band_px(other)[1]
    view.groups.set_group_hidden(label, True)
    assert all(view.lane_geometry.lane_band_px(k)[1] == 0 for k in members)
    assert view.lane_geometry.lane_band_px(other)[1] > before, "the groups shown get its height"
    assert view.groups.groups_button.text() == f"warps: {len(groups) - 1} of {len(groups)}"
    assert label not in [t for _, t in axis_labels(view.plot.getAxis("left"))]
    lane = view.layout_data.lanes[members[0]]
    j = len(lane) // 2
    hit = view.interaction.bar_at(float((lane.x0[j] + lane.x1[j]) / 2), lane.y + lane.height / 2)
    assert hit is None or hit[0] not in members, "a hidden lane is never hovered or clicked"
    # collapsed and hidden: no heat strip either
    view.groups.set_group_collapsed(label, True)
    assert len(view.heat.strips.bands) == 0
    view.groups.show_only_group(label)
    assert view.groups.hidden_groups() == {g for g, _ in groups} - {label}
    assert len(view.heat.strips.bands) == 1
    # the filter survives the next trace (an edit) and goes into exports
    model = window.block_view.model_
    row = next(k for k, r in enumerate(model.rows) if r.is_global_access and r.lat_comm > 0)
    model.setData(model.index(row, KEYS.index("lat_comm")), "2000")
    wait_complete(qtbot, window)
    assert view.groups.hidden_groups() == {g for g, _ in groups} - {label}
    svg = window.exports.timeline(tmp_path / "filtered.svg", 1200, 700)
    text = svg.read_text()
    assert label in text and groups[0][0] not in text
    # the toolbar's menu lists every group, checked when shown, and shows them all again
    view.groups.fill_menu()
    actions = {a.text(): a for a in view.groups.menu.actions() if a.text()}
    assert [a.isChecked() for t, a in actions.items() if t in dict(groups)] == [g == label for g, _ in groups]
    actions["Show every warp group"].trigger()
    assert view.groups.hidden_groups() == set() and view.groups.groups_button.text() == "warps: all"


def test_bottleneck_bars_keep_their_labels_apart_at_1366x768(window, qtbot):
    """The Bottleneck tab's bar chart in the compact dock of a 1366 x 768 screen: a label per bar,
    none over another (the tab scrolls rather than squeeze them)."""
    window.resize(1366, 768)
    panel = window.results_panel
    window.results_dock.raise_()
    panel.tabs.setCurrentWidget(panel.verdict)
    qtbot.waitUntil(lambda: panel.verdict.verdict is not None, timeout=5000)
    settle(qtbot, window)
    verdict = panel.verdict.verdict
    bars = len(verdict.units) + sum(1 for c in verdict.causes if c.cause not in OUTSIDE)
    labels = axis_labels(panel.verdict.chart.getAxis("left"))
    assert len(labels) == bars and not overlapping_labels(labels), [t for _, t in labels]
