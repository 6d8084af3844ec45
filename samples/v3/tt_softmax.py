"""Warpline validation suite v3: row softmax of a float16 matrix in Triton, one program per row,
for rows longer than one block: the row is streamed in CHUNK-wide pieces twice. The first pass
keeps, per position of the chunk, a running maximum and a sum rescaled whenever that maximum
grows; they are folded into the row's maximum and sum once at the end. The second pass writes
exp(x - max) / sum. Both loops are software-pipelined over three stages (tl.range num_stages).
Masked positions read -inf and contribute nothing; the running maximum starts at a large finite
negative value so that an all-masked position never computes inf - inf.

Compiled ahead of time, without a GPU, by tools/device/suite_v3/gen_triton.py.
"""

import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, CHUNK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    offs = tl.arange(0, CHUNK)
    run_max = tl.full((CHUNK,), -1.0e30, tl.float32)
    run_sum = tl.zeros((CHUNK,), tl.float32)
    for start in tl.range(0, n_cols, CHUNK, num_stages=3):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        grown = tl.maximum(run_max, x)
        run_sum = run_sum * tl.exp(run_max - grown) + tl.exp(x - grown)
        run_max = grown
    row_max = tl.max(run_max, 0)
    row_sum = tl.sum(run_sum * tl.exp(run_max - row_max), 0)
    for start in tl.range(0, n_cols, CHUNK, num_stages=3):
        cols = start + offs
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(y_row + cols, (tl.exp(x - row_max) / row_sum).to(tl.float16), mask=mask)
