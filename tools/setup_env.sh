#!/usr/bin/env bash
# Creates .venv (if needed) and installs the dependencies that pyproject.toml lists, saying what
# it installs and showing pip's progress (one line per package). Idempotent: a stamp of
# pyproject.toml's hash skips the install when nothing changed.
# Then checks, once per environment, that Qt starts on the platform the app will use (see
# check_qt below): the check is remembered in .venv by the PySide6 version and the platform.
#
# Usage: tools/setup_env.sh [--test]      --test also installs the test extras (the suite runs
#                                         offscreen, so that is the platform checked)
#        tools/setup_env.sh --check-qt    only the Qt check, done again even when remembered (needs .venv)
#
# System packages (the libraries Qt needs) are installed with apt-get only when the user agrees:
# asked on a terminal, or WARPLINE_APT=yes; otherwise (WARPLINE_APT=no, WARPLINE_NO_APT=1, or no
# terminal to ask on, as in CI) the exact command is printed and the set-up goes on.
#
# Environment: PYTHON (interpreter for the venv, default python3); QT_QPA_PLATFORM (the platform
# to check, as Qt reads it); WARPLINE_APT=yes|no (install system packages without asking, or
# never); WARPLINE_QT_CHECK_TIMEOUT (seconds Qt may take to start on the display, default 15);
# LDD (the ldd to list a library's missing dependencies with).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
mode=${1:-}
case "$mode" in
  ""|--test|--check-qt) ;;
  *) echo "usage: tools/setup_env.sh [--test | --check-qt]" >&2; exit 2 ;;
esac

say() { echo "setup_env: $*" >&2; }

install_dependencies() {
  local want_test=0 stamp hash deps count
  [ "$mode" = "--test" ] && want_test=1
  if [ ! -x .venv/bin/python ]; then
    if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      say "Warpline needs Python 3.11 or newer; $PY is $("$PY" --version 2>&1) (set PYTHON=python3.11 or newer)"
      exit 1
    fi
    say "creating the virtual environment .venv with $("$PY" --version 2>&1) (first run only)"
    "$PY" -m venv .venv
  fi
  hash=$(sha256sum pyproject.toml | cut -c1-16)
  stamp=".venv/.warpline-deps-$want_test-$hash"
  [ -f "$stamp" ] && return 0
  # The test extras include everything the app needs.
  [ "$want_test" = 0 ] && [ -f ".venv/.warpline-deps-1-$hash" ] && return 0
  deps=$(.venv/bin/python - "$want_test" <<'PYEOF'
import sys
import tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
deps = list(project["dependencies"])
if sys.argv[1] == "1":
    deps += project["optional-dependencies"]["test"]
print("\n".join(deps))
PYEOF
)
  count=$(echo "$deps" | grep -c .)
  say "installing $count packages from pyproject.toml into .venv$([ "$want_test" = 1 ] && echo ' (with the test extras)'):"
  echo "$deps" | sed 's/^/    /' >&2
  say "pip reports each package as it goes; the first time takes a few minutes (Qt, numba and the CUDA tools are large)"
  echo "$deps" | xargs -d '\n' .venv/bin/python -m pip install --disable-pip-version-check --progress-bar on
  # Warpline itself, editable: separate processes started from this environment (Dask's
  # scheduler and workers, docs/batch.md) can then import engine and gui from any folder.
  say "installing Warpline itself into .venv (editable: pip install -e .)"
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -e .
  touch "$stamp"
  say "dependencies installed (skipped from now on, until pyproject.toml changes)"
}

# ---------------------------------------------------------------------------- Qt's libraries
# The Debian/Ubuntu package of each system library that PySide6's Qt loads and a bare system may
# lack (from 6.5 on, Qt's xcb plugin needs libxcb-cursor0, which few systems have).
declare -A PACKAGE_OF=(
  [libxcb-cursor.so.0]=libxcb-cursor0 [libxcb-icccm.so.4]=libxcb-icccm4
  [libxcb-keysyms.so.1]=libxcb-keysyms1 [libxcb-shape.so.0]=libxcb-shape0
  [libxcb-xinerama.so.0]=libxcb-xinerama0 [libxcb-randr.so.0]=libxcb-randr0
  [libxcb-render-util.so.0]=libxcb-render-util0 [libxcb-image.so.0]=libxcb-image0
  [libxcb-util.so.1]=libxcb-util1 [libxcb-xkb.so.1]=libxcb-xkb1 [libxcb-shm.so.0]=libxcb-shm0
  [libxcb-sync.so.1]=libxcb-sync1 [libxcb-xfixes.so.0]=libxcb-xfixes0
  [libxcb-render.so.0]=libxcb-render0 [libxcb.so.1]=libxcb1 [libX11-xcb.so.1]=libx11-xcb1
  [libX11.so.6]=libx11-6 [libxkbcommon.so.0]=libxkbcommon0
  [libxkbcommon-x11.so.0]=libxkbcommon-x11-0 [libEGL.so.1]=libegl1 [libGL.so.1]=libgl1
  [libOpenGL.so.0]=libopengl0 [libGLX.so.0]=libglx0 [libfontconfig.so.1]=libfontconfig1
  [libfreetype.so.6]=libfreetype6 [libdbus-1.so.3]=libdbus-1-3 [libglib-2.0.so.0]=libglib2.0-0
  [libgthread-2.0.so.0]=libglib2.0-0 [libwayland-client.so.0]=libwayland-client0
  [libwayland-cursor.so.0]=libwayland-cursor0 [libwayland-egl.so.1]=libwayland-egl1
)
# What the offscreen check installed before it listed the missing libraries (kept for systems
# where ldd is not there to list them).
BASE_PACKAGES="libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 libdbus-1-3
  libglib2.0-0 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 libxcb-xinerama0
  libxcb-randr0 libxcb-render-util0 libxcb-image0"

# The files Qt loads for a platform: PySide6's QtWidgets module and the platform plugin.
qt_files() {
  .venv/bin/python - "$1" <<'PYEOF'
import os, sys
import PySide6
root = os.path.dirname(PySide6.__file__)
plugins = os.path.join(root, "Qt", "plugins", "platforms")
names = {"wayland": ["libqwayland.so", "libqwayland-generic.so"]}.get(sys.argv[1], [f"libq{sys.argv[1]}.so"])
print(os.path.join(root, "QtWidgets.abi3.so"))
for name in names:
    if os.path.exists(os.path.join(plugins, name)):
        print(os.path.join(plugins, name))
PYEOF
}

# The shared libraries those files need and the system lacks, one per line.
missing_libraries() {
  local file
  command -v "${LDD:-ldd}" >/dev/null || return 0
  while read -r file; do
    "${LDD:-ldd}" "$file" 2>/dev/null | awk '$2 == "=>" && $3 == "not" {print $1}' || true
  done < <(qt_files "$1") | sort -u
}

# Install Debian packages with apt-get, only when the user agrees: WARPLINE_APT=yes, or "y" to a
# question asked when standard input is a terminal. Otherwise (WARPLINE_APT=no, WARPLINE_NO_APT=1,
# no terminal, no apt-get, or root rights that cannot be had) print the command that would.
install_packages() {
  local sudo_cmd="" command consent=${WARPLINE_APT:-} answer
  if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo "; fi
  # shellcheck disable=SC2048,SC2086
  command="${sudo_cmd}apt-get install -y $(echo $*)"
  [ "${WARPLINE_NO_APT:-0}" = 1 ] && consent=no
  if ! command -v apt-get >/dev/null; then
    say "to install them, run: $command (apt-get is not on this system: install your distribution's" \
        "packages of the libraries named above)"
    return 1
  fi
  case "$consent" in
    yes|y|1) ;;
    no|n|0)
      say "to install them, run: $command (not run: WARPLINE_APT=no)"
      return 1 ;;
    "")
      if [ ! -t 0 ]; then
        say "to install them, run: $command (or run the set-up with WARPLINE_APT=yes to have it run that)"
        return 1
      fi
      read -r -p "setup_env: install them now with: $command ? [y/N] " answer || answer=""
      case "$answer" in
        y|Y|yes|YES|Yes) ;;
        *) say "not installed; to install them later, run: $command"; return 1 ;;
      esac ;;
    *)
      say "WARPLINE_APT=$consent: expected yes or no; to install them, run: $command"
      return 1 ;;
  esac
  if [ -n "$sudo_cmd" ] && ! sudo -n true 2>/dev/null && [ ! -t 0 ]; then
    say "to install them, run: $command (sudo needs a password and there is no terminal to ask on)"
    return 1
  fi
  say "running: ${sudo_cmd}apt-get update && $command"
  # apt-get's own progress goes to the terminal (standard error, so that nothing mixes with output).
  if ${sudo_cmd:+sudo} env DEBIAN_FRONTEND=noninteractive sh -c \
       "apt-get update && apt-get install -y $(echo $*)" >&2; then
    return 0
  fi
  say "apt-get failed; install them with: $command"
  return 1
}

# Start a QApplication on platform $1 (bounded: an X server that never answers must not hang the
# set-up). Prints Qt's messages; the status is 124 on a timeout.
start_qt() {
  local limit=${WARPLINE_QT_CHECK_TIMEOUT:-15}
  if ! command -v timeout >/dev/null; then
    echo "(not started: the 'timeout' command is missing)"
    return 0
  fi
  # (Qt aborts when a platform fails: no core file, and the shell's "Aborted" goes to $out too.)
  (ulimit -c 0; QT_QPA_PLATFORM="$1" timeout -k 2 "$limit" .venv/bin/python -c \
    "from PySide6.QtWidgets import QApplication; QApplication([]); print('started')") 2>&1
}

# Where a passed Qt check is remembered: .venv/.warpline-qt-<PySide6 distribution-version>-<platform>,
# the version read from its dist-info folder (without starting Python). Empty when PySide6 is
# not installed.
qt_stamp() {
  local info
  # (named PySide6_Essentials-6.x or, by newer wheels, pyside6_essentials-6.x)
  info=$(compgen -G ".venv/lib/python*/site-packages/[Pp]y[Ss]ide6*-*.dist-info" | sort | head -n 1) || true
  [ -n "$info" ] || return 0
  info=${info##*/}
  echo ".venv/.warpline-qt-${info%.dist-info}-$1"
}

# Check that Qt starts on the platform the app will use: QT_QPA_PLATFORM when it is set;
# offscreen for the test suite and when there is no display; with a display ($DISPLAY or
# $WAYLAND_DISPLAY), Qt's xcb plugin (Qt's default on X11, and its fallback under Wayland).
# Missing libraries are installed when possible, or the apt-get command printed; what was
# checked and found is always printed, and the check never fails the set-up.
check_qt() {
  local platform where missing packages unknown lib out status libraries start stamp
  if [ -n "${QT_QPA_PLATFORM:-}" ]; then
    platform=${QT_QPA_PLATFORM%%[:;]*}; where="QT_QPA_PLATFORM=$QT_QPA_PLATFORM"
  elif [ "$mode" = "--test" ]; then
    platform=offscreen; where="the test suite runs offscreen"
  elif [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
    platform=xcb; where="DISPLAY=${DISPLAY:-} WAYLAND_DISPLAY=${WAYLAND_DISPLAY:-}"
  else
    platform=offscreen; where="no DISPLAY or WAYLAND_DISPLAY"
  fi
  # Once Qt was seen starting on this platform with this PySide6, later starts skip the check
  # (it takes over a second); --check-qt checks again.
  stamp=$(qt_stamp "$platform")
  if [ "$mode" != "--check-qt" ] && [ -n "$stamp" ] && [ -f "$stamp" ]; then
    return 0
  fi
  if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import PySide6" 2>/dev/null; then
    say "Qt check ($platform): PySide6 is not installed in .venv; run tools/setup_env.sh first"
    return 0
  fi
  missing=$(missing_libraries "$platform")
  if [ -n "$missing" ]; then
    packages=""; unknown=""
    for lib in $missing; do
      if [ -n "${PACKAGE_OF[$lib]:-}" ]; then packages="$packages ${PACKAGE_OF[$lib]}"
      else unknown="$unknown $lib"; fi
    done
    packages=$(echo "$packages" | tr ' ' '\n' | sort -u | tr '\n' ' ')
    say "Qt check ($platform; $where): missing system libraries:" $missing
    [ -n "$unknown" ] && say "no known package for$unknown (apt-file search NAME finds one)"
    if [ -n "${packages// /}" ] && install_packages $packages; then
      missing=$(missing_libraries "$platform")
      if [ -n "$missing" ]; then say "still missing:" $missing; else say "installed:" $packages; fi
    fi
  fi
  libraries="the libraries it needs are ${missing:+not all }installed"
  if [ "$platform" != offscreen ] && [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
    say "Qt check ($platform; $where): $libraries; not started (no display)"
    return 0
  fi
  # Under Wayland alone Qt picks its platform itself (wayland, or xcb through XWayland).
  start=$platform
  if [ -z "${QT_QPA_PLATFORM:-}" ] && [ "$platform" = xcb ] && [ -z "${DISPLAY:-}" ]; then start=""; fi
  status=0
  out=$(start_qt "$start") || status=$?
  if [ "$status" = 0 ] && [[ "$out" == *started* ]]; then
    say "Qt check ($platform; $where): $libraries, and Qt starts${start:+ on $start}" \
        "(remembered for this environment; tools/setup_env.sh --check-qt checks again)"
    [ -n "$stamp" ] && touch "$stamp"
    return 0
  fi
  if [ "$status" = 124 ] || [ "$status" = 137 ]; then
    say "Qt check ($platform; $where): $libraries; the display did not answer within" \
        "${WARPLINE_QT_CHECK_TIMEOUT:-15} s, so Qt was not seen starting"
  elif [[ "$out" == *"could not connect to display"* || "$out" == *"Failed to create wl_display"* ]]; then
    say "Qt check ($platform; $where): $libraries; Qt cannot connect to the display (is its" \
        "server running, and may this user use it?)"
  else
    say "Qt check ($platform; $where): $libraries; Qt does not start (status $status):"
    echo "$out" | grep -v -e '^started$' -e 'Aborted' | head -n 12 | sed 's/^/    /' >&2
    if ! command -v "${LDD:-ldd}" >/dev/null; then  # nothing listed what is missing
      say "ldd is not there to name the missing libraries; the usual ones:"
      install_packages $BASE_PACKAGES || true
    fi
  fi
  return 0
}

if [ "$mode" != "--check-qt" ]; then
  install_dependencies
fi
check_qt
