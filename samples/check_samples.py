#!/usr/bin/env python3
"""Run every sample kernel from its generated PTX on a GPU and compare with NumPy.

Usage (on a machine with a CUDA GPU and CuPy):  python samples/check_samples.py [--arch sm_90]

Loads samples/ptx/<name>.<arch>.ptx with cupy.RawModule, launches each kernel on a
small problem with the launch shapes of samples/<name>.launch.toml, and checks the
results against a NumPy reference.  Prints one line per kernel; exit status 1 on
any mismatch.  Not part of CI (needs a GPU).
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
failures: list[str] = []


def report(name: str, ok: bool, detail: str = "") -> None:
    print(f"{'ok  ' if ok else 'FAIL'} {name} {detail}")
    if not ok:
        failures.append(name)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="sm_90")
    args = ap.parse_args()
    import cupy as cp

    def mod(name):
        return cp.RawModule(path=os.path.join(HERE, "ptx", f"{name}.{args.arch}.ptx"))

    f32, i32 = np.float32, np.int32
    rng = np.random.default_rng(1)

    # ---------------------------------------------------------------- hotspot
    m = mod("hotspot")
    k = m.get_function("_Z14calculate_tempiPfS_S_iiiifffff")
    n, pyr = 64, 2
    temp = rng.uniform(320, 340, (n, n)).astype(f32)
    power = rng.uniform(0, 1e-3, (n, n)).astype(f32)
    Cap, Rx, Ry, Rz, step = f32(0.5), f32(1.0), f32(1.5), f32(20.0), f32(0.1)
    ref = temp.astype(np.float64)
    for _ in range(pyr):
        p = np.pad(ref, 1, mode="edge")
        c = ref
        ref = c + (step / Cap) * (power + (p[2:, 1:-1] + p[:-2, 1:-1] - 2 * c) / Ry
                                  + (p[1:-1, 2:] + p[1:-1, :-2] - 2 * c) / Rx + (80.0 - c) / Rz)
    d_t, d_p, d_o = cp.asarray(temp), cp.asarray(power), cp.zeros_like(cp.asarray(temp))
    g = -(-n // (16 - 2 * pyr))
    k((g, g), (16, 16), (i32(pyr), d_p, d_t, d_o, i32(n), i32(n), i32(pyr), i32(pyr),
                          Cap, Rx, Ry, Rz, step))
    out = cp.asnumpy(d_o)
    err = np.abs(out - ref).max()
    report("hotspot calculate_temp", err < 1e-2, f"max err {err:.2e}")

    # ---------------------------------------------------------------- knn
    m = mod("knn")
    k = m.get_function("_Z6euclidP8GeoPointPfiff")
    nrec = 42764
    loc = rng.uniform(-90, 90, (nrec, 2)).astype(f32)
    d_loc, d_dist = cp.asarray(loc), cp.zeros(nrec, dtype=f32)
    k(((nrec + 255) // 256,), (256,), (d_loc, d_dist, i32(nrec), f32(30.0), f32(90.0)))
    ref = np.sqrt((30.0 - loc[:, 0]) ** 2 + (90.0 - loc[:, 1]) ** 2)
    report("knn euclid", np.allclose(cp.asnumpy(d_dist), ref, rtol=1e-5))

    # ---------------------------------------------------------------- mm
    m = mod("mm")
    A = rng.standard_normal((320, 320)).astype(f32)
    B = rng.standard_normal((320, 640)).astype(f32)
    dA, dB, dC = cp.asarray(A), cp.asarray(B), cp.zeros((320, 640), dtype=f32)
    m.get_function("_Z14matrixMulTiledILi32EEvPfS0_S0_ii")((20, 10), (32, 32),
                                                          (dC, dA, dB, i32(320), i32(640)))
    report("mm matrixMulTiled<32>", np.allclose(cp.asnumpy(dC), A @ B, atol=1e-2))
    dC[:] = 0
    m.get_function("_Z14matrixMulTiledILi16EEvPfS0_S0_ii")((40, 20), (16, 16),
                                                          (dC, dA, dB, i32(320), i32(640)))
    report("mm matrixMulTiled<16>", np.allclose(cp.asnumpy(dC), A @ B, atol=1e-2))
    S = rng.standard_normal((256, 256)).astype(f32)
    T = rng.standard_normal((256, 256)).astype(f32)
    dO = cp.zeros((256, 256), dtype=f32)
    m.get_function("_Z15matrixMulSquareILi16EEvPKfS1_Pfi")((16, 16), (16, 16),
                                                          (cp.asarray(S), cp.asarray(T), dO, i32(256)))
    report("mm matrixMulSquare<16>", np.allclose(cp.asnumpy(dO), S @ T, atol=1e-2))

    # ---------------------------------------------------------------- instruction mix
    m = mod("instruction_mix")
    for beta in (1, 2, 4, 8):
        out = cp.zeros(256 * 4, dtype=f32)
        m.get_function(f"_Z11mix_alu_sfuILi{beta}EEvPfiff")((4,), (256,),
                                                          (out, i32(2), f32(0.999), f32(0.001)))
        x = (np.arange(1024) * 1e-6).astype(np.float64)
        for _ in range(2 * 16):
            for _ in range(beta):
                x = x * 0.999 + 0.001
            x = np.sin(x)
        report(f"instruction_mix beta={beta}", np.allclose(cp.asnumpy(out), x, atol=1e-3))

    # ---------------------------------------------------------------- iterative barrier
    m = mod("iterative_barrier")
    out = cp.zeros(4 * 128, dtype=f32)
    m.get_function("_Z17iterative_barrierPfif")((4,), (128,), (out, i32(10), f32(0.5)))
    v = np.tile(np.arange(128, dtype=np.float64), 4)
    for _ in range(10):
        v = v * 0.5 + 1.0
    report("iterative_barrier", np.allclose(cp.asnumpy(out), v, rtol=1e-5))
    out = cp.zeros(2 * 64, dtype=f32)
    m.get_function("_Z26iterative_barrier_exchangePfi")((2,), (64,), (out, i32(5)),
                                                         shared_mem=64 * 4)
    v = np.arange(64, dtype=np.float64)
    for _ in range(5):
        v = 0.5 * (v + np.roll(v, -1))
    report("iterative_barrier_exchange", np.allclose(cp.asnumpy(out), np.tile(v, 2), rtol=1e-5))

    # ---------------------------------------------------------------- transpose
    m = mod("transpose")
    W, H = 256, 128
    src = rng.standard_normal((H, W)).astype(f32)
    for kname in ("_Z15transpose_naivePfPKfii", "_Z15transpose_tiledPfPKfii",
                  "_Z16transpose_paddedPfPKfii"):
        dst = cp.zeros((W, H), dtype=f32)
        m.get_function(kname)((W // 32, H // 32), (32, 8), (dst, cp.asarray(src), i32(W), i32(H)))
        report(f"transpose {kname}", np.array_equal(cp.asnumpy(dst), src.T))
    dst = cp.zeros((H, W), dtype=f32)
    m.get_function("_Z9copy_tilePfPKfii")((W // 32, H // 32), (32, 8),
                                          (dst, cp.asarray(src), i32(W), i32(H)))
    report("transpose copy_tile", np.array_equal(cp.asnumpy(dst), src))

    # ---------------------------------------------------------------- copy
    m = mod("copy")
    nn = 10000
    src = rng.standard_normal(nn * 8 + 64).astype(f32)
    dst = cp.zeros(nn, dtype=f32)
    m.get_function("_Z11offset_copyPfPKfii")(((nn + 255) // 256,), (256,),
                                             (dst, cp.asarray(src), i32(nn), i32(3)))
    report("copy offset_copy", np.array_equal(cp.asnumpy(dst), src[3:3 + nn]))
    m.get_function("_Z11stride_copyPfPKfii")(((nn + 255) // 256,), (256,),
                                             (dst, cp.asarray(src), i32(nn), i32(8)))
    report("copy stride_copy", np.array_equal(cp.asnumpy(dst), src[: nn * 8 : 8]))

    # ---------------------------------------------------------------- floyd-warshall
    m = mod("floyd_warshall")
    nv, B = 128, 32
    INF = 1 << 29
    dist = rng.integers(1, 100, (nv, nv)).astype(i32)
    dist[rng.random((nv, nv)) < 0.9] = INF
    np.fill_diagonal(dist, 0)
    ref = dist.astype(np.int64)
    for kk in range(nv):
        ref = np.minimum(ref, ref[:, kk:kk + 1] + ref[kk:kk + 1, :])
    d = cp.asarray(dist)
    t = nv // B
    p1, p2, p3 = (m.get_function(f"_Z9fw_phase{i}Piii") for i in (1, 2, 3))
    for p in range(t):
        p1((1,), (B, B), (d, i32(nv), i32(p)))
        p2((t, 2), (B, B), (d, i32(nv), i32(p)))
        p3((t, t), (B, B), (d, i32(nv), i32(p)))
    got = cp.asnumpy(d).astype(np.int64)
    report("floyd_warshall 3 phases", np.array_equal(np.minimum(got, INF), np.minimum(ref, INF)))

    # ---------------------------------------------------------------- cellular automaton
    m = mod("cellular_automaton")
    R, C = 64, 96
    world = rng.integers(0, 3, (R, C)).astype(i32)
    ca = np.zeros((R, C), np.int64)
    cb = np.zeros((R, C), np.int64)
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            if dr or dc:
                sh = np.roll(np.roll(world, -dr, 0), -dc, 1)
                ca += sh == 1
                cb += sh == 2
    nxt = np.zeros_like(world)
    fought = np.zeros_like(world)
    for r in range(R):
        for c in range(C):
            s, a, b = world[r, c], ca[r, c], cb[r, c]
            if s == 0:
                nxt[r, c] = 1 if (a == 3 and b != 3) else 2 if (b == 3 and a != 3) else 0
            else:
                fr, ho = (a, b) if s == 1 else (b, a)
                if ho > fr:
                    fought[r, c] = 1
                elif 2 <= fr <= 3:
                    nxt[r, c] = s
    for kname, grid, block in (("_Z20invasion_step_globalPKiPiS1_ii", (C // 16, R // 16), (16, 16)),
                               ("_Z20invasion_step_sharedPKiPiS1_ii", (C // 16, R // 16), (16, 16)),
                               ("_Z20invasion_step_globalPKiPiS1_ii", (C // 32, R // 8), (32, 8))):
        dn, df = cp.zeros((R, C), dtype=i32), cp.zeros((R, C), dtype=i32)
        m.get_function(kname)(grid, block, (cp.asarray(world), dn, df, i32(R), i32(C)))
        ok = np.array_equal(cp.asnumpy(dn), nxt) and np.array_equal(cp.asnumpy(df), fought)
        report(f"cellular_automaton {kname} {block}", ok)

    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
