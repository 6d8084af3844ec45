"""batch at scale: the samples and the parser corpus through local workers, a batch stopped with
Ctrl+C, then with SIGTERM, then killed with SIGKILL, then re-run, the plot, the best-launch table
and the spec file. Dask clusters: tests/test_batch_cluster.py."""

from __future__ import annotations

import csv
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.cli import main

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = str(ROOT / "samples" / "ptx" / "*.ptx")
CORPUS = str(ROOT / "tests" / "corpus" / "**" / "*.ptx")
# Cheap on purpose: the analytical models share one description per evaluation and skip the
# simulation; one small launch keeps the memory analysis short; no ptxas/nvdisasm runs (registers
# estimated, the SASS mechanism off).
CHEAP = ["--profile", "h100", "--model", "roofline", "--model", "volkov", "--model", "mwp_cwp",
         "--grid", "1", "--block", "32", "--no-launch-file", "--no-ptxas", "--without", "sass", "--quiet"]


def read_csv(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def identity(row: dict[str, str]) -> tuple[str, ...]:
    return (row["file"], row["kernel"], row["grid"], row["block"], row["profile"], row["model"])


@pytest.fixture(scope="module")
def local_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("local") / "rows.csv"
    assert main(["batch", SAMPLES, CORPUS, *CHEAP, "--workers", "2", "--out", str(out),
                 "--out", str(out.with_suffix(".parquet"))]) == 0
    return out


def test_samples_and_corpus_give_one_row_per_kernel_launch_profile_model(local_run):
    rows = read_csv(local_run)
    assert len(rows) >= 500
    ids = [identity(r) for r in rows]
    assert len(set(ids)) == len(ids)
    files = {r["file"] for r in rows}
    assert any("/samples/ptx/" in f for f in files) and any("/tests/corpus/" in f for f in files)
    ok = [r for r in rows if r["status"] == "ok"]
    assert len(ok) >= 0.9 * len(rows)
    for row in ok:
        assert float(row["kernel_cycles"]) == pytest.approx(float(row["sm_cycles"]) + float(row["launch_cycles"]),
                                                            abs=0.11)
        assert row["grid"] == "1,1,1" and row["block"] == "32,1,1"
    for row in rows:
        if row["status"] != "ok":
            assert row["message"] and "\n" not in row["message"]


def _start(out: Path, *extra: str) -> subprocess.Popen:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.Popen([sys.executable, str(ROOT / "main.py"), "batch", SAMPLES, *CHEAP, "--workers", "2",
                             "--out", str(out), *extra], cwd=ROOT, env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _cached_lines(folder: Path) -> int:
    return sum(p.read_bytes().count(b"\n") for p in folder.glob("rows-*.jsonl")) if folder.is_dir() else 0


def _wait_for_rows(proc: subprocess.Popen, folder: Path, rows: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while _cached_lines(folder) < rows:
        assert proc.poll() is None, "the batch ended before it could be interrupted"
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_ctrl_c_then_sigkill_then_a_rerun_gives_every_row_once(local_run, tmp_path):
    out = tmp_path / "rows.csv"
    cache = tmp_path / "rows.batch-cache"
    expected = {identity(r): r for r in read_csv(local_run) if "/samples/ptx/" in r["file"]}

    # Ctrl+C (SIGINT to the process group, as a terminal sends it): exit 130, finished rows written.
    proc = _start(out)
    _wait_for_rows(proc, cache, 30)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    kept = read_csv(out)
    assert 30 <= len(kept) < len(expected)
    assert all(expected[identity(r)] == r for r in kept)

    # SIGTERM to the command alone (as `timeout`, `kill` and SLURM send it): the same as Ctrl+C,
    # with the exit status of SIGTERM.
    out.unlink()
    before = _cached_lines(cache)
    proc = _start(out)
    _wait_for_rows(proc, cache, before + 30)
    os.kill(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "interrupted (SIGTERM)" in err and "Traceback" not in err
    kept = read_csv(out)
    assert before + 30 <= len(kept) < len(expected)
    assert all(expected[identity(r)] == r for r in kept)

    # SIGKILL half-way: no output written, the cache keeps what had finished.
    out.unlink()
    proc = _start(out)
    _wait_for_rows(proc, cache, (_cached_lines(cache) + len(expected)) // 2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 0 < _cached_lines(cache) < len(expected) and not out.exists()

    assert main(["batch", SAMPLES, *CHEAP, "--workers", "2", "--out", str(out)]) == 0
    rows = read_csv(out)
    assert sorted(identity(r) for r in rows) == sorted(expected)
    assert {identity(r): r for r in rows} == expected            # same figures as the uninterrupted run
    # Each run added only what was missing: the cache holds the planned rows once each, apart
    # from a unit that a kill cut in the middle of its write (3 models: at most 3 rows again).
    assert len(expected) <= _cached_lines(cache) <= len(expected) + 3


def test_plot_best_table_and_spec_file(tmp_path, capsys):
    from gui.render import QtRenderer

    mm = str(ROOT / "samples" / "ptx" / "mm.sm_90.ptx")
    spec = tmp_path / "sweep.toml"
    spec.write_text(f'ptx = ["{mm}"]\nkernel = ["matrixMulSquare"]\nprofile = ["h100", "h200"]\n'
                    'model = ["roofline"]\ngrid = ["16", "64", "256"]\nblock = ["256"]\nno-ptxas = true\n'
                    'no-launch-file = true\nworkers = 1\n', encoding="utf-8")
    png, best = tmp_path / "sweep.png", tmp_path / "best.csv"
    assert main(["batch", "--spec", str(spec), "--out", str(tmp_path / "rows.csv"), "--plot", str(png),
                 "--best-csv", str(best), "--quiet"], renderer=QtRenderer()) == 0
    rows = read_csv(tmp_path / "rows.csv")
    assert len(rows) == 6 and {r["profile"] for r in rows} == {"h100", "h200"}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    table = read_csv(best)
    assert len(table) == 2
    for line in table:
        candidates = [float(r["kernel_cycles"]) for r in rows if r["profile"] == line["profile"]]
        assert float(line["kernel_cycles"]) == min(candidates) and line["launches"] == "3"
    assert "best launch per kernel and GPU" in capsys.readouterr().out
    # The same batch from options instead of the spec file: the same rows, all from the cache now.
    again = tmp_path / "again.csv"
    assert main(["batch", mm, "--kernel", "matrixMulSquare", "--profile", "h100", "--profile", "h200",
                 "--model", "roofline", "--grid", "16", "--grid", "64", "--grid", "256", "--block", "256",
                 "--no-ptxas", "--no-launch-file", "--workers", "1", "--out", str(again),
                 "--cache", str(tmp_path / "rows.batch-cache")]) == 0
    assert again.read_text() == (tmp_path / "rows.csv").read_text()
    assert "6 from the cache" in capsys.readouterr().err
