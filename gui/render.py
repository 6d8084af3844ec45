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
from gui.exporter import Exporter


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
    """The CLI's pictures, drawn by the window's :class:`~gui.exporter.Exporter` on the offscreen
    platform; a file that cannot be written is a WarplineError naming it."""

    def __init__(self) -> None:
        self.exporter = Exporter()

    def timeline_png(self, evaluation: Any, path: str | Path, *, width: int, height: int,
                     color_mode: str) -> Path:
        _headless_platform()
        try:
            return self.exporter.timeline_png(evaluation, path, width=width, height=height, color_mode=color_mode)
        except OSError as exc:
            raise WarplineError(f"{path}: cannot write the PNG: {exc}") from None

    def timeline_image(self, evaluation: Any, path: str | Path, *, width: int, height: int,
                       color_mode: str, x_range: tuple[float, float] | None = None, title: bool = True,
                       series_buckets: int | None = None) -> Path:
        _headless_platform()
        try:
            return self.exporter.timeline_image(evaluation, path, width=width, height=height, color_mode=color_mode,
                                                x_range=x_range, title=title, series_buckets=series_buckets)
        except (OSError, ValueError) as exc:
            raise WarplineError(f"{path}: cannot write the timeline: {exc}") from None

    def curves_image(self, evaluation: Any, path: str | Path, *, width: int, height: int,
                     title: bool = True) -> Path:
        _headless_platform()
        try:
            return self.exporter.curves_image(evaluation, path, width=width, height=height, title=title)
        except (OSError, ValueError) as exc:
            raise WarplineError(f"{path}: cannot write the occupancy curves: {exc}") from None

    def roofline_image(self, evaluation: Any, path: str | Path, *, width: int, height: int,
                       title: bool = True, work: str | None = None) -> Path:
        _headless_platform()
        try:
            return self.exporter.roofline_image(evaluation, path, width=width, height=height, title=title, work=work)
        except (OSError, ValueError) as exc:
            raise WarplineError(f"{path}: cannot write the roofline: {exc}") from None

    def pair_image(self, before: Any, after: Any, path: str | Path, *, width: int, height: int,
                   labels: tuple[str, str] = ("before", "after")) -> Path:
        _headless_platform()
        try:
            return self.exporter.pair_image(before, after, path, width=width, height=height, labels=labels)
        except (OSError, ValueError) as exc:
            raise WarplineError(f"{path}: cannot write the before/after timelines: {exc}") from None

    def batch_png(self, series: Any, path: str | Path, *, model_title: str) -> Path:
        _headless_platform()
        try:
            return self.exporter.batch_png(series, path, model_title=model_title)
        except OSError as exc:
            raise WarplineError(f"{path}: cannot write the PNG: {exc}") from None

    def validation_png(self, result: Any, path: str | Path) -> Path:
        _headless_platform()
        try:
            return self.exporter.validation_png(result, path)
        except OSError as exc:
            raise WarplineError(f"{path}: cannot write the PNG: {exc}") from None
