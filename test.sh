#!/usr/bin/env bash
# Sets everything up (first run only) and runs the whole test suite headless.
#   ./test.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")"
tools/setup_env.sh --test
export QT_QPA_PLATFORM=offscreen
.venv/bin/python -m ruff check .
# Architecture contracts of pyproject.toml (the engine never imports Qt; engine and gui layers import
# downward; the engine's leaf helpers stay leaves; views import no worker, loader or undo).
contracts=$(mktemp)
.venv/bin/lint-imports --no-cache > "$contracts" 2>&1 || { cat "$contracts"; rm -f "$contracts"; exit 1; }
grep -E "KEPT|kept" "$contracts" || true
rm -f "$contracts"
# Types ([tool.mypy] in pyproject.toml: strict, with per-module exceptions that only shrink); its
# cache is the checkout's .mypy_cache (ignored by git), never under the user's home.
.venv/bin/python -m mypy
# One worker per core (WARPLINE_TEST_WORKERS=0 runs in this process, as plain pytest does); a
# module's tests stay on one worker, so a module-scoped fixture (a validation run) is built once.
exec .venv/bin/python -m pytest -q -n "${WARPLINE_TEST_WORKERS:-auto}" --dist loadscope "$@"
