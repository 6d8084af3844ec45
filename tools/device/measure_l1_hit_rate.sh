#!/usr/bin/env bash
# L1's request rate for global loads that hit, on the device machine in ONE call (about a minute):
# bench/micro/l1_hit_rate.cu built for sm_90 and each of its patterns run under Nsight Compute
# (the warm second launch): SM cycles, L1 requests / sectors / hit rate / wavefronts, the LSU
# pipe, issue activity and the stalls on L1 (lg_throttle) and on load results (long_scoreboard).
#   OUT=$OUT bash tools/device/measure_l1_hit_rate.sh  -> $OUT/<gpu>/l1_hit_rate.csv, env.txt, sass.txt
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
OUT=${OUT:-$ROOT/out}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -oiE 'h100|h200' | tr 'A-Z' 'a-z')
DEST="$OUT/${GPU:-gpu}"
mkdir -p "$DEST"
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; ncu --version | tail -1; } > "$DEST/env.txt" 2>&1
nvcc -O3 -arch=sm_90 -o /tmp/l1_hit_rate bench/micro/l1_hit_rate.cu > "$DEST/build.log" 2>&1 || { cat "$DEST/build.log"; exit 1; }
# the mixed patterns again with their far table in L2 (8 MB): L1 misses that hit L2
nvcc -O3 -arch=sm_90 -DBIG_MB=8 -o /tmp/l1_hit_rate_l2 bench/micro/l1_hit_rate.cu >> "$DEST/build.log" 2>&1 || { cat "$DEST/build.log"; exit 1; }
cuobjdump -sass /tmp/l1_hit_rate > "$DEST/sass.txt" 2>&1
WANT="gpc__cycles_elapsed.max,sm__cycles_elapsed.avg,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.sum,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__warps_active.avg.per_cycle_active,lts__t_sector_hit_rate.pct"
TRY="l1tex__data_pipe_lsu_wavefronts_mem_lg.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__m_xbar2l1tex_read_sectors.sum,l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,l1tex__lsu_writeback_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,l1tex__f_wavefronts.sum"
ncu --query-metrics > /tmp/query.txt 2>&1
KEEP=$(python3 - /tmp/query.txt "$TRY" <<'PY'
import sys
known = {line.split()[0] for line in open(sys.argv[1]) if line.strip() and not line.startswith(("-", "Device"))}
print("".join("," + m for m in sys.argv[2].split(",") if m.split(".")[0] in known))
PY
)
echo "metrics: $WANT$KEEP" > "$DEST/metrics.txt"
: > "$DEST/l1_hit_rate.csv"
PATTERNS=${PATTERNS:-"line bcast half pair pair_m8 line_m8 line_m4 line_m2"}
L2_PATTERNS=${L2_PATTERNS:-"pair_m8 line_m8 line_m4 line_m2"}
# measure BINARY PREFIX PATTERN...: each pattern once plainly, then its warm launch under ncu;
# the rows of l1_hit_rate.csv start with PREFIX + pattern
measure() {
  local binary=$1 prefix=$2 p
  shift 2
  for p in "$@"; do
    "$binary" "$p" >> "$DEST/plain.txt" 2>&1
    timeout 100 ncu --clock-control none --csv --launch-skip 1 --launch-count 1 --metrics "$WANT$KEEP" \
      "$binary" "$p" > "/tmp/ncu_$prefix$p.csv" 2> "/tmp/ncu_$prefix$p.err"
    echo "$prefix$p rc=$?" >> "$DEST/summary.txt"
    sed "s/^/$prefix$p,/" "/tmp/ncu_$prefix$p.csv" >> "$DEST/l1_hit_rate.csv"
    tail -2 "/tmp/ncu_$prefix$p.err" >> "$DEST/summary.txt"
  done
}
# shellcheck disable=SC2086  # the pattern lists split into words
measure /tmp/l1_hit_rate "" $PATTERNS
# shellcheck disable=SC2086
measure /tmp/l1_hit_rate_l2 l2_ $L2_PATTERNS
cat "$DEST/summary.txt"
