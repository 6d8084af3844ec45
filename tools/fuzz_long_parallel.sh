#!/usr/bin/env bash
# The long fuzz run spread over 17 processes (for a machine of 16 cores or more): 10^5 inputs per
# reader with fresh seeds (PTX in 5 processes of 20,000, every other reader in 2 of 50,000), each
# process stopped with its counts after FUZZ_WALL_S seconds (default 555). Run from the project's
# root with a Python that has numpy, numba, networkx and hypothesis:
#
#   OUT=/path/to/results bash tools/fuzz_long_parallel.sh
#
# Results: $OUT/logs/<reader>-<seed>.log, $OUT/json/<reader>-<seed>.json and failing inputs under
# $OUT/keep/<reader>/ (copy them into tests/fuzz_cases/ to keep them as cases).
set -u
: "${OUT:?set OUT to a folder for the results}"
export HOME=$(mktemp -d) TMPDIR=$(mktemp -d) PYTHONPATH=$PWD NUMBA_CACHE_DIR=$(mktemp -d)
mkdir -p $OUT/keep $OUT/json $OUT/logs
python3 --version > $OUT/logs/env.txt; nproc >> $OUT/logs/env.txt
pids=()
start() { # reader examples seed
  python3 tools/fuzz_long.py --readers $1 --examples $2 --seed $3 --keep $OUT/keep \
     --json $OUT/json/$1-$3.json > $OUT/logs/$1-$3.log 2>&1 & pids+=($!)
}
s=20261201
for k in 0 1 2 3 4; do start ptx 20000 $((s+k)); done
for r in launch profile session ncu block_csv superstep_csv; do
  for k in 0 1; do start $r 50000 $((s+10+k)); done
done
( sleep ${FUZZ_WALL_S:-555}; kill -TERM "${pids[@]}" 2>/dev/null ) & killer=$!
for p in "${pids[@]}"; do wait $p; done
kill $killer 2>/dev/null
tail -n 3 $OUT/logs/*.log
