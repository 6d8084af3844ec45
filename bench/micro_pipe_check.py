"""The simulator on ``bench/micro/pipe_schedulers.cu`` (MUFU, DFMA, HMMA and FFMA chains run by
every warp of a block or by warp 0 alone, blocks of 1, 2 and 4 warps; measured on the H200 with
Nsight Compute, bench/micro/results/h200-2026-11-29-pipe-schedulers), predicted launch by launch
from its PTX (``bench/micro/ptx/pipe_schedulers.sm_90.ptx``, nvcc 13 -O3).

    .venv/bin/python bench/micro_pipe_check.py [--profile h200]

Prints per launch the measured cycles (``gpc__cycles_elapsed.max`` of the first of its four
launches) and the Pipeline model's kernel cycles, and per pipe the ratio of "warp 0 only" to
"every warp" with 2-warp blocks, measured and predicted: about 2 where each scheduler has its own
pipe (docs/microbenchmarks.md, "Arithmetic pipes per scheduler"). Nothing is fitted to these.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine import api  # noqa: E402
from engine.ncu import parse_ncu_csv  # noqa: E402

RESULTS = ROOT / "bench" / "micro" / "results" / "h200-2026-11-29-pipe-schedulers"
PTX = ROOT / "bench" / "micro" / "ptx" / "pipe_schedulers.sm_90.ptx"
PIPES = {"mufu_rsq": 0, "dfma": 1, "hmma_16816_f32": 2, "ffma": 3}


def launches() -> list[dict[str, str]]:
    """The program's launches in order (pipe, warps per block, mode, blocks, iterations)."""
    rows = []
    for line in (RESULTS / "pipe_schedulers.csv").read_text(encoding="utf-8").splitlines():
        cells = line.split(",")
        if cells[0] == "pipe":
            rows.append(dict(zip(cells[0::2], cells[1::2], strict=False)))
    return rows


def measured_cycles() -> list[float]:
    """``gpc__cycles_elapsed.max`` of every profiled launch, in launch order (four per row); the
    program's own output, which ncu interleaves, is left out of the table."""
    path = RESULTS / "ncu.csv"
    table = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith('"'))
    return [float(launch.cycles or "nan") for launch in parse_ncu_csv(table, str(path))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="h200")
    args = parser.parse_args(argv)
    cycles = measured_cycles()
    table: dict[tuple[str, int, str], tuple[float, float]] = {}
    print(f"{'pipe':15s} {'wpb':>3s} {'mode':10s} {'measured':>10s} {'predicted':>10s} {'err':>7s}")
    for n, row in enumerate(launches()):
        pipe, wpb, mode = row["pipe"], int(row["wpb"]), row["mode"]
        name = f"_Z6k_pipeILi{PIPES[pipe]}ELb{1 if mode == 'warp0_only' else 0}EEvPfi"
        kernel = api.open(PTX, name, profile=args.profile, grid=int(row["blocks"]), block=32 * wpb,
                          args={1: int(row["iters"])})
        predicted = kernel.evaluate(models=["pipeline"]).models["pipeline"].kernel_cycles or float("nan")
        real = cycles[4 * n]
        table[(pipe, wpb, mode)] = (real, predicted)
        error = 100 * (predicted - real) / real
        print(f"{pipe:15s} {wpb:3d} {mode:10s} {real:10,.0f} {predicted:10,.0f} {error:+6.1f}%")
    print("warp 0 only / every warp, 2-warp blocks:")
    for pipe in PIPES:
        (m1, p1), (m0, p0) = table[(pipe, 2, "warp0_only")], table[(pipe, 2, "even")]
        print(f"  {pipe:15s} measured {m1 / m0:.2f}  predicted {p1 / p0:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
