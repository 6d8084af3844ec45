#!/usr/bin/env bash
# One device call (issue 12 and 13 measurements, 2026-11-24): packed-half instruction figures from
# bench/micro, and the block-overlap sweep of Many-BSP* (each 1-D sample launch at 1, 2, 4, 8, 16
# and 32 blocks per SM, one wave or less, measured by Nsight Compute).
# Run from the repo root through the device tool:  OUT=$OUT bash tools/device/measure_packed_half_and_block_overlap.sh
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT/micro" "$OUT/overlap"
export PYTHONUNBUFFERED=1
if [ "${SKIP_MICRO:-0}" != 1 ]; then
  OUT="$OUT/micro" bash bench/micro/run_micro.sh half > "$OUT/micro/stdout.txt" 2>&1; echo "micro exit $?"
  tail -12 "$OUT/micro/stdout.txt"
fi
RUN="python3 tools/device/run_launches.py --per-sm 1,2,4,8,16,32"
$RUN --repeat 3 --list "$OUT/overlap/launch_order.csv" > "$OUT/overlap/plain.txt" 2>&1 || { tail "$OUT/overlap/plain.txt"; exit 1; }
C1="ncu --clock-control none --csv --metrics gpc__cycles_elapsed.max,sm__cycles_elapsed.max,launch__grid_size,launch__occupancy_limit_blocks,launch__waves_per_multiprocessor $RUN --repeat 3"
echo "$C1" > "$OUT/overlap/commands.txt"
timeout 400 $C1 > "$OUT/overlap/ncu_cycles.csv" 2> "$OUT/overlap/ncu_cycles.err"; echo "ncu exit $?"
wc -l "$OUT"/overlap/*.csv; tail -3 "$OUT/overlap/ncu_cycles.err"
# The device tool brings back at most 8 files: the overlap folder travels as one archive.
tar czf "$OUT/overlap.tgz" -C "$OUT" overlap && rm -rf "$OUT/overlap"
