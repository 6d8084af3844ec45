#!/usr/bin/env bash
# One device call (issue 12, 2026-11-25, session 11): (1) L1-hit loads whose lanes spread over 32
# banks (bench/micro run_micro.sh linediag: whether a divergent request costs its lines or the most
# lines sharing a bank), (2) stores and atomic adds at random 4-byte slots over 4-256 MB
# (bench/micro/store_scatter.cu under Nsight Compute: DRAM bytes read and written, cycles).
# Run from the repo root through the device tool:  OUT=$OUT bash tools/device/measure_bank_spread_and_scattered_stores.sh
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT/micro" "$OUT/scatter"
OUT="$OUT/micro" bash bench/micro/run_micro.sh linediag > "$OUT/micro/stdout.txt" 2>&1; echo "micro exit $?"
tail -14 "$OUT/micro/stdout.txt"
nvcc -O3 -arch=sm_90 -o /tmp/store_scatter bench/micro/store_scatter.cu > "$OUT/scatter/build.log" 2>&1 \
  || { cat "$OUT/scatter/build.log"; exit 1; }
/tmp/store_scatter > "$OUT/scatter/launches.csv" 2> "$OUT/scatter/plain.err"; echo "plain exit $?"
for run in 1 2; do
  timeout 150 ncu --csv --metrics dram__bytes_write.sum,dram__bytes_read.sum,gpc__cycles_elapsed.max \
    /tmp/store_scatter > "$OUT/scatter/ncu_run$run.csv" 2> "$OUT/scatter/ncu_run$run.err"; echo "ncu run $run exit $?"
done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/scatter/env.txt" 2>&1
ncu --version >> "$OUT/scatter/env.txt" 2>&1
grep -E 'dram__bytes|gpc__cycles' "$OUT/scatter/ncu_run1.csv" | awk -F'","' '{print $1, $5, $(NF-2), $(NF)}' | head -70
tar czf "$OUT/micro.tgz" -C "$OUT" micro && rm -rf "$OUT/micro"
tar czf "$OUT/scatter.tgz" -C "$OUT" scatter && rm -rf "$OUT/scatter"
