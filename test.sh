#!/usr/bin/env bash
# Sets everything up (first run only) and runs the whole test suite headless.
#   ./test.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")"
tools/setup_env.sh --test
export QT_QPA_PLATFORM=offscreen
.venv/bin/python -m ruff check .
exec .venv/bin/python -m pytest -q "$@"
