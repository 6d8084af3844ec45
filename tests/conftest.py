"""Suite-wide set-up: a home of the run's own, and garbage collected on the main thread.

Hygiene: the tests never write where the user's work lives. At import (before any test module,
and so before the engine or Qt reads them) ``HOME``, ``XDG_DATA_HOME``, ``XDG_CONFIG_HOME``,
``XDG_CACHE_HOME``, ``XDG_STATE_HOME`` and ``TMPDIR`` point into a folder made for this run, so
QSettings (``$XDG_CONFIG_HOME/Warpline/Warpline.conf``), the ptxas and SASS caches
(``$XDG_CACHE_HOME/warpline``), the crash-recovery autosaves (``$XDG_DATA_HOME/warpline``), the
user's own profiles and every temporary file of the run land there; subprocesses inherit it. The
folders Warpline writes to in the *real* home are listed (names, sizes, modification times) here
and again when the run ends: any difference fails the run, naming the paths (with
``WARPLINE_HOME_GUARD=warn`` it is only reported: on an account where Warpline itself runs
meanwhile, its own writes would show too). The run's folder is removed when a run that passed
exits, and kept (its path printed) after one that failed.

Garbage: a window turns Python's automatic cycle collection off (gui/main_thread_gc.py: a
background thread must never destroy Qt objects). Once the test is over its windows' workers
are gone, so the leftovers are collected here, on the main thread, and automatic collection
comes back on for the tests that make no window (the next window turns it off again).
"""

from __future__ import annotations

import atexit
import gc
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# The user's folders as they were before this run changed the environment.
REAL_HOME = Path(os.path.expanduser("~"))
REAL_DATA_HOME = Path(os.environ.get("XDG_DATA_HOME") or REAL_HOME / ".local" / "share")
REAL_CONFIG_HOME = Path(os.environ.get("XDG_CONFIG_HOME") or REAL_HOME / ".config")
REAL_CACHE_HOME = Path(os.environ.get("XDG_CACHE_HOME") or REAL_HOME / ".cache")

# Everything Warpline (and Qt on its behalf) writes under a home: recovery autosaves and user
# profiles, QSettings (organisation "Warpline"), the ptxas/SASS caches, the desktop entry, the
# MIME package and the default-application lists --install-desktop may change.
WATCHED = (
    REAL_DATA_HOME / "warpline",
    REAL_DATA_HOME / "applications" / "warpline.desktop",
    REAL_DATA_HOME / "applications" / "mimeapps.list",
    REAL_DATA_HOME / "mime" / "packages" / "warpline-ptx.xml",
    REAL_CONFIG_HOME / "Warpline",
    REAL_CONFIG_HOME / "warpline",
    REAL_CONFIG_HOME / "mimeapps.list",
    REAL_CACHE_HOME / "warpline",
)


def snapshot(paths: tuple[Path, ...] = WATCHED) -> dict[str, tuple[str, int, int]]:
    """Every file and folder at or under ``paths``: path -> (kind, size, mtime in ns). Absent
    paths are absent from the answer, so a folder that appears is a difference too."""
    found: dict[str, tuple[str, int, int]] = {}

    def add(path: Path) -> None:
        try:
            st = path.lstat()
        except OSError:
            return
        kind = "dir" if path.is_dir() and not path.is_symlink() else "file"
        found[str(path)] = (kind, st.st_size if kind == "file" else 0, st.st_mtime_ns)
        if kind == "dir":
            try:
                children = sorted(path.iterdir())
            except OSError:
                return
            for child in children:
                add(child)

    for path in paths:
        add(path)
    return found


def differences(before: dict[str, tuple[str, int, int]], after: dict[str, tuple[str, int, int]]) -> list[str]:
    """One line per path that appeared, went or changed between two snapshots."""
    lines = []
    for path in sorted(set(before) | set(after)):
        if path not in before:
            lines.append(f"created: {path}")
        elif path not in after:
            lines.append(f"removed: {path}")
        elif before[path] != after[path]:
            lines.append(f"modified: {path}")
    return lines


BEFORE = snapshot()

# The run's own home and temporary folder (made inside the system's temporary folder).
RUN_DIR = Path(tempfile.mkdtemp(prefix="warpline-tests-"))
TEST_HOME = RUN_DIR / "home"
TEST_TMP = RUN_DIR / "tmp"
_ENVIRONMENT = {
    "HOME": TEST_HOME,
    "XDG_DATA_HOME": TEST_HOME / ".local" / "share",
    "XDG_CONFIG_HOME": TEST_HOME / ".config",
    "XDG_CACHE_HOME": TEST_HOME / ".cache",
    "XDG_STATE_HOME": TEST_HOME / ".local" / "state",
    "TMPDIR": TEST_TMP,
}
for _name, _path in _ENVIRONMENT.items():
    _path.mkdir(parents=True, exist_ok=True)
    os.environ[_name] = str(_path)
tempfile.tempdir = None          # tempfile caches the folder it found first: look again
_REMOVE_AT_EXIT: list[Path] = []


@atexit.register
def _remove_the_runs_folder() -> None:
    # At exit, not at the session's end: the exit handlers registered after this module was
    # imported run first (multiprocessing removes its own temporary folder in one of them).
    for folder in _REMOVE_AT_EXIT:
        shutil.rmtree(folder, ignore_errors=True)


def pytest_report_header(config: pytest.Config) -> str:
    return f"warpline: HOME, XDG_*_HOME and TMPDIR of this run are under {RUN_DIR}"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    changed = differences(BEFORE, snapshot())
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")

    def say(line: str) -> None:
        if reporter is not None:
            reporter.write_line(line)
        else:
            print(line)

    if changed:
        warn_only = os.environ.get("WARPLINE_HOME_GUARD") == "warn"
        say(f"warpline: {'WARNING: ' if warn_only else ''}the user's own folders changed during the run "
            f"(tests must write only under {RUN_DIR}):")
        for line in changed:
            say(f"  {line}")
        say("  (a Warpline window or command, or another checkout's tests, writing there meanwhile shows "
            "here too: where that happens, run the suite with HOME set to an empty folder, or with "
            "WARPLINE_HOME_GUARD=warn to report such changes without failing)")
        if not warn_only:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if session.exitstatus == pytest.ExitCode.OK and not os.environ.get("WARPLINE_KEEP_TEST_HOME"):
        _REMOVE_AT_EXIT.append(RUN_DIR)
    else:
        say(f"warpline: this run's home and temporary files are kept in {RUN_DIR}")


@pytest.fixture(autouse=True)
def _collect_garbage_on_the_main_thread():
    yield
    if not gc.isenabled():
        gc.collect()
        gc.enable()


# Modules whose parametrised tests share no costly fixture and take minutes together (a Many-BSP
# prediction of every sample and corpus file at three or four grids): under test.sh's
# ``--dist loadscope`` each of their tests is a scope of its own, so that both workers share them
# instead of one worker running the whole module while the other idles at the end of the run.
SPLIT_MODULES = ("tests/test_manybsp_never_nonsense.py", "tests/test_manybsp_star.py")


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    if config.getoption("dist", None) != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class _SplitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.split("::", 1)[0] in SPLIT_MODULES:
                return nodeid
            return super()._split_scope(nodeid)

    return _SplitScheduling(config, log)
