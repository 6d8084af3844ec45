"""The chart's bar items: one :class:`BarsItem` per colour of instruction bars and per stall
cause, refilled in place when a new trace keeps the colours (the live refresh after an edit), the
raster layer that paints dense items, the outline of highlighted instructions, and the legend."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsItem

from gui.gantt import colors
from gui.gantt.bars_item import BarsItem, split_by_key
from gui.gantt.legend import fill_legend, swatch
from gui.gantt.raster import RasterLayer

if TYPE_CHECKING:
    from gui.gantt.widget import GanttView


class BarItems:
    """The bar items in the chart's plot, built from its layout, colouring and lane geometry."""

    def __init__(self, chart: GanttView) -> None:
        self._chart = chart
        self.data_items: list[BarsItem] = []
        self.stall_items: list[BarsItem] = []
        self.highlight: BarsItem | None = None
        self.highlighted: frozenset[int] = frozenset()
        self.raster = RasterLayer()
        self.legend_columns = 0

    def all(self) -> list[BarsItem]:
        """Every instruction and stall item."""
        return list(self.data_items + self.stall_items)

    def drawn_rect_count(self) -> int:
        """Rectangles painted at the last repaint, over every colour (culling + merging result)."""
        items = self.all() + ([self.highlight] if self.highlight is not None else [])
        return sum(item.last_drawn for item in items if item.isVisible())

    def clear(self, keep_items: bool) -> None:
        """Drop the highlight; unless ``keep_items``, the bar items and the legend too."""
        plot = self._chart.plot
        if not keep_items:
            for item in self.data_items + self.stall_items:
                plot.removeItem(item)
            self.data_items, self.stall_items = [], []
            self.raster.set_items([])
            self._chart.legend.clear()
        if self.highlight is not None:
            plot.removeItem(self.highlight)
        self.highlight = None
        self.highlighted = frozenset()

    def respace(self) -> None:
        """Move every bar to the lanes' new geometry (no re-sorting; the highlight is made again
        by :meth:`highlight_instructions`)."""
        geometry = self._chart.lane_geometry
        for item in self.data_items + self.stall_items:
            item.set_lane_geometry(geometry.row_tops, geometry.row_heights)
        self.raster.refresh_bounds()

    def highlight_instructions(self, instructions: Iterable[int]) -> None:
        """Outline every issue of these static instructions (empty: remove the highlight)."""
        chart = self._chart
        self.highlighted = frozenset(int(i) for i in instructions)
        if self.highlight is not None:
            chart.plot.removeItem(self.highlight)
            self.highlight = None
        layout, trace = chart.layout_data, chart.trace
        if not self.highlighted or layout is None or trace is None:
            return
        wanted = np.fromiter(self.highlighted, dtype=np.int64)
        lanes, x0, x1 = [], [], []
        for k, lane in enumerate(layout.lanes):
            if lane.source != "issues":
                continue
            hit = np.isin(trace.issues["instr"][lane.row], wanted)
            lanes.append(chart.lane_geometry.rows_of(k, hit))
            x0.append(lane.x0[hit])
            x1.append(lane.x1[hit])
        geometry = chart.lane_geometry
        self.highlight = BarsItem(np.concatenate(lanes), np.concatenate(x0), np.concatenate(x1), geometry.row_tops,
                                  geometry.row_heights, QColor(colors.HIGHLIGHT_FILL),
                                  outline=QColor(colors.HIGHLIGHT_OUTLINE), name="highlight")
        self.highlight.setZValue(50)
        chart.plot.addItem(self.highlight)

    def _collect(self, source: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """All bars of lanes reading ``source``: lane index, x0, x1, colour key."""
        chart = self._chart
        layout, trace = chart.layout_data, chart.trace
        assert layout is not None and trace is not None
        rows_of, keys = chart.lane_geometry.rows_of, chart.coloring.color_keys
        parts = [(rows_of(k), ln.x0, ln.x1, keys(ln, layout, trace)) for k, ln in enumerate(layout.lanes)
                 if ln.source == source]
        if not parts:
            empty = np.zeros(0)
            return empty.astype(np.int64), empty, empty, empty.astype(np.int16)
        return tuple(np.concatenate(col) for col in zip(*parts, strict=True))  # type: ignore[return-value]

    def _split_by_key(self, source: str, color_of: Callable[[int], QColor], name_of: Callable[[int], str],
                      old: list[BarsItem]) -> tuple[list[BarsItem], bool]:
        """One item per colour key of the bars of ``source``. When the keys give the same
        (name, colour) list as the items in ``old``, those items are refilled in place;
        otherwise they leave the plot and new ones are made. Returns the items and whether
        they are new."""
        plot, geometry = self._chart.plot, self._chart.lane_geometry
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
                plot.removeItem(item)
        items = []
        for k, (name, color) in enumerate(specs):
            part = slice(int(lo[k]), int(hi[k]))
            if reuse:
                item = old[k]
                item.set_data(lane[part], x0[part], x1[part], geometry.row_tops, geometry.row_heights,
                              presorted=True)
            else:
                item = BarsItem(lane[part], x0[part], x1[part], geometry.row_tops, geometry.row_heights, color,
                                name=name, presorted=True)
                plot.addItem(item)
            items.append(item)
        return items, not reuse

    def build_stall_items(self) -> bool:
        """The stall items of the shown trace; returns whether they are new (not refilled)."""
        coloring = self._chart.coloring
        self.stall_items, changed = self._split_by_key("stalls", coloring.stall_color, coloring.stall_name,
                                                       self.stall_items)
        return changed

    def build_data_items(self, force_legend: bool = False) -> None:
        """The instruction items of the shown trace in the colour mode; the legend again when
        they are new (or ``force_legend``)."""
        chart = self._chart
        assert chart.layout_data is not None and chart.trace is not None
        coloring = chart.coloring
        name_of = coloring.data_names(chart.layout_data, chart.trace)
        self.data_items, changed = self._split_by_key("issues", coloring.data_color, name_of, self.data_items)
        if changed or force_legend or not chart.legend.items:
            self.raster.set_items(self.stall_items + self.data_items)
            self.fill_legend()
        else:
            self.raster.refresh_bounds()

    def fill_legend(self) -> None:
        """One legend entry per item, wrapped to the chart's width."""
        chart = self._chart
        legend = chart.legend
        data: list[tuple[object, str]] = [(item, item.name) for item in self.data_items]
        stalls: list[tuple[object, str]] = [(item, f"stall: {item.name.replace('_', ' ')}")
                                            for item in self.stall_items]
        if not data and not stalls:
            data = [(swatch(QColor("#ffffff")), "empty trace")]
        width = max(chart.graphics.width(), 400) - 20
        self.legend_columns = fill_legend(legend, [data, stalls], width)
        # text is slow to rasterise: keep every legend entry as a cached pixmap
        for sample, label in legend.items:
            sample.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
            label.item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        # lay the legend out now: a grab() before the next event loop pass would otherwise
        # show it at the scene origin, over the chart
        legend.updateSize()
        chart.graphics.ci.layout.activate()
