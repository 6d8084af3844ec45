"""``batch``: many kernels x launches x GPU profiles x models, one row each, in parallel.

Local worker processes by default (``--workers``), a Dask cluster with ``--scheduler``; rows are
cached by the hash of their inputs beside the output, so a re-run (after Ctrl+C or a kill) only
computes what is missing. See docs/batch.md.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import sys
from pathlib import Path
from typing import Any

from engine.batch import (
    BatchSpec,
    DaskCluster,
    InProcess,
    LocalPool,
    ResultCache,
    default_workers,
    plan_batch,
    read_spec_file,
    run_batch,
)
from engine.batch.best_launches import BEST_COLUMNS, BEST_TYPES, best_launches, best_text, kernel_series
from engine.batch.lock import OutputLock
from engine.batch.output import output_format, write_rows
from engine.batch.preflight import check_cache_folder, check_room
from engine.batch.progress import ProgressBar
from engine.batch.result_rows import STATUS_OK
from engine.batch.runner import BatchResult, pending_units
from engine.batch.signals import StopSignals, exit_status
from engine.cli.command_registry import Command
from engine.cli.options import non_negative_int, parse_args_option, parse_range, parse_trip_option, positive_int
from engine.cli.render import require_renderer
from engine.errors import WarplineError
from engine.evaluation.registry import model, model_ids
from engine.fileio import check_writable
from engine.launch import parse_dim
from engine.mechanisms import MECHANISMS, check_names
from engine.state import POLICIES

# Option destinations a spec file may set, with the value meaning "not given on the command line".
UNSET: dict[str, Any] = {
    "sources": [], "kernel": [], "profile": [], "model": [], "grid": [], "block": [], "smem_dynamic": [],
    "regs": None, "arg": [], "trip": [], "occupancy": [], "launch_file": None, "config": [],
    "no_launch_file": False, "policy": None, "no_ptxas": False, "without": [], "workers": None, "scheduler": None,
    "worker_wait": None, "out": [], "cache": None,
}
MAX_PLOT_PANELS = 24
DEFAULT_WORKER_WAIT_S = 60
NAMED_CACHE_PROBLEMS = 5
# Exit statuses besides 0, 2 (bad input, engine.cli) and 128 + signal (interrupted, 130 for Ctrl+C):
EXIT_ALL_FAILED = 1     # the batch ran to the end and no row has a figure
EXIT_STOPPED = 3        # the batch could not go on where it ran (lost cluster, full disk, ...)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sources", nargs="*", metavar="PTX", help="PTX files, folders (every .ptx below) or globs")
    parser.add_argument("--spec", metavar="FILE.toml",
                        help="batch spec: the options below as TOML keys (options given here win)")
    parser.add_argument("--kernel", action="append", default=[], help="kernel name (repeatable; default: all)")
    parser.add_argument("--profile", action="append", default=[], metavar="NAME|FILE.toml|all",
                        help="GPU profile (repeatable, or 'all')")
    parser.add_argument("--model", action="append", default=[], metavar="MODEL",
                        help=f"model (repeatable; default all): {', '.join(model_ids())}")
    parser.add_argument("--grid", action="append", default=[], metavar="X[,Y,Z]", help="grid (repeatable: a sweep)")
    parser.add_argument("--block", action="append", default=[], metavar="X[,Y,Z]",
                        help="block (repeatable: a sweep)")
    parser.add_argument("--smem-dynamic", action="append", default=[], metavar="BYTES",
                        help="dynamic shared memory per block (repeatable)")
    parser.add_argument("--regs", type=positive_int, help="registers per thread (default: ptxas -v, else estimate)")
    parser.add_argument("--arg", action="append", default=[], metavar="INDEX_OR_NAME=V1[,V2...]",
                        help="kernel argument values (repeatable; lists are crossed)")
    parser.add_argument("--trip", action="append", default=[], metavar="LOOP=N", help="loop trip count override")
    parser.add_argument("--occupancy", action="append", default=[], metavar="A:B[:STEP]|N|max",
                        help="resident blocks per SM (repeatable; default: as many as fit)")
    parser.add_argument("--launch", dest="launch_file", metavar="FILE.launch.toml",
                        help="launch file: every launch written for the kernel")
    parser.add_argument("--config", action="append", default=[], help="only these launches of the launch file")
    parser.add_argument("--no-launch-file", action="store_true",
                        help="ignore the samples' own launch files (found beside the PTX)")
    parser.add_argument("--policy", choices=POLICIES, help="warp scheduler of the simulation (default lrr)")
    parser.add_argument("--no-ptxas", action="store_true", help="estimate registers instead of running ptxas")
    parser.add_argument("--without", action="append", default=[], metavar="MECHANISM",
                        help=f"switch a simulator mechanism off (repeatable): {', '.join(MECHANISMS)}")
    parser.add_argument("--workers", type=positive_int, help="local worker processes (default: the machine's cores)")
    parser.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run on this Dask distributed cluster")
    parser.add_argument("--worker-wait", type=positive_int, metavar="SECONDS",
                        help=f"with --scheduler: how long to wait for a worker to join, or to come back when "
                             f"none is left (default {DEFAULT_WORKER_WAIT_S})")
    parser.add_argument("--out", action="append", default=[], metavar="FILE.csv|FILE.parquet",
                        help="where the rows go (repeatable: CSV and Parquet)")
    parser.add_argument("--cache", metavar="DIR", help="result cache (default: OUT's name + .batch-cache beside it)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar, no summary")
    parser.add_argument("--plot", metavar="PNG", help="per kernel: kernel cycles against the swept parameter")
    parser.add_argument("--best-csv", metavar="CSV", help="the best launch per kernel and GPU as CSV")
    parser.add_argument("--best", action="store_true", help="print the best launch per kernel and GPU")
    parser.add_argument("--report-model", metavar="MODEL", help="model of --plot/--best (default: the first one)")


def run(ns: argparse.Namespace, renderer: Any = None) -> int:
    if ns.spec:
        for dest, value in read_spec_file(ns.spec).items():
            if getattr(ns, dest) == UNSET[dest]:
                setattr(ns, dest, value)
    if not ns.sources:
        raise WarplineError("batch: give PTX files, folders or patterns (or a --spec file with 'ptx')")
    if not ns.out:
        raise WarplineError("batch: give --out FILE.csv or --out FILE.parquet")
    outputs = [*ns.out, *([ns.best_csv] if ns.best_csv else []), *([ns.plot] if ns.plot else [])]
    for path in [*ns.out, *([ns.best_csv] if ns.best_csv else [])]:
        output_format(path)
    check_writable(*outputs)
    if ns.worker_wait is not None and ns.worker_wait <= 0:
        raise WarplineError(f"--worker-wait {ns.worker_wait}: give a number of seconds above 0")
    if ns.plot:
        renderer = require_renderer(renderer, "--plot")
    spec = spec_from_options(ns)
    report_model = ns.report_model or spec.models[0]
    if report_model not in spec.models:
        raise WarplineError(f"--report-model {report_model}: not among the batch's models ({', '.join(spec.models)})")
    # One batch per output at a time; SIGTERM/SIGHUP stop the batch as Ctrl+C does.
    with OutputLock(outputs), StopSignals() as signals:
        result, where = compute(ns, spec, signals)
        if result.stopped:
            return stopped(ns, result)
        write_outputs(ns.out, result)
        if not ns.quiet:
            print(summary(result, where), file=sys.stderr)
            for note in result.notes:
                print(f"note: {note}", file=sys.stderr)
            print("wrote " + ", ".join(ns.out), file=sys.stderr)
        if result.interrupted:
            print(f"interrupted ({result.signal_name}): {len(result.rows)} of {result.planned} rows kept; run the "
                  "same command again to finish", file=sys.stderr)
            return exit_status(result.signal_name)
        if result.all_failed:
            print(f"error: every row failed ({len(result.rows)} rows); the first: {result.rows[0].get('message')}",
                  file=sys.stderr)
            return EXIT_ALL_FAILED
        report(ns, result, report_model, renderer)
        return exit_status(signals.received) if signals.received else 0


def compute(ns: argparse.Namespace, spec: BatchSpec, signals: StopSignals) -> tuple[BatchResult, str]:
    """Plan, check the folders, run what the cache lacks: the result and where it ran. The stop
    signals interrupt only this part (writing the outputs afterwards is not cut short)."""
    plan = plan_batch(spec)
    cache_folder = Path(ns.cache or default_cache(ns.out[0]))
    check_cache_folder(cache_folder)
    cache = ResultCache(cache_folder).load()
    for problem in cache.problems[:NAMED_CACHE_PROBLEMS]:
        print(f"note: batch cache {cache_folder}: {problem}; skipped (its rows are computed again)", file=sys.stderr)
    if len(cache.problems) > NAMED_CACHE_PROBLEMS:
        print(f"note: batch cache {cache_folder}: {len(cache.problems) - NAMED_CACHE_PROBLEMS} more lines skipped "
              "likewise", file=sys.stderr)
    todo = pending_units(plan, cache)
    check_room(sum(unit.rows for unit in todo), cache_folder, ns.out)
    executor = make_executor(ns, len(todo))
    cached = plan.rows - sum(u.rows for u in todo)
    if not ns.quiet:      # said at once: a long batch is never silent, terminal or log
        print(f"batch: {plan.rows:,} rows planned, {cached:,} of them cached; {executor.description}",
              file=sys.stderr, flush=True)
    progress = ProgressBar(plan.rows, cached, enabled=not ns.quiet)
    try:
        return run_batch(plan, executor, cache, progress), executor.description
    finally:
        progress.close()
        signals.disarm()


def write_outputs(outputs: list[str], result: BatchResult) -> None:
    for path in outputs:
        try:
            write_rows(result.rows, path)
        except WarplineError as exc:
            # Atomic: the file as it was is left whole; the rows are in the cache for a re-run.
            raise WarplineError(f"{exc}; the rows are kept in the batch cache: run the same command again once "
                                "it can be written") from None


def stopped(ns: argparse.Namespace, result: BatchResult) -> int:
    """One line: why the batch could not go on, what was kept, how to resume."""
    done = len(result.rows) - result.uncached
    kept = "nothing was written"
    if any(row.get("status") == STATUS_OK for row in result.rows):
        try:
            write_outputs(ns.out, result)
            kept = f"the {done} rows done are in {', '.join(ns.out)}"
        except WarplineError as exc:
            kept = f"the outputs could not be written ({exc})"
    print(f"error: batch stopped after {done} of {result.planned} rows: {result.stopped}; {kept}; the cache keeps "
          "every finished row: run the same command again to resume", file=sys.stderr)
    return EXIT_STOPPED


def spec_from_options(ns: argparse.Namespace) -> BatchSpec:
    models = ns.model or ["all"]
    chosen = model_ids() if "all" in models else list(dict.fromkeys(models))
    for model_id in chosen:
        model(model_id)     # an unknown id from a spec file: one line naming the models
    policy = ns.policy or "lrr"
    if policy not in POLICIES:
        raise WarplineError(f"policy {policy!r}: one of {', '.join(POLICIES)}")
    occupancies: list[int | None] = []
    for item in ns.occupancy:
        occupancies.extend([None] if item == "max" else parse_range(item, "--occupancy"))
    return BatchSpec(
        sources=tuple(ns.sources), profiles=tuple(ns.profile), models=tuple(chosen), kernels=tuple(ns.kernel),
        grids=tuple(parse_dim(g, "--grid") for g in ns.grid), blocks=tuple(parse_dim(b, "--block") for b in ns.block),
        smem=tuple(_non_negative(s, "--smem-dynamic") for s in ns.smem_dynamic), regs=ns.regs,
        arg_sets=arg_sets(ns.arg), trips=parse_trip_option(ns.trip),
        occupancies=tuple(dict.fromkeys(occupancies)) or (None,), launch_file=ns.launch_file,
        configs=tuple(ns.config), use_launch_files=not ns.no_launch_file, policy=policy, use_ptxas=not ns.no_ptxas,
        without=tuple(sorted(check_names(ns.without))))


def arg_sets(items: list[str]) -> tuple[dict[str | int, int | float], ...]:
    """``n=1024,2048`` and ``0=2`` -> every combination: ({n: 1024, 0: 2}, {n: 2048, 0: 2})."""
    choices: dict[str | int, list[int | float]] = {}
    for item in items:
        key, sep, values = item.partition("=")
        if not sep:
            raise WarplineError(f"--arg {item}: expected INDEX_OR_NAME=V1[,V2...]")
        for value in values.split(","):
            ((name, number),) = parse_args_option([f"{key}={value}"]).items()
            choices.setdefault(name, []).append(number)
    keys = list(choices)
    return tuple(dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(choices[k] for k in keys)))


def _non_negative(text: str, option: str) -> int:
    try:
        return non_negative_int(text)
    except argparse.ArgumentTypeError as exc:
        raise WarplineError(f"{option} {text}: {exc}") from None


def default_cache(out: str) -> Path:
    path = Path(out)
    return path.with_name(path.stem + ".batch-cache")


def make_executor(ns: argparse.Namespace, units: int) -> Any:
    if ns.scheduler:
        # The one-line messages say what went wrong; Dask's own log lines (tracebacks of a lost
        # connection) would bury them.
        try:
            import distributed  # noqa: F401 - its import configures the loggers silenced here
        except ImportError:
            pass                # DaskCluster says what to install
        for name in ["distributed", *logging.root.manager.loggerDict]:
            if name.startswith("distributed"):
                logging.getLogger(name).setLevel(logging.CRITICAL)
        return DaskCluster(ns.scheduler, worker_wait=float(ns.worker_wait or DEFAULT_WORKER_WAIT_S))
    workers = min(ns.workers or default_workers(), max(1, units))
    return InProcess() if workers == 1 else LocalPool(workers)


def summary(result: BatchResult, where: str) -> str:
    return (f"batch: {len(result.rows)} rows ({result.computed} computed, {result.from_cache} from the cache; "
            f"{result.errors} with status error) in {result.elapsed_s:.1f} s "
            f"({result.rate:.1f} rows/s) on {where}")


def report(ns: argparse.Namespace, result: BatchResult, model_id: str, renderer: Any) -> None:
    if not (ns.plot or ns.best_csv or ns.best):
        return
    best = best_launches(result.rows, model_id)
    print(best_text(best))
    if ns.best_csv:
        write_rows(best, ns.best_csv, BEST_COLUMNS, BEST_TYPES)
        print(f"wrote {ns.best_csv}", file=sys.stderr)
    if ns.plot:
        series = kernel_series(result.rows, model_id)
        swept = [s for s in series if s.parameter] or series
        if len(swept) > MAX_PLOT_PANELS:
            print(f"note: --plot draws the first {MAX_PLOT_PANELS} of {len(swept)} kernels", file=sys.stderr)
        renderer.batch_png(swept[:MAX_PLOT_PANELS], ns.plot, model_title=model_id)
        print(f"wrote {ns.plot}", file=sys.stderr)


COMMAND = Command("batch", "many kernels x launches x profiles x models in parallel, one row each (CSV/Parquet)",
                  add_arguments, run)
