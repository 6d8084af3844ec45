"""The window stays usable and truthful with hostile or large inputs (issue 14, GUI side):

* a PTX file opens off the UI thread: its kernels are listed (and the chooser shown) before any
  kernel is parsed, the event loop keeps running while the chosen kernel is parsed and resolved,
  and Cancel (the status-bar button or Esc) leaves the open session exactly as it was; errors
  are shown as the blocking ``open_file`` shows them;
* an Nsight Compute CSV whose cycles are 0, negative, inf or NaN is refused with its file, row
  and column, in the window's banner, and nothing is imported;
* a BLOCK-table cell (latencies included) typed as 1e308, inf, -inf, nan, a negative number or
  text is refused in the editor (the cell keeps its value), and the engine refuses such
  overrides on its own with a ModelError, never an infinite or NaN prediction.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QAbstractItemView, QApplication, QLineEdit

import gui.loader as loader_module
import gui.main_window as main_window_module
from engine.errors import ModelError, TableFormatError, WarplineError
from engine.evaluation import evaluate, state_for
from engine.inputs import resolve_inputs
from engine.manybsp import Overrides
from engine.ncu import load_ncu_csv, measured_cycles
from engine.state import parse_cell_value, with_cell_edit
from gui.models.block_table import KEYS
from tests import ptx_gen
from tests.test_gui_support import HOTSPOT, drop_file, make_window, wait_complete

LIBRARY_KERNELS = 6


@pytest.fixture()
def window(qtbot, tmp_path, monkeypatch):
    return make_window(qtbot, tmp_path, monkeypatch)


@pytest.fixture()
def library(tmp_path) -> Path:
    """A multi-kernel file with no launch file beside it: opening it asks which kernel."""
    path = tmp_path / "lib" / "library.ptx"
    path.parent.mkdir()
    path.write_text(ptx_gen.library(kernels=LIBRARY_KERNELS, instructions=60, funcs=2))
    return path


class Gate:
    """Holds the loader's parse of one kernel (in its thread) until the test releases it."""

    def __init__(self, monkeypatch) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.returned = threading.Event()
        self.parsed: list[str] = []
        real = loader_module.parse_kernel

        def parse(data, name, filename, progress=None):
            self.parsed.append(name)
            self.entered.set()
            assert self.release.wait(60)
            try:
                return real(data, name, filename, progress)
            finally:
                self.returned.set()

        monkeypatch.setattr(loader_module, "parse_kernel", parse)


def test_async_open_lists_kernels_first_and_keeps_the_window_responsive(window, qtbot, library, monkeypatch):
    gate = Gate(monkeypatch)
    before_inputs, before_state = window.session.inputs, window.session.state
    offered: list[list[str]] = []
    seen_when_asked = []

    def choose(names):
        offered.append(names)
        # the list comes before any kernel is parsed, and the open session is untouched
        seen_when_asked.append((list(gate.parsed), window.session.inputs is before_inputs))
        return names[2]

    monkeypatch.setattr(window, "choose_kernel", choose)
    request = window.open_file_async(library)
    # the call returns at once: nothing has changed yet
    assert request is not None and window.session.loading and window.session.inputs is before_inputs
    qtbot.waitUntil(lambda: bool(offered), timeout=30_000)
    assert len(offered[0]) == LIBRARY_KERNELS and seen_when_asked == [([], True)]
    # the chosen kernel is being parsed in the loader's thread (held there by the gate) ...
    qtbot.waitUntil(gate.entered.is_set, timeout=30_000)
    assert gate.parsed == [offered[0][2]]
    # ... while the event loop runs: a timer fires, the status bar shows the step and Cancel
    fired = []
    QTimer.singleShot(0, lambda: fired.append(True))
    qtbot.waitUntil(lambda: bool(fired), timeout=10_000)
    assert window.load_status.isVisible() and window.load_status.cancel.isVisible()
    assert "Parsing" in window.load_status.label.text() and "library.ptx" in window.load_status.label.text()
    assert window.session.inputs is before_inputs and window.session.state is before_state
    gate.release.set()
    wait_complete(qtbot, window)
    assert window.session.state.kernel == offered[0][2] and window.session.inputs.path == library
    assert not window.load_status.isVisible() and "library.ptx" in window.windowTitle()
    combo = window.inputs_panel.kernel_combo
    assert [combo.itemData(i) for i in range(combo.count())] == offered[0]
    assert str(library.resolve()) in window.recent.entries()
    assert window.session.result.models["pipeline"].sm_cycles > 0


@pytest.mark.parametrize("how", ["button", "escape"])
def test_cancel_keeps_the_previous_session(window, qtbot, library, monkeypatch, how):
    gate = Gate(monkeypatch)
    monkeypatch.setattr(window, "choose_kernel", lambda names: names[1])
    session = window.session
    inputs, state, result, title = session.inputs, session.state, session.result, window.windowTitle()
    window.open_file_async(library)
    qtbot.waitUntil(gate.entered.is_set, timeout=30_000)
    if how == "button":
        qtbot.mouseClick(window.load_status.cancel, Qt.MouseButton.LeftButton)
    else:
        window.activateWindow()
        qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=10_000)
        qtbot.keyClick(window.block_view, Qt.Key.Key_Escape)
    assert not session.loading and not window.load_status.isVisible()
    assert "Cancelled opening library.ptx" in window.statusBar().currentMessage()
    # the parse that was under way finishes in its thread; what it delivers is dropped
    gate.release.set()
    assert gate.returned.wait(60)
    qtbot.waitUntil(lambda: not any(t.name == "warpline-open" for t in threading.enumerate()), timeout=30_000)
    session.loader._drain()
    assert session.inputs is inputs and session.state is state and session.result is result
    assert window.windowTitle() == title and not session.dirty
    assert str(library.resolve()) not in window.recent.entries()
    # Esc belongs to the editors again once nothing loads
    assert not window.load_status.cancel_key.isEnabled()


def test_async_open_errors_are_shown_and_keep_the_session(window, qtbot, tmp_path):
    state, inputs = window.session.state, window.session.inputs
    bad = tmp_path / "bad.ptx"
    text = HOTSPOT.read_text().splitlines()
    text[60] = "    add.f32 %f1, %f2,, ;;; garbage here"
    bad.write_text("\n".join(text))
    outcome = []
    window.open_file_async(bad, on_done=outcome.append)
    qtbot.waitUntil(lambda: bool(outcome), timeout=30_000)
    assert outcome == [False]
    shown = window.banner.label.text()
    assert not window.banner.isHidden() and "bad.ptx" in shown and "line 61" in shown and "column" in shown
    # a WarplineError (no kernel at all) is shown the same way
    empty = tmp_path / "empty.ptx"
    empty.write_text(".version 8.0\n.target sm_90\n.address_size 64\n")
    window.open_file_async(empty, on_done=outcome.append)
    qtbot.waitUntil(lambda: len(outcome) == 2, timeout=30_000)
    assert outcome[1] is False and "Cannot open empty.ptx" in window.banner.label.text()
    assert "defines no kernel" in window.banner.label.text()
    assert window.session.state is state and window.session.inputs is inputs


def test_drop_recent_and_open_dialog_load_in_the_background(window, qtbot, library, monkeypatch):
    monkeypatch.setattr(window, "choose_kernel", lambda names: names[-1])
    assert drop_file(window, library)
    assert window.session.loading                  # the drop returned before the file was parsed
    wait_complete(qtbot, window)
    assert window.session.inputs.path == library
    # File › Open recent
    recent = next(a for a in window.recent_menu.actions() if a.text() == str(HOTSPOT.resolve()))
    recent.trigger()
    assert window.session.loading
    wait_complete(qtbot, window)
    assert window.session.inputs.path.resolve() == HOTSPOT.resolve()
    # File › Open
    class Dialog:           # the window's QFileDialog (PySide's own class is left alone)
        getOpenFileName = staticmethod(lambda *a, **k: (str(library), ""))

    monkeypatch.setattr(main_window_module, "QFileDialog", Dialog)
    window.open_dialog()
    assert window.session.loading
    wait_complete(qtbot, window)
    assert window.session.inputs.path == library and window.session.state.kernel.endswith("ILi5EEvPfS0_i")


def test_blocking_open_file_parses_only_the_chosen_kernel(window, qtbot, library, monkeypatch):
    parsed = []
    real = loader_module.parse_kernel
    monkeypatch.setattr(loader_module, "parse_kernel",
                        lambda data, name, file, *rest: parsed.append(name) or real(data, name, file, *rest))
    monkeypatch.setattr(window, "choose_kernel", lambda names: names[3])
    assert window.open_file(library)                # returns with the kernel open
    assert not window.session.loading and window.session.state.kernel == parsed[0]
    assert [k.name for k in window.session.inputs.module.kernels] == parsed
    assert len(window.session.kernel_names) == LIBRARY_KERNELS
    wait_complete(qtbot, window)


def test_kernel_chooser_lists_demangled_names_and_returns_the_mangled_one(window, monkeypatch):
    shown = {}
    make = window.kernel_picker

    def picker(names, summaries=()):
        dialog = make(names, summaries)
        shown["items"] = [dialog.table.item(k, 0).text() for k in range(dialog.table.rowCount())]
        shown["label"] = dialog.label.text()
        dialog.filter.setText("kernel<1>")          # typed into the filter box, then Open
        monkeypatch.setattr(dialog, "exec", lambda: dialog.DialogCode.Accepted)
        return dialog

    monkeypatch.setattr(window, "kernel_picker", picker)
    names = ["_Z14library_kernelILi0EEvPfS0_i", "_Z14library_kernelILi1EEvPfS0_i"]
    assert window.choose_kernel(names) == names[1]
    assert shown["items"][1].startswith("library_kernel<1>(") and "2 kernels" in shown["label"]


# ---------------------------------------------------------------------------- Nsight Compute

NCU_HEADER = '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'


def test_ncu_import_with_bad_cycles_is_refused_in_the_window(window, tmp_path):
    state = window.session.state
    for k, cell in enumerate(["0", "-5", "inf", "-inf", "nan", "NaN", "lots"]):
        path = tmp_path / f"ncu{k}.csv"
        path.write_text("==PROF== Connected to process 1\n" + NCU_HEADER
                        + '"0","calculate_temp(int)","gpc__cycles_elapsed.max","cycle","12,000"\n'
                        + f'"1","calculate_temp(int)","gpc__cycles_elapsed.max","cycle","{cell}"\n')
        window.banner.hide()
        window.results_panel.import_ncu(str(path))
        shown = window.banner.label.text()
        assert not window.banner.isHidden(), cell
        # file, row (the line of the file), column and the reason, on one line
        assert f"{path}: row 4, column 'Metric Value'" in shown and "is not a positive number of cycles" in shown, cell
        assert "\n" not in shown and "Traceback" not in shown, cell
        assert window.session.state is state and window.session.state.measured_cycles is None, cell


def test_ncu_reader_locates_bad_cycles_in_both_layouts(tmp_path):
    raw = tmp_path / "raw.csv"
    raw.write_text('"ID","Kernel Name","Block Size","Grid Size","gpc__cycles_elapsed.max"\n'
                   '"","","","","cycle"\n'
                   '"0","k(int)","(32, 1, 1)","(1, 1, 1)","inf"\n')
    with pytest.raises(TableFormatError, match=r"raw\.csv: row 3, column 'gpc__cycles_elapsed\.max'"):
        load_ncu_csv(raw)
    with pytest.raises(TableFormatError, match="is not a positive number of cycles"):
        measured_cycles(raw, "k")
    fine = tmp_path / "fine.csv"
    fine.write_text(NCU_HEADER + '"0","k(int)","gpc__cycles_elapsed.max","cycle","n/a"\n'
                    + '"1","k(int)","gpc__cycles_elapsed.max","cycle","1,500"\n')
    assert measured_cycles(fine, "k") == 1500      # n/a: a launch without the metric, not an error


# ---------------------------------------------------------------------------- BLOCK table

def _cell(window, instruction: int, key: str):
    model = window.block_view.model_
    return model.index(model.row_of_instruction(instruction), KEYS.index(key))


def _global_load(window) -> int:
    return next(r.index for r in window.session.result.manybsp.rows if r.is_global_access and r.lat_comm > 0)


BAD_CELLS = [("lat_comm", "1e308", "too large"), ("lat_comm", "inf", "finite"), ("lat_comm", "-inf", "finite"),
             ("lat_comm", "nan", "finite"), ("lat_comp", "-3", "negative"), ("lat_comp", "fast", "not a number"),
             ("comm", "1e308", "too large"), ("fu1", "1e308+1", "too large"), ("fu4", "inf+1", "finite"),
             ("issue", "nan", "finite"), ("sync", "1e308", "too large"), ("n_ma", "1e308", "too large")]


def test_block_cells_are_refused_in_the_editor(window, qtbot):
    row = _global_load(window)
    view = window.block_view
    state, steps = window.session.state, window.session.undo_stack.count()
    for key, text, reason in BAD_CELLS:
        case = f"{key}={text}"
        index = _cell(window, row, key)
        old = index.data()
        view.setCurrentIndex(index)
        view.edit(index)
        qtbot.waitUntil(lambda: view.state() == QAbstractItemView.State.EditingState, timeout=10_000)
        editor = view.indexWidget(index)               # this cell's editor (an earlier one may linger)
        assert isinstance(editor, QLineEdit), case
        editor.setText(text)
        qtbot.keyClick(editor, Qt.Key.Key_Return)      # commits through the model's setData (queued)
        qtbot.waitUntil(lambda: view.state() != QAbstractItemView.State.EditingState, timeout=10_000)
        assert reason in window.statusBar().currentMessage(), case
        assert reason in index.data(Qt.ItemDataRole.ToolTipRole), case
        assert index.data() == old, case               # the table keeps its value
        assert window.session.state is state and window.session.undo_stack.count() == steps, case
        assert not window.session.worker.busy, case
    assert all(r.sm_cycles is None or math.isfinite(r.sm_cycles) for r in window.session.result.models.values())


@pytest.mark.parametrize("text", ["1e308", "inf", "-inf", "nan", "-1", "abc", "1e10"])
def test_cell_values_are_checked_by_the_engine_rule(text):
    with pytest.raises(WarplineError):
        parse_cell_value("lat_comm", text)
    assert parse_cell_value("lat_comm", "1e9") == 1e9


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan"), 1e308, -1.0])
def test_engine_refuses_non_finite_or_absurd_overrides(value):
    inputs = resolve_inputs(HOTSPOT, use_ptxas=False)
    state = state_for(inputs)
    with pytest.raises(WarplineError):
        with_cell_edit(state, 47, "lat_comm", value)
    # Overrides that bypass the edit rules (a script, an old session) meet the models' own checks.
    from engine.analysis import analyze_kernel
    from engine.manybsp import manybsp_inputs, run_manybsp

    analysis = analyze_kernel(inputs.function, inputs.launch, inputs.module)
    rows, specs, _warnings, params = manybsp_inputs(analysis, inputs.profile, inputs.launch, inputs.resources)
    for overrides in (Overrides(latencies={47: {"lat_comm": value}}), Overrides(block_cells={(47, "comm"): value}),
                      Overrides(block_cells={(47, "fu1"): f"{value:f}+1"}), Overrides(n_ma={47: value})):
        with pytest.raises(ModelError):
            run_manybsp(rows, params, specs, overrides)
    from dataclasses import replace

    broken = replace(state, overrides=Overrides(latencies={47: {"lat_comm": value}}))
    ev = evaluate(inputs, broken, sweep=False)
    assert "Many-BSP" in ev.errors and "simulation" in ev.errors
    assert all(r.sm_cycles is None or math.isfinite(r.sm_cycles) for r in ev.models.values())
