"""Recovery that informs: every autosave a crashed window left is described (PTX path, kernel,
last save, edits, whether the PTX changed since, which Warpline wrote it) and offered in one
dialog, where each is restored, kept for later or discarded."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from engine.errors import WarplineError
from engine.evaluation import state_for
from engine.inputs import resolve_inputs
from engine.recovery import PTX_CHANGED, PTX_MISSING, PTX_UNCHANGED, PTX_UNKNOWN, describe_orphan, state_edits
from engine.session_file import (
    INSTALLATION,
    Orphan,
    RecoveryOwner,
    autosave_path,
    find_orphans,
    fingerprint_for,
    load_session,
    ptx_sha256,
    save_session,
)
from engine.state import with_cell_edit
from tests.test_reliability_recovery import _dead_pid

ROOT = Path(__file__).resolve().parents[1]
HOTSPOT = ROOT / "samples" / "ptx" / "hotspot.sm_90.ptx"


@pytest.fixture()
def data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "data"


@pytest.fixture(scope="module")
def edited():
    inputs = resolve_inputs(HOTSPOT, use_ptxas=False)
    state = with_cell_edit(with_cell_edit(state_for(inputs), 47, "lat_comm", 900.0), 12, "fu1", "4+1")
    return inputs, state


def _autosave(name: str, ptx: Path, state, inputs=None, *, installation: str | None = str(INSTALLATION),
              edits: tuple[str, ...] = ("Set lat_comm of #47 to 900",), saved: float | None = None,
              fingerprint: bool = True) -> Orphan:
    fp = fingerprint_for(inputs, state, ptx_sha256(ptx)) if fingerprint and inputs is not None else None
    owner = RecoveryOwner(name, _dead_pid(), None, installation, saved, edits)
    path = save_session(autosave_path(name), ptx, state, fingerprint=fp, owner=owner)
    return Orphan(path, load_session(path))


def test_an_autosave_records_its_installation_time_and_edit_history(data_home, edited):
    inputs, state = edited
    before = time.time()
    orphan = _autosave("a", HOTSPOT, state, inputs, edits=("one", "two"), saved=before)
    owner = orphan.data.owner
    assert owner.installation == str(INSTALLATION) and owner.saved == before and owner.edits == ("one", "two")
    entry = describe_orphan(orphan)
    assert entry.ptx_path == HOTSPOT and entry.kernel.startswith("calculate_temp(int, float*")
    assert entry.saved == before and entry.edits == ("one", "two") and entry.edits_recorded
    assert entry.ptx_status == PTX_UNCHANGED and entry.other_installation is None
    assert entry.origin_note == "this Warpline" and entry.restorable


@pytest.mark.parametrize("key, value, message", [
    ("edits", "not a list", "expected a list"), ("edits", [1], r"recovery\.edits\[0\]"),
    ("saved", float("nan"), "finite"), ("installation", 3, "expected a string"),
    ("saved", 1e300, "up to year 9999"), ("pid", 0, "not a process ID"), ("pid", 2**31, "not a process ID"),
    ("started", -1, "not a process start time"),
])
def test_bad_recovery_fields_are_refused_with_their_key(tmp_path, edited, key, value, message):
    import json

    inputs, state = edited
    path = save_session(tmp_path / "s.warpline", HOTSPOT, state, owner=RecoveryOwner("x", 1))
    data = json.loads(path.read_text())
    data["recovery"][key] = value
    path.write_text(json.dumps(data))
    with pytest.raises(WarplineError, match=message) as info:
        load_session(path)
    assert str(path) in str(info.value)


def test_a_ptx_that_changed_or_went_is_said_so(data_home, tmp_path, edited):
    inputs, state = edited
    ptx = tmp_path / "hotspot.sm_90.ptx"
    shutil.copy(HOTSPOT, ptx)
    changed = _autosave("changed", ptx, state, inputs)
    with ptx.open("a") as handle:
        handle.write("// edited after the crash\n")
    entry = describe_orphan(changed)
    assert entry.ptx_status == PTX_CHANGED and "changed since the work was saved" in entry.ptx_note
    gone = tmp_path / "gone.ptx"
    shutil.copy(HOTSPOT, gone)
    missing = _autosave("missing", gone, state, inputs)
    gone.unlink()
    entry = describe_orphan(missing)
    assert entry.ptx_status == PTX_MISSING and not entry.restorable
    assert "not there any more" in entry.ptx_note


def test_an_older_autosave_is_described_from_its_state(data_home, tmp_path, edited):
    inputs, state = edited
    ptx = tmp_path / "k.ptx"
    shutil.copy(HOTSPOT, ptx)
    path = save_session(autosave_path("old"), ptx, state, owner=RecoveryOwner("old", _dead_pid()))
    os.utime(ptx, (time.time() + 60, time.time() + 60))          # the file was touched after the crash
    entry = describe_orphan(Orphan(path, load_session(path)))
    assert entry.ptx_status == PTX_UNKNOWN and "was modified after the autosave" in entry.ptx_note
    assert entry.saved == pytest.approx(path.stat().st_mtime)
    assert not entry.edits_recorded
    assert entry.edits == ("lat_comm of #47 set to 900", "fu1 of #12 set to 4+1")
    assert entry.origin_note == "not recorded (an older Warpline saved it)"


def test_work_of_another_checkout_is_named(data_home, tmp_path, edited):
    inputs, state = edited
    other = tmp_path / "other-checkout"
    (other / "engine").mkdir(parents=True)
    (other / "engine" / "session_file.py").write_text("")
    (other / "main.py").write_text("")
    (other / "samples").mkdir()
    ptx = other / "samples" / "mm.sm_90.ptx"
    shutil.copy(HOTSPOT, ptx)
    recorded = describe_orphan(_autosave("rec", ptx, state, inputs, installation=str(other)))
    assert recorded.other_installation == str(other)
    assert recorded.origin_note == f"another Warpline: {other}"
    # An older autosave does not say; the checkout its PTX file lies in does.
    inferred = describe_orphan(_autosave("inf", ptx, state, inputs, installation=None, edits=()))
    assert inferred.other_installation == str(other)
    assert "probably another Warpline checkout" in inferred.origin_note
    # Recorded, and gone since.
    shutil.rmtree(other)
    assert describe_orphan(recorded.orphan).origin_note.endswith("(no longer there)")


def test_state_edits_name_every_kind_of_change(edited):
    from dataclasses import replace

    from engine.session_file import SessionData
    from engine.state import with_iterations

    inputs, state = edited
    state = replace(with_iterations(state, 1, 7), occupancy=2, policy="gto", measured_cycles=1234.0)
    state = state.with_launch(grid=(64, 1, 1))
    fp = fingerprint_for(inputs, state, "0" * 64)
    listed = state_edits(SessionData(HOTSPOT, state, fp))
    assert listed[0].startswith("lat_comm of #47 (ld.global.f32") and listed[0].endswith("set to 900")
    assert "level-1 superstep 1 set to 7 iterations" in listed
    assert "resident blocks per SM set to 2" in listed and "scheduler policy set to gto" in listed
    assert "measured cycles set to 1234" in listed
    assert any(e.startswith("launch set to grid 64x1x1") for e in listed)


# ---------------------------------------------------------------------------- the dialog


@pytest.fixture()
def entries(data_home, tmp_path, edited):
    """Three autosaves: this Warpline's, on an unchanged file; another checkout's; one whose
    PTX file is gone."""
    inputs, state = edited
    gone = tmp_path / "gone.ptx"
    shutil.copy(HOTSPOT, gone)
    orphans = [_autosave("mine", HOTSPOT, state, inputs, saved=time.time() - 3 * 3600),
               _autosave("other", HOTSPOT, state, inputs, installation=str(tmp_path / "elsewhere")),
               _autosave("gone", gone, state, inputs)]
    gone.unlink()
    return [describe_orphan(o) for o in orphans]


def test_one_dialog_lists_every_autosave_with_what_it_is(qtbot, entries):
    from gui.recovery_dialog import Choice, RecoveryDialog

    dialog = RecoveryDialog(entries)
    qtbot.addWidget(dialog)
    dialog.show()
    assert len(dialog.cards) == 3
    mine, other, gone = dialog.cards
    assert "3 hours ago" in mine.saved.text()
    assert "Set lat_comm of #47 to 900" in mine.edits.text()
    assert "as it was when the work was saved" in mine.ptx.text() and "this Warpline" in mine.origin.text()
    assert "another Warpline" in other.origin.text() and other.origin.font().bold()
    assert "not there any more" in gone.ptx.text() and gone.ptx.font().bold()
    # Defaults: restore this Warpline's work; the rest waits; nothing is discarded unasked.
    assert [c.choice() for c in dialog.cards] == [Choice.RESTORE, Choice.LATER, Choice.LATER]
    assert not gone.buttons[Choice.RESTORE].isEnabled()
    dialog.all_buttons[Choice.RESTORE].click()
    assert [c.choice() for c in dialog.cards] == [Choice.RESTORE, Choice.RESTORE, Choice.LATER]
    assert dialog.summary.text() == "2 to restore, 1 kept for later, 0 to discard"
    gone.buttons[Choice.DISCARD].click()
    assert dialog.apply_button.text() == "Apply (discards 1)"
    dialog.apply_button.click()
    assert dialog.choices() == [Choice.RESTORE, Choice.RESTORE, Choice.DISCARD]


def test_closing_the_dialog_keeps_everything(qtbot, entries):
    from gui.recovery_dialog import Choice, RecoveryDialog

    dialog = RecoveryDialog(entries)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.all_buttons[Choice.DISCARD].click()
    dialog.reject()
    assert dialog.choices() == [Choice.LATER] * 3


def test_the_choices_are_carried_out_after_one_dialog(qtbot, tmp_path, monkeypatch, entries):
    from gui import app as app_module
    from gui.recovery_dialog import Choice, RecoveryDialog
    from tests.test_gui_support import make_window, wait_complete

    window = make_window(qtbot, tmp_path, monkeypatch, open_sample=False)
    shown = []

    def choose(dialog: RecoveryDialog) -> int:
        shown.append([card.entry.orphan.path for card in dialog.cards])
        mine, other, gone = dialog.cards
        mine.set_choice(Choice.RESTORE)
        other.set_choice(Choice.DISCARD)
        gone.set_choice(Choice.LATER)
        dialog.accept()
        return dialog.result()

    monkeypatch.setattr(RecoveryDialog, "exec", choose)
    paths = [entry.orphan.path for entry in entries]
    assert app_module._offer_recovery(window)
    wait_complete(qtbot, window)
    assert len(shown) == 1 and sorted(shown[0]) == sorted(paths)      # one dialog for all three
    by_name = {p.stem: p for p in paths}
    assert not by_name["mine"].exists()            # claimed by the window
    assert not by_name["other"].exists()           # discarded
    assert by_name["gone"].exists()                # kept for the next start
    assert window.session.state.overrides.latencies[47] == {"lat_comm": 900.0}
    assert [o.path for o in find_orphans(own_ids=[window.session.session_id])[0]] == [by_name["gone"]]


def test_a_restored_window_keeps_the_history_in_its_own_autosave(qtbot, tmp_path, monkeypatch, data_home, edited):
    from gui import app as app_module
    from tests.test_gui_support import make_window, restore_all, wait_complete

    inputs, state = edited
    _autosave("crashed", HOTSPOT, state, inputs, edits=("Set lat_comm of #47 to 900", "Set fu1 of #12 to 4+1"))
    window = make_window(qtbot, tmp_path, monkeypatch, open_sample=False)
    monkeypatch.setattr(app_module, "choose_recovery", restore_all)
    assert app_module._offer_recovery(window)
    wait_complete(qtbot, window)
    session = window.session
    session.apply(with_cell_edit(session.state, 5, "lat_comp", 3.0), "Set lat_comp of #5 to 3")
    session.autosave()
    owner = load_session(session.autosave_path).owner
    assert owner.edits == ("Set lat_comm of #47 to 900", "Set fu1 of #12 to 4+1", "Set lat_comp of #5 to 3")
    assert owner.installation == str(INSTALLATION) and owner.saved == pytest.approx(time.time(), abs=60)


def test_no_pid_or_save_time_a_file_may_hold_breaks_the_start(qtbot):
    """An autosave written by hand (or by a broken version) with an impossible PID or time is
    an orphan (no process has that PID) and its time shows as unknown; neither raises."""
    from engine.session_file import owner_alive
    from gui.recovery_dialog import saved_text

    for pid in (-1, 0, 2**31, 10**30):
        assert owner_alive(RecoveryOwner("x", pid)) is False
    assert owner_alive(RecoveryOwner("x", os.getpid()))
    assert saved_text(1e300) == "unknown" and saved_text(0) == "unknown"
    assert saved_text(time.time() - 120, now=time.time()).endswith("(2 minutes ago)")
