#!/usr/bin/env bash
# One device call: whether MUFU, DFMA and HMMA belong to the SM's schedulers or to the whole SM
# (bench/micro/pipe_schedulers.cu: every warp of a block busy against only warp 0, with blocks of
# 1, 2 and 4 warps), timed with CUDA events, then the same program under Nsight Compute for the
# cycles and each scheduler's instructions (max / mean over the GPU's schedulers).
#   OUT=$OUT bash tools/device/measure_pipe_schedulers.sh
#     -> $OUT/pipe_schedulers.csv, ncu.csv, env.txt
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
build=$(mktemp -d)
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; ncu --version | tail -1; } > "$OUT/env.txt" 2>&1
nvcc -O3 -arch=sm_90 -o "$build/pipe_schedulers" bench/micro/pipe_schedulers.cu > "$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; }
"$build/pipe_schedulers" > "$OUT/pipe_schedulers.csv"
echo "timed rc=$? rows=$(wc -l < "$OUT/pipe_schedulers.csv")"
timeout 240 ncu --csv --clock-control none \
  --metrics gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum,smsp__inst_executed.max,smsp__inst_executed.avg,smsp__issue_active.max,smsp__issue_active.avg \
  "$build/pipe_schedulers" > "$OUT/ncu.csv" 2> "$OUT/ncu.err"
echo "ncu rc=$? rows=$(wc -l < "$OUT/ncu.csv")"
cat "$OUT/pipe_schedulers.csv"
