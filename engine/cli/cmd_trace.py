"""``trace``: the simulated execution trace as CSV (events and stalls) and Trace Event JSON."""

from __future__ import annotations

import argparse
from typing import Any

from engine.cli.command_registry import Command
from engine.cli.evaluating import evaluate_options
from engine.cli.options import add_input_options, add_model_options, emit, inputs_from_args
from engine.errors import WarplineError
from engine.evaluation.caveats import figure_caveats


def add_simulation_options(parser: argparse.ArgumentParser) -> None:
    add_model_options(parser)
    parser.add_argument("--cycle-budget", type=_budget, help="stop the simulation after this many cycles")


def _budget(text: str) -> float:
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text} must be a positive, finite number of cycles")
    return value


def simulated(ns: argparse.Namespace, inputs: Any) -> Any:
    """The evaluation with its simulation trace; an error when the simulation could not run."""
    ev = evaluate_options(ns, inputs, only=["pipeline"], trace=True, cycle_budget=ns.cycle_budget)
    if ev.simulation is None or ev.simulation.trace is None:
        raise WarplineError(ev.models["pipeline"].error or "the simulation did not run")
    return ev


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_options(parser)
    add_simulation_options(parser)
    parser.add_argument("--csv", help="events and stalls as CSV")
    parser.add_argument("--chrome-trace", help="Trace Event Format JSON (opens in Perfetto)")


def run(ns: argparse.Namespace, renderer: Any = None) -> int:
    from engine.evaluation.provenance import comment_lines
    from engine.timeline.chrome_export import export_chrome_trace
    from engine.timeline.csv_export import export_trace_csv

    if not ns.csv and not ns.chrome_trace:
        raise WarplineError("trace: give --csv OUT.csv and/or --chrome-trace OUT.json")
    inputs = inputs_from_args(ns)
    ev = simulated(ns, inputs)
    sim = ev.simulation
    if ns.csv:
        export_trace_csv(sim.trace, ns.csv, ev.trace_names, ev.trace_units, figure_caveats(ev).csv_header,
                         header=comment_lines(ev, inputs.path))
    if ns.chrome_trace:
        export_chrome_trace(sim.trace, ns.chrome_trace, ev.trace_names, ev.trace_units)
    figures = ev.models["pipeline"].figures
    summary = {
        "kernel": inputs.kernel_name,
        **(figures.as_dict() if figures is not None else {}),
        "instructions_issued": sim.instructions_issued, "stopped_early": sim.stopped_early,
        "issue_rows": int(len(sim.trace.issues)), "stall_rows": int(len(sim.trace.stalls)),
        "trace_truncated": sim.trace.truncated,
        "stall_cycles": sim.aggregates.stall_cycles, "utilisation": sim.aggregates.utilisation,
    }
    text = (f"{inputs.kernel_name}: {float(sim.cycles):,.1f} SM cycles"
            + (f" ({figures.kernel_cycles:,.1f} kernel cycles with the launch cost)" if figures else "")
            + f", {sim.instructions_issued:,} warp instructions, {summary['issue_rows']:,} issue rows, "
            f"{summary['stall_rows']:,} stall rows")
    if sim.stopped_early:
        text += " (stopped early: cycle budget)"
    for path in (ns.csv, ns.chrome_trace):
        if path:
            text += f"\nwrote {path}"
    emit(ns, summary, text)
    return 0


COMMAND = Command("trace", "simulate and write the execution trace", add_arguments, run)
