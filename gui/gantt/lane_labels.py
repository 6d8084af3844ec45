"""The chart's lane labels on the left axis (each unit lane, each warp group or warp lane as far
as they fit) and the line between the unit lanes and the warp lanes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyqtgraph as pg
from PySide6.QtGui import QFontMetricsF

from engine.timeline.lanes import lane_group
from gui.gantt.lane_geometry import GAP_PX
from gui.theme import Theme

if TYPE_CHECKING:
    from gui.gantt.widget import GanttView

LABEL_PX = 12.0               # a warp lane needs this much height for its own label


class LaneLabels:
    """Ticks of the left axis, kept apart by the axis font's line."""

    def __init__(self, chart: GanttView) -> None:
        self._chart = chart
        self._ticks: list[tuple[float, str]] | None = None   # the lane labels on the axis
        self.separator = pg.InfiniteLine(angle=0)
        self.separator.hide()

    def apply_theme(self, theme: Theme) -> None:
        self.separator.setPen(pg.mkPen(theme.separator, width=1))

    def clear(self) -> None:
        """No labels (the chart shows no trace)."""
        self._chart.plot.getAxis("left").setTicks([])
        self._ticks = None

    def refresh(self) -> None:
        """Lane labels on the y axis: every issue/subsystem lane; each warp group by name (▸ when
        collapsed) and, when its lanes are tall enough, every warp lane."""
        chart = self._chart
        layout = chart.layout_data
        if layout is None:
            return
        geometry, groups = chart.lane_geometry, chart.groups
        lane_top, lane_h = geometry.lane_top, geometry.lane_h
        lanes = layout.lanes
        ticks = [(lane_top[k] + lane_h[k] / 2, ln.label)
                 for k, ln in enumerate(lanes) if lane_group(ln.kind).major]
        last_label = -1e9
        for group in groups.all:
            if group.label in groups.hidden:
                continue
            first = group.lanes[0]
            collapsed = group.label in groups.collapsed
            top = float(lane_top[first])
            if collapsed:
                if top - last_label >= LABEL_PX:       # thin strips: every other name, as they fit
                    ticks.append((top + geometry.strip_px / 2, f"▸ {group.label}"))
                    last_label = top
                continue
            each = float(lane_h[first])
            if each >= LABEL_PX:
                ticks.extend((lane_top[k] + each / 2, lanes[k].label) for k in group.lanes)
                last_label = top + each * len(group.lanes)
            elif top - last_label >= LABEL_PX:      # group names only, as far as they fit
                ticks.append((top + min(each * len(group.lanes), LABEL_PX) / 2, group.label))
                last_label = top
        ticks = self._spaced(ticks)
        # one tick level: pyqtgraph drops a second level's text once the first fills the axis.
        # Unchanged ticks (the next trace of an edit) keep the axis's cached labels.
        if ticks != self._ticks:
            self._ticks = ticks
            chart.plot.getAxis("left").setTicks([ticks])
        if groups.all:
            self.separator.setValue(float(lane_top[groups.all[0].lanes[0]]) - GAP_PX / 2)
            self.separator.show()

    def spacing_px(self) -> float:
        """Least distance in screen pixels between two lane labels' centres: the axis font's
        line less its leading, as pyqtgraph measures a label (0.8 of the line)."""
        axis = self._chart.plot.getAxis("left")
        return max(LABEL_PX, 0.8 * QFontMetricsF(axis.style["tickFont"] or axis.font()).height())

    def _spaced(self, ticks: list[tuple[float, str]]) -> list[tuple[float, str]]:
        """The labels, top to bottom, that keep :meth:`spacing_px` from the one above on
        screen: when the plot is shorter than the lanes want (a pinned baseline, a small window)
        the lanes are drawn squeezed, and a label that would print over its neighbour is left out."""
        if not ticks:
            return ticks
        geometry = self._chart.lane_geometry
        scale = min(1.0, geometry.plot_px() / geometry.view_height) if geometry.view_height > 0 else 1.0
        gap = self.spacing_px()
        kept: list[tuple[float, str]] = []
        for y, text in sorted(ticks, key=lambda t: t[0]):
            if not kept or (y - kept[-1][0]) * scale >= gap - 1e-6:
                kept.append((y, text))
        return kept
