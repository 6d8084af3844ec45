"""The SLURM deployment of docs/batch.md (tools/slurm_cluster.py, dask-jobqueue), as far as a machine
without SLURM allows: the job script it would submit, checked line by line; then that script run
for real by a stand-in ``sbatch`` (it runs the script with bash instead of queueing it), whose
workers join the cluster and give the rows of a local run. Not run here: SLURM itself (queueing,
#SBATCH resources, nodes other than this one, a shared file system).
"""

from __future__ import annotations

import csv
import io
import os
import signal
import stat
import sys
import time
from pathlib import Path

import pytest

from engine.cli import main

pytest.importorskip("dask_jobqueue")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from slurm_cluster import make_cluster  # noqa: E402 - tools/ is not a package

ROOT = Path(__file__).resolve().parents[1]
FILES = [str(ROOT / "samples" / "ptx" / name) for name in ("mm.sm_90.ptx", "hotspot.sm_90.ptx")]
CHEAP = ["--profile", "h100", "--model", "roofline", "--model", "volkov", "--grid", "1", "--block", "32",
         "--no-launch-file", "--no-ptxas", "--without", "sass", "--quiet"]

# Stand-ins for SLURM's commands: sbatch runs the job script in the background in a session of its
# own (the job id is its process id), with no descriptor of the caller's left open; scancel ends
# that session.
SBATCH = """#!/bin/bash
cp "$1" "$FAKE_SLURM/job.sh"
setsid env -u PYTHONPATH bash "$FAKE_SLURM/job.sh" > "$FAKE_SLURM/job.log" 2>&1 < /dev/null &
echo "$!" > "$FAKE_SLURM/job.pid"
echo "Submitted batch job $!"
"""
SCANCEL = """#!/bin/bash
kill -TERM -- "-$1" 2>/dev/null || true
"""


def test_the_job_script_asks_slurm_for_what_the_batch_needs(tmp_path):
    cluster = make_cluster(cores=16, memory="64GB", walltime="02:00:00", partition="cpu", account="gpuperf",
                           extra_directives=("--qos=normal",), scheduler_host="127.0.0.1",
                           local_directory=str(tmp_path))
    try:
        script = cluster.job_script()
        address = cluster.scheduler_address
    finally:
        cluster.close()
    lines = script.splitlines()
    assert lines[0] == "#!/usr/bin/env bash"
    for directive in ("#SBATCH -J warpline-dask", "#SBATCH -n 1", "#SBATCH --cpus-per-task=16", "#SBATCH -t 02:00:00",
                      "#SBATCH --partition=cpu", "#SBATCH --account=gpuperf", "#SBATCH --qos=normal"):
        assert directive in lines, script
    assert any(line.startswith("#SBATCH --mem=") for line in lines)
    assert f"cd {ROOT}" in lines and "unset PYTHONPATH" in lines
    (command,) = [line for line in lines if "distributed.cli.dask_worker" in line]
    words = command.split()
    # The checkout's environment (where setup_env.sh installed Warpline), 16 single-threaded workers.
    assert words[0] == str(ROOT / ".venv" / "bin" / "python")
    assert words[words.index("distributed.cli.dask_worker") + 1] == address
    assert words[words.index("--nthreads") + 1] == "1" and words[words.index("--nworkers") + 1] == "16"
    assert lines.index(f"cd {ROOT}") < lines.index(command)


def test_the_job_script_run_for_real_gives_the_rows_of_a_local_run(tmp_path, monkeypatch):
    if not (ROOT / ".venv" / "bin" / "python").exists():
        pytest.skip("the job script runs the checkout's .venv, which tools/setup_env.sh makes")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("sbatch", SBATCH), ("scancel", SCANCEL)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(stat.S_IRWXU)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SLURM", str(tmp_path))

    local = tmp_path / "local.csv"
    assert main(["batch", *FILES, *CHEAP, "--workers", "1", "--out", str(local)]) == 0
    cluster = make_cluster(cores=2, memory="4GB", walltime="00:10:00", scheduler_host="127.0.0.1",
                           local_directory=str(tmp_path / "scratch"))
    try:
        cluster.scale(jobs=1)
        deadline = time.monotonic() + 120
        from distributed import Client

        with Client(cluster.scheduler_address, set_as_default=False) as client:
            while len(client.nthreads()) < 2:
                assert time.monotonic() < deadline, (tmp_path / "job.log").read_text(errors="replace")[-3000:]
                time.sleep(0.2)
        out = tmp_path / "rows.csv"
        assert main(["batch", *FILES, *CHEAP, "--scheduler", cluster.scheduler_address, "--out", str(out)]) == 0
    finally:
        cluster.close()
        pid = int((tmp_path / "job.pid").read_text()) if (tmp_path / "job.pid").exists() else None
        if pid is not None:
            try:
                os.killpg(pid, signal.SIGKILL)      # whatever scancel left
            except ProcessLookupError:
                pass
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert rows == list(csv.DictReader(io.StringIO(local.read_text()))) and len(rows) >= 4
    assert all(r["status"] == "ok" for r in rows)
