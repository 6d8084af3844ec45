"""A background job runner for work that takes seconds (a sensitivity run, a second kernel's
evaluation): one plain thread, the newest submission only, cancellable, results on the UI thread.

It follows :mod:`gui.worker`'s rules: the thread never touches Qt (PySide6 mis-counts references
when a signal is emitted from a thread Qt does not own), so outcomes go through a queue that a
QTimer on the UI thread drains while work is pending. Every submission gets a generation number;
an older job sees ``cancel()`` become true at its next check and its outcome is dropped.
"""

from __future__ import annotations

import queue
import threading
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from engine.errors import WarplineError
from engine.evaluation import Cancelled

POLL_MS = 20
STOP_WAIT_S = 1.0

CancelCheck = Callable[[], bool]
Progress = Callable[[float, str], None]
Work = Callable[[CancelCheck, Progress], Any]

_STOP = object()


class BackgroundRunner(QObject):
    finished = Signal(int, object)       # generation, what the work returned
    failed = Signal(int, str)            # generation, the WarplineError's message (or a traceback)
    progress = Signal(int, float, str)   # generation, fraction done, what runs
    busyChanged = Signal(bool)

    def __init__(self, name: str = "warpline-background", parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.generation = 0
        self._busy = False
        self._jobs: queue.Queue[Any] = queue.Queue()
        self._out: queue.Queue[tuple[int, str, Any]] = queue.Queue()
        self._idle = threading.Event()
        self._idle.set()
        self._lock = threading.Lock()    # makes "queue empty -> idle" atomic with submit
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self._drain)
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    @property
    def busy(self) -> bool:
        return self._busy

    def submit(self, work: Work) -> int:
        """Run ``work(cancel, progress)`` in the background; earlier work becomes stale."""
        self.generation += 1
        with self._lock:
            self._idle.clear()
            self._jobs.put((self.generation, work))
        self._set_busy(True)
        self._poll.start()
        return self.generation

    def cancel(self) -> None:
        """Make the running and queued work stale (it stops at its next check)."""
        self.generation += 1
        self._set_busy(False)

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the thread has nothing to do (tests)."""
        return self._idle.wait(msecs / 1000)

    def stop(self) -> None:
        self.cancel()
        self._jobs.put(_STOP)
        self._thread.join(timeout=STOP_WAIT_S)
        self._poll.stop()

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busyChanged.emit(busy)

    def _drain(self) -> None:
        while True:
            try:
                gen, kind, payload = self._out.get_nowait()
            except queue.Empty:
                break
            if gen != self.generation:
                continue
            if kind == "progress":
                self.progress.emit(gen, *payload)
            elif kind == "done":
                self._set_busy(False)
                self.finished.emit(gen, payload)
            elif kind == "failed":
                self._set_busy(False)
                self.failed.emit(gen, payload)
        if not self._busy and self._idle.is_set() and self._out.empty():
            self._poll.stop()

    # ---- the thread ------------------------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            while True:          # only the newest submission matters
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
            if job is _STOP:
                self._idle.set()
                return
            gen, work = job
            if gen == self.generation:
                self._run(gen, work)
            with self._lock:
                if self._jobs.empty():
                    self._idle.set()

    def _run(self, gen: int, work: Work) -> None:
        def cancel() -> bool:
            return self.generation != gen

        def progress(fraction: float, what: str) -> None:
            self._out.put((gen, "progress", (fraction, what)))

        try:
            result = work(cancel, progress)
        except Cancelled:
            return
        except WarplineError as exc:
            self._out.put((gen, "failed", str(exc)))
            return
        except Exception:  # a bug: shown, not lost in a thread
            self._out.put((gen, "failed", "internal error:\n" + traceback.format_exc()))
            return
        self._out.put((gen, "done", result))
