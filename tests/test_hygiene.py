"""The test suite never writes where the user's work lives (tests/conftest.py gives every run a
home and a temporary folder of its own, and fails a run that changed the real ones)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests import conftest

ROOT = Path(__file__).resolve().parents[1]


def test_this_run_has_a_home_and_temporary_folder_of_its_own():
    from PySide6.QtCore import QSettings

    from engine.desktop import config_home, data_home
    from engine.profiles import USER_DIR
    from engine.resources import ptxas_cache_dir
    from engine.sass.map_cache import cache_dir
    from engine.session_file import recovery_dir
    from gui.main_window import APP_NAME

    run = conftest.RUN_DIR.resolve()
    for name in ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "TMPDIR"):
        assert Path(os.environ[name]).resolve().is_relative_to(run), name
    for folder in (recovery_dir(), cache_dir(), ptxas_cache_dir(), data_home(), config_home(),
                   Path(tempfile.gettempdir()), Path(QSettings(APP_NAME, APP_NAME).fileName()),
                   USER_DIR.expanduser()):
        assert folder.resolve().is_relative_to(run), folder
    assert not conftest.REAL_HOME.resolve().is_relative_to(run)


def _tree(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))}


def _probe_run(tmp_path: Path, leak: bool) -> tuple[subprocess.CompletedProcess, Path, dict]:
    """A pytest of its own on tests/hygiene_probe.py, with a made-up "real" home that already
    holds a user's settings, an autosave and a cache entry."""
    home = tmp_path / "real-home"
    for path, text in ((".config/Warpline/Warpline.conf", "[General]\nuser=1\n"),
                       (".local/share/warpline/recovery/mine.warpline", "{}\n"),
                       (".cache/warpline/sass/entry.json", "{}\n")):
        (home / path).parent.mkdir(parents=True, exist_ok=True)
        (home / path).write_text(text)
    (tmp_path / "tmp").mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("XDG_") and k not in ("WARPLINE_KEEP_TEST_HOME", "WARPLINE_HOME_GUARD")}
    env.update(HOME=str(home), TMPDIR=str(tmp_path / "tmp"), QT_QPA_PLATFORM="offscreen",
               WARPLINE_PROBE_LEAK="1" if leak else "0")
    before = _tree(home)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/hygiene_probe.py"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    return proc, home, before


def test_a_run_leaves_the_real_home_exactly_as_it_was(tmp_path):
    proc, home, before = _probe_run(tmp_path, leak=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed, 1 skipped" in proc.stdout, proc.stdout
    assert _tree(home) == before
    # A run that passed removes its own folder from the temporary folder it was given.
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_run_that_writes_to_the_real_home_fails_and_names_the_path(tmp_path):
    proc, home, before = _probe_run(tmp_path, leak=True)
    leak = home / ".cache" / "warpline" / "leak"
    assert leak.is_file()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout
    assert f"created: {leak}" in proc.stdout and f"modified: {leak.parent}" in proc.stdout
    assert "this run's home and temporary files are kept in" in proc.stdout
