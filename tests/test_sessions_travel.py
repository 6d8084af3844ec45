"""Sessions travel (issue 32, part 7): the PTX is stored relative to the session as well as
absolute; a session moved with its PTX opens; a PTX beside the session is found; a missing one is
offered through Locate…"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from engine.evaluation import state_for
from engine.inputs import resolve_inputs
from engine.session_file import MissingPtxError, load_session, save_session
from engine.state import with_cell_edit
from gui.loader import load_session_file
from tests.test_gui_support import make_window, wait_complete

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "ptx" / "hotspot.sm_90.ptx"


def _session(folder: Path, ptx_folder: Path) -> tuple[Path, Path]:
    ptx_folder.mkdir(parents=True, exist_ok=True)
    ptx = ptx_folder / "hotspot.sm_90.ptx"
    shutil.copy(SAMPLE, ptx)
    inputs = resolve_inputs(ptx, profile="h100")
    state = with_cell_edit(state_for(inputs), 12, "lat_comm", 2000.0)
    folder.mkdir(parents=True, exist_ok=True)
    return save_session(folder / "work.warpline", ptx, state), ptx


def test_relative_path_is_stored_and_followed(tmp_path):
    saved, ptx = _session(tmp_path / "a" / "sessions", tmp_path / "a" / "kernels")
    data = json.loads(saved.read_text(encoding="utf-8"))
    assert data["file"] == str(ptx.resolve())
    assert data["file_relative"] == str(Path("..") / "kernels" / "hotspot.sm_90.ptx")
    shutil.move(tmp_path / "a", tmp_path / "b")           # sent to a colleague: the folder moved
    moved = load_session(tmp_path / "b" / "sessions" / "work.warpline")
    assert moved.ptx_path == (tmp_path / "b" / "kernels" / "hotspot.sm_90.ptx").resolve()
    assert moved.moved_from == ptx.resolve()
    _, loaded = load_session_file(tmp_path / "b" / "sessions" / "work.warpline")
    assert loaded.inputs.path == moved.ptx_path


def test_a_ptx_beside_the_session_is_found(tmp_path):
    saved, ptx = _session(tmp_path / "mine", tmp_path / "elsewhere")
    flat = tmp_path / "mail"
    flat.mkdir()
    shutil.copy(saved, flat / saved.name)
    shutil.copy(ptx, flat / ptx.name)
    ptx.unlink()
    found = load_session(flat / saved.name)
    assert found.ptx_path == (flat / ptx.name).resolve() and found.moved_from == ptx.resolve()


def test_a_missing_ptx_is_refused_with_its_paths(tmp_path):
    saved, ptx = _session(tmp_path / "s", tmp_path / "k")
    ptx.unlink()
    with pytest.raises(MissingPtxError) as caught:
        load_session_file(saved)
    assert caught.value.ptx_path == ptx.resolve() and caught.value.session_path == saved
    assert "beside the session" in str(caught.value)


@pytest.fixture()
def window(qtbot, tmp_path, monkeypatch):
    return make_window(qtbot, tmp_path, monkeypatch, open_sample=False)


def test_window_offers_locate(window, qtbot, tmp_path, monkeypatch):
    saved, ptx = _session(tmp_path / "s", tmp_path / "k")
    hidden = tmp_path / "somewhere" / "renamed.ptx"
    hidden.parent.mkdir()
    shutil.move(ptx, hidden)
    monkeypatch.setattr(window, "locate_file", lambda error: hidden)
    assert not window.open_file(saved)             # refused, nothing blocks: the banner offers Locate…
    banner = window.banner
    assert banner.isVisible() and "hotspot.sm_90.ptx" in banner.label.text()
    assert banner.action_button.isVisible() and banner.action_button.text() == "Locate…"
    banner.action_button.click()
    wait_complete(qtbot, window)
    assert window.session.inputs.path == hidden.resolve()
    assert window.session.state.overrides.latencies == {12: {"lat_comm": 2000.0}}
    assert window.session.session_path == saved
    # saved again, the session names the located file (absolute and relative)
    window.session.save(saved)
    data = json.loads(saved.read_text(encoding="utf-8"))
    assert data["file"] == str(hidden.resolve())
    assert data["file_relative"] == str(Path("..") / "somewhere" / "renamed.ptx")
