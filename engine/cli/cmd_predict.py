"""``predict``: every model's figures for one kernel launch (or the models named by --model)."""

from __future__ import annotations

import argparse
import copy
import sys
from typing import Any

from engine.cli.command_registry import Command
from engine.cli.evaluating import evaluate_options
from engine.cli.options import ALL_KERNELS, add_input_options, add_model_options, emit, inputs_from_args, kernel_names
from engine.errors import WarplineError
from engine.evaluation.prediction_report import predictions_csv, predictions_payload, predictions_text
from engine.evaluation.registry import model_ids, models
from engine.evaluation.verdict import explain

# The assumptions' effects re-evaluate the kernel once per assumed input; a command-line user
# waits for them, so by default they run only while that re-evaluates at most this many PTX
# instructions in all (the window runs them in the background instead). A larger kernel says its
# effects were not evaluated, and why.
EFFECTS_MAX_INSTRUCTIONS = 100_000


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
    effects = parser.add_mutually_exclusive_group()
    effects.add_argument("--no-effects", action="store_true",
                         help="list the assumed inputs without re-running the headline model with each "
                              "one's alternative (faster)")
    effects.add_argument("--effects", action="store_true",
                         help="evaluate every assumed input's alternative however long it takes (by default "
                              "they are skipped, and say so, past "
                              f"{EFFECTS_MAX_INSTRUCTIONS:,} re-evaluated PTX instructions)")
    parser.add_argument("--explain", action="store_true",
                        help="add the bottleneck verdict: what limits the kernel, with each unit's "
                             "utilisation and the warp-cycles per stall cause (from the simulation)")
    parser.add_argument("--source-counters", metavar="CSV",
                        help="Nsight Compute source page (ncu --page source --csv, SASS or CUDA view): its "
                             "samples and stall reasons per line beside the predicted warp-cycles, the largest "
                             "disagreements first")
    parser.add_argument("--lines", type=int, default=15, metavar="N",
                        help="--source-counters: how many of the largest disagreements to list (default 15)")
    parser.add_argument("--roofline", choices=("auto", "flop", "instruction"), nargs="?", const="auto",
                        help="add the roofline: work per byte at L1, L2 and DRAM against the profile's ceilings, "
                             "the bound named (work: FLOP, warp instructions, or auto)")


def run(ns: argparse.Namespace, renderer: Any = None) -> int:
    if ns.kernel != ALL_KERNELS:
        payload, text = _predict(ns)
        emit(ns, payload, text)
        return 0
    if ns.csv or ns.import_ncu:
        raise WarplineError(f"--kernel {ALL_KERNELS}: --csv and --import-ncu name one kernel's figures; "
                            "give --kernel NAME")
    payloads, texts = [], []
    for name in kernel_names(ns.file):
        one = copy.copy(ns)
        one.kernel = name
        payload, text = _predict(one)
        payloads.append(payload)
        texts.append(text)
        ns._told_profile = getattr(one, "_told_profile", False)
    emit(ns, {"file": ns.file, "kernels": payloads}, "\n\n".join(texts))
    return 0


def _predict(ns: argparse.Namespace) -> tuple[dict[str, Any], str]:
    inputs = inputs_from_args(ns)
    chosen = None if not ns.model or "all" in ns.model else list(dict.fromkeys(ns.model))
    if ns.derivation and chosen is not None and "manybsp" not in chosen:
        chosen.append("manybsp")
    if (ns.explain or ns.roofline or ns.source_counters) and chosen is not None and "pipeline" not in chosen:
        chosen.append("pipeline")      # the verdict reads the simulation's aggregates
    if chosen is not None and not ns.no_effects and not any(m in chosen for m in ("pipeline", "manybsp")):
        chosen.append("pipeline")      # the effects are measured on the headline figure
    measured_lines = None
    if ns.source_counters:
        from engine.ncu_source import load_source_csv

        measured_lines = load_source_csv(ns.source_counters)     # refused before any model runs
    ev = evaluate_options(ns, inputs, announce=False, only=chosen, trace=measured_lines is not None,
                          effects=not ns.no_effects,
                          effects_max_instructions=None if getattr(ns, "effects", False) else EFFECTS_MAX_INSTRUCTIONS)
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
    if measured_lines is not None:
        comparisons = source_comparisons(ev, inputs, measured_lines)
        payload["source_counters"] = [c.as_dict(limit=ns.lines) for c in comparisons]
        text += "".join("\n" + c.text(ns.lines) for c in comparisons)
    if ns.roofline:
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
        from engine.evaluation.provenance import comment_lines

        predictions_csv(ev, ns.csv, comments=comment_lines(ev, inputs.path))
        print(f"wrote {ns.csv}", file=sys.stderr)
    return payload, text


def source_comparisons(ev: Any, inputs: Any, views: list) -> list:
    """Each measured table of the kernel (SASS or source view) against the evaluation's prediction."""
    from engine.evaluation.source_counters import compare_sass, compare_source, views_for
    from engine.ncu_source import VIEW_SASS
    from engine.sass import SassUnavailable, sass_listing, sass_map

    out = []
    for view in views_for(views, inputs.kernel_name):
        if view.view != VIEW_SASS:
            out.append(compare_source(ev, view))
            continue
        arch = ev.profile.device.sm_version if ev.profile is not None else None
        listing = sass_listing(inputs.path, inputs.kernel_name, arch, module=inputs.module)
        smap = sass_map(inputs.path, inputs.kernel_name, arch, module=inputs.module)
        if isinstance(listing, SassUnavailable) or isinstance(smap, SassUnavailable):
            raise WarplineError(f"the SASS view needs the kernel's SASS: {listing.reason if isinstance(listing, SassUnavailable) else smap.reason}")  # noqa: E501
        out.append(compare_sass(ev, listing, smap.positions, view))
    return out


COMMAND = Command("predict", "every model's predicted cycles (SM cycles, kernel cycles with the launch cost, µs)",
                  add_arguments, run)
