#!/usr/bin/env bash
# Device calls (issue 12, session 9): DRAM latency beside warps that gather (one random 4-byte
# word per lane, 32 sectors per request) at rising intensity, as `loaded` measures it beside
# streaming warps (bench/micro run_micro.sh scattered).
# Run from the repo root through the device tool:  OUT=$OUT bash tools/device/measure_dram_latency_beside_gathers.sh
set -uo pipefail
OUT=${OUT:-out}
bash tools/device/micro_subset.sh scattered 30
# What DRAM delivers for those sectors: the same run under ncu (DRAM bytes read and the time of
# each k_loaded launch; --clock-control none keeps the clocks of the timed runs)
mkdir -p "$OUT/ncu"
bash bench/micro/build.sh /tmp/micro_ncu > "$OUT/ncu/build.log" 2>&1
timeout 240 ncu --clock-control none --csv --metrics dram__bytes_read.sum,gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read.sum \
  /tmp/micro_ncu/micro scattered > "$OUT/ncu/ncu_run1.csv" 2> "$OUT/ncu/ncu_run1.err"; echo "ncu exit $?"
grep -c k_loaded "$OUT/ncu/ncu_run1.csv"; grep k_loaded "$OUT/ncu/ncu_run1.csv" | awk -F'","' '{print $1, $(NF-2), $(NF)}' | head -40
