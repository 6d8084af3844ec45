"""What a command needs drawn (PNG pictures) without the engine importing Qt.

The entry point (``main.py``) hands the CLI a renderer built in ``gui/``; a command that needs one
and got none says so in one line instead of importing the GUI itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from engine.errors import WarplineError


class Renderer(Protocol):
    def timeline_png(self, evaluation: Any, path: str | Path, *, width: int, height: int,
                     color_mode: str) -> Path:
        """The evaluation's timeline as a PNG of width × height pixels."""

    def timeline_image(self, evaluation: Any, path: str | Path, *, width: int, height: int,
                       color_mode: str, x_range: tuple[float, float] | None = None, title: bool = True,
                       series_buckets: int | None = None) -> Path:
        """The evaluation's timeline as PNG, SVG or PDF (by the path's suffix), over the whole run
        or ``x_range`` (cycles), with a title line (kernel, profile, launch, predicted time);
        ``series_buckets``: the time series under it, in that many buckets."""

    def curves_image(self, evaluation: Any, path: str | Path, *, width: int, height: int,
                     title: bool = True) -> Path:
        """The evaluation's occupancy curves as PNG, SVG or PDF (by the path's suffix), with a
        title line (kernel, profile, launch)."""

    def roofline_image(self, evaluation: Any, path: str | Path, *, width: int, height: int,
                       title: bool = True, work: str | None = None) -> Path:
        """The evaluation's roofline (engine.evaluation.roofline) as PNG, SVG or PDF (by suffix)."""

    def pair_image(self, before: Any, after: Any, path: str | Path, *, width: int, height: int,
                   labels: tuple[str, str] = ("before", "after")) -> Path:
        """Two evaluations' timelines stacked on one cycle axis (``diff --png``)."""

    def validation_png(self, result: Any, path: str | Path) -> Path:
        """Predicted against measured cycles of a validation run."""

    def batch_png(self, series: Any, path: str | Path, *, model_title: str) -> Path:
        """A batch's kernel cycles against its swept parameter, one panel per kernel
        (``engine.batch.best_launches.KernelSeries``), one line per profile."""


def require_renderer(renderer: Renderer | None, what: str) -> Renderer:
    if renderer is None:
        raise WarplineError(f"{what} needs the drawing layer (PySide6): run it through main.py")
    return renderer
