#!/usr/bin/env bash
# One device call (issue 12, session 8): Nsight Compute's stall and pipe breakdown of the
# tuning-part launches the simulator misses most (wmma_gemm_smem, aos_advance,
# atomic_spread_global, stencil2d_5pt_tiled, scan_partials, collatz, nbody_tiled), to find the
# mechanism each lacks. Held-out kernels are excluded by name.
# Run from the repo root through the device tool:  OUT=$OUT bash tools/device/diagnose_worst_tuning_launches.sh
set -uo pipefail
OUT=${OUT:-out}
WORK=$(mktemp -d /tmp/diag.XXXXXX)
mkdir -p "$OUT"
nvcc -O2 -std=c++17 -arch=sm_90 -o "$WORK/suite_v2" tools/device/suite_v2/driver.cu > "$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; exit 1; }
python3 tools/device/suite_v2/gen_suite.py manifest --out "$WORK/manifest.txt" >> "$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; exit 1; }
FAM=tensorcore,aos_soa,atomics,stencil2d,scan,triangular,nbody
KERN='regex:wmma_gemm_smem|aos_advance|atomic_spread_global|stencil2d_5pt_tiled|scan_partials|collatz|nbody_tiled'
timeout 420 ncu --clock-control none --csv --page details \
  --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \
  --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section InstructionStats \
  --section LaunchStats --kernel-name "$KERN" \
  "$WORK/suite_v2" --manifest "$WORK/manifest.txt" --list "$WORK/order.csv" --repeat 1 --families "$FAM" \
  > "$WORK/ncu_sections.csv" 2> "$WORK/ncu_sections.err"
echo "ncu exit $?"; tail -3 "$WORK/ncu_sections.err"; wc -l "$WORK/ncu_sections.csv"
nvidia-smi --query-gpu=name,driver_version --format=csv > "$WORK/env.txt" 2>&1
tar czf "$OUT/diag.tgz" -C "$WORK" --exclude=./suite_v2 .
