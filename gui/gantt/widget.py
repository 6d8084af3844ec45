"""``GanttView``: the simulator's trace as a per-subsystem / per-warp Gantt chart.

All placement comes from :func:`engine.timeline.layout_trace`; this widget only draws it (one
:class:`BarsItem` per colour), zooms/pans the cycle axis (the lanes stay fixed), and maps
hovers and clicks back to trace rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import (
    QComboBox,
    QGraphicsItem,
    QGraphicsRectItem,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from engine.pipeline.trace import STALL_CAUSES, Trace
from engine.timeline import COLOR_MODES, WARP_COLORS, TimelineLayout, lane_group, layout_trace
from gui.gantt import colors
from gui.gantt.bars_item import BarsItem
from gui.gantt.legend import ENTRY_WIDTH, fill_legend, make_legend, swatch
from gui.gantt.raster import RasterLayer

HOVER_TOLERANCE_PX = 3.0      # a hover/click this close to a thin bar still hits it
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
    """

    instructionClicked = Signal(int)
    barClicked = Signal(int)
    stallClicked = Signal(int)
    hovered = Signal(str)
    painted = Signal()          # the chart's viewport finished a paint

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout: TimelineLayout | None = None
        self._trace: Trace | None = None
        self._names: list[str] = []
        self._mode = "warp"
        self._data_items: list[BarsItem] = []
        self._stall_items: list[BarsItem] = []
        self._highlight: BarsItem | None = None
        self._highlighted: frozenset[int] = frozenset()
        self.hover_text = ""

        self._mode_box = QComboBox()
        self._mode_box.addItems(["colour by warp", "colour by instruction class"])
        self._mode_box.currentIndexChanged.connect(lambda i: self.set_color_mode(COLOR_MODES[i]))
        fit = QPushButton("Fit")
        fit.setToolTip("Show the whole run (also: double-click the chart)")
        fit.clicked.connect(self.fit)
        self._info = QLabel()
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 2)
        bar.addWidget(self._mode_box)
        bar.addWidget(fit)
        bar.addWidget(self._info, 1)

        self.graphics = _ChartWidget()
        self.graphics.painted.connect(self.painted)
        self.graphics.setBackground(colors.BACKGROUND)
        self.plot: pg.PlotItem = self.graphics.addPlot(row=0, col=0)
        self.legend = make_legend()
        self._legend_columns = 0
        self.graphics.addItem(self.legend, row=1, col=0)
        self._setup_plot()

        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        outer.addLayout(bar)
        outer.addWidget(self.graphics, 1)

    # ---- set-up -------------------------------------------------------------------------------
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
        for side in ("left", "bottom"):
            axis = plot.getAxis(side)
            axis.setTextPen(colors.FOREGROUND)
            axis.setPen(colors.FOREGROUND)
        plot.getAxis("left").setWidth(LEFT_AXIS_WIDTH)
        # lane labels and legend only change with the trace: paint them from a pixmap cache, not
        # from scratch on every pan (text is the slowest thing the raster engine draws)
        plot.getAxis("left").setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.legend.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        plot.getAxis("left").setStyle(tickLength=0, textFillLimits=[(0, 1.0)], hideOverlappingLabels=False)
        self._region = pg.LinearRegionItem(movable=False, brush=colors.RANGE_FILL,
                                           pen=pg.mkPen(255, 160, 0, 160))
        self._region.setZValue(20)          # over the bars (translucent), under highlights
        self._region.hide()
        plot.addItem(self._region, ignoreBounds=True)
        self._raster = RasterLayer()
        plot.addItem(self._raster, ignoreBounds=True)
        self._separator = pg.InfiniteLine(angle=0, pen=pg.mkPen("#909090", width=1))
        self._separator.hide()
        plot.addItem(self._separator, ignoreBounds=True)
        self._hover_box = QGraphicsRectItem()
        pen = QPen(QColor(colors.HOVER_OUTLINE), 0)
        pen.setCosmetic(True)
        self._hover_box.setPen(pen)
        self._hover_box.setZValue(100)
        self._hover_box.hide()
        plot.addItem(self._hover_box, ignoreBounds=True)
        # The tooltip lives in the scene, not in a QToolTip window: it follows the pointer and
        # updates on every move, and a top-level popup would take the mouse events it covers.
        self._tip = pg.TextItem(color=colors.FOREGROUND, fill=pg.mkBrush(255, 255, 235, 240),
                                border=pg.mkPen("#808080"))
        self._tip.setZValue(200)
        self._tip.hide()
        plot.addItem(self._tip, ignoreBounds=True)
        scene = self.graphics.scene()
        scene.sigMouseMoved.connect(self._on_mouse_moved)
        scene.sigMouseClicked.connect(self._on_mouse_clicked)

    # ---- public API ---------------------------------------------------------------------------
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
        self._row_first, self._row_tops, self._row_heights = self._row_geometry()
        stalls_changed = self._build_stall_items()
        self._build_data_items(force_legend=stalls_changed)
        self.refresh_lane_ticks()
        c = max(layout.cycles, 1.0)
        self.plot.getViewBox().setLimits(xMin=-0.05 * c, xMax=1.05 * c, yMin=0.0, yMax=layout.height,
                                         minXRange=2.0)
        self.plot.getViewBox().setYRange(0.0, layout.height, padding=0.0)
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
        if not keep_items:
            for item in self._data_items + self._stall_items:
                self.plot.removeItem(item)
            self._data_items, self._stall_items = [], []
            self._raster.set_items([])
            self.legend.clear()
        if self._highlight is not None:
            self.plot.removeItem(self._highlight)
        self._highlight = None
        self._highlighted = frozenset()
        self._layout, self._trace, self._names = None, None, []
        self._region.hide()
        self._separator.hide()
        self._hover_box.hide()
        self._tip.hide()
        self.hover_text = ""
        if not keep_items:
            self.plot.getAxis("left").setTicks([])
            self._info.setText("")

    def set_color_mode(self, mode: str) -> None:
        """Colour instruction bars by ``"warp"`` (warp id mod 12) or ``"class"`` (opcode family)."""
        if mode not in COLOR_MODES:
            raise ValueError(f"colour mode {mode!r}: choose one of {COLOR_MODES}")
        if self._mode_box.currentIndex() != COLOR_MODES.index(mode):
            self._mode_box.blockSignals(True)
            self._mode_box.setCurrentIndex(COLOR_MODES.index(mode))
            self._mode_box.blockSignals(False)
        if mode == self._mode:
            return
        self._mode = mode
        if self._layout is not None:
            self._build_data_items()

    def color_mode(self) -> str:
        return self._mode

    def fit(self) -> None:
        if self._layout is not None:
            self.plot.getViewBox().setXRange(0.0, max(self._layout.cycles, 1.0), padding=0.01)

    def highlight_range(self, x0: float, x1: float) -> None:
        """Shade cycles [x0, x1] (a superstep selected elsewhere)."""
        self._region.setRegion((min(x0, x1), max(x0, x1)))
        self._region.show()

    def clear_highlight_range(self) -> None:
        self._region.hide()

    def highlight_instructions(self, instructions: Iterable[int]) -> None:
        """Outline every issue of these static instructions (empty: remove the highlight)."""
        self._highlighted = frozenset(int(i) for i in instructions)
        if self._highlight is not None:
            self.plot.removeItem(self._highlight)
            self._highlight = None
        if not self._highlighted or self._layout is None or self._trace is None:
            return
        wanted = np.fromiter(self._highlighted, dtype=np.int64)
        lanes, x0, x1 = [], [], []
        for k, lane in enumerate(self._layout.lanes):
            if lane.source != "issues":
                continue
            hit = np.isin(self._trace.issues["instr"][lane.row], wanted)
            lanes.append(self._rows_of(k, hit))
            x0.append(lane.x0[hit])
            x1.append(lane.x1[hit])
        self._highlight = self._bars(np.concatenate(lanes), np.concatenate(x0), np.concatenate(x1),
                                     QColor(colors.HIGHLIGHT_FILL), "highlight",
                                     outline=QColor(colors.HIGHLIGHT_OUTLINE))
        self._highlight.setZValue(50)
        self.plot.addItem(self._highlight)

    # ---- queries (used by the main window and the tests) --------------------------------------
    @property
    def layout_data(self) -> TimelineLayout | None:
        return self._layout

    @property
    def trace(self) -> Trace | None:
        return self._trace

    @property
    def instruction_names(self) -> list[str]:
        return list(self._names)

    @property
    def highlighted_instructions(self) -> frozenset[int]:
        return self._highlighted

    def highlighted_range(self) -> tuple[float, float] | None:
        if not self._region.isVisible():
            return None
        a, b = self._region.getRegion()
        return float(a), float(b)

    def bar_items(self) -> list[BarsItem]:
        return list(self._data_items + self._stall_items)

    def drawn_rect_count(self) -> int:
        """Rectangles painted at the last repaint, over every colour (culling + merging result)."""
        items = self.bar_items() + ([self._highlight] if self._highlight is not None else [])
        return sum(item.last_drawn for item in items if item.isVisible())

    def x_range(self) -> tuple[float, float]:
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        return float(x0), float(x1)

    def bar_at(self, x: float, y: float) -> tuple[int, int] | None:
        """(lane index, bar index in that lane) under view point (x cycles, y layout units)."""
        if self._layout is None:
            return None
        lane = self._layout.lane_at(y)
        if lane is None:
            return None
        (v0, v1), _ = self.plot.getViewBox().viewRange()
        width = max(self.plot.getViewBox().width(), 1.0)
        tolerance = HOVER_TOLERANCE_PX * (v1 - v0) / width
        hit = self._layout.bar_at(lane, x, tolerance, y=y)
        return None if hit is None else (lane, hit)

    def describe(self, lane_index: int, bar: int) -> str:
        """Tooltip text of one bar."""
        assert self._layout is not None and self._trace is not None
        lane = self._layout.lanes[lane_index]
        row = int(lane.row[bar])
        if lane.source == "stalls":
            rec = self._trace.stalls[row]
            start, end = float(rec["start"]), float(rec["end"])
            return (f"stall: {STALL_CAUSES[int(rec['cause'])]}\nwarp {int(rec['warp'])}\n"
                    f"cycles {start:g} → {end:g} ({end - start:g} cycles)")
        rec = self._trace.issues[row]
        instr = int(rec["instr"])
        issue, done = float(rec["issue"]), float(rec["complete"])
        sub = self._layout.subsystems[int(rec["subsystem"])]
        return (f"{self._names[instr]}\ninstruction #{instr + 1} · {sub}\n"
                f"warp {int(rec['warp'])} · block {int(rec['block'])}\n"
                f"issue {issue:g} → complete {done:g} ({done - issue:g} cycles)")

    def scene_point(self, x: float, y: float) -> QPointF:
        """Scene position of view point (x, y): lets callers synthesise mouse input."""
        return self.plot.getViewBox().mapViewToScene(QPointF(x, y))

    # ---- building the items -------------------------------------------------------------------
    def _row_geometry(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Drawing rows: every lane's sub-rows numbered in order. Returns each lane's first row
        and every row's top and height (layout units)."""
        assert self._layout is not None
        lanes = self._layout.lanes
        first = np.cumsum([0] + [ln.sub_rows for ln in lanes])[:-1]
        tops = np.concatenate([ln.y + np.arange(ln.sub_rows) * ln.height / ln.sub_rows for ln in lanes])
        heights = np.concatenate([np.full(ln.sub_rows, ln.height / ln.sub_rows) for ln in lanes])
        return first, tops, heights

    def _rows_of(self, k: int, sel: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Drawing row of the bars ``sel`` of lane ``k``."""
        assert self._layout is not None
        lane = self._layout.lanes[k]
        base = self._row_first[k]
        n = len(lane.x0[sel])
        return np.full(n, base, np.int64) if lane.sub_row is None else base + lane.sub_row[sel].astype(np.int64)

    def _bars(self, row: np.ndarray, x0: np.ndarray, x1: np.ndarray, color: QColor, name: str,
              outline: QColor | None = None) -> BarsItem:
        return BarsItem(row, x0, x1, self._row_tops, self._row_heights, color, outline=outline, name=name)

    def _collect(self, source: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """All bars of lanes reading ``source``: lane index, x0, x1, colour key."""
        assert self._layout is not None and self._trace is not None
        parts = [(self._rows_of(k), ln.x0, ln.x1, self._layout.color_keys(ln, self._trace, self._mode))
                 for k, ln in enumerate(self._layout.lanes) if ln.source == source]
        if not parts:
            empty = np.zeros(0)
            return empty.astype(np.int64), empty, empty, empty.astype(np.int16)
        return tuple(np.concatenate(col) for col in zip(*parts, strict=True))  # type: ignore[return-value]

    def _split_by_key(self, source: str, color_of, name_of,  # noqa: ANN001
                      old: list[BarsItem]) -> tuple[list[BarsItem], bool]:
        """One item per colour key of the bars of ``source``. When the keys give the same
        (name, colour) list as the items in ``old``, those items are refilled in place;
        otherwise they leave the plot and new ones are made. Returns the items and whether
        they are new."""
        lane, x0, x1, key = self._collect(source)
        # One sort for every item, into (key, row, x0) order: within a lane the bars come by x0,
        # and lanes come in row order, so a stable sort on (key, row) alone suffices, a linear
        # radix sort when that pair fits in 16 bits. Each item then gets a contiguous slice,
        # already in the order BarsItem keeps.
        n_rows = int(lane.max()) + 1 if len(lane) else 1
        pair = key.astype(np.int64) * n_rows + lane
        if len(pair) and int(pair.max()) < 2 ** 15:
            pair = pair.astype(np.int16)
        order = np.argsort(pair, kind="stable")
        lane, x0, x1, key = lane[order], x0[order], x1[order], key[order]
        keys, starts = np.unique(key, return_index=True)
        bounds = np.append(starts, len(key))
        specs = [(name_of(k), color_of(k)) for k in keys.tolist()]
        reuse = len(old) == len(specs) and all(
            item.name == name and item.color.rgba() == QColor(color).rgba()
            for item, (name, color) in zip(old, specs, strict=True))
        if not reuse:
            for item in old:
                self.plot.removeItem(item)
        items = []
        for k, (name, color) in enumerate(specs):
            part = slice(bounds[k], bounds[k + 1])
            if reuse:
                item = old[k]
                item.set_data(lane[part], x0[part], x1[part], self._row_tops, self._row_heights)
            else:
                item = self._bars(lane[part], x0[part], x1[part], color, name)
                self.plot.addItem(item)
            items.append(item)
        return items, not reuse

    def _build_stall_items(self) -> bool:
        self._stall_items, changed = self._split_by_key("stalls", colors.stall_color,
                                                        lambda c: STALL_CAUSES[c], self._stall_items)
        return changed

    def _build_data_items(self, force_legend: bool = False) -> None:
        assert self._layout is not None and self._trace is not None
        n_warps = len(np.unique(self._trace.issues["warp"]))
        if self._mode == "warp":
            def name_of(k: int) -> str:
                return f"warp {k}" if n_warps <= WARP_COLORS else f"warps ≡ {k} mod {WARP_COLORS}"
        else:
            classes = self._layout.classes

            def name_of(k: int) -> str:
                return classes[k]
        self._data_items, changed = self._split_by_key("issues", colors.data_color, name_of,
                                                       self._data_items)
        if changed or force_legend or not self.legend.items:
            self._raster.set_items(self._stall_items + self._data_items)
            self._fill_legend()
        else:
            self._raster.refresh_bounds()

    def _fill_legend(self) -> None:
        data = [(item, item.name) for item in self._data_items]
        stalls = [(item, f"stall: {item.name.replace('_', ' ')}") for item in self._stall_items]
        if not data and not stalls:
            data = [(swatch(QColor("#ffffff")), "empty trace")]
        width = max(self.graphics.width(), 400) - 20
        self._legend_columns = fill_legend(self.legend, [data, stalls], width)
        # text is slow to rasterise: keep every legend entry as a cached pixmap
        for sample, label in self.legend.items:
            sample.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
            label.item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        # lay the legend out now: a grab() before the next event loop pass would otherwise
        # show it at the scene origin, over the chart
        self.legend.updateSize()
        self.graphics.ci.layout.activate()

    def refresh_lane_ticks(self) -> None:
        """Lane labels on the y axis (thinned out when warp lanes get shorter than a label)."""
        if self._layout is None:
            return
        lanes = self._layout.lanes
        major = [(ln.y + ln.height / 2, ln.label) for ln in lanes if lane_group(ln.kind).major]
        warp_lanes = [ln for ln in lanes if not lane_group(ln.kind).major]
        # label every k-th warp lane so labels stay legible when many lanes share the height
        px_per_unit = max(self.plot.getViewBox().height(), 400.0) / max(self._layout.height, 1.0)
        every = max(1, int(np.ceil(13.0 / max(px_per_unit, 1e-6))))
        minor = [(ln.y + ln.height / 2, ln.label) for i, ln in enumerate(warp_lanes) if i % every == 0]
        # one tick level: pyqtgraph drops a second level's text once the first fills the axis
        self.plot.getAxis("left").setTicks([major + minor])
        if warp_lanes:
            self._separator.setValue(warp_lanes[0].y - 0.25)
            self._separator.show()

    # ---- mouse --------------------------------------------------------------------------------
    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)
        columns = max(1, int((max(self.graphics.width(), 400) - 20) // ENTRY_WIDTH))
        if self._layout is not None and columns != self._legend_columns:
            self._fill_legend()
        if self._layout is not None:
            self.refresh_lane_ticks()

    def _hit(self, scene_pos: QPointF) -> tuple[int, int] | None:
        vb = self.plot.getViewBox()
        if self._layout is None or not vb.sceneBoundingRect().contains(scene_pos):
            return None
        p = vb.mapSceneToView(scene_pos)
        return self.bar_at(p.x(), p.y())

    def _on_mouse_moved(self, scene_pos: QPointF) -> None:
        hit = self._hit(scene_pos)
        if hit is None:
            if self.hover_text:
                self.hover_text = ""
                self._hover_box.hide()
                self._tip.hide()
                self.hovered.emit("")
            return
        assert self._layout is not None
        lane_index, bar = hit
        lane = self._layout.lanes[lane_index]
        text = self.describe(lane_index, bar)
        x0, x1 = float(lane.x0[bar]), float(lane.x1[bar])
        top, height = lane.bar_band(bar)
        self._hover_box.setRect(QRectF(x0, top + 0.05 * height, max(x1 - x0, 1e-9), 0.9 * height))
        self._hover_box.show()
        vb = self.plot.getViewBox()
        p = vb.mapSceneToView(scene_pos)
        (v0, v1), (w0, w1) = vb.viewRange()
        # open towards the middle of the view so the box is never cut off at an edge
        self._tip.setAnchor((1.0 if p.x() > (v0 + v1) / 2 else -0.02, 1.05 if p.y() > (w0 + w1) / 2 else -0.15))
        self._tip.setPos(p)
        if text != self.hover_text:
            self.hover_text = text
            self._tip.setText(text)
            self.hovered.emit(text)
        self._tip.show()

    def _on_mouse_clicked(self, event: object) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        if event.double():
            self.fit()
            return
        hit = self._hit(event.scenePos())
        if hit is None or self._trace is None or self._layout is None:
            return
        lane_index, bar = hit
        lane = self._layout.lanes[lane_index]
        row = int(lane.row[bar])
        if lane.source == "stalls":
            self.stallClicked.emit(row)
        else:
            self.barClicked.emit(row)
            self.instructionClicked.emit(int(self._trace.issues["instr"][row]))
