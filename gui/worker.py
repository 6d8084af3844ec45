"""The one background worker: runs ``Workbench.compute`` off the UI thread.

Every submission gets a new generation number. A running task polls ``cancel`` (generation no
longer current) between stages, so stale work stops early; a stale task that finishes anyway is
dropped when its result reaches the UI thread. Results arrive through queued signals, i.e. on the
thread that owns the :class:`ComputeWorker` (the UI thread).
"""

from __future__ import annotations

import threading
import traceback

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from engine.errors import WarplineError
from engine.inputs import KernelInputs
from engine.workbench import Cancelled, Workbench, WorkbenchResult, WorkbenchState

_warmed = False


def warm_up() -> None:
    """Load every lazily imported module and the simulator's compiled code on the UI thread.

    shiboken replaces ``__import__`` with a hook that is not safe in a worker thread (a first
    import there can corrupt reference counts: "deallocating None"), and numba imports its typing
    registries on the first call of a jitted function. One tiny simulation here, before any task
    starts, means worker threads only ever run code whose modules are already loaded.
    """
    global _warmed
    if _warmed:
        return
    import engine.timeline  # noqa: F401 - loaded for the exports, on this thread
    from engine.pipeline.examples import example_kernel
    from engine.pipeline.peers import all_peers
    from engine.pipeline.simulator import simulate
    from engine.pipeline.sweep import occupancy_sweep

    d = example_kernel(occupancy_warps=2)
    simulate(d, trace=True)
    all_peers(d)
    occupancy_sweep(d, [1, 2])
    _warmed = True


class _Relay(QObject):
    """Signals of one task; lives in the UI thread so its emissions are queued there."""

    partial = Signal(int, object)
    done = Signal(int, object)
    failed = Signal(int, str)
    progress = Signal(int, float, str)


class _Task(QRunnable):
    def __init__(self, worker: ComputeWorker, generation: int, inputs: KernelInputs,
                 state: WorkbenchState) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self.worker = worker
        self.generation = generation
        self.inputs = inputs
        self.state = state
        self.relay = worker._relay

    def run(self) -> None:
        gen = self.generation

        def cancelled() -> bool:
            return self.worker.generation != gen

        try:
            with self.worker._lock:   # the workbench caches are not thread-safe
                result = self.worker.workbench.compute(
                    self.inputs, self.state, cancel=cancelled,
                    progress=lambda f, what: self.relay.progress.emit(gen, f, what),
                    partial=lambda r: self.relay.partial.emit(gen, r),
                    sweep=self.worker.sweep_enabled)
        except Cancelled:
            return
        except WarplineError as exc:
            self.relay.failed.emit(gen, str(exc))
            return
        except Exception:  # a bug: show it rather than lose it in a worker thread
            self.relay.failed.emit(gen, "internal error:\n" + traceback.format_exc())
            return
        self.relay.done.emit(gen, result)


class ComputeWorker(QObject):
    """Submit states; receive the newest result only."""

    partialReady = Signal(object)      # WorkbenchResult without the occupancy sweep
    resultReady = Signal(object)       # complete WorkbenchResult
    failed = Signal(str)
    progress = Signal(float, str)
    busyChanged = Signal(bool)

    def __init__(self, workbench: Workbench | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        warm_up()
        self.workbench = workbench or Workbench()
        self.generation = 0
        self.sweep_enabled = True
        self._lock = threading.Lock()
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._relay = _Relay(self)
        self._relay.partial.connect(self._on_partial)
        self._relay.done.connect(self._on_done)
        self._relay.failed.connect(self._on_failed)
        self._relay.progress.connect(self._on_progress)
        self._busy = False

    @property
    def busy(self) -> bool:
        return self._busy

    def submit(self, inputs: KernelInputs, state: WorkbenchState) -> int:
        """Start computing ``state``; any earlier submission becomes stale (asked to stop)."""
        self.generation += 1
        self._pool.start(_Task(self, self.generation, inputs, state))
        self._set_busy(True)
        return self.generation

    def cancel(self) -> None:
        """Make every queued or running task stale."""
        self.generation += 1
        self._set_busy(False)

    def wait(self, msecs: int = 30_000) -> bool:
        return self._pool.waitForDone(msecs)

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busyChanged.emit(busy)

    def _on_partial(self, gen: int, result: WorkbenchResult) -> None:
        if gen == self.generation:
            self.partialReady.emit(result)

    def _on_done(self, gen: int, result: WorkbenchResult) -> None:
        if gen == self.generation:
            self._set_busy(False)
            self.resultReady.emit(result)

    def _on_failed(self, gen: int, message: str) -> None:
        if gen == self.generation:
            self._set_busy(False)
            self.failed.emit(message)

    def _on_progress(self, gen: int, fraction: float, what: str) -> None:
        if gen == self.generation:
            self.progress.emit(fraction, what)
