"""Recovery never loses work: one autosave per window, owned by its process; orphans (dead owners)
offered at every start; restored work is unsaved; only the owner deletes its autosave; sessions
say which overrides no longer match the PTX. Run as a script (``--driver``), this file is one
window of the two-process kill -9 test."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOTSPOT = ROOT / "samples" / "ptx" / "hotspot.sm_90.ptx"


def _driver(latency: float, save_to: str) -> None:
    """One real Warpline window: open hotspot, edit row 47, autosave, then wait for "close"."""
    sys.path.insert(0, str(ROOT))
    from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox

    from engine.state import with_cell_edit
    from gui import app as app_module
    from gui.recovery_dialog import Choice

    app = QApplication([sys.argv[0]])
    # Another window's autosave is not an orphan while its process lives; keep anything offered.
    app_module.choose_recovery = lambda _parent, entries: [Choice.LATER] * len(entries)
    window = app_module.start_windows([str(HOTSPOT)])[0]
    assert window.wait_for_load()               # the file opens in the background
    session = window.session
    session.apply(with_cell_edit(session.state, 47, "lat_comm", latency), "edit")
    session.autosave()
    print("READY", session.session_id, flush=True)
    if sys.stdin.readline().strip() == "close":
        QMessageBox.question = staticmethod(lambda *a, **k: QMessageBox.StandardButton.Save)
        QFileDialog.getSaveFileName = staticmethod(lambda *a, **k: (save_to, ""))
        window.close()
        print("CLOSED", window.isVisible(), flush=True)
    app.quit()


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "--driver":
    _driver(float(sys.argv[2]), sys.argv[3])
    sys.exit(0)

import pytest  # noqa: E402

from engine.errors import WarplineError  # noqa: E402
from engine.evaluation import state_for  # noqa: E402
from engine.inputs import resolve_inputs  # noqa: E402
from engine.session_file import (  # noqa: E402
    RecoveryOwner,
    autosave_path,
    find_orphans,
    fingerprint_for,
    load_session,
    ptx_sha256,
    recovery_dir,
    recovery_path,
    save_session,
)
from engine.state import with_cell_edit  # noqa: E402


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


@pytest.fixture(scope="module")
def edited():
    inputs = resolve_inputs(HOTSPOT, use_ptxas=False)
    return inputs, with_cell_edit(state_for(inputs), 47, "lat_comm", 777.0)


def _orphan_file(session_id: str, state, pid: int) -> Path:
    return save_session(autosave_path(session_id), HOTSPOT, state,
                        owner=RecoveryOwner(session_id, pid, None))


def test_orphans_are_the_autosaves_of_dead_processes(tmp_path, monkeypatch, edited):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    _inputs, state = edited
    dead = _orphan_file("dead", state, _dead_pid())
    _orphan_file("alive", state, os.getpid())
    legacy = save_session(recovery_path(), HOTSPOT, state)           # an older version's autosave
    (recovery_dir() / "bad.warpline").write_bytes(b"\xff\xfe not utf-8")
    (recovery_dir() / "deep.warpline").write_text("[" * 100_000 + "]" * 100_000)
    orphans, problems = find_orphans()
    assert sorted(o.path for o in orphans) == sorted([dead, legacy])
    assert all(o.data.state == state for o in orphans)
    assert len(problems) == 2
    assert any("bad.warpline:1: the session is not UTF-8" in p for p in problems)
    assert any("nested too deeply" in p for p in problems)
    # The live window's own autosave is never its orphan either.
    assert [o.path for o in find_orphans(own_ids=["dead"])[0]] == [legacy]


def test_recycled_pid_does_not_own_an_autosave(tmp_path, monkeypatch, edited):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    _inputs, state = edited
    # Our own PID, but a different start time: the process that wrote it is gone.
    save_session(autosave_path("old"), HOTSPOT, state, owner=RecoveryOwner("old", os.getpid(), 1))
    assert [o.path.stem for o in find_orphans()[0]] == ["old"]


def test_sessions_from_dev_zero_or_not_utf8_are_one_line_errors(tmp_path):
    for path, expect in ((Path("/dev/zero"), "not a regular file"), (tmp_path / "x.warpline", "not UTF-8")):
        if path != Path("/dev/zero"):
            path.write_bytes(b'{"format": "\xc3\x28"}')
        with pytest.raises(WarplineError, match=expect) as info:
            load_session(path)
        assert "\n" not in str(info.value)


def _changed_hotspot(tmp_path: Path) -> Path:
    text = HOTSPOT.read_text()
    lines = text.splitlines(keepends=True)
    assert "ld.global.f32" in lines[112] and "[%rd6]" in lines[112]
    lines[112] = lines[112].replace("[%rd6]", "[%rd6+4]")        # row 47 is another instruction now
    path = tmp_path / "hotspot.sm_90.ptx"
    path.write_text("".join(lines))
    return path


def test_overrides_of_changed_instructions_are_named_and_not_applied(tmp_path, qtbot, monkeypatch):
    from tests.test_gui_support import make_window, wait_complete

    ptx = tmp_path / "hotspot.sm_90.ptx"
    ptx.write_text(HOTSPOT.read_text())
    inputs = resolve_inputs(ptx, use_ptxas=False)
    state = with_cell_edit(with_cell_edit(state_for(inputs), 47, "lat_comm", 900.0), 12, "lat_comp", 55.0)
    session_path = save_session(tmp_path / "s.warpline", ptx, state,
                                fingerprint=fingerprint_for(inputs, state, ptx_sha256(ptx)))
    stored = json.loads(session_path.read_text())["fingerprint"]["rows"]
    assert stored == {"12": inputs.function.instructions[11].text, "47": inputs.function.instructions[46].text}

    window = make_window(qtbot, tmp_path, monkeypatch, open_sample=False)
    assert window.open_file(session_path)                          # unchanged PTX: everything applies
    assert window.session.state.overrides == state.overrides and not window.session.dirty
    _changed_hotspot(tmp_path)
    assert window.open_file(session_path)
    wait_complete(qtbot, window)
    ov = window.session.state.overrides
    assert 47 not in ov.latencies and ov.latencies[12] == {"lat_comp": 55.0}
    banner = window.banner.label.text()
    assert "row 47" in banner and "[%rd6+4]" in banner and "not applied" in banner and "row 12" not in banner
    assert window.session.dirty and window.windowTitle().endswith("*")


def test_restored_work_is_unsaved_and_owned_by_the_new_window(tmp_path, qtbot, monkeypatch, edited):
    from gui import app as app_module
    from tests.test_gui_support import make_window, restore_all, wait_complete

    window = make_window(qtbot, tmp_path, monkeypatch, open_sample=False)
    _inputs, state = edited
    orphan = _orphan_file("crashed", state, _dead_pid())
    monkeypatch.setattr(app_module, "choose_recovery", restore_all)
    assert app_module._offer_recovery(window)
    wait_complete(qtbot, window)
    session = window.session
    assert session.state == state and session.dirty and window.windowTitle().endswith("*")
    assert session.session_path is None
    assert not orphan.exists()
    owner = load_session(session.autosave_path).owner
    assert owner is not None and owner.pid == os.getpid() and owner.session_id == session.session_id
    assert find_orphans(own_ids=[session.session_id]) == ([], [])
    # Saving (File > Save asks where) makes it clean and only then removes the autosave.
    from PySide6.QtWidgets import QFileDialog

    target = tmp_path / "saved.warpline"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    assert window.save_session()
    assert target.is_file() and not session.autosave_path.exists() and not session.dirty


def test_a_clean_close_deletes_only_its_own_autosave(tmp_path, qtbot, monkeypatch, edited):
    from tests.test_gui_support import make_window, wait_complete

    window = make_window(qtbot, tmp_path, monkeypatch)
    _inputs, state = edited
    other = _orphan_file("other-window", state, os.getpid())       # a live window's autosave
    window.session.apply(with_cell_edit(window.session.state, 12, "lat_comp", 3.0), "edit")
    window.session.autosave()
    own = window.session.autosave_path
    assert own.exists() and own != other
    wait_complete(qtbot, window)
    window.close()
    assert not own.exists() and other.exists()


def test_unreadable_recovery_files_are_skipped_with_a_message(tmp_path, qtbot, monkeypatch):
    from gui import app as app_module
    from tests.test_gui_support import make_window

    window = make_window(qtbot, tmp_path, monkeypatch, open_sample=False)
    recovery_dir().mkdir(parents=True)
    (recovery_dir() / "torn.warpline").write_bytes(b"\x80\x81")
    assert not app_module._offer_recovery(window)
    assert "torn.warpline" in window.banner.label.text() and "unreadable recovery file" in window.banner.label.text()


def _start_driver(env: dict[str, str], latency: float, save_to: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, __file__, "--driver", str(latency), str(save_to)],
                            env=env, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_kill_9_of_one_window_and_a_clean_close_of_another(tmp_path, qtbot, monkeypatch):
    """Two real window processes edit and autosave; one is killed with SIGKILL, the other
    saves and closes: the next start offers the killed one's work, and only it."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), PYTHONPATH=str(ROOT))
    killed = _start_driver(env, 901.0, tmp_path / "unused.warpline")
    closed = _start_driver(env, 902.0, tmp_path / "closed.warpline")
    try:
        ids = {}
        for name, proc in (("killed", killed), ("closed", closed)):
            line = proc.stdout.readline()
            assert line.startswith("READY"), (line, proc.stderr.read() if proc.poll() is not None else "")
            ids[name] = line.split()[1]
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait(timeout=30)
        out, err = closed.communicate("close\n", timeout=120)
        assert "CLOSED False" in out, err
    finally:
        for proc in (killed, closed):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert (tmp_path / "closed.warpline").is_file()
    assert not autosave_path(ids["closed"]).exists()               # saved, so its autosave went
    orphans, problems = find_orphans()
    assert problems == [] and [o.path for o in orphans] == [autosave_path(ids["killed"])]
    assert orphans[0].data.state.overrides.latencies[47] == {"lat_comm": 901.0}

    from gui import app as app_module
    from tests.test_gui_support import make_window, restore_all, wait_complete

    window = make_window(qtbot, tmp_path, monkeypatch, open_sample=False)
    monkeypatch.setattr(app_module, "choose_recovery", restore_all)
    assert app_module._offer_recovery(window)
    wait_complete(qtbot, window)
    assert window.session.state.overrides.latencies[47] == {"lat_comm": 901.0}
    assert window.windowTitle().endswith("*")
