"""What the compiler conventions and the rule for unknown inputs give on issue 31's two kernels.

    python bench/bench_assumptions.py [--profile h100] [--effects]

numba's axpy (``tests/corpus/numba/axpy.cc90.lineinfo.ptx``): the Pipeline simulation's kernel
cycles without any ``--arg`` against the run with the strides given (the target: within 10 %).
Triton's fp16 matmul (``tests/corpus/triton/matmul.cc90.ptx``): its global accesses with a
pattern, the launch's DRAM and L2 bytes, and the values supplied. ``--effects`` also times the
effects (each assumption's alternative re-run). Printed with the load average it ran at.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.evaluation import Evaluator  # noqa: E402
from engine.inputs import resolve_inputs  # noqa: E402

AXPY = ROOT / "tests" / "corpus" / "numba" / "axpy.cc90.lineinfo.ptx"
MATMUL = ROOT / "tests" / "corpus" / "triton" / "matmul.cc90.ptx"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="h100")
    parser.add_argument("--effects", action="store_true", help="also time the effects of the assumptions")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; profile {args.profile}")
    evaluator = Evaluator()

    guessed = resolve_inputs(AXPY, profile=args.profile)
    n = guessed.launch.n_threads
    given = resolve_inputs(AXPY, profile=args.profile, args={6: 4, 14: 4, 21: 4, 5: n, 13: n, 20: n})
    a = evaluator.evaluate(guessed, only=["pipeline"], trace=False)
    b = evaluator.evaluate(given, only=["pipeline"], trace=False)
    ka, kb = a.models["pipeline"].figures.kernel_cycles, b.models["pipeline"].figures.kernel_cycles
    print(f"numba axpy: {ka:,.1f} kernel cycles without --arg, {kb:,.1f} with the strides and shapes given "
          f"({100 * (ka - kb) / kb:+.1f} %); DRAM read {a.traffic.dram_read_bytes / 1e6:.1f} MB vs "
          f"{b.traffic.dram_read_bytes / 1e6:.1f} MB; {len(a.assumptions)} assumptions")

    inputs = resolve_inputs(MATMUL, profile=args.profile)
    start = time.perf_counter()
    ev = evaluator.evaluate(inputs, only=["pipeline"], trace=False)
    seconds = time.perf_counter() - start
    accesses = [x for x in ev.memory.accesses if x.space.value == "global"]
    counted = [x for x in accesses if x.sectors_per_request is not None]
    t = ev.traffic
    print(f"Triton matmul: {len(counted)} of {len(accesses)} global accesses with a pattern; DRAM read "
          f"{t.dram_read_bytes / 1e6:.1f} MB, L2 {t.l2_bytes / 1e6:.1f} MB; "
          f"{ev.models['pipeline'].figures.kernel_cycles:,.0f} kernel cycles; evaluated in {seconds:.1f} s")
    print("  supplied: " + ", ".join(f"{v.index}={v.value} ({v.how})" for v in ev.completion.supplied))
    if args.effects:
        start = time.perf_counter()
        done = evaluator.assumption_effects(inputs, ev)
        print(f"  effects of {len(done.effects)} assumptions in {time.perf_counter() - start:.1f} s: "
              + "; ".join(f"{k}: {e.text()}" for k, e in done.effects.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
