"""The desktop window, driven like a user would (pytest-qt, offscreen): open the hotspot sample,
edit cells, move the occupancy, undo, export, break things, save and reopen."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QImage

import engine.inputs as inputs_module
import gui.loader as loader_module
from engine.session_file import load_session
from gui.models.block_table import KEYS
from tests.test_gui_support import HOTSPOT, ROOT, cycles, drop_file, make_window, wait_complete


@pytest.fixture()
def window(qtbot, tmp_path, monkeypatch):
    return make_window(qtbot, tmp_path, monkeypatch)


def cell(window, instruction: int, key: str):
    model = window.block_view.model_
    return model.index(model.row_of_instruction(instruction), KEYS.index(key))


def global_load(window) -> int:
    return next(r.index for r in window.session.result.manybsp.rows if r.is_global_access and r.lat_comm > 0)


def test_opens_hotspot_with_real_tables_results_and_gantt(window):
    result = window.session.result
    inputs = window.session.inputs
    assert window.windowTitle().startswith("Warpline — hotspot.sm_90.ptx [calculate_temp(int, float*")
    model = window.block_view.model_
    assert model.rowCount() == len(inputs.function.instructions) == len(result.manybsp.block)
    # Instruction text, PTX line and CUDA line columns come from the parsed file.
    first = inputs.function.instructions[0]
    # The text, with the kernel's name dropped from parameter symbols; the tooltip keeps it whole.
    assert model.data(model.index(0, KEYS.index("text"))) == first.text.replace(
        f"{inputs.kernel_name}_param_", "param_")
    assert model.data(model.index(0, KEYS.index("text")), Qt.ItemDataRole.ToolTipRole) == first.text
    assert model.data(model.index(0, KEYS.index("ptx_line"))) == str(first.location.line)
    assert model.data(model.index(0, KEYS.index("cuda_line"))).startswith("hotspot.cu:")
    tree = window.superstep_view.model_
    assert tree.rowCount() == len(result.manybsp.level1) > 1
    assert tree.rowCount(tree.index(0, 0)) == len(result.manybsp.level1[0].children)
    many, sim = cycles(window)
    launch = result.profile.device.kernel_launch_cycles
    assert many == result.manybsp.kernel_exec_cycle + launch > 0 and sim == float(result.simulation.cycles) + launch
    table = window.results_panel.table
    # SM cycles, then kernel cycles with the launch cost: the figures `predict` prints
    assert table.item(0, 0).text() == "Many-BSP" and table.item(0, 1).text() == f"{many - launch:,.0f}"
    assert table.item(0, 2).text() == f"{many:,.0f}"
    assert f"{launch:,.0f} launch cost" in window.results_panel.headline.text()
    assert window.results_panel.derivation.rowCount() == len(result.manybsp.prediction.quantities)
    assert set(window.results_panel.curves) == set(result.sweep.figures) >= {"manybsp", "pipeline"}
    view = window.gantt.view
    assert view.trace is result.simulation.trace and len(view.trace.issues) > 0
    assert window.inputs_panel.loops_table.rowCount() == len(result.analysis.loop_info)
    assert window.inputs_panel.args_table.rowCount() == len(inputs.function.params)


def test_latency_edit_changes_cycles_and_gantt_and_undo_restores(window, qtbot):
    many0, sim0 = cycles(window)
    redraws = window.gantt.redraws
    trace0 = window.gantt.view.trace
    row = global_load(window)
    index = cell(window, row, "lat_comm")
    old = float(index.data())
    assert window.block_view.model_.setData(index, str(old * 5))
    wait_complete(qtbot, window)
    many1, sim1 = cycles(window)
    assert many1 > many0 and sim1 > sim0
    assert window.gantt.redraws > redraws and window.gantt.view.trace is not trace0
    assert window.gantt.shown_cycles == window.session.result.models["pipeline"].sm_cycles
    index = cell(window, row, "lat_comm")
    assert index.data() == f"{old * 5:g}"
    assert isinstance(index.data(Qt.ItemDataRole.FontRole), QFont) and index.data(Qt.ItemDataRole.FontRole).bold()
    assert window.windowTitle().endswith("*")

    window.undo_action.trigger()
    wait_complete(qtbot, window)
    assert cycles(window) == (many0, sim0)
    assert window.gantt.shown_cycles == window.session.result.models["pipeline"].sm_cycles
    assert cell(window, row, "lat_comm").data(Qt.ItemDataRole.FontRole) is None
    window.redo_action.trigger()
    wait_complete(qtbot, window)
    assert cycles(window) == (many1, sim1)


@pytest.mark.parametrize("text, reason", [("-5", "negative"), ("abc", "not a number")])
def test_invalid_cell_value_is_refused_with_reason(window, text, reason):
    state = window.session.state
    steps = window.session.undo_stack.count()
    index = cell(window, global_load(window), "lat_comm")
    assert not window.block_view.model_.setData(index, text)
    assert reason in window.statusBar().currentMessage()
    assert reason in index.data(Qt.ItemDataRole.ToolTipRole)
    assert index.data(Qt.ItemDataRole.BackgroundRole).color().red() == 255   # red flash
    assert window.session.state == state and window.session.undo_stack.count() == steps


def test_reset_override_from_computed_value(window, qtbot):
    many0, _ = cycles(window)
    row = global_load(window)
    window.block_view.model_.setData(cell(window, row, "lat_comm"), "3000")
    wait_complete(qtbot, window)
    assert cycles(window)[0] != many0
    from engine.state import with_cell_edit

    window.session.apply(with_cell_edit(window.session.state, row, "lat_comm", None, reset=True), "reset")
    wait_complete(qtbot, window)
    assert cycles(window)[0] == many0 and not window.session.state.overrides.latencies


def test_occupancy_slider_drag_redraws_gantt_and_is_one_undo_step(window, qtbot):
    control = window.inputs_panel.occupancy
    start_blocks = window.session.result.resident_blocks
    assert control.slider.maximum() == window.session.result.max_blocks == start_blocks > 2
    assert "limited by" in control.limit_label.text()
    redraws = window.gantt.redraws
    _, sim0 = cycles(window)
    steps = window.session.undo_stack.count()
    control.slider.setSliderDown(True)          # press: a drag starts
    for value in (start_blocks - 1, 3, 2):
        control.slider.setValue(value)
    control.slider.setSliderDown(False)         # release
    assert window.session.undo_stack.count() == steps + 1
    wait_complete(qtbot, window)
    result = window.session.result
    assert result.resident_blocks == 2 and result.description.resident_blocks == 2
    assert window.gantt.redraws > redraws and cycles(window)[1] > sim0
    assert window.results_panel.marker.value() == 2
    window.undo_action.trigger()
    wait_complete(qtbot, window)
    assert window.session.state.occupancy is None and cycles(window)[1] == sim0
    assert control.spin.value() == start_blocks


def test_superstep_selection_highlights_rows_and_timeline(window, qtbot):
    tree = window.superstep_view
    index = tree.model_.index(1, 0)
    node = tree.model_.node(index)
    tree.setCurrentIndex(index)
    assert window.block_view.model_.highlighted == set(range(node.start, node.end + 1))
    assert window.gantt.view.highlighted_instructions == frozenset(range(node.start - 1, node.end))
    assert window.gantt.view.highlighted_range() is not None
    selected = window.block_view.selectionModel().selectedRows()
    assert [window.block_view.model_.rows[i.row()].index for i in selected] == [node.start]
    # A recomputation redraws the Gantt; the selection stays outlined on the new trace.
    trace = window.gantt.view.trace
    window.block_view.model_.setData(cell(window, global_load(window), "lat_comm"), "2222")
    wait_complete(qtbot, window)
    assert window.gantt.view.trace is not trace
    assert window.gantt.view.highlighted_instructions == frozenset(range(node.start - 1, node.end))


def test_level1_iterations_edit_is_undoable(window, qtbot):
    model = window.superstep_view.model_
    many0, _ = cycles(window)
    index = model.index(0, 5)
    assert model.flags(index) & Qt.ItemFlag.ItemIsEditable
    assert not model.setData(index, "-2")
    assert model.setData(index, "40")
    wait_complete(qtbot, window)
    assert window.session.state.overrides.iterations == {1: 40} and cycles(window)[0] > many0
    assert model.index(0, 5).data() == "40"
    window.undo_action.trigger()
    wait_complete(qtbot, window)
    assert cycles(window)[0] == many0


def test_gantt_click_selects_instruction_row_and_source_lines(window):
    window.gantt.view.instructionClicked.emit(49)       # 0-based instruction of the trace
    selected = window.block_view.selectionModel().selectedRows()
    rows = [window.block_view.model_.rows[i.row()] for i in selected]
    assert [r.index for r in rows] == [50]
    source = window.source_panel
    ptx_lines = source.ptx.toPlainText().splitlines()
    # the highlighted PTX line is the instruction's own text
    assert source.ptx.highlighted == [rows[0].location.line]
    assert ptx_lines[rows[0].location.line - 1].split()[0] == rows[0].text.split()[0]
    # hotspot's PTX names ../hotspot.cu, found beside samples/ptx
    (name, view), = source.cuda.items()
    assert name == "../hotspot.cu" and view.highlighted == [rows[0].cuda_location.line]
    # instruction 50 forms the address of power[gidx] (hotspot.cu line 56)
    assert "power[gidx]" in view.toPlainText().splitlines()[view.highlighted[0] - 1]


def test_superstep_selection_highlights_its_source_lines(window):
    tree = window.superstep_view
    index = tree.model_.index(1, 0)
    node = tree.model_.node(index)
    tree.setCurrentIndex(index)
    rows = [r for r in window.block_view.model_.rows if node.start <= r.index <= node.end]
    assert window.source_panel.ptx.highlighted == sorted({r.location.line for r in rows})
    assert len(window.source_panel.ptx.highlighted) == node.end - node.start + 1


def test_export_png_and_trace_csv(window, tmp_path):
    png = window.exports.visible_png(tmp_path / "t.png", 900, 500)
    image = QImage(str(png))
    assert (image.width(), image.height()) == (900, 500)
    pixels = {image.pixel(x, y) for x in range(0, 900, 7) for y in range(0, 500, 7)}
    assert len(pixels) > 5                              # bars in several colours, not a blank page
    path = tmp_path / "t.csv"
    trace = window.session.result.simulation.trace
    n = window.exports.trace_csv(path)
    with open(path, newline="") as fh:
        # the comment lines first (what the run was), then the table
        rows = list(csv.DictReader(line for line in fh if not line.startswith("# ")))
    assert n == len(rows) == len(trace.issues) + len(trace.stalls)
    issues = [r for r in rows if r["kind"] == "issue"]
    assert len(issues) == len(trace.issues)
    # 1-based instruction numbers (the BLOCK table's), cycles to a tenth
    assert np.array_equal([int(r["instruction"]) for r in issues], trace.issues["instr"] + 1)
    assert np.allclose([float(r["start"]) for r in issues], trace.issues["issue"], atol=0.05)
    assert np.allclose([float(r["end"]) for r in issues], trace.issues["complete"], atol=0.05)


def test_malformed_ptx_shows_line_and_keeps_session(window, tmp_path):
    state, inputs = window.session.state, window.session.inputs
    bad = tmp_path / "bad.ptx"
    text = HOTSPOT.read_text().splitlines()
    text[60] = "    add.f32 %f1, %f2,, ;;; garbage here"
    bad.write_text("\n".join(text))
    assert not window.open_file(bad)
    assert window.banner.isVisible() or not window.banner.isHidden()
    shown = window.banner.label.text()
    assert "bad.ptx" in shown and "line 61" in shown
    assert window.session.state is state and window.session.inputs is inputs
    assert window.windowTitle().startswith("Warpline — hotspot.sm_90.ptx")


def test_save_and_reopen_session_restores_state(window, qtbot, tmp_path, monkeypatch):
    from dataclasses import replace

    row = global_load(window)
    window.block_view.model_.setData(cell(window, row, "lat_comm"), "1234")
    window.session.apply(replace(window.session.state, occupancy=3, measured_cycles=20000.0), "edit")
    wait_complete(qtbot, window)
    expected = cycles(window)
    state = window.session.state
    path = tmp_path / "s.warpline"
    window.session.save(path)
    assert not window.session.dirty and load_session(path).state == state

    other = make_window(qtbot, tmp_path / "second", monkeypatch, open_sample=False)
    assert other.open_file(path)
    wait_complete(qtbot, other)
    assert other.session.state == state and cycles(other) == expected
    err = [other.results_panel.table.item(k, 4).text() for k in range(2)]
    assert all(e.endswith("%") for e in err)
    # A broken session file: error shown, the open session untouched.
    broken = tmp_path / "broken.warpline"
    broken.write_text('{"format": "warpline-session", "version": 1}')
    assert not other.open_file(broken)
    assert "broken.warpline" in other.banner.label.text() and other.session.state == state


def test_drop_ptx_file_opens_it(window, qtbot):
    mm = ROOT / "samples" / "ptx" / "mm.sm_90.ptx"
    assert drop_file(window, mm)
    wait_complete(qtbot, window)
    assert window.session.inputs.path == mm and "mm.sm_90.ptx" in window.windowTitle()
    assert str(mm) in window.recent.entries()


def test_kernel_picker_for_files_with_several_kernels(window, qtbot, tmp_path, monkeypatch):
    src = ROOT / "tests" / "corpus" / "nvcc" / "templates.sm_90.ptx"
    path = tmp_path / "templates.ptx"          # no launch file next to it
    path.write_text(src.read_text())
    offered = []

    def choose(names):
        offered.extend(names)
        return names[1]

    monkeypatch.setattr(window, "choose_kernel", choose)
    parses, whole = [], []
    real_parse = loader_module.parse_kernel
    monkeypatch.setattr(loader_module, "parse_kernel", lambda data, name, file, *rest: parses.append(name)
                        or real_parse(data, name, file, *rest))
    real_load = inputs_module.load_ptx
    monkeypatch.setattr(inputs_module, "load_ptx", lambda p: whole.append(p) or real_load(p))
    assert window.open_file(path)
    wait_complete(qtbot, window)
    assert len(offered) > 1 and window.session.state.kernel == offered[1]
    combo = window.inputs_panel.kernel_combo
    assert combo.currentData() == offered[1]
    # Every kernel is offered in the kernel box, though only the chosen one was parsed.
    assert [combo.itemData(i) for i in range(combo.count())] == offered and combo.isEnabled()
    # The kernel is asked for before anything is parsed; another kernel of the file is parsed
    # alone (off the UI thread) when it is chosen, and the whole file never.
    window.session.set_kernel(offered[0])
    wait_complete(qtbot, window)
    assert window.session.state.kernel == offered[0] and parses == [offered[1], offered[0]] and not whole
    assert [combo.itemData(i) for i in range(combo.count())] == offered


def test_cancelling_the_kernel_picker_opens_the_first_kernel(window, qtbot, tmp_path, monkeypatch):
    src = ROOT / "tests" / "corpus" / "nvcc" / "templates.sm_90.ptx"
    path = tmp_path / "templates.ptx"
    path.write_text(src.read_text())
    monkeypatch.setattr(window, "choose_kernel", lambda names: None)
    assert window.open_file(path)
    wait_complete(qtbot, window)
    assert window.session.inputs.path == path
    assert window.session.state.kernel == window.session.kernel_names[0]


def test_autosave_writes_a_recovery_session(window, qtbot):
    window.session.apply(window.session.state.with_launch(smem_dynamic=256), "smem")
    window.session.autosave()
    recovered = load_session(window.session.autosave_path)
    assert recovered.state == window.session.state and recovered.ptx_path == HOTSPOT
    wait_complete(qtbot, window)


def test_ncu_import_sets_measured_cycles(window, qtbot, tmp_path):
    path = tmp_path / "ncu.csv"
    path.write_text('"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
                    '"0","calculate_temp(int)","gpc__cycles_elapsed.max","cycle","15,000"\n')
    window.results_panel.import_ncu(str(path))
    wait_complete(qtbot, window)
    assert window.session.state.measured_cycles == 15000
    many, _ = cycles(window)
    assert window.results_panel.table.item(0, 4).text() == f"{100 * (many - 15000) / 15000:+.1f} %"


def test_long_recomputation_shows_progress_and_keeps_the_window_responsive(window, qtbot, monkeypatch):
    import time

    from PySide6.QtCore import QTimer

    evaluator = window.session.worker.evaluator
    original = evaluator.evaluate

    span = []

    def slow(*args, **kwargs):
        span.append(time.perf_counter())
        time.sleep(0.8)                     # a kernel that takes long to simulate
        out = original(*args, **kwargs)
        span.append(time.perf_counter())
        return out

    monkeypatch.setattr(evaluator, "evaluate", slow)
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start(20)
    window.block_view.model_.setData(cell(window, global_load(window), "lat_comm"), "1500")
    qtbot.waitUntil(lambda: window.progress.isVisible(), timeout=5000)
    wait_complete(qtbot, window)
    timer.stop()
    assert not window.progress.isVisible()
    # While the worker computed, the UI thread kept running its timers: the window never froze.
    # (Gaps after the result arrives are the redraw itself, which this test does not judge.)
    start, _ = span
    during = [t for t in ticks if start <= t <= start + 0.8]
    assert len(during) >= 20
    assert max(b - a for a, b in zip(during, during[1:], strict=False)) < 0.15


def test_edit_shows_the_gantt_first_and_keeps_the_tables_until_many_bsp_arrives(window, qtbot):
    """The timeline part redraws the chart only: the BLOCK table, the superstep tree and the
    headline keep the previous values (never blank) until the models and the derivation come."""
    model = window.block_view.model_
    tree = window.superstep_view.model_
    session = window.session
    seen = []

    def look(part):  # noqa: ANN202
        def record(result) -> None:  # noqa: ANN001 - Evaluation
            seen.append((part, window.gantt.view.trace is result.simulation.trace, len(model.rows),
                         "Many-BSP" in window.results_panel.headline.text(), tree.rowCount()))
        return record

    slots = {"timeline": look("timeline"), "models": look("models"), "derivation": look("derivation"),
             "sweep": look("sweep")}
    signals = {"timeline": session.timelineChanged, "models": session.modelsChanged,
               "derivation": session.derivationChanged, "sweep": session.sweepChanged}
    for part, signal in signals.items():
        signal.connect(slots[part])
    rows_before, level1_before = len(model.rows), tree.rowCount()
    assert model.setData(cell(window, global_load(window), "lat_comm"), "777")
    wait_complete(qtbot, window)
    for part, signal in signals.items():
        signal.disconnect(slots[part])
    assert [p for p, *_ in seen] == ["timeline", "models", "derivation", "sweep"]
    first = seen[0]
    assert first[1]                                   # the chart already shows the new trace
    assert first[2] == rows_before and first[3] and first[4] == level1_before   # tables kept


def test_superstep_tree_updates_level2_values_in_place(window, qtbot):
    tree = window.superstep_view.model_
    view = window.superstep_view
    level1 = next(k for k in range(tree.rowCount()) if tree.rowCount(tree.index(k, 0)))
    view.expand(tree.index(level1, 0))
    parent = tree.index(level1, 0)
    before = [tree.index(r, 3, parent).data() for r in range(tree.rowCount(parent))]
    node_before = tree.node(tree.index(0, 0, parent))
    # a much slower global memory changes the communication of the level-2 supersteps
    assert window.block_view.model_.setData(cell(window, global_load(window), "lat_comm"), "5000")
    wait_complete(qtbot, window)
    parent = tree.index(level1, 0)
    after = [tree.index(r, 3, parent).data() for r in range(tree.rowCount(parent))]
    assert view.isExpanded(parent)                                    # not rebuilt: expansion kept
    assert tree.node(tree.index(0, 0, parent)) is node_before
    mb = window.session.result.manybsp
    assert after == [_cycles_text(c.comm) for c in mb.level1[level1].children] and after != before
    # the column widened to the new numbers instead of eliding them
    width = view.fontMetrics().horizontalAdvance(max(after, key=len))
    assert view.columnWidth(3) >= width


def _cycles_text(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.1f}"


def test_a_lone_edit_computes_at_once_and_a_burst_is_coalesced(window, qtbot):
    session = window.session
    model = window.block_view.model_
    row = global_load(window)
    generation = session.worker.generation
    assert model.setData(cell(window, row, "lat_comm"), "600")
    assert session.worker.generation == generation + 1          # submitted without a debounce wait
    wait_complete(qtbot, window)
    generation = session.worker.generation
    for k in range(8):                                          # eight edits inside one frame
        assert model.setData(cell(window, row, "lat_comm"), str(700 + k))
    submitted_during_burst = session.worker.generation - generation
    wait_complete(qtbot, window)
    assert submitted_during_burst == 1                           # the rest wait for the timer
    assert session.worker.generation - generation == 2           # ... which computes the newest state
    assert window.session.result.state == session.state
    assert cell(window, row, "lat_comm").data() == "707"
