#!/usr/bin/env bash
# Regenerate the sm_90 PTX and ptxas reports of the validation suite v2 kernels.
#   tools/device/suite_v2/gen_ptx.sh [family ...]      (default: every samples/v2/*.cu)
# Writes samples/v2/ptx/<family>.sm_90.ptx (nvcc -ptx -arch=sm_90 -lineinfo -O3, '.file' paths
# relative to samples/v2/ptx/) and samples/v2/ptx/<family>.sm_90.ptxas.txt (ptxas -v, timing
# lines dropped). Idempotent. SUITE=v2x works on samples/v2x/ (the tuning supplement) instead.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
src="$here/samples/${SUITE:-v2}"
out="$src/ptx"
NVCC="${NVCC:-nvcc}"
PTXAS="${PTXAS:-ptxas}"
arch=sm_90
mkdir -p "$out"
if [ "$#" -gt 0 ]; then names=("$@"); else
    names=(); for f in "$src"/*.cu; do names+=("$(basename "$f" .cu)"); done
fi
cd "$src"
for name in "${names[@]}"; do
    ptx="$out/$name.$arch.ptx"
    rep="$out/$name.$arch.ptxas.txt"
    "$NVCC" -ptx -lineinfo -O3 -std=c++17 -arch="$arch" "$name.cu" -o "$ptx.tmp"
    sed -e "s#\.file\([[:space:]]*[0-9]*\) \"$src/#.file\1 \"../#" "$ptx.tmp" > "$ptx"
    rm -f "$ptx.tmp"
    {
        echo "# ptxas -v -arch=$arch ptx/$name.$arch.ptx ($("$PTXAS" --version | tail -1))"
        "$PTXAS" -v -arch="$arch" "$ptx" -o /dev/null 2>&1 | grep -v 'Compile time'
    } > "$rep"
    echo "wrote ptx/$name.$arch.ptx ($(grep -c '\.entry' "$ptx") kernels)"
done
