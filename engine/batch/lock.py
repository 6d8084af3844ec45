"""One batch per output at a time: a second batch naming an output that a running batch will
write is refused before it starts, naming the first (its process, machine and start time).

Each output ``DIR/NAME`` is guarded by an advisory lock (``flock``) on ``DIR/.NAME.lock``. The
lock goes with the process: a batch killed with SIGKILL holds nothing afterwards, so there is no
stale lock to clear by hand. The small lock files stay (removing one while another batch waits on
it would let two batches hold "the" lock); they are safe to delete when no batch runs. On a file
system without working ``flock`` (some NFS set-ups) the lock cannot guard batches of different
machines.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import TextIO

from engine.errors import WarplineError

try:
    import fcntl
except ImportError:          # not POSIX: batches are not guarded against each other
    fcntl = None  # type: ignore[assignment]


def lock_path(output: str | os.PathLike[str]) -> Path:
    path = Path(output).absolute()
    return path.with_name(f".{path.name}.lock")


class OutputLock:
    """Context manager holding the locks of every output of one batch."""

    def __init__(self, outputs: Iterable[str | os.PathLike[str]]) -> None:
        self.paths = list(dict.fromkeys(lock_path(o) for o in outputs))
        self._handles: list[TextIO] = []

    def __enter__(self) -> OutputLock:
        try:
            for path in self.paths:
                self._take(path)
        except BaseException:
            self.release()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.release()

    def _take(self, path: Path) -> None:
        if fcntl is None:
            return
        try:
            handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release()
        except OSError as exc:
            raise WarplineError(f"{path}: cannot create the batch's lock file: {exc.strerror or exc}") from None
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = " ".join(handle.read(200).split()) or "another process"
            handle.close()
            output = path.with_name(path.name[1:-len(".lock")])
            raise WarplineError(f"{output}: another batch is writing it ({holder}); wait for it to finish "
                                "or give another --out") from None
        handle.seek(0)
        handle.truncate()
        started = time.strftime("%Y-%m-%d %H:%M:%S")
        handle.write(f"pid {os.getpid()} on {socket.gethostname()}, started {started}\n")
        handle.flush()
        self._handles.append(handle)

    def release(self) -> None:
        for handle in self._handles:
            try:
                handle.seek(0)
                handle.truncate()
            except OSError:
                pass
            handle.close()        # closing the file releases the flock
        self._handles = []
