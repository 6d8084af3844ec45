"""Warpline validation suite v3: scaled dot-product attention in Triton (the forward pass of
"flash" attention), O = softmax(Q K^T * scale) V for each (batch * head) slice of seq x HEAD
float16 rows. Program (i, s) owns BM query rows of slice s and streams the keys and values in
BN-row tiles: S = Q K^T on the tensor cores, an online softmax in base 2 (the scale is multiplied
by log2(e) once, so that exp2 is the only transcendental), and P V accumulated in float32. With
CAUSAL the loop stops after the program's last query row and a mask removes later keys on every
tile. seq is a multiple of BM and BN.

Compiled ahead of time, without a GPU, by tools/device/suite_v3/gen_triton.py (causal and full).
"""

import triton
import triton.language as tl


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq, scale, HEAD: tl.constexpr, BM: tl.constexpr,
                     BN: tl.constexpr, CAUSAL: tl.constexpr):
    q_tile = tl.program_id(0)
    base = tl.program_id(1) * seq * HEAD
    rows = q_tile * BM + tl.arange(0, BM)
    dims = tl.arange(0, HEAD)
    keys = tl.arange(0, BN)
    q = tl.load(q_ptr + base + rows[:, None] * HEAD + dims[None, :])
    m_i = tl.full((BM,), float("-inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, HEAD), tl.float32)
    log2_scale = scale * 1.4426950408889634
    stop = (q_tile + 1) * BM if CAUSAL else seq
    for start in range(0, stop, BN):
        cols = start + keys
        k_t = tl.load(k_ptr + base + cols[None, :] * HEAD + dims[:, None])
        s = tl.dot(q, k_t) * log2_scale
        if CAUSAL:
            s = tl.where(rows[:, None] >= cols[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + base + cols[:, None] * HEAD + dims[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    tl.store(o_ptr + base + rows[:, None] * HEAD + dims[None, :], (acc / l_i[:, None]).to(tl.float16))
