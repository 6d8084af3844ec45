"""CLI sub-commands around the simulator: ``sweep``, ``trace`` and ``export``."""

from __future__ import annotations

import argparse
import csv
import io
import sys
from typing import Any

from engine.cli import _EXTENSIONS, add_input_options, command, emit, inputs_from_args
from engine.cli_models import _require_launch
from engine.errors import WarplineError
from engine.inputs import KernelInputs


def parse_range(text: str) -> list[int]:
    """``1:64`` -> 1..64, ``8:64:8`` -> 8, 16, ..., 64, ``4`` -> [4]."""
    parts = text.split(":")
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        raise WarplineError(f"--occupancy {text!r}: expected A:B[:STEP] or N (integers)") from None
    if len(numbers) == 1:
        numbers = [numbers[0], numbers[0]]
    bad_step = len(numbers) == 3 and numbers[2] < 1
    if len(numbers) not in (2, 3) or numbers[0] < 1 or numbers[1] < numbers[0] or bad_step:
        raise WarplineError(f"--occupancy {text!r}: expected A:B[:STEP] with 1 <= A <= B and STEP >= 1")
    step = numbers[2] if len(numbers) == 3 else 1
    return list(range(numbers[0], numbers[1] + 1, step))


def describe(inputs: KernelInputs, ns: argparse.Namespace):
    from engine.pipeline import describe_kernel

    _require_launch(inputs)
    return describe_kernel(inputs.module, inputs.kernel_name, inputs.profile, inputs.launch,
                           occupancy=getattr(ns, "occupancy_blocks", None))


def sweep_table(inputs: KernelInputs, warps: list[int], policy: str = "lrr") -> list[dict[str, Any]]:
    """One row per occupancy (warps): each model's warps per cycle and kernel cycles."""
    from engine.pipeline import occupancy_sweep

    ns = argparse.Namespace(occupancy_blocks=None)
    d = describe(inputs, ns)
    limit = d.warps_per_block * max(d.resident_blocks, 1)
    curves = occupancy_sweep(d, warps, policy=policy)
    work = d.blocks * d.warps_per_block   # warps that run on the SM in the kernel
    rows = []
    for i, used in enumerate(curves["occupancy"]):
        row: dict[str, Any] = {"occupancy_warps": int(used), "resident_blocks": int(used) // d.warps_per_block,
                               "requested_warps": warps[i], "beyond_launch_limit": int(used) > limit}
        for model, values in curves.items():
            if model == "occupancy":
                continue
            wpc = float(values[i])
            row[f"{model}_wpc"] = wpc
            row[f"{model}_cycles"] = inputs.profile.kernel_cycles(work / wpc) if wpc > 0 else None
        rows.append(row)
    return rows


@command("sweep")
def cmd_sweep(ns: argparse.Namespace) -> int:
    inputs = inputs_from_args(ns, needs_profile=True)
    rows = sweep_table(inputs, parse_range(ns.occupancy), ns.policy)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    if ns.csv:
        with open(ns.csv, "w", newline="", encoding="utf-8") as handle:
            handle.write(buffer.getvalue())
        print(f"wrote {ns.csv}", file=sys.stderr)
    models = [k[:-4] for k in rows[0] if k.endswith("_wpc")]
    text = ["warps  blocks  " + "  ".join(f"{m[:12]:>12}" for m in models) + "   (kernel cycles)"]
    for row in rows:
        cells = "  ".join(f"{row[m + '_cycles']:>12,.0f}" if row[m + "_cycles"] else f"{'—':>12}" for m in models)
        text.append(f"{row['occupancy_warps']:>5}  {row['resident_blocks']:>6}  {cells}")
    emit(ns, {"kernel": inputs.kernel_name, "rows": rows}, "\n".join(text))
    return 0


def simulate_inputs(inputs: KernelInputs, ns: argparse.Namespace, trace: bool = True):
    from engine.pipeline import simulate_kernel

    _require_launch(inputs)
    return simulate_kernel(inputs.module, inputs.kernel_name, inputs.profile, inputs.launch,
                           occupancy=ns.occupancy_blocks, policy=ns.policy, trace=trace,
                           cycle_budget=ns.cycle_budget)


def _names_and_units(result) -> tuple[list[str], list[str]]:
    d = result.description
    return [x.name for x in d.instructions], [d.subsystems[x.unit] for x in d.instructions]


@command("trace")
def cmd_trace(ns: argparse.Namespace) -> int:
    from engine.timeline import export_chrome_trace, export_trace_csv

    if not ns.csv and not ns.chrome_trace:
        raise WarplineError("trace: give --csv OUT.csv and/or --chrome-trace OUT.json")
    inputs = inputs_from_args(ns, needs_profile=True)
    result = simulate_inputs(inputs, ns)
    names, _ = _names_and_units(result)
    subsystems = list(result.description.subsystems)
    if ns.csv:
        export_trace_csv(result.trace, ns.csv, names, subsystems)
    if ns.chrome_trace:
        export_chrome_trace(result.trace, ns.chrome_trace, names, subsystems)
    summary = {
        "kernel": inputs.kernel_name, "cycles": float(result.cycles),
        "instructions_issued": result.instructions_issued, "stopped_early": result.stopped_early,
        "issue_rows": int(len(result.trace.issues)), "stall_rows": int(len(result.trace.stalls)),
        "trace_truncated": result.trace.truncated,
        "stall_cycles": result.aggregates.stall_cycles, "utilisation": result.aggregates.utilisation,
    }
    text = (f"{inputs.kernel_name}: {float(result.cycles):,.1f} cycles on one SM, "
            f"{result.instructions_issued:,} warp instructions, {summary['issue_rows']:,} issue rows, "
            f"{summary['stall_rows']:,} stall rows")
    if result.stopped_early:
        text += " (stopped early: cycle budget)"
    for path in (ns.csv, ns.chrome_trace):
        if path:
            text += f"\nwrote {path}"
    emit(ns, summary, text)
    return 0


@command("export")
def cmd_export(ns: argparse.Namespace) -> int:
    from engine.manybsp import export_block_table, export_supersteps
    from engine.timeline import export_trace_csv

    if not any((ns.png, ns.csv, ns.block_csv, ns.supersteps_csv, ns.curves_csv)):
        raise WarplineError("export: give at least one of --png, --csv, --block-csv, --supersteps-csv, --curves-csv")
    inputs = inputs_from_args(ns, needs_profile=True)
    written: list[str] = []
    if ns.png or ns.csv:
        result = simulate_inputs(inputs, ns)
        names, units = _names_and_units(result)
        subsystems = list(result.description.subsystems)
        if ns.csv:
            export_trace_csv(result.trace, ns.csv, names, subsystems)
            written.append(ns.csv)
        if ns.png:
            from gui.gantt.export_png import render_trace_png

            render_trace_png(result.trace, names, units, float(result.cycles), ns.png, width=ns.width,
                             height=ns.height, subsystems=subsystems, color_mode=ns.color)
            written.append(ns.png)
    if ns.block_csv or ns.supersteps_csv:
        from engine.cli_models import manybsp_result

        mb = manybsp_result(inputs)
        if ns.block_csv:
            export_block_table(mb.block, ns.block_csv)
            written.append(ns.block_csv)
        if ns.supersteps_csv:
            export_supersteps(mb.level1, ns.supersteps_csv)
            written.append(ns.supersteps_csv)
    if ns.curves_csv:
        rows = sweep_table(inputs, parse_range(ns.curve_occupancy), ns.policy)
        with open(ns.curves_csv, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        written.append(ns.curves_csv)
    emit(ns, {"written": written}, "\n".join(f"wrote {p}" for p in written))
    return 0


def _add_sim_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy", choices=("lrr", "gto"), default="lrr", help="warp scheduler")
    parser.add_argument("--occupancy-blocks", type=int, help="resident blocks per SM (default: the calculator's)")
    parser.add_argument("--cycle-budget", type=float, help="stop the simulation after this many cycles")


def _register(sub: Any) -> None:
    sweep = sub.add_parser("sweep", help="every model across occupancies (warps per SM)")
    add_input_options(sweep)
    sweep.add_argument("--occupancy", default="1:64", help="resident warps A:B[:STEP] (default 1:64)")
    sweep.add_argument("--policy", choices=("lrr", "gto"), default="lrr")
    sweep.add_argument("--csv", help="write the curves here")
    trace = sub.add_parser("trace", help="simulate and write the execution trace")
    add_input_options(trace)
    _add_sim_options(trace)
    trace.add_argument("--csv", help="events and stalls as CSV")
    trace.add_argument("--chrome-trace", help="Trace Event Format JSON (opens in Perfetto)")
    export = sub.add_parser("export", help="timeline PNG/CSV and the Many-BSP tables, headless")
    add_input_options(export)
    _add_sim_options(export)
    export.add_argument("--png", help="Gantt chart of the simulated SM")
    export.add_argument("--width", type=int, default=1600)
    export.add_argument("--height", type=int, default=900)
    export.add_argument("--color", choices=("warp", "class"), default="class")
    export.add_argument("--csv", help="timeline events and stalls as CSV")
    export.add_argument("--block-csv", help="Many-BSP BLOCK table as CSV")
    export.add_argument("--supersteps-csv", help="Many-BSP supersteps as CSV")
    export.add_argument("--curves-csv", help="occupancy curves of every model as CSV")
    export.add_argument("--curve-occupancy", default="1:64", help="warps A:B[:STEP] for --curves-csv")


_EXTENSIONS.append(_register)
