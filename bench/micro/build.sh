#!/usr/bin/env bash
# Build the microbenchmarks into $1 (default: bench/micro/build).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/build}"
mkdir -p "$out"
"${NVCC:-nvcc}" -O3 -arch="${ARCH:-sm_90}" -std=c++17 -o "$out/micro" "$here/micro.cu"
echo "built $out/micro"
