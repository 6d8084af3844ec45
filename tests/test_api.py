"""The Python API (issue 32, part 8): tables with the CSVs' columns and figures, what-ifs as new
kernels, refusals as WarplineError; docs/python.md's examples and docs/notebook.ipynb run as
written (offline, from the repository's root)."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

import engine.api as wl
from engine.errors import WarplineError
from engine.evaluation.prediction_report import PREDICTION_COLUMNS, predictions_csv
from engine.fileio import csv_unescape
from engine.timeline.csv_export import CSV_COLUMNS, export_trace_csv

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"


@pytest.fixture(scope="module")
def copy_kernel():
    return wl.open(SAMPLES / "ptx" / "copy.sm_90.ptx", profile="h100")


def test_tables_are_the_csvs(copy_kernel, tmp_path):
    k = copy_kernel
    table = k.predict()
    assert table.column_names == list(PREDICTION_COLUMNS)
    text = predictions_csv(k.evaluate())
    rows = list(csv.DictReader(io.StringIO(text)))
    for row, record in zip(rows, table.to_pylist(), strict=True):
        for column in PREDICTION_COLUMNS:
            value = record[column]
            cell = csv_unescape(row[column])
            assert cell == ("" if value in (None, "") else str(value)) or float(cell) == pytest.approx(value)
    events = k.trace()
    assert events.column_names == list(CSV_COLUMNS)
    ev = k.evaluate(trace=True, models=["pipeline"])
    path = tmp_path / "t.csv"
    export_trace_csv(ev.simulation.trace, path, ev.trace_names, ev.trace_units)
    written = list(csv.DictReader(path.read_text(encoding="utf-8").splitlines()))
    assert len(written) == events.num_rows
    for k_row in (0, events.num_rows // 2, events.num_rows - 1):
        record, row = events.slice(k_row, 1).to_pylist()[0], written[k_row]
        for column in ("kind", "warp", "instruction", "held_by", "cause"):
            assert row[column] == ("" if record[column] is None else str(record[column]))
        assert float(row["start"]) == pytest.approx(record["start"])


def test_what_if_kernels_are_new_kernels(copy_kernel):
    k = copy_kernel
    row = next(r["instruction"] for r in k.trace().to_pylist() if r["kind"] == "issue"
               and r["name"].startswith("ld.global"))
    slow = k.edit(row, "lat_comm", 5000)
    assert k.state.overrides.is_empty() and not slow.state.overrides.is_empty()

    def cycles(kernel: wl.Kernel) -> float:
        return next(r for r in kernel.predict(["pipeline"]).to_pylist())["kernel_cycles"]

    assert cycles(slow) > cycles(k)
    assert k.with_occupancy(1).state.occupancy == 1
    with pytest.raises(WarplineError, match="negative"):
        k.edit(row, "lat_comm", -1)
    with pytest.raises(WarplineError, match="occupancy"):
        k.with_occupancy(0)
    with pytest.raises(WarplineError):
        wl.open(SAMPLES / "ptx" / "copy.sm_90.ptx", kernel="no_such_kernel")
    with pytest.raises(WarplineError, match="renderer"):
        k.roofline_image("x.png", renderer=None)


def _python_blocks(markdown: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", markdown, flags=re.S)


def test_the_documents_examples_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    blocks = _python_blocks((ROOT / "docs" / "python.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 6
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "docs/python.md", "exec"), namespace)   # noqa: S102 - the documentation's own code
    assert namespace["rows"].num_rows == 4 * 2 * 2          # 4 launches x 2 profiles x 2 models
    assert namespace["stalls"].num_rows > 0 and set(namespace["stalls"]["kind"].to_pylist()) == {"stall"}
    assert sorted(namespace["out"].iterdir()) and namespace["ranked"].num_rows > 5


def test_the_notebook_runs():
    notebook = json.loads((ROOT / "docs" / "notebook.ipynb").read_text(encoding="utf-8"))
    cells = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
    assert len(cells) >= 6
    namespace: dict = {}
    import os

    here = os.getcwd()
    os.chdir(ROOT)
    try:
        last = None
        for number, source in enumerate(cells, 1):
            *body, tail = source.rstrip().splitlines()
            exec(compile("\n".join(body), f"notebook cell {number}", "exec"), namespace)   # noqa: S102
            last = eval(compile(tail, f"notebook cell {number}", "eval"), namespace)       # noqa: S307
    finally:
        os.chdir(here)
    loads, before, after = namespace["loads"], namespace["before"], namespace["after"]
    assert loads and after > before
    assert last[1] is True                                 # the picture was written
    assert namespace["ranked"][0]["rank"] == 1
