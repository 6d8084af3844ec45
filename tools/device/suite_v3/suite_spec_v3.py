"""Validation suite v3: what every kernel is launched with, and the data it is launched on.

The same format as suite v2 (``tools/device/suite_v2/suite_spec.py`` defines the records and
``gen_suite.py --suite v3`` turns this file into ``samples/v3/<family>.launch.toml`` and the
device driver's manifest). Suite v3 is application code: dense linear algebra, stencils,
dynamic-programming wavefronts, elimination and factorisation, clustering, image processing,
graph and sparse kernels, scans and sorts, particles, unstructured meshes, neural-network layers
in CUDA and tensor-core GEMMs, and six kernels compiled by Triton (``tools/device/suite_v3/
gen_triton.py``: the threads per program and the dynamic shared memory of those launches are
Triton's, read from ``samples/v3/ptx/<family>.sm_90.triton.json``).

Sizes are chosen so that each launch runs roughly 20 us - 5 ms on an H100. Every integer buffer
that a kernel indexes with or branches on has a declared data pattern (gen_suite.py writes it into
``[launch.data]``): random (uniform ints), offsets (prefix sums of uniform lengths), linear (sorted).

    python3 tools/device/suite_v2/gen_suite.py --suite v3 toml|split|manifest|list
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "suite_v2"))

from suite_spec import Buf, Cfg, Const, Csr, Family, Kernel, Tex, cdiv  # noqa: E402

TITLE = "Validation suite v3"
DIRECTORY = "v3"
SPEC_FILE = "suite_v3/suite_spec_v3.py"
SPLIT_COMMAND = "tools/device/suite_v2/gen_suite.py --suite v3 split"

M = 1 << 20
V3 = Path(__file__).resolve().parents[3] / "samples" / "v3"


def c1(name: str, n: int, b: int, smem: int = 0, what: str = "n", smem_note: str = "") -> Cfg:
    """A 1-D launch with one thread per element."""
    return Cfg(name, (cdiv(n, b),), (b,), smem, note=f"ceil({what} / {b})", smem_note=smem_note)


def c2(name: str, nx: int, ny: int, bx: int, by: int, smem: int = 0, smem_note: str = "") -> Cfg:
    """A 2-D launch with one thread per point of an nx x ny grid."""
    return Cfg(name, (cdiv(nx, bx), cdiv(ny, by)), (bx, by), smem, note=f"ceil({nx}/{bx}), ceil({ny}/{by})",
               smem_note=smem_note)


def gs(name: str, grid: int, b: int, smem: int = 0) -> Cfg:
    """A grid-stride launch: the grid is a few waves of the GPU (132 SMs), not the data size."""
    return Cfg(name, (grid,), (b,), smem, note=f"{grid / 132:g} x 132 SMs (grid-stride)")


def triton_meta(family: str) -> dict:
    """What Triton decided for a compiled kernel (gen_triton.py): threads, shared memory, params."""
    return json.loads((V3 / "ptx" / f"{family}.sm_90.triton.json").read_text())


FAMILY_ORDER = [
    "gemm", "gemv", "stencil", "dynprog", "elim", "trisolve", "kmeans", "image", "graph", "scansort",
    "particles", "mesh", "ml", "tcgemm",
    "tt_matmul_128", "tt_matmul_64", "tt_softmax", "tt_layernorm", "tt_attention_causal", "tt_attention_full",
]

FAMILIES: dict[str, Family] = {}
# A kernel whose scalar arguments change between its configurations (problem sizes) has one Kernel
# record per argument set; gen_suite.py treats the records of one name as one kernel.

# ------------------------------------------------------------------------- dense linear algebra

GEMM_ARGS = {6: (1.0, "alpha"), 7: (0.5, "beta")}


def _gemm_args(m: int, n: int, k: int) -> dict:
    return {3: (m, "m"), 4: (n, "n"), 5: (k, "k"), **GEMM_ARGS}


FAMILIES["gemm"] = Family(
    description="Single-precision matrix products as application code writes them without cuBLAS: a naive "
                "product with 2-D blocks (8x8 to 32x16) and with a 1-D grid, the shared-memory tiled product "
                "(tile = square block edge), and a lower-triangle SYRK. C = alpha A B + beta C, row-major.",
    buffers=[Buf("A", "f32u", 4 * M, -1.0, 1.0), Buf("B", "f32u", 4 * M, -1.0, 1.0),
             Buf("C", "f32u", 4 * M, -1.0, 1.0)],
    kernels=[
        Kernel("gemm_naive_2d", ["A", "B", "C"], _gemm_args(1024, 1024, 1024),
               [c2(f"b{bx}x{by}", 1024, 1024, bx, by) for bx, by in ((32, 4), (32, 8), (32, 16), (16, 16), (8, 8))]),
        Kernel("gemm_naive_2d", ["A", "B", "C"], _gemm_args(2048, 2048, 256),
               [c2("m2048n2048k256-b32x8", 2048, 2048, 32, 8)]),
        Kernel("gemm_naive_1d", ["A", "B", "C"], _gemm_args(1024, 1024, 1024),
               [c1(f"b{b}", 1024 * 1024, b, what="m*n") for b in (128, 256, 512)]),
        Kernel("gemm_naive_1d", ["A", "B", "C"], _gemm_args(1000, 1000, 1000),
               [c1("m1000-b256", 1000 * 1000, 256, what="m*n")]),
        Kernel("gemm_smem_tiled", ["A", "B", "C"], _gemm_args(1536, 1536, 1536),
               [c2(f"b{t}x{t}", 1536, 1536, t, t, 2 * t * t * 4, "two T x T float tiles") for t in (8, 16, 32)]),
        Kernel("gemm_smem_tiled", ["A", "B", "C"], _gemm_args(2048, 1024, 2048),
               [c2("m2048n1024k2048-b16x16", 1024, 2048, 16, 16, 2 * 16 * 16 * 4, "two T x T float tiles")]),
        Kernel("syrk_lower", ["A", "C"], {2: (2048, "n"), 3: (256, "k"), 4: (1.0, "alpha"), 5: (0.5, "beta")},
               [c2(f"b{bx}x{by}", 2048, 2048, bx, by) for bx, by in ((16, 16), (32, 8), (32, 4), (8, 8))]),
    ],
)

FAMILIES["gemv"] = Family(
    description="Matrix-vector products y = A x on a 256 MB matrix: one thread per row of a row-major matrix, "
                "one warp per row (2-D blocks 32 x R, shuffle reduction), and one thread per row of a "
                "column-major matrix.",
    buffers=[Buf("A", "f32u", 64 * M, -1.0, 1.0), Buf("x", "f32u", 16384, -1.0, 1.0), Buf("y", "zero4", 65536)],
    kernels=[
        Kernel("gemv_row_thread", ["A", "x", "y"], {3: (16384, "m (rows)"), 4: (4096, "n (columns)")},
               [c1(f"b{b}", 16384, b, what="m") for b in (64, 128, 256)]),
        Kernel("gemv_row_thread", ["A", "x", "y"], {3: (65536, "m (rows)"), 4: (1024, "n (columns)")},
               [c1("m65536n1024-b128", 65536, 128, what="m")]),
        Kernel("gemv_row_warp", ["A", "x", "y"], {3: (16384, "m (rows)"), 4: (4096, "n (columns)")},
               [Cfg(f"b32x{r}", (16384 // r,), (32, r), note=f"m / {r} rows per block") for r in (4, 8, 16)]),
        Kernel("gemv_row_warp", ["A", "x", "y"], {3: (65536, "m (rows)"), 4: (1024, "n (columns)")},
               [Cfg("m65536n1024-b32x8", (65536 // 8,), (32, 8), note="m / 8 rows per block")]),
        Kernel("gemv_col_major", ["A", "x", "y"], {3: (16384, "m (rows, leading dimension)"), 4: (4096, "n")},
               [c1(f"b{b}", 16384, b, what="m") for b in (128, 256, 512)]),
        Kernel("gemv_col_major", ["A", "x", "y"], {3: (65536, "m (rows, leading dimension)"), 4: (1024, "n")},
               [c1("m65536n1024-b256", 65536, 256, what="m")]),
    ],
)

# ------------------------------------------------------------------------------------- stencils

FAMILIES["stencil"] = Family(
    description="Structured-grid updates: a 9-point Jacobi sweep and a leapfrog wave-equation step on 8192 x 8192 "
                "floats, and a 7-point heat-equation step on 512 x 512 x 128 floats with 2.5-D blocking "
                "(blocks march along z, current plane in shared memory, z neighbours in registers).",
    buffers=[Buf("u", "f32u", 64 * M), Buf("u_prev", "f32u", 64 * M), Buf("out", "zero4", 64 * M)],
    kernels=[
        Kernel("jacobi2d_9pt", ["u", "out"],
               {2: (8192, "nx"), 3: (8192, "ny"), 4: (0.4, "c0 (centre)"), 5: (0.1, "c1 (edges)"),
                6: (0.05, "c2 (corners)")},
               [c2(f"b{bx}x{by}", 8192, 8192, bx, by) for bx, by in ((32, 4), (32, 8), (16, 16), (64, 4))]),
        Kernel("wave2d_leapfrog", ["u", "u_prev", "out"], {3: (8192, "nx"), 4: (8192, "ny"), 5: (0.25, "courant^2")},
               [c2(f"b{bx}x{by}", 8192, 8192, bx, by) for bx, by in ((32, 8), (32, 16), (16, 16), (128, 2))]),
        Kernel("heat3d_zmarch", ["u", "out"],
               {2: (512, "nx"), 3: (512, "ny"), 4: (128, "nz (126 planes per thread)"), 5: (0.4, "c0"),
                6: (0.1, "c1")},
               [c2(f"b{bx}x{by}", 512, 512, bx, by, (bx + 2) * (by + 2) * 4, "(bx+2)*(by+2) floats: plane + halo")
                for bx, by in ((32, 4), (32, 8), (16, 16), (64, 8))]),
    ],
)

# ------------------------------------------------------------------------ dynamic programming


def _sw_smem(length: int, threads: int) -> int:
    return cdiv(4 * (length + 1 + 2 * threads) + length, 16) * 16


FAMILIES["dynprog"] = Family(
    description="Dynamic-programming wavefronts: Smith-Waterman scores of a batch of DNA sequence pairs (one block "
                "of 16 to 64 threads per pair, a strip-wise anti-diagonal wavefront in shared memory with a barrier "
                "per step; grids of 132 to 528 blocks), a minimum-path sweep over rows with a ghost zone "
                "(pathfinder), and batched Viterbi decoding (one block per sequence, one thread per state).",
    buffers=[Buf("query", "u8u", 528 * 1024, 0, 4), Buf("target", "u8u", 528 * 1024, 0, 4),
             Buf("best", "zero4", 4096),
             Buf("wall", "i32u", 64 * M, 0, 10), Buf("src", "i32u", M, 0, 1000), Buf("dst", "zero4", M),
             Buf("log_trans", "f32u", 256 * 256, -8.0, 0.0), Buf("log_emit", "f32u", 256 * 64, -8.0, 0.0),
             Buf("log_init", "f32u", 256, -8.0, 0.0), Buf("obs", "i32u", 2 * M, 0, 64),
             Buf("backptr", "zero2", 64 * M)],
    kernels=[
        *[Kernel("sw_batch_strip", ["query", "target", "best"],
                 {3: (length, "len (query and target)"), 4: (2, "match"), 5: (-1, "mismatch"), 6: (1, "gap")},
                 [Cfg(f"b{t}-p{pairs}-len{length}", (pairs,), (t,), _sw_smem(length, t), note="one block per pair",
                      smem_note="4*(len+1+2*T) + len bytes")])
          for t, pairs, length in ((16, 132, 512), (16, 528, 512), (32, 264, 512), (64, 264, 1024))],
        *[Kernel("pathfinder_rows", ["wall", "src", "dst"],
                 {3: (M, "cols"), 4: (0, "start_row"), 5: (steps, "steps (rows per launch)")},
                 [Cfg(f"b{b}-s{steps}", (cdiv(M, b - 2 * steps),), (b,), 2 * b * 4,
                      note=f"ceil(cols / (blockDim - 2*steps = {b - 2 * steps}))", smem_note="2 * blockDim ints")])
          for b, steps in ((256, 20), (128, 10), (512, 40), (1024, 60))],
        *[Kernel("viterbi_batch", ["log_trans", "log_emit", "log_init", "obs", "backptr", "best"],
                 {6: (ns, "nstates (= blockDim.x)"), 7: (64, "nsym"), 8: (steps, "steps (sequence length)")},
                 [Cfg(f"s{ns}-t{steps}-n{batch}", (batch,), (ns,), 2 * ns * 4, note="one block per sequence",
                      smem_note="2 * nstates floats")])
          for ns, steps, batch in ((64, 512, 1024), (128, 256, 512), (256, 128, 264), (32, 1024, 2048))],
    ],
)

# ----------------------------------------------------------------- elimination, factorisation

LU_N, LU_BATCH = 512, 256

FAMILIES["elim"] = Family(
    description="Gaussian elimination and LU factorisation: the row-update step of dense elimination (8192 x 8192, "
                "2-D blocks 4x4 to 32x32), batched LU with partial pivoting in shared memory (a serial pivot search "
                "by thread 0), and the perimeter and trailing-update kernels of a blocked LU of 256 matrices of "
                "512 x 512.",
    buffers=[Buf("a", "f32u", 64 * M, -1.0, 1.0), Buf("mult", "f32u", 64 * M, -1.0, 1.0),
             Buf("b", "f32u", 8192, -1.0, 1.0),
             Buf("A_small", "f32u", 16 * M, -1.0, 1.0), Buf("LU_small", "zero4", 16 * M), Buf("piv", "zero4", M),
             Buf("a_batch", "f32u", LU_BATCH * LU_N * LU_N, -1.0, 1.0)],
    kernels=[
        *[Kernel("gauss_fan2", ["mult", "a", "b"], {3: (8192, "n"), 4: (t, "t (elimination step)")},
                 [Cfg(f"b{bx}x{by}-t{t}", (cdiv(8192 - t, bx), cdiv(8192 - 1 - t, by)), (bx, by),
                      note=f"ceil((n-t)/{bx}), ceil((n-1-t)/{by})")])
          for bx, by, t in ((4, 4, 0), (8, 8, 0), (16, 16, 0), (32, 32, 0), (32, 8, 2048), (16, 16, 4096))],
        *[Kernel("lu_batched_pivot", ["A_small", "LU_small", "piv"], {3: (n, "n (matrix order)")},
                 [Cfg(f"n{n}-b{b}", (16 * M // (n * n),), (b,), n * n * 4, note="one block per matrix",
                      smem_note="n * n floats")])
          for n, b in ((64, 64), (64, 128), (64, 256), (32, 32))],
        *[Kernel("lu_perimeter", ["a_batch"], {1: (LU_N, "n (matrix order)"), 2: (off, "off (diagonal tile offset)")},
                 [Cfg(f"b{2 * tile}-off{off}", ((LU_N - off) // tile - 1, LU_BATCH), (2 * tile,),
                      3 * tile * (tile + 1) * 4, note=f"(n - off)/{tile} - 1 tiles, {LU_BATCH} matrices",
                      smem_note=f"3 tiles of {tile} x {tile + 1} floats")])
          for tile, off in ((16, 0), (32, 0), (64, 0), (32, 256))],
        *[Kernel("lu_internal", ["a_batch"], {1: (LU_N, "n (matrix order)"), 2: (off, "off (diagonal tile offset)")},
                 [Cfg(f"b{t}x{t}-off{off}", ((LU_N - off) // t - 1, (LU_N - off) // t - 1, LU_BATCH), (t, t),
                      2 * t * t * 4, note=f"trailing tiles of {t} x {t}, {LU_BATCH} matrices",
                      smem_note="two panel tiles")])
          for t, off in ((8, 0), (16, 0), (32, 0), (16, 256))],
    ],
)

FAMILIES["trisolve"] = Family(
    description="Triangular loops: forward substitution for many right-hand sides (one thread per right-hand side, "
                "row i a dot product over i rows), a left-looking Cholesky column (thread 0 of each block "
                "computes the diagonal serially while the block waits; each thread then a dot product of two rows "
                "of L), and a packed lower-triangular matrix-vector product (thread i loops over i + 1 columns).",
    buffers=[Buf("L_tri", "f32u", 65536, 0.5, 1.0), Buf("B_rhs", "f32u", 16 * M, -1.0, 1.0),
             Buf("X_rhs", "zero4", 16 * M),
             Buf("A_spd", "f32u", 6144 * 6144, 1.0, 2.0), Buf("L_chol", "f32u", 6144 * 6144, -0.01, 0.01),
             Buf("P_packed", "f32u", 12288 * 12289 // 2, -1.0, 1.0), Buf("x", "f32u", 12288, -1.0, 1.0),
             Buf("y", "zero4", 12288)],
    kernels=[
        Kernel("trsm_lower_rhs", ["L_tri", "B_rhs", "X_rhs"], {3: (256, "n"), 4: (32768, "nrhs")},
               [c1(f"n256-b{b}", 32768, b, what="nrhs") for b in (64, 128, 256)]),
        Kernel("trsm_lower_rhs", ["L_tri", "B_rhs", "X_rhs"], {3: (128, "n"), 4: (131072, "nrhs")},
               [c1("n128-b128", 131072, 128, what="nrhs")]),
        *[Kernel("cholesky_col", ["A_spd", "L_chol"], {2: (6144, "n"), 3: (k, "k (column)")},
                 [Cfg(f"k{k}-b{b}", (cdiv(6144 - k - 1, b),), (b,), note=f"ceil((n - k - 1) / {b})")])
          for k, b in ((1024, 128), (3072, 256), (4608, 64), (3072, 128))],
        Kernel("ltri_packed_matvec", ["P_packed", "x", "y"], {3: (8192, "n")},
               [c1(f"n8192-b{b}", 8192, b) for b in (64, 128, 256)]),
        Kernel("ltri_packed_matvec", ["P_packed", "x", "y"], {3: (12288, "n")}, [c1("n12288-b128", 12288, 128)]),
    ],
)

# ------------------------------------------------------------------------------------ clustering

NPOINTS = M


def _assign_args(k: int, d: int, first: int) -> dict:
    return {first: (NPOINTS, "npoints"), first + 1: (k, "nclusters"), first + 2: (d, "nfeatures")}


ASSIGN_SHAPES = ((16, 16, 256), (32, 16, 128), (8, 34, 256), (64, 8, 512))

FAMILIES["kmeans"] = Family(
    description="K-means on 1M points: the nearest-centre assignment with feature-major features read through a "
                "1-D texture inside the loop over clusters (centres in constant memory), the same with point-major "
                "features and centres read with __ldg, and the centre update (per-block shared-memory sums, "
                "grid-stride).",
    buffers=[Buf("feat_pm", "f32u", NPOINTS * 34), Buf("feat_fm", "f32u", NPOINTS * 34),
             Buf("centres", "f32u", 8192), Buf("membership", "zero4", NPOINTS),
             Buf("member16", "i32u", NPOINTS, 0, 16), Buf("member64", "i32u", NPOINTS, 0, 64),
             Buf("sums", "zero4", 8192), Buf("counts", "zero4", 64)],
    textures=[Tex("tex_feat", "tex1d", buf="feat_fm")],
    consts=[Const("c_centres", 8192, 0.0, 1.0)],
    kernels=[
        *[Kernel("kmeans_assign_tex", ["tex_feat", "membership"], _assign_args(k, d, 2),
                 [c1(f"k{k}-d{d}-b{b}", NPOINTS, b, what="npoints")]) for k, d, b in ASSIGN_SHAPES],
        *[Kernel("kmeans_assign_ldg", ["feat_pm", "centres", "membership"], _assign_args(k, d, 3),
                 [c1(f"k{k}-d{d}-b{b}", NPOINTS, b, what="npoints")]) for k, d, b in ASSIGN_SHAPES],
        *[Kernel("kmeans_centroid_accum", ["feat_pm", f"member{k}", "sums", "counts"], _assign_args(k, 16, 4),
                 [gs(f"k{k}-g{g}-b{b}", g, b, k * 17 * 4)])
          for k, g, b in ((16, 264, 256), (16, 528, 128), (16, 1056, 256), (64, 264, 512))],
    ],
)

# ------------------------------------------------------------------------------ image processing

IMG, PIX = 4096, 8192

FAMILIES["image"] = Family(
    description="Image processing: 2-D convolution of a 4096 x 4096 float image with a constant-memory filter of "
                "radius 1 to 4 (and a 2048 x 2048 one), Sobel on an 8192 x 8192 8-bit image, its 256-bin "
                "histogram (shared-memory counts) and histogram equalisation (lookup table in shared memory).",
    buffers=[Buf("img", "f32u", IMG * IMG), Buf("img_out", "zero4", IMG * IMG),
             Buf("pix", "u8u", PIX * PIX, 0, 256), Buf("pix_out", "zero1", PIX * PIX), Buf("hist", "zero4", 256),
             Buf("cdf", "i32sorted", 256, 4096, PIX * PIX)],
    consts=[Const("c_filter", 289, 0.0, 0.02)],
    kernels=[
        *[Kernel("conv2d_const", ["img", "img_out"], {2: (w, "w"), 3: (w, "h"), 4: (r, "radius")},
                 [c2(f"r{r}-w{w}-b{bx}x{by}", w, w, bx, by)])
          for r, w, bx, by in ((1, IMG, 32, 8), (2, IMG, 32, 8), (3, IMG, 16, 16), (4, IMG, 32, 4), (3, 2048, 16, 16))],
        Kernel("sobel_u8", ["pix", "pix_out"], {2: (PIX, "w"), 3: (PIX, "h")},
               [c2(f"b{bx}x{by}", PIX, PIX, bx, by) for bx, by in ((32, 8), (16, 16), (32, 16), (64, 4))]),
        Kernel("hist256_u8", ["pix", "hist"], {2: (PIX * PIX, "npixels")},
               [gs(f"g{g}-b{b}", g, b) for g, b in ((264, 256), (528, 256), (1056, 512), (132, 1024))]),
        Kernel("histeq_apply", ["pix", "pix_out", "cdf"], {3: (PIX * PIX, "npixels")},
               [gs(f"g{g}-b{b}", g, b) for g, b in ((264, 256), (528, 512), (1056, 128), (132, 1024))]),
    ],
)

# ------------------------------------------------------------------------------- graphs, sparse

NV, ELL_ROWS = 4 * M, M

FAMILIES["graph"] = Family(
    description="Graph traversal and sparse kernels on a random graph of 4M vertices with 2 to 14 neighbours each: "
                "a top-down BFS level (frontier = vertices at the current level, levels uniform in [-1, 8), "
                "-1 = not reached), a pull PageRank iteration, and an ELLPACK SpMV (1M rows, a fifth of the "
                "entries padding with negative columns).",
    csr=[Csr("G", NV, NV, 2, 14)],
    buffers=[Buf("level", "i32u", NV, -1, 8), Buf("next", "zero4", NV), Buf("contrib", "f32u", NV, 0.0, 1e-6),
             Buf("rank", "zero4", NV),
             Buf("ell_cols", "i32u", ELL_ROWS * 24, -ELL_ROWS // 4, ELL_ROWS), Buf("ell_vals", "f32u", ELL_ROWS * 24),
             Buf("x", "f32u", ELL_ROWS), Buf("y", "zero4", ELL_ROWS)],
    kernels=[
        *[Kernel("bfs_level_expand", ["G_rowptr", "G_col", "level", "next"],
                 {4: (NV, "nverts"), 5: (cur, "cur (the frontier's level)")},
                 [c1(f"l{cur}-b{b}", NV, b, what="nverts")]) for cur, b in ((3, 128), (3, 256), (3, 512), (7, 256))],
        Kernel("pagerank_pull", ["G_rowptr", "G_col", "contrib", "rank"], {4: (NV, "nverts"), 5: (0.85, "damping")},
               [c1(f"b{b}", NV, b, what="nverts") for b in (64, 128, 256, 512)]),
        *[Kernel("spmv_ell", ["ell_cols", "ell_vals", "x", "y"], {4: (ELL_ROWS, "nrows"), 5: (w, "width")},
                 [c1(f"w{w}-b{b}", ELL_ROWS, b, what="nrows")])
          for w, b in ((24, 128), (24, 256), (24, 512), (12, 256))],
    ],
)

# ------------------------------------------------------------------------------- scans and sorts

NS = 16 * M

FAMILIES["scansort"] = Family(
    description="Scans and sorts on 16M elements: a work-efficient block scan (Blelloch, padded shared memory), the "
                "local pass of a 4-bit LSD radix sort (ballot splits), one global step of a bitonic sort, and a "
                "complete bitonic sort of each block in shared memory.",
    buffers=[Buf("data", "f32u", NS), Buf("out", "zero4", NS), Buf("sums", "zero4", NS // 256),
             Buf("keys", "i32u", NS, 0, 1 << 32), Buf("keys_out", "zero4", NS), Buf("counts", "zero4", 2 * M)],
    kernels=[
        Kernel("scan_block_blelloch", ["data", "out", "sums"], {3: (NS, "n")},
               [Cfg(f"b{b}", (cdiv(NS, 2 * b),), (b,), (2 * b + 2 * b // 32) * 4, note=f"ceil(n / {2 * b})",
                    smem_note="2B + 2B/32 floats") for b in (128, 256, 512, 1024)]),
        *[Kernel("radix_local_4bit", ["keys", "keys_out", "counts"], {3: (NS, "n"), 4: (shift, "shift (digit bit)")},
                 [c1(f"b{b}-s{shift}", NS, b, b * 4, smem_note="blockDim keys")])
          for b, shift in ((128, 0), (256, 0), (512, 4), (256, 28))],
        *[Kernel("bitonic_step", ["data"], {1: (j, "j (partner distance)"), 2: (k, "k (merge size)")},
                 [c1(f"k{k.bit_length() - 1}-j{j.bit_length() - 1}-b{b}", NS, b)])
          for k, j, b in ((1 << 24, 1 << 23, 256), (1 << 20, 1 << 10, 512), (1 << 20, 16, 256),
                          (1 << 22, 1 << 21, 1024))],
        Kernel("bitonic_sort_block", ["data", "out"], {2: (NS, "n")},
               [c1(f"b{b}", NS, b, b * 4, smem_note="blockDim floats") for b in (128, 256, 512, 1024)]),
    ],
)

# ----------------------------------------------------------------------------------- particles

NBODY = 32768
MD_CELLS = {"c48": (48, 8, 24), "c64": (64, 4, 12), "c40": (40, 24, 40)}   # ncx, particles per cell lo, hi

FAMILIES["particles"] = Family(
    description="Particles: all-pairs gravity with shared-memory tiles (float4 bodies), and Lennard-Jones forces with "
                "cell lists (one block per cell; cells of 4 to 40 particles; positions relative to the cell).",
    buffers=[Buf("bodies", "f32u", 4 * NBODY), Buf("accel", "zero4", 4 * NBODY),
             *[Buf(f"start_{name}", "i32offsets", ncx ** 3 + 1, lo, hi) for name, (ncx, lo, hi) in MD_CELLS.items()],
             Buf("md_pos", "f32u", 4 * 3_200_000), Buf("md_force", "zero4", 4 * 3_200_000)],
    kernels=[
        *[Kernel("nbody_float4_tile", ["bodies", "accel"], {2: (n, "n (bodies)"), 3: (1e-4, "eps^2 (softening)")},
                 [c1(f"n{n}-b{b}", n, b, b * 16, smem_note="blockDim float4")])
          for n, b in ((NBODY, 64), (NBODY, 128), (NBODY, 256), (16384, 256))],
        *[Kernel("md_cells_lj", ["md_pos", f"start_{name}", "md_force"],
                 {3: (MD_CELLS[name][0], "ncx (cells per edge)"), 4: (1.0, "cell_edge (= cut-off)"),
                  5: (0.09, "sigma^2"), 6: (1.0, "epsilon")},
                 [Cfg(f"{name}-b{b}", (MD_CELLS[name][0] ** 3,), (b,), b * 16, note="one block per cell",
                      smem_note="blockDim float4")])
          for name, b in (("c48", 32), ("c64", 32), ("c40", 64), ("c48", 64))],
    ],
)

# ------------------------------------------------------------------------- unstructured meshes

NCELLS, NNODES, NEDGES = 2 * M, 4 * M, 8 * M

FAMILIES["mesh"] = Family(
    description="Unstructured-mesh loops: a cell-centred Euler flux residual on 2M tetrahedra (4 faces, neighbour "
                "indices random, 3 % negative = boundary faces), an edge-based diffusion residual with atomics "
                "(8M edges, 4M nodes) and node-based Laplacian smoothing (CSR adjacency of 4 to 8 neighbours).",
    csr=[Csr("adj", NNODES, NNODES, 4, 8)],
    buffers=[Buf("density", "f32u", NCELLS, 1.0, 2.0), Buf("mom", "f32u", 3 * NCELLS, -0.3, 0.3),
             Buf("energy", "f32u", NCELLS, 2.0, 3.0), Buf("nb", "i32u", 4 * NCELLS, -(1 << 16), NCELLS),
             Buf("normals", "f32u", 12 * NCELLS, -1.0, 1.0), Buf("res", "zero4", 5 * NCELLS),
             Buf("ends", "i32u", 2 * NEDGES, 0, NNODES), Buf("w", "f32u", NEDGES), Buf("u", "f32u", NNODES),
             Buf("node_res", "zero4", NNODES),
             Buf("xyz", "f32u", 3 * NNODES), Buf("xyz_new", "zero4", 3 * NNODES)],
    kernels=[
        Kernel("euler_cell_flux", ["density", "mom", "energy", "nb", "normals", "res"],
               {6: (NCELLS, "ncells"), 7: (1.4, "gamma"), 8: (1.0, "far-field density"),
                9: (0.3, "far-field momentum x"), 10: (0.0, "far-field momentum y"), 11: (0.0, "far-field momentum z"),
                12: (2.5, "far-field energy")},
               [c1(f"b{b}", NCELLS, b, what="ncells") for b in (128, 192, 256, 512)]),
        Kernel("edge_flux_atomic", ["ends", "w", "u", "node_res"], {4: (NEDGES, "nedges")},
               [c1(f"b{b}", NEDGES, b, what="nedges") for b in (128, 256, 512)]),
        Kernel("edge_flux_atomic", ["ends", "w", "u", "node_res"], {4: (NEDGES // 2, "nedges")},
               [c1("e4M-b256", NEDGES // 2, 256, what="nedges")]),
        Kernel("mesh_smooth_csr", ["adj_rowptr", "adj_col", "xyz", "xyz_new"],
               {4: (NNODES, "nnodes"), 5: (0.5, "relax")},
               [c1(f"b{b}", NNODES, b, what="nnodes") for b in (64, 128, 256, 512)]),
    ],
)

# ----------------------------------------------------------------------------------- ML (CUDA)

FAMILIES["ml"] = Family(
    description="Neural-network layers in fp32 CUDA: row softmax (a warp per row, online max / sum), layer norm "
                "(a block per row, Welford), attention with head dimension 32 (a warp per query, K / V tiles in "
                "shared memory, optional causal mask), and a direct 3x3 NCHW convolution.",
    buffers=[Buf("x", "f32u", 32 * M, -4.0, 4.0), Buf("y", "zero4", 32 * M),
             Buf("gamma", "f32u", 4096, 0.5, 1.5), Buf("beta", "f32u", 4096, -0.5, 0.5),
             Buf("Q", "f32u", 2 * M, -1.0, 1.0), Buf("K", "f32u", 2 * M, -1.0, 1.0), Buf("V", "f32u", 2 * M, -1.0, 1.0),
             Buf("O", "zero4", 2 * M),
             Buf("act", "f32u", 8 * 64 * 56 * 56, -1.0, 1.0), Buf("weight", "f32u", 128 * 128 * 9, -0.1, 0.1),
             Buf("bias", "f32u", 128, -0.1, 0.1), Buf("act_out", "zero4", 8 * 64 * 56 * 56)],
    kernels=[
        *[Kernel("softmax_row_online", ["x", "y"], {2: (rows, "rows (one warp each)"), 3: (cols, "cols")},
                 [c1(f"c{cols}-b{b}", rows * 32, b, what="rows*32")])
          for rows, cols, b in ((32768, 1024, 128), (32768, 1024, 256), (32768, 1024, 512), (8192, 4096, 256))],
        *[Kernel("layernorm_welford", ["x", "gamma", "beta", "y"], {4: (cols, "cols"), 5: (1e-5, "eps")},
                 [Cfg(f"c{cols}-b{b}", (rows,), (b,), note="one block per row")])
          for rows, cols, b in ((16384, 2048, 128), (16384, 2048, 256), (16384, 2048, 512), (32768, 768, 256))],
        *[Kernel("attention_rowwarp", ["Q", "K", "V", "O"],
                 {4: (seq, "seq"), 5: (causal, "causal"), 6: (0.17677669529663687, "scale = 1/sqrt(32)")},
                 [Cfg(f"s{seq}-h{slices}{'-causal' if causal else ''}-b{b}", (cdiv(seq, b // 32), slices), (b,),
                      note=f"ceil(seq / {b // 32} warps), {slices} (batch x head) slices")])
          for seq, slices, causal, b in ((1024, 64, 0, 128), (1024, 64, 1, 256), (512, 128, 0, 64),
                                         (2048, 16, 1, 128))],
        *[Kernel("conv2d_nchw_3x3", ["act", "weight", "bias", "act_out"],
                 {4: (ch, "C (input channels)"), 5: (ch, "K (output channels)"), 6: (hw, "H"), 7: (hw, "W")},
                 [Cfg(f"c{ch}-h{hw}-b{bx}x{by}", (cdiv(hw, bx), cdiv(hw, by), 8 * ch), (bx, by), 9 * ch * 4,
                      note=f"ceil(W/{bx}), ceil(H/{by}), batch 8 x K", smem_note="9 * C floats")])
          for ch, hw, bx, by in ((64, 56, 32, 8), (64, 56, 16, 16), (64, 56, 32, 4), (128, 28, 32, 8))],
    ],
)

# ------------------------------------------------------------------------ tensor cores (CUDA)

GEMM_SHAPES = ((4096, 4096, 4096), (2048, 2048, 2048), (8192, 8192, 1024), (4096, 8192, 2048))

FAMILIES["tcgemm"] = Family(
    description="Half-precision GEMMs on the tensor cores with 128 x 128 block tiles: wmma fragments fed by a "
                "3-stage cp.async pipeline (C = A B), and mma.sync m16n8k16 with ldmatrix and cp.async double "
                "buffering (C = A Bt^T). Float results.",
    buffers=[Buf("A", "f16u", 16 * M, -1.0, 1.0), Buf("B", "f16u", 16 * M, -1.0, 1.0), Buf("C", "zero4", 64 * M)],
    kernels=[
        *[Kernel("hgemm_wmma_cpasync", ["A", "B", "C"], {3: (m, "M"), 4: (n, "N"), 5: (k, "K")},
                 [Cfg(f"m{m}n{n}k{k}", (n // 128, m // 128), (256,), 56832, note="N/128, M/128",
                      smem_note="3 stages of 128x40 + 32x136 halves")]) for m, n, k in GEMM_SHAPES],
        *[Kernel("hgemm_mma_ldmatrix", ["A", "B", "C"], {3: (m, "M"), 4: (n, "N"), 5: (k, "K")},
                 [Cfg(f"m{m}n{n}k{k}", (n // 128, m // 128), (128,), note="N/128, M/128")]) for m, n, k in GEMM_SHAPES],
    ],
)

# ------------------------------------------------------------------------------------- Triton


def _triton(family: str, description: str, buffers: list[Buf], bind: list[str],
            launches: list[tuple[str, tuple[int, ...], dict, str]]) -> Family:
    """A family of one Triton-compiled kernel: block and dynamic shared memory as Triton chose them,
    the two scratch pointers Triton 3.6 appends bound to a small unused buffer."""
    meta = triton_meta(family)
    block = tuple(meta["block"])
    smem = meta["shared_bytes"]
    note = f"{meta['num_warps']} warps, num_stages {meta['num_stages']} (Triton {meta['triton_version']})"
    kernels = [Kernel(meta["entry"], bind + ["scratch", "scratch"], args,
                      [Cfg(name, grid, block, smem, note=grid_note, smem_note=f"Triton's shared memory; {note}")])
               for name, grid, args, grid_note in launches]
    return Family(description=description, kernels=kernels, buffers=buffers + [Buf("scratch", "zero1", 256)],
                  source=f"{meta['source']}")


def _matmul(family: str, bm: int, bn: int) -> Family:
    return _triton(
        family,
        f"Triton matmul (tt_matmul.py), fp16 in / fp16 out, fp32 accumulation, {bm} x {bn} tiles: wgmma tensor-core "
        "instructions fed by a multi-stage cp.async pipeline, as Triton 3.6 compiles it for sm_90.",
        [Buf("A", "f16u", 16 * M, -1.0, 1.0), Buf("B", "f16u", 16 * M, -1.0, 1.0), Buf("C", "zero2", 64 * M)],
        ["A", "B", "C"],
        [(f"m{m}n{n}k{k}", (n // bn, m // bm), {3: (m, "M"), 4: (n, "N"), 5: (k, "K")}, f"N/{bn}, M/{bm}")
         for m, n, k in GEMM_SHAPES])


ROW_SHAPES = ((65536, 1024), (16384, 4096), (8192, 8192), (32768, 2000))
ATTN_SHAPES = ((32, 2048), (64, 1024), (16, 4096), (128, 512))   # (batch x heads) slices, sequence length

FAMILIES["tt_matmul_128"] = _matmul("tt_matmul_128", 128, 128)
FAMILIES["tt_matmul_64"] = _matmul("tt_matmul_64", 64, 64)
FAMILIES["tt_softmax"] = _triton(
    "tt_softmax",
    "Triton row softmax (tt_softmax.py) of fp16 rows of 1000 to 8192 columns, one program per row, streamed in "
    "1024-wide chunks in two software-pipelined passes.",
    [Buf("x", "f16u", 64 * M, -4.0, 4.0), Buf("y", "zero2", 64 * M)], ["x", "y"],
    [(f"r{rows}-c{cols}", (rows,), {2: (cols, "n_cols")}, "one program per row") for rows, cols in ROW_SHAPES])
FAMILIES["tt_layernorm"] = _triton(
    "tt_layernorm",
    "Triton layer normalisation (tt_layernorm.py) of fp16 rows, one program per row: a pass for sum and sum of "
    "squares, a pass that normalises, both streamed in 1024-wide pipelined chunks.",
    [Buf("x", "f16u", 64 * M, -4.0, 4.0), Buf("w", "f16u", 8192, 0.5, 1.5), Buf("b", "f16u", 8192, -0.5, 0.5),
     Buf("y", "zero2", 64 * M)], ["x", "w", "b", "y"],
    [(f"r{rows}-c{cols}", (rows,), {4: (cols, "n_cols"), 5: (1e-5, "eps")}, "one program per row")
     for rows, cols in ROW_SHAPES])
for _name, _causal in (("tt_attention_causal", True), ("tt_attention_full", False)):
    FAMILIES[_name] = _triton(
        _name,
        f"Triton attention forward (tt_attention.py), head dimension 64, {'causal' if _causal else 'no mask'}: "
        "128 query rows per program, 64-key tiles, QK^T and PV on the tensor cores (wgmma), online softmax.",
        [Buf("q", "f16u", 4 * M, -1.0, 1.0), Buf("k", "f16u", 4 * M, -1.0, 1.0), Buf("v", "f16u", 4 * M, -1.0, 1.0),
         Buf("o", "zero2", 4 * M)], ["q", "k", "v", "o"],
        [(f"h{slices}-s{seq}", (seq // 128, slices), {4: (seq, "seq"), 5: (0.125, "scale = 1/sqrt(64)")},
          f"seq/128 query tiles, {slices} (batch x head) slices") for slices, seq in ATTN_SHAPES])

assert list(FAMILIES) == FAMILY_ORDER, "FAMILY_ORDER must list every family in definition order"
