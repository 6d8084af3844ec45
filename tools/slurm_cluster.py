#!/usr/bin/env python3
"""A Dask cluster whose workers are SLURM jobs, for ``main.py batch --scheduler`` (docs/batch.md).

Run on a login node, from a Warpline checkout that the compute nodes see at the same path (a
shared file system) and that ``tools/setup_env.sh`` set up (its ``.venv`` has Warpline installed,
so every worker imports it):

    .venv/bin/python tools/slurm_cluster.py --jobs 8 --cores 16 --memory 64GB --walltime 02:00:00 \\
        --partition cpu
    # prints the scheduler's address, then keeps the cluster up until Ctrl+C or SIGTERM

    .venv/bin/python tools/slurm_cluster.py --print-job-script ...   # the sbatch script, nothing submitted

Each job is one node running ``--cores`` single-threaded worker processes (the evaluation holds
the GIL, so threads would not help). Needs dask-jobqueue: ``pip install -e '.[slurm]'``.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from typing import Any

CHECKOUT = Path(__file__).resolve().parents[1]


def make_cluster(*, cores: int, memory: str, walltime: str, partition: str | None = None,
                 account: str | None = None, extra_directives: tuple[str, ...] = (),
                 checkout: Path = CHECKOUT, python: str | None = None, scheduler_host: str | None = None,
                 local_directory: str | None = None) -> Any:
    """The SLURMCluster (its scheduler runs in this process); ``python``: the interpreter the
    jobs run (default: the checkout's .venv)."""
    try:
        from dask_jobqueue import SLURMCluster
    except ImportError:
        raise SystemExit("tools/slurm_cluster.py needs dask-jobqueue: pip install -e '.[slurm]'") from None
    directives = [*([f"--partition={partition}"] if partition else []),
                  *([f"--account={account}"] if account else []), *extra_directives]
    return SLURMCluster(
        cores=cores, processes=cores, memory=memory, walltime=walltime, job_name="warpline-dask",
        python=python or str(checkout / ".venv" / "bin" / "python"),
        # Every path in a unit is the driver's: running from the checkout lets relative ones resolve.
        job_script_prologue=[f"cd {checkout}", "unset PYTHONPATH"],
        job_extra_directives=directives, local_directory=local_directory,
        scheduler_options={"host": scheduler_host, "dashboard_address": None} if scheduler_host
        else {"dashboard_address": None})


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Dask workers as SLURM jobs, for main.py batch --scheduler")
    parser.add_argument("--jobs", type=int, default=1, help="SLURM jobs (nodes) to start (default 1)")
    parser.add_argument("--cores", type=int, required=True, help="cores per job = worker processes per job")
    parser.add_argument("--memory", required=True, help="memory per job, e.g. 64GB")
    parser.add_argument("--walltime", required=True, help="time limit per job, HH:MM:SS")
    parser.add_argument("--partition", help="SLURM partition")
    parser.add_argument("--account", help="SLURM account")
    parser.add_argument("--directive", action="append", default=[], metavar="OPTION",
                        help="another #SBATCH option, e.g. --qos=normal (repeatable)")
    parser.add_argument("--local-directory", help="node-local scratch folder for the workers")
    parser.add_argument("--print-job-script", action="store_true", help="print the job script and stop")
    return parser


def main(argv: list[str]) -> int:
    ns = build_parser().parse_args(argv)
    cluster = make_cluster(cores=ns.cores, memory=ns.memory, walltime=ns.walltime, partition=ns.partition,
                           account=ns.account, extra_directives=tuple(ns.directive),
                           local_directory=ns.local_directory)
    try:
        if ns.print_job_script:
            print(cluster.job_script())
            return 0
        cluster.scale(jobs=ns.jobs)
        print(cluster.scheduler_address, flush=True)
        print(f"{ns.jobs} job(s) of {ns.cores} workers asked for; Ctrl+C or SIGTERM stops the cluster",
              file=sys.stderr)
        stop = threading.Event()
        for number in (signal.SIGINT, signal.SIGTERM):
            signal.signal(number, lambda *_: stop.set())
        while not stop.wait(1.0):
            pass
        return 0
    finally:
        cluster.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
