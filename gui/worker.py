"""The one background worker: runs the evaluation core (``Evaluator.evaluate``) off the UI thread.

Every submission gets a new generation number. The running computation polls ``cancel``
(generation no longer current) between stages, so stale work stops early, and only the newest
queued submission is ever started; a stale result that finishes anyway is dropped on arrival.

The worker thread never touches Qt. PySide6 (6.12) corrupts reference counts when a signal is
emitted from a thread Qt does not own (``bool_dealloc``/``none_dealloc`` aborts after a few
thousand emissions), and shiboken's import hook is not thread-safe either. So the thread is a
plain ``threading.Thread`` that puts its outcomes on a ``queue.Queue``, and a QTimer on the UI
thread drains that queue while work is pending and emits the signals there: the thread, the
generations, the busy state and the drain are :class:`gui.background.LatestJobThread`'s, shared
with the background runner. A result (partial, final or failed) also writes a byte to a socket
pair whose read end a ``QSocketNotifier`` watches: plain OS I/O on the worker's side, and the UI
thread drains at once instead of at the next poll.
"""

from __future__ import annotations

import socket
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSocketNotifier, Qt, QTimer, Signal

from engine.errors import WarplineError
from engine.evaluation import PART_TIMELINE, Cancelled, Evaluation, Evaluator
from engine.evaluation.core import PART_ASSUMPTIONS
from engine.inputs import KernelInputs
from engine.state import WorkbenchState
from gui.background import LatestJobThread

POLL_MS = 4   # how often the UI thread looks for finished work while some is pending
PARTIAL_WAIT_S = 1.0   # longest the worker waits for the UI to draw a partial result
# The window calls partial_painted() once the chart has painted a partial result; without a
# window (or with the chart hidden, so that no paint comes) the sweep starts after this grace.
PAINT_GRACE_MS = 150
# The UI thread needs the GIL for every Python callback (item models, paint methods). Python's
# default 5 ms switch interval lets the worker's Python stages hold it that long each time; at
# 1 ms a redraw that runs beside the occupancy sweep takes about half as long.
SWITCH_INTERVAL_S = 0.001

_warmed = False
_RELEASE = QEvent.Type(QEvent.registerEventType())   # "the UI has painted": go on


# A kernel of a dozen instructions that the warm-up evaluates (a guarded copy, two blocks of 64).
_WARM_UP_PTX = """
.version 8.0
.target sm_90
.address_size 64

.visible .entry warm_up_copy(.param .u64 dst, .param .u64 src, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .f32 %f<2>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<7>;

    ld.param.u64 %rd1, [dst];
    ld.param.u64 %rd2, [src];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.s32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd3, %rd2;
    mul.wide.s32 %rd4, %r5, 4;
    add.s64 %rd5, %rd3, %rd4;
    ld.global.f32 %f1, [%rd5];
    cvta.to.global.u64 %rd6, %rd1;
    add.s64 %rd6, %rd6, %rd4;
    st.global.f32 [%rd6], %f1;
DONE:
    ret;
}
"""


def warm_up() -> None:
    """Load every lazily imported module and the compiled code of the evaluation on the UI thread.

    shiboken replaces ``__import__`` with a hook that is not safe in a worker thread, and numba
    imports its typing registries on the first call of a jitted function. One evaluation of a tiny
    kernel here (every model, the trace, the timeline and the occupancy sweep, through
    ``Evaluator.evaluate`` as the worker calls it), before the worker starts, means the worker only
    ever runs code whose modules are loaded. The shipped h100 profile (a user's file of that name
    may shadow it); without ptxas and without the SASS mapping: those run external tools and fill
    disk caches, which is no work for the start of the window.
    """
    global _warmed
    if _warmed:
        return
    import engine.timeline  # noqa: F401 - loaded for the exports, on this thread
    from engine.inputs import resolve_inputs
    from engine.launch import Launch
    from engine.mechanisms import ALL_ON
    from engine.profiles import SHIPPED_DIR, load_profile
    from engine.ptx import parse_ptx

    module = parse_ptx(_WARM_UP_PTX, "<warm-up>")
    inputs = resolve_inputs("<warm-up>", profile=load_profile(SHIPPED_DIR / "h100.toml"),
                            launch=Launch(grid=(2, 1, 1), block=(64, 1, 1)),
                            use_ptxas=False, module=module)
    Evaluator().evaluate(inputs, sweep=True, trace=True, mechanisms=ALL_ON.without({"sass"}))
    _warmed = True


@dataclass(frozen=True)
class _Job:
    inputs: KernelInputs
    state: WorkbenchState
    sweep: bool


class ComputeWorker(LatestJobThread):
    """Submit states; receive the newest result only, on the UI thread."""

    partReady = Signal(object, object)  # (Evaluation snapshot, tuple of the parts it adds)
    resultReady = Signal(object)        # the finished Evaluation
    failed = Signal(str)
    progress = Signal(float, str)

    def __init__(self, evaluator: Evaluator | None = None, parent: QObject | None = None) -> None:
        super().__init__("warpline-compute", POLL_MS, parent)
        warm_up()
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
        self.evaluator = evaluator or Evaluator()
        self.sweep_enabled = True
        self.effects_enabled = True      # the Assumptions tab's effects, after each result
        self._partial_shown = threading.Event()
        self._awaiting_paint: int | None = None    # generation of a partial result not yet painted
        self._release_generation = -1
        self._wake_r, self._wake_w = socket.socketpair()
        for end in (self._wake_r, self._wake_w):
            end.setblocking(False)
        self._notifier = QSocketNotifier(self._wake_r.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._woken)
        self._start()

    # ------------------------------------------------------------------ UI thread

    def submit(self, inputs: KernelInputs, state: WorkbenchState) -> int:
        """Start computing ``state``; any earlier submission becomes stale (asked to stop)."""
        return self._enqueue(_Job(inputs, state, self.sweep_enabled))

    def partial_painted(self) -> None:
        """The UI has shown the latest early result: let the worker go on with its next stage once
        the paints already queued have run. Paints before an early result arrives (or of an older
        one) do not count."""
        if self._awaiting_paint == self.generation:
            self._awaiting_paint = None
            self._release_generation = self.generation
            # Qt posts its paint requests at LowEventPriority; one step lower comes after them,
            # where a zero-delay timer would come before and let the next stage fight them for
            # the GIL (a 2,500-row table took 300 ms to paint instead of 25).
            QCoreApplication.postEvent(self, QEvent(_RELEASE), Qt.EventPriority.LowEventPriority.value - 1)

    def event(self, event: QEvent) -> bool:
        if event.type() == _RELEASE:
            if self._release_generation == self.generation:
                self._partial_shown.set()
            return True
        return super().event(event)

    def _release_unpainted(self, generation: int) -> None:
        if self._awaiting_paint == generation:
            self.partial_painted()

    def stop(self) -> None:
        """Cancel and end the worker. A cancelled simulation stops within 100 ms; a stage that
        cannot be interrupted (an analysis of a pathological kernel) is not waited for: it ends
        in its daemon thread and its outcome is dropped, so closing a window never hangs."""
        super().stop()
        self._notifier.setEnabled(False)
        for end in (self._wake_r, self._wake_w):
            end.close()

    def _woken(self, *_: object) -> None:
        """The worker put a result on the queue: drain it now."""
        try:
            while self._wake_r.recv(4096):
                pass
        except (BlockingIOError, InterruptedError, OSError):
            pass
        self._drain()

    def _dropped(self, kind: str) -> None:
        if kind == "partial":
            self._partial_shown.set()   # nobody will paint it: the worker goes on

    def _deliver(self, gen: int, kind: str, payload: Any) -> None:
        if kind == "progress":
            self.progress.emit(*payload)
        elif kind == "partial":
            # The worker's next stages wait until the event loop has painted the timeline
            # (partial_painted, from the window): that repaint would otherwise fight them
            # for the GIL and take several times longer.
            self._awaiting_paint = gen
            self.partReady.emit(*payload)   # direct connections: laid out when this returns
            QTimer.singleShot(PAINT_GRACE_MS, self, lambda g=gen: self._release_unpainted(g))
        elif kind == "part":
            self.partReady.emit(*payload)
        elif kind == "done":
            self.resultReady.emit(payload)
        elif kind == "failed":
            self.failed.emit(payload)

    # ------------------------------------------------------------------ worker thread

    def _post(self, gen: int, kind: str, payload: Any) -> None:
        super()._post(gen, kind, payload)
        if kind != "progress":
            self._wake_ui()

    def _wake_ui(self) -> None:
        try:
            self._wake_w.send(b"\0")
        except (BlockingIOError, InterruptedError, OSError):
            pass            # a byte is pending already (or the pair is closed): the poll drains

    def _execute(self, gen: int, job: _Job) -> None:
        put = self._post

        def on_part(evaluation: Evaluation, parts: tuple[str, ...]) -> None:
            if PART_TIMELINE not in parts:
                put(gen, "part", (evaluation, parts))
                return
            # Wait (briefly) until the UI thread has drawn the timeline: the slower stages that
            # follow would otherwise compete with that redraw for the GIL.
            self._partial_shown.clear()
            put(gen, "partial", (evaluation, parts))
            deadline = time.monotonic() + PARTIAL_WAIT_S
            while not self._partial_shown.wait(0.005):
                if self.generation != gen or time.monotonic() > deadline:
                    break

        try:
            result = self.evaluator.evaluate(
                job.inputs, job.state,
                cancel=lambda: self.generation != gen,
                progress=lambda f, what: put(gen, "progress", (f, what)),
                on_part=on_part,
                sweep=job.sweep)
        except Cancelled:
            return
        except WarplineError as exc:
            put(gen, "failed", str(exc))
            return
        except Exception:  # a bug: show it rather than lose it in a worker thread
            put(gen, "failed", "internal error:\n" + traceback.format_exc())
            return
        put(gen, "done", result)
        if not result.assumptions or not self.effects_enabled:
            return
        # How far each guessed input moves the headline figure: extra evaluations, after the
        # result is in (the window waits for none of them); a newer state cancels them.
        try:
            with_effects = self.evaluator.assumption_effects(job.inputs, result, cancel=lambda: self.generation != gen)
        except Cancelled:
            return
        except WarplineError:
            return
        except Exception:  # a bug: show it rather than lose it in a worker thread
            put(gen, "failed", "internal error:\n" + traceback.format_exc())
            return
        put(gen, "part", (with_effects, (PART_ASSUMPTIONS,)))


__all__ = ["ComputeWorker", "warm_up"]
