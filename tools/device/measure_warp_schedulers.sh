#!/usr/bin/env bash
# ONE device call (under a minute): bench/micro/warp_schedulers.cu, which scheduler (SMSP) each
# warp of a block issues through (%warpid mod 4 on SM 0, three waves) and what it costs when only
# warp 0 of each block works (against the same work spread over the block's warps).
#   OUT=$OUT bash tools/device/measure_warp_schedulers.sh   -> $OUT/warp_schedulers.csv, env.txt
set -euo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; nvcc --version | tail -2; } > "$OUT/env.txt" 2>&1
WORK=$(mktemp -d)
nvcc -O3 -arch=sm_90 -o "$WORK/warp_schedulers" bench/micro/warp_schedulers.cu
"$WORK/warp_schedulers" > "$OUT/warp_schedulers.csv"
grep '^skew' "$OUT/warp_schedulers.csv"
awk -F, '/^map/ && $9 < 40 {print}' "$OUT/warp_schedulers.csv" | head -5
