#!/usr/bin/env bash
# One run_micro.sh subset on the device machine, its tail printed and its results packed:
#   OUT=$OUT bash tools/device/micro_subset.sh SUBSET [TAIL_LINES]
#   -> $OUT/micro.tgz (run1.csv, run2.csv, env.txt, sass_summary.txt, stdout.txt of the subset)
# The measure_round*.sh calls of issue 12 go through it.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT/micro"
OUT="$OUT/micro" bash bench/micro/run_micro.sh "$1" > "$OUT/micro/stdout.txt" 2>&1; echo "micro exit $?"
tail -"${2:-20}" "$OUT/micro/stdout.txt"
tar czf "$OUT/micro.tgz" -C "$OUT" micro && rm -rf "$OUT/micro"
