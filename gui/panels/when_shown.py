"""Work a panel does for the newest result only while it is on screen.

An edit whose result nobody looks at must cost the UI thread nothing, so panels that derive
tables from an evaluation (the verdict, hot spots, memory traffic, the comparison) keep the newest
inputs and draw them when the panel is visible and the inputs are new: one mechanism, used by all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QWidget


class WhenShown:
    """Calls ``draw(*inputs)`` for the newest inputs offered, once, while ``widget`` is visible.
    Inputs are compared by identity (evaluations and their parts are not compared by value). The
    widget's ``showEvent`` calls :meth:`run` so that hidden offers are drawn on showing."""

    def __init__(self, widget: QWidget, draw: Callable[..., None]) -> None:
        self.widget = widget
        self.draw = draw
        self.pending: tuple[Any, ...] | None = None
        self.shown: tuple[Any, ...] | None = None

    def offer(self, *inputs: Any) -> None:
        self.pending = inputs
        if self.widget.isVisible():
            self.run()

    def run(self, force: bool = False) -> None:
        inputs = self.pending
        if inputs is None:
            return
        if not force and self.shown is not None and len(inputs) == len(self.shown) \
                and all(a is b for a, b in zip(inputs, self.shown, strict=True)):
            return
        self.shown = inputs
        self.draw(*inputs)
