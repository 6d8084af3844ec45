"""Qt-free timeline of a simulator trace: where the chart's bars go, what a group of warps does
over time, and the trace's exports. One module per job:

* :mod:`~engine.timeline.layout`: :func:`layout_trace`, the lanes of a trace, top to bottom;
* :mod:`~engine.timeline.lanes`: what a layout is (:class:`Lane`, :class:`TimelineLayout`) and the
  registry of lane kinds (:class:`LaneGroup`, :func:`register_lane_group`);
* :mod:`~engine.timeline.lane_groups`: the built-in lanes (issue slots, subsystems, warps);
* :mod:`~engine.timeline.packing`: sub-rows, the split into lanes and warp slots (compiled);
* :mod:`~engine.timeline.labels`: display names of subsystems and instruction classes;
* :mod:`~engine.timeline.activity`: :func:`group_activities`, the heat strips' categories;
* :mod:`~engine.timeline.csv_export`: the timeline CSV (file and Python API columns);
* :mod:`~engine.timeline.chrome_export`: Chrome Trace Event JSON (Perfetto).

This package re-exports the names its importers used when it was one module, so
``from engine.timeline import layout_trace`` keeps working; new code imports from the module.
"""

from engine.timeline.activity import HEAT_CATEGORIES, IDLE, GroupActivity, group_activities, group_activity
from engine.timeline.chrome_export import export_chrome_trace
from engine.timeline.csv_export import CSV_COLUMNS, export_trace_csv, trace_columns
from engine.timeline.labels import instruction_class, subsystem_label, subsystem_names
from engine.timeline.lanes import (
    WARP_COLORS,
    Lane,
    LaneGroup,
    LayoutInput,
    TimelineLayout,
    lane_group,
    register_lane_group,
)
from engine.timeline.layout import layout_trace
from engine.timeline.packing import pack_rows

__all__ = [
    "CSV_COLUMNS",
    "HEAT_CATEGORIES",
    "IDLE",
    "WARP_COLORS",
    "GroupActivity",
    "Lane",
    "LaneGroup",
    "LayoutInput",
    "TimelineLayout",
    "export_chrome_trace",
    "export_trace_csv",
    "group_activities",
    "group_activity",
    "instruction_class",
    "lane_group",
    "layout_trace",
    "pack_rows",
    "register_lane_group",
    "subsystem_label",
    "subsystem_names",
    "trace_columns",
]
