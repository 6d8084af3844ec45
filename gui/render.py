"""The drawing layer the CLI is handed by ``main.py`` (``engine.cli.render.Renderer``).

Qt is imported when a picture is drawn, not when this module is: a command that draws nothing
never loads PySide6. Pictures are drawn on the offscreen platform (unless ``QT_QPA_PLATFORM``
names another), so export works headless and with a display that cannot be reached.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from engine.errors import WarplineError
from gui.display import use_offscreen_for_pictures


def _headless_platform() -> None:
    # Pictures need no display: offscreen always (unless QT_QPA_PLATFORM names a platform), so
    # that a DISPLAY that cannot be reached never aborts a command (see gui.display).
    use_offscreen_for_pictures()
    _quiet_offscreen_notices()


_OFFSCREEN_NOTICES = ("This plugin does not support",)   # window-manager hints offscreen cannot pass


def _quiet_offscreen_notices() -> None:
    """Drop the offscreen platform's notices about window-manager features it lacks (printed on
    every picture, before any real message); every other Qt message still reaches stderr."""
    global _quieted
    if _quieted:
        return
    from PySide6.QtCore import qInstallMessageHandler

    def handler(_mode: object, _context: object, message: str) -> None:
        if not message.startswith(_OFFSCREEN_NOTICES):
            print(message, file=sys.stderr)

    qInstallMessageHandler(handler)
    _quieted = True


_quieted = False


class QtRenderer:
    def timeline_png(self, evaluation: Any, path: str | Path, *, width: int, height: int,
                     color_mode: str) -> Path:
        _headless_platform()
        from gui.gantt.export_png import render_trace_png

        sim = evaluation.simulation
        try:
            return render_trace_png(sim.trace, evaluation.trace_names, None, float(sim.cycles), path,
                                    width=width, height=height, subsystems=evaluation.trace_units,
                                    color_mode=color_mode)
        except OSError as exc:
            raise WarplineError(f"{path}: cannot write the PNG: {exc}") from None

    def timeline_image(self, evaluation: Any, path: str | Path, *, width: int, height: int,
                       color_mode: str, x_range: tuple[float, float] | None = None, title: bool = True,
                       series_buckets: int | None = None) -> Path:
        _headless_platform()
        from gui.gantt.export_png import render_trace_png, title_line

        sim = evaluation.simulation
        if series_buckets is not None:
            return self._timeline_with_series(evaluation, path, width, height, color_mode, x_range,
                                              title_line(evaluation) if title else "", series_buckets)
        try:
            return render_trace_png(sim.trace, evaluation.trace_names, None, float(sim.cycles), path,
                                    width=width, height=height, subsystems=evaluation.trace_units,
                                    color_mode=color_mode, title=title_line(evaluation) if title else "",
                                    x_range=x_range, clock_mhz=evaluation.clock_mhz)
        except (OSError, ValueError) as exc:
            raise WarplineError(f"{path}: cannot write the timeline: {exc}") from None

    def _timeline_with_series(self, evaluation: Any, path: str | Path, width: int, height: int, color_mode: str,
                              x_range: tuple[float, float] | None, title: str, buckets: int) -> Path:
        from engine.evaluation.timeseries import time_series
        from gui.gantt.export_pair import evaluation_view
        from gui.gantt.export_png import Piece, _application, export_timeline
        from gui.gantt.timeseries import export_copy

        _application()
        view = evaluation_view(evaluation, color_mode)
        series = export_copy(time_series(evaluation, buckets))
        try:
            below = [Piece(series, max(160, int(height * 0.3)), "time series (this SM)")]
            return export_timeline(view, path, width, height, title=title, x_range=x_range, below=below)
        except (OSError, ValueError) as exc:
            raise WarplineError(f"{path}: cannot write the timeline: {exc}") from None
        finally:
            for widget in (view, series):
                widget.close()
                widget.deleteLater()

    def curves_image(self, evaluation: Any, path: str | Path, *, width: int, height: int,
                     title: bool = True) -> Path:
        _headless_platform()
        from gui.curves import export_curves

        try:
            return export_curves(evaluation, path, width, height, title=title)
        except (OSError, ValueError) as exc:
            raise WarplineError(f"{path}: cannot write the occupancy curves: {exc}") from None

    def roofline_image(self, evaluation: Any, path: str | Path, *, width: int, height: int,
                       title: bool = True, work: str | None = None) -> Path:
        _headless_platform()
        from gui.gantt.export_png import figure_title
        from gui.panels.roofline import export_roofline

        try:
            return export_roofline(evaluation, path, width, height,
                                   title=figure_title(evaluation, "roofline") if title else "", work=work)
        except (OSError, ValueError) as exc:
            raise WarplineError(f"{path}: cannot write the roofline: {exc}") from None

    def pair_image(self, before: Any, after: Any, path: str | Path, *, width: int, height: int,
                   labels: tuple[str, str] = ("before", "after")) -> Path:
        _headless_platform()
        from gui.gantt.export_pair import export_pair

        title = f"{labels[0]} → {labels[1]} · {before.profile.name if before.profile else before.state.profile}"
        try:
            return export_pair(before, after, path, width, height, labels=labels, title=title)
        except (OSError, ValueError) as exc:
            raise WarplineError(f"{path}: cannot write the before/after timelines: {exc}") from None

    def batch_png(self, series: Any, path: str | Path, *, model_title: str) -> Path:
        _headless_platform()
        from gui.batch_plot import plot_batch

        try:
            plot_batch(series, path, model_title=model_title)
        except OSError as exc:
            raise WarplineError(f"{path}: cannot write the PNG: {exc}") from None
        return Path(path)

    def validation_png(self, result: Any, path: str | Path) -> Path:
        _headless_platform()
        from gui.plots import plot_validation

        try:
            plot_validation(result, path)
        except OSError as exc:
            raise WarplineError(f"{path}: cannot write the PNG: {exc}") from None
        return Path(path)
