#!/usr/bin/env bash
# Creates .venv (if needed) and installs the dependencies that pyproject.toml lists.
# Idempotent: a stamp of pyproject.toml's hash skips the install when nothing changed.
# Then checks that Qt starts on the platform the app will use (see check_qt below).
#
# Usage: tools/setup_env.sh [--test]      --test also installs the test extras (the suite runs
#                                         offscreen, so that is the platform checked)
#        tools/setup_env.sh --check-qt    only the Qt check (needs .venv)
#
# Environment: PYTHON (interpreter for the venv, default python3); QT_QPA_PLATFORM (the platform
# to check, as Qt reads it); WARPLINE_NO_APT=1 (never run apt-get: print the command instead);
# WARPLINE_QT_CHECK_TIMEOUT (seconds Qt may take to start on the display, default 15); LDD (the
# ldd to list a library's missing dependencies with).
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
  local want_test=0 stamp deps
  [ "$mode" = "--test" ] && want_test=1
  if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
  fi
  stamp=".venv/.warpline-deps-$want_test-$(sha256sum pyproject.toml | cut -c1-16)"
  [ -f "$stamp" ] && return 0
  # tomllib is Python 3.11+; on 3.10 pip's own copy of tomli reads the file the same way.
  deps=$(.venv/bin/python - "$want_test" <<'PYEOF'
import sys
try:
    import tomllib
except ModuleNotFoundError:
    from pip._vendor import tomli as tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
deps = list(project["dependencies"])
if sys.argv[1] == "1":
    deps += project["optional-dependencies"]["test"]
print("\n".join(deps))
PYEOF
)
  # shellcheck disable=SC2086
  echo "$deps" | xargs -d '\n' .venv/bin/python -m pip install -q --disable-pip-version-check
  # Warpline itself, editable: separate processes started from this environment (Dask's
  # scheduler and workers, docs/batch.md) can then import engine and gui from any folder.
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -e .
  touch "$stamp"
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

# Install Debian packages when this user may (root, or sudo without a password); otherwise, or
# with WARPLINE_NO_APT=1, print the command that would.
install_packages() {
  local sudo_cmd="" command
  if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo "; fi
  # shellcheck disable=SC2048,SC2086
  command="${sudo_cmd}apt-get install -y $(echo $*)"
  if [ "${WARPLINE_NO_APT:-0}" != 1 ] && command -v apt-get >/dev/null \
     && { [ -z "$sudo_cmd" ] || sudo -n true 2>/dev/null; }; then
    say "installing $(echo $*) ($command)"
    if ${sudo_cmd:+sudo -n} env DEBIAN_FRONTEND=noninteractive sh -c \
         "apt-get update -qq >/dev/null && apt-get install -y -qq $(echo $*) >/dev/null"; then
      return 0
    fi
    say "apt-get failed; install them with: $command"
    return 1
  fi
  say "to install them, run: $command"
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

# Check that Qt starts on the platform the app will use: QT_QPA_PLATFORM when it is set;
# offscreen for the test suite and when there is no display; with a display ($DISPLAY or
# $WAYLAND_DISPLAY), Qt's xcb plugin (Qt's default on X11, and its fallback under Wayland).
# Missing libraries are installed when possible, or the apt-get command printed; what was
# checked and found is always printed, and the check never fails the set-up.
check_qt() {
  local platform where missing packages unknown lib out status libraries start
  if [ -n "${QT_QPA_PLATFORM:-}" ]; then
    platform=${QT_QPA_PLATFORM%%[:;]*}; where="QT_QPA_PLATFORM=$QT_QPA_PLATFORM"
  elif [ "$mode" = "--test" ]; then
    platform=offscreen; where="the test suite runs offscreen"
  elif [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
    platform=xcb; where="DISPLAY=${DISPLAY:-} WAYLAND_DISPLAY=${WAYLAND_DISPLAY:-}"
  else
    platform=offscreen; where="no DISPLAY or WAYLAND_DISPLAY"
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
    say "Qt check ($platform; $where): $libraries, and Qt starts${start:+ on $start}"
    return 0
  fi
  if [ "$status" = 124 ] || [ "$status" = 137 ]; then
    say "Qt check ($platform; $where): $libraries; the display did not answer within" \
        "${WARPLINE_QT_CHECK_TIMEOUT:-15} s, so Qt was not seen starting"
  elif [[ "$out" == *"could not connect to display"* || "$out" == *"Failed to create wl_display"* ]]; then
    say "Qt check ($platform; $where): $libraries; Qt cannot connect to the display (is its" \
        "server running, and may this user use it?)"
  else
    say "Qt check ($platform; $where): Qt does not start (status $status):"
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
