"""Before/after figures: two evaluations' timelines stacked on one cycle axis under one title
(``diff --png``, File › Export › Timeline with a baseline or comparison shown)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gui.figure_file import application
from gui.gantt.export_png import export_timeline
from gui.gantt.widget import GanttView
from gui.theme import LIGHT


def evaluation_view(evaluation: Any, color_mode: str = "class") -> GanttView:
    """A chart of ``evaluation``'s trace (not shown; the caller closes it)."""
    sim = evaluation.simulation
    if sim is None or sim.trace is None:
        raise ValueError(evaluation.errors.get("simulation", "the simulation kept no trace"))
    view = GanttView(theme=LIGHT)
    kernel = evaluation.state.kernel
    view.param_prefix = f"{kernel}_param_" if kernel else ""
    view.time_axis.set_clock(evaluation.clock_mhz)
    if evaluation.timeline is not None:
        view.set_layout(sim.trace, evaluation.trace_names, evaluation.timeline)
    else:
        view.set_trace(sim.trace, evaluation.trace_names, None, float(sim.cycles), subsystems=evaluation.trace_units)
    view.set_color_mode(color_mode)
    return view


def caption(label: str, evaluation: Any) -> str:
    """``label: 54,453 SM cycles (Pipeline simulation), 8 blocks/SM``."""
    sim = evaluation.simulation
    parts = [f"{float(sim.cycles):,.0f} SM cycles"] if sim is not None else []
    parts.append(f"{evaluation.resident_blocks} blocks/SM")
    return (f"{label}: " if label else "") + ", ".join(parts)


def export_pair(before: Any, after: Any, path: str | Path, width: int = 1600, height: int = 1000,
                labels: tuple[str, str] = ("before", "after"), title: str = "",
                color_mode: str = "class") -> Path:
    """``before`` above ``after`` (two evaluations with traces) on one cycle axis, as PNG, SVG or
    PDF (by suffix)."""
    application()
    views = [evaluation_view(before, color_mode), evaluation_view(after, color_mode)]
    try:
        return export_timeline(views[1], path, width, height, title=title, baseline=views[0],
                               captions=(f"before — {caption(labels[0], before)}",
                                         f"after — {caption(labels[1], after)}"))
    finally:
        for view in views:
            view.close()
            view.deleteLater()
