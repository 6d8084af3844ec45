#!/usr/bin/env bash
# One device-machine run that measures every sample launch with Nsight Compute.
# Run through the device tool from the repo root:  bash tools/device/measure.sh
# Writes into $OUT: environment.txt, launch_order.csv, ncu_cycles.csv, ncu_memory.csv, commands.txt.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
CYCLES=gpc__cycles_elapsed.max,sm__cycles_elapsed.max,gpu__time_duration.sum,\
launch__occupancy_limit_blocks,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,\
launch__occupancy_limit_warps,launch__registers_per_thread,launch__shared_mem_per_block_static,\
launch__shared_mem_per_block_dynamic,launch__shared_mem_config_size,launch__waves_per_multiprocessor,\
launch__grid_size,launch__block_size,sm__maximum_warps_per_active_cycle_pct
MEMORY=smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,\
dram__bytes_read.sum,dram__bytes_write.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,\
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
  nvcc --version | tail -2; ncu --version | tail -1; python3 --version
} > "$OUT/environment.txt" 2>&1
cat "$OUT/environment.txt"
RUN="python3 tools/device/run_launches.py --variants"
# A plain run first: it proves every launch works and records the launch order + driver occupancy.
$RUN --repeat 3 --list "$OUT/launch_order.csv" || exit 1
C1="ncu --clock-control none --csv --metrics $CYCLES $RUN --repeat 3"
C2="ncu --clock-control none --csv --metrics $MEMORY $RUN --repeat 1"
printf '%s\n%s\n' "$C1" "$C2" > "$OUT/commands.txt"
timeout 300 $C1 > "$OUT/ncu_cycles.csv" 2> "$OUT/ncu_cycles.err"; echo "ncu cycles exit $?"
timeout 200 $C2 > "$OUT/ncu_memory.csv" 2> "$OUT/ncu_memory.err"; echo "ncu memory exit $?"
wc -l "$OUT"/*.csv; tail -3 "$OUT"/*.err
