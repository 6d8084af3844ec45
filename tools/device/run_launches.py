"""Launch every sample configuration on a real GPU (run on the lent device machine, under ncu).

    ncu --clock-control none --csv --metrics <...> python3 tools/device/run_launches.py [--list OUT.csv]

Loads each sample's sm_90 PTX through CuPy (the driver JIT-compiles it), allocates zeroed device
buffers for pointer parameters, passes the launch file's scalar arguments with the PTX parameter
types, and launches. ``--list`` writes which launch is which (ncu numbers them in order), so the
measurements can be joined back to ``samples/<name>.launch.toml`` configurations.

Uses only the engine's PTX parser and launch-file reader (no Qt, no networkx needed).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from engine.launch import load_launch_file  # noqa: E402
from engine.ptx import load_ptx  # noqa: E402

BUFFER_BYTES = 1 << 30  # every pointer parameter gets 1 GiB of zeros: enough for all samples

SCALAR_TYPES = {
    "u8": "uint8", "s8": "int8", "b8": "uint8",
    "u16": "uint16", "s16": "int16", "b16": "uint16",
    "u32": "uint32", "s32": "int32", "b32": "uint32",
    "u64": "uint64", "s64": "int64", "b64": "uint64",
    "f32": "float32", "f64": "float64",
}


def iter_launches(arch: str, only: set[str] | None):
    for launch_path in sorted((ROOT / "samples").glob("*.launch.toml")):
        sample = launch_path.name.removesuffix(".launch.toml")
        lf = load_launch_file(launch_path)
        ptx_path = ROOT / "samples" / "ptx" / f"{sample}.{arch}.ptx"
        if not ptx_path.exists():
            continue
        for launch in lf.launches:
            key = f"{sample}/{launch.name}"
            if only and key not in only and sample not in only:
                continue
            yield key, ptx_path, launch


def kernel_arguments(cp, function, launch, buffers):
    args = []
    for index, param in enumerate(function.params):
        value = launch.args.get(index, launch.args.get(param.name))
        dtype = SCALAR_TYPES.get(param.type)
        if value is None and param.type in ("u64", "b64", "s64"):
            args.append(buffers[len(args) % len(buffers)])
            continue
        if value is None:
            value = 0
        if dtype is None:
            raise SystemExit(f"{function.name}: parameter {param.name} of type {param.type} unsupported")
        import numpy as np
        args.append(np.array(value, dtype=dtype)[()])
    return tuple(args)


_DRIVER_ERROR_SHOWN = False


def blocks_per_sm(cp, kernel, launch, smem: int) -> int:
    """The driver's occupancy figure for this launch (-1 if the API is unavailable)."""
    global _DRIVER_ERROR_SHOWN
    threads = launch.block[0] * launch.block[1] * launch.block[2]
    try:
        function = getattr(kernel, "kernel", kernel)  # RawKernel wraps the driver Function
        return int(cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(function.ptr, threads, smem))
    except Exception as exc:  # noqa: BLE001 - record "unknown" and say why, once
        if not _DRIVER_ERROR_SHOWN:
            print(f"driver occupancy API unavailable: {exc!r}", file=sys.stderr)
            _DRIVER_ERROR_SHOWN = True
        return -1


def occupancy_variants(kernel, launch, profile) -> list[tuple[str, int]]:
    """Dynamic shared-memory sizes that cut resident blocks per SM to about 1/2 and 1/4.

    Sized with Warpline's own calculator; ncu then reports what the hardware did, so the
    calculator is checked on shared-memory-limited launches too."""
    from engine.occupancy import occupancy

    threads = launch.block[0] * launch.block[1] * launch.block[2]
    static = kernel.shared_size_bytes

    def blocks(dynamic: int) -> int:
        return occupancy(profile, threads, kernel.num_regs, static + dynamic).blocks_per_sm

    natural = blocks(launch.smem_dynamic)
    limit = profile.device.max_smem_per_block_any - static
    out: list[tuple[str, int]] = []
    for target in sorted({natural // 2, natural // 4} - {0, natural}, reverse=True):
        # The smallest dynamic size (in 1 KB steps) that brings the figure down to the target.
        dynamic = next((d for d in range(1024, limit + 1, 1024) if blocks(d) <= target), None)
        if dynamic is not None and blocks(dynamic) >= 1:
            out.append((f"{launch.name}@smem={dynamic}", dynamic))
    return out


def _cubin_with_lines(ptx_path: Path, arch: str) -> Path:
    """``ptx_path`` assembled by ptxas with its line table, in a temporary folder."""
    import subprocess
    import tempfile

    cubin = Path(tempfile.mkdtemp(prefix="lineinfo.")) / (ptx_path.stem + ".cubin")
    subprocess.run(["ptxas", "-lineinfo", f"-arch={arch}", str(ptx_path), "-o", str(cubin)], check=True)
    return cubin


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--list", help="write the launch order here (CSV)")
    parser.add_argument("--only", nargs="*", help="sample or sample/launch names")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--profile", default="h100", help="profile used to size occupancy variants")
    parser.add_argument("--variants", action="store_true",
                        help="also run each launch with dynamic shared memory that halves and quarters "
                             "its resident blocks per SM (occupancy-limited configurations)")
    parser.add_argument("--per-sm", default="",
                        help="comma-separated blocks per SM (e.g. 1,2,4,8): run each one-dimensional "
                             "launch again with a grid of that many blocks per SM, never more blocks "
                             "than the launch itself has (the block-overlap measurement of Many-BSP*)")
    parser.add_argument("--lineinfo", action="store_true",
                        help="assemble each PTX with ptxas -lineinfo and load the cubin (the driver's JIT "
                             "keeps no line table, so Nsight Compute's CUDA source view would have no counts)")
    ns = parser.parse_args()

    import cupy as cp

    # Distinct buffers per pointer position so a kernel never reads what it writes.
    from engine.profiles import load_profile

    profile = load_profile(ns.profile)
    buffers = [cp.zeros(BUFFER_BYTES // 4, dtype=cp.float32) for _ in range(4)]
    rows = []
    modules: dict[Path, object] = {}
    for key, ptx_path, launch in iter_launches(ns.arch, set(ns.only) if ns.only else None):
        module = load_ptx(ptx_path)
        function = module.kernel(launch.kernel)
        raw = modules.get(ptx_path)
        if raw is None:
            raw = cp.RawModule(path=str(_cubin_with_lines(ptx_path, ns.arch) if ns.lineinfo else ptx_path))
            modules[ptx_path] = raw
        kernel = raw.get_function(function.name)
        if launch.smem_dynamic > 48 * 1024:
            kernel.max_dynamic_shared_size_bytes = launch.smem_dynamic
        args = kernel_arguments(cp, function, launch, buffers)
        configs = [(key, launch.smem_dynamic)]
        if ns.variants:
            sample = key.split("/")[0]
            configs += [(f"{sample}/{name}", smem) for name, smem in occupancy_variants(kernel, launch, profile)]
        grids = [(config_key, smem, launch.grid) for config_key, smem in configs]
        if ns.per_sm:
            sms = cp.cuda.Device().attributes["MultiProcessorCount"]
            one_d = launch.grid[1] == launch.grid[2] == 1
            # Only 1-D grids, and never more blocks than the launch has: every block then indexes
            # data the full launch indexes too (no out-of-range address can appear).
            grids = [(f"{key}@per_sm={k}", launch.smem_dynamic, (sms * k, 1, 1))
                     for k in (int(x) for x in ns.per_sm.split(",")) if one_d and sms * k <= launch.grid[0]]
        for config_key, smem, grid in grids:
            if smem > 48 * 1024:
                kernel.max_dynamic_shared_size_bytes = smem
            for repeat in range(ns.repeat):
                kernel(grid, launch.block, args, shared_mem=smem)
                cp.cuda.runtime.deviceSynchronize()
                rows.append({"order": len(rows), "key": config_key, "repeat": repeat, "kernel": function.name,
                             "grid": "x".join(map(str, grid)),
                             "block": "x".join(map(str, launch.block)),
                             "smem_dynamic": smem, "regs_func_attr": kernel.num_regs,
                             "static_smem_func_attr": kernel.shared_size_bytes,
                             "blocks_per_sm_driver": blocks_per_sm(cp, kernel, launch, smem)})
            print(f"launched {config_key} ({function.name}) x{ns.repeat}", file=sys.stderr)
    if ns.list:
        with open(ns.list, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
