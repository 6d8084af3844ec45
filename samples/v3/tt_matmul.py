"""Warpline validation suite v3: a half-precision matrix product in Triton, C = A B with float32
accumulation and a float16 result. A (M x K), B (K x N) and C (M x N) are row-major and contiguous,
and M, N, K are multiples of the block sizes (no masks). The grid is two-dimensional: axis 0 walks
the tile columns of C and axis 1 its tile rows, so programs launched together read the same rows
of A. Triton lowers tl.dot to the tensor cores (wgmma on sm_90) and pipelines the loop's loads
over num_stages shared-memory buffers with asynchronous copies.

Compiled ahead of time, without a GPU, by tools/device/suite_v3/gen_triton.py (two tilings).
"""

import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    col_tile = tl.program_id(0)
    row_tile = tl.program_id(1)
    rows = row_tile * BM + tl.arange(0, BM)
    cols = col_tile * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    a_at = a_ptr + rows[:, None] * K + ks[None, :]
    b_at = b_ptr + ks[:, None] * N + cols[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):
        acc = tl.dot(tl.load(a_at), tl.load(b_at), acc)
        a_at += BK
        b_at += BK * N
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16))
