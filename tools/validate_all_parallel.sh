#!/usr/bin/env bash
# Every suite's validation JSON (bench/validation_report.py --only SUITE-GPU --no-doc), one process
# per suite and GPU, all at once: for a machine of 8 cores or more (no GPU needed). Each process is
# stopped after VALIDATE_WALL_S seconds (default 560); the JSONs that were written, and every log,
# are copied to $OUT.
#
#   OUT=/path/to/results bash tools/validate_all_parallel.sh
set -u
: "${OUT:?set OUT to a folder for the results}"
export HOME=$(mktemp -d) PYTHONPATH=$PWD NUMBA_CACHE_DIR=$(mktemp -d)
mkdir -p "$OUT"
pairs="v2-h100 v2-h200 v1-h100 v2x-h100 v2x-h200 v3-h100 v3-h200"
for pair in $pairs; do
  ( timeout "${VALIDATE_WALL_S:-560}" python3 bench/validation_report.py --only "$pair" --no-doc \
      > "$OUT/$pair.log" 2>&1; echo "rc=$?" >> "$OUT/$pair.log" ) &
done
wait
for pair in $pairs; do
  grep -q "wrote bench/results/validation-$pair.json" "$OUT/$pair.log" && cp "bench/results/validation-$pair.json" "$OUT/"
done
ls "$OUT"
