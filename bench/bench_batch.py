"""Throughput of ``batch``: rows per second with 1 and 2 local workers, and the per-row overhead of
the batch machinery against the direct calls ``predict`` makes for the same work.

    .venv/bin/python bench/bench_batch.py [--sources GLOB ...] [--models roofline,volkov,mwp_cwp]

Each run starts from an empty cache. The direct figure parses the file and evaluates once per
kernel, as ``predict`` does; the in-process batch does the same work through the plan, the worker
code, the cache and the row assembly, so the difference is what batching adds per row.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.batch import BatchSpec, InProcess, LocalPool, ResultCache, plan_batch, run_batch  # noqa: E402
from engine.batch.plan import Plan  # noqa: E402
from engine.evaluation import Evaluator, state_for  # noqa: E402
from engine.inputs import resolve_inputs  # noqa: E402
from engine.mechanisms import without  # noqa: E402
from engine.profiles import load_profile  # noqa: E402


def batch_seconds(plan: Plan, executor) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as folder:
        result = run_batch(plan, executor, ResultCache(folder))
    return result.elapsed_s, len(result.rows)


def direct_seconds(plan: Plan, spec: BatchSpec) -> float:
    profile = load_profile(spec.profiles[0])
    started = time.perf_counter()
    with without(spec.without):
        for unit in plan.units:
            if unit.problem:
                continue
            inputs = resolve_inputs(unit.ptx.path, kernel=unit.kernel, profile=profile, grid=spec.grids[0],
                                    block=spec.blocks[0], use_ptxas=spec.use_ptxas)
            Evaluator().evaluate(inputs, state_for(inputs), trace=False, only=list(spec.models))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", nargs="+", default=[str(ROOT / "samples" / "ptx" / "*.ptx")])
    parser.add_argument("--models", default="roofline,volkov,mwp_cwp")
    parser.add_argument("--profile", default="h100")
    ns = parser.parse_args()
    spec = BatchSpec(sources=tuple(ns.sources), profiles=(ns.profile,), models=tuple(ns.models.split(",")),
                     grids=((1, 1, 1),), blocks=((32, 1, 1),), use_launch_files=False, use_ptxas=False,
                     without=("sass",))
    plan = plan_batch(spec)
    evaluations = sum(len(u.jobs) for u in plan.units)
    print(f"batch bench: {plan.rows} rows ({evaluations} evaluations x {len(spec.models)} models), "
          f"{len(plan.units)} units, profile {ns.profile}, grid 1 block 32, no ptxas, SASS off")
    # Warm the caches every run shares alike (numba's compiled simulator on disk, profiles).
    batch_seconds(plan_batch(BatchSpec(**{**spec.__dict__, "sources": (spec.sources[0],)})), InProcess())

    direct = direct_seconds(plan, spec)
    one, rows = batch_seconds(plan, InProcess())
    print(f"  direct (predict-equivalent calls): {direct:7.2f} s  {rows / direct:7.1f} rows/s")
    print(f"  batch, 1 worker (in process):      {one:7.2f} s  {rows / one:7.1f} rows/s   "
          f"overhead {1000 * (one - direct) / rows:+.2f} ms/row")
    for workers in (1, 2):
        seconds, rows = batch_seconds(plan, LocalPool(workers))
        print(f"  batch, {workers} worker process{'es' if workers > 1 else '  '}:        {seconds:7.2f} s  "
              f"{rows / seconds:7.1f} rows/s   (worker start-up included)")


if __name__ == "__main__":
    main()
