#!/usr/bin/env bash
# The mechanism ablation (bench/ablation.py) on a machine of many cores: every line (suite, GPU,
# one mechanism off, or none) is split into parts of its launches, and the items are run by JOBS
# processes at once. Each finished item's rows land in $OUT/parts; items already there (carried
# from an earlier call in ablation-parts/) are not run again, so a run cut short by its wall
# limit goes on where it stopped. Then the parts are merged into ablation.json and the table.
#
#   OUT=/path/to/results [JOBS=16] [ABLATION_WALL_S=460] [ABLATION_RUNS="v2-h100:2 ..."] \
#       [ABLATION_MECHANISMS="grid_share l1_banks"] \
#       bash tools/device/ablation_parallel.sh
set -u
: "${OUT:?set OUT to a folder for the results}"
export HOME=$(mktemp -d) PYTHONPATH=$PWD
mkdir -p "$OUT/parts"
[ -d ablation-parts ] && cp -n ablation-parts/*.json "$OUT/parts/" 2>/dev/null
# the SASS map needs an nvdisasm that writes source lines (see tools/validate_all_parallel.sh)
[ -x .tools/cu13/nvdisasm ] && export PATH="$PWD/.tools/cu13:$PATH"
# one numba cache for every process, filled once before they start
export NUMBA_CACHE_DIR=$(mktemp -d)
python3 bench/ablation.py --item v1-h100:none:0/8 --parts "$(mktemp -d)" > "$OUT/warmup.log" 2>&1
runs=${ABLATION_RUNS:-"v2-h100:2 v2-h200:2 v2x-h100:1 v2x-h200:1 v1-h100:1"}
mechanisms=${ABLATION_MECHANISMS:-$(python3 -c "from engine.mechanisms import MECHANISMS, enabled; print(' '.join(m for m in MECHANISMS if enabled(m)))")}
items="$OUT/items.txt"
: > "$items"
for run in $runs; do
  pair=${run%%:*}; n=${run##*:}
  for mechanism in none $mechanisms; do
    for ((k = 0; k < n; k++)); do echo "$pair:$mechanism:$k/$n" >> "$items"; done
  done
done
echo "$(wc -l < "$items") items, $(ls "$OUT/parts" | wc -l) already done"
timeout "${ABLATION_WALL_S:-460}" xargs -a "$items" -P "${JOBS:-16}" -n 2 \
  sh -c 'python3 bench/ablation.py --parts "$0" $(printf -- "--item %s " "$@") >> "$0/../items.log" 2>&1' "$OUT/parts"
pkill -f "bench/ablation.py --parts" 2>/dev/null   # items cut short by the wall limit: next call
echo "items done: $(ls "$OUT/parts" | wc -l) of $(wc -l < "$items")"
python3 bench/ablation.py --merge "$OUT/parts" --out "$OUT/ablation.json" > "$OUT/merge.txt" 2>&1
tail -n 40 "$OUT/merge.txt"
# the device tool brings back at most 8 files: the parts travel as one archive
tar czf "$OUT/parts.tgz" -C "$OUT" parts && rm -rf "$OUT/parts"
tar czf "$OUT/logs.tgz" -C "$OUT" items.log items.txt warmup.log merge.txt && rm -f "$OUT"/items.log "$OUT"/items.txt "$OUT"/warmup.log
