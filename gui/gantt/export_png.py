"""Export of a Gantt chart as PNG, SVG or PDF, from a live view or straight from a trace (CLI
``export --png/--svg/--pdf``), with a title line naming the kernel, profile, launch and predicted
time, over the whole run or a range of cycles.

Rendering always happens in a fresh off-screen :class:`GanttView` sized to the requested
pixels, so the picture is laid out for that size (axis labels, legend wrap) and the live
widget is never resized under the user. SVG and PDF are painted through the same QPainter calls
as the screen (QSvgGenerator, QPdfWriter), so bars stay vectors unless the chart is dense enough
for the raster layer, which then embeds its image.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.pipeline.trace import Trace
from gui.figure_file import (
    TITLE_PX,
    Piece,
    application,
    check_format,
    check_writable,
    lay_out,
    write_figure,
    write_pieces,
)
from gui.gantt.widget import GanttView
from gui.theme import LIGHT


def _launch_text(evaluation: Any) -> str:
    """Kernel, GPU profile, launch, occupancy and edits: the what-if a figure shows."""
    from engine.evaluation.provenance import state_text
    from engine.names import display_name

    state = evaluation.state
    launch = state.launch
    dims = "×".join(str(x) for x in launch.grid), "×".join(str(x) for x in launch.block)
    profile = evaluation.profile.name if evaluation.profile is not None else state.profile
    kernel = display_name(state.kernel)
    if len(kernel) > 48 and "(" in kernel:      # a long signature would push the figures off the line
        kernel = kernel.split("(", 1)[0] + "(…)"
    # the occupancy and the user's edits ("as computed" without any)
    return f"{kernel} · {profile} · grid {dims[0]}, block {dims[1]}, {state_text(evaluation)}"


def title_line(evaluation: Any) -> str:
    """Kernel, GPU profile, launch, occupancy, edits and the predicted time: what a figure in a
    report needs to say (marked when it rests on assumed inputs)."""
    from engine.evaluation.caveats import figure_caveats

    text = _launch_text(evaluation)
    sim = evaluation.simulation
    caveats = figure_caveats(evaluation)
    if sim is not None:
        figures = evaluation.figures(float(sim.cycles))
        text += f" · predicted {caveats.mark(f'{figures.sm_cycles:,.0f}')} SM cycles"
        if figures.microseconds is not None:
            text += f" ({figures.kernel_cycles:,.0f} kernel cycles = {figures.microseconds:.3f} µs)"
    return text + caveats.title_suffix()


def figure_title(evaluation: Any, what: str) -> str:
    """The title line of a figure other than the timeline: kernel, profile, launch, ``what`` and
    the mark of figures resting on assumed inputs."""
    from engine.evaluation.caveats import figure_caveats

    return f"{_launch_text(evaluation)} · {what}{figure_caveats(evaluation).title_suffix()}"


def _copy_of(view: GanttView) -> GanttView:
    """A light-themed copy of ``view`` showing what it shows (trace, colours, unit, lanes,
    collapsed and hidden groups, highlights): figures for a report are light whatever the desktop."""
    copy = GanttView(theme=LIGHT)
    copy.param_prefix = view.param_prefix
    copy.set_layout(view.trace, view.instruction_names, view.layout_data)
    copy.set_color_mode(view.color_mode())
    copy.time_axis.set_clock(view.time_axis.clock_mhz())
    copy.time_axis.set_unit(view.time_axis.unit())
    copy.set_lane_height(view.lane_height())
    copy.groups.set_all_collapsed(False)               # as the view shows it, never the copy's own choice
    for label in view.groups.collapsed_groups():      # collapsed groups stay heat strips
        copy.groups.set_group_collapsed(label, True)
    copy.groups.set_hidden_groups(view.groups.hidden_groups())   # and filtered ones stay out
    copy.highlight_instructions(view.highlighted_instructions)
    region = view.highlighted_range()
    if region is not None:
        copy.highlight_range(*region)
    return copy


BASELINE_SHARE = 0.42      # of a figure's chart height, the pinned baseline's


def export_timeline(view: GanttView, path: str | Path, width: int = 1600, height: int = 900,
                    title: str = "", x_range: tuple[float, float] | None = None,
                    baseline: GanttView | None = None, captions: tuple[str, str] = ("", ""),
                    below: Sequence[Piece] = ()) -> Path:
    """Save what ``view`` shows (trace, colour mode, time unit, highlights) as PNG, SVG or PDF
    (by suffix), over the whole run or ``x_range`` (cycles), with ``title`` above the chart.
    ``baseline``: a second chart (the pinned baseline) drawn above it on the same cycle axis,
    ``captions`` naming (baseline, current); ``below``: further pieces under the chart, such as
    the time series (laid out here; one with a ``set_x_range`` method is put on the same cycles)."""
    if view.layout_data is None or view.trace is None:
        raise ValueError("the Gantt view shows no trace; nothing to export")
    copies = [_copy_of(view)]
    if baseline is not None and baseline.layout_data is not None and baseline.trace is not None:
        copies.insert(0, _copy_of(baseline))
        copies[0].hide_legend()           # the current chart's legend and time axis serve both
        copies[0].plot.showAxis("bottom", False)
    try:
        room = height - (TITLE_PX if title else 0) - sum(p.height for p in below)
        if room < 100:
            raise ValueError(f"{height} pixels leave no room for the chart")
        if len(copies) == 2:
            first = int(room * BASELINE_SHARE)
            pieces = [Piece(copies[0], first, captions[0] or "baseline"),
                      Piece(copies[1], room - first, captions[1] or "current")]
        else:
            pieces = [Piece(copies[0], room, captions[1])]
        for piece in pieces:
            lay_out(piece.view, width, piece.chart_height)
        spans = []
        for copy in copies:
            copy.fit()
            spans.append(copy.time_axis.x_range())
        # one cycle axis for every chart: the longer run whole, or the range asked for
        shared = x_range or (min(a for a, _ in spans), max(b for _, b in spans))
        for piece in below:
            lay_out(piece.view, width, piece.chart_height)
            if hasattr(piece.view, "set_x_range"):
                piece.view.set_x_range(*shared)
        for copy in copies:
            vb = copy.plot.getViewBox()
            # each view limits panning to its own run: widen the limits to the shared range first
            vb.setLimits(xMin=min(shared[0], vb.state["limits"]["xLimits"][0] or shared[0]),
                         xMax=max(shared[1], vb.state["limits"]["xLimits"][1] or shared[1]))
            vb.setXRange(*shared, padding=0.0)
        out = Path(path)
        if len(pieces) == 1 and not below and not pieces[0].caption:
            return write_figure(copies[0], out, width, height, title)
        check_format(out)
        check_writable(out.with_name(out.name + ".part"))
        return write_pieces(out, width, height, title, [*pieces, *below])
    finally:
        for copy in copies:
            copy.close()
            copy.deleteLater()


def export_png(view: GanttView, path: str | Path, width: int = 1600, height: int = 900) -> Path:
    """Save what ``view`` shows (same trace, x-range, colour mode, highlights) as a PNG."""
    return export_timeline(view, path, width, height, x_range=view.time_axis.x_range())


def render_trace_png(trace: Trace, names: Sequence[str], units: Sequence[str] | None, cycles: float | None,
                     path: str | Path, width: int = 1600, height: int = 900,
                     subsystems: Sequence[str] | None = None, color_mode: str = "warp",
                     title: str = "", x_range: tuple[float, float] | None = None,
                     clock_mhz: float = 0.0) -> Path:
    """Draw ``trace`` into a PNG, SVG or PDF (by suffix) without a window (creates the
    QApplication when needed)."""
    application()
    view = GanttView(theme=LIGHT)
    try:
        view.set_trace(trace, names, units, cycles, subsystems)
        view.set_color_mode(color_mode)
        view.time_axis.set_clock(clock_mhz)
        lay_out(view, width, height - (TITLE_PX if title else 0))
        if x_range is not None:
            view.plot.getViewBox().setXRange(*x_range, padding=0.0)
        else:
            view.fit()
        return write_figure(view, path, width, height, title)
    finally:
        view.close()
        view.deleteLater()
