#!/usr/bin/env bash
# One device call, three microbenchmarks (bench/micro/l2_kinds.cu, l2_share_rate.cu, warp_schedulers.cu):
#  * the share of L2 a randomly accessed buffer of 8-96 MB can use, per kind of access (gather,
#    RED, ATOM, store, gather + RED), under Nsight Compute with cache control off;
#  * L2's read rate per SM when each line is read by one SM against every SM reading every line
#    (LDG.128 and cp.async.cg rings of 4 and 8 stages);
#  * which scheduler issues which warp of a block: the %warpid slots each warp records, and
#    smsp__inst_executed's max / mean over the schedulers with one warp of each block busy.
#   OUT=$OUT bash tools/device/measure_l2_and_schedulers.sh
#     -> $OUT/micro.tgz: l2kinds/{ncu.csv,ncu_ops.csv,launches.csv,env.txt},
#        l2share/{ncu.csv,launches.csv}, sched/{ncu.csv,launches.csv,slots.txt}
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT/l2kinds" "$OUT/sched" "$OUT/l2share"
build=$(mktemp -d)
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; ncu --version | tail -1; } > "$OUT/l2kinds/env.txt" 2>&1
cp "$OUT/l2kinds/env.txt" "$OUT/sched/env.txt"; cp "$OUT/l2kinds/env.txt" "$OUT/l2share/env.txt"
for f in l2_kinds l2_share_rate warp_schedulers; do
  nvcc -O3 -arch=sm_90 -o "$build/$f" "bench/micro/$f.cu" > "$OUT/build_$f.log" 2>&1 || { cat "$OUT/build_$f.log"; exit 1; }
done
# warp slots first (no profiler), then the counters
"$build/warp_schedulers" > "$OUT/sched/launches.csv" 2> "$OUT/sched/slots.txt"
timeout 200 ncu --csv --cache-control none --clock-control none \
  --metrics gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum,smsp__inst_executed.max,smsp__inst_executed.avg,smsp__inst_executed.min,smsp__issue_active.max,smsp__issue_active.avg \
  "$build/warp_schedulers" > "$OUT/sched/ncu.csv" 2> "$OUT/sched/ncu.err"
echo "sched ncu rc=$? rows=$(wc -l < "$OUT/sched/ncu.csv")"
"$build/l2_share_rate" > "$OUT/l2share/launches.csv"
timeout 120 ncu --csv --cache-control none --clock-control none \
  --metrics gpc__cycles_elapsed.max,sm__cycles_active.avg,lts__t_bytes.sum,l1tex__m_xbar2l1tex_read_sectors.sum,lts__t_sector_hit_rate.pct \
  "$build/l2_share_rate" > "$OUT/l2share/ncu.csv" 2> "$OUT/l2share/ncu.err"
echo "l2share ncu rc=$? rows=$(wc -l < "$OUT/l2share/ncu.csv")"
"$build/l2_kinds" > "$OUT/l2kinds/launches.csv"
timeout 200 ncu --csv --cache-control none --clock-control none \
  --metrics gpc__cycles_elapsed.max,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_red.sum,lts__t_sectors_op_atom.sum,lts__t_sectors_op_write.sum \
  "$build/l2_kinds" > "$OUT/l2kinds/ncu.csv" 2> "$OUT/l2kinds/ncu.err"
echo "l2kinds ncu rc=$? rows=$(wc -l < "$OUT/l2kinds/ncu.csv")"
# per-operation hit rates (a second pass: an unknown metric name must not cost the first)
timeout 200 ncu --csv --cache-control none --clock-control none \
  --metrics lts__t_sector_op_read_hit_rate.pct,lts__t_sector_op_red_hit_rate.pct,lts__t_sector_op_atom_hit_rate.pct,lts__t_sector_op_write_hit_rate.pct \
  "$build/l2_kinds" > "$OUT/l2kinds/ncu_ops.csv" 2> "$OUT/l2kinds/ncu_ops.err"
echo "l2kinds ops ncu rc=$? rows=$(wc -l < "$OUT/l2kinds/ncu_ops.csv")"
tar czf "$OUT/micro.tgz" -C "$OUT" l2kinds l2share sched $(cd "$OUT" && ls build_*.log) && rm -rf "$OUT/l2kinds" "$OUT/l2share" "$OUT/sched" "$OUT"/build_*.log
ls -la "$OUT"
