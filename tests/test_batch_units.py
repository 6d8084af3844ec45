"""The batch's parts: failing rows, row keys, the cache's cut lines, CSV escaping, Ctrl+C in the
runner, spec-file errors."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import stat
import time
from pathlib import Path

import pytest

from engine.batch import BatchSpec, Failed, InProcess, ResultCache, StopBatch, plan_batch, run_batch
from engine.batch.best_launches import best_launches, kernel_series
from engine.batch.lock import OutputLock
from engine.batch.output import rows_csv, write_rows
from engine.batch.plan import Unit
from engine.batch.result_rows import empty_row
from engine.batch.runner import FAIL_FAST_UNITS, FailureStreak
from engine.batch.signals import StopSignals, exit_status
from engine.batch.spec import read_spec_file
from engine.batch.work import run_unit
from engine.cli import main
from engine.errors import WarplineError

ROOT = Path(__file__).resolve().parents[1]
MM = str(ROOT / "samples" / "ptx" / "mm.sm_90.ptx")
COPY = str(ROOT / "samples" / "ptx" / "copy.sm_90.ptx")


def spec(*sources: str, **changes) -> BatchSpec:
    base = {"profiles": ("h100",), "models": ("roofline",), "grids": ((4, 1, 1),), "blocks": ((64, 1, 1),),
            "use_launch_files": False, "use_ptxas": False}
    base.update(changes)
    return BatchSpec(sources=sources, **base)


def test_failing_rows_are_recorded_and_the_batch_goes_on(tmp_path, capsys):
    broken = tmp_path / "broken.ptx"
    broken.write_text(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n  add.s32 %r1, ;\n}\n")
    out = tmp_path / "rows.csv"
    assert main(["batch", str(broken), COPY, "--profile", "h100", "--model", "roofline", "--grid", "4",
                 "--block", "64", "--arg", "nosuch=1", "--arg", "0=0", "--no-ptxas", "--no-launch-file",
                 "--workers", "1", "--out", str(out), "--quiet"]) == 1      # every row failed: not a success
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("error: every row failed (3 rows); the first: ")
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    bad = [r for r in rows if r["file"] == str(broken)]
    assert len(bad) == 1 and bad[0]["status"] == "error"
    assert bad[0]["message"].startswith(f"{broken}:6:") and "\n" not in bad[0]["message"]
    copy_rows = [r for r in rows if r["file"] == COPY]
    assert copy_rows and all(r["status"] == "error" and "nosuch" in r["message"] for r in copy_rows)


def test_row_keys_follow_contents_not_spelling(tmp_path):
    twin = tmp_path / "twin.ptx"
    twin.write_bytes(Path(MM).read_bytes())
    a = plan_batch(spec(MM, arg_sets=({3: 64, 0: 1},)))
    b = plan_batch(spec(str(twin), arg_sets=({0: 1, 3: 64},)))
    assert [list(u.keys()) for u in a.units] == [list(u.keys()) for u in b.units]
    c = plan_batch(spec(MM, arg_sets=({3: 128, 0: 1},)))
    assert not set(a.units[0].keys()) & set(c.units[0].keys())
    h200 = plan_batch(spec(MM, profiles=("h200",)))
    assert not set(a.units[0].keys()) & set(h200.units[0].keys())


K1, K2, K3 = ("1" * 64, "2" * 64, "3" * 64)      # row keys are SHA-256 digests in hex


def test_cache_skips_cut_lines_and_keeps_the_rest(tmp_path):
    cache = ResultCache(tmp_path)
    cache.add([(K1, {"a": 1}), (K2, {"a": 2})])
    cache.close()
    (path,) = tmp_path.glob("rows-*.jsonl")
    with path.open("a") as handle:
        handle.write(json.dumps({"key": K3, "row": {"a": 3}})[:15])     # a write cut by SIGKILL
    loaded = ResultCache(tmp_path).load()
    assert loaded.rows == {K1: {"a": 1}, K2: {"a": 2}} and loaded.skipped_lines == 1
    assert loaded.problems == [f"{path.name} line 3: cut off or not JSON"]


def test_cache_names_damaged_lines_and_takes_the_good_ones(tmp_path):
    cache = ResultCache(tmp_path)
    cache.add([(K1, {"sm_cycles": 1234.5}), (K2, {"sm_cycles": 99.0}), (K3, {"sm_cycles": 7.0})])
    cache.close()
    (path,) = tmp_path.glob("rows-*.jsonl")
    lines = path.read_text().splitlines()
    lines[0] = lines[0].replace("1234.5", "1284.5")          # one digit changed on disk: still JSON
    lines[1] = lines[1].replace(K2, "not-a-key")
    lines.insert(2, "\x00\x00garbage")
    lines.append('{"key": "%s", "row": {"sm_cycles": 5.0}}' % ("4" * 64))   # an older line, no checksum
    path.write_text("\n".join(lines) + "\n")
    loaded = ResultCache(tmp_path).load()
    assert loaded.rows == {K3: {"sm_cycles": 7.0}, "4" * 64: {"sm_cycles": 5.0}}
    assert loaded.problems == [f"{path.name} line 1: the row does not match its checksum (damaged)",
                               f"{path.name} line 2: not a row key", f"{path.name} line 3: cut off or not JSON"]


def test_csv_cells_are_escaped_against_formulas():
    row = empty_row(file="=HYPERLINK(1)", kernel="k", message="+cmd", status="error", sm_cycles=-3.0)
    (parsed,) = csv.DictReader(io.StringIO(rows_csv([row])))
    assert parsed["file"] == "'=HYPERLINK(1)" and parsed["message"] == "'+cmd" and parsed["sm_cycles"] == "-3.0"


class _Interrupted(InProcess):
    def run(self, units):
        first, *_ = units
        yield first, run_unit(first)
        raise KeyboardInterrupt


def test_interrupt_keeps_finished_units_in_order(tmp_path):
    plan = plan_batch(spec(MM, COPY, grids=((4, 1, 1), (8, 1, 1))))
    assert len(plan.units) >= 2
    cache = ResultCache(tmp_path)
    result = run_batch(plan, _Interrupted(), cache)
    assert result.interrupted
    first: Unit = plan.units[0]
    assert len(result.rows) == first.rows and set(first.keys()) <= set(ResultCache(tmp_path).load().rows)
    again = run_batch(plan, InProcess(), ResultCache(tmp_path).load())
    assert not again.interrupted and len(again.rows) == plan.rows and again.from_cache == first.rows
    assert again.rows[: first.rows] == result.rows


def test_report_picks_the_fewest_cycles_and_the_swept_column():
    rows = [empty_row(file="f", kernel="k", grid=g, block="32,1,1", profile=p, model="m", status="ok",
                      kernel_cycles=c) for g, p, c in
            [("1,1,1", "a", 30.0), ("2,1,1", "a", 10.0), ("1,1,1", "b", 5.0), ("2,1,1", "b", 7.0)]]
    best = {r["profile"]: r for r in best_launches(rows, "m")}
    assert best["a"]["grid"] == "2,1,1" and best["b"]["grid"] == "1,1,1" and best["a"]["launches"] == 2
    (series,) = kernel_series(rows, "m")
    assert series.parameter == "grid" and series.labels == ["1,1,1", "2,1,1"]
    assert series.cycles == {"a": [30.0, 10.0], "b": [5.0, 7.0]}


def test_spec_file_errors_name_the_file_and_key(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('ptx = ["x.ptx"]\ngrids = ["8"]\n')
    with pytest.raises(WarplineError, match=r"bad\.toml: unknown key 'grids'"):
        read_spec_file(bad)
    bad.write_text("ptx = [1, true]\n")
    with pytest.raises(WarplineError, match=r"key 'ptx'"):
        read_spec_file(bad)
    bad.write_text('ptx = "kernels"\nout = "rows.csv"\n')
    values = read_spec_file(bad)
    assert values["sources"] == [str(tmp_path / "kernels")] and values["out"] == [str(tmp_path / "rows.csv")]


def test_command_line_mistakes_are_one_line_errors(tmp_path, capsys):
    out = str(tmp_path / "r.csv")
    assert main(["batch", MM, "--out", out]) == 2
    assert main(["batch", MM, "--profile", "h100", "--out", str(tmp_path / "r.xlsx")]) == 2
    assert main(["batch", str(tmp_path / "none*.ptx"), "--profile", "h100", "--out", out]) == 2
    assert main(["batch", MM, "--profile", "h100", "--kernel", "nosuchkernel", "--out", out]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and all(line.startswith("error: ") for line in err)


class _LostEverywhere(InProcess):
    """Every unit lost where it ran, the same way (a cluster that cannot load the work)."""

    description = "a cluster that cannot load the work"

    def __init__(self) -> None:
        self.asked = 0

    def run(self, units):
        for unit in units:
            self.asked += 1
            yield unit, Failed(f"worker failed: RuntimeError: Error during deserialization of the task graph "
                               f"(task run_unit-{self.asked:08x}{'ab' * 6})")


def test_units_lost_the_same_way_stop_the_batch_early(tmp_path):
    plan = plan_batch(spec(MM, COPY, grids=((4, 1, 1), (8, 1, 1))))
    executor = _LostEverywhere()
    result = run_batch(plan, executor, ResultCache(tmp_path))
    assert executor.asked == FAIL_FAST_UNITS < len(plan.units)
    assert result.stopped.startswith("3 units in a row failed the same way where they ran: worker failed: ")
    assert result.rows == [] and not list(tmp_path.glob("rows-*"))     # nothing cached, nothing to write


def test_a_unit_that_ran_ends_a_streak_of_lost_units():
    streak = FailureStreak(limit=2)
    streak.see(Failed("worker failed: KilledWorker: task a1b2c3d4e5f6"))
    streak.see([])                                       # a unit that ran
    streak.see(Failed("worker failed: KilledWorker: task 0f0f0f0f0f0f"))
    streak.see(Failed("worker failed: OSError: other"))  # another kind: a new streak
    with pytest.raises(StopBatch, match="2 units in a row"):
        streak.see(Failed("worker failed: OSError: other"))


def test_a_second_batch_on_a_locked_output_is_refused_before_work(tmp_path, capsys):
    out = tmp_path / "rows.csv"
    with OutputLock([out]):
        assert main(["batch", MM, "--profile", "h100", "--model", "roofline", "--no-ptxas", "--workers", "1",
                     "--out", str(out), "--quiet"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"error: {out}: another batch is writing it (pid {os.getpid()} on ")
    assert not out.exists() and not (tmp_path / "rows.batch-cache").exists()
    assert main(["batch", MM, "--profile", "h100", "--model", "roofline", "--no-ptxas", "--workers", "1",
                 "--out", str(out), "--quiet"]) == 0                # released with the context


def test_no_room_for_the_rows_is_refused_before_work(tmp_path, capsys, monkeypatch):
    real = os.statvfs
    monkeypatch.setattr(os, "statvfs", lambda path: _Statvfs(real(path), free_blocks=10))
    out = tmp_path / "rows.csv"
    assert main(["batch", MM, COPY, "--profile", "h100", "--model", "roofline", "--no-ptxas", "--workers", "1",
                 "--out", str(out), "--quiet"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "free, and this batch needs about" in line and "rows for the cache and the outputs" in line
    assert not out.exists() and not list((tmp_path / "rows.batch-cache").glob("rows-*"))


class _Statvfs:
    """A file system's figures with only ``free_blocks`` left."""

    def __init__(self, real, free_blocks):
        self.f_frsize, self.f_bavail = real.f_frsize, free_blocks


def test_stop_signals_interrupt_the_work_then_only_record(tmp_path):
    with StopSignals() as signals:
        with pytest.raises(KeyboardInterrupt) as caught:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)          # the handler raises in this thread before the sleep ends
        assert caught.value.signal_name == "SIGTERM"
        signals.disarm()
        os.kill(os.getpid(), signal.SIGHUP)         # while the outputs are written: recorded only
        time.sleep(0.01)
    assert signals.received == "SIGTERM" and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert exit_status("SIGTERM") == 143 and exit_status("SIGINT") == 130


def test_outputs_get_the_mode_a_plain_file_would(tmp_path):
    out = tmp_path / "rows.csv"
    write_rows([empty_row(file="f", kernel="k", status="ok")], str(out))
    mask = os.umask(0o022)
    os.umask(mask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~mask
    out.chmod(0o640)
    write_rows([], str(out))
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
