#!/usr/bin/env bash
# Build the microbenchmarks and run the whole suite twice (two separate processes), writing
# raw CSVs, the environment and the SASS summary into $OUT (default: bench/micro/out).
#   run1.csv, run2.csv   rows `bench,name,param,value,unit` (micro.cu prints them)
#   env.txt              GPU, clocks, driver, CUDA version, date
#   sass_summary.txt     the timed loop of each kernel, opcode by opcode (cuobjdump -sass)
# Copy them into bench/micro/results/<gpu>-<date>/ afterwards.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
OUT="${OUT:-$here/out}"
mkdir -p "$OUT"
build="$(mktemp -d)"
"$here/build.sh" "$build" >"$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; }
{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -srm)"
  echo "nvcc: $(nvcc --version | tail -2 | tr '\n' ' ')"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,clocks.sm,power.limit,ecc.mode.current,persistence_mode \
    --format=csv 2>&1
  nvidia-smi -q -d CLOCK 2>&1 | sed -n '1,60p'
} >"$OUT/env.txt"
if command -v cuobjdump >/dev/null; then
  cuobjdump -sass "$build/micro" >"$build/micro.sass" 2>&1 &&
    python3 "$here/sass_summary.py" "$build/micro.sass" >"$OUT/sass_summary.txt" 2>&1
fi
status=0
for run in 1 2; do
  start=$(date +%s)
  "$build/micro" "${1:-all}" >"$OUT/run$run.csv" 2>"$OUT/run$run.err" || status=1
  echo "run $run: $(( $(date +%s) - start )) s, rc=$status" | tee -a "$OUT/env.txt"
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >>"$OUT/env.txt" 2>&1
cat "$OUT/run1.csv"
paste -d, <(cut -d, -f1,2,4 "$OUT/run1.csv") <(cut -d, -f4 "$OUT/run2.csv") | tail -n +2
exit $status
