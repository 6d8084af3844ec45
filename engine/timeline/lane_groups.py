"""The built-in lane groups, registered on import in their order on the chart, top to bottom:
issue slots, one lane per subsystem, one lane per warp (or warp slot) with its stalls."""

from __future__ import annotations

import numpy as np

from engine.pipeline.trace import STALL_CAUSES, Trace
from engine.timeline.labels import subsystem_label
from engine.timeline.lanes import (
    GROUP_GAP,
    ISSUE_LANE_HEIGHT,
    ISSUE_SUB_ROWS,
    SUBSYSTEM_LANE_HEIGHT,
    SUBSYSTEM_SUB_ROWS,
    WARP_COLORS,
    WARP_LANE_HEIGHT,
    Lane,
    LaneGroup,
    LayoutInput,
    TimelineLayout,
    register_lane_group,
)
from engine.timeline.packing import pack_rows, split_by_group, warp_ids, warp_slots

# warp slots leave out the intervals a warp spends outside residency: they overlap the slot's other warps
_SLOT_DROPPED = (STALL_CAUSES.index("not_resident"), STALL_CAUSES.index("finished"))


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
    per_sub = split_by_group(issues["subsystem"].astype(np.int64), len(inp.subsystems), issues["issue"],
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
    warps = inp.warps if inp.warps is not None else warp_ids(trace)
    slots = len(warps) > inp.max_warp_lanes
    lane_of_warp = warp_slots(trace, warps) if slots else np.arange(len(warps))
    n_warp_lanes = int(lane_of_warp.max()) + 1 if len(warps) else 0
    lane_of = np.zeros(int(warps.max()) + 1 if len(warps) else 0, np.int64)
    lane_of[warps] = lane_of_warp           # warp id -> lane, one gather per stall
    stall_lane = lane_of[stalls["warp"]] if len(stalls) else np.zeros(0, np.int64)
    if slots:
        keep = np.flatnonzero(~np.isin(stalls["cause"], _SLOT_DROPPED))
        per_warp = split_by_group(stall_lane[keep], n_warp_lanes, stalls["start"][keep], stalls["end"][keep], keep)
    else:
        per_warp = split_by_group(stall_lane, n_warp_lanes, stalls["start"], stalls["end"],
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
