"""batch on a Dask cluster of separate processes on 127.0.0.1 (a ``dask scheduler`` process and
``dask worker`` processes started outside the checkout, as a cluster node starts them), and the
faults a cluster run meets: a worker killed mid-batch, the scheduler stopped, nodes without
Warpline, a full or read-only output folder, a damaged cache, two batches on one output.

Kept short: the sample files with the cheap models (tests/test_batch.py says why they are cheap).
"""

from __future__ import annotations

import csv
import errno
import io
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.cli import main
from tests.dask_processes import ProcessCluster, clean_env

pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = str(ROOT / "samples" / "ptx" / "*.ptx")
TWO_FILES = [str(ROOT / "samples" / "ptx" / name) for name in ("mm.sm_90.ptx", "hotspot.sm_90.ptx")]
CHEAP = ["--profile", "h100", "--model", "roofline", "--model", "volkov", "--model", "mwp_cwp",
         "--grid", "1", "--block", "32", "--no-launch-file", "--no-ptxas", "--without", "sass", "--quiet"]


def read_csv(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def identity(row: dict[str, str]) -> tuple[str, ...]:
    return (row["file"], row["kernel"], row["grid"], row["block"], row["profile"], row["model"])


def cached_lines(folder: Path) -> list[bytes]:
    return [line for p in sorted(folder.glob("rows-*.jsonl")) for line in p.read_bytes().splitlines()]


def start_batch(out: Path, scheduler: str, *sources: str) -> subprocess.Popen:
    """The batch command as a user runs it, in its own process (and process group)."""
    env = dict(clean_env(), QT_QPA_PLATFORM="offscreen")
    return subprocess.Popen([sys.executable, str(ROOT / "main.py"), "batch", *(sources or [SAMPLES]), *CHEAP,
                             "--scheduler", scheduler, "--worker-wait", "20", "--out", str(out)],
                            cwd=ROOT, env=env, start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_for_rows(proc: subprocess.Popen, folder: Path, rows: int, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while len(cached_lines(folder)) < rows if folder.is_dir() else True:
        assert proc.poll() is None, f"the batch ended before the fault: {proc.communicate()}"
        assert time.monotonic() < deadline, "the batch made no progress"
        time.sleep(0.02)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with ProcessCluster(tmp_path_factory.mktemp("cluster"), workers=2) as running:
        yield running


@pytest.fixture(scope="module")
def expected(tmp_path_factory) -> dict[tuple[str, ...], dict[str, str]]:
    """The samples' rows from 2 local worker processes."""
    out = tmp_path_factory.mktemp("local") / "rows.csv"
    assert main(["batch", SAMPLES, *CHEAP, "--workers", "2", "--out", str(out)]) == 0
    rows = read_csv(out)
    assert len(rows) >= 300 and sum(r["status"] == "ok" for r in rows) >= 0.9 * len(rows)
    return {identity(r): r for r in rows}


def test_a_cluster_of_separate_processes_gives_the_rows_of_local_workers(cluster, expected, tmp_path):
    out = tmp_path / "rows.csv"
    assert main(["batch", SAMPLES, *CHEAP, "--scheduler", cluster.address, "--out", str(out),
                 "--out", str(out.with_suffix(".parquet"))]) == 0
    rows = read_csv(out)
    assert [identity(r) for r in rows] == list(expected)        # plan order, every row once
    assert {identity(r): r for r in rows} == expected
    import pyarrow.parquet as pq

    assert pq.read_table(out.with_suffix(".parquet")).num_rows == len(rows)


def test_nodes_without_warpline_are_refused_before_any_work(tmp_path, capsys):
    with ProcessCluster(tmp_path / "bare", workers=1, hide_warpline=True) as bare:
        out = tmp_path / "rows.csv"
        assert main(["batch", *TWO_FILES, *CHEAP, "--scheduler", bare.address, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    (line,) = err.strip().splitlines()
    assert line.startswith(f"error: --scheduler {bare.address}: the scheduler (and 1 other node) cannot import "
                           "Warpline (ModuleNotFoundError: No module named 'engine')")
    assert "pip install -e ." in line and "wrote" not in err and not out.exists()


def test_a_worker_killed_mid_batch_leaves_no_row_lost_or_twice(expected, tmp_path):
    out, cache = tmp_path / "rows.csv", tmp_path / "rows.batch-cache"
    with ProcessCluster(tmp_path / "cluster", workers=2) as running:
        proc = start_batch(out, running.address)
        wait_for_rows(proc, cache, 30)
        # The victim: a worker running a unit right now (its file bytes may live only there).
        with running.client() as client:
            deadline = time.monotonic() + 30
            while not (busy := [w for w, tasks in client.processing().items() if tasks]):
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.01)
            names = {addr: info["name"] for addr, info in client.scheduler_info()["workers"].items()}
        victim = running.workers[int(str(names[busy[0]])[1:])]
        os.killpg(victim.pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    assert victim.wait() == -signal.SIGKILL
    rows = read_csv(out)
    assert [identity(r) for r in rows] == list(expected)
    differing = [(r, expected[identity(r)]) for r in rows if r != expected[identity(r)]]
    assert not differing, [(a["status"], a["message"]) for a, _ in differing[:3]]
    # Each planned row computed and cached once: the killed worker's units were run again
    # elsewhere, never added twice.
    assert len(cached_lines(cache)) == len(expected)


def test_a_stopped_scheduler_ends_the_batch_in_one_line_and_a_rerun_resumes(expected, tmp_path):
    out, cache = tmp_path / "rows.csv", tmp_path / "rows.batch-cache"
    with ProcessCluster(tmp_path / "cluster", workers=2) as running:
        proc = start_batch(out, running.address)
        wait_for_rows(proc, cache, 30)
        os.killpg(running.scheduler.pid, signal.SIGKILL)
        started = time.monotonic()
        _, err = proc.communicate(timeout=120)
        stopped_in = time.monotonic() - started
    assert proc.returncode == 3, err
    assert len(err.strip().splitlines()) == 1, err
    line = err.strip()
    assert line.startswith("error: batch stopped after ") and "lost the Dask scheduler at" in line
    assert "run the same command again to resume" in line and stopped_in < 30
    done = read_csv(out)
    assert 30 <= len(done) < len(expected)
    differing = [(r["status"], r["message"]) for r in done if expected[identity(r)] != r]
    assert not differing, differing[:3]
    kept = len(cached_lines(cache))

    # The same command without the cluster: only what is missing is computed.
    assert main(["batch", SAMPLES, *CHEAP[:-1], "--workers", "2", "--out", str(out)]) == 0
    rows = read_csv(out)
    assert {identity(r): r for r in rows} == expected and len(rows) == len(expected)
    assert len(cached_lines(cache)) == len(expected) and kept >= len(done)


def test_a_damaged_cache_line_is_named_skipped_and_computed_again(cluster, expected, tmp_path, capsys):
    out, cache = tmp_path / "rows.csv", tmp_path / "rows.batch-cache"
    argv = ["batch", *TWO_FILES, *CHEAP, "--scheduler", cluster.address, "--out", str(out)]
    assert main(argv) == 0
    first = out.read_bytes()
    (path,) = cache.glob("rows-*.jsonl")
    lines = path.read_bytes().splitlines()
    good = len(lines)
    lines[0] = lines[0].replace(b'"status":"ok"', b'"status":"ko"')         # damaged in place
    lines[1] = lines[1][: len(lines[1]) // 2]                                # cut short
    path.write_bytes(b"\n".join(lines) + b"\n")
    capsys.readouterr()
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert f"note: batch cache {cache}: {path.name} line 1: the row does not match its checksum (damaged)" in err
    assert f"note: batch cache {cache}: {path.name} line 2: cut off or not JSON" in err
    assert out.read_bytes() == first                                         # recomputed, the same
    # Two rows' units computed again (each of 3 models), in a file of their own.
    assert len(cached_lines(cache)) > good


def test_a_full_disk_mid_batch_stops_with_the_finished_rows_kept(cluster, expected, tmp_path, capsys, monkeypatch):
    from engine.batch import result_cache as cache_module

    out, cache = tmp_path / "rows.csv", tmp_path / "rows.batch-cache"
    previous = b"an earlier output that must survive\n"
    out.write_bytes(previous)
    real_open = cache_module.ResultCache._open
    writes = {"n": 0}

    class FullHandle:
        def __init__(self, handle):
            self.handle = handle

        def write(self, text):
            writes["n"] += 1
            if writes["n"] > 5:       # the disk is full from the sixth unit on
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return self.handle.write(text)

        def __getattr__(self, name):
            return getattr(self.handle, name)

    monkeypatch.setattr(cache_module.ResultCache, "_open", lambda self: FullHandle(real_open(self)))
    # Outputs cannot be written either: os.replace is where a full disk would stop them.
    monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left")))
    assert main(["batch", SAMPLES, *CHEAP, "--scheduler", cluster.address, "--out", str(out)]) == 3
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: batch stopped after ") and "No space left on device" in line
    assert "run the same command again to resume" in line
    assert out.read_bytes() == previous                       # the old output is whole
    kept = cached_lines(cache)
    assert kept and all(line.endswith(b"}") for line in kept)
    monkeypatch.undo()
    assert main(["batch", SAMPLES, *CHEAP, "--scheduler", cluster.address, "--out", str(out)]) == 0
    assert {identity(r): r for r in read_csv(out)} == expected


def _namespace_can_mount() -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "--mount", "true"], capture_output=True).returncode == 0


def _run_with_mount(mount: str, folder: Path, argv: list[str]) -> subprocess.CompletedProcess:
    """``main.py ARGV`` in a private mount namespace where ``folder`` is ``mount``: "ro" (a
    read-only bind of itself) or "full" (a 64 KB file system, nearly full)."""
    setup = {"ro": f"mount --bind {folder} {folder} && mount -o remount,bind,ro {folder}",
             "full": f"mount -t tmpfs -o size=64k tmpfs {folder} && "
                     f"(head -c 40000 /dev/zero > {folder}/filler || true)"}[mount]
    command = f"{setup} && exec \"$@\""
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", command, "sh",
                           sys.executable, str(ROOT / "main.py"), *argv], cwd=ROOT, capture_output=True, text=True,
                          env=dict(clean_env(), QT_QPA_PLATFORM="offscreen"), timeout=120)


@pytest.mark.parametrize("kind", ["ro", "full"])
def test_a_read_only_or_full_output_folder_is_refused_before_any_work(cluster, tmp_path, kind):
    folder = tmp_path / "out"
    folder.mkdir()
    argv = ["batch", *TWO_FILES, *CHEAP, "--scheduler", cluster.address, "--out", str(folder / "rows.csv")]
    if kind == "ro" and os.geteuid() != 0:
        folder.chmod(0o555)
        env = dict(clean_env(), QT_QPA_PLATFORM="offscreen")
        done = subprocess.run([sys.executable, str(ROOT / "main.py"), *argv], cwd=ROOT, capture_output=True,
                              text=True, env=env, timeout=120)
    elif _namespace_can_mount():
        done = _run_with_mount(kind, folder, argv)
    else:
        pytest.skip("needs a read-only or small file system: root with a private mount namespace (unshare)")
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    if kind == "ro":
        assert line.startswith(f"error: {folder / 'rows.csv'}: cannot write") or "Read-only file system" in line, line
    else:
        assert line.startswith(f"error: {folder / 'rows.batch-cache'}: ") and "free, and this batch needs about" in line
    assert not (folder / "rows.csv").exists() and not list(folder.glob("rows.batch-cache/rows-*"))


def test_two_batches_on_one_output_the_second_is_refused(cluster, expected, tmp_path, capsys):
    out, cache = tmp_path / "rows.csv", tmp_path / "rows.batch-cache"
    first = start_batch(out, cluster.address)
    wait_for_rows(first, cache, 3)
    assert main(["batch", *TWO_FILES, *CHEAP, "--scheduler", cluster.address, "--out", str(out),
                 "--cache", str(tmp_path / "other-cache")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"error: {out}: another batch is writing it (pid {first.pid} on ")
    _, err = first.communicate(timeout=180)
    assert first.returncode == 0, err
    assert {identity(r): r for r in read_csv(out)} == expected
    # Once the first is done the output is free again (the lock went with its process).
    assert main(["batch", SAMPLES, *CHEAP, "--scheduler", cluster.address, "--out", str(out)]) == 0
