"""numba-cuda kernels for the parser corpus (compiled with compile_ptx, no GPU needed).

Device functions are compiled on their own (device=True): a kernel that calls a
@cuda.jit(device=True) function asks the driver for the current device.
"""
import math

from numba import cuda, float32, float64, int32

TILE = 16
HALO_TILE = TILE + 2   # shared-array shapes must be plain global constants


def axpy(out, a, x, y):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


def jacobi_shared(src, dst):
    # 5-point Jacobi step with a (TILE+2)^2 shared tile
    tile = cuda.shared.array((HALO_TILE, HALO_TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    x, y = cuda.grid(2)
    rows, cols = src.shape
    if y < rows and x < cols:
        tile[ty + 1, tx + 1] = src[y, x]
        if tx == 0 and x > 0:
            tile[ty + 1, 0] = src[y, x - 1]
        if tx == TILE - 1 and x + 1 < cols:
            tile[ty + 1, TILE + 1] = src[y, x + 1]
        if ty == 0 and y > 0:
            tile[0, tx + 1] = src[y - 1, x]
        if ty == TILE - 1 and y + 1 < rows:
            tile[TILE + 1, tx + 1] = src[y + 1, x]
    cuda.syncthreads()
    if 0 < y < rows - 1 and 0 < x < cols - 1:
        dst[y, x] = 0.25 * (tile[ty, tx + 1] + tile[ty + 2, tx + 1]
                            + tile[ty + 1, tx] + tile[ty + 1, tx + 2])


def block_sum(values, total):
    buf = cuda.shared.array(256, float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    acc = 0.0
    stride = cuda.gridsize(1)
    while i < values.shape[0]:
        acc += values[i]
        i += stride
    buf[t] = acc
    cuda.syncthreads()
    s = 128
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        cuda.atomic.add(total, 0, buf[0])


def matmul_shared(a, b, c):
    sa = cuda.shared.array((TILE, TILE), float32)
    sb = cuda.shared.array((TILE, TILE), float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    n = a.shape[1]
    acc = float32(0.0)
    for m in range((n + TILE - 1) // TILE):
        sa[ty, tx] = 0.0
        sb[ty, tx] = 0.0
        if y < a.shape[0] and m * TILE + tx < n:
            sa[ty, tx] = a[y, m * TILE + tx]
        if x < b.shape[1] and m * TILE + ty < n:
            sb[ty, tx] = b[m * TILE + ty, x]
        cuda.syncthreads()
        for k in range(TILE):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    if y < c.shape[0] and x < c.shape[1]:
        c[y, x] = acc


def black_scholes(call, put, s, k, t, r, v):
    i = cuda.grid(1)
    if i >= s.shape[0]:
        return
    sq = math.sqrt(t[i])
    d1 = (math.log(s[i] / k[i]) + (r + 0.5 * v * v) * t[i]) / (v * sq)
    d2 = d1 - v * sq
    n1 = 0.5 * (1.0 + math.erf(d1 / math.sqrt(2.0)))
    n2 = 0.5 * (1.0 + math.erf(d2 / math.sqrt(2.0)))
    disc = math.exp(-r * t[i])
    call[i] = s[i] * n1 - k[i] * disc * n2
    put[i] = call[i] - s[i] + k[i] * disc


def histogram_atomic(data, bins, lo, hi):
    i = cuda.grid(1)
    if i < data.shape[0]:
        nb = bins.shape[0]
        b = int32((data[i] - lo) / (hi - lo) * nb)
        if b >= 0 and b < nb:
            cuda.atomic.add(bins, b, 1)


def warp_max(values, out):
    i = cuda.grid(1)
    v = values[i] if i < values.shape[0] else -1.0e30
    off = 16
    while off > 0:
        v = max(v, cuda.shfl_down_sync(0xFFFFFFFF, v, off))
        off //= 2
    if cuda.laneid == 0:
        cuda.atomic.max(out, 0, v)


def rotate_point(x, y, angle):        # compiled as a device function
    c = math.cos(angle)
    s = math.sin(angle)
    return x * c - y * s


KERNELS = {
    "axpy": (axpy, "void(float32[:], float32, float32[:], float32[:])", False),
    "jacobi_shared": (jacobi_shared, "void(float32[:,:], float32[:,:])", False),
    "block_sum": (block_sum, "void(float64[:], float64[:])", False),
    "matmul_shared": (matmul_shared, "void(float32[:,:], float32[:,:], float32[:,:])", False),
    "black_scholes": (black_scholes,
                      "void(float64[:], float64[:], float64[:], float64[:], float64[:], float64, float64)",
                      False),
    "histogram_atomic": (histogram_atomic, "void(float32[:], int32[:], float32, float32)", False),
    "warp_max": (warp_max, "void(float32[:], float32[:])", False),
    "rotate_point": (rotate_point, "float32(float32, float32, float32)", True),
}
