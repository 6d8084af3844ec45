#!/usr/bin/env bash
# One device call (issue 34, 2026-11-27): passes of the compare-and-swap retry loop that ptxas makes of
# a shared-memory float atomicAdd, per address pattern and block size (bench/micro/shared_atomic_cas.cu),
# counted by Nsight Compute: executed instructions, shared atomics executed, cycles.
# Run from the repo root through the device tool:  OUT=$OUT bash tools/device/measure_shared_atomics.sh
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
build=$(mktemp -d)
nvcc -O3 -arch=sm_90 -o "$build/sac" bench/micro/shared_atomic_cas.cu > "$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; }
cuobjdump -sass "$build/sac" > "$OUT/shared_atomic_cas.sass" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/env.txt" 2>&1
"$build/sac" 64 > "$OUT/plain_run.txt" 2>&1; echo "plain run exit $?"
M=smsp__inst_executed.sum,gpc__cycles_elapsed.max,smsp__sass_inst_executed_op_shared_atom.sum,smsp__sass_inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
echo "ncu --clock-control none --csv --metrics $M $build/sac 64" > "$OUT/commands.txt"
timeout 300 ncu --clock-control none --csv --metrics "$M" "$build/sac" 64 > "$OUT/ncu.csv" 2> "$OUT/ncu.err"
rc=$?
echo "ncu exit $rc"
if [ $rc -ne 0 ] || [ "$(grep -c inst_executed "$OUT/ncu.csv")" -lt 10 ]; then
  M2=smsp__inst_executed.sum,gpc__cycles_elapsed.max
  echo "ncu --clock-control none --csv --metrics $M2 $build/sac 64" >> "$OUT/commands.txt"
  timeout 300 ncu --clock-control none --csv --metrics "$M2" "$build/sac" 64 > "$OUT/ncu_basic.csv" 2> "$OUT/ncu_basic.err"
  echo "ncu basic exit $?"
fi
wc -l "$OUT"/*.csv; tail -3 "$OUT/ncu.err"
