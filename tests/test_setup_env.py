"""``tools/setup_env.sh --check-qt``: Qt is checked on the platform the app will use, never hangs,
and always says what it checked and found (the set-up never fails because of it)."""

from __future__ import annotations

import os
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


def check_qt(tmp_path: Path, wrap: list[str] | None = None, **env: str) -> tuple[int, str]:
    """Run the check in a clean environment (no display, no platform) plus ``env``."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "XDG_SESSION_TYPE")}
    base["HOME"] = str(tmp_path)  # no Xauthority of the user's
    proc = subprocess.run([*(wrap or []), "bash", str(SCRIPT), "--check-qt"], capture_output=True, text=True,
                          timeout=120, env={**base, **env}, check=False)
    return proc.returncode, proc.stdout + proc.stderr


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


def test_an_unreachable_display_is_reported_not_fatal(tmp_path):
    assert not Path("/tmp/.X11-unix/X4242").exists()
    start = time.monotonic()
    status, out = check_qt(tmp_path, DISPLAY=":4242")
    assert status == 0
    assert "Qt check (xcb; DISPLAY=:4242" in out
    assert "Qt cannot connect to the display" in out
    assert "Traceback" not in out and "Aborted" not in out
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
