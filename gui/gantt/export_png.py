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

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyqtgraph.exporters import ImageExporter
from PySide6.QtCore import QMarginsF, QRectF, QSize, QSizeF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QImage, QPainter
from PySide6.QtWidgets import QApplication

from engine.pipeline.trace import Trace
from gui.gantt import colors
from gui.gantt.widget import GanttView
from gui.theme import LIGHT


def _application() -> QApplication:
    app = QApplication.instance()
    return app if isinstance(app, QApplication) else QApplication([])


def _render(view: Any, path: str | Path, width: int, height: int) -> Path:
    """Export ``view``, laid out by :func:`_lay_out` at width × height, as a PNG without a title."""
    exporter = ImageExporter(view.graphics.scene())
    params = exporter.parameters()
    params["background"] = colors.BACKGROUND
    params["antialias"] = False
    image: QImage = exporter.export(toBytes=True)
    if (image.width(), image.height()) != (width, height):
        # a rounding difference of a pixel: scale rather than hand back another size
        image = image.scaled(width, height, Qt.AspectRatioMode.IgnoreAspectRatio,
                             Qt.TransformationMode.SmoothTransformation)
    out = Path(path)
    target = out.with_name(out.name + ".part")
    if not image.save(str(target), "PNG"):
        target.unlink(missing_ok=True)
        raise OSError(f"could not write the PNG file {out}")
    os.replace(target, out)
    return out


FORMATS = (".png", ".svg", ".pdf")
TITLE_PX = 30                 # height of the title line above the chart


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


CAPTION_PX = 22               # a caption line above a piece of a stacked figure


@dataclass(frozen=True)
class Piece:
    """One chart of a stacked figure: a widget with a ``graphics`` view, its height in pixels
    (caption included) and a caption line above it ('' for none)."""

    view: Any
    height: int
    caption: str = ""

    @property
    def chart_height(self) -> int:
        return self.height - (CAPTION_PX if self.caption else 0)


def _text_line(painter: QPainter, rect: QRectF, text: str, px: int, bold: bool) -> None:
    font = QFont(painter.font())
    font.setPixelSize(px)
    font.setBold(bold)
    painter.setFont(font)
    painter.setPen(QColor(colors.FOREGROUND))
    metrics = QFontMetrics(font)
    painter.drawText(rect, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                     metrics.elidedText(text, Qt.TextElideMode.ElideRight, int(rect.width())))


def _paint_stack(painter: QPainter, width: int, height: int, title: str, pieces: Sequence[Piece]) -> None:
    """The title line, then each piece (its caption, its chart) below the one before."""
    painter.fillRect(QRectF(0, 0, width, height), QColor(colors.BACKGROUND))
    top = 0.0
    if title:
        _text_line(painter, QRectF(8, 0, width - 16, TITLE_PX), title, 15, True)
        top = TITLE_PX
    for piece in pieces:
        if piece.caption:
            _text_line(painter, QRectF(8, top, width - 16, CAPTION_PX), piece.caption, 13, False)
            top += CAPTION_PX
        piece.view.graphics.render(painter, QRectF(0, top, width, piece.chart_height),
                                   piece.view.graphics.viewport().rect())
        top += piece.chart_height


def _paint(view: Any, painter: QPainter, width: int, height: int, title: str) -> None:
    """The title line, then the chart (laid out for width × the rest) below it."""
    _paint_stack(painter, width, height, title, [Piece(view, height - (TITLE_PX if title else 0))])


def _lay_out(view: Any, width: int, height: int) -> None:
    """Size ``view`` (a :class:`GanttView`, or any widget with a ``graphics`` view to draw) so
    its chart area is exactly width × height."""
    view.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    view.show()
    app = _application()
    for _ in range(3):       # the toolbar's height is only known after the first layout pass
        app.processEvents()
        extra_w = view.width() - view.graphics.width()
        extra_h = view.height() - view.graphics.height()
        view.resize(width + extra_w, height + extra_h)
        app.processEvents()
        if (view.graphics.width(), view.graphics.height()) == (width, height):
            break
    labels = getattr(view, "lane_labels", None)      # (a chart with lanes: labels for this size)
    if labels is not None:
        labels.refresh()
    app.processEvents()


def _check_writable(target: Path) -> None:
    """OSError at once when ``target`` cannot be created: QSvgGenerator, QPdfWriter and
    QImage.save would only print a Qt warning, after the whole chart was laid out and painted."""
    try:
        with open(target, "wb"):
            pass
    except OSError as exc:
        raise OSError(exc.strerror or str(exc)) from None
    target.unlink(missing_ok=True)


def _write(view: Any, path: str | Path, width: int, height: int, title: str) -> Path:
    """Write the chart (and title) as PNG, SVG or PDF, by the file's suffix (``view`` as for
    :func:`_lay_out`, with a ``drop_pixmap_caches`` method)."""
    out = Path(path)
    _check_format(out)
    _check_writable(out.with_name(out.name + ".part"))
    chart_h = height - (TITLE_PX if title else 0)
    _lay_out(view, width, chart_h)
    if out.suffix.lower() == ".png" and not title:
        return _render(view, out, width, height)
    return _write_stack(out, width, height, title, [Piece(view, chart_h)])


def _check_format(out: Path) -> None:
    if out.suffix.lower() not in FORMATS:
        raise ValueError(f"{out}: write the figure as {', '.join(FORMATS)}")


def write_stack(path: str | Path, width: int, height: int, title: str, pieces: Sequence[Piece]) -> Path:
    """Lay each piece out at width × its chart height and write them stacked under ``title`` as
    PNG, SVG or PDF (by suffix)."""
    out = Path(path)
    _check_format(out)
    _check_writable(out.with_name(out.name + ".part"))
    for piece in pieces:
        _lay_out(piece.view, width, piece.chart_height)
    return _write_stack(out, width, height, title, pieces)


def _write_stack(out: Path, width: int, height: int, title: str, pieces: Sequence[Piece]) -> Path:
    """Paint laid-out pieces into ``out`` (PNG, SVG or PDF by suffix), through a temporary file
    renamed over it: a reader never sees half a file, and the file gets the user's umask."""
    suffix = out.suffix.lower()
    if suffix != ".png":
        for piece in pieces:
            piece.view.drop_pixmap_caches()
    target = out.with_name(out.name + ".part")
    if suffix == ".png":
        image = QImage(width, height, QImage.Format.Format_ARGB32)
        if title:
            image.setText("Title", title)     # the title line, also as the PNG's text (readable by tools)
        image.setText("Software", "Warpline")
        painter = QPainter(image)
        try:
            _paint_stack(painter, width, height, title, pieces)
        finally:
            painter.end()
        if not image.save(str(target), "PNG"):
            target.unlink(missing_ok=True)
            raise OSError(f"could not write the PNG file {out}")
    elif suffix == ".svg":
        from PySide6.QtSvg import QSvgGenerator

        generator = QSvgGenerator()
        generator.setFileName(str(target))
        generator.setSize(QSize(width, height))
        generator.setViewBox(QRectF(0, 0, width, height))
        generator.setTitle(title or "Warpline timeline")
        generator.setDescription("Pipeline simulation of one SM (Warpline)")
        painter = QPainter(generator)
        try:
            _paint_stack(painter, width, height, title, pieces)
        finally:
            painter.end()
    else:
        from PySide6.QtGui import QPageLayout, QPageSize, QPdfWriter

        writer = QPdfWriter(str(target))
        writer.setResolution(96)
        writer.setTitle(title or "Warpline timeline")
        page = QPageSize(QSizeF(width, height), QPageSize.Unit.Point, name="timeline",
                         matchPolicy=QPageSize.SizeMatchPolicy.ExactMatch)
        writer.setPageLayout(QPageLayout(page, QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0)))
        painter = QPainter(writer)
        try:
            # the page is width × height points; paint in pixels at 96 dpi scaled onto it
            scale = writer.width() / width
            painter.scale(scale, scale)
            _paint_stack(painter, width, height, title, pieces)
        finally:
            painter.end()
    if not target.is_file() or target.stat().st_size == 0:
        raise OSError(f"could not write {out}")
    os.replace(target, out)          # atomic: a reader never sees half a file
    return out


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
            _lay_out(piece.view, width, piece.chart_height)
        spans = []
        for copy in copies:
            copy.fit()
            spans.append(copy.time_axis.x_range())
        # one cycle axis for every chart: the longer run whole, or the range asked for
        shared = x_range or (min(a for a, _ in spans), max(b for _, b in spans))
        for piece in below:
            _lay_out(piece.view, width, piece.chart_height)
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
            return _write(copies[0], out, width, height, title)
        _check_format(out)
        _check_writable(out.with_name(out.name + ".part"))
        return _write_stack(out, width, height, title, [*pieces, *below])
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
    _application()
    view = GanttView(theme=LIGHT)
    try:
        view.set_trace(trace, names, units, cycles, subsystems)
        view.set_color_mode(color_mode)
        view.time_axis.set_clock(clock_mhz)
        _lay_out(view, width, height - (TITLE_PX if title else 0))
        if x_range is not None:
            view.plot.getViewBox().setXRange(*x_range, padding=0.0)
        else:
            view.fit()
        return _write(view, path, width, height, title)
    finally:
        view.close()
        view.deleteLater()
