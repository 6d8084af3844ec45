#!/usr/bin/env bash
# One device call, two microbenchmarks (bench/micro/l1_carveout.cu, l1_store_hits.cu):
#  * the L1 capacity a launch has beside its dynamic shared memory: a one-thread ld.global.ca
#    pointer chase over rings of 8-320 KB in blocks of 0-227 KB dynamic shared memory;
#  * what Nsight Compute's L1 sector hit rate counts for stores, a store then load of the same
#    address, and a local array (lookup hits and sectors per memory space and operation).
#   OUT=$OUT bash tools/device/measure_l1_carveout.sh
#     -> $OUT/micro.tgz: l1carve/{chase.csv,chase.err,env.txt}, l1store/{ncu.csv,launches.csv}
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT/l1carve" "$OUT/l1store"
build=$(mktemp -d)
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; ncu --version | tail -1; } > "$OUT/l1carve/env.txt" 2>&1
cp "$OUT/l1carve/env.txt" "$OUT/l1store/env.txt"
for f in l1_carveout l1_store_hits; do
  nvcc -O3 -arch=sm_90 -o "$build/$f" "bench/micro/$f.cu" > "$OUT/build_$f.log" 2>&1 || { cat "$OUT/build_$f.log"; exit 1; }
done
t0=$(date +%s)
timeout 200 "$build/l1_carveout" > "$OUT/l1carve/chase.csv" 2> "$OUT/l1carve/chase.err"
echo "l1_carveout rc=$? rows=$(wc -l < "$OUT/l1carve/chase.csv") in $(( $(date +%s) - t0 )) s"; cat "$OUT/l1carve/chase.err"
"$build/l1_store_hits" > "$OUT/l1store/launches.csv"
M=l1tex__t_sector_hit_rate.pct,l1tex__t_sectors.sum,l1tex__t_sectors_lookup_hit.sum
for space in global local; do
  for op in ld st red atom; do
    M="$M,l1tex__t_sectors_pipe_lsu_mem_${space}_op_${op}.sum,l1tex__t_sectors_pipe_lsu_mem_${space}_op_${op}_lookup_hit.sum"
  done
done
timeout 200 ncu --csv --cache-control all --clock-control none --metrics "$M,dram__bytes_read.sum,dram__bytes_write.sum" \
  "$build/l1_store_hits" > "$OUT/l1store/ncu.csv" 2> "$OUT/l1store/ncu.err"
echo "l1store ncu rc=$? rows=$(wc -l < "$OUT/l1store/ncu.csv")"
grep '^"' "$OUT/l1store/ncu.csv" | python3 -c "
import csv,sys
for r in csv.DictReader(sys.stdin):
    if int(r['ID']) < 7 and r['Metric Value'] not in ('0', '0.00'):
        print(r['ID'], r['Kernel Name'].split('(')[0], r['Metric Name'], r['Metric Value'])
" 
awk -F, 'NR>1 && $3>=196608 && $3<=262144' "$OUT/l1carve/chase.csv" | head -60
tar czf "$OUT/micro.tgz" -C "$OUT" l1carve l1store $(cd "$OUT" && ls build_*.log) && rm -rf "$OUT/l1carve" "$OUT/l1store" "$OUT"/build_*.log
ls -la "$OUT"
