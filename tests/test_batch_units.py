"""The batch's parts: failing rows, row keys, the cache's cut lines, CSV escaping, Ctrl+C in the
runner, spec-file errors."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from engine.batch import BatchSpec, InProcess, ResultCache, plan_batch, run_batch
from engine.batch.output import rows_csv
from engine.batch.plan import Unit
from engine.batch.report import best_launches, kernel_series
from engine.batch.rows import empty_row
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
                 "--workers", "1", "--out", str(out), "--quiet"]) == 0
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


def test_cache_skips_cut_lines_and_keeps_the_rest(tmp_path):
    cache = ResultCache(tmp_path)
    cache.add([("k1", {"a": 1}), ("k2", {"a": 2})])
    cache.close()
    (path,) = tmp_path.glob("rows-*.jsonl")
    with path.open("a") as handle:
        handle.write(json.dumps({"key": "k3", "row": {"a": 3}})[:15])     # a write cut by SIGKILL
    loaded = ResultCache(tmp_path).load()
    assert loaded.rows == {"k1": {"a": 1}, "k2": {"a": 2}} and loaded.skipped_lines == 1


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
