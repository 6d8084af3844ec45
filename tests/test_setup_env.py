"""``tools/setup_env.sh``: Qt is checked on the platform the app will use, once per environment,
never hangs, and always says what it checked and found (the set-up never fails because of it);
system packages are installed only when the user agrees, otherwise the command is printed.

The script runs from a copy of the project in a temporary folder whose .venv borrows the
project's installed packages (its lib folder is a link), so that nothing it remembers lands in
the checkout."""

from __future__ import annotations

import hashlib
import os
import pty
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tools" / "setup_env.sh"

pytestmark = pytest.mark.skipif(not (ROOT / ".venv" / "bin" / "python").exists() or shutil.which("bash") is None,
                                reason="needs bash and the project's .venv")


def project_copy(tmp_path: Path) -> Path:
    """tools/setup_env.sh and pyproject.toml in ``tmp_path/project``, with a .venv that uses the
    project's interpreter and installed packages and whose dependencies count as installed."""
    copy = tmp_path / "project"
    if copy.exists():
        return copy
    (copy / "tools").mkdir(parents=True)
    shutil.copy2(SCRIPT, copy / "tools" / "setup_env.sh")
    shutil.copy2(ROOT / "pyproject.toml", copy / "pyproject.toml")
    venv = ROOT / ".venv"
    (copy / ".venv" / "bin").mkdir(parents=True)
    shutil.copy2(venv / "pyvenv.cfg", copy / ".venv" / "pyvenv.cfg")
    (copy / ".venv" / "bin" / "python").symlink_to(os.path.realpath(venv / "bin" / "python"))
    (copy / ".venv" / "lib").symlink_to(venv / "lib")
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    for extras in (0, 1):
        (copy / ".venv" / f".warpline-deps-{extras}-{digest}").touch()
    return copy


def clean_env(tmp_path: Path, **env: str) -> dict[str, str]:
    """No display, no platform, no answer about apt, plus ``env``."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "XDG_SESSION_TYPE", "WARPLINE_APT",
                         "WARPLINE_NO_APT")}
    base["HOME"] = str(tmp_path)  # no Xauthority of the user's
    return {**base, **env}


def setup_env(tmp_path: Path, *args: str, wrap: list[str] | None = None, stdin: int | None = subprocess.DEVNULL,
              **env: str) -> tuple[int, str]:
    script = project_copy(tmp_path) / "tools" / "setup_env.sh"
    proc = subprocess.run([*(wrap or []), "bash", str(script), *args], capture_output=True, text=True,
                          timeout=120, env=clean_env(tmp_path, **env), stdin=stdin, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def check_qt(tmp_path: Path, wrap: list[str] | None = None, **env: str) -> tuple[int, str]:
    """Run the check in a clean environment (no display, no platform) plus ``env``."""
    return setup_env(tmp_path, "--check-qt", wrap=wrap, **env)


def fake_ldd(tmp_path: Path, *missing: str) -> str:
    """An ldd that reports ``missing`` as not found for every file."""
    script = tmp_path / "ldd"
    lines = "".join(f'echo "\t{lib} => not found"\n' for lib in missing)
    script.write_text(f"#!/bin/sh\n{lines}echo \"\tlibc.so.6 => /lib/libc.so.6 (0x0)\"\n")
    script.chmod(0o755)
    return str(script)


def test_without_a_display_the_offscreen_platform_is_checked(tmp_path):
    status, out = check_qt(tmp_path)
    assert status == 0
    assert "Qt check (offscreen; no DISPLAY or WAYLAND_DISPLAY)" in out
    assert "Qt starts on offscreen" in out


def test_the_platform_qt_is_told_to_use_wins(tmp_path):
    status, out = check_qt(tmp_path, DISPLAY=":4242", QT_QPA_PLATFORM="offscreen")
    assert status == 0 and "Qt check (offscreen; QT_QPA_PLATFORM=offscreen)" in out


def skip_without_xcb_libraries(out: str) -> None:
    """Qt's xcb plugin cannot load on a machine without its system libraries (the check names
    them, as the last test here asserts): what it says of a display cannot be seen there."""
    if "missing system libraries" in out:
        pytest.skip("this machine lacks the system libraries of Qt's xcb plugin")


def test_an_unreachable_display_is_reported_not_fatal(tmp_path):
    assert not Path("/tmp/.X11-unix/X4242").exists()
    start = time.monotonic()
    status, out = check_qt(tmp_path, DISPLAY=":4242")
    assert status == 0
    assert "Qt check (xcb; DISPLAY=:4242" in out
    assert "Traceback" not in out and "Aborted" not in out
    skip_without_xcb_libraries(out)
    assert "Qt cannot connect to the display" in out
    assert time.monotonic() - start < 60


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="abstract UNIX sockets are Linux's")
def test_a_display_that_never_answers_does_not_hang_the_set_up(tmp_path):
    # An X server at :4243 that accepts the connection and never replies (an abstract socket,
    # where libxcb looks first on Linux).
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind("\0/tmp/.X11-unix/X4243")
    except OSError:
        pytest.skip("display :4243 is taken")
    server.listen(4)
    try:
        status, out = check_qt(tmp_path, DISPLAY=":4243", WARPLINE_QT_CHECK_TIMEOUT="3")
    finally:
        server.close()
    assert status == 0
    skip_without_xcb_libraries(out)
    assert "the display did not answer within 3 s" in out


def test_missing_libraries_are_named_with_the_command_that_installs_them(tmp_path):
    ldd = fake_ldd(tmp_path, "libxcb-cursor.so.0", "libxcb-icccm.so.4", "libweird.so.3")
    status, out = check_qt(tmp_path, DISPLAY=":4242", LDD=ldd, WARPLINE_NO_APT="1")
    assert status == 0
    assert "missing system libraries: libweird.so.3 libxcb-cursor.so.0 libxcb-icccm.so.4" in out
    sudo = "" if os.getuid() == 0 else "sudo "
    assert f"to install them, run: {sudo}apt-get install -y libxcb-cursor0 libxcb-icccm4" in out
    assert "no known package for libweird.so.3" in out
    assert "the libraries it needs are not all installed" in out


@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="xvfb-run is not installed")
def test_on_a_real_display_the_xcb_plugin_starts(tmp_path):
    status, out = check_qt(tmp_path, wrap=["xvfb-run", "-a"])
    assert status == 0
    assert "Qt check (xcb; DISPLAY=:" in out
    assert "Qt starts on xcb" in out, out


def test_run_sh_takes_paths_relative_to_where_it_is_run(tmp_path):
    """``./run.sh info k.ptx`` from another folder reads that folder's file, and an export writes
    there, not into the checkout."""
    shutil.copy(ROOT / "tests" / "corpus" / "triton" / "vector_add.cc90.ptx", tmp_path / "k.ptx")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["QT_QPA_PLATFORM"] = "offscreen"
    proc = subprocess.run([str(ROOT / "run.sh"), "export", "k.ptx", "--profile", "h100", "--no-ptxas",
                           "--predictions-csv", "out.csv"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out.csv").is_file() and not (ROOT / "out.csv").exists()


def qt_stamps(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (project_copy(tmp_path) / ".venv").glob(".warpline-qt-*"))


def test_the_qt_check_runs_once_per_environment(tmp_path):
    status, first = setup_env(tmp_path, QT_QPA_PLATFORM="offscreen")
    assert status == 0 and "Qt starts on offscreen (remembered for this environment" in first
    (stamp,) = qt_stamps(tmp_path)
    import PySide6

    version = PySide6.__version__
    assert stamp.startswith(".warpline-qt-") and stamp.endswith(f"-{version}-offscreen"), stamp
    status, second = setup_env(tmp_path, QT_QPA_PLATFORM="offscreen")
    assert status == 0 and second == ""                   # nothing checked, nothing to say
    status, other = setup_env(tmp_path, QT_QPA_PLATFORM="minimal")
    assert status == 0 and "Qt check (minimal; QT_QPA_PLATFORM=minimal)" in other   # another platform
    status, again = check_qt(tmp_path, QT_QPA_PLATFORM="offscreen")
    assert status == 0 and "Qt starts on offscreen" in again   # --check-qt always checks


def fake_apt(tmp_path: Path) -> tuple[str, Path]:
    """A PATH whose apt-get (and sudo, for a user other than root) only write down how they were
    called, and the file they write to."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    log = tmp_path / "apt.log"
    (bin_dir / "apt-get").write_text(f'#!/bin/sh\necho "apt-get $*" >> {log}\n')
    (bin_dir / "sudo").write_text(f'#!/bin/sh\nif [ "$1" = -n ]; then shift; fi\necho "sudo" >> {log}\nexec "$@"\n')
    for tool in ("apt-get", "sudo"):
        (bin_dir / tool).chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ['PATH']}", log


def missing_cursor(tmp_path: Path, **env: str) -> tuple[int, str, str]:
    path, log = fake_apt(tmp_path)
    ldd = fake_ldd(tmp_path, "libxcb-cursor.so.0")
    status, out = check_qt(tmp_path, DISPLAY=":4242", LDD=ldd, PATH=path, **env)
    return status, out, log.read_text() if log.exists() else ""


def test_without_a_terminal_or_consent_apt_get_is_not_run(tmp_path):
    status, out, calls = missing_cursor(tmp_path)
    assert status == 0 and calls == ""
    sudo = "" if os.getuid() == 0 else "sudo "
    assert (f"to install them, run: {sudo}apt-get install -y libxcb-cursor0 (or run the set-up with "
            "WARPLINE_APT=yes to have it run that)") in out


def test_warpline_apt_no_never_runs_apt_get(tmp_path):
    status, out, calls = missing_cursor(tmp_path, WARPLINE_APT="no")
    assert status == 0 and calls == "" and "(not run: WARPLINE_APT=no)" in out


def test_warpline_apt_yes_runs_it_and_says_what(tmp_path):
    status, out, calls = missing_cursor(tmp_path, WARPLINE_APT="yes")
    assert status == 0
    assert "apt-get update\napt-get install -y libxcb-cursor0\n" in calls
    assert "running: " in out and "apt-get install -y libxcb-cursor0" in out
    assert "still missing: libxcb-cursor.so.0" in out       # (the fake installs nothing)


@pytest.mark.parametrize("answer, runs", [("y\n", True), ("n\n", False), ("\n", False)])
def test_on_a_terminal_the_user_is_asked(tmp_path, answer, runs):
    path, log = fake_apt(tmp_path)
    ldd = fake_ldd(tmp_path, "libxcb-cursor.so.0")
    main, terminal = pty.openpty()
    try:
        os.write(main, answer.encode())
        status, out = check_qt_on(tmp_path, terminal, DISPLAY=":4242", LDD=ldd, PATH=path)
    finally:
        os.close(main)
        os.close(terminal)
    calls = log.read_text() if log.exists() else ""
    assert status == 0
    assert ("apt-get install -y libxcb-cursor0" in calls) == runs, (out, calls)
    if not runs:
        assert "not installed; to install them later, run:" in out


def check_qt_on(tmp_path: Path, stdin: int, **env: str) -> tuple[int, str]:
    return setup_env(tmp_path, "--check-qt", stdin=stdin, **env)
