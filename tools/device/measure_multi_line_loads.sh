#!/usr/bin/env bash
# Device calls (issue 12, session 8): the latency of a warp load whose lanes touch 1-32 different
# lines, in L1, L2 and DRAM (bench/micro run_micro.sh lanes; first two calls), and the
# throughput of such loads in L1 and L2 (run_micro.sh linethr; later calls).
# Run from the repo root through the device tool:  OUT=$OUT bash tools/device/measure_multi_line_loads.sh
set -uo pipefail
bash tools/device/micro_subset.sh linethr 20
