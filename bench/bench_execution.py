"""What running the sampled warps and simulating the caches costs, and what sampling loses.

    .venv/bin/python bench/bench_execution.py [--suite v2] [--limit N] [--sample-error]

For each kernel of a validation suite (its first launch configuration): the seconds the run of the
sampled blocks takes, its lane-instructions, the seconds of the run of one SM's group of blocks
(for the L1 they share), the seconds of the cache simulation at the launch's occupancy, and
whether the run fell back (and why).

``--sample-error``: on launches cut down to a grid the run can execute whole (at most 256 blocks),
the same kernel run on a sample of an eighth of its blocks against the whole grid: the error of the
sample in executed warp instructions per warp, DRAM bytes and L2 hit rate.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.analysis import analyze_kernel  # noqa: E402
from engine.caches import simulated_levels  # noqa: E402
from engine.execution import execute_launch, execute_sm_group  # noqa: E402
from engine.launch import load_launch_file  # noqa: E402
from engine.occupancy import occupancy  # noqa: E402
from engine.profiles import load_profile  # noqa: E402
from engine.ptx import load_ptx  # noqa: E402
from engine.resources import kernel_resources  # noqa: E402
from engine.validation import SUITES  # noqa: E402


def first_launches(suite: str) -> list[tuple[Path, object]]:
    root = SUITES[suite].root
    out = []
    for path in sorted(root.glob("*.launch.toml")):
        seen: set[str | None] = set()
        for launch in load_launch_file(path).launches:
            if launch.kernel not in seen:
                seen.add(launch.kernel)
                out.append((path, launch))
    return out


def _function(module: object, name: str | None) -> object:
    kernels = [f for f in module.functions if f.is_kernel]
    return next((f for f in kernels if f.name == name), kernels[0])


def resident(profile: object, module: object, function: object, launch: object) -> tuple[int, int]:
    res = kernel_resources(module, function.name, use_ptxas=False)
    smem = res.static_shared_bytes + launch.smem_dynamic
    occ = occupancy(profile, launch.threads_per_block, launch.regs_per_thread or res.registers or 32, smem)
    return max(1, occ.blocks_per_sm), smem


def cost_row(path: Path, launch: object, profile: object) -> dict:
    lf = load_launch_file(path)
    module = load_ptx(lf.ptx)
    function = _function(module, launch.kernel)
    analysis = analyze_kernel(function, launch, module)
    t0 = time.perf_counter()
    execution = execute_launch(analysis, launch, module)
    run_s = time.perf_counter() - t0
    blocks, smem = resident(profile, module, function, launch)
    per_sm = max(1, min(blocks, -(-launch.n_blocks // profile.device.sm_count)))
    t1 = time.perf_counter()
    group = execute_sm_group(analysis, launch, module, execution, profile.device.sm_count, per_sm)
    group_s = time.perf_counter() - t1
    t2 = time.perf_counter()
    levels = simulated_levels(execution, profile, per_sm, smem, sm_group=group)
    cache_s = time.perf_counter() - t2
    return {"kernel": f"{path.stem.split('.')[0]}/{launch.name}", "run_s": run_s, "cache_s": cache_s,
            "group_s": group_s, "group_blocks": group.sample.blocks if group is not None and group.sample else 0,
            "lane_instructions": execution.lane_instructions, "ok": execution.ok,
            "why": execution.stopped or "", "entries": len(execution.log.get("entry_line", ())) if execution.ok else 0,
            "dram": levels.traffic.dram_read_bytes if levels else None}


def sample_error(path: Path, launch: object, profile: object) -> dict | None:
    grid_blocks = launch.n_blocks
    if grid_blocks < 64:
        return None
    cut = min(grid_blocks, 256)
    gx = min(launch.grid[0], cut)
    gy = max(1, min(launch.grid[1], cut // gx))
    small = dataclasses.replace(launch, grid=(gx, gy, 1))
    lf = load_launch_file(path)
    module = load_ptx(lf.ptx)
    function = _function(module, launch.kernel)
    analysis = analyze_kernel(function, small, module)
    threads = small.threads_per_block
    warps = -(-threads // 32)
    whole = execute_launch(analysis, small, module, max_lanes=small.n_blocks * warps * 32)
    part = execute_launch(analysis, small, module, max_lanes=max(warps * 32, small.n_blocks * warps * 32 // 8))
    if not (whole.ok and part.ok) or part.sample is None or part.sample.whole:
        return None
    blocks, smem = resident(profile, module, function, small)
    lw = simulated_levels(whole, profile, blocks, smem)
    lp = simulated_levels(part, profile, blocks, smem)

    def per_warp(e: object) -> float:
        return float(e.executed.sum()) / max(1, len(e.paths))

    def rel(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None or not b else 100.0 * (a - b) / b

    dram_w = lw.traffic.dram_read_bytes + lw.traffic.dram_write_bytes
    dram_p = lp.traffic.dram_read_bytes + lp.traffic.dram_write_bytes
    hit_w, hit_p = lw.traffic.l2_hit_rate, lp.traffic.l2_hit_rate
    return {"kernel": f"{path.stem.split('.')[0]}/{launch.name}", "blocks": small.n_blocks,
            "sampled": part.sample.blocks, "instr_err": rel(per_warp(part), per_warp(whole)),
            "dram_err": rel(dram_p, dram_w),
            "l2_points": None if hit_w is None or hit_p is None else 100.0 * (hit_p - hit_w)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="v2", choices=sorted(SUITES))
    parser.add_argument("--profile", default="h100")
    parser.add_argument("--limit", type=int, default=0, help="first N kernels only")
    parser.add_argument("--sample-error", action="store_true")
    args = parser.parse_args()
    profile = load_profile(args.profile)
    launches = first_launches(args.suite)
    if args.limit:
        launches = launches[: args.limit]
    if args.sample_error:
        rows = [r for p, launch in launches if (r := sample_error(p, launch, profile)) is not None]
        print(f"{'kernel':48s} {'blocks':>6s} {'sampled':>7s} {'instr %':>8s} {'DRAM %':>8s} {'L2 pts':>7s}")
        for r in rows:
            def f(x: float | None) -> str:
                return "—" if x is None else f"{x:+.1f}"
            print(f"{r['kernel'][:48]:48s} {r['blocks']:6d} {r['sampled']:7d} {f(r['instr_err']):>8s} "
                  f"{f(r['dram_err']):>8s} {f(r['l2_points']):>7s}")
        for key, name in (("instr_err", "instructions per warp"), ("dram_err", "DRAM bytes"),
                          ("l2_points", "L2 hit rate (points)")):
            values = [abs(r[key]) for r in rows if r[key] is not None]
            if values:
                print(f"sample vs whole grid, {name}: mean |error| {statistics.mean(values):.1f}, "
                      f"max {max(values):.1f} over {len(values)} kernels")
        return 0
    print(f"{'kernel':48s} {'run s':>7s} {'lane-instr':>12s} {'SM group s':>10s} {'blocks':>6s} {'cache s':>8s} "
          f"{'log lines':>10s}  fell back")
    runs, groups, caches = [], [], []
    for path, launch in launches:
        r = cost_row(path, launch, profile)
        runs.append(r["run_s"])
        groups.append(r["group_s"])
        caches.append(r["cache_s"])
        print(f"{r['kernel'][:48]:48s} {r['run_s']:7.2f} {r['lane_instructions']:12,d} {r['group_s']:10.2f} "
              f"{r['group_blocks']:6d} {r['cache_s']:8.2f} {r['entries']:10,d}  {r['why'][:60]}", flush=True)
    print(f"run: median {statistics.median(runs):.2f} s, max {max(runs):.2f} s; SM group run: median "
          f"{statistics.median(groups):.2f} s, max {max(groups):.2f} s; caches: median "
          f"{statistics.median(caches):.2f} s, max {max(caches):.2f} s over {len(runs)} kernels")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
