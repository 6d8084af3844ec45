"""Where each lane of the chart is drawn. Lanes are spaced in screen pixels, not in the layout's
units: the issue and subsystem lanes keep a readable height (user-resizable) whatever the number
of warps, and the warp lanes share what is left. View y coordinates are these pixels; the
layout's units are mapped lane by lane."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from engine.timeline.lanes import lane_group
from gui.gantt.warp_groups import AUTO_COLLAPSE_PX

if TYPE_CHECKING:
    from gui.gantt.widget import GanttView

DEFAULT_LANE_PX = 26
MIN_LANE_PX, MAX_LANE_PX = 12, 120
ISSUE_LANE_SHARE = 0.75       # the issue-slot lane is a little lower than a subsystem lane
GAP_PX = 6.0                  # between lane groups
COLLAPSED_GROUP_PX = 14.0     # a collapsed warp group: one heat strip of its warps' issue and stalls
MIN_COLLAPSED_GROUP_PX = 6.0  # ... thinner (down to this) when the strips would not fit otherwise
MIN_WARP_LANE_PX = 1.0
FALLBACK_VIEW_PX = 560.0      # the plot's height before it is first laid out (offscreen exports)


class LaneGeometry:
    """Top and height (view units = plot pixels) of every lane and of every drawing row (a lane's
    sub-rows), for the plot's current height, lane height and collapsed or hidden groups."""

    def __init__(self, chart: GanttView) -> None:
        self._chart = chart
        self.lane_px = DEFAULT_LANE_PX
        self.strip_px = COLLAPSED_GROUP_PX      # a collapsed group's height in the current geometry
        self.lane_top = np.zeros(0)
        self.lane_h = np.zeros(0)
        self.view_height = 0.0                  # total height in view units (pixels)
        self.geometry_px = 0.0                  # plot height the geometry was computed for
        self.row_first = np.zeros(0, np.int64)  # each lane's first drawing row
        self.row_tops = np.zeros(0)
        self.row_heights = np.zeros(0)

    def plot_px(self) -> float:
        chart = self._chart
        h = float(chart.plot.getViewBox().height())
        # a chart on screen has the height it has, however small; one never shown yet (an export
        # being set up) has no real height
        return h if h > 1 and chart.graphics.isVisible() else FALLBACK_VIEW_PX

    def major_lane_px(self, kind: str) -> float:
        """Height of an issue or subsystem lane (the issue lane is a share of the others')."""
        return self.lane_px * (ISSUE_LANE_SHARE if kind == "issue" else 1.0)

    def warp_room_px(self) -> float:
        """Plot pixels left for the warp lanes: what the issue/subsystem lanes and the gaps
        between lane kinds leave."""
        layout = self._chart.layout_data
        assert layout is not None
        lanes = layout.lanes
        major = sum(self.major_lane_px(ln.kind) for ln in lanes if lane_group(ln.kind).major)
        gaps = sum(1 for k in range(1, len(lanes)) if lanes[k].kind != lanes[k - 1].kind) * GAP_PX
        return self.plot_px() - major - gaps

    def warp_lanes_too_thin(self) -> bool:
        """Whether every warp lane expanded would get less than AUTO_COLLAPSE_PX of the plot."""
        layout = self._chart.layout_data
        if layout is None:
            return False
        warp = sum(1 for ln in layout.lanes if not lane_group(ln.kind).major)
        return bool(warp) and self.warp_room_px() / warp < AUTO_COLLAPSE_PX

    def lane_band_px(self, lane_index: int) -> tuple[float, float]:
        """Top and height (view units = plot pixels) of a lane."""
        return float(self.lane_top[lane_index]), float(self.lane_h[lane_index])

    def update(self) -> None:
        """Lanes and drawing rows for the plot's current height."""
        self._compute_lanes()
        self.row_first, self.row_tops, self.row_heights = self._rows()

    def _compute_lanes(self) -> None:
        """Top and height (pixels) of every lane."""
        layout = self._chart.layout_data
        assert layout is not None
        groups = self._chart.groups
        lanes = layout.lanes
        n = len(lanes)
        top, height = np.zeros(n), np.zeros(n)
        group_of = {k: g for g in groups.all for k in g.lanes}
        major_height = {k: self.major_lane_px(ln.kind) for k, ln in enumerate(lanes) if lane_group(ln.kind).major}
        kinds = [ln.kind for ln in lanes]
        hidden, collapsed_labels = groups.hidden, groups.collapsed
        expanded = sum(len(g.lanes) for g in groups.all if g.label not in collapsed_labels | hidden)
        collapsed = sum(1 for g in groups.all if g.label in collapsed_labels - hidden)
        room = self.warp_room_px()
        strip_px = COLLAPSED_GROUP_PX
        if collapsed:
            # strips share what the expanded lanes (at their automatic minimum) leave
            share = (room - expanded * AUTO_COLLAPSE_PX) / collapsed
            strip_px = min(COLLAPSED_GROUP_PX, max(MIN_COLLAPSED_GROUP_PX, share))
        self.strip_px = strip_px
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
            if group is not None and group.label in collapsed_labels:
                top[group.lanes], height[group.lanes] = y, strip_px
                done.update(group.lanes)
                y += strip_px
                continue
            top[k] = y
            height[k] = major_height.get(k, warp_px)
            y += height[k]
        self.lane_top, self.lane_h, self.view_height = top, height, max(y, 1.0)
        self.geometry_px = self.plot_px()

    def _rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Drawing rows: every lane's sub-rows numbered in order. Returns each lane's first row
        and every row's top and height (view units)."""
        layout = self._chart.layout_data
        assert layout is not None
        sub = np.array([ln.sub_rows for ln in layout.lanes], dtype=np.int64)
        first = np.cumsum(sub) - sub
        each = np.repeat(self.lane_h / sub, sub)
        tops = np.repeat(self.lane_top, sub) + (np.arange(int(sub.sum())) - np.repeat(first, sub)) * each
        # a collapsed group's bars are not drawn: its heat strip stands in for them
        shown = np.ones(len(sub), bool)
        groups = self._chart.groups
        for group in groups.all:
            if group.label in groups.collapsed or group.label in groups.hidden:
                shown[group.lanes] = False
        heights = np.where(np.repeat(shown, sub), each, 0.0)
        return first, tops, heights

    def rows_of(self, k: int, sel: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Drawing row of the bars ``sel`` of lane ``k``."""
        layout = self._chart.layout_data
        assert layout is not None
        lane = layout.lanes[k]
        base = self.row_first[k]
        n = len(lane.x0[sel])
        return np.full(n, base, np.int64) if lane.sub_row is None else base + lane.sub_row[sel].astype(np.int64)

    def to_view_y(self, y: float) -> float:
        """View y (pixels) of layout y."""
        layout = self._chart.layout_data
        assert layout is not None
        k = layout.lane_at(y)
        if k is None:
            tops = [ln.y for ln in layout.lanes] + [layout.height]
            return float(np.interp(y, tops, list(self.lane_top) + [self.view_height]))
        lane = layout.lanes[k]
        return float(self.lane_top[k] + (y - lane.y) / lane.height * self.lane_h[k])

    def lanes_at_view_y(self, vy: float) -> list[tuple[int, float]]:
        """(lane, layout y) of every lane drawn at view y (several in a collapsed group)."""
        layout = self._chart.layout_data
        assert layout is not None
        hit = np.flatnonzero((self.lane_top <= vy) & (vy < self.lane_top + self.lane_h))
        out = []
        for k in hit.tolist():
            lane = layout.lanes[k]
            out.append((k, lane.y + (vy - self.lane_top[k]) / self.lane_h[k] * lane.height))
        return out
