#!/usr/bin/env bash
# Validation suite v3 on the device machine, in ONE call (about 4-6 minutes on an H100 or H200):
# the correctness check of every kernel (check_kernels.py, CuPy against NumPy), then the host
# driver built and every launch of samples/v3/*.launch.toml run plainly (3 repeats, CUDA events)
# and under Nsight Compute: a 'cycles' pass (3 repeats) and a 'memory' pass (executed
# instructions, DRAM bytes, L1/L2 hit rates, l1tex requests and sectors), in 6 ncu processes per
# pass so that a hang loses one sixth. Everything is bounded by SUITE_BUDGET_S (default 340 s
# from the start); what finished is kept.
#
#   bash tools/device/suite_v3/measure.sh
#
# Files back: $OUT/<gpu>/suite_v3.tar.gz (all raw output), $OUT/<gpu>/summary.txt, $OUT/<gpu>/check.txt.
# Then, here: python3 tools/device/suite_v2/merge.py <files_at>/<gpu>/suite_v3.tar.gz samples/measured/v3-h100
# (or v3-h200), and `python main.py validate --suite v3 --profile h100`.
set -uo pipefail
export SUITE=v3
export SUITE_BUDGET_S="${SUITE_BUDGET_S:-340}"
export SUITE_CHUNKS="${SUITE_CHUNKS:-6}"
export CHECK_TIMEOUT_S="${CHECK_TIMEOUT_S:-90}"
exec bash "$(cd "$(dirname "${BASH_SOURCE[0]}")/../suite_v2" && pwd)/measure.sh" "$@"
