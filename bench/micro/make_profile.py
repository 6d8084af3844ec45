"""Write a GPU profile (``profiles/h100.toml``) from the raw microbenchmark results.

Usage::

    .venv/bin/python bench/micro/make_profile.py [RESULTS_DIR] [-o profiles/h100.toml]

RESULTS_DIR (default :data:`DEFAULT_RESULTS`) holds ``run1.csv`` and ``run2.csv`` written by
``micro`` (``bench/micro/run_micro.sh``). Every figure the profile uses is derived from each
run separately (:func:`derive`); the profile gets the mean of the two runs, rounded
(:data:`DIGITS`). ``tests/test_micro_profile.py`` checks that the two runs agree within 5% and
that the shipped profile is exactly what this script writes.

Conventions (001's Pipeline model, 000's Many-BSP; profiles/README.md):

* λ (``lam``): cycles per warp instruction for the whole SM, measured with 64 warps per SM.
* Λ (``Lam``): latency of a dependent chain, one warp, loop overhead removed by differencing.
* Many-BSP: ``lat_comp = Λ`` and ``T = warp_size / (λ · n_ws)`` (results per clock per
  scheduler), so that the engine's own λ-from-T conversion gives back the measured λ.
"""

from __future__ import annotations

import argparse
import csv
import functools
import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_RESULTS = ROOT / "bench" / "micro" / "results" / "h100-2026-11-22"
DEFAULT_OUTPUT = ROOT / "profiles" / "h100.toml"
WARP_SIZE = 32
SM_COUNT = 132        # both GPUs written here are GH100 parts with 132 SMs (the profiles' device.sm_count)
N_WS = 4  # schedulers per SM of the H100 (device section)

# Rounding of the mean of the two runs, by kind of figure.
DIGITS = {"lam": 3, "Lam": 1, "T": 1, "bw": 2, "il": 2, "cycles": 1, "bytes": 0}


@dataclass(frozen=True)
class Figure:
    """One figure the profile uses: its value in each run and where it comes from."""

    key: str
    run1: float
    run2: float
    kind: str  # a DIGITS key
    what: str  # benchmark rows (bench/name/param) and the arithmetic on them

    @property
    def value(self) -> float:
        return round((self.run1 + self.run2) / 2, DIGITS[self.kind])

    @property
    def diff_pct(self) -> float:
        mean = (self.run1 + self.run2) / 2
        return 0.0 if mean == 0 else 100.0 * (self.run2 - self.run1) / mean


def load_run(path: Path) -> dict[tuple[str, str, str], float]:
    """``{(bench, name, param): value}`` of one run's CSV."""
    rows: dict[tuple[str, str, str], float] = {}
    with open(path, newline="") as handle:
        reader = csv.reader(handle)
        next(reader, None)   # bench,name,param,value,unit
        for row in reader:
            if len(row) < 5:
                continue
            # a param written with commas in it (linediag of 2026-11-25) spans several fields
            bench, name, param, value = row[0], row[1], ",".join(row[2:-2]), row[-2]
            try:
                rows[(bench, name, param)] = float(value)
            except ValueError:
                continue  # env rows whose value is text
    return rows


def _get(run: dict[tuple[str, str, str], float], bench: str, name: str, param: str | None = None) -> float:
    hits = [v for (b, n, p), v in run.items() if b == bench and n == name and (param is None or p == param)]
    if len(hits) != 1:
        raise KeyError(f"expected one row {bench},{name},{param}; found {len(hits)}")
    return hits[0]


# PTX instructions measured by k_lat / k_thr: figure name -> CSV name.
OPS = {
    "add_f32": "add_f32", "mul_f32": "mul_f32", "fma_f32": "fma_f32",
    "add_f64": "add_f64", "fma_f64": "fma_f64",
    "add_s32": "add_s32_pair", "mul_s32": "mul_s32", "mad_s32": "mad_s32",
    "cvt_f32_s32": "cvt_f32_s32", "cvt_s32_f32": "cvt_s32_f32", "cvt_f64_f32": "cvt_f64_f32",
    "sin_approx": "sin_approx", "cos_approx": "cos_approx",
    "ex2_approx": "ex2_approx", "ex2_approx_ftz": "ex2_approx_ftz",
    "rcp_approx": "rcp_approx", "sqrt_approx": "sqrt_approx", "rsqrt_approx": "rsqrt_approx",
    "sqrt_approx_ftz": "sqrt_approx_ftz", "rsqrt_approx_ftz": "rsqrt_approx_ftz",
    "div_rn_f32": "div_rn_f32", "div_full_f32": "div_full_f32", "div_rn_f64": "div_rn_f64",
}
BAR_SIZES = (32, 64, 128, 256, 512, 1024)
LAUNCH_SIZES = (32, 64, 128, 256, 512, 1024)


def _derive_one(run: dict[tuple[str, str, str], float]) -> dict[str, tuple[float, str, str]]:
    """Every derived figure of one run: ``{key: (value, kind, what)}``."""
    out: dict[str, tuple[float, str, str]] = {}
    for key, name in OPS.items():
        out[f"{key}.Lam"] = (_get(run, "lat", name), "Lam", f"lat,{name}")
        out[f"{key}.lam"] = (_get(run, "cpi", name), "lam", f"cpi,{name}")
    # rcp.approx.ftz: measured as a chain of rcp + add.rn.f32 (ptxas folds rcp(rcp(x))).
    pair = "rcp_approx_ftz+add_f32"
    out["rcp_approx_ftz.Lam"] = (
        _get(run, "lat", pair) - _get(run, "lat", "add_f32"), "Lam", f"lat,{pair} minus lat,add_f32")
    out["rcp_approx_ftz.lam"] = (_get(run, "cpi", pair), "lam", f"cpi,{pair} (MUFU-bound; the FADD issues alongside)")
    # Shared memory.
    out["ld_shared.Lam"] = (_get(run, "lat", "ld_shared"), "Lam", "lat,ld_shared (pointer chase)")
    out["ld_shared.lam"] = (_get(run, "cpi", "ld_shared"), "lam", "cpi,ld_shared")
    out["st_shared.lam"] = (_get(run, "cpi", "st_shared"), "lam", "cpi,st_shared")
    # L1 and shared memory are one SRAM and data path: an L1-hit wavefront of 128 bytes moves at
    # the shared-memory rate.
    shared_bpc = _get(run, "bw", "ld_shared", "bytes/cycle/SM")
    out["l1.lam"] = (128.0 / shared_bpc, "lam", "128 B / bw,ld_shared,bytes/cycle/SM")
    # Local memory (per-thread stack, L1-resident here).
    out["ld_local.Lam"] = (_get(run, "lat", "ld_local"), "Lam", "lat,ld_local (pointer chase)")
    out["ld_local.lam"] = (_get(run, "cpi", "ld_local"), "lam", "cpi,ld_local")
    # Global memory latencies (pointer chase, 128-byte stride, random cyclic permutation).
    for key, name in (("l1", "ld_global_l1"), ("l2", "ld_global_l2"), ("dram", "ld_global_dram_1GB"),
                      ("dram_128MB", "ld_global_dram_128MB")):
        out[f"{key}.Lam"] = (_get(run, "lat", name), "Lam", f"lat,{name}")
    # Bandwidths and the λ of one coalesced 128-byte warp access (4-byte words) per SM.
    for key in ("dram_read", "dram_write", "l2_read"):
        bpc = _get(run, "bw", key, "bytes/cycle/SM from clock64 span per SM")
        out[f"{key}.bytes_per_cycle_sm"] = (bpc, "bw", f"bw,{key},bytes/cycle/SM")
        out[f"{key}.gbps"] = (_get(run, "bw", key, "GB/s whole GPU from CUDA events"), "bw", f"bw,{key},GB/s")
        out[f"{key}.lam"] = (128.0 / bpc, "lam", f"128 B / bw,{key},bytes/cycle/SM")
    # bar.sync: cycles per barrier of one block alone, by block size; throughput with 32 blocks/SM.
    for nt in BAR_SIZES:
        out[f"bar.{nt}"] = (_get(run, "bar", "bar_sync", str(nt)), "cycles", f"bar,bar_sync,{nt}")
    out["bar.lam"] = (_get(run, "cpi", "bar_sync"), "lam", "cpi,bar_sync")
    # Block launch: cycles per full wave of empty blocks, divided by the blocks per SM of a
    # wave, fitted as block_lnch_ovh + warp_lnch_ovh * w, w = warps per scheduler of a block.
    xs, ys = [], []
    for nt in LAUNCH_SIZES:
        per_sm = min(32, 2048 // nt)
        param = f"{nt} threads x {per_sm} blocks/SM"
        wave = _get(run, "launch", "wave", param)
        w = math.ceil(nt / (WARP_SIZE * N_WS))
        out[f"launch.{nt}"] = (wave / per_sm, "cycles", f"launch,wave,{param} / {per_sm}")
        xs.append(w)
        ys.append(wave / per_sm)
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    fit = "least-squares fit of launch,wave/(blocks per SM) = block_lnch_ovh + warp_lnch_ovh * w"
    out["launch.block_lnch_ovh"] = (my - slope * mx, "cycles", fit)
    out["launch.warp_lnch_ovh"] = (slope, "cycles", fit)
    # Issue limit: the largest warp-instruction rate of the instruction mix (all β).
    mix = [v for (b, n, _), v in run.items() if b == "mix" and n == "ipc_total"]
    out["issue_limit"] = (max(mix), "il", "max over beta of mix,ipc_total")
    out["sm_clock_mhz"] = (_get(run, "env", "sm_clock"), "cycles", "env,sm_clock (clock64 / globaltimer)")
    return out


# Packed half precision, measured in a later call (bench/micro/results/<gpu>-2026-11-24-half).
HALF_OPS = {"fma_f16x2": "fma_f16x2", "add_f16x2": "add_f16x2", "mul_f16x2": "mul_f16x2",
            "fma_bf16x2": "fma_bf16x2"}


def derive_half(results: Path) -> dict[str, Figure]:
    """The packed-half figures of both runs in ``results`` (empty when the folder is absent)."""
    return derive_ops(results, HALF_OPS)


def derive_ops(results: Path, ops: dict[str, str]) -> dict[str, Figure]:
    """``<key>.Lam`` (lat rows) and ``<key>.lam`` (cpi rows) of each of ``ops`` (key -> the
    benchmark's name) from both runs in ``results``; empty when the folder is absent."""
    if not (results / "run1.csv").exists():
        return {}

    def one(run: dict[tuple[str, str, str], float]) -> dict[str, tuple[float, str, str]]:
        out = {}
        for key, name in ops.items():
            out[f"{key}.Lam"] = (_get(run, "lat", name), "Lam", f"lat,{name}")
            out[f"{key}.lam"] = (_get(run, "cpi", name), "lam", f"cpi,{name}")
        return out

    a, b = one(load_run(results / "run1.csv")), one(load_run(results / "run2.csv"))
    return {k: Figure(k, v[0], b[k][0], v[1], v[2]) for k, v in a.items()}


# Tensor cores, measured in a later call (bench/micro/results/<gpu>-2026-11-24-tensor).
TENSOR_OPS = {"wmma_f32": "wmma_f32", "mma_m16n8k16_f32": "mma_m16n8k16_f32"}


def derive_tensor(results: Path) -> dict[str, Figure]:
    """The tensor-core figures of both runs in ``results`` (empty when the folder is absent)."""
    return derive_ops(results, TENSOR_OPS)


# Local memory in L1 and local stores, measured in a later call (bench/micro/results/<gpu>-2026-11-24-local).
LOCAL_RATES = {"local_l1_lam": "ld_local_l1", "local_store_lam": "st_local_l1",
               "local_store_partial_lam": "st_local_half"}


def derive_local(results: Path) -> dict[str, Figure]:
    """The local-memory rates of both runs in ``results`` and the L2 size the device reports
    (``l2_bytes``; empty when the folder is absent)."""
    if not (results / "run1.csv").exists():
        return {}

    def one(run: dict[tuple[str, str, str], float]) -> dict[str, tuple[float, str, str]]:
        out = {key: (_get(run, "cpi", name), "lam", f"cpi,{name}") for key, name in LOCAL_RATES.items()}
        # micro.cu prints 6 significant digits (6.29146e+07); an L2 is a whole number of MiB
        mib = round(_get(run, "env", "l2_bytes") / 2**20)
        out["l2_bytes"] = (float(mib * 2**20), "bytes", f"env,l2_bytes (cudaDeviceProp::l2CacheSize): {mib} MiB")
        return out

    a, b = one(load_run(results / "run1.csv")), one(load_run(results / "run2.csv"))
    return {k: Figure(k, v[0], b[k][0], v[1], v[2]) for k, v in a.items()}


def derive(results: Path = DEFAULT_RESULTS) -> dict[str, Figure]:
    """The figures of both runs in ``results`` (``run1.csv``, ``run2.csv``)."""
    one = _derive_one(load_run(results / "run1.csv"))
    two = _derive_one(load_run(results / "run2.csv"))
    return {k: Figure(k, v[0], two[k][0], v[1], v[2]) for k, v in one.items()}


# ----------------------------------------------------------------------------- rendering

DEVICE = '''[device]
name = "NVIDIA H100 SXM5"
architecture = "Hopper"
vendor = "nvidia"
chip = "GH100"
compute_capability = "9.0"
sm_count = 132
schedulers_per_sm = 4                        # n_ws (four SM sub-partitions)
dispatch_units_per_scheduler = 1
warp_size = 32
clock_mhz = 1980                             # boost clock; models count cycles, this only converts to time
max_threads_per_sm = 2048
max_warps_per_sm = 64
max_blocks_per_sm = 32
max_threads_per_block = 1024
registers_per_sm = 65536
max_registers_per_block = 65536
max_registers_per_thread = 255
register_allocation_unit = 256               # registers per warp are rounded up to this
register_file_partitions = 4                 # register file split between sub-partitions
warp_allocation_granularity = 1
shared_memory_per_sm = 233472                # 228 KB, the largest carve-out
# Carve-outs: 0, 8, 16, 32, 64, 100, 132, 164, 196, 228 KB.
shared_memory_carveouts = [0, 8192, 16384, 32768, 65536, 102400, 135168, 167936, 200704, 233472]
max_shared_memory_per_block = 49152          # static limit: 48 KB
max_shared_memory_per_block_optin = 232448   # 227 KB with cudaFuncAttributeMaxDynamicSharedMemorySize
shared_memory_allocation_unit = 128          # per-block allocation granularity, bytes
reserved_shared_memory_per_block = 1024      # taken by the driver for every block (sm_80 and newer)
shared_memory_banks = 32
l1_cache_bytes = 262144                      # combined L1 / shared memory per SM
l2_cache_bytes = 52428800
global_memory_bytes = 85899345920
global_memory_segment_bytes = 128
memory_bandwidth_gbps = 3352
'''

SOURCES = '''[sources]
# Where the numbers come from. Keys name a section or a single key ("device.clock_mhz");
# the most specific entry wins. Unit sections and rules carry their own 'source'.
device = "NVIDIA CUDA C++ Programming Guide, table 'Technical Specifications per Compute Capability' (9.0); NVIDIA H100 Tensor Core GPU Architecture whitepaper (H100 SXM5: 132 SMs, 50 MB L2, 80 GB HBM3 at 3.35 TB/s)"
"device.clock_mhz" = "NVIDIA H100 SXM5 boost clock 1980 MHz; measured under load: {clock} MHz (clock64 over %globaltimer, {where})"
"device.register_allocation_unit" = "CUDA 13.0 cuda_occupancy.h (register/shared-memory allocation granularity, sub-partitions, carve-outs)"
"device.register_file_partitions" = "CUDA 13.0 cuda_occupancy.h (register/shared-memory allocation granularity, sub-partitions, carve-outs)"
"device.shared_memory_allocation_unit" = "CUDA 13.0 cuda_occupancy.h (register/shared-memory allocation granularity, sub-partitions, carve-outs)"
"device.shared_memory_carveouts" = "CUDA 13.0 cuda_occupancy.h (register/shared-memory allocation granularity, sub-partitions, carve-outs)"
"device.reserved_shared_memory_per_block" = "CUDA C++ Programming Guide (1 KB reserved per block on compute capability 8.0 and newer)"
"device.memory_bandwidth_gbps" = "NVIDIA H100 SXM5 specification (3.35 TB/s); measured: {read} GB/s read, {write} GB/s write ({where}, bw rows)"
'''  # noqa: E501


def writeback_points(results: Path, run: int) -> dict[str, list[tuple[float, float]]]:
    """Per kernel of ``store_wb.cu`` (k_store, k_update, k_copy): (bytes stored, DRAM bytes
    written) of each launch in ncu run ``run`` of ``results``."""
    launches = list(csv.DictReader((results / "launches.csv").open()))
    metrics = _ncu_metrics(results / f"ncu_run{run}.csv")
    out: dict[str, list[tuple[float, float]]] = {}
    for launch in launches:
        out.setdefault(launch["kernel"], []).append(
            (float(launch["mb"]) * 2**20, metrics[int(launch["launch"])]["dram__bytes_write.sum"]))
    return out


def _ncu_metrics(path: Path) -> dict[int, dict[str, float]]:
    """Per ncu launch ID, its metrics, from an ``ncu --csv`` run whose program also printed its
    own lines (the launch list) before ncu's table."""
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    out: dict[int, dict[str, float]] = {}
    for row in csv.DictReader(lines[start:]):
        out.setdefault(int(row["ID"]), {})[row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
    return out


# Bytes at least this many times the dirty capacity estimate it: the write-back has settled.
WRITEBACK_SETTLED = 2 * 2**20 * 24


def derive_writeback(results: Path) -> dict[str, Figure]:
    """The bytes of stores L2 still holds dirty at the end of a kernel (stored − written back
    to DRAM during it), for stores alone (``k_store``) and with as many other bytes read
    (``k_copy``): the median over the launches of 48 MiB and more, per run (empty when the
    folder is absent)."""
    if not (results / "launches.csv").exists():
        return {}

    def one(run: int) -> dict[str, tuple[float, str, str]]:
        points = writeback_points(results, run)

        def held(kernel: str) -> float:
            return statistics.median(s - w for s, w in points[kernel] if s >= WRITEBACK_SETTLED)

        return {"l2_dirty_bytes": (held("k_store"), "bytes",
                                   "k_store: MiB stored - dram__bytes_write.sum, median over 48-256 MiB"),
                "l2_dirty_bytes_streaming": (held("k_copy"), "bytes",
                                             "k_copy: MiB stored - dram__bytes_write.sum, median over 48-256 MiB")}

    a, b = one(1), one(2)
    return {k: Figure(k, v[0], b[k][0], v[1], v[2]) for k, v in a.items()}


LINE_LEVELS = {"l1": "ld_global_l1", "l2": "ld_global_l2", "dram": "ld_global_dram_1GB"}


def derive_lines(results: Path) -> list[tuple[int, float, float, float]]:
    """The latency a warp load adds per level when its lanes touch 1..32 different lines
    (``run_micro.sh lanes``): (lines, L1, L2, DRAM cycles over the one-line latency), mean of
    both runs, never falling as lines are added. Empty when the folder is absent."""
    if not (results / "run1.csv").exists():
        return []
    runs = [load_run(results / f"run{k}.csv") for k in (1, 2)]
    counts = sorted(int(name.rsplit("lanes", 1)[1]) for (bench, name, _) in runs[0]
                    if bench == "lat" and name.startswith("ld_global_l1_lanes"))
    table: list[tuple[int, float, float, float]] = []
    last = {level: 0.0 for level in LINE_LEVELS}
    for lines in counts:
        extra = {}
        for level, name in LINE_LEVELS.items():
            mean = sum(_get(run, "lat", f"{name}_lanes{lines}") for run in runs) / 2
            one = sum(_get(run, "lat", f"{name}_lanes1") for run in runs) / 2
            extra[level] = last[level] = max(last[level], round(mean - one, 1))
        table.append((lines, extra["l1"], extra["l2"], extra["dram"]))
    return table


# store_scatter.cu's kernels: the [[pipeline.scattered_stores]] operation each one measures
SCATTER_KERNELS = (("store", "k_scatter_store"), ("red", "k_scatter_red"))


def derive_scattered_stores(results: Path) -> tuple[tuple[str, tuple[tuple[float, float, float, float], ...]], ...]:
    """Stores and atomic adds at random 4-byte slots (``store_scatter.cu`` under ncu): per
    operation, per footprint (MiB, one store per slot on average), the DRAM bytes read and written
    per store and the SM cycles per store with every SM issuing (ncu cycles x SMs / stores), mean
    of the two runs. Empty when the folder is absent."""
    if not (results / "launches.csv").exists():
        return ()
    launches = list(csv.DictReader((results / "launches.csv").open()))
    runs = [_ncu_metrics(results / f"ncu_run{run}.csv") for run in (1, 2)]
    out = []
    for operation, kernel in SCATTER_KERNELS:
        rows = []
        for launch in (x for x in launches if x["kernel"] == kernel):
            stores = float(launch["stores"])
            per = [(m["dram__bytes_read.sum"] / stores, m["dram__bytes_write.sum"] / stores,
                    m["gpc__cycles_elapsed.max"] * SM_COUNT / stores) for m in (r[int(launch["launch"])] for r in runs)]
            rows.append((float(launch["mb"]), *(round((a + b) / 2, 2) for a, b in zip(*per, strict=True))))
        out.append((operation, tuple(rows)))
    return tuple(out)


def derive_l1_line_lam(results: Path) -> Figure | None:
    """SM cycles per line of an L1-hit warp load whose lanes touch 32 lines in 32 different banks
    (``run_micro.sh linediag``: cpi,ld_global_l1_diag_lines32 / 32), per run; None when absent."""
    if not (results / "run1.csv").exists():
        return None
    values = [_get(load_run(results / f"run{k}.csv"), "cpi", "ld_global_l1_diag_lines32") / 32 for k in (1, 2)]
    return Figure("l1_line_lam", values[0], values[1], "lam",
                  "cpi,ld_global_l1_diag_lines32 / 32 (lanes over 32 lines in 32 banks)")


SHARED_ATOMICS = ROOT / "bench" / "micro" / "results" / "h200-2026-11-27-shared-atomics"


def derive_shared_cas_pass(results: Path = SHARED_ATOMICS) -> float | None:
    """SM cycles of one pass of the compare-and-swap retry loop of a shared-memory float atomicAdd
    (``shared_atomic_cas.cu``, Nsight Compute): pattern ``warp_word`` with one warp per block (a
    warp's 32 lanes on one word: 32 passes, no other warp), (cycles of the atomic launch − cycles
    of the plain one) / 64 iterations / the ATOMS executed per warp-atomic; None when absent.
    Measured on the H200; the H100 has the same SM."""
    path = results / "ncu.csv"
    if not path.exists():
        return None
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith('"')]
    by_launch: dict[int, dict[str, float]] = {}
    for row in csv.DictReader(lines):
        by_launch.setdefault(int(row["ID"]), {})[row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
    launches = [by_launch[k] for k in sorted(by_launch)]
    # launch order: atomic then plain, blocks 32/128/256/512, patterns 0-9 (pattern 1 = warp_word)
    atomic, plain = launches[1], launches[40 + 1]
    warps, iterations = 132, 64
    passes = atomic["smsp__sass_inst_executed_op_shared_atom.sum"] / (warps * iterations)
    extra = atomic["gpc__cycles_elapsed.max"] - plain["gpc__cycles_elapsed.max"]
    return extra / iterations / passes


TEXTURE_FETCH = ROOT / "bench" / "micro" / "results" / "h100-2026-11-28-l2-async-tex"
TEXTURE_KERNELS = ("tex_l1", "tex_l1_same")
MEASURING_SMS = 132     # the lent H100 that ran l2_async_tex.cu


def _launch_cycles(results: Path) -> tuple[dict[int, float], list[dict[str, str]]] | None:
    """A microbenchmark's Nsight Compute run: gpc__cycles_elapsed.max per launch ID (``ncu.csv``)
    and the launches as the program listed them (``launches.csv``, the order ncu sees them); None
    when either is absent."""
    path, listing = results / "ncu.csv", results / "launches.csv"
    if not path.exists() or not listing.exists():
        return None
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith('"')]
    cycles: dict[int, float] = {}
    for row in csv.DictReader(lines):
        if row["Metric Name"] == "gpc__cycles_elapsed.max":
            cycles[int(row["ID"])] = float(row["Metric Value"].replace(",", ""))
    return cycles, list(csv.DictReader(listing.read_text(encoding="utf-8").splitlines()))


def derive_texture_fetch(results: Path = TEXTURE_FETCH) -> float | None:
    """SM cycles of the texture pipe per warp request of a 1-D fetch that hits L1
    (``l2_async_tex.cu`` under Nsight Compute): gpc cycles x SMs / warp fetches of the
    ``tex_l1`` and ``tex_l1_same`` launches, mean over their launches; None when absent.
    Measured on the H100; the H200 has the same SM."""
    run = _launch_cycles(results)
    if run is None:
        return None
    cycles, launches = run
    values = [cycles[k] * MEASURING_SMS / float(launch["bytes_or_fetches"])
              for k, launch in enumerate(launches) if launch["kernel"] in TEXTURE_KERNELS and k in cycles]
    return sum(values) / len(values) if values else None


L1_HIT_RATE = ROOT / "bench" / "micro" / "results" / "h200-2026-11-28-l1-hit-rate"
ONE_LINE_PATTERNS = ("line", "bcast", "pair")


def _l1_hit_rate_metrics(path: Path) -> dict[str, dict[str, float]]:
    """Per pattern of ``l1_hit_rate.csv`` (rows prefixed with it), Nsight Compute's metrics."""
    metrics: dict[str, dict[str, float]] = {}
    header: list[str] | None = None
    for row in csv.reader(path.read_text(encoding="utf-8").splitlines()):
        if len(row) > 1 and row[1] == "ID":
            header = ["pattern", *row[1:]]
        elif header is not None and len(row) == len(header):
            named = dict(zip(header, row, strict=True))
            metrics.setdefault(named["pattern"], {})[named["Metric Name"]] = float(
                named["Metric Value"].replace(",", ""))
    return metrics


def _l1_hit_rate_run(results: Path) -> tuple[dict[str, dict[str, float]], float] | None:
    """(metrics per pattern, SM cycles per load request per pattern) of an ``l1_hit_rate.cu``
    run: (gpc cycles - the H200's launch cost, the GPU that ran it) / L1 requests per SM. None
    when absent."""
    path = results / "l1_hit_rate.csv"
    if not path.exists():
        return None
    launch_cycles = empty_kernel_cycles(GPUS["h200"].empty_kernels)[0]
    metrics = _l1_hit_rate_metrics(path)
    cycles = {name: (m["gpc__cycles_elapsed.max"] - launch_cycles)
              / (m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] / SM_COUNT) for name, m in metrics.items()}
    return metrics, cycles


L1_FILLS = ROOT / "bench" / "micro" / "results" / "h200-2026-11-28-l1-hit-rate-l2"
FILL_PATTERNS = ("l2_line_m8", "l2_line_m4", "l2_line_m2")


def derive_l1_fill_lam(results: Path = L1_FILLS) -> float | None:
    """SM cycles L1 spends on each 128 bytes a load brings in from L2, beside its hits
    (``l1_hit_rate.cu`` built with an 8 MB far table, which L2 keeps): every 8th, 4th and 2nd
    line request from the far table; the least-squares slope through 0 of (cycles per request -
    the all-hit ``line`` pattern's) against the sectors that came from L2 per request / 4. None
    when absent. Measured on the H200; the H100 has the same SM."""
    run = _l1_hit_rate_run(results)
    if run is None or "line" not in run[1]:
        return None
    metrics, cycles = run
    points = [(m["l1tex__m_xbar2l1tex_read_sectors.sum"] / m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] / 4,
               cycles[name] - cycles["line"]) for name, m in metrics.items() if name in FILL_PATTERNS]
    if not points:
        return None
    return sum(x * y for x, y in points) / sum(x * x for x, _ in points)


def derive_l1_request_lam(results: Path = L1_HIT_RATE) -> float | None:
    """SM cycles L1 takes at least for one global load request (``l1_hit_rate.cu`` under Nsight
    Compute, 64 warps per SM, every request an L1 hit on one line: 32 lanes on a line, on one word,
    and the two alternating): (gpc cycles - the kernel launch cost) / L1 requests per SM, the mean
    of the three patterns; None when absent. Two lines a request measure 2.02 cycles (pattern
    ``half``), so the floor only binds on one-line requests. Measured on the H200; the H100 has
    the same SM."""
    run = _l1_hit_rate_run(results)
    if run is None:
        return None
    values = [c for name, c in run[1].items() if name in ONE_LINE_PATTERNS]
    return sum(values) / len(values) if values else None


L2_SHARE_RATE = ROOT / "bench" / "micro" / "results" / "h100-2026-11-28-l2-kinds-schedulers" / "l2share"


def derive_l2_shared_read_gain(results: Path = L2_SHARE_RATE) -> float | None:
    """How much faster SMs read L2 lines that every SM reads than lines each SM reads alone
    (``l2_share_rate.cu`` under Nsight Compute): per kernel (LDG.128, cp.async rings of 4 and 8
    stages) and run, the bytes per gpc cycle of its ``shared_`` launch over its ``own_`` one; the
    mean. None when absent. Measured on the H100; the H200 has the same L2 design."""
    run = _launch_cycles(results)
    if run is None:
        return None
    cycles, launches = run
    per_run = len({launch["kernel"] for launch in launches})     # the program lists each run's launches in turn
    rate = {(k // per_run, launch["kernel"]): float(launch["bytes"]) / cycles[k]
            for k, launch in enumerate(launches) if k in cycles}
    gains = []
    for (run_k, kernel), value in rate.items():
        partner = (run_k, "own_" + kernel.removeprefix("shared_"))
        if kernel.startswith("shared_") and partner in rate:
            gains.append(value / rate[partner])
    return sum(gains) / len(gains) if gains else None


def _relative(path: Path) -> str:
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return path.as_posix()


def _loaded_points(runs: list, prefix: str = "") -> list[tuple[float, float]]:
    """(GB/s, cycles) of the chase beside each number of streaming warps of a ``k_loaded`` mode
    (``prefix``: '' streaming reads, 'copy_', 'rrw_'), the mean of both runs, by warps."""
    warps = sorted(int(name.removeprefix(prefix + "dram_gbps_w")) for (bench, name, _) in runs[0]
                   if bench == "loaded" and name.startswith(prefix + "dram_gbps_w"))
    return [(sum(_get(run, "loaded", f"{prefix}dram_gbps_w{w}") for run in runs) / 2,
             sum(_get(run, "loaded", f"{prefix}dram_latency_w{w}") for run in runs) / 2) for w in warps]


def _rising_curve(points: list[tuple[float, float]], reference: float) -> tuple[tuple[float, float], ...]:
    """(bandwidth / ``reference``, cycles over the first point's latency) up to the point of
    largest bandwidth. Beyond it the streams only queue (the bandwidth falls while the latency
    grows with the requests in flight): no share is left to read there. A point below the idle
    latency counts as 0 and the curve never falls, so noise cannot make a busier DRAM look faster."""
    top = max(range(len(points)), key=lambda k: points[k][0])
    idle = points[0][1]
    curve: list[tuple[float, float]] = []
    for gbps, latency in points[:top + 1]:
        extra = max(0.0, latency - idle, curve[-1][1] if curve else 0.0)
        curve.append((round(gbps / reference, 3), round(extra, 1)))
    return tuple(curve)


def derive_loaded(results: Path) -> tuple[tuple[float, float], ...]:
    """DRAM latency under load (``run_micro.sh loaded``): (share of the largest bandwidth the
    streams reached, cycles over the idle latency) at each number of streaming warps, the mean of
    both runs, up to the point of largest bandwidth. Empty when the folder is absent."""
    if not (results / "run1.csv").exists():
        return ()
    points = _loaded_points([load_run(results / f"run{k}.csv") for k in (1, 2)])
    return _rising_curve(points, max(gbps for gbps, _ in points))


# k_loaded's mixed modes (``run_micro.sh mixed``): (row prefix, share of the DRAM bytes written),
# by rising share
MIXED_MODES = (("rrw_", 1 / 3), ("copy_", 1 / 2))


def derive_mixed(results: Path) -> tuple[tuple[float, tuple[tuple[float, float], ...]], ...]:
    """DRAM latency beside streams that also write (``run_micro.sh mixed``): for each mode, the
    share of its bytes written and its curve, (bandwidth as a share of the largest the *reading*
    streams of the same run reached, cycles over the idle latency), as :func:`derive_loaded`.
    Mixed traffic saturates DRAM below the reading peak, so the curves end below 1. The
    write-only mode is not used: its first level already saturates DRAM (the stores need no
    answer, so one warp keeps enough of them in flight). Empty when the folder is absent."""
    if not (results / "run1.csv").exists():
        return ()
    runs = [load_run(results / f"run{k}.csv") for k in (1, 2)]
    reference = max(gbps for gbps, _ in _loaded_points(runs))
    return tuple((share, _rising_curve(_loaded_points(runs, prefix), reference)) for prefix, share in MIXED_MODES)


def _ncu_dram_per_sector_byte(path: Path) -> float:
    """DRAM bytes read per 32-byte sector requested, from the ncu run of ``run_micro.sh
    scattered`` (``dram__bytes_read.sum`` / (32 x ``lts__t_sectors_srcunit_tex_op_read.sum``)
    of the k_loaded launches that had streaming warps; about 1.93: a 64-byte fetch per sector,
    less the few the 50 MB L2 holds of the 512 MB buffer)."""
    metrics: dict[str, dict[str, float]] = {}
    with open(path, newline="") as handle:
        for row in csv.DictReader(line for line in handle if line.startswith('"')):
            if "k_loaded" in row.get("Kernel Name", ""):
                value = float(row["Metric Value"].replace(",", ""))
                metrics.setdefault(row["ID"], {})[row["Metric Name"]] = value
    ratios = [m["dram__bytes_read.sum"] / (32 * m["lts__t_sectors_srcunit_tex_op_read.sum"])
              for m in metrics.values() if m.get("lts__t_sectors_srcunit_tex_op_read.sum", 0) > 1e6]
    if not ratios:
        raise ValueError(f"{path}: no k_loaded launch with scattered traffic")
    return sum(ratios) / len(ratios)


def derive_scattered(results: Path, streaming: Path) -> tuple[tuple[float, float], ...]:
    """DRAM latency beside gathering warps (``run_micro.sh scattered``): (DRAM bandwidth as a
    share of the largest the *streaming* run reached, cycles over the idle latency) at each load,
    the mean of both runs. DRAM bandwidth = sectors requested x the DRAM bytes per sector ncu
    measured, sorted by bandwidth up to the first point where scattered fetches saturate DRAM
    (well below the streaming peak). Never falling, as ``derive_loaded``. Empty when either
    folder is absent."""
    if not (results / "run1.csv").exists() or not (streaming / "run1.csv").exists():
        return ()
    per_sector = _ncu_dram_per_sector_byte(results / "ncu_run1.csv")
    runs = [load_run(results / f"run{k}.csv") for k in (1, 2)]
    stream_top = max(gbps for gbps, _ in _loaded_points([load_run(streaming / f"run{k}.csv") for k in (1, 2)]))
    levels = [name.removeprefix("scattered_sector_gbps") for (bench, name, _) in runs[0]
              if bench == "loaded" and name.startswith("scattered_sector_gbps")]
    points = []
    for level in levels:
        gbps = sum(_get(run, "loaded", "scattered_sector_gbps" + level) for run in runs) / 2 * per_sector
        latency = sum(_get(run, "loaded", "scattered_dram_latency" + level) for run in runs) / 2
        points.append((gbps, latency))
    points.sort()
    idle = points[0][1]
    top = max(gbps for gbps, _ in points)
    curve: list[tuple[float, float]] = []
    # up to the first point at the saturated bandwidth (within 1 %), as derive_loaded stops at
    # its largest: beyond it more requests in flight only queue, at no higher bandwidth
    points = points[:next(k for k, (gbps, _) in enumerate(points) if gbps >= 0.99 * top) + 1]
    for gbps, latency in points:
        extra = max(0.0, latency - idle, curve[-1][1] if curve else 0.0)
        share = round(gbps / stream_top, 4)
        if curve and share <= curve[-1][0]:
            curve[-1] = (curve[-1][0], extra)      # the same bandwidth (to 4 digits): the larger wait
        else:
            curve.append((share, round(extra, 1)))
    return tuple((u, round(x, 1)) for u, x in curve)


def derive_turnaround(results: Path, warp_lnch_ovh: float) -> float | None:
    """Cycles from a block's end to the next block's first warp on the same slot of an SM
    (``run_micro.sh turn``): one slot's time per empty 256-thread block when one block fits
    (turn,empty_r1, mean of both runs), less the 7 x warp_lnch_ovh by which its 8 warps start
    apart (the simulator adds those itself). None when the folder is absent."""
    if not (results / "run1.csv").exists():
        return None
    runs = [load_run(results / f"run{k}.csv") for k in (1, 2)]
    per_block = sum(_get(run, "turn", "empty_r1") for run in runs) / 2
    return round(per_block - 7 * warp_lnch_ovh, 1)


EMPTY_KERNELS = Path(__file__).resolve().parents[2] / "samples" / "measured" / "h100-empty" / "ncu_empty.csv"


@dataclass(frozen=True)
class Gpu:
    """What differs between the GPUs this script writes profiles for: the public device figures
    (the microbenchmarks measure the rest) and the empty-kernel measurement of the launch cost."""

    key: str
    name: str
    memory: str                 # the memory in words, for the sources
    global_memory_bytes: int
    bandwidth_gbps: int
    bandwidth_words: str

    def results(self, run: str, date: str = "2026-11-24") -> Path:
        """The raw results of a later device call of this GPU: ``half``, ``local``, ``loaded``,
        ``mixed`` (``run_micro.sh`` subsets), ``tensor``, ``lanes`` and ``writeback`` (``store_wb.cu``)
        of 2026-11-24; ``linediag`` and ``storescatter`` (``store_scatter.cu``) of 2026-11-25."""
        return ROOT / "bench" / "micro" / "results" / f"{self.key}-{date}-{run}"

    @property
    def empty_kernels(self) -> Path:
        return ROOT / "samples" / "measured" / f"{self.key}-empty" / "ncu_empty.csv"

    def retarget(self, text: str) -> str:
        """The H100 text with this GPU's figures (identity for the H100)."""
        if self.key == "h100":
            return text
        return (text.replace("NVIDIA H100 SXM5", self.name)
                .replace("the lent H100", f"the lent {self.key.upper()}")
                .replace("global_memory_bytes = 85899345920", f"global_memory_bytes = {self.global_memory_bytes}")
                .replace("memory_bandwidth_gbps = 3352", f"memory_bandwidth_gbps = {self.bandwidth_gbps}")
                .replace("80 GB HBM3 at 3.35 TB/s", self.memory)
                .replace("specification (3.35 TB/s)", f"specification ({self.bandwidth_words})")
                .replace("whitepaper (H100 SXM5: 132 SMs, 50 MB L2,",
                         "whitepaper and H200 product brief (H200 SXM: the same GH100 chip, 132 SMs,"))


GPUS = {
    "h100": Gpu("h100", "NVIDIA H100 SXM5", "80 GB HBM3 at 3.35 TB/s", 85899345920, 3352, "3.35 TB/s"),
    # The H200 is the same GH100 chip (132 SMs, same SM) with 141 GB of HBM3e; its device reports a
    # 60 MB L2 (bench/micro/results/h200-*/run1.csv, env,l2_bytes).
    "h200": Gpu("h200", "NVIDIA H200 SXM", "141 GB HBM3e at 4.8 TB/s", 141000000000, 4800, "4.8 TB/s"),
}


def empty_kernel_cycles(path: Path = EMPTY_KERNELS) -> tuple[float, str]:
    """Median gpc__cycles_elapsed.max of the one-block empty kernels (all block sizes)."""
    sys.path.insert(0, str(path.parents[3]))  # the repo root, when run as a script
    from engine.ncu import load_ncu_csv

    one_block = [launch.cycles for launch in load_ncu_csv(path) if launch.grid == (1, 1, 1)]
    where = f"measured: {path.relative_to(path.parents[3])} (one-block empty kernels, median of {len(one_block)})"
    return statistics.median(one_block), where


@functools.lru_cache(maxsize=4)
def _suite_v2_runs(gpu_key: str) -> dict:
    """Suite v2's measurements on one GPU (read once however many figures come from them)."""
    sys.path.insert(0, str(ROOT))
    from engine.validation import load_measurements

    return load_measurements([ROOT / "samples" / "measured" / f"v2-{gpu_key}"])


def _suite_v2_median(gpu_key: str, kernels: str | tuple[str, ...], per_launch: Any,
                     method: str) -> tuple[float, str]:
    """The median over the launch configurations of suite v2's ``kernels`` (``family/kernel``,
    one or several) of ``per_launch(ncu_cycles, launch)``, and the source line that says where it
    came from. ``per_launch`` gets the launch and, with several kernels, which one it is."""
    sys.path.insert(0, str(ROOT))
    from engine.launch import load_launch_file

    names = (kernels,) if isinstance(kernels, str) else kernels
    values = []
    for kernel in names:
        family = kernel.split("/")[0]
        launches = {x.name: x for x in load_launch_file(ROOT / "samples" / "v2" / f"{family}.launch.toml").launches}
        values += [per_launch(m.median, launches[m.config]) if isinstance(kernels, str)
                   else per_launch(m.median, launches[m.config], kernel)
                   for key, m in _suite_v2_runs(gpu_key).items() if key.startswith(kernel + "/")]
    run = (ROOT / "samples" / "measured" / f"v2-{gpu_key}").relative_to(ROOT).as_posix()
    where = f"measured: {run} (suite v2 {' and '.join(names)}, {method}, median of {len(values)} launches)"
    return round(statistics.median(values), 2), where


def same_address_atomic_cycles(gpu_key: str, launch_cycles: float) -> tuple[float, str]:
    """GPU cycles per same-address global atomic: suite v2's atomic_same_global (every thread of
    the grid adds to out[0]) measured on this GPU, (kernel cycles − launch cost) / atomics."""
    return _suite_v2_median(
        gpu_key, "atomics/atomic_same_global",
        lambda cycles, launch: (cycles - launch_cycles) / int(launch.args[2]),
        "one address for every thread; (ncu cycles - launch cost) / atomics")


def distinct_address_atomic_cycles(gpu_key: str, launch_cycles: float, sm_count: int) -> tuple[float, str]:
    """SM cycles per global atomic lane on addresses spread over a buffer that fits in L2, with
    every SM issuing them (the GPU's L2 atomic units run them): suite v2's atomic_spread_global
    (out[idx[i]] += in[i], idx uniform over 1M slots: a 4 MB buffer) and hist_global
    (bins[data[i] % 65536] += 1: 256 KB) measured on this GPU. Per atomic, the kernel's time
    (ncu cycles − launch cost) × SMs / atomics: the atomics bound both kernels (ncu: warps wait to
    drain them at their exit), and their coalesced loads run beside them, since the simulator
    issues atomics to a subsystem of their own (mechanism ``atomic_units``)."""
    n_arg = {"atomics/atomic_spread_global": 3, "histogram/hist_global": 2}

    def per_lane(cycles: float, launch: Any, kernel: str) -> float:
        return (cycles - launch_cycles) * sm_count / int(launch.args[n_arg[kernel]])

    return _suite_v2_median(
        gpu_key, tuple(n_arg), per_lane,
        "one atomic per thread on random slots; (ncu cycles - launch cost) x SMs / atomics")


def same_address_request_cycles(gpu_key: str, launch_cycles: float) -> tuple[float, str]:
    """GPU cycles per same-address global atomic of a warp with one active lane: suite v2's
    pipe_threshold_count (lane 0 of every warp adds its ballot count to one counter; with half the
    flags set at random every warp has one) measured on this GPU, (kernel cycles − launch cost) /
    warps."""
    return _suite_v2_median(
        gpu_key, "pipeline/pipe_threshold_count",
        lambda cycles, launch: (cycles - launch_cycles) / math.ceil(int(launch.args[3]) / WARP_SIZE),
        "one lane per warp on one address; (ncu cycles - launch cost) / warps")


def constant_divergent_cycles(gpu_key: str, launch_cycles: float, sm_count: int) -> tuple[float, str]:
    """SM cycles per distinct constant address of a warp request: suite v2's const_table_lookup
    (every lane walks its own path through a 4096-entry constant table: 32 distinct addresses per
    warp and round) measured on this GPU, (kernel cycles − launch cost) × SMs / (warps × rounds ×
    32)."""
    def per_address(cycles: float, launch: Any) -> float:
        warps = math.ceil(int(launch.args[2]) / WARP_SIZE)
        return (cycles - launch_cycles) * sm_count / (warps * int(launch.args[3]) * WARP_SIZE)

    return _suite_v2_median(gpu_key, "constmem/const_table_lookup", per_address,
                            "32 distinct addresses per warp request; (ncu cycles - launch cost) x SMs / "
                            "(warps x rounds x 32)")


def constant_uniform_cycles(gpu_key: str, launch_cycles: float, sm_count: int,
                            dram_lam: float) -> tuple[float, str]:
    """SM cycles per warp request of a constant load that every lane makes at the same address
    but whose address is in a register (an ``LDC``, not an operand folded into the instruction),
    with every SM issuing them: suite v2's const_poly (Horner's rule over ``degree`` coefficients
    in constant memory, one LDC and one FFMA per step; one coalesced load and store per thread).
    Per warp, (kernel cycles − launch cost) × SMs / warps, less its load and store at the
    profile's DRAM rate ``dram_lam`` (the simulator charges them on the same memory pipe), over
    ``degree``."""
    def per_request(cycles: float, launch: Any) -> float:
        warps = math.ceil(int(launch.args[2]) / WARP_SIZE)
        per_warp = (cycles - launch_cycles) * sm_count / warps - 2 * dram_lam
        return per_warp / int(launch.args[3])

    return _suite_v2_median(gpu_key, "constmem/const_poly", per_request,
                            "one LDC per Horner step, every lane at one address; (ncu cycles - launch cost) "
                            "x SMs / warps, less a coalesced load and store at dram_lam, / degree")


def _fmt(x: float) -> str:
    """A TOML number: integers without a fraction, others as the shortest repr."""
    if float(x).is_integer():
        return str(int(x))
    return repr(float(x))


class _Used(dict):
    """A dict that remembers which keys were read: the figures the profile uses."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.used: set[str] = set()

    def __getitem__(self, key: str) -> float:
        self.used.add(key)
        return super().__getitem__(key)


USED: set[str] = set()  # filled by render(): the keys of the figures the profile uses


def used_figures(fig: dict[str, Figure], results: Path = DEFAULT_RESULTS) -> set[str]:
    """The keys of the figures that the rendered profile contains."""
    render(fig, results)
    return set(USED)


def _T(lam: float) -> float:
    return round(WARP_SIZE / (lam * N_WS), DIGITS["T"])


def render(fig: dict[str, Figure], results: Path = DEFAULT_RESULTS, gpu: Gpu = GPUS["h100"]) -> str:
    """The profile text for the figures ``fig`` measured in ``results``."""
    try:
        where = results.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        where = results.as_posix()
    runs = f"{where}/run{{1,2}}.csv"
    v = _Used({k: f.value for k, f in fig.items()})

    def src(*keys: str) -> str:
        rows = "; ".join(fig[k].what for k in keys)
        return f"measured: {runs} ({rows}); mean of the two runs"

    out: list[str] = []
    w = out.append
    w("# Warpline GPU profile. Format: profiles/README.md. Every number has a source (the")
    w("# [sources] table, or a 'source' key next to it). Edit freely: the file is validated on load,")
    w("# and unknown or misspelt keys are rejected with their line number.")
    w("# NVIDIA H100 SXM5 (Hopper, GH100, sm_90): the GPU lent to this project.")
    w("# GENERATED by bench/micro/make_profile.py from the microbenchmarks in bench/micro/ (method:")
    w("# docs/microbenchmarks.md). Device figures are public specifications; every λ/Λ, latency and")
    w("# overhead below was measured on the lent H100 (two runs; the mean is used), except where a")
    w("# source string says otherwise (mu, issue_cycle, unit counts, store latencies).")
    w('description = "NVIDIA H100 SXM5 (sm_90): device figures from public specifications; '
      'instruction costs, latencies and overheads measured on the lent H100 (bench/micro)."')
    w("")
    w("[provenance]")
    w('basis = "device figures from public specifications; instruction costs, latencies and overheads '
      'measured on the lent H100 (bench/micro)"')
    w("measured_here = true")
    w("")
    local = derive_local(gpu.results('local'))
    try:
        local_where = gpu.results('local').resolve().relative_to(ROOT).as_posix()
    except ValueError:
        local_where = gpu.results('local').as_posix()
    device = DEVICE
    if local:
        # the L2 the device reports (the H200's is 60 MB, not the H100's 50 MB)
        device = device.replace("l2_cache_bytes = 52428800", f"l2_cache_bytes = {int(local['l2_bytes'].value)}")
    w(device.rstrip("\n"))
    launch_cycles, launch_where = empty_kernel_cycles(gpu.empty_kernels)
    w(f"kernel_launch_cycles = {_fmt(launch_cycles)}           # an empty one-block kernel, ncu cycles")
    if gpu.key == "h100":
        w("default_for_target = true             # sm_90 PTX without --profile runs on this one")
    w("")
    w("# Functional units: counts per SM / per scheduler (whitepaper) and class defaults measured")
    w("# with one representative instruction each. λ = SM cycles per warp instruction (64 warps/SM);")
    w("# Λ = dependent-chain latency; T = warp_size / (λ · n_ws); lat_comp = Λ.")
    units = [
        ("alu", 128, 32, "fma_f32", "FP32 lanes (64 of them also run INT32); class default = fma.rn.f32"),
        ("fp64", 64, 16, "fma_f64", "FP64 lanes; class default = fma.rn.f64"),
        ("sfu", 16, 4, "ex2_approx_ftz", "MUFU lanes; class default = ex2.approx.ftz.f32 (one MUFU.EX2)"),
    ]
    for name, per_sm, per_sched, key, what in units:
        lam, Lam = v[f"{key}.lam"], v[f"{key}.Lam"]
        w("")
        w(f"[units.{name}]")
        w(f"per_sm = {per_sm}")
        w(f"per_scheduler = {per_sched}")
        w(f"T = {_fmt(_T(lam))}")
        w(f"lat_comp = {_fmt(Lam)}")
        w(f"lam = {_fmt(lam)}")
        w(f"Lam = {_fmt(Lam)}")
        w(f'source = "counts: NVIDIA H100 whitepaper ({what}); costs {src(key + ".lam", key + ".Lam")}"')
    lam, Lam = v["ld_shared.lam"], v["ld_shared.Lam"]
    w("")
    w("[units.ldst]")
    w("per_sm = 32")
    w("per_scheduler = 8")
    w(f"T = {_fmt(_T(lam))}")
    w(f"lat_comp = {_fmt(Lam)}                                # shared-memory load latency")
    w(f"lam = {_fmt(lam)}")
    w(f"Lam = {_fmt(Lam)}")
    shared = src("ld_shared.lam", "ld_shared.Lam")
    w(f'source = "counts: NVIDIA H100 whitepaper; class default = ld.shared.u32, {shared}"')
    w("")
    w("[units.tensor]")
    w("per_sm = 4")
    w("per_scheduler = 1")
    tensor = derive_tensor(gpu.results('tensor'))
    tensor_where = _relative(gpu.results('tensor'))
    if tensor:
        lam, Lam = tensor["mma_m16n8k16_f32.lam"].value, tensor["mma_m16n8k16_f32.Lam"].value
        w(f"T = {_fmt(_T(lam))}")
        w(f"lat_comp = {_fmt(Lam)}")
        w(f"lam = {_fmt(lam)}")
        w(f"Lam = {_fmt(Lam)}")
        rows = f"{tensor['mma_m16n8k16_f32.lam'].what}; {tensor['mma_m16n8k16_f32.Lam'].what}"
        w('source = "counts: NVIDIA H100 whitepaper (one fourth-generation tensor core per sub-partition); '
          f'class default = mma.sync.aligned.m16n8k16 f16 -> f32 (one HMMA.16816.F32), measured: '
          f'{tensor_where}/run{{1,2}}.csv ({rows}); mean of the two runs"')
    else:
        w('source = "counts: NVIDIA H100 whitepaper (one fourth-generation tensor core per sub-partition); '
          'tensor-core costs not measured (no microbenchmark in bench/micro)"')
    w("")
    w("[manybsp]")
    w("# mem_lat: DRAM latency of a cold pointer chase over 1 GB. Launch overheads: empty blocks,")
    w("# cycles per block of a full wave on one SM, fitted over block sizes 32..1024 (w = warps per")
    w("# scheduler of a block). mu: 000 defines no way to measure it; it stays a placeholder.")
    w(f"mem_lat = {_fmt(v['dram.Lam'])}                              # G2: global-memory latency, cycles")
    w("mu = 2.0                                     # μ of eq. 24")
    w(f"block_lnch_ovh = {_fmt(v['launch.block_lnch_ovh'])}")
    w(f"warp_lnch_ovh = {_fmt(v['launch.warp_lnch_ovh'])}")
    w("issue_cycle = 1")
    w(f'source = "mem_lat {src("dram.Lam")}. block_lnch_ovh, warp_lnch_ovh {src("launch.block_lnch_ovh")}. '
      "mu = 2.0 is NOT measured: 000 gives no way to measure it (a placeholder midpoint of 000's 1.93..3.49). "
      "issue_cycle = 1 is 000's value, not measured\"")
    w("")
    w("[manybsp.barrier_overhead]")
    w(f"# bar.sync cost by threads per block: one block alone, back-to-back barriers ({runs}, bar rows).")
    for nt in BAR_SIZES:
        w(f"{nt} = {_fmt(v[f'bar.{nt}'])}")
    w("")
    w("[pipeline]")
    w("# IL: the most warp instructions per cycle per SM seen in 001's instruction mix.")
    w(f"issue_limit = {_fmt(v['issue_limit'])}")
    w(f"lambda_alu = {_fmt(v['fma_f32.lam'])}")
    w(f"lambda_sfu = {_fmt(v['ex2_approx_ftz.lam'])}")
    w(f'source = "issue_limit {src("issue_limit")} (beta fma.rn.f32 per ex2.approx.ftz.f32, beta 0..64, 64 warps/SM). '
      f'lambda_alu = fma.rn.f32 and lambda_sfu = ex2.approx.ftz.f32 {src("fma_f32.lam", "ex2_approx_ftz.lam")}"')
    w("")
    w("[pipeline.memory]")
    w("# λ of one coalesced 128-byte warp access (4-byte words) per SM = 128 B / (bytes per cycle per SM")
    w("# with every SM streaming); Λ = pointer-chase latency (128-byte stride, random cyclic permutation).")
    w(f"global_lam = {_fmt(v['dram_read.lam'])}")
    w(f"global_Lam = {_fmt(v['dram.Lam'])}")
    w(f"dram_lam = {_fmt(v['dram_read.lam'])}")
    w(f"dram_Lam = {_fmt(v['dram.Lam'])}")
    w(f"l2_lam = {_fmt(v['l2_read.lam'])}")
    atomic_cycles, atomic_where = same_address_atomic_cycles(gpu.key, launch_cycles)
    request_cycles, request_where = same_address_request_cycles(gpu.key, launch_cycles)
    distinct_cycles, distinct_where = distinct_address_atomic_cycles(gpu.key, launch_cycles, SM_COUNT)
    constant_cycles, constant_where = constant_divergent_cycles(gpu.key, launch_cycles, SM_COUNT)
    uniform_cycles, uniform_where = constant_uniform_cycles(gpu.key, launch_cycles, SM_COUNT,
                                                            v['dram_read.lam'])
    w(f"l2_Lam = {_fmt(v['l2.Lam'])}")
    w("# L1 hit: Λ = pointer chase in 16 KB (ld.global.ca, warm); λ per 128-byte wavefront at the rate of")
    w("# the shared-memory data path, which L1 shares.")
    w(f"l1_lam = {_fmt(v['l1.lam'])}")
    line_lam = derive_l1_line_lam(gpu.results("linediag", "2026-11-25"))
    line_lam_source = ""
    if line_lam is not None:
        line_lam_source = (f"; l1_line_lam measured: {_relative(gpu.results('linediag', '2026-11-25'))}"
                           f"/run{{1,2}}.csv ({line_lam.what}); mean of the two runs")
        w("# ... per line of a request whose lanes fall in 32 different banks (its tag lookups): a request")
        w("# costs the larger of its busiest bank's words x l1_lam and its lines x this")
        w(f"l1_line_lam = {_fmt(line_lam.value)}")
    same_sm = "; the H100 has the same SM" if gpu.key == "h100" else ""     # measured on the H200
    for key, value, comment, where, how in (
            ("l1_request_lam", derive_l1_request_lam(),
             "... and at least this per global load request: one-line hits do not reach one a cycle",
             L1_HIT_RATE, "patterns line, bcast, pair: (ncu gpc cycles - kernel_launch_cycles) / L1 requests "
                          "per SM, mean"),
            ("l1_fill_lam", derive_l1_fill_lam(),
             "... and this more per 128 bytes a load brings in from beyond L1 (its fill passes L1's data stage)",
             L1_FILLS, "patterns line_m8, line_m4, line_m2 with an 8 MB far table: slope of cycles per request "
                       "over the line's against L2 sectors per request / 4")):
        if value is not None:
            w(f"# {comment}")
            w(f"{key} = {_fmt(value)}")
            line_lam_source += f"; {key} measured: {_relative(where)}/l1_hit_rate.csv ({how}{same_sm})"
    w(f"l1_Lam = {_fmt(v['l1.Lam'])}")
    w(f"shared_lam = {_fmt(v['ld_shared.lam'])}")
    w(f"shared_Lam = {_fmt(v['ld_shared.Lam'])}")
    w("# local: Λ = chase in one thread's 2 KB stack array (L1 hit); λ = 64 warps/SM each reading its")
    w("# own 256 B per thread (512 KB per SM, twice L1): the rate of heavy spilling, served from L2.")
    w(f"local_lam = {_fmt(v['ld_local.lam'])}")
    w(f"local_Lam = {_fmt(v['ld_local.Lam'])}")
    local_source = ""
    if local:
        w("# local data that fits in L1 (32 B per thread, 64 KB per SM): λ per load request; stores write")
        w("# through to L2 whatever L1 holds: λ with every lane storing, and with only the odd lanes (every")
        w("# sector half written)")
        for key in LOCAL_RATES:
            w(f"{key} = {_fmt(local[key].value)}")
        rows = "; ".join(local[key].what for key in LOCAL_RATES)
        local_source = (f"; local_l1_lam, local_store_lam, local_store_partial_lam measured: "
                        f"{local_where}/run{{1,2}}.csv ({rows}); mean of the two runs")
    w("# atomics on one global address serialise at its L2 slice: GPU cycles per atomic, all SMs together")
    w(f"atomic_same_address_cycles = {_fmt(atomic_cycles)}")
    w("# ... and per warp request with a single active lane (a warp's leader adding its count)")
    w(f"atomic_same_address_request_cycles = {_fmt(request_cycles)}")
    w("# atomics on addresses spread over an L2-resident buffer: SM cycles per atomic lane, all SMs issuing")
    w(f"atomic_distinct_lane_lam = {_fmt(distinct_cycles)}")
    cas_pass = derive_shared_cas_pass()
    cas_source = ""
    if cas_pass is not None:
        w("# one pass of the compare-and-swap retry loop ptxas makes of a shared-memory float atomicAdd")
        w("# (LDS, FADD, ATOMS.CAST.SPIN, branch): SM cycles of a warp alone (GH100's SM, measured on the H200)")
        w(f"shared_cas_pass_cycles = {_fmt(cas_pass)}")
        cas_source = (f"; shared_cas_pass_cycles measured: {_relative(SHARED_ATOMICS)}/ncu.csv (pattern warp_word, "
                      "one warp per block: (gpc cycles atomic - plain) / 64 iterations / ATOMS per warp-atomic; "
                      "the H100 has the same SM)")
    w("# constant loads: SM cycles per distinct address of a warp request (the constant cache serialises them)")
    w(f"constant_divergent_cycles = {_fmt(constant_cycles)}")
    w("# ... and SM cycles per warp request of an LDC whose lanes share one address (all SMs issuing)")
    w(f"constant_uniform_lam = {_fmt(uniform_cycles)}")
    texture = derive_texture_fetch()
    texture_source = ""
    if texture is not None:
        w("# the texture pipe: SM cycles per warp request of a 1-D texture fetch (4 f-wavefronts each), L1 hits")
        w(f"texture_fetch_lam = {_fmt(texture)}")
        texture_source = (f"; texture_fetch_lam measured: {_relative(TEXTURE_FETCH)} (tex_l1, tex_l1_same: ncu gpc "
                          "cycles x SMs / warp fetches, mean of 4 launches"
                          + ("" if gpu.key == "h100" else "; the H200 has the same SM") + ")")
    shared_gain = derive_l2_shared_read_gain()
    if shared_gain is not None:
        w("# L2 lines every SM reads reach the SMs this much faster than lines each SM reads alone")
        w(f"l2_shared_read_gain = {_fmt(shared_gain)}")
        texture_source += (f"; l2_shared_read_gain measured: {_relative(L2_SHARE_RATE)} (shared_ over own_ bytes per "
                           "gpc cycle of LDG.128 and cp.async rings of 4 and 8 stages, two runs, mean"
                           + ("" if gpu.key == "h100" else "; the H200 has the same L2 design") + ")")
    writeback = derive_writeback(gpu.results('writeback'))
    writeback_source = ""
    if writeback:
        w("# bytes of stores L2 still holds dirty when a kernel ends (only stores beyond them reach DRAM")
        w("# during the kernel): stores alone, and stores beside as many other bytes read")
        for key in ("l2_dirty_bytes", "l2_dirty_bytes_streaming"):
            w(f"{key} = {round(writeback[key].value)}")
        rows = "; ".join(writeback[k].what for k in ("l2_dirty_bytes", "l2_dirty_bytes_streaming"))
        writeback_source = (f"; l2_dirty_bytes, l2_dirty_bytes_streaming measured: "
                            f"{_relative(gpu.results('writeback'))}/ncu_run{{1,2}}.csv ({rows}); mean of the two runs")
    w(f'source = "global/dram {src("dram_read.lam", "dram.Lam")}; l2 {src("l2_read.lam", "l2.Lam")}; '
      f'l1 {src("l1.lam", "l1.Lam")}; shared {src("ld_shared.lam", "ld_shared.Lam")}; '
      f'local {src("ld_local.lam", "ld_local.Lam")}: '
      f'Λ an L1 hit, λ with 512 KB of local data per SM (more than L1); atomic_same_address_cycles '
      f'{atomic_where}; atomic_same_address_request_cycles {request_where}; '
      f'atomic_distinct_lane_lam {distinct_where}; '
      f'constant_divergent_cycles {constant_where}; constant_uniform_lam {uniform_where}{local_source}'
      f'{writeback_source}{line_lam_source}{cas_source}{texture_source}"')
    w("")
    def section(title: str, comments: list[str], body: list[str], source: str, repeated: bool = False) -> None:
        # a measured [pipeline.*] table (or one of an array of them): what it is, its figures,
        # where they come from
        w(f"[[{title}]]" if repeated else f"[{title}]")
        for line in comments:
            w(f"# {line}")
        for line in body:
            w(line)
        w(f'source = "measured: {source}"')
        w("")

    def curve_lines(curve: tuple[tuple[float, float], ...]) -> list[str]:
        return [f"bandwidth_share = [{', '.join(_fmt(u) for u, _ in curve)}]",
                f"extra_Lam = [{', '.join(_fmt(x) for _, x in curve)}]"]

    lines = derive_lines(gpu.results('lanes'))
    if lines:
        section("pipeline.line_latency", [
            "A warp load whose lanes touch several lines waits for the last of them: cycles added to the",
            "one-line latency of the level that serves them (one warp alone, each lane chasing its own",
            "segment of a ring: 16 KB in L1, 8 MB in L2, 1 GB in DRAM)."],
            [f"lines = [{', '.join(str(n) for n, *_ in lines)}]"]
            + [f"{level}_extra = [{', '.join(_fmt(row[k]) for row in lines)}]"
               for k, level in enumerate(("l1", "l2", "dram"), start=1)],
            f"{_relative(gpu.results('lanes'))}/run{{1,2}}.csv (lat,ld_global_{{l1,l2,dram_1GB}}_lanes*): "
            "latency with n lanes - latency with 1, mean of the two runs, never falling")
    loaded_where = _relative(gpu.results("loaded"))
    loaded = derive_loaded(gpu.results("loaded"))
    if loaded:
        section("pipeline.dram_loaded", [
            "A load's DRAM latency while the other warps of the GPU draw a share of the peak DRAM",
            "bandwidth: cycles added to dram_Lam (a 1 GB pointer chase beside streaming warps)."],
            curve_lines(loaded),
            f"{loaded_where}/run{{1,2}}.csv (loaded,dram_gbps_w*; loaded,dram_latency_w*): "
            "share = bandwidth / the largest reached, extra = latency - the idle latency (0 streaming warps), "
            "mean of the two runs, up to the largest bandwidth")
    turnaround = derive_turnaround(gpu.results("turn"), v["launch.warp_lnch_ovh"])
    if turnaround is not None:
        section("pipeline.blocks", [
            "A block slot's turnaround: from a block's last result to the next block's first warp on",
            "that slot (the serial launch rate, block_lnch_ovh of [manybsp], spaces starts SM-wide)."],
            [f"block_turnaround = {_fmt(turnaround)}"],
            f"{_relative(gpu.results('turn'))}/run{{1,2}}.csv (turn,empty_r1: one empty 256-thread block per SM, "
            "cycles per block; mean of the two runs) less 7 x warp_lnch_ovh (its 8 warps start that far apart)")
    scattered = derive_scattered(gpu.results("scattered"), gpu.results("loaded"))
    if scattered:
        section("pipeline.dram_loaded_scattered", [
            "The same beside warps that gather (one random word per lane): DRAM saturates near",
            "this curve's last share, far below the streaming peak; shares of the streaming peak."],
            curve_lines(scattered),
            f"{_relative(gpu.results('scattered'))}/run{{1,2}}.csv (loaded,scattered_sector_gbps_*; "
            "loaded,scattered_dram_latency_*) and ncu_run1.csv (dram__bytes_read.sum per sector requested): "
            "share = sectors x DRAM bytes per sector / the largest streaming bandwidth of "
            f"{loaded_where}/run{{1,2}}.csv, extra = latency - the idle latency, mean of the two runs, never falling")
    scatter_where = _relative(gpu.results("storescatter", "2026-11-25"))
    for k, (operation, rows) in enumerate(derive_scattered_stores(gpu.results("storescatter", "2026-11-25"))):
        section("pipeline.scattered_stores", [
            "Stores (and atomic adds) at random 4-byte slots of a buffer of this footprint, one per slot",
            "on average: DRAM bytes read (sector fills) and written per store during the kernel, and SM",
            "cycles per store with every SM issuing. Past L2's capacity nearly every store costs a",
            "32-byte fill and a 32-byte write-back, at a third of the streaming bandwidth.",
        ] if k == 0 else [f"... {operation}: atomic adds that return nothing (RED)"],
            [f'operation = "{operation}"',
             f"footprint_mib = [{', '.join(_fmt(r[0]) for r in rows)}]",
             f"read_bytes = [{', '.join(_fmt(r[1]) for r in rows)}]",
             f"write_bytes = [{', '.join(_fmt(r[2]) for r in rows)}]",
             f"sm_cycles = [{', '.join(_fmt(r[3]) for r in rows)}]"],
            f"{scatter_where}/ncu_run{{1,2}}.csv ({dict(SCATTER_KERNELS)[operation]}: dram__bytes_read.sum and "
            "dram__bytes_write.sum / stores; gpc__cycles_elapsed.max x SMs / stores), launches.csv; mean of the "
            "two runs", repeated=True)
    mixed_where = _relative(gpu.results("mixed"))
    for k, ((prefix, _), (write_share, curve)) in enumerate(zip(MIXED_MODES, derive_mixed(gpu.results("mixed")),
                                                                strict=False)):
        section("pipeline.dram_loaded_mixed", [
            "The same beside streams of which this share of the DRAM bytes is written: at a bandwidth,",
            "reads wait longer, and DRAM saturates lower, than beside reads alone; shares of the",
            "reading streams' peak of the same run.",
        ] if k == 0 else [f"... with {_fmt(round(write_share, 3))} of the bytes written"],
            [f"write_share = {_fmt(round(write_share, 4))}"] + curve_lines(curve),
            f"{mixed_where}/run{{1,2}}.csv (loaded,{prefix}dram_gbps_w*; loaded,{prefix}dram_latency_w*): "
            f"share = bandwidth / the largest of loaded,dram_gbps_w* of the same runs, extra = latency - the "
            "idle latency, mean of the two runs, up to the largest bandwidth, never falling", repeated=True)
    w("# Per-instruction rules, each measured by its own chain (Λ) and its own 64-warp stream (λ).")
    rules = [
        ("add.*.f32", "alu", "add_f32", "FADD"),
        ("mul.*.f32", "alu", "mul_f32", "FMUL"),
        ("fma.*.f32", "alu", "fma_f32", "FFMA"),
        ("add.*.f64", "fp64", "add_f64", "DADD"),
        ("fma.*.f64", "fp64", "fma_f64", "DFMA"),
        ("add.{s32,u32}", "alu", "add_s32",
         "IADD3; measured as pairs of dependent adds of two different values, which ptxas fuses into "
         "one IADD3, so these are per IADD3 (= per add when an add is not fused)"),
        ("mul.lo.{s32,u32}", "alu", "mul_s32", "IMAD"),
        ("mad.lo.{s32,u32}", "alu", "mad_s32", "IMAD"),
        ("cvt.*.f32.s32", "alu", "cvt_f32_s32", "I2FP.F32.S32"),
        ("cvt.*.s32.f32", "sfu", "cvt_s32_f32", "F2I.TRUNC.NTZ, quarter rate like MUFU"),
        ("cvt.f64.f32", "fp64", "cvt_f64_f32", "F2F.F64.F32, quarter rate"),
        ("sin.approx.*", "sfu", "sin_approx", "FMUL.RZ + MUFU.SIN"),
        ("cos.approx.*", "sfu", "cos_approx", "FMUL.RZ + MUFU.COS"),
        ("ex2.approx.f32", "sfu", "ex2_approx", "MUFU.EX2 (+ input scaling hoisted)"),
        ("ex2.approx.ftz.f32", "sfu", "ex2_approx_ftz", "MUFU.EX2"),
        ("rcp.approx.f32", "sfu", "rcp_approx", "FSETP/FSEL/FMUL denormal handling + MUFU.RCP"),
        ("rcp.approx.ftz.f32", "sfu", "rcp_approx_ftz", "MUFU.RCP; Λ = (rcp + add.rn.f32 chain) - add.rn.f32"),
        ("sqrt.approx.f32", "sfu", "sqrt_approx", "FSETP + 2 FMUL + MUFU.SQRT"),
        ("sqrt.approx.ftz.f32", "sfu", "sqrt_approx_ftz", "MUFU.SQRT"),
        ("rsqrt.approx.f32", "sfu", "rsqrt_approx", "FSETP + 2 FMUL + MUFU.RSQ"),
        ("rsqrt.approx.ftz.f32", "sfu", "rsqrt_approx_ftz", "MUFU.RSQ"),
        ("div.rn.f32", "sfu", "div_rn_f32", "MUFU.RCP + 5 FFMA + FCHK and a slow-path branch"),
        ("div.full.f32", "sfu", "div_full_f32", "MUFU.RCP + 4 FMUL + FSETP/FSEL"),
        ("div.rn.f64", "fp64", "div_rn_f64", "MUFU.RCP64H + 7 DFMA + DMUL and a slow-path branch"),
    ]
    half = derive_half(gpu.results('half'))
    if half:
        try:
            half_where = gpu.results('half').resolve().relative_to(ROOT).as_posix()
        except ValueError:
            half_where = gpu.results('half').as_posix()
        for k, f in half.items():
            v[k] = f.value   # set, not read: only the rules below mark them used
        rules += [
            ("fma.*.f16x2", "alu", "fma_f16x2", "HFMA2; a latency chain alternates HFMA2 and HFMA2.MMA"),
            ("add.*.f16x2", "alu", "add_f16x2", "HADD2 / HFMA2.MMA alternately"),
            ("mul.*.f16x2", "alu", "mul_f16x2", "HMUL2 / HFMA2.MMA alternately"),
            ("fma.*.bf16x2", "alu", "fma_bf16x2", "HFMA2.BF16_V2 / HFMA2.MMA.BF16_V2 alternately"),
        ]
    if tensor:
        # the λ of wmma is two HMMA.16816's: its own stream also issued ~2 register moves per
        # HMMA (ptxas copies the a/b fragment the benchmark passes twice), which a GEMM's does not
        mma_lam, mma_Lam = tensor["mma_m16n8k16_f32.lam"], tensor["mma_m16n8k16_f32.Lam"]
        wmma_Lam = tensor["wmma_f32.Lam"]
        for pattern, lam, Lam, source, sass in [
            ("mma.sync.aligned.m16n8k16.*", mma_lam.value, mma_Lam.value,
             f"measured: {tensor_where}/run{{1,2}}.csv ({mma_lam.what}; {mma_Lam.what}); mean of the two runs",
             "HMMA.16816.F32"),
            ("wmma.mma.sync.aligned.*.m16n16k16.*", 2 * mma_lam.value, wmma_Lam.value,
             f"Λ measured: {tensor_where}/run{{1,2}}.csv ({wmma_Lam.what}); λ = 2 x {mma_lam.what} "
             f"(the wmma stream itself, {tensor['wmma_f32.lam'].what} = {tensor['wmma_f32.lam'].value:.3g}, "
             "also issued two register moves per HMMA); mean of the two runs",
             "two independent HMMA.16816.F32"),
        ]:
            w("")
            w("[[instruction]]")
            w(f'pattern = "{pattern}"')
            w('unit = "tensor"')
            w(f"T = {_fmt(_T(lam))}")
            w(f"lat_comp = {_fmt(Lam)}")
            w(f"lam = {_fmt(lam)}")
            w(f"Lam = {_fmt(Lam)}")
            w(f'source = "{source}"')
            w(f'note = "SASS (sm_90, ptxas 13.0): {sass}"')
    for pattern, unit, key, sass in rules:
        lam, Lam = v[f"{key}.lam"], v[f"{key}.Lam"]
        w("")
        w("[[instruction]]")
        w(f'pattern = "{pattern}"')
        w(f'unit = "{unit}"')
        w(f"T = {_fmt(_T(lam))}")
        w(f"lat_comp = {_fmt(Lam)}")
        w(f"lam = {_fmt(lam)}")
        w(f"Lam = {_fmt(Lam)}")
        if key + ".lam" in half:
            rows = f"{half[key + '.lam'].what}; {half[key + '.Lam'].what}"
            w(f'source = "measured: {half_where}/run{{1,2}}.csv ({rows}); mean of the two runs"')
        else:
            w(f'source = "{src(key + ".lam", key + ".Lam")}"')
        w(f'note = "SASS (sm_90, ptxas 13.0): {sass}"')
    # bar.sync, shared and global memory.
    w("")
    w("[[instruction]]")
    w('pattern = "{bar,barrier}.sync.*"')
    w('unit = "barrier"')
    w(f"lam = {_fmt(v['bar.lam'])}")
    w(f"Lam = {_fmt(v['bar.32'])}")
    w(f'source = "λ {src("bar.lam")} (32 blocks of 64 threads per SM); Λ = one-warp block, {src("bar.32")}"')
    w('note = "the cost for larger blocks is [manybsp.barrier_overhead]"')
    w("")
    w("[[instruction]]")
    w('pattern = "ld.shared.*"')
    w('unit = "ldst"')
    w(f"lat_comp = {_fmt(v['ld_shared.Lam'])}")
    w(f"lam = {_fmt(v['ld_shared.lam'])}")
    w(f"Lam = {_fmt(v['ld_shared.Lam'])}")
    w(f'source = "{src("ld_shared.lam", "ld_shared.Lam")}"')
    w('note = "no bank conflict; Profile.shared_memory_lambdas adds conflicts"')
    w("")
    w("[[instruction]]")
    w('pattern = "st.shared.*"')
    w('unit = "ldst"')
    w(f"lat_comp = {_fmt(v['ld_shared.Lam'])}")
    w(f"lam = {_fmt(v['st_shared.lam'])}")
    w(f"Lam = {_fmt(v['ld_shared.Lam'])}")
    stand_in = fig["ld_shared.Lam"].what
    w(f'source = "λ {src("st_shared.lam")}; Λ: a store has no result to chain, '
      f'the ld.shared latency stands in ({stand_in})"')
    w("")
    w("[[instruction]]")
    w('pattern = "ld.global.*"')
    w('unit = "ldst"')
    w("lat_comp = 0")
    w(f"lat_comm = {_fmt(v['dram.Lam'])}")
    w(f"lam = {_fmt(v['dram_read.lam'])}")
    w(f"Lam = {_fmt(v['dram.Lam'])}")
    w(f'source = "{src("dram_read.lam", "dram.Lam")}"')
    w('note = "DRAM figures; [pipeline.memory] has the L2 ones for 001\'s mapper"')
    w("")
    w("[[instruction]]")
    w('pattern = "st.global.*"')
    w('unit = "ldst"')
    w("lat_comp = 0")
    w(f"lat_comm = {_fmt(v['dram.Lam'])}")
    w(f"lam = {_fmt(v['dram_write.lam'])}")
    w(f"Lam = {_fmt(v['dram.Lam'])}")
    stand_in = fig["dram.Lam"].what
    w(f'source = "λ {src("dram_write.lam")}; Λ: a store has no result to chain, '
      f'the DRAM load latency stands in ({stand_in})"')
    w("")
    w(SOURCES.format(
        clock=_fmt(v["sm_clock_mhz"]), where=runs,
        read=_fmt(round(v["dram_read.gbps"])), write=_fmt(round(v["dram_write.gbps"]))).rstrip("\n"))
    w(f'"device.kernel_launch_cycles" = "{launch_where}"')
    if local:
        w(f'"device.l2_cache_bytes" = "measured: {local_where}/run{{1,2}}.csv ({local["l2_bytes"].what})"')
    USED.clear()
    USED.update(v.used)
    return gpu.retarget("\n".join(out) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="?", type=Path, default=DEFAULT_RESULTS)
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--table", action="store_true", help="print the figures (run 1, run 2, difference)")
    parser.add_argument("--markdown", action="store_true", help="print the figures as a Markdown table")
    parser.add_argument("--gpu", choices=sorted(GPUS), default="h100", help="whose device figures to write")
    args = parser.parse_args(argv)
    fig = derive(args.results)
    if args.markdown:
        print("| figure | run 1 | run 2 | diff % | profile | from (rows of run*.csv) |")
        print("|---|---:|---:|---:|---:|---|")
        for f in fig.values():
            print(f"| `{f.key}` | {f.run1:.4g} | {f.run2:.4g} | {f.diff_pct:+.2f} | {f.value:g} | {f.what} |")
        return 0
    if args.table:
        for f in fig.values():
            print(f"{f.key:28s} {f.run1:12.4f} {f.run2:12.4f} {f.diff_pct:+7.2f}%  -> {f.value}")
        return 0
    args.output.write_text(render(fig, args.results, GPUS[args.gpu]), encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
