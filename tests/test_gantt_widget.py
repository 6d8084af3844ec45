"""GanttView on a real simulator trace: lanes, colour modes, zoom/culling, hover, click, highlights."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QMouseEvent, QWheelEvent  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from engine.pipeline.examples import tiled_mm_kernel  # noqa: E402
from engine.pipeline.simulator import simulate  # noqa: E402
from engine.pipeline.trace import STALL_CAUSES  # noqa: E402
from gui.gantt import GanttView  # noqa: E402


@pytest.fixture(scope="module")
def run():
    d = tiled_mm_kernel(tiles=2, blocks=4)     # 32 warps: one lane per warp
    r = simulate(d)
    return d, r.trace, [i.name for i in d.instructions], float(r.cycles)


@pytest.fixture
def view(qtbot, run):
    d, trace, names, cycles = run
    v = GanttView()
    qtbot.addWidget(v)
    v.resize(1200, 800)
    v.show()
    qtbot.waitExposed(v)
    v.set_trace(trace, names, None, cycles, d.subsystems)
    v.grab()                      # paints once: items cull and merge for this view
    return v


def _viewport_point(view: GanttView, x: float, y: float) -> QPoint:
    return view.graphics.mapFromScene(view.interaction.scene_point(x, y))


def _move(view: GanttView, point: QPoint) -> None:
    """A real mouse-move event through the graphics view. (QTest.mouseMove moves the platform
    cursor, which the offscreen platform turns into move events only some of the time.)
    pyqtgraph drops moves that come sooner than its mouse rate limit after the last one."""
    QTest.qWait(40)
    viewport = view.graphics.viewport()
    local = QPointF(point)
    event = QMouseEvent(QEvent.Type.MouseMove, local, viewport.mapToGlobal(local), Qt.MouseButton.NoButton,
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(viewport, event)


def test_lanes_items_and_legend(view, run):
    d, trace, names, cycles = run
    layout = view.layout_data
    assert layout is not None
    assert len(layout.lanes) == 1 + len(d.subsystems) + 32
    labels = [t[1] for t in view.plot.getAxis("left")._tickLevels[0]]
    assert labels[:5] == ["issue slots", "ALU (int/FP32)", "SFU", "LDST / memory", "barrier"]
    warp_labels = [t for t in labels if t.startswith("warp ")]
    # thinned out when lanes get shorter than a line of text, never dropped altogether
    assert warp_labels[0] == "warp 0" and len(warp_labels) >= 32 // 3
    assert set(warp_labels) <= {ln.label for ln in layout.lanes if ln.kind == "warp"}
    bars = sum(len(item) for item in view.bar_items())
    assert bars == 2 * len(trace.issues) + len(trace.stalls)     # issue lane + subsystem lane
    assert len(view.bar_items()) == 12 + len(np.unique(trace.stalls["cause"]))
    legend_labels = [label.text for _, label in view.legend.items if label.text]
    # each colour names the warps it shows (32 warps: three per colour)
    assert "warps 0, 12, 24" in legend_labels and "stall: memory dependency" in legend_labels
    assert view.time_axis.x_range()[1] >= cycles
    assert view.bars.drawn_rect_count() > 0


def test_color_mode_switch(view, run):
    d, trace, names, _ = run
    warp_items = {item.name for item in view.bar_items()}
    view.set_color_mode("class")
    assert view.color_mode() == "class" and view.coloring.mode_box.currentIndex() == 1
    class_items = {item.name for item in view.bar_items()}
    assert {"fma", "ld.shared", "ld.global", "bar"} <= class_items
    assert class_items != warp_items
    assert sum(len(i) for i in view.bar_items()) == 2 * len(trace.issues) + len(trace.stalls)
    view.coloring.mode_box.setCurrentIndex(0)            # the combo box drives the same switch
    assert view.color_mode() == "warp"
    with pytest.raises(ValueError):
        view.set_color_mode("rainbow")


def test_zoom_culls_and_merges(view, run, qtbot):
    full = view.bars.drawn_rect_count()
    total = sum(len(item) for item in view.bar_items())
    visible_full = sum(item.last_visible for item in view.bar_items())
    assert full < 0.8 * total, "zoomed out, sub-pixel bars must be merged"
    view.plot.getViewBox().setXRange(1000, 1100, padding=0)
    view.grab()
    x0, x1 = view.time_axis.x_range()
    assert (x0, x1) == pytest.approx((1000, 1100))
    visible = sum(item.last_visible for item in view.bar_items())
    assert 0 < visible < visible_full / 5
    assert view.bars.drawn_rect_count() <= visible
    y_before = view.plot.getViewBox().viewRange()[1]
    # the mouse wheel zooms the cycle axis only
    pos = QPointF(_viewport_point(view, 1050, 20.0))
    wheel = QWheelEvent(pos, view.graphics.viewport().mapToGlobal(pos), QPoint(0, 0), QPoint(0, 240),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase,
                        False)
    QApplication.sendEvent(view.graphics.viewport(), wheel)
    qtbot.wait(10)
    nx0, nx1 = view.time_axis.x_range()
    assert nx1 - nx0 < 100 and nx0 >= 1000 - 1e-6 and nx1 <= 1100 + 1e-6
    assert view.plot.getViewBox().viewRange()[1] == pytest.approx(y_before)
    view.fit()
    assert view.time_axis.x_range()[1] - view.time_axis.x_range()[0] > 3000


def test_hover_shows_stall_and_instruction(view, run, qtbot):
    d, trace, names, _ = run
    layout = view.layout_data
    k = next(i for i, ln in enumerate(layout.lanes) if ln.kind == "warp" and ln.warps == (5,))
    lane = layout.lanes[k]
    j = int(np.argmax(lane.x1 - lane.x0))          # the longest stall of warp 5
    x, y = (lane.x0[j] + lane.x1[j]) / 2, lane.y + lane.height / 2
    _move(view, _viewport_point(view, x, y))
    qtbot.waitUntil(lambda: view.interaction.hover_text != "", timeout=2000)
    rec = trace.stalls[lane.row[j]]
    assert view.interaction.hover_text.startswith(f"stall: {STALL_CAUSES[rec['cause']].replace('_', ' ')} · warp 5\n")
    assert f"{rec['start']:g} → {rec['end']:g}" in view.interaction.hover_text
    # an instruction bar in the ALU lane: zoom in so it is wide, then hover its middle
    alu = layout.lanes[1]
    j = len(alu) // 2
    view.plot.getViewBox().setXRange(alu.x0[j] - 2, alu.x1[j] + 2, padding=0)
    top, height = alu.bar_band(j)
    x, y = (alu.x0[j] + alu.x1[j]) / 2, top + height / 2
    _move(view, _viewport_point(view, x, y))
    qtbot.waitUntil(lambda: view.interaction.hover_text.count("\n") == 3, timeout=2000)
    lane_index, bar = view.interaction.bar_at(x, y)
    assert lane_index == 1 and alu.x0[bar] <= x <= alu.x1[bar]
    assert alu.sub_row[bar] == alu.sub_row[j]          # the bar of the row under the pointer
    rec = trace.issues[alu.row[bar]]
    assert view.interaction.hover_text == view.text.describe(1, bar)
    assert view.interaction.hover_text.startswith(names[rec["instr"]] + "\n")
    assert f"warp {rec['warp']} · block {rec['block']}" in view.interaction.hover_text
    assert f"issue {rec['issue']:g} → complete {rec['complete']:g}" in view.interaction.hover_text
    _move(view, QPoint(2, 2))     # off the plot: text goes away
    qtbot.waitUntil(lambda: view.interaction.hover_text == "", timeout=2000)


def test_click_emits_instruction_and_row(view, run, qtbot):
    d, trace, names, _ = run
    layout = view.layout_data
    ldst = next(i for i, ln in enumerate(layout.lanes) if ln.label.startswith("LDST"))
    lane = layout.lanes[ldst]
    wanted = names.index("ld.global.a")
    j = int(np.flatnonzero(trace.issues["instr"][lane.row] == wanted)[0])
    view.plot.getViewBox().setXRange(lane.x0[j] - 1, lane.x0[j] + 3, padding=0)
    top, height = lane.bar_band(j)
    x, y = lane.x0[j] + 0.3, top + height / 2
    hit = view.interaction.bar_at(x, y)
    assert hit is not None
    row = int(lane.row[hit[1]])
    got_instr: list[int] = []
    got_row: list[int] = []
    view.instructionClicked.connect(got_instr.append)
    view.barClicked.connect(got_row.append)
    with qtbot.waitSignals([view.instructionClicked, view.barClicked], timeout=2000):
        qtbot.mouseClick(view.graphics.viewport(), Qt.MouseButton.LeftButton,
                         pos=_viewport_point(view, x, y))
    assert got_instr == [int(trace.issues["instr"][row])] == [wanted]
    assert got_row == [row]
    assert lane.x0[hit[1]] <= x <= lane.x1[hit[1]]
    # a stall bar reports its stall row instead
    warp_lane = next(ln for ln in layout.lanes if ln.kind == "warp")
    view.fit()
    j = int(np.argmax(warp_lane.x1 - warp_lane.x0))
    x, y = (warp_lane.x0[j] + warp_lane.x1[j]) / 2, warp_lane.y + 0.5
    with qtbot.waitSignal(view.stallClicked, timeout=2000) as blocker:
        qtbot.mouseClick(view.graphics.viewport(), Qt.MouseButton.LeftButton,
                         pos=_viewport_point(view, x, y))
    assert blocker.args == [int(warp_lane.row[j])]


def test_highlights_and_clear(view, run):
    d, trace, names, _ = run
    view.highlight_range(1200, 900)
    assert view.highlighted_range() == pytest.approx((900, 1200))
    view.clear_highlight_range()
    assert view.highlighted_range() is None
    wanted = {names.index("bar.sync.1"), names.index("st.global.c")}
    view.highlight_instructions(wanted)
    n = int(np.isin(trace.issues["instr"], list(wanted)).sum())
    assert len(view.bars.highlight) == 2 * n         # issue-slot lane and subsystem lane
    view.grab()
    assert view.bars.highlight.last_drawn > 0
    view.highlight_instructions(set())
    assert view.bars.highlight is None
    view.clear()
    assert view.bar_items() == [] and view.layout_data is None
    assert view.interaction.bar_at(100, 5) is None
    view.grab()                                  # an empty view still paints


def test_empty_trace(qtbot, tmp_path):
    from engine.pipeline.trace import ISSUE_DTYPE, STALL_DTYPE, Trace
    from engine.timeline.chrome_export import export_chrome_trace
    from engine.timeline.csv_export import export_trace_csv

    trace = Trace(np.empty(0, ISSUE_DTYPE), np.empty(0, STALL_DTYPE))
    view = GanttView()
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.set_trace(trace, ["nop"], None, 0.0, ("alu",))
    view.grab()
    assert view.bar_items() == [] and view.bars.drawn_rect_count() == 0
    assert [ln.label for ln in view.layout_data.lanes] == ["issue slots", "ALU (int/FP32)"]
    assert view.interaction.bar_at(0.5, 1.0) is None
    assert export_trace_csv(trace, tmp_path / "e.csv", ["nop"]) == 0
    assert export_chrome_trace(trace, tmp_path / "e.json", ["nop"]) == 0
