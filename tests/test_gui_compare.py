"""Compare with a baseline (issue 15 I) and the explanations (H): a pinned result is drawn above
the current one on a shared cycle axis and compared model by model, stall cause by stall cause and
verdict by verdict; terms, columns and models explain themselves; Help › Quick start walks the
window."""

from __future__ import annotations

import html
import json
import shutil

import pytest
from PySide6.QtCore import QPoint, QRect, Qt

from engine.evaluation.compare import BaselineFigures, compare
from engine.evaluation.registry import model as model_spec
from engine.evaluation.verdict import explain
from gui.glossary import TERMS
from gui.models.block_table import COLUMNS, KEYS
from tests.test_gui_support import HOTSPOT, TIMEOUT_MS, make_window, wait_complete


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
    assert gantt.baseline_view.time_axis.x_range() == pytest.approx(gantt.view.time_axis.x_range())
    assert gantt.view.time_axis.x_range()[1] >= max(float(base.simulation.cycles), float(current.simulation.cycles))
    assert gantt.view.trace is current.simulation.trace
    gantt.view.plot.getViewBox().setXRange(500, 900, padding=0)
    assert gantt.baseline_view.time_axis.x_range() == pytest.approx((500, 900))
    longest = max(float(base.simulation.cycles), float(current.simulation.cycles))
    gantt.view.fit()
    assert gantt.view.time_axis.x_range()[1] >= longest
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


def test_every_column_of_every_table_explains_itself(window, qtbot):
    """Item 8: each column header of each table in the window (inputs, BLOCK table, supersteps,
    results, derivation, bottleneck, memory, compare, hot spots) has a tooltip of a sentence or two."""
    from PySide6.QtWidgets import QAbstractItemView, QTableView, QTreeView

    assert window.pin_baseline()
    results = window.results_panel
    for tab in range(results.tabs.count()):
        results.tabs.setCurrentIndex(tab)
        qtbot.wait(20)
    window.side_tabs.setCurrentWidget(window.source_panel)
    views = [v for v in window.findChildren(QAbstractItemView)
             if isinstance(v, (QTableView, QTreeView)) and v.model() is not None]
    assert {v.objectName() for v in views} >= {"argsTable", "loopsTable", "blockTable", "superstepTree",
                                              "predictionsTable", "derivationTable", "verdictTable",
                                              "memoryTable", "compareTable", "hotSpots"}
    for view in views:
        model = view.model()
        for column in range(model.columnCount()):
            title = model.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole)
            tip = model.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
            assert tip and 8 < len(tip) < 300 and tip.count(". ") <= 2, (view.objectName(), title, tip)


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
        # The outline follows its widget when the layout moves it (checked every 50 ms).
        qtbot.waitUntil(lambda t=target: tour.outline.geometry().contains(t.mapTo(window, t.rect().topLeft())),
                        timeout=2000)
        seen.append(tour.heading.text())
        # the whole text shows, however long the step's text is
        body = tour.body
        assert body.height() >= body.heightForWidth(body.width()) and tour.height() >= tour.sizeHint().height()
        # and the dialog stands where it hides as little of the outlined part as the window allows
        aim = QRect(target.mapToGlobal(QPoint(0, 0)), target.size())
        hidden = tour.frameGeometry().intersected(aim)
        assert hidden.width() * hidden.height() <= 0.5 * tour.width() * tour.height(), tour.steps[k].title
    assert len(set(seen)) == len(tour.steps) >= 5
    assert tour.next.text() == "Done"
    tour.next.click()
    assert not tour.outline.isVisible()


def _rows(rows):
    return [(r.section, r.key, r.baseline, r.current, r.baseline_text, r.current_text) for r in rows]


def _pin_then_edit(window, qtbot):
    """Pin the opened result, make one latency edit; returns (baseline, current, compare rows)."""
    base = window.session.result
    assert window.pin_baseline()
    model = window.block_view.model_
    row = next(k for k, r in enumerate(model.rows) if r.is_global_access and r.lat_comm > 0)
    model.setData(model.index(row, KEYS.index("lat_comm")), "4000")
    wait_complete(qtbot, window)
    current = window.session.result
    panel = window.results_panel.compare
    qtbot.waitUntil(lambda: panel.current is current and bool(panel.rows), timeout=5000)
    return base, current, _rows(panel.rows)


def test_baseline_kept_in_the_session_and_recomputed(window, qtbot, tmp_path, monkeypatch):
    base, current, shown = _pin_then_edit(window, qtbot)
    assert window.session.dirty
    path = window.session.save(tmp_path / "compare.warpline")
    raw = json.loads(path.read_text())
    assert raw["version"] == 2 and [b["label"] for b in raw["baselines"]] == [window.baseline.label]
    assert raw["baselines"][0]["figures"]["models"]["pipeline"] == base.models["pipeline"].kernel_cycles

    other = make_window(qtbot, tmp_path / "other", monkeypatch, open_sample=False)
    assert other.open_file(path)
    # at once, before any recomputation: the stored figures, the same comparison
    stored = other.baseline.shown
    assert isinstance(stored, BaselineFigures) and other.baseline.recomputing
    assert _rows(compare(stored, current)) == shown
    assert "stored figures" in other.gantt.baseline_caption.text()
    # recomputed (same PTX): a live result with its trace, the same figures
    qtbot.waitUntil(lambda: other.baseline.result is not None, timeout=TIMEOUT_MS)
    wait_complete(qtbot, other)
    again = other.session.result
    assert other.session.state == current.state and again.models["pipeline"].kernel_cycles == \
        current.models["pipeline"].kernel_cycles
    panel = other.results_panel.compare
    other.results_panel.tabs.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: panel.current is again and panel.baseline is other.baseline.result, timeout=5000)
    assert _rows(panel.rows) == shown
    assert "stored" not in panel.caption.text() and other.baseline.label in panel.caption.text()
    assert other.gantt.baseline_view.trace is other.baseline.result.simulation.trace
    assert not other.session.dirty        # restoring the baseline is not a change


def test_baseline_of_a_changed_ptx_keeps_its_stored_figures(qtbot, tmp_path, monkeypatch):
    ptx = tmp_path / "hotspot.sm_90.ptx"
    ptx.write_bytes(HOTSPOT.read_bytes())
    shutil.copy(HOTSPOT.with_name("hotspot.sm_90.ptxas.txt"), tmp_path)
    for launch in HOTSPOT.parent.parent.glob("hotspot*.launch.toml"):
        shutil.copy(launch, tmp_path)
    window = make_window(qtbot, tmp_path / "one", monkeypatch, open_sample=False)
    assert window.open_file(ptx)
    wait_complete(qtbot, window)
    base, current, shown = _pin_then_edit(window, qtbot)
    path = window.session.save(tmp_path / "compare.warpline")
    with ptx.open("a") as handle:
        handle.write("\n// edited after the baseline was pinned\n")
    other = make_window(qtbot, tmp_path / "two", monkeypatch, open_sample=False)
    assert other.open_file(path)
    assert not other.baseline.recomputing and other.baseline.result is None
    assert "not recomputed" in other.baseline.note and "changed" in other.baseline.note
    wait_complete(qtbot, other)
    panel = other.results_panel.compare
    other.results_panel.tabs.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: panel.current is other.session.result and bool(panel.rows), timeout=5000)
    figures = {r.key: r.baseline for r in panel.rows if r.section == "model"}
    assert figures == {m: r.kernel_cycles for m, r in base.models.items()}
    assert "stored figures, not recomputed" in panel.caption.text()
    assert "no trace" in other.gantt.baseline_caption.text() and not other.gantt.baseline_view.isVisible()
    # saved again, the stored figures stay as they were
    again = json.loads(other.session.save(tmp_path / "again.warpline").read_text())
    assert again["baselines"] == json.loads(path.read_text())["baselines"]


def test_a_bad_baseline_in_a_session_is_a_located_error(window, qtbot, tmp_path):
    _pin_then_edit(window, qtbot)
    path = window.session.save(tmp_path / "compare.warpline")
    data = json.loads(path.read_text())
    data["baselines"][0]["figures"]["shares"]["issuing"] = float("nan")
    path.write_text(json.dumps(data))
    before = window.session.state
    assert not window.open_file(path)
    text = window.banner.label.text()
    assert "session key 'baselines[0].figures.shares.issuing'" in text and "finite" in text
    assert "Traceback" not in text and window.session.state == before
