"""Benchmark: BLOCK table + supersteps + equations for a synthetic 2,000-instruction kernel.

Target: < 50 ms per full evaluation. Prints the median of several runs.
Run: ``.venv/bin/python bench/bench_manybsp.py``
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.manybsp import InstructionRow, Level1Spec, ManyBspParams, run_manybsp  # noqa: E402

N = 2000


def synthetic_rows(n: int = N, seed: int = 1) -> list[InstructionRow]:
    """A kernel-like mix: mostly SP arithmetic with short def-use chains, shared and global
    accesses, some SFU/DPU work, a barrier every 200 rows."""
    rng = random.Random(seed)
    rows = []
    for i in range(1, n + 1):
        kind = rng.random()
        if i % 200 == 0:
            rows.append(InstructionRow(i, "bar.sync 0;", "bar.sync", None, 0, 0, 0, 173, 0, True, False,
                                       0, 0, 0))
            continue
        producers = tuple(sorted({max(1, i - rng.randint(1, 6)) for _ in range(rng.randint(0, 2))}))
        if kind < 0.05:
            fu, T, lat, comm, glob, n_ma, op = 4, 16, 0, 400, True, 1, "ld.global.f32"
        elif kind < 0.20:
            fu, T, lat, comm, glob, n_ma, op = 4, 16, 30, 0, False, 1, "ld.shared.f32"
        elif kind < 0.25:
            fu, T, lat, comm, glob, n_ma, op = 3, 8, 40, 0, False, 0, "rcp.rn.f32"
        elif kind < 0.28:
            fu, T, lat, comm, glob, n_ma, op = 2, 4, 20, 0, False, 0, "fma.rn.f64"
        else:
            fu, T, lat, comm, glob, n_ma, op = 1, 32, 6, 0, False, 0, "fma.rn.f32"
        rows.append(InstructionRow(i, op, op, fu, 32, T, n_ma, lat, comm, False, glob, 0, 0, 0,
                                   producers=producers))
    return rows


def main() -> None:
    rows = synthetic_rows()
    params = ManyBspParams(n_b=4096, n_t=256, n_SM=80, n_ws=4, warp_size=32, issue_cycle=1, mem_lat=400,
                           warp_lnch_ovh=10, block_lnch_ovh=400, mu=3.0, l_c=1900, l_m=100,
                           max_thread_per_sm=2048, n_reg=65536, reg_per_thread=32, shmem_size=49152,
                           shmem_per_block=4096)
    specs = [Level1Spec(1, 600, 1), Level1Spec(601, 1800, 8), Level1Spec(1801, N, 1)]
    run_manybsp(rows, params, specs)  # warm-up
    times = []
    for _ in range(15):
        t0 = time.perf_counter()
        result = run_manybsp(rows, params, specs)
        times.append((time.perf_counter() - t0) * 1000)
    median = statistics.median(times)
    print(f"Many-BSP, {N} instructions, {len(result.level2)} level-2 supersteps: "
          f"median {median:.1f} ms (min {min(times):.1f} ms), target < 50 ms -> "
          f"{'OK' if median < 50 else 'SLOW'}; kernel_exec_cycle = {result.kernel_exec_cycle:.0f}")


if __name__ == "__main__":
    main()
