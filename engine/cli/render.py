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

    def validation_png(self, result: Any, path: str | Path) -> Path:
        """Predicted against measured cycles of a validation run."""


def require_renderer(renderer: Renderer | None, what: str) -> Renderer:
    if renderer is None:
        raise WarplineError(f"{what} needs the drawing layer (PySide6): run it through main.py")
    return renderer
