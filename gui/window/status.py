"""The status bar's progress: the recomputation's bar (shown only when it lasts) and the bar of a
file being opened, with its step, Cancel and Esc."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QToolButton, QWidget

from gui.loader import LoadRequest, PtxLoader

PROGRESS_DELAY_MS = 250


class ComputeProgress(QProgressBar):
    """The models' progress. Shown only for a recomputation that lasts: quick edits would make it
    flicker."""

    def __init__(self, still_busy: Callable[[], bool], parent: QWidget | None = None) -> None:
        """``still_busy``: whether the recomputation still runs when the delay is over."""
        super().__init__(parent)
        self.setMaximumWidth(180)
        self.setRange(0, 100)
        self.hide()
        self._delay = QTimer(self)
        self._delay.setSingleShot(True)
        self._delay.setInterval(PROGRESS_DELAY_MS)
        self._delay.timeout.connect(lambda: self.setVisible(still_busy()))

    def set_busy(self, busy: bool) -> None:
        if busy:
            self._delay.start()
        else:
            self._delay.stop()
            self.hide()

    def show_progress(self, fraction: float, what: str) -> None:
        self.setValue(int(fraction * 100))
        self.setFormat(f"{what} %p%")


class LoadStatus(QWidget):
    """What a file being opened shows in the status bar: the step, a busy bar, Cancel (Esc)."""

    def __init__(self, window: QWidget, cancel: Callable[[], object]) -> None:
        """``window``: where Esc cancels; ``cancel``: stops the load."""
        super().__init__()
        self.label = QLabel()
        self.label.setMaximumWidth(520)
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)              # busy until a step says how far it is (the parse does)
        self.bar.setMaximumWidth(120)
        self.cancel = QToolButton()
        self.cancel.setText("Cancel")
        self.cancel.setToolTip("Stop opening this file (Esc); the open kernel stays as it is")
        self.cancel.clicked.connect(cancel)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label)
        row.addWidget(self.bar)
        row.addWidget(self.cancel)
        self.hide()
        self.cancel_key = QShortcut(QKeySequence(Qt.Key.Key_Escape), window)
        self.cancel_key.setContext(Qt.ShortcutContext.WindowShortcut)
        self.cancel_key.setEnabled(False)        # Esc belongs to the editors unless a file loads
        self.cancel_key.activated.connect(cancel)

    def follow(self, loader: PtxLoader) -> None:
        """Show the steps, progress and business of ``loader`` (gui.loader)."""
        loader.stageChanged.connect(self._stage)
        loader.progressChanged.connect(self._progress)
        loader.busyChanged.connect(self._busy)

    def _stage(self, request: LoadRequest, text: str) -> None:
        self.label.setText(f"{text}…")
        self.label.setToolTip(str(request.path))
        self.bar.setRange(0, 0)              # busy until the step says how far it is

    def _progress(self, request: LoadRequest, fraction: float) -> None:
        # the parse of the chosen kernel: the bar fills as it goes
        self.bar.setRange(0, 1000)
        self.bar.setValue(round(1000 * fraction))

    def _busy(self, busy: bool) -> None:
        self.setVisible(busy)
        self.cancel_key.setEnabled(busy)
