#!/usr/bin/env bash
# Sets everything up (first run only) and opens Warpline; with no file it opens the bundled hotspot sample.
#   ./run.sh [FILE.ptx]        GUI
#   ./run.sh info FILE.ptx     any CLI sub-command (see README)
# Paths on the command line (the PTX file, --launch, --png, --csv ...) are taken relative to the
# folder ./run.sh is run from, as for any command: only the set-up runs inside the checkout.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")" && pwd)"
(cd "$ROOT" && tools/setup_env.sh)
exec "$ROOT/.venv/bin/python" "$ROOT/main.py" "$@"
