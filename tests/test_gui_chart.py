"""Chart details (issue 15 D): time axis in cycles or µs, colour by block, legends that name what
they show, stall colours apart from the data colours, stall bars that name and select the
instruction they wait on, zoom and fit keys in the View menu."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QColor

from engine.pipeline.trace import STALL_CAUSES
from gui.gantt.colors import DATA_PALETTE, STALL_PALETTE
from tests.test_gui_support import make_window


@pytest.fixture()
def window(qtbot, tmp_path, monkeypatch):
    return make_window(qtbot, tmp_path, monkeypatch)


def view_menu(window):
    return next(a for a in window.menuBar().actions() if a.text() == "&View").menu()


def test_time_axis_cycles_or_microseconds(window):
    view = window.gantt.view
    clock = window.session.result.clock_mhz
    assert clock > 0 and view.time_axis.clock_mhz() == clock
    axis = view.plot.getAxis("bottom")
    assert view.time_axis.unit() == "cycles" and axis.scale == 1.0
    toggle = next(a for a in view_menu(window).actions() if a.shortcut().toString() == "Ctrl+U")
    toggle.trigger()
    assert view.time_axis.unit() == "us" and axis.scale == pytest.approx(1.0 / clock)
    assert "µs" in axis.labelText
    assert view.time_axis.unit_box.currentText() == "µs"
    view.time_axis.unit_box.setCurrentIndex(0)
    assert view.time_axis.unit() == "cycles" and axis.scale == 1.0


def test_colour_by_block_and_legends_name_their_ids(window):
    view = window.gantt.view
    trace = view.trace
    view.set_color_mode("block")
    assert view.coloring.mode_box.currentText() == "colour by block"
    blocks = np.unique(trace.issues["block"])
    data = [item for item in view.bar_items() if not item.name.startswith(tuple(STALL_PALETTE))]
    names = {item.name for item in view.bar_items()}
    assert "blocks 0, 12" in names or "block 0" in names
    issued = sum(len(item) for item in data if item.name.startswith("block"))
    assert issued == 2 * len(trace.issues)        # issue-slot lane + subsystem lane per issue
    legend = [label.text for _, label in view.legend.items if label.text]
    assert not any("mod" in text for text in legend)
    for item in data:
        if item.name.startswith("block"):
            ids = [int(t) for t in item.name.split(" ", 1)[1].replace("…", "").replace(",", " ").split()]
            assert all(b in blocks and b % 12 == ids[0] % 12 for b in ids)
    view.set_color_mode("warp")
    assert any(t.startswith("warps 0, 12, 24") for t in legend + [i.name for i in view.bar_items()])


def test_stall_colours_are_not_data_colours():
    def rgb(c: str) -> np.ndarray:
        q = QColor(c)
        return np.array([q.red(), q.green(), q.blue()], float)

    for stall in STALL_PALETTE.values():
        for data in DATA_PALETTE:
            assert np.linalg.norm(rgb(stall) - rgb(data)) > 60, (stall, data)


def test_stall_names_and_selects_the_instruction_it_waits_on(window, qtbot):
    view = window.gantt.view
    trace = view.trace
    memory = STALL_CAUSES.index("memory_dependency")
    lanes = view.layout_data.lanes

    def drawn_on_top(row: int) -> bool:
        # a collapsed group shows the first of its lanes with a bar at a point: the stall
        # clicked must be the one drawn there
        k = next((k for k, ln in enumerate(lanes) if ln.source == "stalls" and row in ln.row), None)
        if k is None:
            return False
        b = int(np.flatnonzero(lanes[k].row == row)[0])
        x = float((lanes[k].x0[b] + lanes[k].x1[b]) / 2)
        view.plot.getViewBox().setXRange(lanes[k].x0[b] - 2, lanes[k].x1[b] + 2, padding=0)
        return view.interaction.hit(view.interaction.scene_point(x, lanes[k].y + lanes[k].height / 2)) == (k, b)

    stall_row = next(int(r) for r in np.flatnonzero(trace.stalls["cause"] == memory) if drawn_on_top(int(r)))
    rec = trace.stalls[stall_row]
    waited = view.text.waited_instruction(stall_row)
    # its warp's first issue once the stall is over (other waits may come in between)
    mine = trace.issues[trace.issues["warp"] == rec["warp"]]
    nxt = mine[np.argmin(np.where(mine["issue"] >= rec["end"] - 1e-9, mine["issue"], np.inf))]
    assert waited == int(nxt["instr"]) and float(nxt["issue"]) >= float(rec["end"]) - 1e-9
    lane_index = next(k for k, ln in enumerate(view.layout_data.lanes)
                      if ln.source == "stalls" and stall_row in ln.row)
    bar = int(np.flatnonzero(view.layout_data.lanes[lane_index].row == stall_row)[0])
    text = view.text.describe(lane_index, bar)
    assert f"waits to issue #{waited + 1}: " in text and "memory dependency" in text
    assert "_Z14calculate" not in text, "parameter symbols are shortened"
    clicked = []
    view.instructionClicked.connect(clicked.append)
    lane = view.layout_data.lanes[lane_index]
    x = float((lane.x0[bar] + lane.x1[bar]) / 2)
    view.plot.getViewBox().setXRange(lane.x0[bar] - 2, lane.x1[bar] + 2, padding=0)

    class Click:
        def button(self):
            from PySide6.QtCore import Qt
            return Qt.MouseButton.LeftButton

        def double(self):
            return False

        def scenePos(self):
            return view.interaction.scene_point(x, lane.y + lane.height / 2)

    view.interaction.on_mouse_clicked(Click())
    assert clicked == [waited]
    selected = window.block_view.selectionModel().selectedRows()
    assert [window.block_view.model_.rows[i.row()].index for i in selected] == [waited + 1]


def test_zoom_and_fit_keys_in_the_view_menu(window):
    actions = {a.text(): a for a in view_menu(window).actions()}
    keys = {text: a.shortcut().toString() for text, a in actions.items()}
    assert keys["Zoom &in (timeline)"] == "Ctrl+=" and keys["Zoom &out (timeline)"] == "Ctrl+-"
    assert keys["&Fit the whole run"] == "Ctrl+0"
    view = window.gantt.view
    x0, x1 = view.time_axis.x_range()
    actions["Zoom &in (timeline)"].trigger()
    z0, z1 = view.time_axis.x_range()
    assert z1 - z0 == pytest.approx((x1 - x0) / 2)
    actions["&Fit the whole run"].trigger()
    assert view.time_axis.x_range() == pytest.approx((x0, x1))
