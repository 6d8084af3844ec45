"""Qt-free lane layout of a simulator trace, and its CSV / Chrome Trace Event exports.

The Gantt view (``gui/gantt``) only draws what :func:`layout_trace` returns, so everything that
decides *where* a bar goes lives here and is tested without Qt.

Lanes, top to bottom:

* ``issue slots``: one bar per issued warp instruction, one cycle wide at its issue time;
* one lane per subsystem the simulator reports (ALU, FP64, SFU, LDST, barrier, ...): each warp
  instruction as a bar [issue, complete]. Instructions in flight overlap, so these two kinds
  of lane are split into sub-rows (4 and 8) filled first-fit: bars share a sub-row only when
  more are in flight than there are sub-rows (then later issues paint on top);
* one lane per warp with its stall intervals, coloured by cause. When the trace holds more warps
  than ``max_warp_lanes``, warps that are never active at the same time share a lane (a *warp
  slot*, like the hardware's resident-warp slots) and the ``not_resident`` / ``finished``
  intervals are left out, since they would overlap the slot's other warps.

Every bar keeps ``row``: its index in ``trace.issues`` (issue/subsystem lanes) or ``trace.stalls``
(warp lanes), so a click maps back to the trace.
"""

from __future__ import annotations

import heapq
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
from numba import njit

from engine.pipeline.trace import STALL_CAUSES, Trace

COLOR_MODES = ("warp", "class")
WARP_COLORS = 12          # warp colour keys cycle with this period (warp id mod 12)
MAX_CLASSES = 12          # instruction classes beyond the most frequent 11 become "other"
DEFAULT_MAX_WARP_LANES = 64
ISSUE_LANE_HEIGHT = 2.0
SUBSYSTEM_LANE_HEIGHT = 4.0    # eight sub-rows of in-flight instructions
WARP_LANE_HEIGHT = 1.0
GROUP_GAP = 0.5
ISSUE_SUB_ROWS = 4        # NVIDIA SMs issue up to 4 instructions a cycle (one per scheduler)
SUBSYSTEM_SUB_ROWS = 8    # in-flight instructions of one unit shown side by side, up to 8
_SLOT_DROPPED = (STALL_CAUSES.index("not_resident"), STALL_CAUSES.index("finished"))

# Display names of the subsystem names the simulator and profiles use (engine.units.Unit values
# and the examples' short names); anything else is shown as given.
SUBSYSTEM_LABELS: dict[str, str] = {
    "alu": "ALU (int/FP32)", "fp32": "ALU (int/FP32)", "int": "ALU (int/FP32)",
    "comp": "compute", "fp64": "FP64", "dpu": "FP64", "sfu": "SFU", "ldst": "LDST / memory",
    "mem": "memory", "memory": "memory", "tensor": "tensor", "control": "control",
    "barrier": "barrier", "bar": "barrier", "l2_atomic": "L2 atomics",
}
_STATE_SPACES = {"global", "shared", "local", "const", "param", "tex"}


def subsystem_label(name: str) -> str:
    return SUBSYSTEM_LABELS.get(name.strip().lower(), name)


def instruction_class(name: str) -> str:
    """Opcode family of an instruction's text: ``@%p1 ld.global.f32 %f1, [..]`` -> ``ld.global``.

    Hand-built kernels name instructions ``fma3`` or ``C0``: trailing digits are dropped so the
    copies of one unrolled operation share a class.
    """
    text = name.strip()
    if text.startswith("@"):
        text = text.split(None, 1)[1] if " " in text else text[1:]
    opcode = text.split(None, 1)[0] if text else "?"
    parts = opcode.rstrip(";").split(".")
    head = parts[0].rstrip("0123456789") or parts[0]
    if len(parts) > 1 and parts[1] in _STATE_SPACES:
        return f"{head}.{parts[1]}"
    return head


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


@njit(cache=True, nogil=True)   # runs in the GUI's worker thread: let the UI thread run meanwhile
def _pack_rows_core(x0: np.ndarray, x1: np.ndarray, rows: int) -> np.ndarray:  # pragma: no cover
    out = np.zeros(len(x0), np.int8)
    end = np.full(rows, -np.inf)
    for i in range(len(x0)):
        best = 0
        for r in range(rows):
            if end[r] <= x0[i]:
                best = r
                break
            if end[r] < end[best]:
                best = r
        out[i] = best
        end[best] = max(end[best], x1[i])
    return out


def pack_rows(x0: np.ndarray, x1: np.ndarray, rows: int) -> np.ndarray:
    """Row (0..rows-1) per bar, bars sorted by x0: the lowest row free at the bar's start, else
    the row that frees up first (overlap only when more than ``rows`` bars are in flight)."""
    if not len(x0):
        return np.zeros(0, np.int8)
    return _pack_rows_core(np.ascontiguousarray(x0, np.float64), np.ascontiguousarray(x1, np.float64), rows)


def _class_table(names: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Class names (most frequent first, at most MAX_CLASSES) and each instruction's key (the
    same names give the same table: an edit's new trace reuses it)."""
    classes, keys = _class_table_of(tuple(names))
    return list(classes), keys


@lru_cache(maxsize=8)
def _class_table_of(names: tuple[str, ...]) -> tuple[tuple[str, ...], np.ndarray]:
    per_instr = [instruction_class(n) for n in names]
    ranked = [c for c, _ in Counter(per_instr).most_common()]
    if len(ranked) > MAX_CLASSES:
        ranked = ranked[: MAX_CLASSES - 1] + ["other"]
    index = {c: k for k, c in enumerate(ranked)}
    other = index.get("other", len(ranked) - 1)
    keys = np.array([index.get(c, other) for c in per_instr], dtype=np.int16)
    keys.setflags(write=False)          # shared by every layout of these names
    return tuple(ranked), keys


def _warp_ids(trace: Trace) -> np.ndarray:
    """Every warp id in the trace (issuing or stalling), ascending: ``np.union1d`` of the two
    tables' warps, without sorting them."""
    issues, stalls = trace.issues["warp"], trace.stalls["warp"]
    top = max(int(issues.max()) if len(issues) else -1, int(stalls.max()) if len(stalls) else -1)
    if top < 0 or min(int(issues.min()) if len(issues) else 0, int(stalls.min()) if len(stalls) else 0) < 0:
        return np.union1d(issues, stalls).astype(np.int64)
    seen = np.zeros(top + 1, bool)
    seen[issues] = True
    seen[stalls] = True
    return np.flatnonzero(seen)


@njit(cache=True, nogil=True)
def _spans_core(index: np.ndarray, t: np.ndarray, n: int) -> tuple:  # pragma: no cover - compiled
    """Per index 0..n-1 (negative: skipped), the least and greatest ``t`` (0 where none)."""
    first = np.zeros(n)
    last = np.zeros(n)
    seen = np.zeros(n, np.bool_)
    for i in range(len(index)):
        k = index[i]
        if k < 0:
            continue
        v = t[i]
        if not seen[k]:
            seen[k] = True
            first[k] = v
            last[k] = v
        elif v < first[k]:
            first[k] = v
        elif v > last[k]:
            last[k] = v
    return first, last


def subsystem_names(trace: Trace, subsystems: Sequence[str] | None,
                    units: Sequence[str] | None) -> list[str]:
    """The subsystem list: as given; else each index named after the most common unit of the
    instructions issued on it (``units`` is per static instruction); else ``subsystem k``."""
    n = int(trace.issues["subsystem"].max()) + 1 if len(trace.issues) else 0
    if subsystems is not None:
        if len(subsystems) < n:
            raise ValueError(f"the trace uses subsystem index {n - 1} but only {len(subsystems)} "
                             "subsystem names were given")
        return list(subsystems)
    names = [f"subsystem {k}" for k in range(n)]
    if units is not None:
        for k in range(n):
            used = trace.issues["instr"][trace.issues["subsystem"] == k]
            if len(used):
                common = Counter(units[int(i)] for i in np.unique(used)).most_common(1)[0][0]
                names[k] = str(common)
    return names


def _warp_slots(trace: Trace, warps: np.ndarray) -> np.ndarray:
    """Slot per warp (indexed like ``warps``): greedy interval packing of each warp's active span
    [first issue, last issue], so warps sharing a slot never overlap in time."""
    issues = trace.issues
    # each warp's first and last issue (0 for a warp that never issues: every simulated warp
    # issues, the guard keeps odd input safe)
    index = np.full(int(max(warps.max(), issues["warp"].max(initial=0))) + 1 if len(warps) else 1, -1, np.int64)
    index[warps] = np.arange(len(warps))
    first, last = _spans_core(index[issues["warp"]], issues["issue"], len(warps))
    slot = np.zeros(len(warps), dtype=np.int64)
    free: list[tuple[float, int]] = []
    n_slots = 0
    for i in np.lexsort((warps, first)):
        if free and free[0][0] <= first[i]:
            _, s = heapq.heappop(free)
        else:
            s, n_slots = n_slots, n_slots + 1
        slot[i] = s
        heapq.heappush(free, (float(last[i]), s))
    return slot


@njit(cache=True, nogil=True)   # the worker thread lays out while the UI thread draws the last result
def _split_core(groups: np.ndarray, n_groups: int, x0: np.ndarray, x1: np.ndarray,
                rows: np.ndarray) -> tuple:  # pragma: no cover - compiled
    """A stable counting sort of the bars by group (groups outside 0..n_groups-1 are left out):
    each group's start in the output, the output columns, and whether every group came out
    sorted by x0 (the simulator writes each warp's rows in time order, so it nearly always is)."""
    n = len(groups)
    bounds = np.zeros(n_groups + 1, np.int64)
    for i in range(n):
        g = groups[i]
        if 0 <= g < n_groups:
            bounds[g + 1] += 1
    for g in range(n_groups):
        bounds[g + 1] += bounds[g]
    fill = bounds[:-1].copy()
    total = bounds[n_groups]
    out_rows = np.empty(total, np.int64)
    out_x0 = np.empty(total, np.float64)
    out_x1 = np.empty(total, np.float64)
    in_order = True
    for i in range(n):
        g = groups[i]
        if g < 0 or g >= n_groups:
            continue
        p = fill[g]
        fill[g] = p + 1
        out_rows[p] = rows[i]
        out_x0[p] = x0[i]
        out_x1[p] = x1[i]
        if p > bounds[g] and out_x0[p] < out_x0[p - 1]:
            in_order = False
    return bounds, out_rows, out_x0, out_x1, in_order


def _lanes_from(groups: np.ndarray, n_groups: int, x0: np.ndarray, x1: np.ndarray,
                rows: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Split bars by group, each group sorted by x0 (stable, so trace order breaks ties): the
    order of ``np.lexsort((x0, groups))``, one slice of shared columns per group."""
    bounds, rows_s, x0_s, x1_s, in_order = _split_core(groups, n_groups, x0, x1, rows)
    if not in_order:                   # rows not in time order: sort by x0 first (stable)
        by_x = np.argsort(x0, kind="stable")
        bounds, rows_s, x0_s, x1_s, _ = _split_core(groups[by_x], n_groups, x0[by_x], x1[by_x], rows[by_x])
    return [(rows_s[bounds[k]:bounds[k + 1]], x0_s[bounds[k]:bounds[k + 1]], x1_s[bounds[k]:bounds[k + 1]])
            for k in range(n_groups)]


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


def _issue_colors(layout: TimelineLayout, lane: Lane, trace: Trace, mode: str) -> np.ndarray:
    if mode == "warp":
        return (trace.issues["warp"][lane.row] % WARP_COLORS).astype(np.int16)
    return layout.class_of_instr[trace.issues["instr"][lane.row]]


def _stall_colors(layout: TimelineLayout, lane: Lane, trace: Trace, mode: str) -> np.ndarray:
    return trace.stalls["cause"][lane.row].astype(np.int16)


def _issue_slot_lanes(inp: LayoutInput, y: float) -> tuple[list[Lane], float]:
    x0 = inp.trace.issues["issue"].astype(np.float64)
    x1 = x0 + 1.0
    lane = Lane("issue slots", "issue", "issues", y, ISSUE_LANE_HEIGHT, inp.issue_rows, x0, x1,
                sub_rows=ISSUE_SUB_ROWS, sub_row=pack_rows(x0, x1, ISSUE_SUB_ROWS))
    return [lane], y + ISSUE_LANE_HEIGHT


def _subsystem_lanes(inp: LayoutInput, y: float) -> tuple[list[Lane], float]:
    issues = inp.trace.issues
    lanes = []
    per_sub = _lanes_from(issues["subsystem"].astype(np.int64), len(inp.subsystems), issues["issue"],
                          issues["complete"], inp.issue_rows)
    for k, (rows, x0, x1) in enumerate(per_sub):
        lanes.append(Lane(subsystem_label(inp.subsystems[k]), "subsystem", "issues", y, SUBSYSTEM_LANE_HEIGHT,
                          rows, x0, x1, subsystem=k, sub_rows=SUBSYSTEM_SUB_ROWS,
                          sub_row=pack_rows(x0, x1, SUBSYSTEM_SUB_ROWS)))
        y += SUBSYSTEM_LANE_HEIGHT
    return lanes, y + GROUP_GAP


def _warp_lanes(inp: LayoutInput, y: float) -> tuple[list[Lane], float]:
    trace = inp.trace
    stalls = trace.stalls
    warps = inp.warps if inp.warps is not None else _warp_ids(trace)
    slots = len(warps) > inp.max_warp_lanes
    lane_of_warp = _warp_slots(trace, warps) if slots else np.arange(len(warps))
    n_warp_lanes = int(lane_of_warp.max()) + 1 if len(warps) else 0
    lane_of = np.zeros(int(warps.max()) + 1 if len(warps) else 0, np.int64)
    lane_of[warps] = lane_of_warp           # warp id -> lane, one gather per stall
    stall_lane = lane_of[stalls["warp"]] if len(stalls) else np.zeros(0, np.int64)
    if slots:
        keep = np.flatnonzero(~np.isin(stalls["cause"], _SLOT_DROPPED))
        per_warp = _lanes_from(stall_lane[keep], n_warp_lanes, stalls["start"][keep], stalls["end"][keep], keep)
    else:
        per_warp = _lanes_from(stall_lane, n_warp_lanes, stalls["start"], stalls["end"],
                               np.arange(len(stalls), dtype=np.int64))
    lanes = []
    for k, (rows, x0, x1) in enumerate(per_warp):
        members = tuple(int(w) for w in warps[lane_of_warp == k])
        label = f"slot {k}" if slots else f"warp {members[0]}"
        lanes.append(Lane(label, "warp", "stalls", y, WARP_LANE_HEIGHT, rows, x0, x1, warps=members))
        y += WARP_LANE_HEIGHT
    return lanes, y


register_lane_group(LaneGroup("issue", "issue slots", "issues", True, _issue_slot_lanes, _issue_colors))
register_lane_group(LaneGroup("subsystem", "subsystems", "issues", True, _subsystem_lanes, _issue_colors))
register_lane_group(LaneGroup("warp", "warps (stalls by cause)", "stalls", False, _warp_lanes, _stall_colors))


def layout_trace(trace: Trace, names: Sequence[str], units: Sequence[str] | None = None,
                 cycles: float | None = None, subsystems: Sequence[str] | None = None,
                 max_warp_lanes: int = DEFAULT_MAX_WARP_LANES) -> TimelineLayout:
    """Lanes of ``trace``, group by group (:data:`LANE_GROUPS`, top to bottom). ``names``: text per
    static instruction; ``units``: unit per static instruction (names subsystems when
    ``subsystems`` is None)."""
    issues, stalls = trace.issues, trace.stalls
    if len(issues) and int(issues["instr"].max()) >= len(names):
        raise ValueError(f"the trace refers to instruction {int(issues['instr'].max())} but only "
                         f"{len(names)} instruction names were given")
    subs = subsystem_names(trace, subsystems, units)
    classes, class_of_instr = _class_table(names)
    if cycles is None:
        cycles = float(max(issues["complete"].max() if len(issues) else 0.0,
                           stalls["end"].max() if len(stalls) else 0.0))
    warps = _warp_ids(trace)
    inp = LayoutInput(trace, names, subs, max_warp_lanes, np.arange(len(issues), dtype=np.int64), warps)
    lanes: list[Lane] = []
    y = 0.0
    for group in LANE_GROUPS:
        built, y = group.build(inp, y)
        lanes.extend(built)
    slots = len(warps) > max_warp_lanes   # warp lanes are shared slots
    return TimelineLayout(lanes, subs, classes, class_of_instr, slots, float(cycles), y)


# ---- activity of a warp group (the chart's collapsed groups) ---------------------------------
# What a warp does in a cycle: it issues (one cycle per issued instruction), waits for one of the
# stall causes, or is idle (not yet resident, finished, or a warp slot between two warps). Every
# warp's issues and stalls tile the run (issued + Σ stalls = cycles), so per time bucket the
# categories' warp-cycles add up to the group's warps × the bucket's width.
HEAT_CATEGORIES: tuple[str, ...] = ("issuing", "memory_dependency", "compute_dependency", "barrier",
                                    "subsystem_busy", "issue_limit", "idle")
IDLE = len(HEAT_CATEGORIES) - 1
# stall cause index -> heat category index; the causes outside residency count as idle
_CAUSE_CATEGORY = np.array([HEAT_CATEGORIES.index(c) if c in HEAT_CATEGORIES else IDLE for c in STALL_CAUSES],
                           dtype=np.int64)


@dataclass(frozen=True, eq=False)
class GroupActivity:
    """How a group of warp lanes spends the run: per category but ``idle``, the start and end
    cycles of its intervals, each sorted with its running sums, so that the lane-cycles spent in
    the category up to any cycle t, Σ_{start<t} (t − start) − Σ_{end<t} (t − end), come from two
    binary searches: any time buckets are integrated exactly. ``lanes``: the warps (or warp
    slots) of the group, the denominator of the shares; idle is what the other categories leave."""

    lanes: int
    starts: tuple[np.ndarray, ...]     # per category but idle: interval starts, ascending
    ends: tuple[np.ndarray, ...]       # per category but idle: interval ends, ascending
    start_sums: tuple[np.ndarray, ...] = ()   # running sums of ``starts`` (a leading 0)
    end_sums: tuple[np.ndarray, ...] = ()

    def __post_init__(self) -> None:
        if not self.start_sums:
            object.__setattr__(self, "start_sums", tuple(_running_sum(x) for x in self.starts))
            object.__setattr__(self, "end_sums", tuple(_running_sum(x) for x in self.ends))

    def cumulative(self, t: np.ndarray) -> np.ndarray:
        """Lane-cycles of every category but idle spent before each cycle of ``t``: shape
        (len(HEAT_CATEGORIES) - 1, len(t))."""
        t = np.asarray(t, dtype=np.float64)
        out = np.empty((len(self.starts), len(t)))
        for c, (st, en, ss, es) in enumerate(zip(self.starts, self.ends, self.start_sums, self.end_sums,
                                                 strict=True)):
            ns = np.searchsorted(st, t, "left")
            ne = np.searchsorted(en, t, "left")
            out[c] = (t * ns - ss[ns]) - (t * ne - es[ne])
        return out

    def lane_cycles(self, edges: np.ndarray) -> np.ndarray:
        """Lane-cycles of every category (HEAT_CATEGORIES order, idle last) in each bucket
        [edges[k], edges[k + 1]); ``edges`` increasing. Shape (len(edges) - 1, categories)."""
        edges = np.asarray(edges, dtype=np.float64)
        active = np.maximum(np.diff(self.cumulative(edges), axis=1).T, 0.0)
        idle = np.maximum(self.lanes * np.diff(edges) - active.sum(axis=1), 0.0)
        return np.column_stack([active, idle])

    def shares(self, edges: np.ndarray) -> np.ndarray:
        """Share of the group's lanes in each category per bucket (rows sum to 1; a bucket of no
        width counts as idle)."""
        cycles = self.lane_cycles(edges)
        total = cycles.sum(axis=1, keepdims=True)
        out = np.zeros_like(cycles)
        out[:, IDLE] = 1.0
        has = total[:, 0] > 0
        out[has] = cycles[has] / total[has]
        return out


def _running_sum(x: np.ndarray) -> np.ndarray:
    out = np.zeros(len(x) + 1)
    np.cumsum(x, out=out[1:])
    return out


def group_activity(trace: Trace, warps: Sequence[int], lanes: int | None = None) -> GroupActivity:
    """The activity of ``warps`` (a block's warps, or every warp of some warp-slot lanes) over the
    run; ``lanes``: what the shares are of (default: the number of warps). Issues count from their
    issue cycle for one cycle; ``not_resident`` / ``finished`` intervals count as idle."""
    return group_activities(trace, [warps], None if lanes is None else [lanes])[0]


def group_activities(trace: Trace, groups: Sequence[Sequence[int]],
                     lanes: Sequence[int] | None = None) -> list[GroupActivity]:
    """:func:`group_activity` of several groups of warps (each warp in one group at most), with
    one pass over the trace for all of them."""
    issues, stalls = trace.issues, trace.stalls
    members = [np.unique(np.asarray(list(g), dtype=np.int64)) for g in groups]
    n_groups, k = len(members), len(HEAT_CATEGORIES) - 1
    top = max([int(m.max()) for m in members if len(m)] + [int(issues["warp"].max(initial=0)),
                                                            int(stalls["warp"].max(initial=0))])
    group_of = np.full(top + 1, -1, np.int64)          # warp id -> group (-1: none)
    for g, m in enumerate(members):
        group_of[m[m >= 0]] = g
    # issues: one cycle each from the issue; stalls: by (group, category), idle causes left out
    g_issue = group_of[issues["warp"]]
    issue_order, issue_bounds = _by_key(g_issue, n_groups)
    issued = issues["issue"][issue_order].astype(np.float64)
    category = _CAUSE_CATEGORY[stalls["cause"].astype(np.int64)]
    g_stall = group_of[stalls["warp"]]
    busy = np.flatnonzero((g_stall >= 0) & (category != IDLE))
    stall_order, stall_bounds = _by_key(g_stall[busy] * k + category[busy], n_groups * k)
    picked = busy[stall_order]
    stall_start = stalls["start"][picked].astype(np.float64)
    stall_end = stalls["end"][picked].astype(np.float64)
    out = []
    for g, m in enumerate(members):
        # each warp's rows come in time order: the stable sorts merge a few sorted runs
        t = np.sort(issued[issue_bounds[g]:issue_bounds[g + 1]], kind="stable")
        starts, ends = [t], [t + 1.0]
        for c in range(1, k):
            part = slice(stall_bounds[g * k + c], stall_bounds[g * k + c + 1])
            starts.append(np.sort(stall_start[part], kind="stable"))
            ends.append(np.sort(stall_end[part], kind="stable"))
        out.append(GroupActivity(len(m) if lanes is None else int(lanes[g]), tuple(starts), tuple(ends)))
    return out


def _by_key(key: np.ndarray, n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows with a key in 0..n_keys-1, ordered by key (stable), and each key's bounds."""
    mine = np.flatnonzero((key >= 0) & (key < n_keys))
    small = key[mine].astype(np.int16) if n_keys < 2 ** 15 else key[mine]
    order = np.argsort(small, kind="stable")
    return mine[order], np.searchsorted(small[order], np.arange(n_keys + 1))


# ---- exports ---------------------------------------------------------------------------------
CSV_COLUMNS = ("kind", "row", "warp", "block", "instruction", "name", "subsystem", "start", "end", "cause",
               "held_by", "held_by_name")


def export_trace_csv(trace: Trace, path: str | Path, names: Sequence[str],
                     subsystems: Sequence[str] | None = None,
                     header_of: Callable[[str], str] | None = None, header: Sequence[str] = ()) -> int:
    """One CSV, both tables, told apart by the ``kind`` column; returns the data rows written.

    ``header``: lines written first, each as a ``# `` comment (what the run was: file, kernel,
    profile, launch, edits; :func:`engine.evaluation.provenance.comment_lines`).
    ``kind=issue`` rows (in ``trace.issues`` order, ``row`` = index there): warp, block,
    instruction (1-based, the BLOCK table's number), name, subsystem name, start = issue cycle,
    end = completion cycle, empty cause. ``kind=stall`` rows (``trace.stalls`` order): warp,
    start, end, cause name; instruction and name: the instruction the warp waits to issue, and
    ``held_by``/``held_by_name`` the one whose result (or barrier) holds it
    (:mod:`engine.stall_links`); empty where there is none. Cycles are rounded to a tenth; text
    that a spreadsheet would evaluate (``@%p1 bra``) is escaped. The file is written atomically.
    ``header_of`` marks the cycle columns (``Caveats.csv_header`` of the evaluation: cycles that
    rest on assumed inputs say so).
    """
    from engine.fileio import csv_safe, write_text_atomic
    from engine.stall_links import StallLinks

    subs = [_csv_field(str(csv_safe(x))) for x in subsystem_names(trace, subsystems, None)]
    text = [_csv_field(str(csv_safe(n))) for n in names]
    causes = list(STALL_CAUSES)
    iss, st = trace.issues, trace.stalls
    # Hand-formatted lines: csv.writer costs ~5 µs a row, which is seconds on a full trace.
    columns = [header_of(c) if header_of is not None and c in ("start", "end") else c for c in CSV_COLUMNS]
    lines = [f"# {_comment(line)}\r\n" for line in header]
    lines.append(",".join(_csv_field(c) for c in columns) + "\r\n")
    cols = (iss["warp"].tolist(), iss["block"].tolist(), iss["instr"].tolist(),
            iss["subsystem"].tolist(), _tenths(iss["issue"]), _tenths(iss["complete"]))
    lines.extend(f"issue,{r},{w},{b},{i + 1},{text[i]},{subs[k]},{a},{c},,,\r\n"
                 for r, (w, b, i, k, a, c) in enumerate(zip(*cols, strict=True)))
    links = StallLinks(trace)

    def named(k: int) -> tuple[str, str]:
        return ("", "") if k < 0 else (str(k + 1), text[k])

    cols = (st["warp"].tolist(), _tenths(st["start"]), _tenths(st["end"]), st["cause"].tolist(),
            links.waits_for().tolist(), links.held_by().tolist())
    lines.extend("stall,{},{},,{},,{},{},{},{}\r\n".format(r, w, ",".join(named(i)), a, b, causes[c],
                                                             ",".join(named(h)))
                 for r, (w, a, b, c, i, h) in enumerate(zip(*cols, strict=True)))
    write_text_atomic(path, "".join(lines))
    return len(iss) + len(st)


def trace_columns(trace: Trace, names: Sequence[str], subsystems: Sequence[str] | None = None) -> dict[str, list]:
    """The timeline CSV as columns (:data:`CSV_COLUMNS`; None for an empty cell, cycles to a
    tenth): issues, then stalls, as :func:`export_trace_csv` writes them (the Python API's table)."""
    from engine.stall_links import StallLinks

    subs = subsystem_names(trace, subsystems, None)
    iss, st = trace.issues, trace.stalls
    links = StallLinks(trace)
    waits, held = links.waits_for(), links.held_by()
    n_i, n_s = len(iss), len(st)

    def named(index: np.ndarray) -> tuple[list, list]:
        ids = [None if k < 0 else int(k) + 1 for k in index.tolist()]
        return ids, [None if k is None else names[k - 1] for k in ids]

    wait_ids, wait_names = named(waits)
    held_ids, held_names = named(held)
    instr = iss["instr"].tolist()
    return {
        "kind": ["issue"] * n_i + ["stall"] * n_s,
        "row": list(range(n_i)) + list(range(n_s)),
        "warp": iss["warp"].tolist() + st["warp"].tolist(),
        "block": iss["block"].tolist() + [None] * n_s,
        "instruction": [i + 1 for i in instr] + wait_ids,
        "name": [names[i] for i in instr] + wait_names,
        "subsystem": [subs[k] for k in iss["subsystem"].tolist()] + [None] * n_s,
        "start": np.round(iss["issue"], 1).tolist() + np.round(st["start"], 1).tolist(),
        "end": np.round(iss["complete"], 1).tolist() + np.round(st["end"], 1).tolist(),
        "cause": [None] * n_i + [STALL_CAUSES[c] for c in st["cause"].tolist()],
        "held_by": [None] * n_i + held_ids,
        "held_by_name": [None] * n_i + held_names,
    }


def _comment(line: str) -> str:
    """One header line as a CSV comment: on one line (a kernel name or an edit never breaks it)."""
    return " ".join(str(line).split())


def _tenths(values: np.ndarray) -> list[str]:
    """Cycles as text rounded to a tenth, without a trailing ``.0``."""
    out = []
    for v in np.round(np.asarray(values, dtype=np.float64), 1).tolist():
        text = f"{v:.1f}"
        out.append(text[:-2] if text.endswith(".0") else text)
    return out


def _csv_field(value: str) -> str:
    """A CSV field quoted the way csv.writer quotes it (only when it must)."""
    if any(ch in value for ch in ',"\r\n'):
        return '"' + value.replace('"', '""') + '"'
    return value


def _pack(x0: np.ndarray, x1: np.ndarray) -> np.ndarray:
    """Sub-track per interval (x0 sorted) so that intervals on one sub-track never overlap:
    Perfetto drops complete events that overlap without nesting on one thread."""
    track = np.zeros(len(x0), dtype=np.int64)
    free: list[tuple[float, int]] = []
    n = 0
    for i, (a, b) in enumerate(zip(x0.tolist(), x1.tolist(), strict=True)):
        if free and free[0][0] <= a:
            _, t = heapq.heappop(free)
        else:
            t, n = n, n + 1
        track[i] = t
        heapq.heappush(free, (b, t))
    return track


def _chrome_events(tr: Trace, pid: int, names: Sequence[str], subsystems: Sequence[str] | None,
                   events: list[str]) -> int:
    """Append one SM's metadata and complete events to ``events``; returns the complete events."""
    events.append(json.dumps({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                              "args": {"name": f"SM {pid}"}}))
    tid_count = 0

    def threads(label: str, sort_base: int, n: int) -> list[int]:
        nonlocal tid_count
        tids = []
        for t in range(n):
            tid_count += 1
            name = label if t == 0 else f"{label} #{t + 1}"
            events.append(json.dumps({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid_count,
                                      "args": {"name": name}}))
            events.append(json.dumps({"ph": "M", "name": "thread_sort_index", "pid": pid,
                                      "tid": tid_count, "args": {"sort_index": sort_base + t}}))
            tids.append(tid_count)
        return tids

    iss, st = tr.issues, tr.stalls
    text = [json.dumps(n) for n in names]
    n_complete = 0
    order = np.lexsort((iss["issue"], iss["subsystem"]))
    for s, raw in enumerate(subsystem_names(tr, subsystems, None)):
        label = subsystem_label(raw)
        sel = order[iss["subsystem"][order] == s]
        track = _pack(iss["issue"][sel], iss["complete"][sel])
        tids = threads(label, s * 1000, int(track.max()) + 1 if len(track) else 0)
        cat = json.dumps(label)
        cols = (sel.tolist(), track.tolist(), iss["warp"][sel].tolist(), iss["block"][sel].tolist(),
                iss["instr"][sel].tolist(), iss["issue"][sel].tolist(), iss["complete"][sel].tolist())
        # Pre-formatted JSON objects: json.dumps over a million dicts takes several seconds.
        events.extend(
            f'{{"ph":"X","name":{text[i]},"cat":{cat},"ts":{a!r},"dur":{c - a!r},"pid":{pid},'
            f'"tid":{tids[t]},"args":{{"warp":{w},"block":{b},"instruction":{i + 1},"row":{r}}}}}'
            for r, t, w, b, i, a, c in zip(*cols, strict=True))
        n_complete += len(sel)
    from engine.stall_links import StallLinks

    links = StallLinks(tr)
    waits, held = links.waits_for(), links.held_by()

    def link_args(r: int) -> str:
        out = ""
        if waits[r] >= 0:
            out += f',"waits_for":{int(waits[r]) + 1},"waits_for_name":{text[waits[r]]}'
        if held[r] >= 0:
            out += f',"held_by":{int(held[r]) + 1},"held_by_name":{text[held[r]]}'
        return out

    order = np.lexsort((st["start"], st["warp"]))
    warps = np.unique(st["warp"])
    groups = np.split(order, np.searchsorted(st["warp"][order], warps, "right")[:-1]) if len(warps) else []
    for w, sel in zip(warps.tolist(), groups, strict=True):
        track = _pack(st["start"][sel], st["end"][sel])
        tids = threads(f"warp {w}", 10**6 + w * 10, int(track.max()) + 1)
        cols = (sel.tolist(), track.tolist(), st["start"][sel].tolist(), st["end"][sel].tolist(),
                st["cause"][sel].tolist())
        events.extend(
            f'{{"ph":"X","name":"{STALL_CAUSES[k]}","cat":"stall","ts":{a!r},"dur":{b - a!r},'
            f'"pid":{pid},"tid":{tids[t]},"args":{{"warp":{w},"row":{r}{link_args(r)}}}}}'
            for r, t, a, b, k in zip(*cols, strict=True))
        n_complete += len(sel)
    return n_complete


def export_chrome_trace(trace: Trace | Sequence[Trace], path: str | Path, names: Sequence[str],
                        subsystems: Sequence[str] | None = None) -> int:
    """Trace Event Format JSON (opens in Perfetto / chrome://tracing); returns the "X" events.

    One pid per SM (a list of traces = one per SM, pid = its position). Threads: one per
    subsystem (instruction events [issue, complete]) and one per warp (stall events named by
    cause); a thread whose events overlap is split into numbered sub-threads ("LDST / memory #2")
    because the viewers require the events of one thread to nest. Time: **1 µs in the viewer is
    one GPU cycle** (``ts``/``dur`` hold cycles; the format has no cycle unit).
    """
    traces = [trace] if isinstance(trace, Trace) else list(trace)
    events: list[str] = []
    n_complete = sum(_chrome_events(tr, pid, names, subsystems, events) for pid, tr in enumerate(traces))
    other = json.dumps({"time_unit": "1 microsecond in the viewer = 1 GPU cycle",
                        "generator": "Warpline pipeline simulator"})
    from engine.fileio import write_text_atomic

    # atomic, and an unwritable path is a one-line WarplineError naming it
    write_text_atomic(path, '{"traceEvents":[\n' + ",\n".join(events) + f'\n],"otherData":{other}}}\n')
    return n_complete
