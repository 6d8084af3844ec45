"""The heat strips of the chart's collapsed warp groups: each group's activity over the run
(computed once per trace), one strip item per activity category, and a strip's tooltip text."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyqtgraph as pg

from engine.timeline.activity import HEAT_CATEGORIES, GroupActivity, group_activities
from gui.gantt import colors
from gui.gantt.heat_item import HeatStripItem, HeatStrips
from gui.theme import Theme

if TYPE_CHECKING:
    from gui.gantt.widget import GanttView

_HEAT_TITLE = {"issuing": "issuing", "memory_dependency": "waiting for memory",
               "compute_dependency": "waiting for arithmetic results", "barrier": "at a barrier",
               "subsystem_busy": "waiting for a busy unit", "issue_limit": "ready, waiting for an issue slot",
               "idle": "idle (not resident, finished, or no warp in the slot)"}
HEAT_TITLES = tuple(_HEAT_TITLE[c] for c in HEAT_CATEGORIES)    # a heat strip's tooltip lines


class HeatLayer:
    """The strips of the collapsed (and shown) groups, one item per category."""

    def __init__(self, chart: GanttView) -> None:
        self._chart = chart
        self.strips = HeatStrips()
        self.items: list[HeatStripItem] = []
        self._activity: dict[str, GroupActivity] = {}   # per group label, for the shown trace

    def add_to(self, plot: pg.PlotItem, theme: Theme) -> None:
        for c, category in enumerate(HEAT_CATEGORIES):
            item = HeatStripItem(self.strips, c, colors.heat_color(category, theme), category)
            self.items.append(item)
            plot.addItem(item, ignoreBounds=True)

    def apply_theme(self, theme: Theme) -> None:
        for item, category in zip(self.items, HEAT_CATEGORIES, strict=True):
            item.set_color(colors.heat_color(category, theme))

    def forget(self) -> None:
        """A new trace (or none): activities are computed again when a strip needs one."""
        self._activity = {}

    def group_activity(self, label: str) -> GroupActivity:
        """What the warps of group ``label`` do over the run (engine.timeline.activity.group_activity),
        computed once per trace."""
        self._activities([label])
        return self._activity[label]

    def _activities(self, labels: list[str]) -> None:
        """The activity of every group of ``labels`` not yet computed for this trace, in one pass."""
        chart = self._chart
        trace, layout = chart.trace, chart.layout_data
        assert trace is not None and layout is not None
        todo = [g for g in chart.groups.all if g.label in labels and g.label not in self._activity]
        if not todo:
            return
        warps = [[w for k in g.lanes for w in layout.lanes[k].warps] for g in todo]
        found = group_activities(trace, warps, [len(g.lanes) for g in todo])
        self._activity.update({g.label: a for g, a in zip(todo, found, strict=True)})

    def update(self) -> None:
        """Give every collapsed (and shown) group's strip its activity and band (after a new
        trace, a collapse, a filter or a re-spacing)."""
        chart = self._chart
        layout = chart.layout_data
        bands = []
        if layout is not None and chart.trace is not None:
            strips = chart.groups.strip_groups()
            self._activities([g.label for g in strips])
            geometry = chart.lane_geometry
            for group in strips:
                first = group.lanes[0]
                bands.append((self.group_activity(group.label), float(geometry.lane_top[first]),
                              float(geometry.lane_h[first])))
        self.strips.set_bands(bands, layout.cycles if layout is not None else 0.0)
        for item in self.items:
            item.refresh()

    def text_at(self, x: float, vy: float) -> str | None:
        """Tooltip of the heat strip under (x cycles, vy view units), None off the strips."""
        hit = self.strips.at(x, vy)
        if hit is None:
            return None
        k, a, b, shares = hit
        layout = self._chart.layout_data
        collapsed = self._chart.groups.strip_groups()
        group = collapsed[k] if k < len(collapsed) else None
        noun = "slots" if layout is not None and layout.warp_slots else "warps"
        head = f"{group.label} (collapsed, {len(group.lanes)} {noun})" if group is not None else "collapsed group"
        parts = [f"{100 * s:.0f} % {HEAT_TITLES[c]}" for c, s in enumerate(shares.tolist()) if s >= 0.005]
        return f"{head}\ncycles {a:,.6g} → {b:,.6g}\n" + "\n".join(parts)
