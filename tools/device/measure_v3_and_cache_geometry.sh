#!/usr/bin/env bash
# ONE device call (about 8 minutes): the cache-geometry microbenchmarks behind engine/caches
# (bench/micro/micro.cu 'geometry': L1 and L2 pointer-chase rings, two runs) and validation suite v3
# (tools/device/suite_v3/measure.sh: correctness check, plain runs, ncu cycles and memory passes).
#
#   bash tools/device/measure_v3_and_cache_geometry.sh
#
# Files back: $OUT/micro-<gpu>/geometry.tar.gz (run1.csv, run2.csv, env.txt, build.log),
# $OUT/micro-<gpu>/geometry_stdout.txt, and suite v3's $OUT/<gpu-name>/{suite_v3.tar.gz,summary.txt,check.txt}.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
OUT=${OUT:-$ROOT/out}
export OUT PYTHONUNBUFFERED=1
GPU_RAW=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
SHORT=$(printf '%s' "$GPU_RAW" | grep -oiE 'h100|h200' | head -1 | tr 'A-Z' 'a-z')
MDIR="$OUT/micro-${SHORT:-gpu}"
WORK=$(mktemp -d /tmp/geometry.XXXXXX)
mkdir -p "$MDIR"
t0=$(date +%s)
OUT="$WORK" timeout 180 bash bench/micro/run_micro.sh geometry > "$WORK/stdout.txt" 2>&1
echo "geometry: rc=$? in $(( $(date +%s) - t0 )) s"
tail -80 "$WORK/stdout.txt" > "$MDIR/geometry_stdout.txt"
tar -czf "$MDIR/geometry.tar.gz" -C "$WORK" .
SUITE_BUDGET_S="${SUITE_BUDGET_S:-330}" bash tools/device/suite_v3/measure.sh
