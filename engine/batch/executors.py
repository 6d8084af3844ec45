"""Where units run: in this process, in local worker processes, or on a Dask cluster
(:mod:`engine.batch.dask_cluster`).

Each executor yields ``(unit, outcome)`` as units finish, in any order (the runner puts rows back
in plan order). The outcome is the unit's records, or a :class:`Failed` when the unit never ran to
the end because of where it ran (a dead worker, a cluster that cannot load the work): the runner
turns those into error rows that are not cached, so a re-run tries them again, and stops the batch
early when every unit fails that way.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import signal
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Protocol

from engine.batch.plan import Unit
from engine.batch.result_rows import one_line
from engine.batch.work import Record, run_unit
from engine.errors import WarplineError


@dataclass(frozen=True)
class Failed:
    """A unit lost to the machinery that runs it, not to its inputs."""

    reason: str          # one line

    @property
    def kind(self) -> str:
        """The reason without what names one task or process (hex ids, addresses, numbers), so
        that the same failure of many units reads the same."""
        return re.sub(r"(0x)?[0-9a-f]{8,}|\d+", "#", self.reason)


Finished = tuple[Unit, "list[Record] | Failed"]


class StopBatch(WarplineError):
    """The batch cannot go on where it runs (the cluster went away, the cache cannot be written):
    the runner keeps what is done and the command ends with this one line."""


class Executor(Protocol):
    description: str

    def run(self, units: Sequence[Unit]) -> Iterator[Finished]:
        """Every unit's outcome, as each finishes; raises :class:`StopBatch` when no more can run."""

    def stop(self) -> None:
        """Drop what has not started and release the workers (after Ctrl+C, or at the end)."""


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:       # not on Linux
        return max(1, os.cpu_count() or 1)


class InProcess:
    """One worker: this process (no start-up cost; Ctrl+C lands in the evaluation itself)."""

    description = "1 worker (this process)"

    def run(self, units: Sequence[Unit]) -> Iterator[Finished]:
        for unit in units:
            yield unit, run_unit(unit)

    def stop(self) -> None:
        pass


def _ignore_stop_signals() -> None:
    # Ctrl+C reaches the whole process group, and SLURM sends SIGTERM to every process of a job:
    # only the driver acts on them (it stops the pool and writes what is done).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


class LocalPool:
    """``workers`` processes of this machine; they read the PTX files themselves."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.description = f"{workers} local worker processes"
        methods = multiprocessing.get_all_start_methods()
        # forkserver: workers start from a clean server that imported the engine once, never from a
        # fork of a driver that may hold threads (the progress bar's, Dask's).
        context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        if "forkserver" in methods:
            context.set_forkserver_preload(["engine.batch.work"])
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_ignore_stop_signals)
        self._futures: dict[Future[list[Record]], Unit] = {}

    def run(self, units: Sequence[Unit]) -> Iterator[Finished]:
        self._futures = {self._pool.submit(run_unit, unit): unit for unit in units}
        for future in as_completed(self._futures):
            unit = self._futures.pop(future)
            try:
                records = future.result()
            except BrokenProcessPool as exc:
                # A worker process died (the kernel's out-of-memory killer, a kill): the pool is
                # broken and would fail every unit left, so the batch stops with what is done.
                raise StopBatch(f"a local worker process died ({one_line(str(exc))})") from None
            except Exception as exc:  # noqa: BLE001 - e.g. a result that could not be sent back
                yield unit, Failed(f"worker failed: {type(exc).__name__}: {one_line(str(exc))}")
            else:
                yield unit, records

    def stop(self) -> None:
        for future in self._futures:
            future.cancel()
        self._pool.shutdown(wait=False, cancel_futures=True)
