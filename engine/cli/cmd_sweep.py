"""``sweep``: every model across occupancies (resident blocks per SM)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from engine.cli.command_registry import Command
from engine.cli.evaluating import evaluate_options
from engine.cli.options import add_input_options, emit, inputs_from_args, parse_range
from engine.errors import WarplineError
from engine.evaluation.caveats import figure_caveats
from engine.evaluation.occupancy_sweep import describe_sweep, sweep_csv, sweep_rows
from engine.evaluation.registry import title
from engine.state import POLICIES


def add_sweep_points(parser: argparse.ArgumentParser, prefix: str = "") -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(f"--{prefix}blocks", metavar="A:B[:STEP]",
                       help="resident blocks per SM to evaluate (default: 1 to as many as fit)")
    group.add_argument(f"--{prefix}warps", metavar="A:B[:STEP]",
                       help="resident warps per SM instead (whole blocks are used; the rest is reported)")


def sweep_points(ns: argparse.Namespace, prefix: str = "") -> dict[str, Any]:
    blocks = getattr(ns, f"{prefix}blocks".replace("-", "_"))
    warps = getattr(ns, f"{prefix}warps".replace("-", "_"))
    return {"sweep_blocks": parse_range(blocks, f"--{prefix}blocks") if blocks else None,
            "sweep_warps": parse_range(warps, f"--{prefix}warps") if warps else None}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_options(parser)
    add_sweep_points(parser)
    parser.add_argument("--policy", choices=POLICIES, default="lrr", help="warp scheduler of the simulation")
    parser.add_argument("--csv", help="write the curves here (kernel cycles per model)")


def run(ns: argparse.Namespace, renderer: Any = None) -> int:
    inputs = inputs_from_args(ns)
    ev = evaluate_options(ns, inputs, sweep=True, trace=False, **sweep_points(ns))
    sweep = ev.sweep
    if sweep is None:
        raise WarplineError("sweep: " + ("; ".join(f"{k}: {v}" for k, v in ev.errors.items()) or "nothing to sweep"))
    if ns.csv:
        sweep_csv(sweep, ns.csv, figure_caveats(ev).csv_header)
        print(f"wrote {ns.csv}", file=sys.stderr)
    header, rows = sweep_rows(sweep)
    ids = [h.removesuffix("_kernel_cycles") for h in header[2:]]
    text = [f"{inputs.kernel_name} on {ev.profile.name if ev.profile else '?'}: kernel cycles "
            f"(SM cycles + {ev.launch_cycles:,.0f} launch cost) by resident blocks per SM",
            "blocks  warps  " + "  ".join(f"{title(i)[:13]:>13}" for i in ids)]
    for row in rows:
        cells = "  ".join(f"{v:>13,.1f}" if isinstance(v, float) else f"{'—':>13}" for v in row[2:])
        text.append(f"{row[0]:>6}  {row[1]:>5}  {cells}")
    if not rows:
        text.append("(no occupancy to evaluate)")
    for line in describe_sweep(sweep):
        text.append(f"note: {line}")
    payload = {"kernel": inputs.kernel_name, "profile": ev.profile.name if ev.profile else None,
               "launch_cycles": ev.launch_cycles, "columns": header, "rows": rows,
               "notes": describe_sweep(sweep)}
    emit(ns, payload, "\n".join(text))
    return 0


COMMAND = Command("sweep", "every model across occupancies (resident blocks per SM)", add_arguments, run)
