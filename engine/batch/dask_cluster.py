"""Units on a Dask distributed cluster: its scheduler and workers are other processes, often on
other machines, so each must be able to import Warpline (docs/batch.md says how to install it).

Before any work the executor asks the scheduler and every worker for the Warpline version they
import: a node that cannot import it, or runs another version (whose rows would not match their
keys), stops the batch with one line naming it. While units run:

* a worker that dies takes its running units with it; the scheduler starts them again elsewhere,
  and units whose file bytes lived only on that worker (``scatter``) come back cancelled with "lost
  dependencies": the bytes are sent again and the unit resubmitted (:data:`RESUBMITS` times);
* a scheduler that goes away cancels every unit at once: the batch stops (:class:`StopBatch`)
  with what is finished kept;
* a cluster left without workers for ``worker_wait`` seconds stops the batch the same way rather
  than waiting for ever.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from concurrent.futures import CancelledError
from typing import Any

from engine import __version__
from engine.batch.executors import Failed, Finished, StopBatch
from engine.batch.plan import Unit
from engine.batch.result_rows import one_line
from engine.batch.work import Record, run_unit
from engine.errors import WarplineError
from engine.ptx.index import read_ptx_bytes

RESUBMITS = 3              # a unit cancelled by a lost worker is sent again this many times
HEALTH_EVERY_S = 1.0       # how often the scheduler is asked for its workers while nothing lands
POLL_S = 0.05
INSTALL_HINT = "install Warpline on every node (pip install -e . in its checkout, or its wheel; see docs/batch.md)"
# Evaluated on the scheduler and on each worker (builtins travel by name, so the probe itself needs
# nothing of Warpline to be unpickled): the version of the Warpline that node imports.
VERSION_PROBE = "__import__('engine.batch.work').__version__"


class DaskCluster:
    """A Dask distributed scheduler at ``address``; each file's bytes go to the cluster once."""

    def __init__(self, address: str, connect_timeout: float = 10.0, worker_wait: float = 60.0) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise WarplineError("--scheduler needs dask[distributed] (pip install 'dask[distributed]')") from None
        self.address = address
        self.worker_wait = worker_wait
        try:
            self._client = Client(address, timeout=connect_timeout, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise WarplineError(f"--scheduler {address}: cannot connect: {one_line(str(exc))}") from None
        try:
            self._wait_for_a_worker()
            self._check_versions()
        except BaseException:
            self._client.close()
            raise
        workers = len(self._client.nthreads())
        self.description = f"Dask cluster {address} ({workers} worker{'s' if workers != 1 else ''})"
        self._futures: dict[Any, tuple[Unit, int, Any]] = {}
        self._data: dict[str, Any] = {}

    # -------------------------------------------------------------------------------- before work
    def _wait_for_a_worker(self) -> None:
        try:
            self._client.wait_for_workers(1, timeout=self.worker_wait)
        except TimeoutError:
            raise WarplineError(f"--scheduler {self.address}: no worker joined the cluster within "
                                f"{self.worker_wait:g} s (--worker-wait)") from None

    def _check_versions(self) -> None:
        problems: dict[str, list[str]] = {}      # problem -> nodes that have it
        try:
            answers: dict[str, Any] = {"the scheduler": self._client.run_on_scheduler(eval, VERSION_PROBE)}
        except Exception as exc:  # noqa: BLE001 - whatever the scheduler raised, it is named
            answers = {"the scheduler": exc}
        for worker, answer in self._client.run(eval, VERSION_PROBE, on_error="return").items():
            answers[f"worker {worker}"] = answer
        for node, answer in answers.items():
            if isinstance(answer, BaseException):
                problem = f"cannot import Warpline ({type(answer).__name__}: {one_line(str(answer))})"
            elif answer != __version__:
                problem = f"runs Warpline {answer}, this command {__version__}"
            else:
                continue
            problems.setdefault(problem, []).append(node)
        if problems:
            problem, nodes = next(iter(problems.items()))
            others = len(nodes) - 1 + sum(len(n) for n in list(problems.values())[1:])
            more = f" (and {others} other node{'s' if others != 1 else ''})" if others else ""
            raise WarplineError(f"--scheduler {self.address}: {nodes[0]}{more} {problem}: {INSTALL_HINT}")

    # ------------------------------------------------------------------------------------ running
    def run(self, units: Sequence[Unit]) -> Iterator[Finished]:
        from distributed import as_completed

        pending = as_completed(loop=self._client.loop)
        for unit in units:
            self._submit(unit, 0, pending)
        next_check = time.monotonic() + HEALTH_EVERY_S
        workers_seen = time.monotonic()
        while not pending.is_empty():
            landed = pending.next_batch(block=False)
            if not landed:
                now = time.monotonic()
                if now >= next_check:
                    workers_seen = self._check_health(workers_seen)
                    next_check = now + HEALTH_EVERY_S
                time.sleep(POLL_S)
                continue
            for future in landed:
                unit, attempt, data = self._futures.pop(future)
                outcome = self._outcome(future, unit, attempt, data, pending)
                if outcome is not None:
                    yield unit, outcome

    def _submit(self, unit: Unit, attempt: int, pending: Any, lost: Any = None) -> None:
        """Send ``unit``; ``lost``: the file's bytes as its cancelled submission had them, sent
        again unless that was done already (the client may not know yet that they are gone)."""
        data = self._data.get(unit.ptx.sha)
        try:
            if data is None or data is lost or data.status != "finished":
                data = self._client.scatter(read_ptx_bytes(unit.ptx.path), hash=False)
                self._data[unit.ptx.sha] = data
            future = self._client.submit(run_unit, unit, data, pure=False)
        except (OSError, TimeoutError) as exc:       # CommClosedError is an OSError
            raise self._lost(exc) from None
        self._futures[future] = (unit, attempt, data)
        pending.add(future)

    def _lost(self, exc: BaseException) -> StopBatch:
        return StopBatch(f"lost the Dask scheduler at {self.address} ({type(exc).__name__}: {one_line(str(exc))})")

    def _outcome(self, future: Any, unit: Unit, attempt: int, data: Any,
                 pending: Any) -> list[Record] | Failed | None:
        """The unit's records or failure; None when it was sent again."""
        try:
            records = future.result()
        except Exception as exc:  # noqa: BLE001 - sorted below: lost scheduler, lost worker, or a failure
            reason = f"{type(exc).__name__}: {one_line(str(exc))}"
            # Cancelled: by a lost scheduler, or for a lost worker (its file bytes, or a result it
            # held and died with: the unit is computed again, so no row comes twice). A closed
            # connection while the result travelled: the same, seen from the other end.
            if isinstance(exc, (CancelledError, OSError)):
                if self._client.status != "running":
                    raise self._lost(exc) from None
                if attempt < RESUBMITS:
                    self._submit(unit, attempt + 1, pending, lost=data)
                    return None
            return Failed(f"worker failed: {reason}")
        finally:
            future.release()
        return records

    def _check_health(self, workers_seen: float) -> float:
        """When any worker was last seen; StopBatch when the scheduler is gone or no worker came
        back within ``worker_wait`` seconds."""
        if self._client.status != "running":
            raise StopBatch(f"lost the Dask scheduler at {self.address} (the client is {self._client.status})")
        try:
            workers = len(self._client.nthreads())
        except Exception as exc:  # noqa: BLE001 - any failure to ask is a lost scheduler
            raise self._lost(exc) from None
        now = time.monotonic()
        if workers:
            return now
        if now - workers_seen > self.worker_wait:
            raise StopBatch(f"no worker left in the Dask cluster at {self.address} for {self.worker_wait:g} s "
                            "(--worker-wait)")
        return workers_seen

    def stop(self) -> None:
        try:
            if self._futures:
                self._client.cancel(list(self._futures))
            self._futures = {}
            self._data = {}
        except Exception:  # noqa: BLE001, S110 - a scheduler already gone: nothing left to cancel
            pass
        finally:
            self._client.close(timeout=5)
