#!/usr/bin/env bash
# Creates .venv (if needed) and installs the dependencies that pyproject.toml lists.
# Idempotent: a stamp of pyproject.toml's hash skips the install when nothing changed.
# Usage: tools/setup_env.sh [--test]   (--test also installs the test extras)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
want_test=0
[ "${1:-}" = "--test" ] && want_test=1

if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=".venv/.warpline-deps-$want_test-$(sha256sum pyproject.toml | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  deps=$(.venv/bin/python - "$want_test" <<'PYEOF'
import sys, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
deps = list(project["dependencies"])
if sys.argv[1] == "1":
    deps += project["optional-dependencies"]["test"]
print("\n".join(deps))
PYEOF
)
  # shellcheck disable=SC2086
  echo "$deps" | xargs -d '\n' .venv/bin/python -m pip install -q --disable-pip-version-check
  touch "$stamp"
fi

# Qt's offscreen and xcb platforms need a few system libraries that a bare Debian may lack.
if ! QT_QPA_PLATFORM=offscreen .venv/bin/python -c "from PySide6.QtWidgets import QApplication; QApplication([])" \
     >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
    echo "Installing the system libraries Qt needs (apt-get)..." >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 \
      libfontconfig1 libdbus-1-3 libglib2.0-0 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 \
      libxcb-shape0 libxcb-xinerama0 libxcb-randr0 libxcb-render-util0 libxcb-image0 >/dev/null
  else
    echo "warning: PySide6 cannot start; install Qt's system libraries (libegl1, libxkbcommon0, ...)" >&2
  fi
fi
