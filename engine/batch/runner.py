"""Running a plan: skip what the cache holds, run the rest, cache each unit as it lands, and put
the rows back in plan order. Ctrl+C stops the executor and keeps every row finished so far."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.batch.cache import ResultCache
from engine.batch.executors import Executor
from engine.batch.plan import Plan, Unit
from engine.batch.rows import STATUS_ERROR, STATUS_OK, empty_row

ProgressFn = Callable[[int], None]    # rows just finished


@dataclass
class BatchResult:
    rows: list[dict[str, Any]]
    planned: int                  # rows the plan asks for
    from_cache: int               # of them, found in the cache
    computed: int                 # of them, evaluated by this run
    interrupted: bool
    elapsed_s: float
    notes: list[str] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return sum(1 for row in self.rows if row.get("status") != STATUS_OK)

    @property
    def rate(self) -> float:
        """Rows evaluated per second by this run (cached rows left out)."""
        return self.computed / self.elapsed_s if self.elapsed_s > 0 else 0.0


def pending_units(plan: Plan, cache: ResultCache) -> list[Unit]:
    return [left for unit in plan.units if not unit.problem and (left := unit.missing(cache)) is not None]


def run_batch(plan: Plan, executor: Executor, cache: ResultCache, progress: ProgressFn | None = None) -> BatchResult:
    started = time.perf_counter()
    todo = pending_units(plan, cache)
    to_compute = sum(unit.rows for unit in todo)
    fresh: dict[str, dict[str, Any]] = {}      # rows of this run that are not cached (worker failures)
    computed = 0
    interrupted = False
    try:
        for _unit, records in executor.run(todo):
            cache.add((key, row) for key, row, cacheable in records if cacheable)
            fresh.update((key, row) for key, row, cacheable in records if not cacheable)
            computed += len(records)
            if progress is not None:
                progress(len(records))
    except KeyboardInterrupt:
        interrupted = True
    finally:
        executor.stop()
        cache.close()
    rows = assemble(plan, lambda key: fresh.get(key) or cache.rows.get(key))
    planned_units = sum(unit.rows for unit in plan.units if not unit.problem)
    return BatchResult(rows, plan.rows, planned_units - to_compute, computed, interrupted,
                       time.perf_counter() - started, list(plan.notes))


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
