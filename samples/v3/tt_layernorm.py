"""Warpline validation suite v3: layer normalisation of a float16 matrix in Triton, one program per
row: a first pass over the row in CHUNK-wide pieces accumulates the sum and the sum of squares in
float32 (per chunk position, reduced once after the loop), a second pass writes
(x - mean) / sqrt(var + eps) * w + b in float16. Both loops are pipelined over three stages.

Compiled ahead of time, without a GPU, by tools/device/suite_v3/gen_triton.py.
"""

import triton
import triton.language as tl


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, CHUNK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    offs = tl.arange(0, CHUNK)
    total = tl.zeros((CHUNK,), tl.float32)
    squares = tl.zeros((CHUNK,), tl.float32)
    for start in tl.range(0, n_cols, CHUNK, num_stages=3):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        total += x
        squares += x * x
    mean = tl.sum(total, 0) / n_cols
    var = tl.sum(squares, 0) / n_cols - mean * mean
    rstd = 1.0 / tl.sqrt(var + eps)
    for start in tl.range(0, n_cols, CHUNK, num_stages=3):
        cols = start + offs
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + cols, ((x - mean) * rstd * w + b).to(tl.float16), mask=mask)
