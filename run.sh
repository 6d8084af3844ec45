#!/usr/bin/env bash
# Sets everything up (first run only) and opens Warpline; with no file it opens the bundled hotspot sample.
#   ./run.sh [FILE.ptx]        GUI
#   ./run.sh info FILE.ptx     any CLI sub-command (see README)
set -euo pipefail
cd "$(dirname "$0")"
tools/setup_env.sh
exec .venv/bin/python main.py "$@"
