"""``predict``: every model's figures for one kernel launch (or the models named by --model)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from engine.cli.evaluating import evaluate_options
from engine.cli.options import add_input_options, add_model_options, emit, inputs_from_args
from engine.cli.registry import Command
from engine.evaluation.registry import model_ids, models
from engine.evaluation.report import predictions_csv, predictions_payload, predictions_text
from engine.evaluation.verdict import explain


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_options(parser)
    add_model_options(parser)
    listing = "; ".join(f"{m.id}: {m.title}" for m in models())
    parser.add_argument("--model", action="append", choices=[*model_ids(), "all"], metavar="MODEL",
                        help=f"model to run (repeatable; default all): {listing}")
    parser.add_argument("--derivation", action="store_true", help="print every Many-BSP intermediate")
    parser.add_argument("--import-ncu", metavar="CSV",
                        help="Nsight Compute CSV with gpc__cycles_elapsed.max: adds each model's error")
    parser.add_argument("--csv", help="also write the predictions as CSV")
    parser.add_argument("--explain", action="store_true",
                        help="add the bottleneck verdict: what limits the kernel, with each unit's "
                             "utilisation and the warp-cycles per stall cause (from the simulation)")
    parser.add_argument("--roofline", choices=("auto", "flop", "instruction"), nargs="?", const="auto",
                        help="add the roofline: work per byte at L1, L2 and DRAM against the profile's ceilings, "
                             "the bound named (work: FLOP, warp instructions, or auto)")


def run(ns: argparse.Namespace, renderer: Any = None) -> int:
    inputs = inputs_from_args(ns)
    chosen = None if not ns.model or "all" in ns.model else list(dict.fromkeys(ns.model))
    if ns.derivation and chosen is not None and "manybsp" not in chosen:
        chosen.append("manybsp")
    if (ns.explain or ns.roofline) and chosen is not None and "pipeline" not in chosen:
        chosen.append("pipeline")      # the verdict reads the simulation's aggregates
    ev = evaluate_options(ns, inputs, only=chosen, trace=False)
    measured = None
    if ns.import_ncu:
        from engine.ncu import measured_cycles

        measured = measured_cycles(ns.import_ncu, inputs.kernel_name, inputs.launch.grid, inputs.launch.block)
    payload = {"file": str(inputs.path), "profile_source": inputs.profile_source,
               **predictions_payload(ev, measured)}
    text = predictions_text(ev, measured, derivation=ns.derivation)
    if ns.explain:
        verdict = explain(ev)
        if verdict is None:
            reason = ev.errors.get("simulation", "the simulation did not run")
            payload["explain"] = {"error": reason}
            text += f"\nBottleneck: no verdict ({reason})"
        else:
            payload["explain"] = verdict.as_dict()
            text += "\n" + verdict.text()
    if ns.roofline:
        from engine.errors import WarplineError
        from engine.evaluation.roofline import roofline

        try:
            chart = roofline(ev, None if ns.roofline == "auto" else ns.roofline)
        except WarplineError as exc:
            payload["roofline"] = {"error": str(exc)}
            text += f"\nRoofline: {exc}"
        else:
            payload["roofline"] = chart.as_dict()
            text += "\n" + chart.text()
    if ns.csv:
        predictions_csv(ev, ns.csv)
        print(f"wrote {ns.csv}", file=sys.stderr)
    emit(ns, payload, text)
    return 0


COMMAND = Command("predict", "every model's predicted cycles (SM cycles, kernel cycles with the launch cost, µs)",
                  add_arguments, run)
