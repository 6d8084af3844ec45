"""Two kernels or two versions of one (issue 32, part 4): instructions aligned by text, changed rows
and BLOCK cells marked, every model with the absolute and % difference; ``diff`` on the CLI."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from engine.evaluation import Evaluator, state_for
from engine.evaluation.diff import ADDED, CHANGED, REMOVED, RENAMED, SAME, align, diff, normalised
from engine.inputs import resolve_inputs
from engine.state import with_cell_edit

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
HOTSPOT = SAMPLES / "ptx" / "hotspot.sm_90.ptx"


def _evaluate(path: Path, state_edit=None):
    inputs = resolve_inputs(path, launch_file=SAMPLES / "hotspot.launch.toml", profile="h100")
    state = state_for(inputs)
    if state_edit is not None:
        state = state_edit(state)
    return Evaluator().evaluate(inputs, state)


@pytest.fixture(scope="module")
def versions(tmp_path_factory):
    """hotspot and a second version of it: one add made a mul, one instruction added."""
    text = HOTSPOT.read_text(encoding="utf-8")
    assert text.count("add.f32 \t%f16, %f12, %f12;") == 1
    edited = text.replace("add.f32 \t%f16, %f12, %f12;", "mul.f32 \t%f16, %f12, 0f40000000;")
    edited = edited.replace("fma.rn.f32 \t%f28, %f1, %f27, %f12;",
                            "fma.rn.f32 \t%f28, %f1, %f27, %f12;\n\tmov.f32 \t%f30, %f28;")
    folder = tmp_path_factory.mktemp("v2")
    other = folder / "hotspot.sm_90.ptx"
    other.write_text(edited, encoding="utf-8")
    return _evaluate(HOTSPOT), _evaluate(other)


def test_two_versions_of_a_sample(versions):
    before, after = versions
    result = diff(before, after, "v1", "v2")
    counts = result.counts()
    n_before = len(before.analysis.function.instructions)
    assert (counts[CHANGED], counts[ADDED], counts[REMOVED], counts[RENAMED]) == (1, 1, 0, 0)
    assert counts[SAME] == n_before - 1
    changed = next(r for r in result.rows if r.status == CHANGED)
    assert changed.before_text.startswith("add.f32") and changed.after_text.startswith("mul.f32")
    assert changed.before == changed.after
    added = next(r for r in result.rows if r.status == ADDED)
    assert added.before is None and added.after_text == "mov.f32 %f30, %f28"
    # rows after the added one are numbered one further in the second version
    tail = [r for r in result.rows if r.status == SAME and r.before is not None and r.before > added.after - 1]
    assert tail and all(r.after == r.before + 1 for r in tail)
    # every model is there with its difference in cycles and in %
    models = {m["model"]: m for m in result.model_records()}
    pipeline = models["pipeline"]
    assert pipeline["before_kernel_cycles"] == pytest.approx(before.models["pipeline"].kernel_cycles, abs=0.0501)
    assert pipeline["difference_cycles"] == pytest.approx(
        after.models["pipeline"].kernel_cycles - before.models["pipeline"].kernel_cycles, abs=0.1)
    shares = [r.before_share for r in result.rows if r.before_share is not None]
    assert sum(shares) == pytest.approx(1.0)


def test_an_edited_latency_marks_its_cells():
    row = 30
    before = _evaluate(HOTSPOT)
    after = _evaluate(HOTSPOT, lambda s: with_cell_edit(s, row, "lat_comp", 99.0))
    result = diff(before, after)
    marked = [r for r in result.rows if r.marked]
    assert [r.before for r in marked if r.status == SAME and "lat_comp" in r.changed_cells] == [row]
    assert all(r.status == SAME for r in result.rows)


def test_identical_versions_and_renames():
    same = diff(_evaluate(HOTSPOT), _evaluate(SAMPLES / "ptx" / "hotspot.sm_80.ptx"))
    assert not [r for r in same.rows if r.marked]
    assert all(m["difference_cycles"] == 0 for m in same.model_records() if m["difference_cycles"] is not None)
    steps = align(["add.s32 %r1, %r2, 1", "mul.lo.s32 %r3, %r1, 4", "ret"],
                  ["add.s32 %r7, %r8, 1", "shl.b32 %r9, %r7, 2", "ret"])
    assert [s for s, _, _ in steps] == [RENAMED, CHANGED, SAME]
    assert normalised("ld.param.u64  %rd1, [_Z1kPf_param_0];", "_Z1kPf") == "ld.param.u64 %rd1, [param_0]"


def test_cli_diff(tmp_path, capsys, versions):
    from engine.cli import main as cli_main
    from gui.render import QtRenderer

    out_csv, out_png = tmp_path / "d.csv", tmp_path / "d.png"
    mm = str(SAMPLES / "ptx" / "mm.sm_90.ptx")
    assert cli_main(["diff", mm, mm, "--launch", str(SAMPLES / "mm.launch.toml"), "--config", "case",
                     "--config-b", "tile16-1024", "--grid", "20,10", "--profile", "h100", "--json",
                     "--csv", str(out_csv), "--png", str(out_png)], renderer=QtRenderer()) == 0
    payload = json.loads(capsys.readouterr().out)
    assert "matrixMulTiled<32>" in payload["before"] and "matrixMulTiled<16>" in payload["after"]
    pipeline = next(m for m in payload["models"] if m["model"] == "pipeline")
    assert pipeline["difference_percent"] == pytest.approx(
        100 * pipeline["difference_cycles"] / pipeline["before_kernel_cycles"], abs=0.01)
    text = out_csv.read_text(encoding="utf-8").splitlines()
    assert text[0].startswith("# before: mm.sm_90.ptx [matrixMulTiled<32>]")
    rows = list(csv.DictReader(line for line in text if not line.startswith("# ")))
    assert len(rows) == len(payload["rows"]) and {r["status"] for r in rows} >= {SAME, RENAMED, CHANGED}
    from PySide6.QtGui import QImage

    image = QImage(str(out_png))
    assert (image.width(), image.height()) == (1600, 1000)
    assert "matrixMulTiled<32>" in image.text("Title")
