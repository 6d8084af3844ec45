#!/usr/bin/env bash
# One device call (issue 12, 2026-11-24, session 8): tensor-core instruction figures from
# bench/micro (run_micro.sh tensor), and the L2 write-back of stores (bench/micro/store_wb.cu
# under Nsight Compute: DRAM bytes written and read per launch of 2-256 MB of stores).
# Run from the repo root through the device tool:  OUT=$OUT bash tools/device/measure_tensor_cores_and_store_writeback.sh
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT/micro" "$OUT/wb"
OUT="$OUT/micro" bash bench/micro/run_micro.sh tensor > "$OUT/micro/stdout.txt" 2>&1; echo "micro exit $?"
tail -6 "$OUT/micro/stdout.txt"
nvcc -O3 -arch=sm_90 -o /tmp/store_wb bench/micro/store_wb.cu > "$OUT/wb/build.log" 2>&1 || { cat "$OUT/wb/build.log"; exit 1; }
/tmp/store_wb > "$OUT/wb/launches.csv" 2> "$OUT/wb/plain.err"; echo "plain exit $?"
for run in 1 2; do
  timeout 200 ncu --csv --metrics dram__bytes_write.sum,dram__bytes_read.sum,gpc__cycles_elapsed.max \
    /tmp/store_wb > "$OUT/wb/ncu_run$run.csv" 2> "$OUT/wb/ncu_run$run.err"; echo "ncu run $run exit $?"
done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/wb/env.txt" 2>&1
ncu --version >> "$OUT/wb/env.txt" 2>&1
grep -c k_ "$OUT/wb/ncu_run1.csv"; grep dram__bytes_write "$OUT/wb/ncu_run1.csv" | head -50 | awk -F'","' '{print $5, $(NF)}' | tail -45
# the device tool brings back few files: each folder travels as one archive
tar czf "$OUT/micro.tgz" -C "$OUT" micro && rm -rf "$OUT/micro"
tar czf "$OUT/wb.tgz" -C "$OUT" wb && rm -rf "$OUT/wb"
