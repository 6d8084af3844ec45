"""What a group of warp lanes does over the run: the chart's heat strip of a collapsed group and
the evaluation's time series.

What a warp does in a cycle: it issues (one cycle per issued instruction), waits for one of the
stall causes, or is idle (not yet resident, finished, or a warp slot between two warps). Every
warp's issues and stalls tile the run (issued + Σ stalls = cycles), so per time bucket the
categories' warp-cycles add up to the group's warps × the bucket's width.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.pipeline.trace import STALL_CAUSES, Trace

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
