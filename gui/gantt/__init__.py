"""Per-subsystem / per-warp Gantt chart of a pipeline-simulator trace."""

from gui.gantt.export_png import export_png, render_trace_png
from gui.gantt.widget import GanttView

__all__ = ["GanttView", "export_png", "render_trace_png"]
