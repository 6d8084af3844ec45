"""``GanttView``: the simulator's trace as a per-subsystem / per-warp Gantt chart.

All placement comes from :func:`engine.timeline.layout.layout_trace`; this widget only draws it (one
:class:`BarsItem` per colour), zooms/pans the cycle axis (the lanes stay fixed), and maps
hovers and clicks back to trace rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFontMetricsF, QPen
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGraphicsItem,
    QGraphicsRectItem,
    QHBoxLayout,
    QMenu,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from engine.pipeline.trace import STALL_CAUSES, Trace
from engine.stall_links import StallLinks
from engine.timeline.activity import HEAT_CATEGORIES, GroupActivity, group_activities
from engine.timeline.lanes import WARP_COLORS, Lane, TimelineLayout, lane_group
from engine.timeline.layout import layout_trace
from gui.elided import ElidedLabel
from gui.gantt import colors
from gui.gantt.bars_item import BarsItem, split_by_key
from gui.gantt.heat_item import HeatStripItem, HeatStrips
from gui.gantt.legend import ENTRY_WIDTH, fill_legend, make_legend, swatch
from gui.gantt.raster import RasterLayer
from gui.theme import PALETTE_EVENTS, Theme, current, style_chart

# Colour modes of the instruction bars; "block" is drawn here (the layout knows warp and class).
COLOR_MODES = ("warp", "class", "block")
COLOR_MODE_TITLES = ("colour by warp", "colour by instruction class", "colour by block")
TIME_UNITS = ("cycles", "us")
HOVER_TOLERANCE_PX = 3.0      # a hover/click this close to a thin bar still hits it
LEFT_AXIS_WIDTH = 112
# Lanes are spaced in screen pixels, not in the layout's units: the issue and subsystem lanes keep
# a readable height (user-resizable) whatever the number of warps, and the warp lanes share what
# is left. View y coordinates are these pixels; the layout's units are mapped lane by lane.
DEFAULT_LANE_PX = 26
MIN_LANE_PX, MAX_LANE_PX = 12, 120
ISSUE_LANE_SHARE = 0.75       # the issue-slot lane is a little lower than a subsystem lane
GAP_PX = 6.0                  # between lane groups
COLLAPSED_GROUP_PX = 14.0     # a collapsed warp group: one heat strip of its warps' issue and stalls
MIN_COLLAPSED_GROUP_PX = 6.0  # ... thinner (down to this) when the strips would not fit otherwise
MIN_WARP_LANE_PX = 1.0
# Until the user chooses, warp groups are collapsed into heat strips whenever expanded warp lanes
# would be thinner than this (64 warps of 8 resident blocks at 1366x768: about 1.3 px each).
AUTO_COLLAPSE_PX = 3.0
_HEAT_TITLE = {"issuing": "issuing", "memory_dependency": "waiting for memory",
               "compute_dependency": "waiting for arithmetic results", "barrier": "at a barrier",
               "subsystem_busy": "waiting for a busy unit", "issue_limit": "ready, waiting for an issue slot",
               "idle": "idle (not resident, finished, or no warp in the slot)"}
HEAT_TITLES = tuple(_HEAT_TITLE[c] for c in HEAT_CATEGORIES)    # a heat strip's tooltip lines
FALLBACK_VIEW_PX = 560.0      # the plot's height before it is first laid out (offscreen exports)
LABEL_PX = 12.0               # a warp lane needs this much height for its own label


class WarpGroup:
    """Warp lanes shown together: the warps of one block, or (when warps share slot lanes) as many
    consecutive slots as a block has warps. A collapsed group is drawn as one heat strip: per time
    bucket, the share of its lanes issuing, waiting on each stall cause, or idle."""

    def __init__(self, label: str, lanes: list[int]) -> None:
        self.label = label
        self.lanes = lanes


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
    optionsChanged = Signal()   # colour mode, time unit or collapse-all changed

    def __init__(self, parent: QWidget | None = None, theme: Theme | None = None) -> None:
        """``theme``: fixed colours (exports use the light theme); None follows the system palette."""
        super().__init__(parent)
        self._fixed_theme = theme
        self._theme = theme or current(self.palette())
        self._layout: TimelineLayout | None = None
        self._trace: Trace | None = None
        self._names: list[str] = []
        self._mode = "warp"
        self._data_items: list[BarsItem] = []
        self._stall_items: list[BarsItem] = []
        self._highlight: BarsItem | None = None
        self._highlighted: frozenset[int] = frozenset()
        self.hover_text = ""
        self._lane_px = DEFAULT_LANE_PX
        self.param_prefix = ""                   # "<mangled kernel>_param_": shortened in tooltips
        self._links: StallLinks | None = None     # what each stall waits on, made on the first hover
        self._groups: list[WarpGroup] = []
        self._collapsed: set[str] = set()        # labels of the collapsed warp groups
        self._hidden: set[str] = set()           # labels of the warp groups filtered out
        self._collapse_all = False               # new traces start with every group collapsed
        self._collapse_auto = True               # no choice made yet: collapse_all follows the lane height
        self._strip_px = COLLAPSED_GROUP_PX      # a collapsed group's height in the current geometry
        self._heat = HeatStrips()                # the collapsed groups' heat strips
        self._heat_items: list[HeatStripItem] = []
        self._activity: dict[str, GroupActivity] = {}   # per group label, for the shown trace
        self._lane_top = np.zeros(0)
        self._lane_h = np.zeros(0)
        self._view_height = 0.0                  # total height in view units (pixels)
        self._geometry_px = 0.0                  # plot height the geometry was computed for
        self._ticks: list[tuple[float, str]] | None = None   # the lane labels on the axis

        self._mode_box = QComboBox()
        self._mode_box.addItems(list(COLOR_MODE_TITLES))
        self._mode_box.currentIndexChanged.connect(lambda i: self.set_color_mode(COLOR_MODES[i]))
        self._unit_box = QComboBox()
        self._unit_box.setObjectName("timeUnit")
        self._unit_box.addItems(["cycles", "µs"])
        self._unit_box.setToolTip("Time axis in SM cycles or in µs at the GPU profile's clock")
        self._unit_box.currentIndexChanged.connect(lambda i: self.set_time_unit(TIME_UNITS[i]))
        self._unit = "cycles"
        self._clock_mhz = 0.0
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
        self.collapse_box = QCheckBox("collapse warps")
        self.collapse_box.setObjectName("collapseWarps")
        self._show_collapse_choice()
        self.collapse_box.toggled.connect(lambda on: self.set_all_collapsed(on))   # the user's choice
        self.groups_button = QPushButton()       # (a push button leaves room for its menu arrow)
        self.groups_button.setObjectName("warpGroups")
        self.groups_button.setToolTip("Which warp groups the chart shows (also: right-click a group)")
        self._groups_menu = QMenu(self.groups_button)
        self._groups_menu.aboutToShow.connect(self._fill_groups_menu)
        self.groups_button.setMenu(self._groups_menu)
        self._show_filter()
        self._info = ElidedLabel()
        self._info.setObjectName("chartInfo")
        self.toolbar = QWidget()
        bar = QHBoxLayout(self.toolbar)
        bar.setContentsMargins(4, 2, 4, 2)
        bar.addWidget(self._mode_box)
        bar.addWidget(self._unit_box)
        bar.addWidget(fit)
        bar.addWidget(self.lane_spin)
        bar.addWidget(self.collapse_box)
        bar.addWidget(self.groups_button)
        bar.addWidget(self._info, 1)

        self.graphics = _ChartWidget()
        self.graphics.painted.connect(self.painted)
        self.plot: pg.PlotItem = self.graphics.addPlot(row=0, col=0)
        self.legend = make_legend()
        self._legend_columns = 0
        self.graphics.addItem(self.legend, row=1, col=0)
        self._setup_plot()

        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        outer.addWidget(self.toolbar)
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
        self._raster = RasterLayer()
        plot.addItem(self._raster, ignoreBounds=True)
        for c, category in enumerate(HEAT_CATEGORIES):
            item = HeatStripItem(self._heat, c, colors.heat_color(category, self._theme), category)
            self._heat_items.append(item)
            plot.addItem(item, ignoreBounds=True)
        self._separator = pg.InfiniteLine(angle=0)
        self._separator.hide()
        plot.addItem(self._separator, ignoreBounds=True)
        self._hover_box = QGraphicsRectItem()
        self._hover_box.setZValue(100)
        self._hover_box.hide()
        plot.addItem(self._hover_box, ignoreBounds=True)
        # The tooltip lives in the scene, not in a QToolTip window: it follows the pointer and
        # updates on every move, and a top-level popup would take the mouse events it covers.
        self._tip = pg.TextItem()
        self._tip.setZValue(200)
        self._tip.hide()
        plot.addItem(self._tip, ignoreBounds=True)
        self._apply_theme()
        scene = self.graphics.scene()
        scene.sigMouseMoved.connect(self._on_mouse_moved)
        scene.sigMouseClicked.connect(self._on_mouse_clicked)

    # ---- colours ------------------------------------------------------------------------------
    def theme(self) -> Theme:
        return self._theme

    def _apply_theme(self) -> None:
        """Background, axes, separator, hover box, tooltip, legend text and the colours of
        "nothing" (idle, finished, not resident) in the current theme."""
        t = self._theme
        style_chart(self.graphics, self.plot, t)
        self._separator.setPen(pg.mkPen(t.separator, width=1))
        self._region.setBrush(pg.mkBrush(*t.range_fill))
        pen = QPen(QColor(t.hover_outline), 0)
        pen.setCosmetic(True)
        self._hover_box.setPen(pen)
        self._tip.setColor(t.chart_text)
        self._tip.fill = pg.mkBrush(*t.tip_fill)
        self._tip.border = pg.mkPen(t.tip_border)
        self._tip.update()
        self.legend.opts["labelTextColor"] = t.chart_text
        for item, category in zip(self._heat_items, HEAT_CATEGORIES, strict=True):
            item.set_color(colors.heat_color(category, t))
        if self._layout is not None and self._trace is not None:
            self._build_stall_items()
            self._build_data_items(force_legend=True)

    def set_theme(self, theme: Theme | None) -> None:
        """Fixed colours, or (None) the system palette's from now on."""
        self._fixed_theme = theme
        new = theme or current(self.palette())
        if new != self._theme:
            self._theme = new
            self._apply_theme()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        if event.type() in PALETTE_EVENTS and hasattr(self, "_theme") and self._fixed_theme is None:
            self.set_theme(None)

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
        self._links = None
        self._activity = {}
        self._groups = self._warp_groups()
        labels = {g.label for g in self._groups}
        if self._collapse_auto:
            self._collapse_all = self._warp_lanes_too_thin()
            self._show_collapse_choice()
        self._collapsed = set(labels) if self._collapse_all else self._collapsed & labels
        self._hidden &= labels
        self._show_filter()
        self._compute_geometry()
        self._row_first, self._row_tops, self._row_heights = self._row_geometry()
        stalls_changed = self._build_stall_items()
        self._build_data_items(force_legend=stalls_changed)
        self._update_heat()
        self.refresh_lane_ticks()
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
        self._activity = {}
        self._update_heat()
        self._region.hide()
        self._separator.hide()
        self._hover_box.hide()
        self._tip.hide()
        self.hover_text = ""
        if not keep_items:
            self.plot.getAxis("left").setTicks([])
            self._ticks = None
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
        self.optionsChanged.emit()

    def color_mode(self) -> str:
        return self._mode

    # ---- time axis ----------------------------------------------------------------------------
    def set_clock(self, clock_mhz: float) -> None:
        """The SM clock that converts cycles to µs (0: unknown, the µs axis is then unavailable)."""
        self._clock_mhz = float(clock_mhz or 0.0)
        self._unit_box.model().item(1).setEnabled(self._clock_mhz > 0)
        if self._clock_mhz <= 0 and self._unit == "us":
            self.set_time_unit("cycles")
        else:
            self._apply_time_unit()

    def set_time_unit(self, unit: str) -> None:
        """The bottom axis in ``"cycles"`` or ``"us"``; the data stay in cycles either way."""
        if unit not in TIME_UNITS:
            raise ValueError(f"time unit {unit!r}: choose one of {TIME_UNITS}")
        if unit == "us" and self._clock_mhz <= 0:
            unit = "cycles"
        self._unit = unit
        if self._unit_box.currentIndex() != TIME_UNITS.index(unit):
            self._unit_box.blockSignals(True)
            self._unit_box.setCurrentIndex(TIME_UNITS.index(unit))
            self._unit_box.blockSignals(False)
        self._apply_time_unit()
        self.optionsChanged.emit()

    def time_unit(self) -> str:
        return self._unit

    def clock_mhz(self) -> float:
        return self._clock_mhz

    def _apply_time_unit(self) -> None:
        axis = self.plot.getAxis("bottom")
        if self._unit == "us":
            axis.setScale(1.0 / self._clock_mhz)
            axis.setLabel(f"time (µs at {self._clock_mhz:g} MHz)")    # (the axis's: a hidden axis stays so)
        else:
            axis.setScale(1.0)
            axis.setLabel("cycle")

    def _span_text(self, cycles: float) -> str:
        if self._clock_mhz > 0:
            return f"{cycles:g} cycles = {1000 * cycles / self._clock_mhz:.4g} ns"
        return f"{cycles:g} cycles"

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

    def zoom(self, factor: float) -> None:
        """Zoom the cycle axis about the middle of the view (factor < 1 zooms in)."""
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        mid, half = (x0 + x1) / 2, (x1 - x0) / 2 * factor
        self.plot.getViewBox().setXRange(mid - half, mid + half, padding=0.0)

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
        """(lane index, bar index in that lane) under (x cycles, y layout units)."""
        if self._layout is None or self._layout.lane_at(y) is None:
            return None
        return self._bar_at_view(x, self.to_view_y(y))

    def _bar_at_view(self, x: float, vy: float) -> tuple[int, int] | None:
        """The bar under view point (x cycles, vy view pixels); in a collapsed group, the first
        of its lanes that has a bar there."""
        if self._layout is None:
            return None
        (v0, v1), _ = self.plot.getViewBox().viewRange()
        width = max(self.plot.getViewBox().width(), 1.0)
        tolerance = HOVER_TOLERANCE_PX * (v1 - v0) / width
        for lane, y in self._lanes_at_view_y(vy):
            hit = self._layout.bar_at(lane, x, tolerance, y=y)
            if hit is not None:
                return lane, hit
        return None

    def name_of(self, instr: int) -> str:
        """Instruction text with parameter symbols shortened (they repeat the mangled kernel name)."""
        text = self._names[instr]
        return text.replace(self.param_prefix, "param_") if self.param_prefix else text

    def _stall_links(self) -> StallLinks:
        if self._links is None or self._links.trace is not self._trace:
            self._links = StallLinks(self._trace)
        return self._links

    def waited_instruction(self, stall_row: int) -> int | None:
        """The 0-based instruction a stall waits on: its warp's next issue at or after the stall's
        end (None when the warp issues nothing more, e.g. a finished warp); engine.stall_links,
        as the timeline CSV and the Chrome trace name it."""
        if self._trace is None:
            return None
        k = int(self._stall_links().waits_for([stall_row])[0])
        return k if k >= 0 else None

    def holding_instruction(self, stall_row: int) -> int | None:
        """The 0-based instruction whose result (or barrier) holds a stall, or None."""
        if self._trace is None:
            return None
        k = int(self._stall_links().held_by([stall_row])[0])
        return k if k >= 0 else None

    def describe(self, lane_index: int, bar: int) -> str:
        """Tooltip text of one bar."""
        assert self._layout is not None and self._trace is not None
        lane = self._layout.lanes[lane_index]
        row = int(lane.row[bar])
        if lane.source == "stalls":
            rec = self._trace.stalls[row]
            start, end = float(rec["start"]), float(rec["end"])
            waited = self.waited_instruction(row)
            target = (f"\nwaits to issue #{waited + 1}: {self.name_of(waited)}" if waited is not None else "")
            held = self.holding_instruction(row)
            if held is not None:
                target += f"\nheld by #{held + 1}: {self.name_of(held)}"
            return (f"stall: {STALL_CAUSES[int(rec['cause'])].replace('_', ' ')} · warp {int(rec['warp'])}"
                    f"{target}\ncycles {start:g} → {end:g} ({self._span_text(end - start)})")
        rec = self._trace.issues[row]
        instr = int(rec["instr"])
        issue, done = float(rec["issue"]), float(rec["complete"])
        sub = self._layout.subsystems[int(rec["subsystem"])]
        return (f"{self.name_of(instr)}\ninstruction #{instr + 1} · {sub}\n"
                f"warp {int(rec['warp'])} · block {int(rec['block'])}\n"
                f"issue {issue:g} → complete {done:g} ({self._span_text(done - issue)})")

    def scene_point(self, x: float, y: float) -> QPointF:
        """Scene position of (x cycles, y layout units): lets callers synthesise mouse input."""
        return self.plot.getViewBox().mapViewToScene(QPointF(x, self.to_view_y(y)))

    # ---- lane geometry (view units are pixels of the plot's height) ----------------------------
    def lane_height(self) -> int:
        """Height in pixels of a subsystem lane (the issue-slot lane is 3/4 of it)."""
        return self._lane_px

    def set_lane_height(self, px: int) -> None:
        px = int(min(max(px, MIN_LANE_PX), MAX_LANE_PX))
        if self.lane_spin.value() != px:
            self.lane_spin.blockSignals(True)
            self.lane_spin.setValue(px)
            self.lane_spin.blockSignals(False)
        if px != self._lane_px:
            self._lane_px = px
            self._respace()

    def warp_groups(self) -> list[tuple[str, list[int]]]:
        """(label, lane indices) of every warp group, top to bottom."""
        return [(g.label, list(g.lanes)) for g in self._groups]

    def collapsed_groups(self) -> set[str]:
        return set(self._collapsed)

    def set_group_collapsed(self, label: str, collapsed: bool) -> None:
        if collapsed:
            self._collapsed.add(label)
        else:
            self._collapsed.discard(label)
        self._respace()

    def hidden_groups(self) -> set[str]:
        """Labels of the warp groups filtered out of the chart."""
        return set(self._hidden)

    def set_hidden_groups(self, labels: Iterable[str]) -> None:
        """Show only the warp groups not in ``labels`` (the unit lanes always show)."""
        hidden = set(labels) & {g.label for g in self._groups} if self._groups else set(labels)
        if hidden == self._hidden:
            return
        self._hidden = hidden
        self._show_filter()
        self._respace()
        self.optionsChanged.emit()

    def set_group_hidden(self, label: str, hidden: bool) -> None:
        self.set_hidden_groups(self._hidden | {label} if hidden else self._hidden - {label})

    def show_only_group(self, label: str) -> None:
        self.set_hidden_groups({g.label for g in self._groups if g.label != label})

    def _show_filter(self) -> None:
        total = len(self._groups)
        shown = total - len(self._hidden)
        self.groups_button.setText("warps: all" if not self._hidden else f"warps: {shown} of {total}")
        self.groups_button.setEnabled(total > 0)

    def _fill_groups_menu(self) -> None:
        menu = self._groups_menu
        menu.clear()
        every = menu.addAction("Show every warp group")
        every.setEnabled(bool(self._hidden))
        every.triggered.connect(lambda: self.set_hidden_groups(set()))
        menu.addSeparator()
        for group in self._groups:
            action = menu.addAction(group.label)
            action.setCheckable(True)
            action.setChecked(group.label not in self._hidden)
            action.toggled.connect(lambda on, label=group.label: self.set_group_hidden(label, not on))

    def set_all_collapsed(self, collapsed: bool, automatic: bool = False) -> None:
        """Collapse (or expand) every warp group: the user's choice, which from then on holds for
        every trace, or (``automatic``) what :meth:`set_collapse_auto` decided."""
        self._collapse_auto = automatic
        self._collapse_all = collapsed
        self._show_collapse_choice()
        self._collapsed = {g.label for g in self._groups} if collapsed else set()
        self._respace()
        self.optionsChanged.emit()

    def _show_collapse_choice(self) -> None:
        """The box shows the collapse-all state (without emitting a change) and, in its tooltip,
        whether it is automatic: its text stays short, a longer one widens the toolbar's minimum."""
        if self.collapse_box.isChecked() != self._collapse_all:
            self.collapse_box.blockSignals(True)
            self.collapse_box.setChecked(self._collapse_all)
            self.collapse_box.blockSignals(False)
        auto = (f"\n\nNow automatic: collapsed while warp lanes would be thinner than {AUTO_COLLAPSE_PX:g} px, "
                "expanded when there is room, until you click it (View › Reset layout: automatic again)"
                if self._collapse_auto else "")
        self.collapse_box.setToolTip("Draw each block's warp lanes as one heat strip: over time, the share "
                                     "of its warps issuing (dark blue), waiting (the stall colours) or idle "
                                     "(light grey); hover it for the shares. Right-click a group for just "
                                     "that one" + auto)

    def collapse_is_automatic(self) -> bool:
        return self._collapse_auto

    def set_collapse_auto(self) -> None:
        """Back to the automatic choice: warp groups collapsed whenever their lanes would be
        thinner than :data:`AUTO_COLLAPSE_PX`, expanded otherwise (again on every resize)."""
        self.set_all_collapsed(self._warp_lanes_too_thin(), automatic=True)

    def _warp_lanes_too_thin(self) -> bool:
        """Whether every warp lane expanded would get less than AUTO_COLLAPSE_PX of the plot."""
        if self._layout is None:
            return False
        warp = sum(1 for ln in self._layout.lanes if not lane_group(ln.kind).major)
        return bool(warp) and self._warp_room_px() / warp < AUTO_COLLAPSE_PX

    def _major_lane_px(self, kind: str) -> float:
        """Height of an issue or subsystem lane (the issue lane is a share of the others')."""
        return self._lane_px * (ISSUE_LANE_SHARE if kind == "issue" else 1.0)

    def _warp_room_px(self) -> float:
        """Plot pixels left for the warp lanes: what the issue/subsystem lanes and the gaps
        between lane kinds leave."""
        assert self._layout is not None
        lanes = self._layout.lanes
        major = sum(self._major_lane_px(ln.kind) for ln in lanes if lane_group(ln.kind).major)
        gaps = sum(1 for k in range(1, len(lanes)) if lanes[k].kind != lanes[k - 1].kind) * GAP_PX
        return self._plot_px() - major - gaps

    def lane_band_px(self, lane_index: int) -> tuple[float, float]:
        """Top and height (view units = plot pixels) of a lane."""
        return float(self._lane_top[lane_index]), float(self._lane_h[lane_index])

    def _warp_groups(self) -> list[WarpGroup]:
        assert self._layout is not None and self._trace is not None
        warp_lanes = [k for k, ln in enumerate(self._layout.lanes) if not lane_group(ln.kind).major]
        if not warp_lanes:
            return []
        issues = self._trace.issues
        # block of every warp by one scatter (no sort: this runs on the UI thread after each edit)
        block_of = np.full(int(issues["warp"].max()) + 1 if len(issues) else 0, -1, np.int64)
        block_of[issues["warp"]] = issues["block"]
        if self._layout.warp_slots:
            present = block_of[block_of >= 0]
            per_block = max(1, int(np.bincount(present).max())) if len(present) else 8
            groups = []
            for start in range(0, len(warp_lanes), per_block):
                part = warp_lanes[start:start + per_block]
                groups.append(WarpGroup(f"slots {start}–{start + len(part) - 1}", part))
            return groups
        by_block: dict[int, list[int]] = {}
        for k in warp_lanes:
            warps = self._layout.lanes[k].warps
            block = int(block_of[warps[0]]) if warps and warps[0] < len(block_of) else -1
            by_block.setdefault(block, []).append(k)
        return [WarpGroup(f"block {b}" if b >= 0 else "other warps", lanes) for b, lanes in by_block.items()]

    def _plot_px(self) -> float:
        h = float(self.plot.getViewBox().height())
        # a chart on screen has the height it has, however small; one never shown yet (an export
        # being set up) has no real height
        return h if h > 1 and self.graphics.isVisible() else FALLBACK_VIEW_PX

    def _compute_geometry(self) -> None:
        """Top and height (pixels) of every lane for the plot's current height."""
        assert self._layout is not None
        lanes = self._layout.lanes
        n = len(lanes)
        top, height = np.zeros(n), np.zeros(n)
        group_of = {k: g for g in self._groups for k in g.lanes}
        major_height = {k: self._major_lane_px(ln.kind) for k, ln in enumerate(lanes) if lane_group(ln.kind).major}
        kinds = [ln.kind for ln in lanes]
        hidden = self._hidden
        expanded = sum(len(g.lanes) for g in self._groups if g.label not in self._collapsed | hidden)
        collapsed = sum(1 for g in self._groups if g.label in self._collapsed - hidden)
        room = self._warp_room_px()
        strip_px = COLLAPSED_GROUP_PX
        if collapsed:
            # strips share what the expanded lanes (at their automatic minimum) leave
            share = (room - expanded * AUTO_COLLAPSE_PX) / collapsed
            strip_px = min(COLLAPSED_GROUP_PX, max(MIN_COLLAPSED_GROUP_PX, share))
        self._strip_px = strip_px
        rest = room - collapsed * strip_px
        warp_px = max(rest / expanded, MIN_WARP_LANE_PX) if expanded else 0.0
        y = 0.0
        done: set[int] = set()
        for k in range(n):
            if k in done:
                continue
            if k and kinds[k] != kinds[k - 1]:
                y += GAP_PX
            group = group_of.get(k)
            if group is not None and group.label in hidden:       # filtered out: no height
                top[group.lanes], height[group.lanes] = y, 0.0
                done.update(group.lanes)
                continue
            if group is not None and group.label in self._collapsed:
                top[group.lanes], height[group.lanes] = y, strip_px
                done.update(group.lanes)
                y += strip_px
                continue
            top[k] = y
            height[k] = major_height.get(k, warp_px)
            y += height[k]
        self._lane_top, self._lane_h, self._view_height = top, height, max(y, 1.0)
        self._geometry_px = self._plot_px()

    def _row_geometry(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Drawing rows: every lane's sub-rows numbered in order. Returns each lane's first row
        and every row's top and height (view units)."""
        assert self._layout is not None
        sub = np.array([ln.sub_rows for ln in self._layout.lanes], dtype=np.int64)
        first = np.cumsum(sub) - sub
        each = np.repeat(self._lane_h / sub, sub)
        tops = np.repeat(self._lane_top, sub) + (np.arange(int(sub.sum())) - np.repeat(first, sub)) * each
        # a collapsed group's bars are not drawn: its heat strip stands in for them
        shown = np.ones(len(sub), bool)
        for group in self._groups:
            if group.label in self._collapsed or group.label in self._hidden:
                shown[group.lanes] = False
        heights = np.where(np.repeat(shown, sub), each, 0.0)
        return first, tops, heights

    # ---- heat strips of the collapsed groups ---------------------------------------------------
    def group_activity(self, label: str) -> GroupActivity:
        """What the warps of group ``label`` do over the run (engine.timeline.activity.group_activity),
        computed once per trace."""
        self._activities([label])
        return self._activity[label]

    def _activities(self, labels: list[str]) -> None:
        """The activity of every group of ``labels`` not yet computed for this trace, in one pass."""
        assert self._trace is not None and self._layout is not None
        todo = [g for g in self._groups if g.label in labels and g.label not in self._activity]
        if not todo:
            return
        warps = [[w for k in g.lanes for w in self._layout.lanes[k].warps] for g in todo]
        found = group_activities(self._trace, warps, [len(g.lanes) for g in todo])
        self._activity.update({g.label: a for g, a in zip(todo, found, strict=True)})

    def _strip_groups(self) -> list[WarpGroup]:
        """The groups drawn as heat strips, top to bottom: collapsed and not filtered out."""
        return [g for g in self._groups if g.label in self._collapsed and g.label not in self._hidden]

    def heat_strips(self) -> HeatStrips:
        return self._heat

    def _update_heat(self) -> None:
        """Give every collapsed (and shown) group's strip its activity and band (after a new
        trace, a collapse, a filter or a re-spacing)."""
        bands = []
        if self._layout is not None and self._trace is not None:
            strips = self._strip_groups()
            self._activities([g.label for g in strips])
            for group in strips:
                first = group.lanes[0]
                bands.append((self.group_activity(group.label), float(self._lane_top[first]),
                              float(self._lane_h[first])))
        self._heat.set_bands(bands, self._layout.cycles if self._layout is not None else 0.0)
        for item in self._heat_items:
            item.refresh()

    def _heat_text(self, x: float, vy: float) -> str | None:
        """Tooltip of the heat strip under (x cycles, vy view units), None off the strips."""
        hit = self._heat.at(x, vy)
        if hit is None:
            return None
        k, a, b, shares = hit
        collapsed = self._strip_groups()
        group = collapsed[k] if k < len(collapsed) else None
        noun = "slots" if self._layout is not None and self._layout.warp_slots else "warps"
        head = f"{group.label} (collapsed, {len(group.lanes)} {noun})" if group is not None else "collapsed group"
        parts = [f"{100 * s:.0f} % {HEAT_TITLES[c]}" for c, s in enumerate(shares.tolist()) if s >= 0.005]
        return f"{head}\ncycles {a:,.6g} → {b:,.6g}\n" + "\n".join(parts)

    def _respace(self) -> None:
        """New lane geometry (plot resized, lane height changed, a group collapsed): move the
        bars of every item, no re-sorting."""
        if self._layout is None:
            return
        self._compute_geometry()
        self._row_first, self._row_tops, self._row_heights = self._row_geometry()
        for item in self._data_items + self._stall_items:
            item.set_lane_geometry(self._row_tops, self._row_heights)
        self._raster.refresh_bounds()
        self._update_heat()
        if self._highlighted:
            self.highlight_instructions(self._highlighted)
        self._hover_box.hide()
        self._tip.hide()
        self.refresh_lane_ticks()
        self._apply_y_range()

    def _apply_y_range(self) -> None:
        vb = self.plot.getViewBox()
        vb.setLimits(yMin=0.0, yMax=self._view_height)
        vb.setYRange(0.0, self._view_height, padding=0.0)

    def _view_resized(self) -> None:
        if self._layout is not None and abs(self._plot_px() - self._geometry_px) >= 1.0:
            if self._collapse_auto and self._warp_lanes_too_thin() != self._collapse_all:
                self.set_all_collapsed(not self._collapse_all, automatic=True)      # respaces too
                return
            self._respace()

    def showEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        self._view_resized()       # laid out while hidden: for the fallback height

    def to_view_y(self, y: float) -> float:
        """View y (pixels) of layout y."""
        assert self._layout is not None
        k = self._layout.lane_at(y)
        if k is None:
            tops = [ln.y for ln in self._layout.lanes] + [self._layout.height]
            return float(np.interp(y, tops, list(self._lane_top) + [self._view_height]))
        lane = self._layout.lanes[k]
        return float(self._lane_top[k] + (y - lane.y) / lane.height * self._lane_h[k])

    def _lanes_at_view_y(self, vy: float) -> list[tuple[int, float]]:
        """(lane, layout y) of every lane drawn at view y (several in a collapsed group)."""
        assert self._layout is not None
        hit = np.flatnonzero((self._lane_top <= vy) & (vy < self._lane_top + self._lane_h))
        out = []
        for k in hit.tolist():
            lane = self._layout.lanes[k]
            out.append((k, lane.y + (vy - self._lane_top[k]) / self._lane_h[k] * lane.height))
        return out

    # ---- building the items -------------------------------------------------------------------

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
        parts = [(self._rows_of(k), ln.x0, ln.x1, self._color_keys(ln)) for k, ln in enumerate(self._layout.lanes)
                 if ln.source == source]
        if not parts:
            empty = np.zeros(0)
            return empty.astype(np.int64), empty, empty, empty.astype(np.int16)
        return tuple(np.concatenate(col) for col in zip(*parts, strict=True))  # type: ignore[return-value]

    def _color_keys(self, lane: Lane) -> np.ndarray:
        assert self._layout is not None and self._trace is not None
        if self._mode == "block" and lane.source == "issues":
            return (self._trace.issues["block"][lane.row] % WARP_COLORS).astype(np.int16)
        return self._layout.color_keys(lane, self._trace, "warp" if self._mode == "block" else self._mode)

    def _split_by_key(self, source: str, color_of, name_of,  # noqa: ANN001
                      old: list[BarsItem]) -> tuple[list[BarsItem], bool]:
        """One item per colour key of the bars of ``source``. When the keys give the same
        (name, colour) list as the items in ``old``, those items are refilled in place;
        otherwise they leave the plot and new ones are made. Returns the items and whether
        they are new."""
        lane, x0, x1, key = self._collect(source)
        # One sort for every item, into (key, row, x0) order: within a lane the bars come by x0,
        # and lanes come in row order, so a stable sort on (key, row) alone suffices (a linear
        # counting sort). Each item then gets a contiguous slice, already in the order BarsItem
        # keeps.
        keys, lo, hi, lane, x0, x1 = split_by_key(key, lane, x0, x1)
        specs = [(name_of(k), color_of(k)) for k in keys.tolist()]
        reuse = len(old) == len(specs) and all(
            item.name == name and item.color.rgba() == QColor(color).rgba()
            for item, (name, color) in zip(old, specs, strict=True))
        if not reuse:
            for item in old:
                self.plot.removeItem(item)
        items = []
        for k, (name, color) in enumerate(specs):
            part = slice(int(lo[k]), int(hi[k]))
            if reuse:
                item = old[k]
                item.set_data(lane[part], x0[part], x1[part], self._row_tops, self._row_heights, presorted=True)
            else:
                item = BarsItem(lane[part], x0[part], x1[part], self._row_tops, self._row_heights, color,
                                name=name, presorted=True)
                self.plot.addItem(item)
            items.append(item)
        return items, not reuse

    def _build_stall_items(self) -> bool:
        self._stall_items, changed = self._split_by_key("stalls", lambda c: colors.stall_color(c, self._theme),
                                                        lambda c: STALL_CAUSES[c], self._stall_items)
        return changed

    def _build_data_items(self, force_legend: bool = False) -> None:
        assert self._layout is not None and self._trace is not None
        if self._mode in ("warp", "block"):
            ids = np.flatnonzero(np.bincount(self._trace.issues[self._mode])) if len(self._trace.issues) \
                else np.zeros(0, np.int64)
            noun = self._mode

            def name_of(k: int) -> str:
                return _id_list(noun, ids[ids % WARP_COLORS == k].tolist())
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
        """Lane labels on the y axis: every issue/subsystem lane; each warp group by name (▸ when
        collapsed) and, when its lanes are tall enough, every warp lane."""
        if self._layout is None:
            return
        lanes = self._layout.lanes
        ticks = [(self._lane_top[k] + self._lane_h[k] / 2, ln.label)
                 for k, ln in enumerate(lanes) if lane_group(ln.kind).major]
        last_label = -1e9
        for group in self._groups:
            if group.label in self._hidden:
                continue
            first = group.lanes[0]
            collapsed = group.label in self._collapsed
            top = float(self._lane_top[first])
            if collapsed:
                if top - last_label >= LABEL_PX:       # thin strips: every other name, as they fit
                    ticks.append((top + self._strip_px / 2, f"▸ {group.label}"))
                    last_label = top
                continue
            each = float(self._lane_h[first])
            if each >= LABEL_PX:
                ticks.extend((self._lane_top[k] + each / 2, lanes[k].label) for k in group.lanes)
                last_label = top + each * len(group.lanes)
            elif top - last_label >= LABEL_PX:      # group names only, as far as they fit
                ticks.append((top + min(each * len(group.lanes), LABEL_PX) / 2, group.label))
                last_label = top
        ticks = self._spaced(ticks)
        # one tick level: pyqtgraph drops a second level's text once the first fills the axis.
        # Unchanged ticks (the next trace of an edit) keep the axis's cached labels.
        if ticks != self._ticks:
            self._ticks = ticks
            self.plot.getAxis("left").setTicks([ticks])
        if self._groups:
            self._separator.setValue(float(self._lane_top[self._groups[0].lanes[0]]) - GAP_PX / 2)
            self._separator.show()

    def label_spacing_px(self) -> float:
        """Least distance in screen pixels between two lane labels' centres: the axis font's
        line less its leading, as pyqtgraph measures a label (0.8 of the line)."""
        axis = self.plot.getAxis("left")
        return max(LABEL_PX, 0.8 * QFontMetricsF(axis.style["tickFont"] or axis.font()).height())

    def _spaced(self, ticks: list[tuple[float, str]]) -> list[tuple[float, str]]:
        """The labels, top to bottom, that keep :meth:`label_spacing_px` from the one above on
        screen: when the plot is shorter than the lanes want (a pinned baseline, a small window)
        the lanes are drawn squeezed, and a label that would print over its neighbour is left out."""
        if not ticks:
            return ticks
        scale = min(1.0, self._plot_px() / self._view_height) if self._view_height > 0 else 1.0
        gap = self.label_spacing_px()
        kept: list[tuple[float, str]] = []
        for y, text in sorted(ticks, key=lambda t: t[0]):
            if not kept or (y - kept[-1][0]) * scale >= gap - 1e-6:
                kept.append((y, text))
        return kept

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
        return self._bar_at_view(p.x(), p.y())

    def _on_mouse_moved(self, scene_pos: QPointF) -> None:
        if self._show_heat_tip(scene_pos):
            return
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
        scale = self._lane_h[lane_index] / lane.height
        top, height = self._lane_top[lane_index] + (top - lane.y) * scale, height * scale
        self._hover_box.setRect(QRectF(x0, top + 0.05 * height, max(x1 - x0, 1e-9), 0.9 * height))
        self._hover_box.show()
        self._place_tip(self.plot.getViewBox().mapSceneToView(scene_pos), text)

    def _place_tip(self, p: QPointF, text: str) -> None:
        """Show ``text`` as the tooltip at view point ``p``."""
        (v0, v1), (w0, w1) = self.plot.getViewBox().viewRange()
        # open towards the middle of the view so the box is never cut off at an edge
        self._tip.setAnchor((1.0 if p.x() > (v0 + v1) / 2 else -0.02, 1.05 if p.y() > (w0 + w1) / 2 else -0.15))
        self._tip.setPos(p)
        if text != self.hover_text:
            self.hover_text = text
            self._tip.setText(text)
            self.hovered.emit(text)
        self._tip.show()

    def _show_heat_tip(self, scene_pos: QPointF) -> bool:
        """Over a collapsed group's heat strip: its bucket's shares as the tooltip."""
        vb = self.plot.getViewBox()
        if self._layout is None or not self._heat.bands or not vb.sceneBoundingRect().contains(scene_pos):
            return False
        p = vb.mapSceneToView(scene_pos)
        text = self._heat_text(p.x(), p.y())
        if text is None:
            return False
        self._hover_box.hide()
        self._place_tip(p, text)
        return True

    def leaveEvent(self, event: object) -> None:
        # no move event follows the pointer out of the chart: hide the tooltip here
        super().leaveEvent(event)
        self.hide_tip()

    def hide_tip(self) -> None:
        self._hover_box.hide()
        self._tip.hide()
        if self.hover_text:
            self.hover_text = ""
            self.hovered.emit("")

    def group_at(self, scene_pos: QPointF) -> str | None:
        """Label of the warp group under a scene point (on its lanes or their axis labels)."""
        if self._layout is None:
            return None
        vy = self.plot.getViewBox().mapSceneToView(scene_pos).y()
        for k, _ in self._lanes_at_view_y(vy):
            for group in self._groups:
                if k in group.lanes:
                    return group.label
        return None

    def _group_menu(self, scene_pos: QPointF, screen_pos: QPoint) -> None:
        menu = QMenu(self)
        label = self.group_at(scene_pos)
        if label is not None:
            collapsed = label in self._collapsed
            action = menu.addAction(f"{'Expand' if collapsed else 'Collapse'} {label}")
            action.triggered.connect(lambda: self.set_group_collapsed(label, not collapsed))
            menu.addAction(f"Hide {label}").triggered.connect(lambda: self.set_group_hidden(label, True))
            menu.addAction(f"Show only {label}").triggered.connect(lambda: self.show_only_group(label))
        menu.addAction("Collapse every warp group").triggered.connect(lambda: self.set_all_collapsed(True))
        menu.addAction("Expand every warp group").triggered.connect(lambda: self.set_all_collapsed(False))
        if self._hidden:
            menu.addAction("Show every warp group").triggered.connect(lambda: self.set_hidden_groups(set()))
        menu.addSeparator()
        menu.addAction("Fit the whole run").triggered.connect(self.fit)
        menu.popup(screen_pos)

    def _on_mouse_clicked(self, event: object) -> None:
        if event.button() == Qt.MouseButton.RightButton:
            self._group_menu(event.scenePos(), event.screenPos().toPoint())
            return
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
            waited = self.waited_instruction(row)
            if waited is not None:          # a stall selects the instruction it holds back
                self.instructionClicked.emit(waited)
        else:
            self.barClicked.emit(row)
            self.instructionClicked.emit(int(self._trace.issues["instr"][row]))


def _id_list(noun: str, ids: list[int]) -> str:
    """Legend text of one colour: the warps (or blocks) drawn in it, e.g. "warps 1, 13, 25 …"."""
    if len(ids) == 1:
        return f"{noun} {ids[0]}"
    shown = ", ".join(str(i) for i in ids[:3])
    return f"{noun}s {shown}" + (" …" if len(ids) > 3 else "")
