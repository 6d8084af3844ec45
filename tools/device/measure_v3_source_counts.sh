#!/usr/bin/env bash
# ONE device call (about 3 minutes): Nsight Compute's executed-instruction count per SASS
# instruction (SourceCounters, source page as SASS) of one launch each of the suite-v3 tuning
# kernels whose executed warp instructions `validate` predicts 5-7 % low, for comparing with the
# PTX path weighted by the SASS map, instruction by instruction (issue 34: instructions within
# 5 % on 90 % of launches). Launched through the suite's own driver and manifest (its data).
#   OUT=$OUT bash tools/device/measure_v3_source_counts.sh   -> $OUT/source_counts.tgz
set -uo pipefail
OUT=${OUT:-out}
WORK=$(mktemp -d /tmp/v3src.XXXXXX)
mkdir -p "$OUT"
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,driver_version --format=csv; ncu --version | tail -1; } > "$WORK/env.txt" 2>&1
nvcc -O2 -std=c++17 -arch=sm_90 -o "$WORK/driver" tools/device/suite_v2/driver.cu > "$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; exit 1; }
python3 tools/device/suite_v2/gen_suite.py --suite v3 manifest --out "$WORK/manifest.txt" >> "$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; exit 1; }
# family:kernel (the launch ncu profiles is the kernel's first in the manifest)
for pair in scansort:scan_block_blelloch scansort:bitonic_sort_block scansort:radix_local_4bit gemm:syrk_lower \
            stencil:heat3d_zmarch tcgemm:hgemm_mma_ldmatrix graph:spmv_ell elim:gauss_fan2; do
  fam=${pair%%:*}; k=${pair##*:}
  t0=$(date +%s)
  timeout 120 ncu --clock-control none --section SourceCounters -k "regex:$k" -c 1 -f -o "$WORK/$k" \
    "$WORK/driver" --manifest "$WORK/manifest.txt" --families "$fam" --repeat 1 --list "$WORK/$k.order.csv" \
    > "$WORK/$k.profile.log" 2>&1
  rc=$?
  timeout 60 ncu --import "$WORK/$k.ncu-rep" --page source --csv --print-source sass > "$WORK/$k.sass.csv" 2> "$WORK/$k.sass.err"
  timeout 60 ncu --import "$WORK/$k.ncu-rep" --csv --page raw --metrics smsp__inst_executed.sum,launch__grid_size,launch__block_size \
    > "$WORK/$k.raw.csv" 2>> "$WORK/$k.sass.err"
  echo "$k: profile rc=$rc in $(( $(date +%s) - t0 )) s, sass rows $(wc -l < "$WORK/$k.sass.csv"), smsp__inst_executed.sum $(tail -n 1 "$WORK/$k.raw.csv" | awk -F'","' '{print $NF}' | tr -d '"')"
done
rm -f "$WORK"/*.ncu-rep "$WORK/driver"
tar czf "$OUT/source_counts.tgz" -C "$WORK" .
head -c 400 "$WORK/scan_block_blelloch.sass.csv"; echo; tail -3 "$WORK/scan_block_blelloch.raw.csv"
ls -la "$OUT"
