"""A big kernel opens off the UI thread with a bar that fills as the parse goes, and Cancel stops
the parse itself (not only its outcome): issue 35, item 5. Figures for big files are
bench/bench_frontend.py's; here the kernels are big enough for several progress reports."""

from __future__ import annotations

import functools
import threading

import pytest
from PySide6.QtCore import QTimer

import gui.loader as loader_module
from engine.ptx.parser import PROGRESS_LINES
from tests import ptx_gen
from tests.test_gui_support import make_window, wait_complete

INSTRUCTIONS = 300
LINES = 3 * PROGRESS_LINES + 100      # three progress reports


@pytest.fixture()
def window(qtbot, tmp_path, monkeypatch):
    # Registers estimated: ptxas -v on these kernels costs seconds that say nothing here.
    monkeypatch.setattr(loader_module, "resolve_inputs", functools.partial(loader_module.resolve_inputs,
                                                                           use_ptxas=False))
    return make_window(qtbot, tmp_path, monkeypatch)


@pytest.fixture()
def big(tmp_path):
    """A kernel of many lines and few instructions (a long run of ``.loc`` lines, as -lineinfo
    writes them): its parse reports several times, its evaluation takes no time."""
    text = ptx_gen.straight_kernel(INSTRUCTIONS)
    first = text.index("\t.loc\t")
    locs = "".join(f"\t.loc\t1 {line} 5\n" for line in range(LINES))
    path = tmp_path / "big.ptx"
    path.write_text(text[:first] + locs + text[first:])
    return path


def test_the_parse_runs_off_the_ui_thread_and_fills_the_bar(window, qtbot, big, monkeypatch):
    real = loader_module.parse_kernel
    where: list[bool] = []

    def parse(data, name, filename, progress=None):
        where.append(threading.current_thread() is threading.main_thread())
        return real(data, name, filename, progress)

    monkeypatch.setattr(loader_module, "parse_kernel", parse)
    seen: list[tuple[float, int, int]] = []
    bar = window.load_status.bar
    window.session.loader.progressChanged.connect(
        lambda _request, fraction: seen.append((fraction, bar.maximum(), bar.value())))
    ticks: list[int] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(len(seen)))
    timer.start(5)
    window.open_file_async(big)
    qtbot.waitUntil(lambda: not window.session.loading, timeout=120_000)
    timer.stop()
    assert where == [False]                                  # parsed in the loader's thread
    assert window.session.inputs.path == big and len(window.session.inputs.function.instructions) == INSTRUCTIONS
    fractions = [f for f, _, _ in seen]
    assert len(fractions) >= 3 and fractions == sorted(fractions) and 0 < fractions[0] < fractions[-1] <= 1
    assert all(maximum == 1000 and value == round(1000 * f) for f, maximum, value in seen)   # determinate
    assert ticks, "the event loop ran while the file was opened"
    assert window.load_status.bar.maximum() == 1000 and not window.load_status.isVisible()
    wait_complete(qtbot, window)


def test_cancel_stops_the_parse_where_it_is(window, qtbot, big, monkeypatch):
    real = loader_module.parse_kernel
    reports: list[int] = []
    outcome: list[str] = []
    cancelled = threading.Event()

    def parse(data, name, filename, progress=None):
        def reported(done, total):
            reports.append(done)
            progress(done, total)
            if len(reports) == 1:            # hold the parse until the window has cancelled it
                assert cancelled.wait(60)
        try:
            module = real(data, name, filename, reported)
        except BaseException as exc:
            outcome.append(type(exc).__name__)
            raise
        outcome.append("parsed")
        return module

    monkeypatch.setattr(loader_module, "parse_kernel", parse)

    def first_report(_request, _fraction):
        if not cancelled.is_set():
            window.cancel_load()             # what the status bar's Cancel (or Esc) does
            cancelled.set()

    window.session.loader.progressChanged.connect(first_report)
    before = window.session.inputs
    window.open_file_async(big)
    qtbot.waitUntil(lambda: bool(outcome), timeout=120_000)
    assert outcome == ["Cancelled"] and len(reports) == 2    # stopped at the next report, not at the end
    assert window.session.inputs is before and "Cancelled opening big.ptx" in window.statusBar().currentMessage()
