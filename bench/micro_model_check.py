"""The simulator on its own microbenchmarks: ``l2_kinds.cu`` (random 4-byte gathers, own-slice
reads, RED, ATOM, stores, and a gather beside a RED, over buffers of 8-96 MB; measured on the
H100 with Nsight Compute, bench/micro/results/h100-2026-11-28-l2-kinds-schedulers/l2kinds)
predicted launch by launch from its PTX (``bench/micro/ptx/l2_kinds.sm_90.ptx``, nvcc 13 -O3).

    .venv/bin/python bench/micro_model_check.py [--kinds gather,red] [--sizes 8,64]

Prints per launch the measured and predicted kernel cycles (gpc__cycles_elapsed.max against the
Pipeline simulation's SM cycles plus launch cost), DRAM bytes and L2 hit rate, and the MAPE of the
cycles per kind. The measured launch is each pair's second (L2 warm from the first, as ncu ran
with cache control off); the model starts from a cold L2, which matters only where L2 holds the
buffer (8-24 MB: a few MB of first touches). Nothing here is fitted to these launches.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine import api  # noqa: E402

RESULTS = ROOT / "bench" / "micro" / "results" / "h100-2026-11-28-l2-kinds-schedulers" / "l2kinds"
PTX = ROOT / "bench" / "micro" / "ptx" / "l2_kinds.sm_90.ptx"
KERNELS = {"gather": "_Z8k_gatherPKfjjPf", "own": "_Z5k_ownPKfjjPf", "red": "_Z5k_redPfjj",
           "atom": "_Z6k_atomPjjjS_", "store": "_Z7k_storePfjj", "mixed": "_Z7k_mixedPKfPfjj"}
SEEDS = {"gather": 1000, "own": 1500, "red": 2000, "atom": 3000, "store": 4000, "mixed": 5000}


def measured() -> list[dict[str, float | str]]:
    """The measured launches (second of each pair) with their Nsight Compute metrics."""
    lines = [line for line in (RESULTS / "ncu.csv").read_text(encoding="utf-8").splitlines() if line.startswith('"')]
    metrics: dict[int, dict[str, float]] = defaultdict(dict)
    for row in csv.DictReader(lines):
        metrics[int(row["ID"])][row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
    out: list[dict[str, float | str]] = []
    for launch in csv.DictReader((RESULTS / "launches.csv").read_text(encoding="utf-8").splitlines()):
        k = int(launch["launch"])
        if launch["role"] != "measured" or k not in metrics:
            continue
        m = metrics[k]
        out.append({"kernel": launch["kernel"], "mb": int(launch["size_mb"]), "grid": int(launch["grid"]),
                    "block": int(launch["block"]), "cycles": m["gpc__cycles_elapsed.max"],
                    "dram": m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"],
                    "l2_hit": m["lts__t_sector_hit_rate.pct"]})
    return out


def arguments(kind: str, mb: int, grid: int) -> dict[int, int]:
    """The scalar arguments the program passed (l2_kinds.cu's main), by parameter index."""
    n = (mb << 20) // 4
    seed = SEEDS[kind] * mb + 1                  # the measured launch is rep 1
    if kind == "own":
        return {1: n // grid, 2: seed}
    if kind == "mixed":
        return {2: n // 2, 3: seed}
    return {1: n, 2: seed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default="", help="comma-separated kernels (default: all)")
    parser.add_argument("--sizes", default="", help="comma-separated buffer sizes in MB (default: all)")
    parser.add_argument("--profile", default="h100")
    args = parser.parse_args(argv)
    kinds = set(filter(None, args.kinds.split(",")))
    sizes = {int(s) for s in args.sizes.split(",") if s}
    errors: dict[str, list[float]] = defaultdict(list)
    print(f"{'kernel':7s} {'MB':>3s} {'cycles meas':>12s} {'pred':>12s} {'err':>7s}  "
          f"{'DRAM MB meas':>12s} {'pred':>8s}  {'L2 hit meas':>11s} {'pred':>5s}")
    for m in measured():
        kind, mb = str(m["kernel"]), int(m["mb"])
        if (kinds and kind not in kinds) or (sizes and mb not in sizes):
            continue
        kernel = api.open(PTX, KERNELS[kind], profile=args.profile, grid=int(m["grid"]), block=int(m["block"]),
                          args=arguments(kind, mb, int(m["grid"])))
        ev = kernel.evaluate(models=["pipeline"])
        cycles = ev.models["pipeline"].kernel_cycles
        traffic = ev.traffic
        dram = (traffic.dram_read_bytes + traffic.dram_write_bytes) if traffic is not None else float("nan")
        hit = 100.0 * traffic.l2_hit_rate if traffic is not None and traffic.l2_hit_rate is not None else float("nan")
        err = 100.0 * (cycles - float(m["cycles"])) / float(m["cycles"]) if cycles else float("nan")
        errors[kind].append(abs(err))
        print(f"{kind:7s} {mb:3d} {float(m['cycles']):12,.0f} {cycles or 0:12,.0f} {err:+6.1f}%  "
              f"{float(m['dram']) / 1e6:12.1f} {dram / 1e6:8.1f}  {float(m['l2_hit']):11.1f} {hit:5.1f}")
    for kind, values in errors.items():
        print(f"{kind}: cycle MAPE {statistics.mean(values):.1f} % over {len(values)} sizes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
