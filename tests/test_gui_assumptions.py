"""The Assumptions tab on the real window: the guesses of numba's axpy, their effects, giving a
value in place (one undoable edit) and the marks that go away with the guess."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from engine.evaluation.caveats import MARK  # noqa: E402
from tests.test_gui_support import make_window, wait_complete  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
AXPY = ROOT / "tests" / "corpus" / "numba" / "axpy.cc90.lineinfo.ptx"
HOTSPOT = ROOT / "samples" / "ptx" / "hotspot.sm_90.ptx"


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    w = make_window(qtbot, tmp_path, monkeypatch, open_sample=False)
    assert w.open_file(AXPY)
    wait_complete(qtbot, w)
    return w


def _effects_in(qtbot, window) -> None:
    qtbot.waitUntil(lambda: window.session.result is not None and "assumptions" in window.session.result.parts,
                    timeout=120_000)


def test_the_tab_lists_each_guess_with_its_effect(window, qtbot):
    panel = window.results_panel.assumptions
    tabs = window.results_panel.tabs
    assert tabs.tabText(tabs.indexOf(panel)) == "Assumptions (3)"
    assert MARK in panel.summary.text()
    _effects_in(qtbot, window)
    cards = {card.assumption.kind: card for card in panel.card_widgets}
    assert set(cards) == {"argument", "layout", "launch"}
    assert "%" in cards["layout"].effect.text() and "kernel cycles" in cards["layout"].effect.text()
    assert cards["layout"].edit.text() == "4"                  # the value assumed, ready to give
    # the results table and the chart caption carry the mark
    table = window.results_panel.table
    assert table.item(0, 2).text().startswith(MARK)
    assert MARK in window.gantt.caption.text()


def test_giving_the_assumed_values_removes_the_guess_and_undo_brings_it_back(window, qtbot):
    panel = window.results_panel.assumptions
    session = window.session
    card = next(c for c in panel.card_widgets if c.assumption.kind == "layout")
    card.edit.setText("4")
    card.button.click()
    assert {6, 14, 21} <= {k for k in session.state.launch.args}
    wait_complete(qtbot, window)
    assert [c.assumption.kind for c in panel.card_widgets] == ["argument", "launch"]
    # the launch is given too: its guess goes, the launch becomes the user's
    card = next(c for c in panel.card_widgets if c.assumption.kind == "launch")
    card.edit.setText("1056 / 256")
    card.button.click()
    wait_complete(qtbot, window)
    card = next(c for c in panel.card_widgets if c.assumption.kind == "argument")
    card.edit.returnPressed.emit()
    wait_complete(qtbot, window)
    assert panel.card_widgets == [] and MARK not in window.results_panel.table.item(0, 2).text()
    assert "No assumptions" in panel.summary.text()
    session.undo_stack.undo()
    wait_complete(qtbot, window)
    assert [c.assumption.kind for c in panel.card_widgets] == ["argument"]


def test_a_refused_value_is_reported_and_changes_nothing(window, qtbot):
    panel = window.results_panel.assumptions
    messages: list[str] = []
    panel.message.connect(messages.append)
    state = window.session.state
    card = next(c for c in panel.card_widgets if c.assumption.kind == "layout")
    card.edit.setText("4, 4, four")
    card.button.click()
    assert messages and "'four' is not a number" in messages[-1]
    card.edit.setText("4, 4")
    card.button.click()
    assert "3 values wanted" in messages[-1]
    assert window.session.state == state


def test_a_sample_with_its_launch_file_has_no_assumptions(window, qtbot):
    assert window.open_file(HOTSPOT)
    wait_complete(qtbot, window)
    panel = window.results_panel.assumptions
    assert panel.card_widgets == [] and "No assumptions" in panel.summary.text()
    assert not window.results_panel.table.item(0, 2).text().startswith(MARK)
