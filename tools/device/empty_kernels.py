"""Launch empty kernels (run under ncu): the fixed cost a kernel pays whatever it does.

    ncu --clock-control none --csv --metrics gpc__cycles_elapsed.max python3 tools/device/empty_kernels.py

Grids of 1 block up to several waves, blocks of 32..1024 threads; each launch is repeated 5 times.
"""

import sys

import cupy as cp

EMPTY = cp.RawKernel(r'extern "C" __global__ void empty_kernel() {}', "empty_kernel")

for threads in (32, 256, 1024):
    for blocks in (1, 132, 1320, 13200):
        for _ in range(5):
            EMPTY((blocks,), (threads,), ())
            cp.cuda.runtime.deviceSynchronize()
        print(f"launched {blocks}x{threads} x5", file=sys.stderr)
