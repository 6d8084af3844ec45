"""What a timeline layout is: lanes of bars (:class:`Lane`), the whole layout
(:class:`TimelineLayout`) with its hit testing, and the kinds of lane (:class:`LaneGroup`): a new
lane type is one group passed to :func:`register_lane_group` (the built-in ones:
:mod:`engine.timeline.lane_groups`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.pipeline.trace import Trace

COLOR_MODES = ("warp", "class")
WARP_COLORS = 12          # warp colour keys cycle with this period (warp id mod 12)
DEFAULT_MAX_WARP_LANES = 64
ISSUE_LANE_HEIGHT = 2.0
SUBSYSTEM_LANE_HEIGHT = 4.0    # eight sub-rows of in-flight instructions
WARP_LANE_HEIGHT = 1.0
GROUP_GAP = 0.5
ISSUE_SUB_ROWS = 4        # NVIDIA SMs issue up to 4 instructions a cycle (one per scheduler)
SUBSYSTEM_SUB_ROWS = 8    # in-flight instructions of one unit shown side by side, up to 8


@dataclass
class Lane:
    """One horizontal row of bars; arrays are sorted by ``x0`` (ties keep trace order)."""

    label: str
    kind: str                 # the LaneGroup that built it (LANE_GROUPS: "issue", "subsystem", "warp")
    source: str               # "issues" | "stalls": which trace table ``row`` indexes
    y: float                  # top edge in layout units (lane 0 at y = 0, growing downwards)
    height: float
    row: np.ndarray           # int64 row in the source table
    x0: np.ndarray            # float64 start cycle
    x1: np.ndarray            # float64 end cycle
    warps: tuple[int, ...] = ()   # warp lanes: the warps drawn here
    subsystem: int = -1           # subsystem lanes: the trace's subsystem index
    sub_rows: int = 1             # bars of overlapping lanes are spread over this many rows
    sub_row: np.ndarray | None = None   # int8 row of each bar (None: all in one row)
    _cummax: np.ndarray | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.row)

    @property
    def cummax_x1(self) -> np.ndarray:
        """Running maximum of x1: monotonic, so a binary search finds the first bar that can
        reach a given x even when one long bar starts far to the left."""
        if self._cummax is None:
            self._cummax = np.maximum.accumulate(self.x1) if len(self.x1) else self.x1
        return self._cummax

    def bar_band(self, i: int) -> tuple[float, float]:
        """Top and height (layout units) of the row bar ``i`` is drawn in."""
        h = self.height / self.sub_rows
        r = 0 if self.sub_row is None else int(self.sub_row[i])
        return self.y + r * h, h

    def visible(self, x_min: float, x_max: float) -> slice:
        """Index range of the bars that may intersect [x_min, x_max]."""
        lo = int(np.searchsorted(self.cummax_x1, x_min, "left"))
        hi = int(np.searchsorted(self.x0, x_max, "right"))
        return slice(lo, max(lo, hi))


@dataclass
class TimelineLayout:
    lanes: list[Lane]
    subsystems: list[str]            # raw subsystem names, by trace subsystem index
    classes: list[str]               # instruction class names, by class key
    class_of_instr: np.ndarray       # int16 class key per static instruction
    warp_slots: bool                 # True: warp lanes are shared slots
    cycles: float
    height: float                    # total height in layout units

    def color_keys(self, lane: Lane, trace: Trace, mode: str) -> np.ndarray:
        """Colour key of each bar, as the lane's group defines it (stall cause for warp lanes,
        warp or instruction class for the others)."""
        if mode not in COLOR_MODES:
            raise ValueError(f"colour mode {mode!r}: choose one of {COLOR_MODES}")
        return lane_group(lane.kind).color_keys(self, lane, trace, mode)

    def lane_at(self, y: float) -> int | None:
        for i, lane in enumerate(self.lanes):
            if lane.y <= y < lane.y + lane.height:
                return i
        return None

    def bar_at(self, lane_index: int, x: float, tolerance: float = 0.0,
               y: float | None = None) -> int | None:
        """Index (into the lane's arrays) of the bar under ``x``: the topmost (last drawn) bar
        that contains it, else the nearest within ``tolerance`` cycles. With ``y`` and a lane of
        several rows, only bars of the row at ``y`` count."""
        lane = self.lanes[lane_index]
        window = lane.visible(x - tolerance, x + tolerance)
        if window.stop <= window.start:
            return None
        candidates = np.arange(window.start, window.stop)
        if y is not None and lane.sub_row is not None:
            r = min(max(int((y - lane.y) / lane.height * lane.sub_rows), 0), lane.sub_rows - 1)
            candidates = candidates[lane.sub_row[window] == r]
            if not len(candidates):
                return None
        x0, x1 = lane.x0[candidates], lane.x1[candidates]
        inside = np.flatnonzero((x0 <= x) & (x <= x1))
        if len(inside):
            return int(candidates[inside[-1]])
        distance = np.maximum(x0 - x, x - x1)
        best = int(np.argmin(distance))
        return int(candidates[best]) if distance[best] <= tolerance else None


@dataclass
class LayoutInput:
    """What every lane group's builder reads."""

    trace: Trace
    names: Sequence[str]
    subsystems: list[str]
    max_warp_lanes: int
    issue_rows: np.ndarray        # int64 0..len(trace.issues)-1
    warps: np.ndarray | None = None   # every warp id of the trace, ascending (None: not computed)


@dataclass(frozen=True)
class LaneGroup:
    """One kind of lane: how its lanes are built from the trace, which trace table their bars
    index, whether each lane is labelled on the axis (``major``) or labels are thinned out, and how
    its bars are coloured. A new lane type is one group passed to :func:`register_lane_group`."""

    kind: str
    title: str
    source: str                   # "issues" | "stalls"
    major: bool
    build: Callable[[LayoutInput, float], tuple[list[Lane], float]]   # (input, top y) -> (lanes, next y)
    color_keys: Callable[[TimelineLayout, Lane, Trace, str], np.ndarray]


LANE_GROUPS: list[LaneGroup] = []


def register_lane_group(group: LaneGroup) -> LaneGroup:
    if any(g.kind == group.kind for g in LANE_GROUPS):
        raise ValueError(f"lane group {group.kind!r} is registered already")
    LANE_GROUPS.append(group)
    return group


def lane_group(kind: str) -> LaneGroup:
    for group in LANE_GROUPS:
        if group.kind == kind:
            return group
    raise KeyError(f"no lane group {kind!r}")
