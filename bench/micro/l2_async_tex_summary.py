"""Figures of the L2 / texture microbenchmark (bench/micro/l2_async_tex.cu) from its ncu CSV.

    python3 bench/micro/l2_async_tex_summary.py RESULTS_FOLDER

The folder holds ``ncu.csv`` (Nsight Compute's CSV, one row per launch and metric) and
``launches.csv`` (the program's list of launches, in the order ncu saw them). Per launch it
prints the GPU cycles and either the bytes per cycle per SM (the L2 kernels; ``lts``: what L2
served) or the SM cycles per warp fetch with the texture f-wavefronts per fetch (the L1 kernels).
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

SMS = 132   # the H100 SXM5's SMs (the lent machine's GPU)


def _metrics(path: Path) -> dict[int, dict[str, float]]:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith('"')]
    rows = list(csv.reader(lines))
    index = {name: k for k, name in enumerate(rows[0])}
    out: dict[int, dict[str, float]] = {}
    for row in rows[1:]:
        value = float(row[index["Metric Value"]].replace(",", ""))
        out.setdefault(int(row[index["ID"]]), {})[row[index["Metric Name"]]] = value
    return out


def _line(kernel: str, amount: float, m: dict[str, float]) -> str:
    cycles = m["gpc__cycles_elapsed.max"]
    if "l2" in kernel or "window" in kernel or kernel == "warm":
        served = m["lts__t_bytes.sum"]
        return (f"{kernel} {cycles:.0f}  {amount / SMS / cycles:.1f} B/clk/SM (lts {served / SMS / cycles:.1f}, "
                f"lts bytes/requested {served / amount:.2f})")
    fetches = max(1.0, m["sm__inst_executed_pipe_tex.sum"])
    return (f"{kernel} {cycles:.0f}  {cycles * SMS / amount:.2f} clk/SM per warp fetch; "
            f"fwav/inst {m['l1tex__f_wavefronts.sum'] / fetches:.2f} hit {m['l1tex__t_sector_hit_rate.pct']:.0f}")


def main(folder: str) -> None:
    base = Path(folder)
    launches = list(csv.DictReader((base / "launches.csv").open(encoding="utf-8")))
    for launch_id, m in sorted(_metrics(base / "ncu.csv").items()):
        launch = launches[launch_id]
        print(_line(launch["kernel"], float(launch["bytes_or_fetches"]), m))


if __name__ == "__main__":
    main(sys.argv[1])
