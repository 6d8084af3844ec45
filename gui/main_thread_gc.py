"""Cyclic garbage is collected on the GUI thread only.

Python's cycle collector runs in whichever thread happens to allocate when a threshold is crossed.
When that is the background computation thread and the garbage holds Qt objects (a closed
window's menus), their destructors run there and can deadlock with the GUI thread (seen: a QMenu
destroyed by the worker's collection while the GUI thread waited on the same object's lock). So
the application turns automatic collection off and a GUI-thread timer collects instead, the same
generations Python would have collected, as their thresholds are crossed. While a computation
has the collector paused (engine.ptx.gc_pause: parsing, analysing or evaluating a kernel, whose
millions of objects a full pass would walk for most of a second), the timer waits for it to end.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

from engine.ptx.gc_pause import pauses_in_progress

INTERVAL_MS = 250


class MainThreadCollector(QObject):
    """Owned by the QApplication: one per process (:func:`install`)."""

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.thresholds = gc.get_threshold()
        gc.disable()
        self.timer = QTimer(self)
        self.timer.setInterval(INTERVAL_MS)
        self.timer.timeout.connect(self.collect_due)
        self.timer.start()

    def collect_due(self) -> None:
        """Collect the oldest generation whose allocation count passed its threshold (none while
        a computation has the collector paused)."""
        if pauses_in_progress():
            return
        counts = gc.get_count()
        generation = -1
        for g in range(3):
            if self.thresholds[g] and counts[g] > self.thresholds[g]:
                generation = g
        if generation >= 0:
            gc.collect(generation)


def install(app: QObject) -> MainThreadCollector:
    """Turn automatic collection off and collect on ``app``'s thread instead (idempotent)."""
    existing = app.findChild(MainThreadCollector)
    if existing is not None:
        gc.disable()        # whoever turned it back on, windows need it off
        return existing
    return MainThreadCollector(app)
