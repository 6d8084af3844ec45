#!/usr/bin/env python3
"""Correctness check of validation suite v3 on a GPU: every kernel, from the PTX that is measured,
on small inputs (sizes that are not multiples of the block, so that edge code runs), against a
NumPy reference.

    python3 tools/device/suite_v3/check_kernels.py [--only NAME ...] [--out FILE]

Needs CuPy and NumPy (both on the device machines). Prints one line per kernel check:
``ok``, ``FAIL`` (wrong result: the largest error) or ``ERROR`` (the launch raised); exit status 1
if any check is not ok. Measurement (measure.sh) runs it first, so that a broken kernel is seen
before its timings are trusted. Not part of CI (needs a GPU).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import tomllib
import traceback
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
V3 = ROOT / "samples" / "v3"
f32, f16, i32, u32, u8 = np.float32, np.float16, np.int32, np.uint32, np.uint8

cp = None                     # cupy, imported in main()
CHECKS: list[tuple[str, str, Callable[[], tuple[bool, str]]]] = []   # (family, kernel, check)
_modules: dict[str, object] = {}


def check(family: str, kernel: str):
    def register(fn: Callable[[], tuple[bool, str]]):
        CHECKS.append((family, kernel, fn))
        return fn
    return register


def function(family: str, short: str, smem: int = 0):
    """The kernel ``short`` of ``family``'s PTX, with dynamic shared memory allowed up to ``smem``."""
    if family not in _modules:
        _modules[family] = cp.RawModule(path=str(V3 / "ptx" / f"{family}.sm_90.ptx"))
    launches = tomllib.loads((V3 / f"{family}.launch.toml").read_text())["launch"]
    mangled = next(launch["kernel"] for launch in launches if launch["name"].split("/")[0] == short)
    fn = _modules[family].get_function(mangled)
    if smem > 48 * 1024:
        fn.max_dynamic_shared_size_bytes = smem
    return fn


def triton_meta(family: str) -> dict:
    return json.loads((V3 / "ptx" / f"{family}.sm_90.triton.json").read_text())


def close(got, ref, tol: float, what: str = "") -> tuple[bool, str]:
    """Largest error relative to max(1, |reference|)."""
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape:
        return False, f"{what} shape {got.shape} != {ref.shape}"
    if not np.all(np.isfinite(got)):
        return False, f"{what} {int(np.sum(~np.isfinite(got)))} non-finite values"
    err = float(np.max(np.abs(got - ref) / np.maximum(1.0, np.abs(ref)))) if got.size else 0.0
    return err <= tol, f"{what} max rel err {err:.2e} (tol {tol:.0e})"


def same(got, ref, what: str = "") -> tuple[bool, str]:
    got, ref = np.asarray(got), np.asarray(ref)
    bad = int(np.sum(got != ref)) if got.shape == ref.shape else -1
    return bad == 0, f"{what} {bad} of {ref.size} differ" if bad else f"{what} exact"


def both(*results: tuple[bool, str]) -> tuple[bool, str]:
    return all(ok for ok, _ in results), "; ".join(d for _, d in results)


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def dev(a):
    return cp.asarray(a)


def host(a):
    return cp.asnumpy(a)


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


# ------------------------------------------------------------------------------------ gemm

def _gemm_data(m, n, k, seed=1):
    r = rng(seed)
    return (r.uniform(-1, 1, (m, k)).astype(f32), r.uniform(-1, 1, (k, n)).astype(f32),
            r.uniform(-1, 1, (m, n)).astype(f32))


@check("gemm", "gemm_naive_2d")
def _():
    m, n, k = 70, 90, 33
    A, B, C = _gemm_data(m, n, k)
    ref = 1.5 * (A.astype(np.float64) @ B) + 0.5 * C
    out = []
    for bx, by in ((32, 4), (16, 16), (8, 8)):
        dC = dev(C)
        function("gemm", "gemm_naive_2d")((cdiv(n, bx), cdiv(m, by)), (bx, by),
                                          (dev(A), dev(B), dC, i32(m), i32(n), i32(k), f32(1.5), f32(0.5)))
        out.append(close(host(dC), ref, 1e-4, f"{bx}x{by}"))
    return both(*out)


@check("gemm", "gemm_naive_1d")
def _():
    m, n, k = 70, 90, 33
    A, B, C = _gemm_data(m, n, k, 2)
    dC = dev(C)
    function("gemm", "gemm_naive_1d")((cdiv(m * n, 128),), (128,),
                                      (dev(A), dev(B), dC, i32(m), i32(n), i32(k), f32(1.5), f32(0.5)))
    return close(host(dC), 1.5 * (A.astype(np.float64) @ B) + 0.5 * C, 1e-4)


@check("gemm", "gemm_smem_tiled")
def _():
    m, n, k = 70, 90, 45
    A, B, C = _gemm_data(m, n, k, 3)
    ref = 1.5 * (A.astype(np.float64) @ B) + 0.5 * C
    out = []
    for t in (8, 16, 32):
        dC = dev(C)
        function("gemm", "gemm_smem_tiled")((cdiv(n, t), cdiv(m, t)), (t, t),
                                            (dev(A), dev(B), dC, i32(m), i32(n), i32(k), f32(1.5), f32(0.5)),
                                            shared_mem=2 * t * t * 4)
        out.append(close(host(dC), ref, 1e-4, f"T={t}"))
    return both(*out)


@check("gemm", "syrk_lower")
def _():
    n, k = 70, 33
    r = rng(4)
    A = r.uniform(-1, 1, (n, k)).astype(f32)
    C = r.uniform(-1, 1, (n, n)).astype(f32)
    full = 1.0 * (A.astype(np.float64) @ A.T) + 0.5 * C
    ref = np.where(np.tril(np.ones((n, n), bool)), full, C)
    dC = dev(C)
    function("gemm", "syrk_lower")((cdiv(n, 16), cdiv(n, 16)), (16, 16),
                                   (dev(A), dC, i32(n), i32(k), f32(1.0), f32(0.5)))
    return close(host(dC), ref, 1e-4)


# ------------------------------------------------------------------------------------ gemv

def _gemv_data(m=300, n=77):
    r = rng(5)
    return r.uniform(-1, 1, (m, n)).astype(f32), r.uniform(-1, 1, n).astype(f32)


@check("gemv", "gemv_row_thread")
def _():
    A, x = _gemv_data()
    y = cp.zeros(300, f32)
    function("gemv", "gemv_row_thread")((cdiv(300, 128),), (128,), (dev(A), dev(x), y, i32(300), i32(77)))
    return close(host(y), A.astype(np.float64) @ x, 1e-4)


@check("gemv", "gemv_row_warp")
def _():
    A, x = _gemv_data()
    y = cp.zeros(300, f32)
    function("gemv", "gemv_row_warp")((cdiv(300, 8),), (32, 8), (dev(A), dev(x), y, i32(300), i32(77)))
    return close(host(y), A.astype(np.float64) @ x, 1e-4)


@check("gemv", "gemv_col_major")
def _():
    A, x = _gemv_data()
    y = cp.zeros(300, f32)
    function("gemv", "gemv_col_major")((cdiv(300, 128),), (128,), (dev(np.ascontiguousarray(A.T)), dev(x), y,
                                                                   i32(300), i32(77)))
    return close(host(y), A.astype(np.float64) @ x, 1e-4)


# --------------------------------------------------------------------------------- stencil

@check("stencil", "jacobi2d_9pt")
def _():
    ny, nx = 45, 67
    u = rng(6).uniform(0, 1, (ny, nx)).astype(f32)
    out = cp.zeros((ny, nx), f32)
    function("stencil", "jacobi2d_9pt")((cdiv(nx, 32), cdiv(ny, 8)), (32, 8),
                                        (dev(u), out, i32(nx), i32(ny), f32(0.4), f32(0.1), f32(0.05)))
    p = u.astype(np.float64)
    ref = np.zeros_like(p)
    c = p[1:-1, 1:-1]
    edges = p[1:-1, :-2] + p[1:-1, 2:] + p[:-2, 1:-1] + p[2:, 1:-1]
    corners = p[:-2, :-2] + p[:-2, 2:] + p[2:, :-2] + p[2:, 2:]
    ref[1:-1, 1:-1] = 0.4 * c + 0.1 * edges + 0.05 * corners
    return close(host(out), ref, 1e-5)


@check("stencil", "wave2d_leapfrog")
def _():
    ny, nx = 45, 67
    r = rng(7)
    u, up = r.uniform(0, 1, (ny, nx)).astype(f32), r.uniform(0, 1, (ny, nx)).astype(f32)
    out = cp.zeros((ny, nx), f32)
    function("stencil", "wave2d_leapfrog")((cdiv(nx, 16), cdiv(ny, 16)), (16, 16),
                                           (dev(u), dev(up), out, i32(nx), i32(ny), f32(0.25)))
    p = u.astype(np.float64)
    ref = np.zeros_like(p)
    lap = p[1:-1, :-2] + p[1:-1, 2:] + p[:-2, 1:-1] + p[2:, 1:-1] - 4 * p[1:-1, 1:-1]
    ref[1:-1, 1:-1] = 2 * p[1:-1, 1:-1] - up[1:-1, 1:-1] + 0.25 * lap
    return close(host(out), ref, 1e-5)


@check("stencil", "heat3d_zmarch")
def _():
    nz, ny, nx = 10, 48, 70
    u = rng(8).uniform(0, 1, (nz, ny, nx)).astype(f32)
    ref = np.zeros((nz, ny, nx))
    p = u.astype(np.float64)
    ref[1:-1, 1:-1, 1:-1] = 0.4 * p[1:-1, 1:-1, 1:-1] + 0.1 * (
        p[1:-1, 1:-1, :-2] + p[1:-1, 1:-1, 2:] + p[1:-1, :-2, 1:-1] + p[1:-1, 2:, 1:-1] + p[:-2, 1:-1, 1:-1] +
        p[2:, 1:-1, 1:-1])
    out = []
    for bx, by in ((32, 8), (16, 16)):
        o = cp.zeros((nz, ny, nx), f32)
        function("stencil", "heat3d_zmarch")((cdiv(nx, bx), cdiv(ny, by)), (bx, by),
                                             (dev(u), o, i32(nx), i32(ny), i32(nz), f32(0.4), f32(0.1)),
                                             shared_mem=(bx + 2) * (by + 2) * 4)
        out.append(close(host(o), ref, 1e-5, f"{bx}x{by}"))
    return both(*out)


# --------------------------------------------------------------------------------- dynprog

def _smith_waterman(q, t, match, mismatch, gap) -> int:
    n = len(q)
    h = np.zeros((n + 1, n + 1), dtype=np.int64)
    for i in range(1, n + 1):
        for j in range(1, n + 1):
            sub = match if q[i - 1] == t[j - 1] else mismatch
            h[i, j] = max(0, h[i - 1, j - 1] + sub, h[i - 1, j] - gap, h[i, j - 1] - gap)
    return int(h.max())


@check("dynprog", "sw_batch_strip")
def _():
    pairs, length = 3, 64
    r = rng(9)
    q = r.integers(0, 4, (pairs, length)).astype(u8)
    t = r.integers(0, 4, (pairs, length)).astype(u8)
    ref = [_smith_waterman(q[p], t[p], 2, -1, 1) for p in range(pairs)]
    out = []
    for threads in (16, 32):
        best = cp.zeros(pairs, i32)
        smem = cdiv(4 * (length + 1 + 2 * threads) + length, 16) * 16
        function("dynprog", "sw_batch_strip")((pairs,), (threads,), (dev(q), dev(t), best, i32(length), i32(2), i32(-1),
                                                                    i32(1)), shared_mem=smem)
        out.append(same(host(best), ref, f"T={threads}"))
    return both(*out)


@check("dynprog", "pathfinder_rows")
def _():
    rows, cols, start, steps, b = 12, 1000, 2, 5, 64
    r = rng(10)
    wall = r.integers(0, 10, (rows, cols)).astype(i32)
    src = r.integers(0, 100, cols).astype(i32)
    prev = src.astype(np.int64)
    for s in range(steps):
        left = np.concatenate(([np.iinfo(np.int64).max], prev[:-1]))
        right = np.concatenate((prev[1:], [np.iinfo(np.int64).max]))
        prev = np.minimum(prev, np.minimum(left, right)) + wall[start + s + 1]
    dst = cp.zeros(cols, i32)
    function("dynprog", "pathfinder_rows")((cdiv(cols, b - 2 * steps),), (b,),
                                           (dev(wall), dev(src), dst, i32(cols), i32(start), i32(steps)),
                                           shared_mem=2 * b * 4)
    return same(host(dst), prev)


@check("dynprog", "viterbi_batch")
def _():
    ns, nsym, steps, batch = 32, 8, 20, 3
    r = rng(11)
    lt = r.uniform(-8, 0, (ns, ns)).astype(f32)
    le = r.uniform(-8, 0, (ns, nsym)).astype(f32)
    li = r.uniform(-8, 0, ns).astype(f32)
    obs = r.integers(0, nsym, (batch, steps)).astype(i32)
    ref_bp = np.zeros((batch, steps, ns), np.uint16)
    ref_best = np.zeros(batch, f32)
    for b in range(batch):
        cur = li + le[:, obs[b, 0]]
        for t in range(1, steps):
            cand = cur[:, None] + lt          # float32, like the kernel
            ref_bp[b, t] = np.argmax(cand, axis=0)
            cur = cand.max(axis=0) + le[:, obs[b, t]]
        ref_best[b] = cur.max()
    bp = cp.zeros((batch, steps, ns), np.uint16)
    best = cp.zeros(batch, f32)
    function("dynprog", "viterbi_batch")((batch,), (ns,), (dev(lt), dev(le), dev(li), dev(obs), bp, best, i32(ns),
                                                           i32(nsym), i32(steps)), shared_mem=2 * ns * 4)
    got = host(bp)
    got[:, 0] = 0
    return both(same(got, ref_bp, "back-pointers"), close(host(best), ref_best, 1e-5, "best"))


# ------------------------------------------------------------------------------------ elim

@check("elim", "gauss_fan2")
def _():
    n, t = 50, 7
    r = rng(12)
    mult, a, b = (r.uniform(-1, 1, (n, n)).astype(f32), r.uniform(-1, 1, (n, n)).astype(f32),
                  r.uniform(-1, 1, n).astype(f32))
    ra, rb = a.astype(np.float64), b.astype(np.float64)
    ra[t + 1:, t:] -= mult[t + 1:, t:t + 1] * ra[t, t:]
    rb[t + 1:] -= mult[t + 1:, t] * rb[t]
    da, db = dev(a), dev(b)
    function("elim", "gauss_fan2")((cdiv(n - t, 8), cdiv(n - 1 - t, 4)), (8, 4), (dev(mult), da, db, i32(n), i32(t)))
    return both(close(host(da), ra, 1e-5, "a"), close(host(db), rb, 1e-5, "b"))


@check("elim", "lu_batched_pivot")
def _():
    n, batch = 16, 5
    A = rng(13).uniform(-1, 1, (batch, n, n)).astype(f32)
    ref, ref_piv = A.astype(np.float64).copy(), np.zeros((batch, n), i32)
    for m in range(batch):
        s = ref[m]
        for k in range(n):
            p = k + int(np.argmax(np.abs(s[k:, k])))
            ref_piv[m, k] = p
            s[[k, p]] = s[[p, k]]
            s[k + 1:, k] /= s[k, k]
            s[k + 1:, k + 1:] -= np.outer(s[k + 1:, k], s[k, k + 1:])
    out = []
    for threads in (32, 64, 8):
        lu, piv = cp.zeros((batch, n, n), f32), cp.zeros((batch, n), i32)
        function("elim", "lu_batched_pivot")((batch,), (threads,), (dev(A), lu, piv, i32(n)), shared_mem=n * n * 4)
        out += [close(host(lu), ref, 1e-3, f"b{threads} LU"), same(host(piv), ref_piv, "pivots")]
    return both(*out)


def _lu_step_matrix(n, batch, seed):
    a = rng(seed).uniform(-1, 1, (batch, n, n)).astype(f32)
    a += 4 * np.eye(n, dtype=f32)      # a non-singular diagonal tile
    return a


@check("elim", "lu_perimeter")
def _():
    n, batch, off = 96, 2, 32
    out = []
    for tile in (16, 32):
        a = _lu_step_matrix(n, batch, 14)
        ref = a.astype(np.float64).copy()
        for m in range(batch):
            d = ref[m, off:off + tile, off:off + tile]
            lower = np.tril(d, -1) + np.eye(tile)
            upper = np.triu(d)
            for t0 in range(off + tile, n, tile):
                ref[m, off:off + tile, t0:t0 + tile] = np.linalg.solve(lower, ref[m, off:off + tile, t0:t0 + tile])
                below = ref[m, t0:t0 + tile, off:off + tile]
                ref[m, t0:t0 + tile, off:off + tile] = np.linalg.solve(upper.T, below.T).T
        da = dev(a)
        function("elim", "lu_perimeter", 3 * tile * (tile + 1) * 4)(((n - off) // tile - 1, batch), (2 * tile,),
                                                                   (da, i32(n), i32(off)),
                                                                   shared_mem=3 * tile * (tile + 1) * 4)
        out.append(close(host(da), ref, 1e-3, f"B={tile}"))
    return both(*out)


@check("elim", "lu_internal")
def _():
    n, batch, off, t = 64, 2, 16, 8
    a = _lu_step_matrix(n, batch, 15)
    ref = a.astype(np.float64).copy()
    for m in range(batch):
        ref[m, off + t:, off + t:] -= ref[m, off + t:, off:off + t] @ ref[m, off:off + t, off + t:]
    da = dev(a)
    nt = (n - off) // t - 1
    function("elim", "lu_internal")((nt, nt, batch), (t, t), (da, i32(n), i32(off)), shared_mem=2 * t * t * 4)
    return close(host(da), ref, 1e-4)


# -------------------------------------------------------------------------------- trisolve

@check("trisolve", "trsm_lower_rhs")
def _():
    n, nrhs = 40, 100
    r = rng(16)
    L = (np.tril(r.uniform(-0.1, 0.1, (n, n))) + np.eye(n)).astype(f32)
    B = r.uniform(-1, 1, (n, nrhs)).astype(f32)
    X = cp.zeros((n, nrhs), f32)
    function("trisolve", "trsm_lower_rhs")((cdiv(nrhs, 64),), (64,), (dev(L), dev(B), X, i32(n), i32(nrhs)))
    return close(host(X), np.linalg.solve(L.astype(np.float64), B), 1e-4)


@check("trisolve", "cholesky_col")
def _():
    n, k = 50, 20
    r = rng(17)
    A = r.uniform(1, 2, (n, n)).astype(f32)
    L = r.uniform(-0.1, 0.1, (n, n)).astype(f32)
    ref = L.astype(np.float64).copy()
    diag = np.sqrt(A[k, k] - np.sum(ref[k, :k] ** 2))
    ref[k, k] = diag
    ref[k + 1:, k] = (A[k + 1:, k] - ref[k + 1:, :k] @ ref[k, :k]) / diag
    dL = dev(L)
    function("trisolve", "cholesky_col")((cdiv(n - k - 1, 16),), (16,), (dev(A), dL, i32(n), i32(k)))
    return close(host(dL), ref, 1e-5)


@check("trisolve", "ltri_packed_matvec")
def _():
    n = 300
    r = rng(18)
    Lfull = np.tril(r.uniform(-1, 1, (n, n))).astype(f32)
    packed = np.concatenate([Lfull[i, :i + 1] for i in range(n)])
    x = r.uniform(-1, 1, n).astype(f32)
    y = cp.zeros(n, f32)
    function("trisolve", "ltri_packed_matvec")((cdiv(n, 128),), (128,), (dev(packed), dev(x), y, i32(n)))
    return close(host(y), Lfull.astype(np.float64) @ x, 1e-4)


# ---------------------------------------------------------------------------------- kmeans

def _kmeans_data(npoints=1000, k=5, d=7):
    r = rng(19)
    return r.uniform(0, 1, (npoints, d)).astype(f32), r.uniform(0, 1, (k, d)).astype(f32)


def _nearest(x, c):
    dist = ((x[:, None, :].astype(np.float64) - c[None, :, :]) ** 2).sum(axis=2)
    return np.argmin(dist, axis=1)


@check("kmeans", "kmeans_assign_tex")
def _():
    from cupy.cuda import runtime, texture

    npoints, k, d = 1000, 5, 7
    x, c = _kmeans_data(npoints, k, d)
    fm = dev(np.ascontiguousarray(x.T))
    channel = texture.ChannelFormatDescriptor(32, 0, 0, 0, runtime.cudaChannelFormatKindFloat)
    res = texture.ResourceDescriptor(runtime.cudaResourceTypeLinear, arr=fm, chDesc=channel, sizeInBytes=fm.nbytes)
    tex = texture.TextureObject(res, texture.TextureDescriptor())
    fn = function("kmeans", "kmeans_assign_tex")
    centres = cp.ndarray((8192,), f32, _modules["kmeans"].get_global("c_centres"))
    centres[: k * d] = dev(c.ravel())
    member = cp.zeros(npoints, i32)
    fn((cdiv(npoints, 128),), (128,), (tex, member, i32(npoints), i32(k), i32(d)))
    return same(host(member), _nearest(x, c))


@check("kmeans", "kmeans_assign_ldg")
def _():
    npoints, k, d = 1000, 5, 7
    x, c = _kmeans_data(npoints, k, d)
    member = cp.zeros(npoints, i32)
    function("kmeans", "kmeans_assign_ldg")((cdiv(npoints, 256),), (256,),
                                            (dev(x), dev(c), member, i32(npoints), i32(k), i32(d)))
    return same(host(member), _nearest(x, c))


@check("kmeans", "kmeans_centroid_accum")
def _():
    npoints, k, d = 5000, 6, 4
    r = rng(20)
    x = r.uniform(0, 1, (npoints, d)).astype(f32)
    member = r.integers(0, k, npoints).astype(i32)
    sums, counts = cp.zeros(k * d, f32), cp.zeros(k, i32)
    function("kmeans", "kmeans_centroid_accum")((8,), (128,), (dev(x), dev(member), sums, counts, i32(npoints), i32(k),
                                                               i32(d)), shared_mem=k * (d + 1) * 4)
    ref_sums = np.zeros((k, d))
    np.add.at(ref_sums, member, x)
    return both(close(host(sums), ref_sums.ravel(), 1e-5, "sums"), same(host(counts), np.bincount(member, minlength=k),
                                                                        "counts"))


# ----------------------------------------------------------------------------------- image

@check("image", "conv2d_const")
def _():
    h, w, radius = 50, 70, 2
    r = rng(21)
    img = r.uniform(0, 1, (h, w)).astype(f32)
    taps = 2 * radius + 1
    filt = r.uniform(0, 0.1, (taps, taps)).astype(f32)
    fn = function("image", "conv2d_const")
    cmem = cp.ndarray((289,), f32, _modules["image"].get_global("c_filter"))
    cmem[: taps * taps] = dev(filt.ravel())
    padded = np.pad(img.astype(np.float64), radius, mode="edge")
    ref = sum(filt[dy, dx] * padded[dy:dy + h, dx:dx + w] for dy in range(taps) for dx in range(taps))
    out = cp.zeros((h, w), f32)
    fn((cdiv(w, 32), cdiv(h, 8)), (32, 8), (dev(img), out, i32(w), i32(h), i32(radius)))
    return close(host(out), ref, 1e-5)


@check("image", "sobel_u8")
def _():
    h, w = 50, 70
    img = rng(22).integers(0, 256, (h, w)).astype(u8)
    p = img.astype(np.int64)
    gx = (p[:-2, 2:] + 2 * p[1:-1, 2:] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[1:-1, :-2] + p[2:, :-2])
    gy = (p[2:, :-2] + 2 * p[2:, 1:-1] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[:-2, 1:-1] + p[:-2, 2:])
    mag = np.sqrt((gx * gx + gy * gy).astype(f32))
    ref = np.zeros((h, w), u8)
    ref[1:-1, 1:-1] = np.minimum(mag, f32(255)).astype(u8)
    out = cp.full((h, w), 7, u8)
    function("image", "sobel_u8")((cdiv(w, 16), cdiv(h, 16)), (16, 16), (dev(img), out, i32(w), i32(h)))
    return same(host(out), ref)


@check("image", "hist256_u8")
def _():
    n = 100_000
    img = rng(23).integers(0, 256, n).astype(u8)
    hist = cp.zeros(256, u32)
    function("image", "hist256_u8")((8,), (256,), (dev(img), hist, i32(n)))
    return same(host(hist), np.bincount(img, minlength=256))


@check("image", "histeq_apply")
def _():
    n = 40_000
    img = rng(24).integers(20, 200, n).astype(u8)
    cdf = np.cumsum(np.bincount(img, minlength=256)).astype(u32)
    cdf_min = cdf[np.nonzero(cdf)[0][0]]
    scale = f32(255.0) / f32(n - int(cdf_min))
    level = np.rint((cdf - cdf_min).astype(u32).astype(f32) * scale)
    lut = np.clip(level, 0, 255).astype(u8)
    out = cp.zeros(n, u8)
    function("image", "histeq_apply")((16,), (128,), (dev(img), out, dev(cdf), i32(n)))
    return same(host(out), lut[img])


# ----------------------------------------------------------------------------------- graph

def _csr(nrows, ncols, lo, hi, seed):
    r = rng(seed)
    lengths = r.integers(lo, hi + 1, nrows)
    rowptr = np.concatenate(([0], np.cumsum(lengths))).astype(i32)
    return rowptr, r.integers(0, ncols, rowptr[-1]).astype(i32)


@check("graph", "bfs_level_expand")
def _():
    nv, cur = 500, 2
    rowptr, col = _csr(nv, nv, 2, 14, 25)
    level = rng(26).integers(-1, 5, nv).astype(i32)
    ref = np.zeros(nv, i32)
    for v in np.nonzero(level == cur)[0]:
        for u in col[rowptr[v]:rowptr[v + 1]]:
            if level[u] < 0:
                ref[u] = 1
    nxt = cp.zeros(nv, i32)
    function("graph", "bfs_level_expand")((cdiv(nv, 128),), (128,), (dev(rowptr), dev(col), dev(level), nxt, i32(nv),
                                                                      i32(cur)))
    return same(host(nxt), ref)


@check("graph", "pagerank_pull")
def _():
    nv = 500
    rowptr, col = _csr(nv, nv, 2, 14, 27)
    contrib = rng(28).uniform(0, 1e-3, nv).astype(f32)
    ref = np.array([(1 - 0.85) / nv + 0.85 * contrib[col[rowptr[v]:rowptr[v + 1]]].astype(np.float64).sum()
                    for v in range(nv)])
    rank = cp.zeros(nv, f32)
    function("graph", "pagerank_pull")((cdiv(nv, 128),), (128,), (dev(rowptr), dev(col), dev(contrib), rank, i32(nv),
                                                                   f32(0.85)))
    return close(host(rank), ref, 1e-5)


@check("graph", "spmv_ell")
def _():
    nrows, width = 300, 7
    r = rng(29)
    cols = r.integers(-60, nrows, (width, nrows)).astype(i32)
    vals = r.uniform(-1, 1, (width, nrows)).astype(f32)
    x = r.uniform(-1, 1, nrows).astype(f32)
    ref = np.where(cols >= 0, vals.astype(np.float64) * x[np.maximum(cols, 0)], 0.0).sum(axis=0)
    y = cp.zeros(nrows, f32)
    function("graph", "spmv_ell")((cdiv(nrows, 128),), (128,),
                                  (dev(cols), dev(vals), dev(x), y, i32(nrows), i32(width)))
    return close(host(y), ref, 1e-5)


# -------------------------------------------------------------------------------- scansort

@check("scansort", "scan_block_blelloch")
def _():
    n, b = 3000, 128
    data = rng(30).uniform(0, 1, n).astype(f32)
    per = 2 * b
    nblocks = cdiv(n, per)
    padded = np.zeros(nblocks * per)
    padded[:n] = data
    seg = padded.reshape(nblocks, per)
    ref = (np.cumsum(seg, axis=1) - seg).ravel()[:n]
    out, sums = cp.zeros(n, f32), cp.zeros(nblocks, f32)
    function("scansort", "scan_block_blelloch")((nblocks,), (b,), (dev(data), out, sums, i32(n)),
                                                shared_mem=(2 * b + 2 * b // 32) * 4)
    return both(close(host(out), ref, 1e-5, "scan"), close(host(sums), seg.sum(axis=1), 1e-5, "sums"))


@check("scansort", "radix_local_4bit")
def _():
    n, b, shift = 1000, 128, 4
    keys = rng(31).integers(0, 1 << 32, n, dtype=np.uint64).astype(u32)
    nblocks = cdiv(n, b)
    ref_keys = np.zeros(n, u32)
    ref_counts = np.zeros((16, nblocks), u32)
    for blk in range(nblocks):
        part = keys[blk * b:(blk + 1) * b]
        digits = (part >> shift) & 15
        ref_keys[blk * b:blk * b + len(part)] = part[np.argsort(digits, kind="stable")]
        ref_counts[:, blk] = np.bincount(digits, minlength=16)
    out, counts = cp.zeros(n, u32), cp.zeros((16, nblocks), u32)
    function("scansort", "radix_local_4bit")((nblocks,), (b,), (dev(keys), out, counts, i32(n), i32(shift)),
                                             shared_mem=b * 4)
    return both(same(host(out), ref_keys, "keys"), same(host(counts), ref_counts, "counts"))


@check("scansort", "bitonic_step")
def _():
    n, j, k = 1024, 4, 16
    data = rng(32).uniform(0, 1, n).astype(f32)
    ref = data.copy()
    for i in range(n):
        partner = i ^ j
        if partner > i:
            lo, hi = min(ref[i], ref[partner]), max(ref[i], ref[partner])
            ref[i], ref[partner] = (lo, hi) if (i & k) == 0 else (hi, lo)
    d = dev(data)
    function("scansort", "bitonic_step")((n // 256,), (256,), (d, i32(j), i32(k)))
    return same(host(d), ref)


@check("scansort", "bitonic_sort_block")
def _():
    n, b = 1000, 256
    data = rng(33).uniform(0, 1, n).astype(f32)
    ref = np.concatenate([np.sort(data[i:i + b]) for i in range(0, n, b)])
    out = cp.zeros(n, f32)
    function("scansort", "bitonic_sort_block")((cdiv(n, b),), (b,), (dev(data), out, i32(n)), shared_mem=b * 4)
    return same(host(out), ref)


# ------------------------------------------------------------------------------- particles

@check("particles", "nbody_float4_tile")
def _():
    n, eps2 = 300, 0.01
    pos = rng(34).uniform(0, 1, (n, 4)).astype(f32)
    d = pos[None, :, :3].astype(np.float64) - pos[:, None, :3]
    r2 = (d ** 2).sum(axis=2) + eps2
    ref = np.zeros((n, 4))
    ref[:, :3] = (pos[None, :, 3, None] * d / r2[:, :, None] ** 1.5).sum(axis=1)
    acc = cp.zeros((n, 4), f32)
    function("particles", "nbody_float4_tile")((cdiv(n, 128),), (128,), (dev(pos), acc, i32(n), f32(eps2)),
                                               shared_mem=128 * 16)
    return close(host(acc), ref, 1e-4)


@check("particles", "md_cells_lj")
def _():
    ncx, edge, sigma2, eps = 4, 1.0, 0.09, 1.0
    ncells = ncx ** 3
    r = rng(35)
    counts = r.integers(2, 7, ncells)
    start = np.concatenate(([0], np.cumsum(counts))).astype(i32)
    pos = np.zeros((start[-1], 4), f32)
    pos[:, :3] = r.uniform(0, 1, (start[-1], 3))
    ref = np.zeros((start[-1], 4))
    for c in range(ncells):
        cx, cy, cz = c % ncx, (c // ncx) % ncx, c // (ncx * ncx)
        for p in range(start[c], start[c + 1]):
            for dz in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    for dx in (-1, 0, 1):
                        nc = (((cz + dz) % ncx) * ncx + (cy + dy) % ncx) * ncx + (cx + dx) % ncx
                        for q in range(start[nc], start[nc + 1]):
                            rv = (pos[q, :3].astype(np.float64) + (dx, dy, dz) - pos[p, :3]) * edge
                            rr = float(rv @ rv)
                            if 0 < rr < edge * edge:
                                sr6 = (sigma2 / rr) ** 3
                                ref[p, :3] -= 24 * eps * sr6 * (2 * sr6 - 1) / rr * rv
    force = cp.zeros((start[-1], 4), f32)
    function("particles", "md_cells_lj")((ncells,), (32,), (dev(pos), dev(start), force, i32(ncx), f32(edge),
                                                            f32(sigma2), f32(eps)), shared_mem=32 * 16)
    scale = max(1.0, float(np.abs(ref).max()))
    return close(host(force) / scale, ref / scale, 1e-4)


# ------------------------------------------------------------------------------------ mesh

def _euler_ref(rho, mom, energy, nb, normals, gamma, ff):
    n = len(rho)
    res = np.zeros((5, n))

    def pressure(r, mx, my, mz, e):
        return (gamma - 1) * (e - 0.5 * (mx * mx + my * my + mz * mz) / r)

    for i in range(n):
        mx, my, mz = mom[0, i], mom[1, i], mom[2, i]
        p = pressure(rho[i], mx, my, mz, energy[i])
        u = np.array([mx, my, mz]) / rho[i]
        c = np.sqrt(gamma * p / rho[i])
        for f in range(4):
            j = nb[f, i]
            nv = normals[f, :, i].astype(np.float64)
            area = np.sqrt(nv @ nv)
            if j == -1:
                res[1:4, i] += p * nv
                continue
            other = (rho[j], mom[0, j], mom[1, j], mom[2, j], energy[j]) if j >= 0 else ff
            po = pressure(*other)
            vn = u @ nv
            vno = (np.array(other[1:4]) @ nv) / other[0]
            co = np.sqrt(gamma * po / other[0])
            smax = max(abs(vn) + c * area, abs(vno) + co * area)
            mine = (rho[i], mx, my, mz, energy[i])
            fl_i = (rho[i] * vn, mx * vn + p * nv[0], my * vn + p * nv[1], mz * vn + p * nv[2], (energy[i] + p) * vn)
            fl_o = (other[0] * vno, other[1] * vno + po * nv[0], other[2] * vno + po * nv[1],
                    other[3] * vno + po * nv[2], (other[4] + po) * vno)
            for v in range(5):
                res[v, i] += 0.5 * (fl_i[v] + fl_o[v]) - 0.5 * smax * (other[v] - mine[v])
    return res


@check("mesh", "euler_cell_flux")
def _():
    n, gamma, ff = 500, 1.4, (1.0, 0.3, 0.0, 0.0, 2.5)
    r = rng(36)
    rho = r.uniform(1, 2, n).astype(f32)
    mom = r.uniform(-0.3, 0.3, (3, n)).astype(f32)
    energy = r.uniform(2, 3, n).astype(f32)
    nb = r.integers(-3, n, (4, n)).astype(i32)
    nb[0, :20] = -1
    normals = r.uniform(-1, 1, (4, 3, n)).astype(f32)
    ref = _euler_ref(rho.astype(np.float64), mom.astype(np.float64), energy.astype(np.float64), nb, normals, gamma, ff)
    res = cp.zeros((5, n), f32)
    function("mesh", "euler_cell_flux")((cdiv(n, 128),), (128,),
                                        (dev(rho), dev(mom), dev(energy), dev(nb), dev(normals), res, i32(n),
                                         f32(gamma), *(f32(v) for v in ff)))
    return close(host(res), ref, 1e-4)


@check("mesh", "edge_flux_atomic")
def _():
    ne, nn = 2000, 300
    r = rng(37)
    ends = r.integers(0, nn, (ne, 2)).astype(i32)
    w, u = r.uniform(0, 1, ne).astype(f32), r.uniform(0, 1, nn).astype(f32)
    flux = w.astype(np.float64) * (u[ends[:, 1]] - u[ends[:, 0]])
    ref = np.zeros(nn)
    np.add.at(ref, ends[:, 0], flux)
    np.add.at(ref, ends[:, 1], -flux)
    res = cp.zeros(nn, f32)
    function("mesh", "edge_flux_atomic")((cdiv(ne, 256),), (256,), (dev(ends), dev(w), dev(u), res, i32(ne)))
    return close(host(res), ref, 1e-5)


@check("mesh", "mesh_smooth_csr")
def _():
    nn, relax = 300, 0.5
    rowptr, col = _csr(nn, nn, 4, 8, 38)
    xyz = rng(39).uniform(0, 1, (3, nn)).astype(f32)
    mean = np.stack([np.array([xyz[d, col[rowptr[v]:rowptr[v + 1]]].astype(np.float64).mean() for v in range(nn)])
                     for d in range(3)])
    ref = (1 - relax) * xyz + relax * mean
    out = cp.zeros((3, nn), f32)
    function("mesh", "mesh_smooth_csr")((cdiv(nn, 128),), (128,), (dev(rowptr), dev(col), dev(xyz), out, i32(nn),
                                                                    f32(relax)))
    return close(host(out), ref, 1e-5)


# -------------------------------------------------------------------------------------- ml

def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@check("ml", "softmax_row_online")
def _():
    rows, cols = 37, 100
    x = rng(40).uniform(-4, 4, (rows, cols)).astype(f32)
    y = cp.zeros((rows, cols), f32)
    function("ml", "softmax_row_online")((cdiv(rows * 32, 128),), (128,), (dev(x), y, i32(rows), i32(cols)))
    return close(host(y), _softmax(x.astype(np.float64)), 1e-5)


@check("ml", "layernorm_welford")
def _():
    rows, cols = 5, 300
    r = rng(41)
    x = r.uniform(-4, 4, (rows, cols)).astype(f32)
    g, b = r.uniform(0.5, 1.5, cols).astype(f32), r.uniform(-0.5, 0.5, cols).astype(f32)
    xd = x.astype(np.float64)
    ref = (xd - xd.mean(axis=1, keepdims=True)) / np.sqrt(xd.var(axis=1, keepdims=True) + 1e-5) * g + b
    y = cp.zeros((rows, cols), f32)
    function("ml", "layernorm_welford")((rows,), (128,), (dev(x), dev(g), dev(b), y, i32(cols), f32(1e-5)))
    return close(host(y), ref, 1e-4)


def _attention_ref(q, k, v, scale, causal):
    s = np.einsum("hqd,hkd->hqk", q.astype(np.float64), k) * scale
    if causal:
        seq = q.shape[1]
        s = np.where(np.tril(np.ones((seq, seq), bool)), s, -np.inf)
    return np.einsum("hqk,hkd->hqd", _softmax(s), v)


@check("ml", "attention_rowwarp")
def _():
    slices, seq, scale = 2, 70, 1 / np.sqrt(32)
    r = rng(42)
    q, k, v = (r.uniform(-1, 1, (slices, seq, 32)).astype(f32) for _ in range(3))
    out = []
    for causal, b in ((0, 128), (1, 64)):
        o = cp.zeros((slices, seq, 32), f32)
        function("ml", "attention_rowwarp")((cdiv(seq, b // 32), slices), (b,), (dev(q), dev(k), dev(v), o, i32(seq),
                                                                                i32(causal), f32(scale)))
        out.append(close(host(o), _attention_ref(q, k, v, scale, causal), 1e-4, f"causal={causal}"))
    return both(*out)


@check("ml", "conv2d_nchw_3x3")
def _():
    n, c, k, h, w = 2, 3, 4, 10, 13
    r = rng(43)
    x = r.uniform(-1, 1, (n, c, h, w)).astype(f32)
    wt = r.uniform(-0.1, 0.1, (k, c, 3, 3)).astype(f32)
    bias = r.uniform(-0.1, 0.1, k).astype(f32)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros((n, k, h, w)) + bias[None, :, None, None]
    for ky in range(3):
        for kx in range(3):
            ref += np.einsum("nchw,kc->nkhw", xp[:, :, ky:ky + h, kx:kx + w], wt[:, :, ky, kx])
    out = cp.zeros((n, k, h, w), f32)
    function("ml", "conv2d_nchw_3x3")((cdiv(w, 8), cdiv(h, 8), n * k), (8, 8),
                                      (dev(x), dev(wt), dev(bias), out, i32(c), i32(k), i32(h), i32(w)),
                                      shared_mem=9 * c * 4)
    return close(host(out), ref, 1e-5)


# ---------------------------------------------------------------------------------- tcgemm

def _half_gemm_data(m, n, k, seed):
    r = rng(seed)
    return r.uniform(-1, 1, (m, k)).astype(f16), r.uniform(-1, 1, (k, n)).astype(f16)


@check("tcgemm", "hgemm_wmma_cpasync")
def _():
    m, n, k = 256, 384, 96
    A, B = _half_gemm_data(m, n, k, 44)
    C = cp.zeros((m, n), f32)
    function("tcgemm", "hgemm_wmma_cpasync", 56832)((n // 128, m // 128), (256,), (dev(A), dev(B), C, i32(m), i32(n),
                                                                                    i32(k)), shared_mem=56832)
    return close(host(C), A.astype(np.float64) @ B.astype(np.float64), 1e-3)


@check("tcgemm", "hgemm_mma_ldmatrix")
def _():
    m, n, k = 256, 384, 96
    A, B = _half_gemm_data(m, n, k, 45)
    Bt = np.ascontiguousarray(B.T)
    C = cp.zeros((m, n), f32)
    function("tcgemm", "hgemm_mma_ldmatrix")((n // 128, m // 128), (128,), (dev(A), dev(Bt), C, i32(m), i32(n), i32(k)))
    return close(host(C), A.astype(np.float64) @ B.astype(np.float64), 1e-3)


# ---------------------------------------------------------------------------------- Triton

def _triton_fn(family: str):
    meta = triton_meta(family)
    return function(family, meta["entry"], meta["shared_bytes"]), meta


def _scratch():
    return cp.zeros(256, u8), cp.zeros(256, u8)


for _family, _entry, _tile in (("tt_matmul_128", "matmul_t128", 128), ("tt_matmul_64", "matmul_t64", 64)):
    def _matmul_check(family=_family, tile=_tile):
        m, n, k = 256, 384, 192
        A, B = _half_gemm_data(m, n, k, 46)
        C = cp.zeros((m, n), f16)
        fn, meta = _triton_fn(family)
        fn((n // tile, m // tile), tuple(meta["block"]), (dev(A), dev(B), C, i32(m), i32(n), i32(k), *_scratch()),
           shared_mem=meta["shared_bytes"])
        return close(host(C), A.astype(np.float64) @ B.astype(np.float64), 2e-3)
    check(_family, _entry)(_matmul_check)


@check("tt_softmax", "softmax_chunked")
def _():
    rows, cols = 5, 2000
    x = rng(47).uniform(-4, 4, (rows, cols)).astype(f16)
    y = cp.zeros((rows, cols), f16)
    fn, meta = _triton_fn("tt_softmax")
    fn((rows,), tuple(meta["block"]), (dev(x), y, i32(cols), *_scratch()), shared_mem=meta["shared_bytes"])
    return close(host(y), _softmax(x.astype(np.float64)), 2e-3)


@check("tt_layernorm", "layernorm_chunked")
def _():
    rows, cols = 5, 3000
    r = rng(48)
    x = r.uniform(-4, 4, (rows, cols)).astype(f16)
    w, b = r.uniform(0.5, 1.5, cols).astype(f16), r.uniform(-0.5, 0.5, cols).astype(f16)
    xd = x.astype(np.float64)
    ref = (xd - xd.mean(axis=1, keepdims=True)) / np.sqrt(xd.var(axis=1, keepdims=True) + 1e-5) * w + b
    y = cp.zeros((rows, cols), f16)
    fn, meta = _triton_fn("tt_layernorm")
    fn((rows,), tuple(meta["block"]), (dev(x), dev(w), dev(b), y, i32(cols), f32(1e-5), *_scratch()),
       shared_mem=meta["shared_bytes"])
    return close(host(y), ref, 5e-3)


for _family, _causal in (("tt_attention_causal", True), ("tt_attention_full", False)):
    def _attention_check(family=_family, causal=_causal):
        slices, seq, scale = 2, 256, 0.125
        r = rng(49)
        q, k, v = (r.uniform(-1, 1, (slices, seq, 64)).astype(f16) for _ in range(3))
        o = cp.zeros((slices, seq, 64), f16)
        fn, meta = _triton_fn(family)
        fn((seq // 128, slices), tuple(meta["block"]), (dev(q), dev(k), dev(v), o, i32(seq), f32(scale), *_scratch()),
           shared_mem=meta["shared_bytes"])
        return close(host(o), _attention_ref(q, k, v, scale, causal), 5e-3)
    check(_family, "attention_causal" if _causal else "attention_full")(_attention_check)


# ------------------------------------------------------------------------------------ main

def _cuda_error(exc: BaseException) -> bool:
    """A CUDA runtime or driver error: after most of them (an illegal address, a launch failure)
    the process's context is unusable, so the remaining kernels are checked in a new process."""
    return "CUDA" in type(exc).__name__ and "Error" in type(exc).__name__


def main() -> int:
    global cp
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="kernels or families to check (default: all)")
    parser.add_argument("--out", help="also write the report here (appended line by line)")
    parser.add_argument("--append", action="store_true", help=argparse.SUPPRESS)   # a continuation process
    ns = parser.parse_args()
    if ns.out and not ns.append:
        Path(ns.out).write_text("")

    def say(text: str) -> None:
        print(text, flush=True)
        if ns.out:   # line by line, so that a timeout keeps what was checked
            with open(ns.out, "a") as handle:
                handle.write(text + "\n")

    try:
        import cupy
    except ImportError as exc:
        say(f"SKIPPED: cannot import cupy ({exc}); no kernel checked")
        return 2
    cp = cupy
    start = time.time()
    failed = 0
    chosen = [c for c in CHECKS if not ns.only or c[0] in ns.only or c[1] in ns.only]
    for i, (family, kernel, fn) in enumerate(chosen):
        t0 = time.time()
        try:
            ok, detail = fn()
            cp.cuda.Device().synchronize()
            status = "ok  " if ok else "FAIL"
        except Exception as exc:   # a launch error: report it and carry on with the next kernel
            ok, status = False, "ERROR"
            detail = f"{type(exc).__name__}: {exc}".replace("\n", " ")[:300]
            traceback.print_exc(file=sys.stderr)
            if _cuda_error(exc) and i + 1 < len(chosen):
                say(f"{status} {family}/{kernel}: {detail} ({time.time() - t0:.1f} s); "
                    "the rest is checked in a new process")
                rest = [k for _, k, _ in chosen[i + 1:]]
                cmd = [sys.executable, __file__, "--only", *rest] + (["--out", ns.out, "--append"] if ns.out else [])
                return max(1, subprocess.run(cmd).returncode)
        failed += not ok
        say(f"{status} {family}/{kernel}: {detail} ({time.time() - t0:.1f} s)")
    which = "the remaining " if ns.append else ""
    say(f"checked {which}{len(chosen)} kernels in {time.time() - start:.1f} s: {len(chosen) - failed} ok, "
        f"{failed} not ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
