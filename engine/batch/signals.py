"""SIGTERM (what SLURM, ``timeout``, ``kill`` and a system shutting down send) and SIGHUP (a
closed terminal) stop a batch the way Ctrl+C does: the rows finished so far are written, and the
exit status says which signal it was (128 + its number).

Python turns SIGINT into ``KeyboardInterrupt`` by itself; :class:`StopSignals` does the same for
the others while the work runs, and once the work is over (the outputs are being written) only
records them, so a second signal cannot cut the writing short.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType

HANDLED = ("SIGTERM", "SIGHUP")


class Terminated(KeyboardInterrupt):
    """A stop signal other than Ctrl+C, raised where the main thread was."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name


class StopSignals:
    """Context manager: SIGTERM and SIGHUP raise :class:`Terminated` until :meth:`disarm`."""

    def __init__(self) -> None:
        self.received = ""           # the first stop signal's name, "" if none came
        self._armed = True
        self._previous: dict[int, object] = {}

    def __enter__(self) -> StopSignals:
        # Handlers can be set only from the main thread; elsewhere (a GUI worker) nothing changes.
        if threading.current_thread() is threading.main_thread():
            for name in HANDLED:
                number = getattr(signal, name, None)
                if number is not None:
                    self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)  # type: ignore[arg-type]
        self._previous = {}

    def disarm(self) -> None:
        """From now on a stop signal is only recorded."""
        self._armed = False

    def _handle(self, number: int, frame: FrameType | None) -> None:
        name = signal.Signals(number).name
        self.received = self.received or name
        if self._armed:
            self._armed = False      # one interrupt is enough; later ones only record
            raise Terminated(name)


def exit_status(signal_name: str) -> int:
    """The shell's status for a command ended by ``signal_name`` (130 for SIGINT, 143 for SIGTERM)."""
    return 128 + int(getattr(signal, signal_name, signal.SIGINT))
