"""Compare with a baseline (issue 15 I) and the explanations (H): a pinned result is drawn above
the current one on a shared cycle axis and compared model by model, stall cause by stall cause and
verdict by verdict; terms, columns and models explain themselves; Help › Quick start walks the
window."""

from __future__ import annotations

import html

import pytest
from PySide6.QtCore import Qt

from engine.evaluation.compare import compare
from engine.evaluation.registry import model as model_spec
from engine.evaluation.verdict import explain
from gui.glossary import TERMS
from gui.models.block_table import COLUMNS, KEYS
from tests.test_gui_support import make_window, wait_complete


@pytest.fixture()
def window(qtbot, tmp_path, monkeypatch):
    return make_window(qtbot, tmp_path, monkeypatch)


def test_pin_baseline_compare_and_clear(window, qtbot):
    base = window.session.result
    assert window.pin_baseline()
    panel = window.results_panel.compare
    assert window.results_panel.tabs.currentWidget() is panel
    model = window.block_view.model_
    row = next(k for k, r in enumerate(model.rows) if r.is_global_access and r.lat_comm > 0)
    model.setData(model.index(row, KEYS.index("lat_comm")), "4000")
    wait_complete(qtbot, window)
    current = window.session.result
    qtbot.waitUntil(lambda: panel.current is current, timeout=5000)
    rows = {(r.section, r.key): r for r in panel.rows}
    for model_id, result in current.models.items():
        r = rows[("model", model_id)]
        assert r.baseline == pytest.approx(base.models[model_id].kernel_cycles)
        assert r.current == pytest.approx(result.kernel_cycles)
    pipe = rows[("model", "pipeline")]
    assert pipe.difference == pytest.approx(current.models["pipeline"].kernel_cycles
                                            - base.models["pipeline"].kernel_cycles) and pipe.difference > 0
    verdict = rows[("bottleneck", "verdict")]
    assert verdict.baseline_text == explain(base).sentence and verdict.current_text == explain(current).sentence
    shares = {c.cause: c.share for c in explain(current).causes}
    assert rows[("warp-cycles", "memory_dependency")].current == pytest.approx(shares["memory_dependency"])
    # the table shows them, the change in per cent, more cycles in red
    table = panel.table
    k = [r.key for r in panel.rows].index("pipeline")
    assert table.item(k, 0).text() == model_spec("pipeline").title
    assert table.item(k, 4).text() == f"{100 * pipe.relative:+.1f} %"
    assert table.item(k, 3).foreground().color().name() == "#b00020"
    # the verdict sentences sit below the table, not in a column they would widen
    assert html.escape(explain(current).sentence) in panel.verdicts.text()
    assert table.rowCount() == len(panel.rows) - 1 and table.columnWidth(1) < 200
    # the chart: baseline above the current run, one cycle axis
    gantt = window.gantt
    assert gantt.baseline_box.isVisible() and gantt.baseline_view.trace is base.simulation.trace
    # after the edit both charts show the same cycles, the longer run whole
    assert gantt.baseline_view.x_range() == pytest.approx(gantt.view.x_range())
    assert gantt.view.x_range()[1] >= max(float(base.simulation.cycles), float(current.simulation.cycles))
    assert gantt.view.trace is current.simulation.trace
    gantt.view.plot.getViewBox().setXRange(500, 900, padding=0)
    assert gantt.baseline_view.x_range() == pytest.approx((500, 900))
    longest = max(float(base.simulation.cycles), float(current.simulation.cycles))
    gantt.view.fit()
    assert gantt.view.x_range()[1] >= longest
    window.baseline.clear()
    assert not gantt.baseline_box.isVisible() and panel.table.rowCount() == 0


def test_compare_rows_of_the_engine(window):
    result = window.session.result
    rows = compare(result, result)
    assert all(r.difference in (None, 0) for r in rows)
    assert [r.key for r in rows if r.section == "model"] == list(result.models)


def test_tooltips_for_models_columns_and_terms(window, qtbot):
    table = window.results_panel.table
    for k, model_id in enumerate(window.session.result.models):
        assert table.item(k, 0).toolTip().startswith(model_spec(model_id).explanation)
    model = window.block_view.model_
    for col, column in enumerate(COLUMNS):
        tip = model.headerData(col, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
        assert tip == column.tip and len(tip) > 10
    derivation = window.results_panel.derivation
    names = {derivation.item(k, 0).text(): derivation.item(k, 0).toolTip() for k in range(derivation.rowCount())}
    for term in ("rho", "tau", "mu", "K"):
        assert names[term].startswith(TERMS[term])
    for term in ("MWP-CWP", "WFG*", "τ", "ρ", "n_ma", "μ"):
        assert 20 < len(TERMS[term]) < 260 and TERMS[term].count(".") <= 3


def test_quick_start_tour_walks_the_window(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, open_sample=False)
    tour = window.quick_start()
    wait_complete(qtbot, window)
    assert window.session.inputs is not None and window.session.inputs.path.name == "hotspot.sm_90.ptx"
    seen = []
    for k in range(len(tour.steps)):
        tour.go(k)
        qtbot.wait(20)
        target = tour.target()
        assert target.isVisible(), tour.steps[k].title
        assert tour.outline.isVisible()
        top_left = target.mapTo(window, target.rect().topLeft())
        assert tour.outline.geometry().contains(top_left)
        seen.append(tour.heading.text())
    assert len(set(seen)) == len(tour.steps) >= 5
    assert tour.next.text() == "Done"
    tour.next.click()
    assert not tour.outline.isVisible()
