"""The window's Bottleneck tab and hot spots (issue 15 F, G): the verdict shown is the engine's,
read when the tab is on screen; the BLOCK table's heat column and the Source tab's hot-spot table
add up to the run and sort; picking a hot spot selects its instructions."""

from __future__ import annotations

import html

import pytest
from PySide6.QtCore import Qt

from engine.evaluation.hotspots import hotspots
from engine.evaluation.verdict import explain
from gui.models.block_table import KEYS
from tests.test_gui_support import make_window, wait_complete


@pytest.fixture()
def window(qtbot, tmp_path, monkeypatch):
    return make_window(qtbot, tmp_path, monkeypatch)


def test_bottleneck_tab_shows_the_engines_verdict(window, qtbot):
    panel = window.results_panel
    window.results_dock.show()
    window.results_dock.raise_()
    panel.tabs.setCurrentWidget(panel.plot_widget)
    assert panel.verdict.verdict is None, "not read while the tab is hidden"
    panel.tabs.setCurrentWidget(panel.verdict)
    qtbot.waitUntil(lambda: panel.verdict.verdict is not None, timeout=5000)
    expected = explain(window.session.result)
    assert panel.verdict.verdict == expected
    assert html.escape(expected.sentence) in panel.verdict.sentence.text()
    table = panel.verdict.table
    texts = [table.item(k, 0).text() for k in range(table.rowCount())]
    assert texts[: len(expected.units)] == [f"{u.title} busy" for u in expected.units]
    utilisation = [table.item(k, 2).text() for k in range(len(expected.units))]
    assert utilisation == [f"{u.utilisation:.1%}" for u in expected.units]
    # an edit refreshes it while shown
    model = window.block_view.model_
    row = next(k for k, r in enumerate(model.rows) if r.is_global_access and r.lat_comm > 0)
    model.setData(model.index(row, KEYS.index("lat_comm")), "3000")
    wait_complete(qtbot, window)
    assert panel.verdict.verdict == explain(window.session.result) != expected


def test_heat_column_sums_to_the_run_and_sorts(window, qtbot):
    table = window.block_view
    model = table.model_
    hot = hotspots(window.session.result)
    column = KEYS.index("heat")
    shares = [model.heat_share(r.index) for r in model.rows]
    assert sum(shares) == pytest.approx(1.0)
    assert sum(sum(model.heat_of(r.index)) for r in model.rows) == pytest.approx(hot.total)
    hottest = max(model.rows, key=lambda r: model.heat_share(r.index)).index
    table.sortByColumn(column, Qt.SortOrder.DescendingOrder)
    assert model.rows[0].index == hottest
    assert model.data(model.index(0, column)) == f"{100 * model.heat_share(hottest):.1f} %"
    # an edit on a sorted table still reaches its instruction
    row = next(k for k, r in enumerate(model.rows) if r.is_global_access and r.lat_comm > 0)
    number = model.rows[row].index
    model.setData(model.index(row, KEYS.index("lat_comm")), "2500")
    wait_complete(qtbot, window)
    assert float(model.text(model.row_of_instruction(number), "lat_comm")) == 2500
    table.sortByColumn(KEYS.index("inst"), Qt.SortOrder.AscendingOrder)
    assert [r.index for r in model.rows] == sorted(r.index for r in model.rows)


def test_hot_spot_table_and_pick(window, qtbot):
    window.side_tabs.setCurrentWidget(window.source_panel)
    panel = window.source_panel
    qtbot.waitUntil(lambda: panel.hot is not None, timeout=5000)
    hot = hotspots(window.session.result)
    table = panel.hot_table
    assert table.rowCount() == len(hot.ptx_lines) + len(hot.cuda_lines)
    ptx_rows = [k for k in range(table.rowCount()) if table.item(k, 0).text().startswith("PTX ")]
    total = sum(table.item(k, 1).value for k in ptx_rows)
    assert total == pytest.approx(1.0)
    values = [table.item(k, 1).value for k in range(table.rowCount())]
    assert values == sorted(values, reverse=True)
    # the gutters colour the hottest line at full strength
    assert panel.ptx.heat[hot.ptx_lines[0].line] == pytest.approx(1.0)
    assert any(view.heat for view in panel.cuda.values())
    table.selectRow(ptx_rows[0])
    picked = list(table.item(ptx_rows[0], 0).data(Qt.ItemDataRole.UserRole))
    assert window.block_view.model_.highlighted == set(picked)
    assert window.gantt.view.highlighted_instructions == {i - 1 for i in picked}
