"""Validation suite v2: what every kernel is launched with, and the data it is launched on.

This file is the single description of the suite. ``gen_suite.py`` turns it into

* ``samples/v2/<family>.launch.toml`` -- the launch configurations (grid, block, dynamic shared
  memory, every scalar argument) that Warpline analyses, and
* the manifest that the device driver (``driver.cu``) reads: per family the PTX file, the device
  buffers with their deterministic initialisation (fixed seeds), texture objects, constant-memory
  tables, and per launch the binding of each pointer / texture parameter to a buffer. The scalar
  arguments in the manifest are read back from the launch files, so what was measured is what
  the launch file says.

Sizes are chosen so that each launch runs roughly 20 us - 5 ms on an H100 and the large inputs
exceed the L2 cache (50 MB on an H100, 60 MB on an H200).

Dynamic shared memory used only to cut occupancy (H100/H200: 233472 B per SM, 1024 B reserved
per block): 56 KB -> at most 4 blocks per SM, 72 KB -> 3, 100 KB -> 2, 120 KB -> 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

KB = 1024
M = 1 << 20
SMEM_CUT = {"56k": 56 * KB, "72k": 72 * KB, "100k": 100 * KB, "120k": 120 * KB}


@dataclass
class Buf:
    """A device buffer. kind: f32u / f64u / f16u (uniform in [lo, hi)), i32u (ints in [lo, hi)),
    u8u (bytes in [lo, hi)), i32sorted (non-decreasing ints in [lo, hi)), i32perm (a permutation
    of 0..count-1), i32offsets (count - 1 segment lengths uniform in [lo, hi] and their prefix sums,
    starting at 0: CSR-style row starts), zero1 / zero2 / zero4 / zero8 (zeroed 1- / 2- / 4- /
    8-byte elements). ``count`` in elements."""

    name: str
    kind: str
    count: int
    lo: float = 0.0
    hi: float = 1.0


@dataclass
class Csr:
    """A random CSR matrix: buffers <name>_rowptr (nrows+1 ints), <name>_col (nnz ints),
    <name>_val (nnz floats in [-1, 1)); each row has a uniform count in [minnz, maxnz]."""

    name: str
    nrows: int
    ncols: int
    minnz: int
    maxnz: int


@dataclass
class Tex:
    """A float texture object. tex1d: linear memory over buffer ``buf`` (point sampling, clamp).
    tex2d: its own pitched width x height allocation, uniform in [lo, hi), bilinear filtering,
    clamp addressing, unnormalised coordinates."""

    name: str
    kind: str
    buf: str = ""
    width: int = 0
    height: int = 0
    lo: float = 0.0
    hi: float = 1.0


@dataclass
class Const:
    """A __constant__ float array filled uniform in [lo, hi)."""

    symbol: str
    count: int
    lo: float = 0.0
    hi: float = 1.0


@dataclass
class Cfg:
    name: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    smem: int = 0
    note: str = ""                          # comment written next to the grid
    smem_note: str = ""
    bind: dict[str, str] = field(default_factory=dict)   # pointer-parameter rebinding: old -> new


@dataclass
class Kernel:
    short: str                              # the C++ name (the PTX name is its mangling)
    bind: list[str]                         # buffer / texture for each pointer parameter, in order
    args: dict[int, tuple[float | int, str]]  # scalar parameter index -> (value, comment)
    configs: list[Cfg]


@dataclass
class Family:
    description: str
    kernels: list[Kernel]
    buffers: list[Buf] = field(default_factory=list)
    csr: list[Csr] = field(default_factory=list)
    textures: list[Tex] = field(default_factory=list)
    consts: list[Const] = field(default_factory=list)
    interleave: bool = False                # launch order: by configuration, then kernel
    source: str = ""                        # the source file, if not <family>.cu (Triton: .py)


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def lin(n: int, blocks=(128, 256, 512), cut=(256, "56k"), smem=lambda b: 0, per_block=lambda b: b,
        what="n") -> list[Cfg]:
    """1-D launches with one thread per element: grid = ceil(n / per_block(block))."""
    out = []
    for b in blocks:
        out.append(Cfg(f"b{b}", (cdiv(n, per_block(b)),), (b,), smem(b),
                       note=f"ceil({what} / {per_block(b)})",
                       smem_note="" if not smem(b) else "what the kernel uses"))
    b, key = cut
    out.append(Cfg(f"b{b}-smem{key}", (cdiv(n, per_block(b)),), (b,), smem(b) + SMEM_CUT[key],
                   note=f"ceil({what} / {per_block(b)})",
                   smem_note=f"{smem(b)} used + {SMEM_CUT[key]} to cut occupancy"))
    return out


def gstride(grids_blocks=((1056, 128), (528, 256), (264, 512)), cut=(528, 256, "56k"),
            smem=lambda b: 0) -> list[Cfg]:
    """Grid-stride launches: the grid is a few waves of the GPU (132 SMs), not the data size."""
    out = [Cfg(f"g{g}-b{b}", (g,), (b,), smem(b), note=f"{g / 132:g} x 132 SMs",
               smem_note="" if not smem(b) else "what the kernel uses")
           for g, b in grids_blocks]
    g, b, key = cut
    out.append(Cfg(f"g{g}-b{b}-smem{key}", (g,), (b,), smem(b) + SMEM_CUT[key], note=f"{g / 132:g} x 132 SMs",
                   smem_note=f"{smem(b)} used + {SMEM_CUT[key]} to cut occupancy"))
    return out


def grid2d(nx: int, ny: int, blocks=((32, 4), (32, 8), (32, 16)), cut=((32, 8), "56k"),
           smem=lambda bx, by: 0) -> list[Cfg]:
    out = []
    for bx, by in blocks:
        out.append(Cfg(f"b{bx}x{by}", (cdiv(nx, bx), cdiv(ny, by)), (bx, by), smem(bx, by),
                       note=f"ceil({nx}/{bx}), ceil({ny}/{by})",
                       smem_note="" if not smem(bx, by) else "what the kernel uses"))
    (bx, by), key = cut
    out.append(Cfg(f"b{bx}x{by}-smem{key}", (cdiv(nx, bx), cdiv(ny, by)), (bx, by),
                   smem(bx, by) + SMEM_CUT[key], note=f"ceil({nx}/{bx}), ceil({ny}/{by})",
                   smem_note=f"{smem(bx, by)} used + {SMEM_CUT[key]} to cut occupancy"))
    return out


def fixed(grid: tuple[int, ...], blocks=(256, 512, 1024), cut=(1024, "100k"), smem=lambda b: 0,
          note="") -> list[Cfg]:
    """A fixed grid (e.g. one block) with several block sizes."""
    out = [Cfg(f"b{b}", grid, (b,), smem(b), note=note) for b in blocks]
    b, key = cut
    out.append(Cfg(f"b{b}-smem{key}", grid, (b,), smem(b) + SMEM_CUT[key], note=note,
                   smem_note=f"{smem(b)} used + {SMEM_CUT[key]} to cut occupancy"))
    return out


# ------------------------------------------------------------------------------------ families

N16 = 16 * M   # 16M elements = 64 MB of floats

FAMILY_ORDER = [
    "stencil2d", "stencil3d", "strided", "gather", "scatter", "histogram", "atomics", "reduction",
    "readonly", "constmem", "smallgrid", "triangular", "gridstride", "aos_soa", "fp64", "half",
    "tensorcore", "pipeline", "spmv", "scan", "rowops", "nbody", "localarray", "sfu",
]

FAMILIES: dict[str, Family] = {}

# --- stencils with halo reuse
FAMILIES["stencil2d"] = Family(
    description="2D 5-point stencil on a 4096 x 4096 float grid: plain global reads, and a "
                "shared-memory tile with a one-point halo ((bx+2)*(by+2) floats of dynamic shared memory).",
    buffers=[Buf("in", "f32u", 4096 * 4096), Buf("out", "zero4", 4096 * 4096)],
    kernels=[
        Kernel("stencil2d_5pt", ["in", "out"],
               {2: (4096, "nx"), 3: (4096, "ny"), 4: (0.5, "c0 (centre weight)"), 5: (0.125, "c1 (neighbour weight)")},
               grid2d(4096, 4096, cut=((32, 8), "72k"))),
        Kernel("stencil2d_5pt_tiled", ["in", "out"],
               {2: (4096, "nx"), 3: (4096, "ny"), 4: (0.5, "c0"), 5: (0.125, "c1")},
               grid2d(4096, 4096, cut=((32, 8), "72k"), smem=lambda bx, by: (bx + 2) * (by + 2) * 4)),
    ],
)

FAMILIES["stencil3d"] = Family(
    description="3D 7-point stencil on a 256^3 float volume: one thread per point (3D grid), and a "
                "z-marching version (2D grid, each thread walks z keeping three planes in registers).",
    buffers=[Buf("in", "f32u", 256 ** 3), Buf("out", "zero4", 256 ** 3)],
    kernels=[
        Kernel("stencil3d_7pt", ["in", "out"],
               {2: (256, "nx"), 3: (256, "ny"), 4: (256, "nz"), 5: (0.4, "c0"), 6: (0.1, "c1")},
               [Cfg("b32x2x2", (8, 128, 128), (32, 2, 2), note="256/32, 256/2, 256/2"),
                Cfg("b32x4x2", (8, 64, 128), (32, 4, 2), note="256/32, 256/4, 256/2"),
                Cfg("b32x8x2", (8, 32, 128), (32, 8, 2), note="256/32, 256/8, 256/2"),
                Cfg("b32x4x2-smem100k", (8, 64, 128), (32, 4, 2), SMEM_CUT["100k"],
                    note="256/32, 256/4, 256/2", smem_note="cuts occupancy to 2 blocks per SM")]),
        Kernel("stencil3d_7pt_zmarch", ["in", "out"],
               {2: (256, "nx"), 3: (256, "ny"), 4: (256, "nz: 254 z steps per thread"), 5: (0.4, "c0"), 6: (0.1, "c1")},
               grid2d(256, 256, cut=((32, 8), "56k"))),
    ],
)

# --- column-wise and strided reads with reuse
FAMILIES["strided"] = Family(
    description="Column-wise and strided reads: column sums (coalesced, one thread per column), row sums "
                "(one thread per row, stride = cols), and a strided multi-tap window read through L2.",
    buffers=[Buf("mat", "f32u", N16), Buf("out", "zero4", 4 * M)],
    kernels=[
        Kernel("col_sum", ["mat", "out"], {2: (512, "rows (loop trips)"), 3: (32768, "cols (threads)")},
               lin(32768, blocks=(64, 128, 256), cut=(64, "120k"), what="cols")),
        Kernel("row_sum", ["mat", "out"], {2: (16384, "rows (threads)"), 3: (1024, "cols (loop trips)")},
               lin(16384, blocks=(64, 128, 256), cut=(64, "120k"), what="rows")),
        Kernel("strided_window", ["mat", "out"],
               {2: (4 * M, "n"), 3: (4099, "stride (elements)"), 4: (16, "taps (loop trips)")},
               lin(4 * M, cut=(256, "72k"))),
    ],
)

# --- gathers through index arrays
FAMILIES["gather"] = Family(
    description="Gathers through index arrays: out[i] = src[idx[i]] with random indices (configurations "
                "'rand-*') and sorted indices ('sorted-*'), and an embedding-table row gather.",
    buffers=[Buf("src", "f32u", N16), Buf("idx_rand", "i32u", N16, 0, N16),
             Buf("idx_sorted", "i32sorted", N16, 0, N16), Buf("out", "zero4", N16),
             Buf("table", "f32u", 262144 * 64), Buf("rows", "i32u", 262144, 0, 262144),
             Buf("rowsout", "zero4", 262144 * 64)],
    kernels=[
        Kernel("gather_f32", ["src", "idx_rand", "out"], {3: (N16, "n")},
               [Cfg("rand-" + c.name, c.grid, c.block, c.smem, c.note, c.smem_note) for c in lin(N16, cut=(256, "100k"))]  # noqa: E501
               + [Cfg("sorted-b256", (N16 // 256,), (256,), note="ceil(n / 256); sorted indices",
                      bind={"idx_rand": "idx_sorted"}),
                  Cfg("sorted-b512", (N16 // 512,), (512,), note="ceil(n / 512); sorted indices",
                      bind={"idx_rand": "idx_sorted"})]),
        Kernel("embedding_gather", ["table", "rows", "rowsout"], {3: (262144, "nrows"), 4: (64, "dim (floats per row)")},  # noqa: E501
               [Cfg("b32x4", (262144 // 4,), (32, 4), note="nrows / blockDim.y"),
                Cfg("b32x8", (262144 // 8,), (32, 8), note="nrows / blockDim.y"),
                Cfg("b64x8", (262144 // 8,), (64, 8), note="nrows / blockDim.y"),
                Cfg("b32x8-smem56k", (262144 // 8,), (32, 8), SMEM_CUT["56k"], note="nrows / blockDim.y",
                    smem_note="cuts occupancy to 4 blocks per SM")]),
    ],
)

# --- scatter stores, partial-sector stores
FAMILIES["scatter"] = Family(
    description="Scattered stores through a random permutation, and partial-sector stores (every other float).",
    buffers=[Buf("src", "f32u", N16), Buf("perm", "i32perm", N16), Buf("out", "zero4", 2 * N16)],
    kernels=[
        Kernel("scatter_perm", ["src", "perm", "out"], {3: (N16, "n"), 4: (2.0, "scale")},
               lin(N16, cut=(256, "72k"))),
        Kernel("store_stride2", ["out"], {1: (N16, "n (writes out[0..2n) at even indices)"), 2: (0.5, "scale")},
               lin(N16, cut=(256, "100k"))),
    ],
)

# --- histograms / atomics
FAMILIES["histogram"] = Family(
    description="Histograms of 16M random unsigned ints: shared-memory privatised (1024 bins, grid-stride) "
                "and direct global atomics (65536 bins).",
    buffers=[Buf("data", "i32u", N16, 0, 2 ** 31 - 1), Buf("bins", "zero4", 65536)],
    kernels=[
        Kernel("hist_smem", ["data", "bins"], {2: (N16, "n"), 3: (1024, "nbins (dynamic shared memory = 4*nbins)")},
               gstride(cut=(528, 256, "100k"), smem=lambda b: 4096)),
        Kernel("hist_global", ["data", "bins"], {2: (N16, "n"), 3: (65536, "nbins")},
               lin(N16, cut=(256, "56k"))),
    ],
)

FAMILIES["atomics"] = Family(
    description="Float atomics: all threads on one global address, on one shared-memory address, "
                "scatter-add over 1M addresses, and an atomicCAS retry loop (running maximum).",
    buffers=[Buf("in", "f32u", N16), Buf("idx", "i32u", N16, 0, M), Buf("out", "zero4", M),
             Buf("maxslots", "zero4", 4096)],
    kernels=[
        Kernel("atomic_same_global", ["in", "out"], {2: (512 * KB, "n")}, lin(512 * KB, cut=(256, "72k"))),
        Kernel("atomic_same_shared", ["in", "out"], {2: (M, "n"), 3: (8, "iters (atomics per thread)")},
               lin(M, cut=(256, "72k"))),
        Kernel("atomic_spread_global", ["in", "idx", "out"], {3: (N16, "n")}, lin(N16, cut=(256, "100k"))),
        Kernel("atomic_cas_max", ["in", "maxslots"], {2: (4 * M, "n"), 3: (4096, "nslots")},
               lin(4 * M, cut=(256, "56k"))),
    ],
)

# --- reductions with warp shuffles
FAMILIES["reduction"] = Family(
    description="Sum of 32M floats: grid-stride + warp shuffles + one atomic per block, and a classic "
                "shared-memory tree (dynamic shared memory blockDim.x floats, two elements per thread).",
    buffers=[Buf("in", "f32u", 32 * M), Buf("out", "zero4", M)],
    kernels=[
        Kernel("reduce_warp_shfl", ["in", "out"], {2: (32 * M, "n")}, gstride(cut=(528, 256, "72k"))),
        Kernel("reduce_smem_tree", ["in", "out"], {2: (32 * M, "n")},
               lin(32 * M, cut=(256, "56k"), smem=lambda b: 4 * b, per_block=lambda b: 2 * b)),
    ],
)

# --- read-only path and textures
FAMILIES["readonly"] = Family(
    description="Read-only data path: a 17-tap box filter through __ldg and through a 1D texture object, "
                "and bilinear resampling from a 4096 x 4096 pitched 2D texture.",
    buffers=[Buf("in", "f32u", N16), Buf("out", "zero4", N16)],
    textures=[Tex("tex_in", "tex1d", buf="in"), Tex("tex_img", "tex2d", width=4096, height=4096)],
    kernels=[
        Kernel("ldg_window", ["in", "out"], {2: (N16, "n"), 3: (8, "radius (2*radius+1 taps)")},
               lin(N16, cut=(256, "72k"))),
        Kernel("tex1d_window", ["tex_in", "out"], {2: (N16, "n"), 3: (8, "radius")}, lin(N16, cut=(256, "100k"))),
        Kernel("tex2d_bilinear", ["tex_img", "out"],
               {2: (4096, "w (output)"), 3: (4096, "h (output)"), 4: (0.75, "sx"), 5: (0.75, "sy"),
                6: (512.0, "ox"), 7: (512.0, "oy")},
               grid2d(4096, 4096, blocks=((32, 4), (32, 8), (16, 16)), cut=((16, 16), "56k"))),
    ],
)

# --- constant memory
FAMILIES["constmem"] = Family(
    description="__constant__ tables: uniform (broadcast) coefficient reads in a degree-48 Horner loop, "
                "and divergent per-lane lookups in a 4096-entry table.",
    buffers=[Buf("in", "f32u", N16, -1.0, 1.0), Buf("idx", "i32u", 4 * M, 0, 4096), Buf("out", "zero4", N16)],
    consts=[Const("c_coef", 64, -0.5, 0.5), Const("c_table", 4096, 0.0, 1.0)],
    kernels=[
        Kernel("const_poly", ["in", "out"], {2: (N16, "n"), 3: (48, "degree (loop trips)")},
               lin(N16, cut=(256, "56k"))),
        Kernel("const_table_lookup", ["idx", "out"], {2: (4 * M, "n"), 3: (16, "rounds (loop trips)")},
               lin(4 * M, cut=(256, "100k"))),
    ],
)

# --- grids smaller than the GPU
FAMILIES["smallgrid"] = Family(
    description="Grids smaller than the GPU (4 to 264 blocks on 132 SMs): an FMA-latency-bound chain "
                "and a memory-latency-bound grid-stride stream.",
    buffers=[Buf("in", "f32u", M), Buf("out", "zero4", M)],
    kernels=[
        Kernel("small_fma_chain", ["out"], {1: (65536, "iters"), 2: (0.999, "a"), 3: (0.001, "b")},
               [Cfg("g33-b128", (33,), (128,)), Cfg("g66-b256", (66,), (256,)), Cfg("g16-b512", (16,), (512,)),
                Cfg("g264-b256-smem120k", (264,), (256,), SMEM_CUT["120k"],
                    smem_note="1 block per SM: 264 blocks take 2 waves")]),
        Kernel("small_stream", ["in", "out"], {2: (M, "n"), 3: (1.5, "a")},
               [Cfg("g4-b128", (4,), (128,)), Cfg("g8-b256", (8,), (256,)), Cfg("g16-b512", (16,), (512,)),
                Cfg("g264-b256-smem120k", (264,), (256,), SMEM_CUT["120k"],
                    smem_note="1 block per SM: 264 blocks take 2 waves")]),
    ],
)

# --- triangular and data-dependent loops
FAMILIES["triangular"] = Family(
    description="Triangular and data-dependent loops: lower-triangular matrix-vector product (thread i "
                "runs i+1 trips), a loop of random length 0..63, and capped Collatz sequences.",
    buffers=[Buf("lcol", "f32u", 4096 * 4096), Buf("x", "f32u", 4096), Buf("vals", "f32u", N16),
             Buf("counts", "i32u", N16, 0, 64), Buf("starts", "i32u", 4 * M, 1, M),
             Buf("out", "zero4", N16)],
    kernels=[
        Kernel("tri_matvec", ["lcol", "x", "out"], {3: (4096, "n (thread i runs i+1 trips)")},
               lin(4096, blocks=(32, 64, 128), cut=(32, "120k"))),
        Kernel("data_dep_loop", ["counts", "vals", "out"], {3: (N16, "n"), 4: (64, "max_count (trips <= 64)")},
               lin(N16, cut=(256, "100k"))),
        Kernel("collatz", ["starts", "out"], {2: (4 * M, "n"), 3: (1000, "max_steps")},
               lin(4 * M, cut=(256, "72k"))),
    ],
)

# --- grid-stride loops
FAMILIES["gridstride"] = Family(
    description="Grid-stride loops over 16M floats (saxpy) and 4M float4 (scaled copy), grids of a few waves.",
    buffers=[Buf("x", "f32u", N16), Buf("y", "f32u", N16), Buf("in4", "f32u", N16), Buf("out4", "zero4", N16)],
    kernels=[
        Kernel("gs_saxpy", ["x", "y"], {2: (2.0, "a"), 3: (N16, "n")}, gstride(cut=(528, 256, "56k"))),
        Kernel("gs_copy_float4", ["in4", "out4"], {2: (4 * M, "n4 (float4 elements)"), 3: (0.5, "s")},
               gstride(cut=(528, 256, "100k"))),
    ],
)

# --- array-of-structs vs struct-of-arrays
FAMILIES["aos_soa"] = Family(
    description="Particle push of 4M particles (8 floats each) in array-of-structs and struct-of-arrays layout.",
    buffers=[Buf("parts", "f32u", 32 * M, 0.5, 1.5)] + [Buf(f, "f32u", 4 * M, 0.5, 1.5)
                                                          for f in ("px", "py", "pz", "vx", "vy", "vz", "m", "q")],
    kernels=[
        Kernel("aos_advance", ["parts"], {1: (4 * M, "n"), 2: (0.001, "dt"), 3: (0.5, "ex"), 4: (-0.25, "ey"),
                                          5: (0.125, "ez")}, lin(4 * M, cut=(256, "72k"))),
        Kernel("soa_advance", ["px", "py", "pz", "vx", "vy", "vz", "m", "q"],
               {8: (4 * M, "n"), 9: (0.001, "dt"), 10: (0.5, "ex"), 11: (-0.25, "ey"), 12: (0.125, "ez")},
               lin(4 * M, cut=(256, "72k"))),
    ],
)

# --- FP64
FAMILIES["fp64"] = Family(
    description="Double precision: four independent DFMA chains per thread (1M threads), and a "
                "grid-stride double reduction with shuffles and a double atomicAdd.",
    buffers=[Buf("in", "f64u", N16), Buf("out", "zero8", M)],
    kernels=[
        Kernel("dp_fma_chain", ["out"], {1: (256, "iters"), 2: (0.999, "a"), 3: (0.001, "b")},
               lin(M, cut=(256, "56k"), what="1M threads")),
        Kernel("dp_reduce", ["in", "out"], {2: (N16, "n")}, gstride(cut=(528, 256, "100k"))),
    ],
)

# --- half2
FAMILIES["half"] = Family(
    description="Packed half precision: __half2 axpy over 16M half2 values, and four __half2 FMA chains "
                "of 512 steps per thread (1M threads).",
    buffers=[Buf("x", "f16u", 2 * N16), Buf("y", "f16u", 2 * N16), Buf("data", "f16u", 2 * M)],
    kernels=[
        Kernel("h2_axpy", ["x", "y"], {2: (0.75, "a"), 3: (N16, "n2 (half2 elements)")},
               lin(N16, cut=(256, "72k"), what="n2")),
        Kernel("h2_fma_chain", ["data"], {1: (M, "n2"), 2: (512, "iters")}, lin(M, cut=(256, "100k"), what="n2")),
    ],
)

# --- tensor cores
FAMILIES["tensorcore"] = Family(
    description="fp16 GEMM 2048^3 on the tensor cores with wmma (float accumulate): fragments from global "
                "memory (one warp per 16x16 tile), and shared-memory staged panels (each warp a 32x32 tile).",
    buffers=[Buf("a", "f16u", 2048 * 2048, -1.0, 1.0), Buf("b", "f16u", 2048 * 2048, -1.0, 1.0),
             Buf("c", "zero4", 2048 * 2048)],
    kernels=[
        Kernel("wmma_gemm_global", ["a", "b", "c"], {3: (2048, "m"), 4: (2048, "n"), 5: (2048, "k (128 k-steps)")},
               lin(16384 * 32, blocks=(64, 128, 256), cut=(128, "100k"), what="16384 tiles * 32 threads")),
        Kernel("wmma_gemm_smem", ["a", "b", "c"], {3: (2048, "m"), 4: (2048, "n"), 5: (2048, "k (128 k-steps)")},
               [Cfg("b64", (32, 64), (64,), 3072, note="n/64, m/32", smem_note="(64/64)*1024 + 2048"),
                Cfg("b128", (32, 32), (128,), 4096, note="n/64, m/64", smem_note="(128/64)*1024 + 2048"),
                Cfg("b256", (32, 16), (256,), 6144, note="n/64, m/128", smem_note="(256/64)*1024 + 2048"),
                Cfg("b128-smem100k", (32, 32), (128,), 4096 + SMEM_CUT["100k"], note="n/64, m/64",
                    smem_note=f"4096 used + {SMEM_CUT['100k']} to cut occupancy")]),
    ],
)

# --- multi-kernel pipeline
FAMILIES["pipeline"] = Family(
    description="A three-kernel pipeline on 16M floats, run in sequence for each block size: scale+bias, "
                "3-point blur, threshold flags + ballot count.",
    buffers=[Buf("x", "f32u", N16), Buf("y", "zero4", N16), Buf("z", "zero4", N16), Buf("flags", "zero1", N16),
             Buf("count", "zero4", 1)],
    interleave=True,
    kernels=[
        Kernel("pipe_scale_bias", ["x", "y"], {2: (N16, "n"), 3: (1.5, "a"), 4: (-0.25, "b")},
               lin(N16, cut=(256, "72k"))),
        Kernel("pipe_blur3", ["y", "z"], {2: (N16, "n")}, lin(N16, cut=(256, "72k"))),
        Kernel("pipe_threshold_count", ["z", "flags", "count"], {3: (N16, "n"), 4: (0.5, "thr")},
               lin(N16, cut=(256, "72k"))),
    ],
)

# --- SpMV CSR
FAMILIES["spmv"] = Family(
    description="CSR sparse matrix-vector product, 1M x 1M with 4..28 random non-zeros per row "
                "(about 16M): one thread per row, and one warp per row.",
    csr=[Csr("A", M, M, 4, 28)],
    buffers=[Buf("x", "f32u", M), Buf("y", "zero4", M)],
    kernels=[
        Kernel("spmv_csr_scalar", ["A_rowptr", "A_col", "A_val", "x", "y"], {5: (M, "nrows")},
               lin(M, cut=(256, "72k"), what="nrows")),
        Kernel("spmv_csr_vector", ["A_rowptr", "A_col", "A_val", "x", "y"], {5: (M, "nrows")},
               lin(M * 32, cut=(256, "72k"), what="nrows*32")),
    ],
)

# --- prefix scan
FAMILIES["scan"] = Family(
    description="Inclusive prefix sums: per-block warp-shuffle scan of 16M floats, and the serial middle "
                "phase (one block scanning 65536 block totals in place).",
    buffers=[Buf("in", "f32u", N16), Buf("out", "zero4", N16), Buf("sums", "f32u", 131072)],
    kernels=[
        Kernel("scan_block", ["in", "out", "sums"], {3: (N16, "n")}, lin(N16, cut=(256, "56k"))),
        Kernel("scan_partials", ["sums"], {1: (65536, "count (count / blockDim.x loop trips)")},
               fixed((1,), note="one block")),
    ],
)

# --- softmax / layernorm rows
FAMILIES["rowops"] = Family(
    description="Row kernels on a 16384 x 1024 float matrix: softmax with one block per row, "
                "layer normalisation with one warp per row.",
    buffers=[Buf("in", "f32u", N16, -4.0, 4.0), Buf("out", "zero4", N16), Buf("gamma", "f32u", 1024, 0.5, 1.5),
             Buf("beta", "f32u", 1024, -0.5, 0.5)],
    kernels=[
        Kernel("softmax_row", ["in", "out"], {2: (16384, "rows (one block each)"), 3: (1024, "cols")},
               [Cfg(f"b{b}", (16384,), (b,), note="rows") for b in (128, 256, 512)]
               + [Cfg("b256-smem56k", (16384,), (256,), SMEM_CUT["56k"], note="rows",
                      smem_note="cuts occupancy to 4 blocks per SM")]),
        Kernel("layernorm_warp", ["in", "out", "gamma", "beta"],
               {4: (16384, "rows (one warp each)"), 5: (1024, "cols"), 6: (1e-5, "eps")},
               lin(16384 * 32, cut=(256, "100k"), what="rows*32")),
    ],
)

# --- n-body
FAMILIES["nbody"] = Family(
    description="All-pairs n-body accelerations, n = 32768: shared-memory tiles of blockDim.x bodies "
                "(dynamic shared memory 16*blockDim.x bytes), and direct (broadcast) global reads.",
    buffers=[Buf("pos", "f32u", 4 * 32768, 0.1, 1.1), Buf("acc", "zero4", 4 * 32768)],
    kernels=[
        Kernel("nbody_tiled", ["pos", "acc"], {2: (32768, "n"), 3: (0.01, "eps2")},
               lin(32768, blocks=(64, 128, 256), cut=(128, "120k"), smem=lambda b: 16 * b)),
        Kernel("nbody_naive", ["pos", "acc"], {2: (32768, "n"), 3: (0.01, "eps2")},
               lin(32768, blocks=(64, 128, 256), cut=(128, "120k"))),
    ],
)

# --- small local arrays
FAMILIES["localarray"] = Family(
    description="Per-thread arrays indexed at run time (local memory): insertion sort of 8 floats, "
                "and a 16-bin nibble histogram over 16 values.",
    buffers=[Buf("in", "f32u", N16), Buf("inu", "i32u", N16, 0, 2 ** 31 - 1), Buf("out", "zero4", 2 * M)],
    kernels=[
        Kernel("local_sort8", ["in", "out"], {2: (2 * M, "n (reads in[k*n + i], k < 8)")},
               lin(2 * M, cut=(256, "72k"))),
        Kernel("local_hist16", ["inu", "out"], {2: (M, "n"), 3: (16, "per_thread (loop trips)")},
               lin(M, cut=(256, "100k"))),
    ],
)

# --- SFU
FAMILIES["sfu"] = Family(
    description="Transcendentals: __sinf/__cosf (MUFU) in a 32-round loop, and accurate sinf on arguments "
                "up to 2e5 (about half the lanes take the slow range-reduction path).",
    buffers=[Buf("small", "f32u", 4 * M, -4.0, 4.0), Buf("big", "f32u", 4 * M, -2.0e5, 2.0e5),
             Buf("out", "zero4", 4 * M)],
    kernels=[
        Kernel("sfu_fast_sincos", ["small", "out"], {2: (4 * M, "n"), 3: (32, "iters")}, lin(4 * M, cut=(256, "72k"))),
        Kernel("sin_precise", ["big", "out"], {2: (4 * M, "n"), 3: (8, "iters")}, lin(4 * M, cut=(256, "100k"))),
    ],
)

assert list(FAMILIES) == FAMILY_ORDER, "FAMILY_ORDER must list every family in definition order"
