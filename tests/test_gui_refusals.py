"""Every editable cell of the window refuses non-finite and absurd values in place (issue 35): the
superstep tree's iterations and the launch inputs (grid, block, argument values, trip counts),
beside the BLOCK table's cells (tests/test_reliability_window.py). A refused value leaves the
state, the undo stack and the cell as they were, and says why (status bar; the tooltip of the
cell or field)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from engine.errors import WarplineError
from engine.launch import MAX_TRIP_COUNT
from engine.state import parse_count, with_iterations
from tests.test_gui_support import make_window, wait_complete

ABSURD_COUNTS = [("1e308", "too large"), ("inf", "not a finite number"), ("nan", "not a finite number"),
                 ("-1", "negative"), ("99999999999999999999999", "too large"), ("2.5", "not a whole number"),
                 ("many", "not a number")]


@pytest.fixture()
def window(qtbot, tmp_path, monkeypatch):
    return make_window(qtbot, tmp_path, monkeypatch)


def _unchanged(window, state, steps) -> bool:
    return window.session.state is state and window.session.undo_stack.count() == steps


@pytest.mark.parametrize(("text", "reason"), ABSURD_COUNTS)
def test_counts_follow_one_rule(text, reason):
    with pytest.raises(WarplineError, match=reason):
        parse_count(text, "count")
    assert parse_count(" 12 ", "count") == 12 and parse_count("1e3", "count") == 1000
    assert parse_count(str(MAX_TRIP_COUNT), "count") == MAX_TRIP_COUNT


def test_superstep_iterations_refuse_absurd_values_in_place(window, qtbot):
    view = window.superstep_view
    model = view.model_
    level1 = model.index(0, 5)
    assert level1.flags() & Qt.ItemFlag.ItemIsEditable
    state, steps, old = window.session.state, window.session.undo_stack.count(), level1.data()
    for text, reason in ABSURD_COUNTS:
        assert not model.setData(level1, text), text
        assert level1.data() == old and _unchanged(window, state, steps), text
        assert level1.data(Qt.ItemDataRole.ToolTipRole).startswith("Refused: L1 #1 iterations: "), text
        assert reason in level1.data(Qt.ItemDataRole.ToolTipRole), text
        assert reason in window.statusBar().currentMessage(), text
        assert level1.data(Qt.ItemDataRole.BackgroundRole) is not None
    with pytest.raises(WarplineError, match="too large"):
        with_iterations(state, 1, MAX_TRIP_COUNT + 1)      # the engine's own rule, for scripts
    # a sensible value goes through, and the flash ends
    assert model.setData(level1, "3")
    wait_complete(qtbot, window)
    assert window.session.state.overrides.iterations == {1: 3}
    qtbot.waitUntil(lambda: model.rejected is None, timeout=5000)


def test_launch_inputs_refuse_absurd_values_in_place(window):
    panel = window.inputs_panel
    state, steps = window.session.state, window.session.undo_stack.count()
    # grid and block: the field turns red and its tooltip says why
    for field, text in [("grid", "1e308"), ("grid", "inf,1,1"), ("block", "nan"), ("block", "-32"),
                        ("grid", "99999999999999999999")]:
        edit = getattr(panel, f"{field}_edit")
        edit.setText(text)
        edit.editingFinished.emit()
        assert _unchanged(window, state, steps), text
        assert edit.toolTip() and edit.toolTip() in window.statusBar().currentMessage(), text
        assert "background" in edit.styleSheet(), text
    # argument values: refused, and the cell shows the state's value again
    params = window.session.inputs.function.params
    row = next(i for i, p in enumerate(params) if p.type in ("s32", "u32"))
    old = panel.args_table.item(row, 2).text()
    for text in ["1e308", "inf", "nan", "-inf", "99999999999999999999999"]:
        panel.args_table.item(row, 2).setText(text)
        assert _unchanged(window, state, steps), text
        assert window.statusBar().currentMessage().startswith(f"argument {row}: "), text
        assert panel.args_table.item(row, 2).text() == old, text
    # trip counts: the count rule
    assert panel.loops_table.rowCount() > 0
    for text, reason in ABSURD_COUNTS:
        panel.loops_table.item(0, 3).setText(text)
        assert _unchanged(window, state, steps), text
        assert reason in window.statusBar().currentMessage(), text
        assert panel.loops_table.item(0, 3).text() != text
