#!/usr/bin/env bash
# The JSON listing (nvdisasm -json -g) of one sample kernel with the machine's CUDA tools, to compare
# with the wheel's 13.5 listing when a SASS map comes out empty (2026-11-27).
set -u
OUT=${OUT:-out}; mkdir -p "$OUT"
ptxas --version | tail -1 > "$OUT/versions.txt"; nvdisasm --version | tail -1 >> "$OUT/versions.txt"
ptxas -arch=sm_90 -lineinfo -e _Z20invasion_step_globalPKiPiS1_ii samples/ptx/cellular_automaton.sm_90.ptx -o /tmp/ca.cubin
nvdisasm -json -g /tmp/ca.cubin > "$OUT/listing.json" 2> "$OUT/nvdisasm.err"; echo "rc=$?"
head -c 1500 "$OUT/listing.json"
