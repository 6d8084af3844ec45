"""Running a plan: skip what the cache holds, run the rest, cache each unit as it lands, and put
the rows back in plan order.

Two ways a run ends early, both keeping every row finished so far (in the cache, and in the rows
returned): an interrupt (Ctrl+C, or SIGTERM turned into one by the command, see
:mod:`engine.batch.signals`), and a stop, when the batch cannot go on where it runs: the executor
says so (:class:`~engine.batch.executors.StopBatch`: a lost scheduler, no workers left), the cache
cannot be written (a full disk), or :data:`FAIL_FAST_UNITS` units in a row were lost to the
machinery that runs them for one reason (a cluster that cannot load the work fails every unit
that way: a few are enough to say so, the thousands left would fail alike).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.batch.executors import Executor, Failed, StopBatch
from engine.batch.plan import Plan, Unit
from engine.batch.result_cache import ResultCache
from engine.batch.result_rows import STATUS_ERROR, STATUS_OK, empty_row
from engine.batch.work import failure_records
from engine.errors import WarplineError

ProgressFn = Callable[[int], None]    # rows just finished
FAIL_FAST_UNITS = 3


@dataclass
class BatchResult:
    rows: list[dict[str, Any]]
    planned: int                  # rows the plan asks for
    from_cache: int               # of them, found in the cache
    computed: int                 # of them, evaluated by this run
    interrupted: bool
    elapsed_s: float
    notes: list[str] = field(default_factory=list)
    stopped: str = ""             # why the batch could not go on (one line), "" when it did
    signal_name: str = ""         # what interrupted it: "SIGINT" (Ctrl+C) or "SIGTERM"
    uncached: int = 0             # rows of ``rows`` not cached (units lost to a worker, internal errors)

    @property
    def errors(self) -> int:
        return sum(1 for row in self.rows if row.get("status") != STATUS_OK)

    @property
    def complete(self) -> bool:
        return not self.interrupted and not self.stopped

    @property
    def all_failed(self) -> bool:
        return bool(self.rows) and self.errors == len(self.rows)

    @property
    def rate(self) -> float:
        """Rows evaluated per second by this run (cached rows left out)."""
        return self.computed / self.elapsed_s if self.elapsed_s > 0 else 0.0


class FailureStreak:
    """Units lost to the machinery in a row, by kind of failure; any unit that ran ends the streak."""

    def __init__(self, limit: int = FAIL_FAST_UNITS) -> None:
        self.limit = limit
        self.kind = ""
        self.count = 0

    def see(self, outcome: list[Any] | Failed) -> None:
        """Raise StopBatch once ``limit`` units in a row failed the same way."""
        if not isinstance(outcome, Failed):
            self.kind, self.count = "", 0
            return
        self.count = self.count + 1 if outcome.kind == self.kind else 1
        self.kind = outcome.kind
        if self.count >= self.limit:
            raise StopBatch(f"{self.count} units in a row failed the same way where they ran: {outcome.reason}")


def pending_units(plan: Plan, cache: ResultCache) -> list[Unit]:
    return [left for unit in plan.units if not unit.problem and (left := unit.missing(cache)) is not None]


def run_batch(plan: Plan, executor: Executor, cache: ResultCache, progress: ProgressFn | None = None) -> BatchResult:
    started = time.perf_counter()
    todo = pending_units(plan, cache)
    to_compute = sum(unit.rows for unit in todo)
    fresh: dict[str, dict[str, Any]] = {}      # rows of this run that are not cached (worker failures)
    computed = 0
    interrupted, stopped, signal_name = False, "", ""
    streak = FailureStreak(min(FAIL_FAST_UNITS, max(1, len(todo))))
    try:
        for unit, outcome in executor.run(todo):
            records = failure_records(unit, outcome.reason) if isinstance(outcome, Failed) else outcome
            try:
                cache.add((key, row) for key, row, cacheable in records if cacheable)
            except WarplineError as exc:     # e.g. a full disk: going on would compute rows it cannot keep
                raise StopBatch(str(exc)) from None
            fresh.update((key, row) for key, row, cacheable in records if not cacheable)
            computed += len(records)
            if progress is not None:
                progress(len(records))
            streak.see(outcome)
    except KeyboardInterrupt as exc:
        interrupted, signal_name = True, getattr(exc, "signal_name", "SIGINT")
    except StopBatch as exc:
        stopped = str(exc)
    finally:
        executor.stop()
        cache.close()
    # A stopped batch gives the rows done (cached); the error rows of units lost where they ran
    # would only stand for work a re-run does.
    rows = assemble(plan, cache.rows.get if stopped else lambda key: fresh.get(key) or cache.rows.get(key))
    planned_units = sum(unit.rows for unit in plan.units if not unit.problem)
    return BatchResult(rows, plan.rows, planned_units - to_compute, computed, interrupted,
                       time.perf_counter() - started, list(plan.notes), stopped, signal_name,
                       0 if stopped else sum(1 for key in fresh if key not in cache.rows))


def assemble(plan: Plan, lookup: Callable[[str], dict[str, Any] | None]) -> list[dict[str, Any]]:
    """Every row found, in plan order. A cached row gets this run's file and profile names (its key
    covers their contents, not how they are spelled)."""
    rows: list[dict[str, Any]] = []
    for unit in plan.units:
        if unit.problem:
            rows.append(empty_row(file=unit.ptx.path, kernel=unit.kernel, policy=unit.policy,
                                  status=STATUS_ERROR, message=unit.problem))
            continue
        for job in unit.jobs:
            for key, model in zip(job.keys, unit.models, strict=True):
                found = lookup(key)
                if found is not None:
                    rows.append({**found, "file": unit.ptx.path, "profile": job.profile.name, "model": model})
    return rows
