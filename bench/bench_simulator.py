"""Pipeline-model simulator throughput: simulated warp instructions per second on one core.

Kernel: the tiled matrix multiply of samples/ptx/mm.sm_90.ptx (launch ``tile16-1024``, H100
profile, full occupancy) through the PTX front end; ``--synthetic`` (or a missing front end) uses
engine.pipeline.examples.tiled_mm_kernel instead. Three sizes (blocks on the SM) with the trace
recorded show the cost is linear in the work; a trace-free run of ~50 M warp instructions shows
memory stays bounded; the plain reference simulator of the tests gives the speed ratio.

Rates are simulated warp instructions per CPU second (``time.process_time``, so time lost to
other processes on a loaded machine is not counted; wall figures are printed beside them). Each
size runs ``--repeat`` times and the median is kept, since a shared machine's speed wanders; the
load average before and after is printed so that figures can be compared.

Memory is warmed first. On a virtual machine the first touch of fresh memory is slow (about
2 ms per MB on our CI VM, against 0.05 ms once the guest holds the pages), and a traced run of 2 M
instructions writes 100 MB of trace rows, so a cold process measures the host's page allocation,
not the simulator. The window runs simulation after simulation in one process and pays this once;
the first (cold) run of the largest traced size is printed beside the warm figures. The 50 M
run lifts the instruction budget (``Limits(None)``): with the default budget the simulator would
sample whole waves and extrapolate, which measures the sampling, not the simulator.

Run: ``.venv/bin/python bench/bench_simulator.py [--synthetic] [--quick] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.pipeline.description import KernelDescription  # noqa: E402
from engine.pipeline.examples import tiled_mm_kernel  # noqa: E402
from engine.pipeline.simulator import Limits, limits, simulate  # noqa: E402

TARGET = 10e6  # warp instructions per second


def mm_description(synthetic: bool) -> tuple[KernelDescription, str]:
    if not synthetic:
        try:
            from engine.launch import load_launch_file
            from engine.pipeline import describe_kernel
            from engine.profiles import load_profile
            from engine.ptx import load_ptx

            module = load_ptx(ROOT / "samples" / "ptx" / "mm.sm_90.ptx")
            launch = next(x for x in load_launch_file(ROOT / "samples" / "mm.launch.toml").launches
                          if x.name == "tile16-1024")
            return describe_kernel(module, launch.kernel, load_profile("h100"), launch), \
                "samples/ptx/mm.sm_90.ptx tile16-1024 on h100"
        except Exception as exc:  # the PTX front end is optional for this benchmark
            print(f"(PTX front end unavailable: {exc}; using the synthetic kernel)")
    return tiled_mm_kernel(64, blocks=32, resident_blocks=8), "synthetic tiled mm (64 tiles)"


def timed(d: KernelDescription, trace: bool, repeat: int = 1) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, instructions) of one simulation; the median of ``repeat`` runs."""
    walls, cpus, n = [], [], 0
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        r = simulate(d, trace=trace)
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
        n = r.instructions_issued
    return statistics.median(walls), statistics.median(cpus), n


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synthetic", action="store_true", help="use the synthetic mm kernel")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, no 50 M run")
    parser.add_argument("--repeat", type=int, default=3, help="runs per size (the median is kept)")
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {load()} (before)")

    d, label = mm_description(args.synthetic)
    per_block = d.total_warp_instructions() // d.blocks
    print(f"kernel: {label}; {len(d.instructions)} static instructions, {d.warps_per_block} warps/block, "
          f"{d.resident_blocks} resident blocks, IL {d.issue_limit}, {d.ticks_per_cycle()} ticks/cycle")
    simulate(d.with_changes(blocks=1), trace=True)  # compile / load the cached machine code

    sizes = [8, 16, 32] if args.quick else [16, 32, 64]
    wall, cpu, n = timed(d.with_changes(blocks=sizes[-1]), trace=True)
    print(f"first traced run of {sizes[-1]} blocks (cold memory, not counted): {wall:.3f} s wall, "
          f"{n / cpu / 1e6:.2f} M instr/s (cpu)")
    print(f"\nmedian of {args.repeat} runs    blocks   warp instrs     wall s    cpu s   M instr/s (wall, cpu)")
    print("with trace")
    rates = []
    for blocks in sizes:
        wall, cpu, n = timed(d.with_changes(blocks=blocks), trace=True, repeat=args.repeat)
        rates.append(n / cpu)
        print(f"{'':18s} {blocks:7d} {n:13,d} {wall:10.3f} {cpu:8.3f}   {n / wall / 1e6:6.2f}, {n / cpu / 1e6:6.2f}")
    wall, cpu, n = timed(d.with_changes(blocks=sizes[-1]), trace=False, repeat=args.repeat)
    print(f"trace-free         {sizes[-1]:7d} {n:13,d} {wall:10.3f} {cpu:8.3f}   "
          f"{n / wall / 1e6:6.2f}, {n / cpu / 1e6:6.2f}")

    # the plain reference simulator of the tests, on a small share of the same kernel
    from tests.sim_oracle import run_oracle

    small = d.with_changes(blocks=min(2, d.blocks), resident_blocks=min(2, d.resident_blocks))
    c0 = time.process_time()
    run_oracle(small)
    oracle_cpu = time.process_time() - c0
    _, cpu_small, n_small = timed(small, trace=True, repeat=args.repeat)
    print(f"\noracle (tests/sim_oracle.py) on {n_small:,d} warp instructions: {oracle_cpu:.2f} s cpu, "
          f"{n_small / oracle_cpu / 1e3:.1f} k instr/s; engine {n_small / cpu_small / 1e6:.2f} M/s "
          f"-> {oracle_cpu / cpu_small:.0f}x faster")

    if not args.quick:
        target = 50_000_000
        big = d.with_changes(blocks=max(1, target // per_block))
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        with limits(Limits(None)):       # every block simulated, none extrapolated
            wall, cpu, n = timed(big, trace=False)
        rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(f"\n50 M run, trace-free: {n:,d} warp instructions in {wall:.1f} s wall / {cpu:.1f} s cpu "
              f"({n / cpu / 1e6:.2f} M/s); peak RSS {rss0 / 1024:.0f} -> {rss1 / 1024:.0f} MiB")

    typical = statistics.median(rates)
    spread = max(rates) / min(rates)
    print(f"\nlinear in work: rate spread across sizes {spread:.2f}x; median {typical / 1e6:.2f}, "
          f"slowest {min(rates) / 1e6:.2f} M instr/s (cpu)")
    print(("PASS" if typical >= TARGET else "BELOW TARGET") + f": target {TARGET / 1e6:.0f} M warp instructions/s "
          "(traced, cpu, median over the sizes)")
    print(f"{load()} (after)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
