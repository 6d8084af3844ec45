#!/usr/bin/env bash
# One device call: the L2 read rate of LDG.128 against cp.async.cg (16 B per lane, a 4-stage ring)
# and the texture pipe's rate for L1-resident 1-D fetches (bench/micro/l2_async_tex.cu), under
# Nsight Compute with cache control off (the buffer stays in L2 between launches).
#   OUT=$OUT bash tools/device/measure_l2_async_tex.sh -> $OUT/l2tex/{ncu.csv,launches.csv,sass.txt,env.txt}
set -uo pipefail
OUT=${OUT:-out}/l2tex
mkdir -p "$OUT"
build=$(mktemp -d)
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; ncu --version | tail -1; } > "$OUT/env.txt" 2>&1
nvcc -O3 -arch=sm_90 -o "$build/l2at" bench/micro/l2_async_tex.cu > "$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; }
cuobjdump -sass "$build/l2at" | grep -E "Function|LDGSTS|TEX|LDG|BAR|DEPBAR" > "$OUT/sass.txt" 2>&1
"$build/l2at" > "$OUT/launches.csv"
timeout 300 ncu --csv --cache-control none --clock-control none \
  --metrics gpc__cycles_elapsed.max,sm__cycles_active.avg,lts__t_bytes.sum,lts__t_sectors_op_read.sum,l1tex__t_requests_pipe_tex.sum,l1tex__f_wavefronts.sum,sm__inst_executed_pipe_tex.sum,l1tex__t_sector_hit_rate.pct,smsp__inst_executed.sum \
  "$build/l2at" > "$OUT/ncu.csv" 2> "$OUT/ncu.err"
echo "ncu rc=$? rows=$(wc -l < "$OUT/ncu.csv")"
