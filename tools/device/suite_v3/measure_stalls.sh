#!/usr/bin/env bash
# Why tuning kernels of suite v3 take the time they take: ONE device call that builds the suite's
# driver and runs every launch of the TUNING kernels of samples/v3 once under Nsight Compute with
# the stall reasons (average warps stalled per issued instruction), instructions per pipe, the
# scheduler's issue activity, L1 wavefronts (shared and global, with bank conflicts) and the
# texture pipe. Held-out kernels are never profiled: --kernel-name lists tuning kernels only
# (samples/v3/SPLIT.toml). Metric names the installed ncu does not know are dropped first
# (ncu --query-metrics), so one unknown name cannot lose the run.
#   OUT=$OUT bash tools/device/suite_v3/measure_stalls.sh  -> $OUT/<gpu>/stalls_v3.tar.gz, summary.txt
set -uo pipefail
START=$(date +%s)
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$ROOT"
OUT=${OUT:-$ROOT/out}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -oiE 'h100|h200' | tr 'A-Z' 'a-z')
DEST="$OUT/${GPU:-gpu}"
WORK=$(mktemp -d /tmp/stalls_v3.XXXXXX)
mkdir -p "$DEST"
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; ncu --version | tail -1; } > "$WORK/env.txt" 2>&1
nvcc -O2 -std=c++17 -arch=sm_90 -o "$WORK/suite" tools/device/suite_v2/driver.cu > "$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; exit 1; }
python3 tools/device/suite_v2/gen_suite.py --suite v3 manifest --out "$WORK/manifest.txt" >> "$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; exit 1; }
# tuning kernels and their families, read from the split file written before any measurement
read -r FAMILIES KERNELS < <(python3 - <<'PY'
import tomllib
split = tomllib.load(open("samples/v3/SPLIT.toml", "rb"))
fams = sorted({t.split("/")[0] for t in split["tuning"]})
names = sorted({t.split("/")[1] for t in split["tuning"]})
print(",".join(fams), "regex:^(" + "|".join(names) + ")$")
PY
)
echo "families: $FAMILIES"; echo "kernels: $KERNELS"
WANT="gpc__cycles_elapsed.max,smsp__cycles_active.avg,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__warps_active.avg.per_cycle_active,smsp__warps_eligible.avg.per_cycle_active"
for reason in barrier branch_resolving dispatch_stall drain imc_miss lg_throttle long_scoreboard math_pipe_throttle \
    membar mio_throttle misc no_instruction not_selected selected short_scoreboard sleeping tex_throttle wait; do
  WANT="$WANT,smsp__average_warps_issue_stalled_${reason}_per_issue_active.ratio"
done
WANT="$WANT,sm__inst_executed_pipe_fma.sum,sm__inst_executed_pipe_alu.sum,sm__inst_executed_pipe_xu.sum,sm__inst_executed_pipe_lsu.sum,sm__inst_executed_pipe_fmaheavy.sum"
WANT="$WANT,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed_op_shared_ld.sum"
# tried only where this ncu knows them
TRY=""
for pipe in fmalite fp16 fp64 tensor_op_hmma tensor_op_gmma uniform adu cbu tex; do
  TRY="$TRY,sm__inst_executed_pipe_${pipe}.sum"
done
TRY="$TRY,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"
TRY="$TRY,l1tex__data_pipe_lsu_wavefronts_mem_lg.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
TRY="$TRY,l1tex__t_requests_pipe_tex.sum,l1tex__f_wavefronts.sum,l1tex__lsuin_requests.sum,smsp__sass_inst_executed_op_global_red.sum,smsp__sass_inst_executed_op_global_atom.sum"
ncu --query-metrics > "$WORK/query.txt" 2>&1
METRICS=$WANT$(python3 - "$WORK/query.txt" "$TRY" <<'PY'
import sys
known = {line.split()[0] for line in open(sys.argv[1]) if line.strip() and not line.startswith(("-", "Device"))}
keep, drop = [], []
for m in sys.argv[2].split(",")[1:]:
    base = m.split(".")[0]
    (keep if base in known else drop).append(m)
print("".join("," + m for m in keep))
print("dropped:", drop, file=sys.stderr)
PY
)
echo "metrics kept: $(echo "$METRICS" | tr ',' '\n' | wc -l)"
timeout 440 ncu --clock-control none --csv --kernel-name "$KERNELS" --metrics "$METRICS" \
  "$WORK/suite" --manifest "$WORK/manifest.txt" --families "$FAMILIES" --list "$WORK/launch_order.csv" --repeat 1 \
  > "$WORK/stalls.csv" 2> "$WORK/stalls.err"
echo "ncu rc=$? rows=$(wc -l < "$WORK/stalls.csv") in $(( $(date +%s) - START )) s" | tee "$DEST/summary.txt"
tail -3 "$WORK/stalls.err" | tee -a "$DEST/summary.txt"
tar -czf "$DEST/stalls_v3.tar.gz" -C "$WORK" --exclude=./suite .
