"""The pinned baseline: one finished evaluation the current result is compared with (Edit › Pin as
baseline). The chart draws its trace above the current one and the Compare tab lists both."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from engine.evaluation import Evaluation


class Baseline(QObject):
    changed = Signal(object)        # the pinned Evaluation, or None when cleared

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.result: Evaluation | None = None
        self.label = ""

    def pin(self, result: Evaluation, label: str) -> None:
        self.result, self.label = result, label
        self.changed.emit(result)

    def clear(self) -> None:
        if self.result is not None:
            self.result, self.label = None, ""
            self.changed.emit(None)
