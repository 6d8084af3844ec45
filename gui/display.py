"""Which Qt platform Warpline starts on, decided before Qt is: Qt aborts the process (SIGABRT,
"could not connect to display", "Reinstalling the application may fix this problem") when the
platform it picks cannot start, which no caller can catch.

* Pictures drawn for the command line (``main.py export --png``, ``validate --plot``, ...) never
  need a display: they are drawn on the offscreen platform unless ``QT_QPA_PLATFORM`` names one
  (:func:`use_offscreen_for_pictures`), so a stale ``DISPLAY`` (an ssh session, a closed X
  server) changes nothing and the pictures are the same on every machine.
* The window needs a display. On Linux, :func:`display_problem` says in words why none can be
  reached (nothing set, or the X server / Wayland compositor named is not there), so that the
  app can say so in one line instead of Qt aborting.
"""

from __future__ import annotations

import os
import socket
import sys

CONNECT_TIMEOUT_S = 2.0       # a TCP X server (ssh -X) that does not answer within this is none


def use_offscreen_for_pictures() -> None:
    """Draw on the offscreen platform, unless the user named one in ``QT_QPA_PLATFORM``."""
    if not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"


def display_problem(environ: dict[str, str] | None = None) -> str | None:
    """Why the window could not start on this machine's display (None when it can, as far as
    can be told without starting Qt: a display server answers). Only Linux is checked, and
    only when ``QT_QPA_PLATFORM`` leaves the choice to Qt."""
    env = os.environ if environ is None else environ
    if not sys.platform.startswith("linux") or env.get("QT_QPA_PLATFORM"):
        return None
    wayland, x11 = env.get("WAYLAND_DISPLAY", ""), env.get("DISPLAY", "")
    if not wayland and not x11:
        return "no display: neither DISPLAY nor WAYLAND_DISPLAY is set"
    if wayland and _wayland_reachable(wayland, env.get("XDG_RUNTIME_DIR", "")):
        return None
    if x11 and _x11_reachable(x11):
        return None
    named = " and ".join(f"{k}={v}" for k, v in (("WAYLAND_DISPLAY", wayland), ("DISPLAY", x11)) if v)
    return f"no display answers at {named} (is its server running, and may this user use it?)"


def _wayland_reachable(name: str, runtime_dir: str) -> bool:
    path = name if os.path.isabs(name) else os.path.join(runtime_dir, name)
    return _unix_connects(path) if runtime_dir or os.path.isabs(name) else False


def _x11_reachable(display: str) -> bool:
    """DISPLAY is ``[host]:number[.screen]``; a local one is a UNIX socket (Linux: an abstract
    one first, as libxcb tries), a remote one TCP port 6000 + number."""
    host, sep, rest = display.rpartition(":")
    if not sep:
        return False
    number = rest.split(".", 1)[0]
    if not number.isdigit():
        return False
    if host.startswith("unix") or host == "":
        path = f"/tmp/.X11-unix/X{number}"
        return _unix_connects("\0" + path) or _unix_connects(path)
    if host.startswith("/"):          # the socket's own path
        return _unix_connects(display)
    try:
        with socket.create_connection((host, 6000 + int(number)), timeout=CONNECT_TIMEOUT_S):
            return True
    except OSError:
        return False


def _unix_connects(path: str) -> bool:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT_S)
    try:
        sock.connect(path)
        return True
    except OSError:
        return False
    finally:
        sock.close()
