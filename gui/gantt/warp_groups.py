"""The chart's warp groups (the warps of one block, or as many consecutive slot lanes): which are
collapsed into heat strips and which are filtered out, with the toolbar's collapse box and the
groups menu. Every change re-spaces the chart's lanes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtWidgets import QCheckBox, QMenu, QPushButton

from engine.pipeline.trace import Trace
from engine.timeline.lanes import TimelineLayout, lane_group

if TYPE_CHECKING:
    from gui.gantt.widget import GanttView

# Until the user chooses, warp groups are collapsed into heat strips whenever expanded warp lanes
# would be thinner than this (64 warps of 8 resident blocks at 1366x768: about 1.3 px each).
AUTO_COLLAPSE_PX = 3.0


class WarpGroup:
    """Warp lanes shown together: the warps of one block, or (when warps share slot lanes) as many
    consecutive slots as a block has warps. A collapsed group is drawn as one heat strip: per time
    bucket, the share of its lanes issuing, waiting on each stall cause, or idle."""

    def __init__(self, label: str, lanes: list[int]) -> None:
        self.label = label
        self.lanes = lanes


def warp_groups_of(layout: TimelineLayout, trace: Trace) -> list[WarpGroup]:
    """The warp groups of a layout, top to bottom."""
    warp_lanes = [k for k, ln in enumerate(layout.lanes) if not lane_group(ln.kind).major]
    if not warp_lanes:
        return []
    issues = trace.issues
    # block of every warp by one scatter (no sort: this runs on the UI thread after each edit)
    block_of = np.full(int(issues["warp"].max()) + 1 if len(issues) else 0, -1, np.int64)
    block_of[issues["warp"]] = issues["block"]
    if layout.warp_slots:
        present = block_of[block_of >= 0]
        per_block = max(1, int(np.bincount(present).max())) if len(present) else 8
        groups = []
        for start in range(0, len(warp_lanes), per_block):
            part = warp_lanes[start:start + per_block]
            groups.append(WarpGroup(f"slots {start}–{start + len(part) - 1}", part))
        return groups
    by_block: dict[int, list[int]] = {}
    for k in warp_lanes:
        warps = layout.lanes[k].warps
        block = int(block_of[warps[0]]) if warps and warps[0] < len(block_of) else -1
        by_block.setdefault(block, []).append(k)
    return [WarpGroup(f"block {b}" if b >= 0 else "other warps", lanes) for b, lanes in by_block.items()]


class WarpGroups:
    """The groups of the shown trace and the user's collapse and filter choices."""

    def __init__(self, chart: GanttView) -> None:
        self._chart = chart
        self.all: list[WarpGroup] = []
        self.collapsed: set[str] = set()        # labels of the collapsed warp groups
        self.hidden: set[str] = set()           # labels of the warp groups filtered out
        self._collapse_all = False               # new traces start with every group collapsed
        self._collapse_auto = True               # no choice made yet: collapse_all follows the lane height
        self.collapse_box = QCheckBox("collapse warps")
        self.collapse_box.setObjectName("collapseWarps")
        self._show_collapse_choice()
        self.collapse_box.toggled.connect(lambda on: self.set_all_collapsed(on))   # the user's choice
        self.groups_button = QPushButton()       # (a push button leaves room for its menu arrow)
        self.groups_button.setObjectName("warpGroups")
        self.groups_button.setToolTip("Which warp groups the chart shows (also: right-click a group)")
        self.menu = QMenu(self.groups_button)
        self.menu.aboutToShow.connect(self.fill_menu)
        self.groups_button.setMenu(self.menu)
        self._show_filter()

    def adopt(self, layout: TimelineLayout, trace: Trace) -> None:
        """The groups of a new trace; choices on labels it still has carry over."""
        self.all = warp_groups_of(layout, trace)
        labels = {g.label for g in self.all}
        if self._collapse_auto:
            self._collapse_all = self._chart.lane_geometry.warp_lanes_too_thin()
            self._show_collapse_choice()
        self.collapsed = set(labels) if self._collapse_all else self.collapsed & labels
        self.hidden &= labels
        self._show_filter()

    def strip_groups(self) -> list[WarpGroup]:
        """The groups drawn as heat strips, top to bottom: collapsed and not filtered out."""
        return [g for g in self.all if g.label in self.collapsed and g.label not in self.hidden]

    def warp_groups(self) -> list[tuple[str, list[int]]]:
        """(label, lane indices) of every warp group, top to bottom."""
        return [(g.label, list(g.lanes)) for g in self.all]

    def collapsed_groups(self) -> set[str]:
        return set(self.collapsed)

    def set_group_collapsed(self, label: str, collapsed: bool) -> None:
        if collapsed:
            self.collapsed.add(label)
        else:
            self.collapsed.discard(label)
        self._chart.respace()

    def hidden_groups(self) -> set[str]:
        """Labels of the warp groups filtered out of the chart."""
        return set(self.hidden)

    def set_hidden_groups(self, labels: Iterable[str]) -> None:
        """Show only the warp groups not in ``labels`` (the unit lanes always show)."""
        hidden = set(labels) & {g.label for g in self.all} if self.all else set(labels)
        if hidden == self.hidden:
            return
        self.hidden = hidden
        self._show_filter()
        self._chart.respace()
        self._chart.optionsChanged.emit()

    def set_group_hidden(self, label: str, hidden: bool) -> None:
        self.set_hidden_groups(self.hidden | {label} if hidden else self.hidden - {label})

    def show_only_group(self, label: str) -> None:
        self.set_hidden_groups({g.label for g in self.all if g.label != label})

    def _show_filter(self) -> None:
        total = len(self.all)
        shown = total - len(self.hidden)
        self.groups_button.setText("warps: all" if not self.hidden else f"warps: {shown} of {total}")
        self.groups_button.setEnabled(total > 0)

    def fill_menu(self) -> None:
        """The groups button's menu: every group with a check mark when shown."""
        menu = self.menu
        menu.clear()
        every = menu.addAction("Show every warp group")
        every.setEnabled(bool(self.hidden))
        every.triggered.connect(lambda: self.set_hidden_groups(set()))
        menu.addSeparator()
        for group in self.all:
            action = menu.addAction(group.label)
            action.setCheckable(True)
            action.setChecked(group.label not in self.hidden)
            action.toggled.connect(lambda on, label=group.label: self.set_group_hidden(label, not on))

    def set_all_collapsed(self, collapsed: bool, automatic: bool = False) -> None:
        """Collapse (or expand) every warp group: the user's choice, which from then on holds for
        every trace, or (``automatic``) what :meth:`set_collapse_auto` decided."""
        self._collapse_auto = automatic
        self._collapse_all = collapsed
        self._show_collapse_choice()
        self.collapsed = {g.label for g in self.all} if collapsed else set()
        self._chart.respace()
        self._chart.optionsChanged.emit()

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
        self.set_all_collapsed(self._chart.lane_geometry.warp_lanes_too_thin(), automatic=True)

    def follow_resize(self) -> bool:
        """After the plot's height changed: collapse or expand every group when the automatic
        choice now says otherwise. Returns whether it did (and so re-spaced the lanes)."""
        if self._collapse_auto and self._chart.lane_geometry.warp_lanes_too_thin() != self._collapse_all:
            self.set_all_collapsed(not self._collapse_all, automatic=True)
            return True
        return False
