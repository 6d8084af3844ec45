"""``GanttView``: the simulator's trace as a per-subsystem / per-warp Gantt chart.

All placement comes from :func:`engine.timeline.layout.layout_trace`; this widget only draws it (one
:class:`BarsItem` per colour), zooms/pans the cycle axis (the lanes stay fixed), and maps
hovers and clicks back to trace rows. It coordinates one object per concern, each in its own
module: the time axis (:mod:`~gui.gantt.time_axis`), the colouring (:mod:`~gui.gantt.coloring`),
the warp groups (:mod:`~gui.gantt.warp_groups`), the lane geometry (:mod:`~gui.gantt.lane_geometry`)
and labels (:mod:`~gui.gantt.lane_labels`), the bar items (:mod:`~gui.gantt.item_builder`), the heat
strips (:mod:`~gui.gantt.heat_layer`), the tooltip texts (:mod:`~gui.gantt.bar_text`) and the mouse
(:mod:`~gui.gantt.interaction`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Signal
from PySide6.QtWidgets import QGraphicsItem, QHBoxLayout, QPushButton, QSpinBox, QVBoxLayout, QWidget

from engine.pipeline.trace import Trace
from engine.timeline.lanes import TimelineLayout
from engine.timeline.layout import layout_trace
from gui.elided import ElidedLabel
from gui.gantt.bar_text import BarText
from gui.gantt.bars_item import BarsItem
from gui.gantt.coloring import ChartColoring
from gui.gantt.heat_layer import HeatLayer
from gui.gantt.interaction import ChartInteraction
from gui.gantt.item_builder import BarItems
from gui.gantt.lane_geometry import DEFAULT_LANE_PX, MAX_LANE_PX, MIN_LANE_PX, LaneGeometry
from gui.gantt.lane_labels import LaneLabels
from gui.gantt.legend import ENTRY_WIDTH, make_legend
from gui.gantt.time_axis import TimeAxis
from gui.gantt.warp_groups import WarpGroups
from gui.theme import PALETTE_EVENTS, Theme, current, style_chart

LEFT_AXIS_WIDTH = 112


class _ChartWidget(pg.GraphicsLayoutWidget):
    """The chart's graphics view; says when a paint of its viewport has finished."""

    painted = Signal()

    def paintEvent(self, event: object) -> None:
        super().paintEvent(event)
        self.painted.emit()


class GanttView(QWidget):
    """Gantt chart of one trace. Signals carry indices back into the trace / kernel:

    * ``instructionClicked(int)``: static instruction index of a clicked instruction bar;
    * ``barClicked(int)``: row of that bar in ``trace.issues``;
    * ``stallClicked(int)``: row in ``trace.stalls`` of a clicked stall bar;
    * ``hovered(str)``: the tooltip text shown ("" when the pointer leaves the bars).

    Its parts: ``time_axis`` (unit, clock, zoom, visible range), ``coloring``, ``groups`` (collapse
    and filter), ``lane_geometry`` (lane heights), ``lane_labels``, ``bars`` (the items), ``heat``,
    ``text`` (tooltips) and ``interaction`` (hover and clicks).
    """

    instructionClicked = Signal(int)
    barClicked = Signal(int)
    stallClicked = Signal(int)
    hovered = Signal(str)
    painted = Signal()          # the chart's viewport finished a paint
    optionsChanged = Signal()   # colour mode, time unit or collapse-all changed

    def __init__(self, parent: QWidget | None = None, theme: Theme | None = None) -> None:
        """``theme``: fixed colours (exports use the light theme); None follows the system palette."""
        super().__init__(parent)
        self._layout: TimelineLayout | None = None
        self._trace: Trace | None = None
        self._names: list[str] = []
        self.param_prefix = ""                   # "<mangled kernel>_param_": shortened in tooltips
        self.coloring = ChartColoring(theme or current(self.palette()), theme, self.set_color_mode)
        self.time_axis = TimeAxis()
        self.time_axis.changed.connect(self.optionsChanged)
        self.lane_geometry = LaneGeometry(self)
        self.groups = WarpGroups(self)
        self.lane_labels = LaneLabels(self)
        self.bars = BarItems(self)
        self.heat = HeatLayer(self)
        self.text = BarText(self)
        self.interaction = ChartInteraction(self)
        self._build_toolbar()

        self.graphics = _ChartWidget()
        self.graphics.painted.connect(self.painted)
        self.plot: pg.PlotItem = self.graphics.addPlot(row=0, col=0)
        self.time_axis.plot = self.plot
        self.legend = make_legend()
        self.graphics.addItem(self.legend, row=1, col=0)
        self._setup_plot()

        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        outer.addWidget(self.toolbar)
        outer.addWidget(self.graphics, 1)

    # ---- set-up -------------------------------------------------------------------------------
    def _build_toolbar(self) -> None:
        """Colour mode, time unit, Fit, lane height, collapse, warp groups and the trace's size."""
        fit = QPushButton("Fit")
        fit.setToolTip("Show the whole run (Ctrl+0; also: double-click the chart)")
        fit.clicked.connect(self.fit)
        self.lane_spin = QSpinBox()
        self.lane_spin.setObjectName("laneHeight")
        self.lane_spin.setRange(MIN_LANE_PX, MAX_LANE_PX)
        self.lane_spin.setValue(DEFAULT_LANE_PX)
        self.lane_spin.setSuffix(" px")
        self.lane_spin.setPrefix("lanes ")
        self.lane_spin.setToolTip("Height of each issue/subsystem lane; the warp lanes share the rest")
        self.lane_spin.valueChanged.connect(self.set_lane_height)
        self._info = ElidedLabel()
        self._info.setObjectName("chartInfo")
        self.toolbar = QWidget()
        bar = QHBoxLayout(self.toolbar)
        bar.setContentsMargins(4, 2, 4, 2)
        bar.addWidget(self.coloring.mode_box)
        bar.addWidget(self.time_axis.unit_box)
        bar.addWidget(fit)
        bar.addWidget(self.lane_spin)
        bar.addWidget(self.groups.collapse_box)
        bar.addWidget(self.groups.groups_button)
        bar.addWidget(self._info, 1)

    def _setup_plot(self) -> None:
        plot, vb = self.plot, self.plot.getViewBox()
        vb.setMouseEnabled(x=True, y=False)      # wheel and drag act on cycles only
        vb.invertY(True)                          # lane 0 at the top
        vb.disableAutoRange()
        vb.setMenuEnabled(False)
        plot.hideButtons()
        # no grid: pyqtgraph draws it with translucent lines over the whole plot on every pan,
        # which cost more than all the bars (18 ms a frame at 1600 x 900)
        plot.showGrid(x=False, y=False)
        plot.setLabel("bottom", "cycle")
        plot.getAxis("left").setWidth(LEFT_AXIS_WIDTH)
        vb.sigResized.connect(self._view_resized)
        # lane labels and legend only change with the trace: paint them from a pixmap cache, not
        # from scratch on every pan (text is the slowest thing the raster engine draws)
        plot.getAxis("left").setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.legend.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        plot.getAxis("left").setStyle(tickLength=0, textFillLimits=[(0, 1.0)], hideOverlappingLabels=False)
        self._region = pg.LinearRegionItem(movable=False, pen=pg.mkPen(255, 160, 0, 160))
        self._region.setZValue(20)          # over the bars (translucent), under highlights
        self._region.hide()
        plot.addItem(self._region, ignoreBounds=True)
        plot.addItem(self.bars.raster, ignoreBounds=True)
        self.heat.add_to(plot, self.coloring.theme)
        plot.addItem(self.lane_labels.separator, ignoreBounds=True)
        self.interaction.add_to(plot)
        self._apply_theme()
        self.interaction.listen(self.graphics.scene())

    # ---- colours ------------------------------------------------------------------------------
    def theme(self) -> Theme:
        return self.coloring.theme

    def _apply_theme(self) -> None:
        """Background, axes, separator, hover box, tooltip, legend text and the colours of
        "nothing" (idle, finished, not resident) in the current theme."""
        t = self.coloring.theme
        style_chart(self.graphics, self.plot, t)
        self.lane_labels.apply_theme(t)
        self._region.setBrush(pg.mkBrush(*t.range_fill))
        self.interaction.apply_theme(t)
        self.legend.opts["labelTextColor"] = t.chart_text
        self.heat.apply_theme(t)
        if self._layout is not None and self._trace is not None:
            self.bars.build_stall_items()
            self.bars.build_data_items(force_legend=True)

    def set_theme(self, theme: Theme | None) -> None:
        """Fixed colours, or (None) the system palette's from now on."""
        self.coloring.fixed_theme = theme
        new = theme or current(self.palette())
        if new != self.coloring.theme:
            self.coloring.theme = new
            self._apply_theme()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        if event.type() in PALETTE_EVENTS and hasattr(self, "coloring") and self.coloring.fixed_theme is None:
            self.set_theme(None)

    # ---- showing a trace ----------------------------------------------------------------------
    def set_trace(self, trace: Trace, names: Sequence[str], units: Sequence[str] | None = None,
                  cycles: float | None = None, subsystems: Sequence[str] | None = None) -> None:
        """Show ``trace``. ``names``: text per static instruction; ``units``: unit per static
        instruction (only used to name subsystems when ``subsystems`` is not given);
        ``cycles``: the run's length (default: the last event)."""
        layout = layout_trace(trace, names, units, cycles, subsystems)
        self.set_layout(trace, names, layout)

    def set_layout(self, trace: Trace, names: Sequence[str], layout: TimelineLayout) -> None:
        """Show an already computed layout (lets an export reuse the live view's layout).

        A new trace whose colour keys match the shown one's (the live refresh after an edit)
        refills the existing bar items in place: no scene, legend or raster-layer rebuild."""
        self._reset(keep_items=True)
        self._trace, self._names, self._layout = trace, list(names), layout
        self.text.adopt(self._names)
        self.heat.forget()
        self.groups.adopt(layout, trace)
        self.lane_geometry.update()
        stalls_changed = self.bars.build_stall_items()
        self.bars.build_data_items(force_legend=stalls_changed)
        self.heat.update()
        self.lane_labels.refresh()
        c = max(layout.cycles, 1.0)
        self.plot.getViewBox().setLimits(xMin=-0.05 * c, xMax=1.05 * c, minXRange=2.0)
        self._apply_y_range()
        note = " · trace truncated (row limit)" if trace.truncated else ""
        slots = " · warps share slot lanes" if layout.warp_slots else ""
        self._info.setText(f"{len(trace.issues):,} instructions · {len(trace.stalls):,} stalls · "
                           f"{layout.cycles:,.6g} cycles{slots}{note}")
        self.fit()

    def clear(self) -> None:
        self._reset(keep_items=False)

    def _reset(self, keep_items: bool) -> None:
        """Forget the trace; ``keep_items``: leave the bar items (and legend) in the scene for
        :meth:`set_layout` to refill."""
        self.bars.clear(keep_items)
        self._layout, self._trace, self._names = None, None, []
        self.text.adopt(self._names)
        self.heat.forget()
        self.heat.update()
        self._region.hide()
        self.lane_labels.separator.hide()
        self.interaction.reset()
        if not keep_items:
            self.lane_labels.clear()
            self._info.setText("")

    def set_color_mode(self, mode: str) -> None:
        """Colour instruction bars by ``"warp"`` (warp id mod 12), ``"class"`` (opcode family) or
        ``"block"``."""
        self.coloring.show_mode(mode)
        if mode == self.coloring.mode:
            return
        self.coloring.mode = mode
        if self._layout is not None:
            self.bars.build_data_items()
        self.optionsChanged.emit()

    def color_mode(self) -> str:
        return self.coloring.mode

    def hide_legend(self) -> None:
        """Give the legend's rows to the lanes (a chart stacked under another with the same colours)."""
        if self.legend.scene() is not None:
            self.graphics.ci.removeItem(self.legend)

    def drop_pixmap_caches(self) -> None:
        """Paint the axis labels and legend directly instead of from cached pixmaps: a vector
        export (SVG, PDF) then holds them as text, not as pictures of text."""
        none = QGraphicsItem.CacheMode.NoCache
        self.plot.getAxis("left").setCacheMode(none)
        self.legend.setCacheMode(none)
        for sample, label in self.legend.items:
            sample.setCacheMode(none)
            label.item.setCacheMode(none)

    def fit(self) -> None:
        """Show the whole run."""
        if self._layout is not None:
            self.plot.getViewBox().setXRange(0.0, max(self._layout.cycles, 1.0), padding=0.01)

    # ---- highlights ---------------------------------------------------------------------------
    def highlight_range(self, x0: float, x1: float) -> None:
        """Shade cycles [x0, x1] (a superstep selected elsewhere)."""
        self._region.setRegion((min(x0, x1), max(x0, x1)))
        self._region.show()

    def clear_highlight_range(self) -> None:
        self._region.hide()

    def highlighted_range(self) -> tuple[float, float] | None:
        if not self._region.isVisible():
            return None
        a, b = self._region.getRegion()
        return float(a), float(b)

    def highlight_instructions(self, instructions: Iterable[int]) -> None:
        """Outline every issue of these static instructions (empty: remove the highlight)."""
        self.bars.highlight_instructions(instructions)

    @property
    def highlighted_instructions(self) -> frozenset[int]:
        return self.bars.highlighted

    # ---- what is shown (used by the main window, the exports and the tests) -------------------
    @property
    def layout_data(self) -> TimelineLayout | None:
        return self._layout

    @property
    def trace(self) -> Trace | None:
        return self._trace

    @property
    def instruction_names(self) -> list[str]:
        return list(self._names)

    def bar_items(self) -> list[BarsItem]:
        return self.bars.all()

    # ---- lane geometry (view units are pixels of the plot's height) ----------------------------
    def lane_height(self) -> int:
        """Height in pixels of a subsystem lane (the issue-slot lane is 3/4 of it)."""
        return self.lane_geometry.lane_px

    def set_lane_height(self, px: int) -> None:
        px = int(min(max(px, MIN_LANE_PX), MAX_LANE_PX))
        if self.lane_spin.value() != px:
            self.lane_spin.blockSignals(True)
            self.lane_spin.setValue(px)
            self.lane_spin.blockSignals(False)
        if px != self.lane_geometry.lane_px:
            self.lane_geometry.lane_px = px
            self.respace()

    def respace(self) -> None:
        """New lane geometry (plot resized, lane height changed, a group collapsed): move the
        bars of every item, no re-sorting."""
        if self._layout is None:
            return
        self.lane_geometry.update()
        self.bars.respace()
        self.heat.update()
        if self.bars.highlighted:
            self.bars.highlight_instructions(self.bars.highlighted)
        self.interaction.hide()
        self.lane_labels.refresh()
        self._apply_y_range()

    def _apply_y_range(self) -> None:
        vb = self.plot.getViewBox()
        height = self.lane_geometry.view_height
        vb.setLimits(yMin=0.0, yMax=height)
        vb.setYRange(0.0, height, padding=0.0)

    def _view_resized(self) -> None:
        if self._layout is not None and abs(self.lane_geometry.plot_px() - self.lane_geometry.geometry_px) >= 1.0:
            if not self.groups.follow_resize():      # (which respaces when it collapses or expands)
                self.respace()

    # ---- Qt events ----------------------------------------------------------------------------
    def showEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        self._view_resized()       # laid out while hidden: for the fallback height

    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)
        columns = max(1, int((max(self.graphics.width(), 400) - 20) // ENTRY_WIDTH))
        if self._layout is not None and columns != self.bars.legend_columns:
            self.bars.fill_legend()
        if self._layout is not None:
            self.lane_labels.refresh()

    def leaveEvent(self, event: object) -> None:
        # no move event follows the pointer out of the chart: hide the tooltip here
        super().leaveEvent(event)
        self.interaction.hide_tip()
