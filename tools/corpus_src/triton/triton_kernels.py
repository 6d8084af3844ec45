"""Triton kernels for the parser corpus (compiled ahead of time, no GPU needed)."""
import triton
import triton.language as tl


@triton.jit
def vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def row_softmax(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * out_stride + cols, y, mask=mask)


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K,
           stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BM)
    grid_n = tl.cdiv(N, BN)
    # grouped ordering of the output tiles for L2 reuse
    width = GROUP_M * grid_n
    group = pid // width
    first_m = group * GROUP_M
    size_m = tl.minimum(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % size_m)
    pid_n = (pid % width) // size_m
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_tile = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_tile = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_tile, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_tile, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BK * stride_ak
        b_tile += BK * stride_bk
    c = acc.to(tl.float16)
    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + cm[:, None] * stride_cm + cn[None, :] * stride_cn, c,
             mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.jit
def layer_norm_fwd(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, n_cols, eps,
                   BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride
    y_row = y_ptr + row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / n_cols
    var_acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        v = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        v = tl.where(cols < n_cols, v - mean, 0.0)
        var_acc += v * v
    rstd = 1.0 / tl.sqrt(tl.sum(var_acc, axis=0) / n_cols + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        m = cols < n_cols
        w = tl.load(w_ptr + cols, mask=m)
        b = tl.load(b_ptr + cols, mask=m)
        v = tl.load(x_row + cols, mask=m, other=0.0).to(tl.float32)
        tl.store(y_row + cols, (v - mean) * rstd * w + b, mask=m)


# name -> (kernel, signature, constexprs)
KERNELS = {
    "vector_add": (vector_add,
                   {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
                    "BLOCK": "constexpr"},
                   {"BLOCK": 1024}),
    "softmax": (row_softmax,
                {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_stride": "i32", "out_stride": "i32",
                 "n_cols": "i32", "BLOCK": "constexpr"},
                {"BLOCK": 1024}),
    "matmul": (matmul,
               {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32",
                "K": "i32", "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32",
                "stride_bn": "i32", "stride_cm": "i32", "stride_cn": "i32",
                "BM": "constexpr", "BN": "constexpr", "BK": "constexpr", "GROUP_M": "constexpr"},
               {"BM": 128, "BN": 128, "BK": 64, "GROUP_M": 8}),
    "layer_norm": (layer_norm_fwd,
                   {"x_ptr": "*fp16", "y_ptr": "*fp16", "w_ptr": "*fp16", "b_ptr": "*fp16",
                    "mean_ptr": "*fp32", "rstd_ptr": "*fp32", "stride": "i32", "n_cols": "i32",
                    "eps": "fp32", "BLOCK": "constexpr"},
                   {"BLOCK": 1024}),
}
