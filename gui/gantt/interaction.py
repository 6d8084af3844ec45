"""The chart under the mouse: hovering a bar outlines it and shows its tooltip (in the scene, so
it follows the pointer), hovering a heat strip shows its bucket's shares, a click selects the
instruction (a stall: the one it holds back), a double-click fits the run, a right-click opens
the warp groups' menu."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QMenu

from gui.theme import Theme

if TYPE_CHECKING:
    from pyqtgraph.GraphicsScene.mouseEvents import MouseClickEvent

    from gui.gantt.widget import GanttView

HOVER_TOLERANCE_PX = 3.0      # a hover/click this close to a thin bar still hits it


class ChartInteraction:
    """Hover box, tooltip and the mouse handlers of one chart."""

    def __init__(self, chart: GanttView) -> None:
        self._chart = chart
        self.hover_text = ""          # the tooltip shown ("" when the pointer is off the bars)
        self.hover_box = QGraphicsRectItem()
        self.hover_box.setZValue(100)
        self.hover_box.hide()
        # The tooltip lives in the scene, not in a QToolTip window: it follows the pointer and
        # updates on every move, and a top-level popup would take the mouse events it covers.
        self.tip = pg.TextItem()
        self.tip.setZValue(200)
        self.tip.hide()

    def add_to(self, plot: pg.PlotItem) -> None:
        plot.addItem(self.hover_box, ignoreBounds=True)
        plot.addItem(self.tip, ignoreBounds=True)

    def listen(self, scene: pg.GraphicsScene) -> None:
        scene.sigMouseMoved.connect(self.on_mouse_moved)
        scene.sigMouseClicked.connect(self.on_mouse_clicked)

    def apply_theme(self, t: Theme) -> None:
        pen = QPen(QColor(t.hover_outline), 0)
        pen.setCosmetic(True)
        self.hover_box.setPen(pen)
        self.tip.setColor(t.chart_text)
        self.tip.fill = pg.mkBrush(*t.tip_fill)
        self.tip.border = pg.mkPen(t.tip_border)
        self.tip.update()

    def hide(self) -> None:
        """Hide the hover box and tooltip (the lanes moved under them)."""
        self.hover_box.hide()
        self.tip.hide()

    def reset(self) -> None:
        """No trace: nothing hovered (nothing reported either)."""
        self.hide()
        self.hover_text = ""

    def hide_tip(self) -> None:
        """The pointer left the chart: hide the tooltip and report that nothing is hovered."""
        self.hide()
        if self.hover_text:
            self.hover_text = ""
            self._chart.hovered.emit("")

    def bar_at(self, x: float, y: float) -> tuple[int, int] | None:
        """(lane index, bar index in that lane) under (x cycles, y layout units)."""
        layout = self._chart.layout_data
        if layout is None or layout.lane_at(y) is None:
            return None
        return self._bar_at_view(x, self._chart.lane_geometry.to_view_y(y))

    def _bar_at_view(self, x: float, vy: float) -> tuple[int, int] | None:
        """The bar under view point (x cycles, vy view pixels); in a collapsed group, the first
        of its lanes that has a bar there."""
        chart = self._chart
        layout = chart.layout_data
        if layout is None:
            return None
        vb = chart.plot.getViewBox()
        (v0, v1), _ = vb.viewRange()
        width = max(vb.width(), 1.0)
        tolerance = HOVER_TOLERANCE_PX * (v1 - v0) / width
        for lane, y in chart.lane_geometry.lanes_at_view_y(vy):
            hit = layout.bar_at(lane, x, tolerance, y=y)
            if hit is not None:
                return lane, hit
        return None

    def scene_point(self, x: float, y: float) -> QPointF:
        """Scene position of (x cycles, y layout units): lets callers synthesise mouse input."""
        point: QPointF = self._chart.plot.getViewBox().mapViewToScene(
            QPointF(x, self._chart.lane_geometry.to_view_y(y)))
        return point

    def hit(self, scene_pos: QPointF) -> tuple[int, int] | None:
        vb = self._chart.plot.getViewBox()
        if self._chart.layout_data is None or not vb.sceneBoundingRect().contains(scene_pos):
            return None
        p = vb.mapSceneToView(scene_pos)
        return self._bar_at_view(p.x(), p.y())

    def on_mouse_moved(self, scene_pos: QPointF) -> None:
        if self._show_heat_tip(scene_pos):
            return
        chart = self._chart
        hit = self.hit(scene_pos)
        if hit is None:
            if self.hover_text:
                self.hover_text = ""
                self.hide()
                chart.hovered.emit("")
            return
        layout = chart.layout_data
        assert layout is not None
        lane_index, bar = hit
        lane = layout.lanes[lane_index]
        text = chart.text.describe(lane_index, bar)
        x0, x1 = float(lane.x0[bar]), float(lane.x1[bar])
        top, height = lane.bar_band(bar)
        geometry = chart.lane_geometry
        scale = geometry.lane_h[lane_index] / lane.height
        top, height = geometry.lane_top[lane_index] + (top - lane.y) * scale, height * scale
        self.hover_box.setRect(QRectF(x0, top + 0.05 * height, max(x1 - x0, 1e-9), 0.9 * height))
        self.hover_box.show()
        self._place_tip(chart.plot.getViewBox().mapSceneToView(scene_pos), text)

    def _place_tip(self, p: QPointF, text: str) -> None:
        """Show ``text`` as the tooltip at view point ``p``."""
        (v0, v1), (w0, w1) = self._chart.plot.getViewBox().viewRange()
        # open towards the middle of the view so the box is never cut off at an edge
        self.tip.setAnchor((1.0 if p.x() > (v0 + v1) / 2 else -0.02, 1.05 if p.y() > (w0 + w1) / 2 else -0.15))
        self.tip.setPos(p)
        if text != self.hover_text:
            self.hover_text = text
            self.tip.setText(text)
            self._chart.hovered.emit(text)
        self.tip.show()

    def _show_heat_tip(self, scene_pos: QPointF) -> bool:
        """Over a collapsed group's heat strip: its bucket's shares as the tooltip."""
        chart = self._chart
        vb = chart.plot.getViewBox()
        if chart.layout_data is None or not chart.heat.strips.bands or not vb.sceneBoundingRect().contains(scene_pos):
            return False
        p = vb.mapSceneToView(scene_pos)
        text = chart.heat.text_at(p.x(), p.y())
        if text is None:
            return False
        self.hover_box.hide()
        self._place_tip(p, text)
        return True

    def group_at(self, scene_pos: QPointF) -> str | None:
        """Label of the warp group under a scene point (on its lanes or their axis labels)."""
        chart = self._chart
        if chart.layout_data is None:
            return None
        vy = chart.plot.getViewBox().mapSceneToView(scene_pos).y()
        for k, _ in chart.lane_geometry.lanes_at_view_y(vy):
            for group in chart.groups.all:
                if k in group.lanes:
                    return group.label
        return None

    def _group_menu(self, scene_pos: QPointF, screen_pos: QPoint) -> None:
        chart = self._chart
        groups = chart.groups
        menu = QMenu(chart)
        label = self.group_at(scene_pos)
        if label is not None:
            collapsed = label in groups.collapsed
            action = menu.addAction(f"{'Expand' if collapsed else 'Collapse'} {label}")
            action.triggered.connect(lambda: groups.set_group_collapsed(label, not collapsed))
            menu.addAction(f"Hide {label}").triggered.connect(lambda: groups.set_group_hidden(label, True))
            menu.addAction(f"Show only {label}").triggered.connect(lambda: groups.show_only_group(label))
        menu.addAction("Collapse every warp group").triggered.connect(lambda: groups.set_all_collapsed(True))
        menu.addAction("Expand every warp group").triggered.connect(lambda: groups.set_all_collapsed(False))
        if groups.hidden:
            menu.addAction("Show every warp group").triggered.connect(lambda: groups.set_hidden_groups(set()))
        menu.addSeparator()
        menu.addAction("Fit the whole run").triggered.connect(chart.fit)
        menu.popup(screen_pos)

    def on_mouse_clicked(self, event: MouseClickEvent) -> None:
        chart = self._chart
        if event.button() == Qt.MouseButton.RightButton:
            self._group_menu(event.scenePos(), event.screenPos().toPoint())
            return
        if event.button() != Qt.MouseButton.LeftButton:
            return
        if event.double():
            chart.fit()
            return
        hit = self.hit(event.scenePos())
        trace, layout = chart.trace, chart.layout_data
        if hit is None or trace is None or layout is None:
            return
        lane_index, bar = hit
        lane = layout.lanes[lane_index]
        row = int(lane.row[bar])
        if lane.source == "stalls":
            chart.stallClicked.emit(row)
            waited = chart.text.waited_instruction(row)
            if waited is not None:          # a stall selects the instruction it holds back
                chart.instructionClicked.emit(waited)
        else:
            chart.barClicked.emit(row)
            chart.instructionClicked.emit(int(trace.issues["instr"][row]))
