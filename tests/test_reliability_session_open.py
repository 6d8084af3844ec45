"""Session files and restored autosaves open off the UI thread, as PTX files do (issue 14): the
session's PTX is indexed and only the session's kernel parsed, in the loader's thread, with the
status bar's progress and Cancel; the open session stays as it was until the load succeeds. A
restore that fails or is cancelled puts the autosave back where it was (it is offered again), and
a stored baseline of another kernel is loaded in the background too. No path parses a whole file.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer

import engine.inputs as inputs_module
from engine.evaluation import state_for
from engine.evaluation.compare import BaselineFigures
from engine.session_file import (
    RecoveryOwner,
    StoredBaseline,
    autosave_path,
    find_orphans,
    load_session,
    ptx_sha256,
    save_session,
)
from engine.state import with_cell_edit
from gui import app as app_module
from gui.loader import list_kernels, load_kernel
from tests import ptx_gen
from tests.test_gui_support import HOTSPOT, make_window, restore_all, wait_complete
from tests.test_reliability_recovery import _dead_pid
from tests.test_reliability_window import Gate

KERNELS = 6


@pytest.fixture()
def no_whole_file_parse(monkeypatch):
    """Every open below parses one kernel (gui.loader.parse_kernel); resolve_inputs without a
    module (a parse of the whole file) is a failure."""
    def whole_file(path):
        raise AssertionError(f"{path}: the whole file was parsed")

    monkeypatch.setattr(inputs_module, "load_ptx", whole_file)


@pytest.fixture()
def library(tmp_path) -> Path:
    path = tmp_path / "lib" / "library.ptx"
    path.parent.mkdir()
    path.write_text(ptx_gen.library(kernels=KERNELS, instructions=60, funcs=2))
    return path


def _edited_state(path: Path, index: int):
    listing = list_kernels(path, list_kernels(path).names[index])
    inputs = load_kernel(path, listing, listing.chosen).inputs
    return inputs, with_cell_edit(state_for(inputs), 3, "lat_comp", 77.0)


def _library_session(tmp_path: Path, library: Path, index: int = 3) -> tuple[Path, object]:
    _inputs, state = _edited_state(library, index)
    return save_session(tmp_path / "lib.warpline", library, state), state


def _running_event_loop(qtbot) -> None:
    fired = []
    QTimer.singleShot(0, lambda: fired.append(True))
    qtbot.waitUntil(lambda: bool(fired), timeout=10_000)


def test_a_session_file_opens_off_the_ui_thread(qtbot, tmp_path, monkeypatch, library, no_whole_file_parse):
    window = make_window(qtbot, tmp_path, monkeypatch)
    session_path, state = _library_session(tmp_path, library)
    gate = Gate(monkeypatch)
    before_inputs, before_title = window.session.inputs, window.windowTitle()
    outcome: list[bool] = []
    request = window.open_file_async(session_path, on_done=outcome.append)
    assert request is not None and window.session.loading and window.session.inputs is before_inputs
    qtbot.waitUntil(gate.entered.is_set, timeout=30_000)     # held in the loader's thread ...
    assert gate.parsed == [state.kernel]                     # ... parsing the session's kernel only
    _running_event_loop(qtbot)                               # ... while the window runs
    assert window.load_status.isVisible() and "lib.warpline" in window.load_status.label.toolTip()
    assert window.session.inputs is before_inputs and window.windowTitle() == before_title
    gate.release.set()
    wait_complete(qtbot, window)
    session = window.session
    assert outcome == [True] and session.session_path == session_path and not session.dirty
    assert session.state == state and [k.name for k in session.inputs.module.kernels] == [state.kernel]
    assert len(session.kernel_names) == KERNELS and session.ptx_sha256 == ptx_sha256(library)
    assert str(session_path.resolve()) in window.recent.entries()
    # the blocking open (scripts, tests) parses one kernel too
    assert window.open_file(session_path) and window.session.state == state


def test_cancelling_a_session_open_keeps_the_open_session(qtbot, tmp_path, monkeypatch, library):
    window = make_window(qtbot, tmp_path, monkeypatch)
    session_path, _state = _library_session(tmp_path, library)
    gate = Gate(monkeypatch)
    inputs, state = window.session.inputs, window.session.state
    window.open_file_async(session_path)
    qtbot.waitUntil(gate.entered.is_set, timeout=30_000)
    assert window.cancel_load()
    gate.release.set()
    assert gate.returned.wait(60)
    window.session.loader._drain()
    assert window.session.inputs is inputs and window.session.state is state
    assert "Cancelled opening lib.warpline" in window.statusBar().currentMessage()
    assert str(session_path.resolve()) not in window.recent.entries()


def test_a_session_that_cannot_be_opened_is_one_message(qtbot, tmp_path, monkeypatch, library):
    window = make_window(qtbot, tmp_path, monkeypatch)
    session_path, state = _library_session(tmp_path, library)
    data = load_session(session_path)
    moved = save_session(tmp_path / "moved.warpline", tmp_path / "gone.ptx", data.state)
    unknown = save_session(tmp_path / "unknown.warpline", library, replace(state, kernel="nope"))
    for path, said in ((moved, "gone.ptx does not exist"), (unknown, "no kernel named 'nope'")):
        outcome: list[bool] = []
        window.open_file_async(path, on_done=outcome.append)
        qtbot.waitUntil(lambda outcome=outcome: bool(outcome), timeout=30_000)
        assert outcome == [False] and said in window.banner.label.text(), window.banner.label.text()
        assert window.session.inputs.path.resolve() == HOTSPOT.resolve()


def _orphan(tmp_path: Path, library: Path, state, ptx: Path | None = None) -> Path:
    """An autosave of a process that is gone."""
    return save_session(autosave_path("crashed"), ptx or library, state,
                        owner=RecoveryOwner("crashed", _dead_pid(), None))


def test_a_restore_loads_off_the_ui_thread(qtbot, tmp_path, monkeypatch, library, no_whole_file_parse):
    window = make_window(qtbot, tmp_path, monkeypatch, open_sample=False)
    _inputs, state = _edited_state(library, 2)
    orphan = _orphan(tmp_path, library, state)
    gate = Gate(monkeypatch)
    monkeypatch.setattr(app_module, "choose_recovery", restore_all)
    assert app_module._offer_recovery(window)                # returns while the kernel is parsed
    qtbot.waitUntil(gate.entered.is_set, timeout=30_000)
    assert gate.parsed == [state.kernel] and window.session.inputs is None
    _running_event_loop(qtbot)
    # claimed at once, and owned by this live process: no other Warpline offers it meanwhile
    session = window.session
    assert not orphan.exists() and session.autosave_path.exists()
    owner = load_session(session.autosave_path).owner
    assert owner is not None and owner.pid == os.getpid()
    assert find_orphans() == ([], [])
    gate.release.set()
    wait_complete(qtbot, window)
    assert session.state == state and session.dirty and window.windowTitle().endswith("*")
    assert session.session_path is None
    assert "Restored unsaved work on library.ptx" in window.statusBar().currentMessage()


@pytest.mark.parametrize("how", ["fails", "cancelled", "window closed"])
def test_a_restore_that_does_not_finish_keeps_the_autosave(qtbot, tmp_path, monkeypatch, library, how):
    window = make_window(qtbot, tmp_path, monkeypatch, open_sample=False)
    _inputs, state = _edited_state(library, 1)
    orphan = _orphan(tmp_path, library, state, ptx=tmp_path / "gone.ptx" if how == "fails" else None)
    gate = Gate(monkeypatch)
    if how != "fails":
        window.session.restore_async(load_orphan(orphan))
        qtbot.waitUntil(gate.entered.is_set, timeout=30_000)
        assert not orphan.exists()
        if how == "cancelled":
            assert window.cancel_load()
            assert "offered again at the next start" in window.statusBar().currentMessage()
        else:
            window.close()
        gate.release.set()
        assert gate.returned.wait(60)
    else:
        outcome = []
        window.session.restore_async(load_orphan(orphan), on_done=outcome.append)
        qtbot.waitUntil(lambda: bool(outcome), timeout=30_000)
        assert "Cannot restore the unsaved session of gone.ptx" in window.banner.label.text()
        assert "does not exist" in window.banner.label.text()
        window.close()                       # a clean close must not delete it either
    assert orphan.exists() and load_session(orphan).state == state
    assert not window.session.autosave_path.exists()


def load_orphan(path: Path):
    from engine.session_file import Orphan

    return Orphan(path, load_session(path))


def test_a_failed_restore_at_start_opens_the_sample_and_keeps_the_error(qtbot, tmp_path, monkeypatch, library):
    window = make_window(qtbot, tmp_path, monkeypatch, open_sample=False)
    _inputs, state = _edited_state(library, 1)
    orphan = _orphan(tmp_path, library, state, ptx=tmp_path / "gone.ptx")
    monkeypatch.setattr(app_module, "choose_recovery", restore_all)
    monkeypatch.setattr(app_module, "_new_window", lambda settings_from=None: window)
    monkeypatch.setattr(app_module, "_WINDOWS", [window])
    app_module.start_windows([])
    qtbot.waitUntil(lambda: window.session.inputs is not None, timeout=30_000)
    wait_complete(qtbot, window)
    assert window.session.inputs.path.resolve() == HOTSPOT.resolve()
    assert "Cannot restore the unsaved session of gone.ptx" in window.banner.label.text()
    assert orphan.exists()


def test_a_stored_baseline_of_another_kernel_loads_in_the_background(qtbot, tmp_path, monkeypatch, library,
                                                                      no_whole_file_parse):
    window = make_window(qtbot, tmp_path, monkeypatch)
    _inputs, state = _edited_state(library, 3)
    _other, baseline_state = _edited_state(library, 4)
    figures = BaselineFigures({"pipeline": 1000.0}, {"issuing": 0.5}, "stored verdict", 900.0)
    stored = StoredBaseline("other kernel", library, ptx_sha256(library), baseline_state, figures)
    session_path = save_session(tmp_path / "base.warpline", library, state, baselines=(stored,))
    gate = Gate(monkeypatch)
    window.open_file_async(session_path)
    qtbot.waitUntil(gate.entered.is_set, timeout=30_000)
    gate.release.set()
    wait_complete(qtbot, window)
    baseline = window.baseline
    qtbot.waitUntil(lambda: not baseline.recomputing, timeout=60_000)
    assert gate.parsed == [state.kernel, baseline_state.kernel]
    assert baseline.result is not None and baseline.result.state == baseline_state and baseline.note == ""


def test_hashing_a_device_is_refused_at_once():
    """A baseline (or session) naming /dev/zero as its PTX used to be hashed forever on the UI
    thread; it is refused before anything is read (checked in a child process: bounded)."""
    import subprocess
    import sys

    code = ("from engine.session_file import ptx_sha256\n"
            "try:\n    ptx_sha256('/dev/zero')\nexcept OSError as exc:\n    print('refused', exc.strerror)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "refused not a regular file", done.stderr


def test_a_stored_baseline_on_a_device_is_shown_as_not_recomputed(qtbot, tmp_path, monkeypatch, library):
    window = make_window(qtbot, tmp_path, monkeypatch)
    _inputs, state = _edited_state(library, 3)
    figures = BaselineFigures({"pipeline": 1000.0}, {"issuing": 0.5}, "stored verdict", 900.0)
    stored = StoredBaseline("device", Path("/dev/zero"), "0" * 64, state, figures)
    session_path = save_session(tmp_path / "dev.warpline", library, state, baselines=(stored,))
    assert window.open_file(session_path)
    assert window.baseline.stored is not None and not window.baseline.recomputing
    assert "not recomputed: cannot read /dev/zero: not a regular file" in window.baseline.note


def test_profile_files_that_do_not_load_are_named_in_the_window_at_start(qtbot, tmp_path, monkeypatch):
    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / "junk.toml").write_bytes(b'name = "\xff"\n')
    (folder / "h100.toml").write_text("issue_limit = nan\n")          # a broken copy hides the shipped one
    monkeypatch.setenv("WARPLINE_PROFILE_PATH", str(folder))
    window = make_window(qtbot, tmp_path, monkeypatch, open_sample=False)
    assert not app_module._offer_recovery(window)
    shown = window.banner.label.text()
    assert "junk.toml:1: the file is not UTF-8 text" in shown and "h100.toml" in shown
    assert shown.count("profile file skipped") == 2
