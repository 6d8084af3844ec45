#!/usr/bin/env bash
# Nsight Compute's source page of sample launches (issue 32: measured samples and stall reasons per
# SASS and CUDA line, read by `predict --source-counters`). ONE device call:
#   bash tools/device/measure_source.sh     -> $OUT/<gpu>/source_sass.csv, source_cuda.csv,
#                                              launch_order.csv, environment.txt, commands.txt
# The samples' sm_90 PTX, assembled by ptxas -lineinfo and loaded by tools/device/run_launches.py,
# once per launch, with the SourceCounters and WarpStateStats sections (warp-state sampling per PC).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
OUT=${OUT:-$ROOT/out}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -oiE 'h100|h200' | tr 'A-Z' 'a-z')
DEST="$OUT/source-${GPU:-gpu}"
WORK=$(mktemp -d /tmp/source.XXXXXX)
mkdir -p "$DEST"
export PYTHONUNBUFFERED=1
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
  nvcc --version | tail -2; ncu --version | tail -1; } > "$DEST/environment.txt" 2>&1
ONLY=${ONLY:-"hotspot mm/case transpose copy"}
RUN="python3 tools/device/run_launches.py --only $ONLY --repeat 1 --lineinfo"
$RUN --list "$DEST/launch_order.csv" || exit 1
PROFILE="ncu --clock-control none --section SourceCounters --section WarpStateStats --import-source yes -f -o $WORK/source $RUN"
SASS="ncu --import $WORK/source.ncu-rep --page source --csv --print-source sass"
# the PTX names its CUDA files relative to samples/ptx ("../copy.cu"): resolved by full path here
SOURCES=$(ls "$ROOT"/samples/*.cu | paste -sd, -)
CUDA="ncu --import $WORK/source.ncu-rep --page source --csv --print-source cuda --resolve-source-file $SOURCES"
printf '%s\n%s\n%s\n' "$PROFILE" "$SASS" "$CUDA" > "$DEST/commands.txt"
timeout 400 $PROFILE > "$DEST/profile.log" 2>&1; echo "ncu profile exit $?"
timeout 120 $SASS > "$DEST/source_sass.csv" 2> "$DEST/source_sass.err"; echo "sass page exit $?"
timeout 120 $CUDA > "$DEST/source_cuda.csv" 2> "$DEST/source_cuda.err"; echo "cuda page exit $?"
wc -l "$DEST"/*.csv; head -c 600 "$DEST/source_sass.csv"; for f in "$DEST"/*.err; do tail -n 3 "$f"; done
