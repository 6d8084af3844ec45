#!/usr/bin/env bash
# One device-machine run that measures every sample launch with Nsight Compute.
# Run through the device tool from the repo root:  bash tools/device/measure.sh
# Writes into $OUT: environment.txt, launch_order.csv, ncu_raw.csv (and the commands used).
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
METRICS=gpc__cycles_elapsed.max,sm__cycles_elapsed.max,gpu__time_duration.sum,\
launch__occupancy_limit_blocks,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,\
launch__occupancy_limit_warps,launch__occupancy_per_block_size,launch__registers_per_thread,\
launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic,launch__shared_mem_config_size,\
launch__waves_per_multiprocessor,launch__grid_size,launch__block_size,\
sm__maximum_warps_per_active_cycle_pct,sm__warps_active.avg.pct_of_peak_sustained_active,\
smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,\
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
  nvcc --version | tail -2; ncu --version | tail -1; python3 --version
} > "$OUT/environment.txt" 2>&1
cat "$OUT/environment.txt"
# A plain run first: it proves every launch works and records the launch order.
python3 tools/device/run_launches.py --repeat 3 --list "$OUT/launch_order.csv" || exit 1
CMD="ncu --clock-control none --csv --metrics $METRICS python3 tools/device/run_launches.py --repeat 3"
echo "$CMD" > "$OUT/ncu_command.txt"
$CMD > "$OUT/ncu_raw.csv" 2> "$OUT/ncu_stderr.txt"
echo "ncu exit $?"; wc -l "$OUT/ncu_raw.csv"; tail -5 "$OUT/ncu_stderr.txt"
