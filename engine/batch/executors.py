"""Where units run: in this process, in local worker processes, or on a Dask cluster.

Each executor yields ``(unit, records)`` as units finish, in any order (the runner puts rows back
in plan order). A unit whose worker died gives error rows that are not cached, so a re-run tries
it again.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from typing import Any, Protocol

from engine.batch.plan import Unit
from engine.batch.work import Record, failure_records, run_unit
from engine.errors import WarplineError
from engine.ptx.index import read_ptx_bytes

Finished = tuple[Unit, list[Record]]


class Executor(Protocol):
    description: str

    def run(self, units: Sequence[Unit]) -> Iterator[Finished]:
        """Every unit's records, as each finishes."""

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


def _ignore_sigint() -> None:
    # Ctrl+C reaches the whole process group; only the driver should act on it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


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
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_ignore_sigint)
        self._futures: dict[Future[list[Record]], Unit] = {}

    def run(self, units: Sequence[Unit]) -> Iterator[Finished]:
        self._futures = {self._pool.submit(run_unit, unit): unit for unit in units}
        for future in as_completed(self._futures):
            unit = self._futures.pop(future)
            try:
                yield unit, future.result()
            except Exception as exc:  # noqa: BLE001 - a dead worker (BrokenProcessPool), recorded per row
                yield unit, failure_records(unit, f"worker failed: {type(exc).__name__}: {exc}")

    def stop(self) -> None:
        for future in self._futures:
            future.cancel()
        self._pool.shutdown(wait=False, cancel_futures=True)


class DaskCluster:
    """A Dask distributed scheduler at ``address``; each file's bytes go to the cluster once."""

    def __init__(self, address: str, connect_timeout: float = 10.0) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise WarplineError("--scheduler needs dask[distributed] (pip install 'dask[distributed]')") from None
        try:
            self._client = Client(address, timeout=connect_timeout, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise WarplineError(f"--scheduler {address}: cannot connect: {exc}") from None
        workers = len(self._client.scheduler_info().get("workers", {}))
        self.description = f"Dask cluster {address} ({workers} workers)"
        self._futures: dict[Any, Unit] = {}

    def run(self, units: Sequence[Unit]) -> Iterator[Finished]:
        from distributed import as_completed as dask_completed

        data: dict[str, Any] = {}
        for unit in units:
            if unit.ptx.sha not in data:
                data[unit.ptx.sha] = self._client.scatter(read_ptx_bytes(unit.ptx.path), hash=False)
        self._futures = {self._client.submit(run_unit, unit, data[unit.ptx.sha], pure=False): unit
                         for unit in units}
        for future in dask_completed(list(self._futures), loop=self._client.loop):
            unit = self._futures.pop(future)
            try:
                yield unit, future.result()
            except Exception as exc:  # noqa: BLE001 - e.g. KilledWorker: recorded per row, not cached
                yield unit, failure_records(unit, f"worker failed: {type(exc).__name__}: {exc}")
            future.release()

    def stop(self) -> None:
        if self._futures:
            self._client.cancel(list(self._futures))
            self._futures = {}
        self._client.close()
