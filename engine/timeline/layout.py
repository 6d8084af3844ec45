"""Qt-free lane layout of a simulator trace: :func:`layout_trace`.

The Gantt view (``gui/gantt``) only draws what :func:`layout_trace` returns, so everything that
decides *where* a bar goes lives in this package and is tested without Qt.

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

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

import engine.timeline.lane_groups  # noqa: F401 - registers the built-in lane groups
from engine.pipeline.trace import Trace
from engine.timeline.labels import instruction_class, subsystem_names
from engine.timeline.lanes import DEFAULT_MAX_WARP_LANES, LANE_GROUPS, Lane, LayoutInput, TimelineLayout
from engine.timeline.packing import warp_ids

MAX_CLASSES = 12          # instruction classes beyond the most frequent 11 become "other"


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
    warps = warp_ids(trace)
    inp = LayoutInput(trace, names, subs, max_warp_lanes, np.arange(len(issues), dtype=np.int64), warps)
    lanes: list[Lane] = []
    y = 0.0
    for group in LANE_GROUPS:
        built, y = group.build(inp, y)
        lanes.extend(built)
    slots = len(warps) > max_warp_lanes   # warp lanes are shared slots
    return TimelineLayout(lanes, subs, classes, class_of_instr, slots, float(cycles), y)
