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


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--list", help="write the launch order here (CSV)")
    parser.add_argument("--only", nargs="*", help="sample or sample/launch names")
    parser.add_argument("--repeat", type=int, default=1)
    ns = parser.parse_args()

    import cupy as cp

    # Distinct buffers per pointer position so a kernel never reads what it writes.
    buffers = [cp.zeros(BUFFER_BYTES // 4, dtype=cp.float32) for _ in range(4)]
    rows = []
    modules: dict[Path, object] = {}
    for key, ptx_path, launch in iter_launches(ns.arch, set(ns.only) if ns.only else None):
        module = load_ptx(ptx_path)
        function = module.kernel(launch.kernel)
        raw = modules.get(ptx_path)
        if raw is None:
            raw = cp.RawModule(path=str(ptx_path))
            modules[ptx_path] = raw
        kernel = raw.get_function(function.name)
        if launch.smem_dynamic > 48 * 1024:
            kernel.max_dynamic_shared_size_bytes = launch.smem_dynamic
        args = kernel_arguments(cp, function, launch, buffers)
        for repeat in range(ns.repeat):
            kernel(launch.grid, launch.block, args, shared_mem=launch.smem_dynamic)
            cp.cuda.runtime.deviceSynchronize()
            rows.append({"order": len(rows), "key": key, "repeat": repeat, "kernel": function.name,
                         "grid": "x".join(map(str, launch.grid)), "block": "x".join(map(str, launch.block)),
                         "smem_dynamic": launch.smem_dynamic, "regs_func_attr": kernel.num_regs,
                         "static_smem_func_attr": kernel.shared_size_bytes})
        print(f"launched {key} ({function.name}) x{ns.repeat}", file=sys.stderr)
    if ns.list:
        with open(ns.list, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
