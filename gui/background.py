"""Background work off the UI thread, the newest submission only: :class:`LatestJobThread` is the
one place for the busy state and the drain (wait for running work, cancel stale work, deliver
outcomes on the UI thread); :class:`BackgroundRunner` runs jobs of seconds on it (a sensitivity
run, a second kernel's evaluation) and ``gui.worker.ComputeWorker`` the window's evaluation.

The thread never touches Qt (PySide6 mis-counts references when a signal is emitted from a thread
Qt does not own, and shiboken's import hook is not thread-safe either): outcomes go through a queue
that a QTimer on the UI thread drains while work is pending. Every submission gets a generation
number; an older job sees its cancel check become true at its next check, a queued one is never
started, and an outcome of one that finishes anyway is dropped on arrival.
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


class LatestJobThread(QObject):
    """One plain thread running the newest submission only, and the UI thread's side of it.

    A subclass says what a job does (:meth:`_execute`, on the thread, reporting with :meth:`_post`)
    and how an outcome is delivered (:meth:`_deliver`, on the UI thread); "done" and "failed"
    outcomes end the busy state before they are delivered."""

    busyChanged = Signal(bool)

    def __init__(self, name: str, poll_ms: int = POLL_MS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.generation = 0
        self._busy = False
        self._jobs: queue.Queue[Any] = queue.Queue()
        self._out: queue.Queue[tuple[int, str, Any]] = queue.Queue()
        self._idle = threading.Event()
        self._idle.set()
        self._lock = threading.Lock()    # makes "queue empty -> idle" atomic with submit
        self._poll = QTimer(self)
        self._poll.setInterval(poll_ms)
        self._poll.timeout.connect(self._drain)
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def _start(self) -> None:
        """Start the thread (once the subclass is set up)."""
        self._thread.start()

    @property
    def busy(self) -> bool:
        return self._busy

    # ---- the UI thread ---------------------------------------------------------------------------
    def _enqueue(self, job: object) -> int:
        """Queue ``job`` under a new generation; every earlier one becomes stale."""
        self.generation += 1
        with self._lock:
            self._idle.clear()
            self._jobs.put((self.generation, job))
        self._set_busy(True)
        self._poll.start()
        return self.generation

    def cancel(self) -> None:
        """Make the running and queued work stale (it stops at its next check)."""
        self.generation += 1
        self._set_busy(False)

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the thread has nothing to do (tests, shutdown)."""
        return self._idle.wait(msecs / 1000)

    def stop(self) -> None:
        """Cancel and end the thread; a job that does not check its cancel in time is not waited
        for (it ends in its daemon thread and its outcome is dropped)."""
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
                self._dropped(kind)      # stale: a newer job was submitted since
                continue
            if kind in ("done", "failed"):
                self._set_busy(False)
            self._deliver(gen, kind, payload)
        if not self._busy and self._idle.is_set() and self._out.empty():
            self._poll.stop()

    def _deliver(self, gen: int, kind: str, payload: Any) -> None:
        raise NotImplementedError

    def _dropped(self, kind: str) -> None:
        """A stale outcome of this kind was dropped."""

    # ---- the thread ------------------------------------------------------------------------------
    def _post(self, gen: int, kind: str, payload: Any) -> None:
        """Hand an outcome to the UI thread."""
        self._out.put((gen, kind, payload))

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
                self._execute(gen, work)
            with self._lock:
                if self._jobs.empty():
                    self._idle.set()

    def _execute(self, gen: int, job: Any) -> None:
        raise NotImplementedError


class BackgroundRunner(LatestJobThread):
    finished = Signal(int, object)       # generation, what the work returned
    failed = Signal(int, str)            # generation, the WarplineError's message (or a traceback)
    progress = Signal(int, float, str)   # generation, fraction done, what runs

    def __init__(self, name: str = "warpline-background", parent: QObject | None = None) -> None:
        super().__init__(name, POLL_MS, parent)
        self._start()

    def submit(self, work: Work) -> int:
        """Run ``work(cancel, progress)`` in the background; earlier work becomes stale."""
        return self._enqueue(work)

    def _deliver(self, gen: int, kind: str, payload: Any) -> None:
        if kind == "progress":
            self.progress.emit(gen, *payload)
        elif kind == "done":
            self.finished.emit(gen, payload)
        elif kind == "failed":
            self.failed.emit(gen, payload)

    def _execute(self, gen: int, work: Work) -> None:
        def cancel() -> bool:
            return self.generation != gen

        def progress(fraction: float, what: str) -> None:
            self._post(gen, "progress", (fraction, what))

        try:
            result = work(cancel, progress)
        except Cancelled:
            return
        except WarplineError as exc:
            self._post(gen, "failed", str(exc))
            return
        except Exception:  # a bug: shown, not lost in a thread
            self._post(gen, "failed", "internal error:\n" + traceback.format_exc())
            return
        self._post(gen, "done", result)
