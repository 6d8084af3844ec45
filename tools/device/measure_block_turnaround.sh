#!/usr/bin/env bash
# Device calls (issue 12, session 9): how long a block slot takes per block when dynamic shared
# memory lets 1, 2 or 4 blocks of 256 threads fit (bench/micro run_micro.sh turn): empty blocks,
# one store per thread, a copy, a 2,000-cycle spin.
# Run from the repo root through the device tool:  OUT=$OUT bash tools/device/measure_block_turnaround.sh
set -uo pipefail
bash tools/device/micro_subset.sh turn 16
