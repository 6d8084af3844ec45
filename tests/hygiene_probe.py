"""Run by tests/test_hygiene.py in a pytest of its own (not collected by the suite: the name does
not start with ``test_``): the writes a test run makes through Warpline's own code paths, which
must all land in the run's home. With ``WARPLINE_PROBE_LEAK=1`` one test writes into the real
cache folder on purpose, to show that the run then fails."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from tests import conftest

HOTSPOT = Path(__file__).resolve().parents[1] / "samples" / "ptx" / "hotspot.sm_90.ptx"


def _inside(path: str | os.PathLike[str], folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(folder.resolve())


def test_window_settings_autosave_and_caches_land_in_the_runs_home(qtbot):
    from engine.evaluation import state_for
    from engine.inputs import resolve_inputs
    from engine.resources import ptxas_cache_dir
    from engine.sass.map_cache import cache_dir
    from engine.session_file import autosave_path, new_session_id, save_session
    from gui.main_window import MainWindow

    window = MainWindow()                   # the settings a real start uses (QSettings, native format)
    qtbot.addWidget(window)
    window.settings.setValue("probe/value", 1)
    window.settings.sync()
    assert _inside(window.settings.fileName(), conftest.TEST_HOME), window.settings.fileName()
    assert Path(window.settings.fileName()).is_file()
    inputs = resolve_inputs(HOTSPOT, use_ptxas=False)
    autosave = save_session(autosave_path(new_session_id()), HOTSPOT, state_for(inputs))
    for written in (autosave, cache_dir(), ptxas_cache_dir(), tempfile.mkstemp()[1]):
        assert _inside(written, conftest.RUN_DIR), written
    cache_dir().mkdir(parents=True, exist_ok=True)
    ptxas_cache_dir().mkdir(parents=True, exist_ok=True)


@pytest.mark.skipif(os.environ.get("WARPLINE_PROBE_LEAK") != "1", reason="writes to the real home on purpose")
def test_a_write_to_the_real_cache_folder():
    leak = conftest.REAL_CACHE_HOME / "warpline" / "leak"
    leak.parent.mkdir(parents=True, exist_ok=True)
    leak.write_text("written by a test\n")
