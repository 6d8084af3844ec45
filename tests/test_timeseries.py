"""Time series under the Gantt (issue 32, part 5): bytes per level, active warps and the stall
mix over simulated time, exact per bucket; drawn on the chart's time axis and exported with it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QImage

from engine.evaluation import Evaluator
from engine.evaluation.timeseries import CAUSES, LEVELS, time_series
from engine.inputs import resolve_inputs
from engine.timeline.activity import HEAT_CATEGORIES
from tests.test_gui_support import make_window, wait_complete

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.fixture(scope="module")
def copy_run():
    inputs = resolve_inputs(SAMPLES / "ptx" / "copy.sm_90.ptx", launch_file=SAMPLES / "copy.launch.toml",
                            profile="h100")
    return Evaluator().evaluate(inputs)


def test_series_add_up_whatever_the_buckets(copy_run):
    ev = copy_run
    coarse, fine = time_series(ev, 50), time_series(ev, 700)
    trace = ev.simulation.trace
    issued = np.bincount(trace.issues["instr"], minlength=len(ev.trace_names))
    expected_dram = sum(t.dram_bytes / t.requests * issued[i] for i, t in ev.traffic.accesses.items())
    for level in LEVELS:
        assert coarse.total_bytes(level) == pytest.approx(fine.total_bytes(level), rel=1e-9)
    assert fine.total_bytes("DRAM") == pytest.approx(expected_dram, rel=1e-9)
    # a copy streams DRAM near the profile's per-SM bandwidth, never far above it
    assert 0.5 * fine.peaks["DRAM"] < fine.bytes_per_cycle["DRAM"].max() < 1.5 * fine.peaks["DRAM"]
    # active warps: the resident warp-cycles of the trace over the run
    resident = len(trace.issues) + sum(float((s["end"] - s["start"]).sum()) for s in
                                       [trace.stalls[trace.stalls["cause"] == k]
                                        for k in range(5)])
    assert (coarse.active_warps * np.diff(coarse.edges)).sum() == pytest.approx(resident, rel=1e-6)
    active = coarse.active_warps > 0
    assert np.allclose(coarse.shares[active].sum(axis=1), 1.0)
    assert list(CAUSES) == [c for c in HEAT_CATEGORIES if c != "idle"]


def test_series_csv_says_what_it_is(copy_run, tmp_path):
    out = tmp_path / "series.csv"
    time_series(copy_run, 20).csv(str(out), ["file: copy.sm_90.ptx"])
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "# file: copy.sm_90.ptx" and lines[1].startswith("# one SM")
    assert lines[2].startswith("start,end,L1_bytes_per_cycle") and len(lines) == 3 + 20


@pytest.fixture()
def window(qtbot, tmp_path, monkeypatch):
    return make_window(qtbot, tmp_path, monkeypatch)


def test_window_series_follow_the_chart(window, qtbot, tmp_path):
    panel = window.gantt
    assert panel.series.computed == 0, "not computed while hidden"
    panel.show_series(True)
    qtbot.waitUntil(lambda: panel.series.series is not None, timeout=10_000)
    expected = time_series(window.session.result)
    assert np.allclose(panel.series.series.bytes_per_cycle["L2"], expected.bytes_per_cycle["L2"])
    # one time axis: zooming the chart zooms the series, a cycle at the same pixel column of both
    chart_vb, series_vb = panel.view.plot.getViewBox(), panel.series.throughput.getViewBox()
    chart_vb.setXRange(1000, 3000, padding=0)
    qtbot.wait(20)

    def column(vb, graphics, x: float) -> int:
        from PySide6.QtCore import QPointF

        point = graphics.mapFromScene(vb.mapViewToScene(QPointF(x, 0)))
        return graphics.mapTo(window, point).x()

    for x in (1200.0, 2800.0):
        assert abs(column(chart_vb, panel.view.graphics, x) - column(series_vb, panel.series.graphics, x)) <= 1
    # exported with the chart
    out = window.exports.timeline(tmp_path / "with-series.png", 1200, 1100)
    assert QImage(str(out)).height() == 1100
    panel.show_series(False)
    out2 = window.exports.timeline(tmp_path / "without.png", 1200, 1100)
    assert out2.stat().st_size != out.stat().st_size
    # an edit recomputes them once shown again
    computed = panel.series.computed
    window.block_view.model_.setData(window.block_view.model_.index(0, 2), "200")
    wait_complete(qtbot, window)
    panel.show_series(True)
    qtbot.waitUntil(lambda: panel.series.computed > computed, timeout=10_000)


def test_cli_export_with_series(tmp_path):
    from engine.cli import main as cli_main
    from gui.render import QtRenderer

    png, csv_out = tmp_path / "t.png", tmp_path / "t.csv"
    assert cli_main(["export", str(SAMPLES / "ptx" / "copy.sm_90.ptx"), "--launch", str(SAMPLES / "copy.launch.toml"),
                     "--profile", "h100", "--png", str(png), "--time-series", "--time-series-csv", str(csv_out),
                     "--buckets", "30"], renderer=QtRenderer()) == 0
    assert QImage(str(png)).height() == 900
    assert sum(1 for line in csv_out.read_text(encoding="utf-8").splitlines() if not line.startswith("#")) == 31
