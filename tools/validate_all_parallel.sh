#!/usr/bin/env bash
# Every suite's validation JSON at once on a machine of 16 cores or more (no GPU needed): each suite
# and GPU is split into parts (bench/validation_report.py --part K/N), one process per part, all
# at once; then the parts are merged into bench/results/validation-SUITE-GPU.json. Each process is
# stopped after VALIDATE_WALL_S seconds (default 560); the JSONs that were written, and every
# log, are copied to $OUT (as two archives: the device tool brings back at most 8 files).
#
#   OUT=/path/to/results bash tools/validate_all_parallel.sh
set -u
: "${OUT:?set OUT to a folder for the results}"
export HOME=$(mktemp -d) PYTHONPATH=$PWD
# one numba cache per process (processes compiling the same functions at once into one folder
# may write the same entry; not seen to matter, but a few seconds of compiling each is cheap).
# The machine's CUDA 13.0 nvdisasm gives no source lines in its JSON listing: put the 13.5 one
# of the nvidia-cuda-nvdisasm package first on PATH, or the SASS map is not used (and says so).
mkdir -p "$OUT"
# a 13.5 nvdisasm carried with the tree (run's carry: .tools/cu13, copied from the venv's
# site-packages/nvidia/cu13/bin/nvdisasm) comes first; then check that the SASS map has weights,
# or every figure would rest on PTX counts
[ -x .tools/cu13/nvdisasm ] && export PATH="$PWD/.tools/cu13:$PATH"
NUMBA_CACHE_DIR=$(mktemp -d) python3 tools/device/sass_diagnose.py > "$OUT/sass_diagnose.txt" 2>&1
if ! grep -q "^weights [0-9]* [1-9]" "$OUT/sass_diagnose.txt"; then
  echo "the SASS map has no weights on this machine (see sass_diagnose.txt): not validating"
  cat "$OUT/sass_diagnose.txt"; exit 1
fi
# suite-GPU:parts (the large suites in more parts; VALIDATE_JOBS replaces the list)
jobs=${VALIDATE_JOBS:-"v3-h100:4 v3-h200:4 v2-h100:2 v2-h200:2 v1-h100:1 v2x-h100:1 v2x-h200:1"}
for job in $jobs; do
  pair=${job%%:*}; n=${job##*:}
  for ((k = 0; k < n; k++)); do
    ( NUMBA_CACHE_DIR=$(mktemp -d) timeout "${VALIDATE_WALL_S:-560}" python3 bench/validation_report.py --only "$pair" --part "$k/$n" \
        > "$OUT/$pair.$k.log" 2>&1; echo "rc=$?" >> "$OUT/$pair.$k.log" ) &
  done
done
wait
NUMBA_CACHE_DIR=$(mktemp -d) python3 bench/validation_report.py --merge-parts --no-doc > "$OUT/merge.log" 2>&1
for job in $jobs; do
  pair=${job%%:*}
  grep -q "merged .* into bench/results/validation-$pair.json" "$OUT/merge.log" && cp "bench/results/validation-$pair.json" "$OUT/"
done
tail -n 3 "$OUT"/*.log | grep -v "^$" | tail -40
# the device tool brings back at most 8 files: results and logs travel as two archives
tar czf "$OUT/validation-json.tgz" -C "$OUT" $(cd "$OUT" && ls validation-*.json) && rm -f "$OUT"/validation-*.json
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log) && rm -f "$OUT"/*.log
ls "$OUT"
