#!/usr/bin/env bash
# Why some tuning kernels of suite v2 take longer than the simulator says: ONE device call that
# builds the suite's driver and runs the chosen tuning kernels once under Nsight Compute with the
# warp-state (stall reasons), scheduler and compute-workload sections and the shared-memory
# wavefront counts. Held-out kernels are not profiled (ncu --kernel-name keeps tuning ones only).
#   bash tools/device/measure_stalls.sh      -> $OUT/<gpu>/stalls.csv, env.txt, build.log
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
OUT=${OUT:-$ROOT/out}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -oiE 'h100|h200' | tr 'A-Z' 'a-z')
DEST="$OUT/${GPU:-gpu}"
WORK=$(mktemp -d /tmp/stalls.XXXXXX)
mkdir -p "$DEST"
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; ncu --version | tail -1; } > "$DEST/env.txt" 2>&1
nvcc -O2 -std=c++17 -arch=sm_90 -o "$WORK/suite_v2" tools/device/suite_v2/driver.cu > "$DEST/build.log" 2>&1 || { cat "$DEST/build.log"; exit 1; }
python3 tools/device/suite_v2/gen_suite.py manifest --out "$WORK/manifest.txt" >> "$DEST/build.log" 2>&1 || exit 1
FAMILIES=${FAMILIES:-nbody,triangular,localarray,atomics,strided,gridstride,stencil3d,gather}
KERNELS=${KERNELS:-'regex:nbody_tiled|nbody_naive|collatz|local_sort8|atomic_spread_global|col_sum|row_sum|gs_saxpy|stencil3d_7pt_zmarch|embedding_gather'}
# stall reasons: average warps stalled for each reason per issued instruction (they sum to the
# warp cycles per issued instruction)
STALLS=""
for reason in barrier branch_resolving dispatch_stall drain imc_miss lg_throttle long_scoreboard math_pipe_throttle \
    membar mio_throttle misc no_instruction not_selected selected short_scoreboard sleeping tex_throttle wait; do
  STALLS="$STALLS,smsp__average_warps_issue_stalled_${reason}_per_issue_active.ratio"
done
PIPES="sm__inst_executed_pipe_fma.sum,sm__inst_executed_pipe_alu.sum,sm__inst_executed_pipe_xu.sum,sm__inst_executed_pipe_lsu.sum,sm__inst_executed_pipe_fmaheavy.sum"
timeout 420 ncu --clock-control none --csv --kernel-name "$KERNELS" \
  --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
  --metrics "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed_op_shared_ld.sum,gpc__cycles_elapsed.max,${PIPES}${STALLS}" \
  "$WORK/suite_v2" --manifest "$WORK/manifest.txt" --families "$FAMILIES" --list "$DEST/launch_order.csv" \
  > "$DEST/stalls.csv" 2> "$DEST/stalls.err"
echo "ncu rc=$? rows=$(wc -l < "$DEST/stalls.csv")"
tail -3 "$DEST/stalls.err"
