"""Suite v2x: a tuning supplement to validation suite v2, in the same format (``suite_spec.py``).

Why it exists: suite v2's held-out third showed that whole behaviours had no example in its tuning
part (1D texture fetches, rows processed by one warp or one block with a second pass over the row,
one thread per variable-length segment, scattered stores through an index array). These kernels give
the tuning part those behaviours with code written anew, so that mechanisms for them can be
developed without touching the held-out kernels. A third of them is held out in turn, by the same
sha256 rule, fixed before they were measured (``samples/v2x/SPLIT.toml``).

    python3 tools/device/suite_v2/gen_suite.py --suite v2x toml|split|manifest|list
"""

from __future__ import annotations

from suite_spec import N16, SMEM_CUT, Buf, Cfg, Csr, Family, Kernel, M, Tex, cdiv, grid2d, lin

TITLE = "Validation suite v2x (tuning supplement to v2)"
DIRECTORY = "v2x"

ROWS, COLS = 16384, 1024

FAMILY_ORDER = ["rowwise", "texfetch", "segments", "scatterx"]
FAMILIES: dict[str, Family] = {}

FAMILIES["rowwise"] = Family(
    description="Per-row kernels on a 16384 x 1024 float matrix: RMS normalisation with one block per row "
                "(two passes over the row), the row maximum and mean-centring with one warp per row.",
    buffers=[Buf("in", "f32u", ROWS * COLS, -4.0, 4.0), Buf("out", "zero4", ROWS * COLS),
             Buf("w", "f32u", COLS, 0.5, 1.5)],
    kernels=[
        Kernel("rms_norm_block", ["in", "out", "w"],
               {3: (ROWS, "rows (one block each)"), 4: (COLS, "cols"), 5: (1e-6, "eps")},
               [Cfg(f"b{b}", (ROWS,), (b,), note="rows") for b in (128, 256, 512)]
               + [Cfg("b256-smem72k", (ROWS,), (256,), SMEM_CUT["72k"], note="rows",
                      smem_note="cuts occupancy to 3 blocks per SM")]),
        Kernel("row_max_warp", ["in", "out"], {2: (ROWS, "rows (one warp each)"), 3: (COLS, "cols")},
               lin(ROWS * 32, cut=(256, "56k"), what="rows*32")),
        Kernel("row_center_warp", ["in", "out"], {2: (ROWS, "rows (one warp each)"), 3: (COLS, "cols")},
               lin(ROWS * 32, cut=(256, "100k"), what="rows*32")),
    ],
)

FAMILIES["texfetch"] = Family(
    description="1D texture objects over linear memory (tex1Dfetch, point sampling) on 16M floats: "
                "streaming, a gather through random indices, and a 3-point stencil.",
    buffers=[Buf("in", "f32u", N16), Buf("idx", "i32u", N16, 0, N16), Buf("out", "zero4", N16)],
    textures=[Tex("tex_in", "tex1d", buf="in")],
    kernels=[
        Kernel("tex1d_scale", ["tex_in", "out"], {2: (N16, "n"), 3: (1.5, "a")}, lin(N16, cut=(256, "72k"))),
        Kernel("tex1d_gather", ["tex_in", "idx", "out"], {3: (N16, "n")}, lin(N16, cut=(256, "56k"))),
        Kernel("tex1d_stencil3", ["tex_in", "out"], {2: (N16, "n")}, lin(N16, cut=(256, "100k"))),
    ],
)

FAMILIES["segments"] = Family(
    description="2M variable-length segments (CSR row pointers, 4..28 elements each at random, about 32M "
                "elements): one thread sums each segment; one thread per element finds its segment by "
                "binary search.",
    csr=[Csr("S", 2 * M, 2 * M, 4, 28)],
    buffers=[Buf("w", "f32u", 2 * M), Buf("out", "zero4", 32 * M)],
    kernels=[
        Kernel("seg_sum_thread", ["S_rowptr", "S_val", "out"], {3: (2 * M, "segments")},
               lin(2 * M, cut=(256, "72k"), what="segments")),
        Kernel("seg_lookup_bsearch", ["S_rowptr", "S_val", "w", "out"],
               {4: (2 * M, "segments"), 5: (8 * M, "n (elements searched: the first 8M)")},
               lin(8 * M, cut=(256, "56k"), what="n")),
    ],
)


def _tiled(nx: int, ny: int) -> list[Cfg]:
    out = [Cfg(f"b32x{by}", (cdiv(nx, 32), cdiv(ny, 32)), (32, by), note=f"ceil({nx}/32), ceil({ny}/32)")
           for by in (4, 8, 16)]
    out.append(Cfg("b32x8-smem100k", (cdiv(nx, 32), cdiv(ny, 32)), (32, 8), SMEM_CUT["100k"],
                   note=f"ceil({nx}/32), ceil({ny}/32)", smem_note="cuts occupancy to 2 blocks per SM"))
    return out


FAMILIES["scatterx"] = Family(
    description="Stores out of thread order: a naive and a shared-memory-tiled transpose of a 4096 x 4096 "
                "float matrix, and 16M stores / atomic adds at uniform random slots.",
    buffers=[Buf("in", "f32u", N16), Buf("idx", "i32u", N16, 0, N16), Buf("out", "zero4", N16)],
    kernels=[
        Kernel("transpose_naive", ["in", "out"], {2: (4096, "nx"), 3: (4096, "ny")},
               grid2d(4096, 4096, blocks=((32, 4), (32, 8), (16, 16)), cut=((32, 8), "72k"))),
        Kernel("transpose_tiled", ["in", "out"], {2: (4096, "nx"), 3: (4096, "ny")}, _tiled(4096, 4096)),
        Kernel("scatter_random", ["in", "idx", "out"], {3: (N16, "n")}, lin(N16, cut=(256, "56k"))),
        Kernel("scatter_add_random", ["in", "idx", "out"], {3: (N16, "n")}, lin(N16, cut=(256, "100k"))),
    ],
)

assert list(FAMILIES) == FAMILY_ORDER, "FAMILY_ORDER must list every family in definition order"
