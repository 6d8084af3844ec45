#!/usr/bin/env bash
# Validation suite v2: ONE device-machine call that builds the host driver, runs every launch of
# samples/v2/*.launch.toml once plainly (CUDA-event timings) and then under Nsight Compute
# (`ncu --clock-control none --csv`, a 'cycles' pass with 3 repeats and a 'memory' pass with 1),
# and writes everything into $OUT/<gpu-name>/ as one tarball plus summary.txt.
#
#   bash tools/device/suite_v2/measure.sh            # suite only
#   bash tools/device/suite_v2/measure.sh --micro    # first bench/micro/run_micro.sh into
#                                                    # $OUT/micro-<gpu>/micro.tar.gz, then the suite
#
# SUITE=v2x measures the tuning supplement (samples/v2x/, suite_spec_v2x.py) instead of suite v2;
# SUITE=v3 measures validation suite v3 (samples/v3/; tools/device/suite_v3/measure.sh sets it).
# A suite with a correctness check (tools/device/suite_<SUITE>/check_kernels.py, CuPy + NumPy)
# runs it first, within CHECK_TIMEOUT_S (default 90) seconds; its report is check.txt.
# SUITE_BUDGET_S (default 330) bounds the whole script: every ncu process gets a timeout that
# ends it before that many seconds have passed since the script started (run_suite.py).
# SUITE_CHUNKS (default 3) ncu processes per pass, each of whole families (a timeout loses one).
# Files back from $OUT: $OUT/<gpu>/suite_v2.tar.gz (suite_v3.tar.gz for v3), $OUT/<gpu>/summary.txt,
# $OUT/<gpu>/check.txt where the suite has a check, and with --micro $OUT/micro-<gpu>/micro.tar.gz
# (plus its stdout tail in $OUT/micro-<gpu>/micro_stdout.txt).
set -uo pipefail
START=$(date +%s)
BUDGET=${SUITE_BUDGET_S:-330}
SUITE=${SUITE:-v2}
case "$SUITE" in v2|v2x) TAR=suite_v2.tar.gz ;; *) TAR="suite_$SUITE.tar.gz" ;; esac
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$ROOT"
OUT=${OUT:-$ROOT/out}
export PYTHONUNBUFFERED=1
GPU_RAW=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
GPU=$(printf '%s' "${GPU_RAW:-unknown-gpu}" | sed 's/[^A-Za-z0-9._-]/_/g')
SHORT=$(printf '%s' "$GPU_RAW" | grep -oiE 'h100|h200|a100|l40s?|b200' | head -1 | tr 'A-Z' 'a-z')
DEST="$OUT/$GPU"
WORK=$(mktemp -d /tmp/suite_v2.XXXXXX)
mkdir -p "$DEST"
echo "suite $SUITE on gpu: $GPU_RAW -> $DEST; work $WORK; budget $BUDGET s"

{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -srm)"
  echo "gpu: $GPU_RAW"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,clocks.sm,power.limit,ecc.mode.current,persistence_mode --format=csv 2>&1
  echo; nvcc --version 2>&1 | tail -2
  echo; ncu --version 2>&1 | tail -1
  echo; python3 --version 2>&1
  echo; nvidia-smi 2>&1
} > "$WORK/environment.txt"
head -8 "$WORK/environment.txt"

if [ "${1:-}" = "--micro" ]; then
  MDIR="$OUT/micro-${SHORT:-gpu}"
  mkdir -p "$MDIR" "$WORK/micro"
  t0=$(date +%s)
  OUT="$WORK/micro" timeout 200 bash bench/micro/run_micro.sh > "$WORK/micro/stdout.txt" 2>&1
  echo "micro: rc=$? in $(( $(date +%s) - t0 )) s"
  tail -40 "$WORK/micro/stdout.txt" > "$MDIR/micro_stdout.txt"
  tar -czf "$MDIR/micro.tar.gz" -C "$WORK" micro
  ls -la "$WORK/micro"
fi

CHECK="tools/device/suite_$SUITE/check_kernels.py"
if [ -f "$CHECK" ]; then
  t0=$(date +%s)
  timeout "${CHECK_TIMEOUT_S:-90}" python3 "$CHECK" --out "$WORK/check.txt" > "$WORK/check_stdout.txt" 2>&1
  crc=$?
  [ -f "$WORK/check.txt" ] || tail -20 "$WORK/check_stdout.txt" > "$WORK/check.txt"
  echo "correctness check: rc=$crc$( [ $crc = 124 ] && echo ' (timed out)' ): $(grep -c '^ok' "$WORK/check.txt") ok," \
       "$(grep -cE '^(FAIL|ERROR)' "$WORK/check.txt") not ok, in $(( $(date +%s) - t0 )) s"
  grep -E '^(FAIL|ERROR|SKIPPED)' "$WORK/check.txt" | head -20
  cp "$WORK/check.txt" "$DEST/check.txt"
fi

t0=$(date +%s)
if ! nvcc -O2 -std=c++17 -arch=sm_90 -o "$WORK/suite_v2" tools/device/suite_v2/driver.cu > "$WORK/build.log" 2>&1; then
  cat "$WORK/build.log"
  tar -czf "$DEST/$TAR" -C "$WORK" --exclude=./suite_v2 .
  exit 1
fi
python3 tools/device/suite_v2/gen_suite.py --suite "$SUITE" manifest --out "$WORK/manifest.txt" >> "$WORK/build.log" 2>&1 \
  || { cat "$WORK/build.log"; tar -czf "$DEST/$TAR" -C "$WORK" --exclude=./suite_v2 .; exit 1; }
echo "build + manifest: $(( $(date +%s) - t0 )) s"

python3 tools/device/suite_v2/run_suite.py --driver "$WORK/suite_v2" --manifest "$WORK/manifest.txt" \
  --work "$WORK" --deadline $(( START + BUDGET )) --ncu "${NCU:-ncu}" --chunks "${SUITE_CHUNKS:-3}" \
  ${SUITE_DRIVER_EXTRA:+--driver-extra=$SUITE_DRIVER_EXTRA}
status=$?
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> "$WORK/environment.txt" 2>&1
echo "total: $(( $(date +%s) - START )) s, run_suite rc=$status" | tee -a "$WORK/summary.txt"
cp "$WORK/summary.txt" "$DEST/summary.txt"
tar -czf "$DEST/$TAR" -C "$WORK" --exclude=./suite_v2 --exclude=./micro .
ls -la "$DEST"
exit $status
