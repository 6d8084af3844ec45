"""``Exporter``: every picture and table Warpline writes of an evaluation, for the window (File ›
Export) and for the CLI's renderer (``main.py export``, :mod:`gui.render`) alike, so that a PNG,
SVG, PDF or CSV of either comes from the same code. Like the renderer it imports Qt (and the
engine's writers) when something is written, not when this module is.

Pictures are PNG, SVG or PDF by the file's suffix, drawn in the light theme whatever the desktop's.
The timeline has two sources: an evaluation (a fresh chart of its trace, as the CLI draws it) or
the chart the window shows (a copy of it with its colours, lanes, groups, highlights, pinned
baseline and time series). The tables are :mod:`engine.evaluation.exports`' writers.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gui.panels.gantt import GanttPanel

SERIES_SHARE = 0.3           # of a timeline figure's height, the time series' (at least 160 px)
SERIES_CAPTION = "time series (this SM)"


class Exporter:
    """Writes figures and tables of evaluations (no state of its own: one serves every caller)."""

    # ---- the timeline -------------------------------------------------------------------------
    def timeline_image(self, evaluation: Any, path: str | Path, *, width: int, height: int, color_mode: str,
                       x_range: tuple[float, float] | None = None, title: bool = True,
                       series_buckets: int | None = None) -> Path:
        """The evaluation's timeline (a chart of its trace in ``color_mode``) over the whole run or
        ``x_range``, under its title line; ``series_buckets``: with the time series under it."""
        from gui.gantt.export_png import render_trace_png, title_line

        text = title_line(evaluation) if title else ""
        if series_buckets is not None:
            return self._timeline_with_series(evaluation, path, width, height, color_mode, x_range, text,
                                              series_buckets)
        sim = evaluation.simulation
        return render_trace_png(sim.trace, evaluation.trace_names, None, float(sim.cycles), path,
                                width=width, height=height, subsystems=evaluation.trace_units,
                                color_mode=color_mode, title=text, x_range=x_range, clock_mhz=evaluation.clock_mhz)

    def timeline_png(self, evaluation: Any, path: str | Path, *, width: int, height: int, color_mode: str) -> Path:
        """The whole timeline without a title line (what earlier versions of ``export`` wrote)."""
        from gui.gantt.export_png import render_trace_png

        sim = evaluation.simulation
        return render_trace_png(sim.trace, evaluation.trace_names, None, float(sim.cycles), path,
                                width=width, height=height, subsystems=evaluation.trace_units,
                                color_mode=color_mode)

    def _timeline_with_series(self, evaluation: Any, path: str | Path, width: int, height: int, color_mode: str,
                              x_range: tuple[float, float] | None, title: str, buckets: int) -> Path:
        from engine.evaluation.timeseries import time_series
        from gui.figure_file import Piece, application
        from gui.gantt.export_pair import evaluation_view
        from gui.gantt.export_png import export_timeline
        from gui.gantt.timeseries import export_copy

        application()
        view = evaluation_view(evaluation, color_mode)
        series = export_copy(time_series(evaluation, buckets))
        try:
            below = [Piece(series, max(160, int(height * SERIES_SHARE)), SERIES_CAPTION)]
            return export_timeline(view, path, width, height, title=title, x_range=x_range, below=below)
        finally:
            for widget in (view, series):
                widget.close()
                widget.deleteLater()

    def shown_timeline(self, chart: GanttPanel, path: str | Path, width: int, height: int, *,
                       visible: bool = False, title: bool = True, baseline: bool = True,
                       baseline_label: str = "") -> Path:
        """What the window's chart shows, over the whole run or (``visible``) the cycles in view, under
        a title line; ``baseline``: a pinned baseline (or comparison) the chart shows is drawn above
        it as on screen, captioned with ``baseline_label``; the time series under it when shown."""
        from gui.figure_file import Piece
        from gui.gantt.export_pair import caption
        from gui.gantt.export_png import export_timeline, title_line
        from gui.gantt.timeseries import export_copy

        result = chart.result
        text = title_line(result) if title and result is not None else ""
        shown = chart.baseline if baseline else None
        captions = ("", "")
        if shown is not None and result is not None:
            captions = (f"baseline — {caption(baseline_label, shown)}", f"current — {caption('', result)}")
        below, copies = [], []
        if chart.series_box.isChecked() and chart.series.series is not None:
            # the time series as shown under the chart, on the same cycles
            copies.append(export_copy(chart.series.series))
            below.append(Piece(copies[-1], max(160, int(height * SERIES_SHARE)), SERIES_CAPTION))
        try:
            return export_timeline(chart.view, path, width, height, title=text,
                                   x_range=chart.view.time_axis.x_range() if visible else None,
                                   baseline=chart.baseline_view if shown is not None else None,
                                   captions=captions, below=below)
        finally:
            for copy in copies:
                copy.close()
                copy.deleteLater()

    def pair_image(self, before: Any, after: Any, path: str | Path, *, width: int, height: int,
                   labels: tuple[str, str] = ("before", "after")) -> Path:
        """Two evaluations' timelines stacked on one cycle axis (``diff --png``)."""
        from gui.gantt.export_pair import export_pair

        title = f"{labels[0]} → {labels[1]} · {before.profile.name if before.profile else before.state.profile}"
        return export_pair(before, after, path, width, height, labels=labels, title=title)

    # ---- the other figures --------------------------------------------------------------------
    def curves_image(self, evaluation: Any, path: str | Path, *, width: int, height: int,
                     title: bool = True) -> Path:
        """The occupancy curves, as the Curves tab draws them, under a title line."""
        from gui.curves import export_curves

        return export_curves(evaluation, path, width, height, title=title)

    def roofline_image(self, evaluation: Any, path: str | Path, *, width: int, height: int,
                       title: bool = True, work: str | None = None) -> Path:
        """The roofline (``work``: "flop" or "instruction"; default as the Roofline tab chooses)."""
        from gui.gantt.export_png import figure_title
        from gui.panels.roofline import export_roofline

        return export_roofline(evaluation, path, width, height,
                               title=figure_title(evaluation, "roofline") if title else "", work=work)

    def batch_png(self, series: Any, path: str | Path, *, model_title: str) -> Path:
        """A batch's sweep plot."""
        from gui.batch_plot import plot_batch

        plot_batch(series, path, model_title=model_title)
        return Path(path)

    def validation_png(self, result: Any, path: str | Path) -> Path:
        """The validation plot: predicted against measured cycles."""
        from gui.plots import plot_validation

        plot_validation(result, path)
        return Path(path)

    # ---- tables -------------------------------------------------------------------------------
    def trace_csv(self, evaluation: Any, path: str | Path, source: Path | None) -> int:
        """Timeline events and stalls; ``source``: the PTX file the comment lines name."""
        from engine.evaluation.exports import write_trace_csv

        return write_trace_csv(evaluation, path, source)

    def predictions_csv(self, evaluation: Any, path: str | Path, source: Path | None) -> None:
        from engine.evaluation.exports import write_predictions_csv

        write_predictions_csv(evaluation, path, source)

    def block_csv(self, evaluation: Any, path: str | Path) -> None:
        from engine.evaluation.exports import write_block_csv

        write_block_csv(evaluation, path)

    def supersteps_csv(self, evaluation: Any, path: str | Path) -> None:
        from engine.evaluation.exports import write_supersteps_csv

        write_supersteps_csv(evaluation, path)

    def curves_csv(self, evaluation: Any, path: str | Path) -> None:
        from engine.evaluation.exports import write_curves_csv

        write_curves_csv(evaluation, path)
