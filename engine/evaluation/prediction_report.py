"""The predictions of an evaluation as JSON-ready data, as text and as CSV: one view, three forms,
the same names and numbers (:mod:`engine.evaluation.figures`) in each."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from engine.evaluation.caveats import figure_caveats
from engine.evaluation.core import Evaluation
from engine.evaluation.figures import FIGURE_TITLES
from engine.evaluation.registry import model as model_spec
from engine.fileio import csv_safe, csv_text
from engine.manybsp.device_figures import manybsp_figures
from engine.names import display_name


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def predictions_payload(ev: Evaluation, measured_kernel_cycles: float | None = None) -> dict[str, Any]:
    """Every model's figures, keyed by model id, plus what they were computed for."""
    state = ev.state
    launch = state.launch
    caveats = figure_caveats(ev)
    out: dict[str, Any] = {
        "caveats": caveats.as_dict(),
        "kernel": state.kernel,
        "kernel_display": display_name(state.kernel),
        "profile": ev.profile.name if ev.profile is not None else state.profile,
        "clock_mhz": ev.clock_mhz,
        "launch": {"grid": list(launch.grid), "block": list(launch.block), "smem_dynamic": launch.smem_dynamic,
                   "source": ev.launch_source},
        "resident_blocks": ev.resident_blocks,
        "max_resident_blocks": ev.max_blocks,
        "policy": state.policy,
        "launch_cycles": ev.launch_cycles,
        "figures": dict(FIGURE_TITLES),
        "models": {},
        "errors": dict(ev.errors),
        "warnings": list(ev.warnings),
    }
    for model_id, result in ev.models.items():
        spec = model_spec(model_id)
        entry: dict[str, Any] = {"title": spec.title, "family": spec.family}
        if result.figures is not None:
            entry.update({k: _finite(v) for k, v in result.figures.as_dict().items()})
        else:
            entry.update({k: None for k in FIGURE_TITLES})
        entry["note"] = result.note
        entry["error"] = result.error or None
        entry["rests_on_assumptions"] = caveats.guessed and result.figures is not None
        if measured_kernel_cycles is not None:
            entry["error_percent"] = result.error_percent(measured_kernel_cycles)
        out["models"][model_id] = entry
    if measured_kernel_cycles is not None:
        out["measured_kernel_cycles"] = measured_kernel_cycles
    out["assumptions"] = assumptions_payload(ev)
    out["supplied_arguments"] = supplied_payload(ev)
    if ev.traffic is not None:
        out["memory_traffic"] = ev.traffic.as_dict()
    if ev.dram_under_load is not None:
        # the DRAM load the simulation was solved at (engine.pipeline.dram_under_load)
        out["loaded_dram"] = ev.dram_under_load.to_json()
    if ev.manybsp is not None:
        out["manybsp_derivation"] = [_quantity(q) for q in ev.manybsp.prediction.quantities.values()]
    if ev.profile is not None and ev.profile.manybsp is None:
        # The profile states no Many-BSP figures: each one used (or missing), with its provenance.
        figures = manybsp_figures(ev.profile)
        out["manybsp_parameters_derived"] = [
            {"name": d.key, "kind": d.kind, "value": figures.value_text(d.key), "provenance": d.provenance}
            for d in figures.derivation]
    for model_id, result in ev.models.items():
        if result.details.get("derivation"):
            out["models"][model_id]["derivation"] = [_quantity(q) for q in result.details["derivation"]]
    return out


def assumptions_payload(ev: Any) -> list[dict[str, Any]]:
    """Every guessed input with its effect on the headline figure (None until part
    ``assumptions`` has run)."""
    return [a.as_dict(ev.effects.get(a.key)) for a in ev.assumptions]


def supplied_payload(ev: Any) -> list[dict[str, Any]]:
    """Every argument value the launch did not give, exact or guessed, with its rule."""
    completion = ev.completion
    if completion is None:
        return []
    return [{"index": v.index, "parameter": v.label, "value": v.value, "how": v.how, "certain": v.certain,
             "rule": v.rule} for v in completion.supplied]


def assumptions_lines(ev: Any, effects: bool = True) -> list[str]:
    """The text form of :func:`assumptions_payload`, for ``predict`` and ``info``."""
    if not ev.assumptions:
        return ["  assumptions: none (every input the models read is given or follows from the PTX)"]
    lines = [f"  assumptions ({len(ev.assumptions)}: inputs the launch does not give; give them to remove the guess):"]
    for a in ev.assumptions:
        lines.append(f"    [{a.kind}] {a.subject}: {a.assumed}")
        lines.append(f"        why: {a.rule}")
        for detail in a.details if len(a.details) > 1 else ():
            lines.append(f"          {detail}")
        if a.alternative is not None and effects:
            effect = ev.effects.get(a.key)
            moved = effect.text() if effect is not None else "not evaluated (see predict)"
            lines.append(f"        if {a.alternative.description}: {moved}")
        lines.append(f"        give it: {a.fill.option}")
    return lines


def _derived_parameter_lines(ev: Evaluation) -> list[str]:
    """The Many-BSP figures that a profile without a [manybsp] section does not state, marked."""
    if ev.profile is None or ev.profile.manybsp is not None:
        return []
    figures = manybsp_figures(ev.profile)
    return [f"    {d.key:<20} {figures.value_text(d.key):>14}   {d.kind}: {d.provenance}"
            for d in figures.derivation]


def _quantity(q: Any) -> dict[str, Any]:
    return {"name": q.name, "value": q.value, "exact": q.exact, "equation": q.equation, "formula": q.formula}


def predictions_text(ev: Evaluation, measured_kernel_cycles: float | None = None,
                     derivation: bool = False) -> str:
    state = ev.state
    launch = state.launch
    profile = ev.profile.name if ev.profile is not None else state.profile
    caveats = figure_caveats(ev)
    lines = [caveats.first_line()] if caveats.first_line() else []
    lines += [f"{display_name(state.kernel)} on {profile}: grid {launch.grid} block {launch.block}, "
             f"{ev.resident_blocks} resident blocks/SM, {state.policy}",
             f"  launch: {ev.launch_source}",
             f"  kernel cycles = SM cycles + launch cost ({ev.launch_cycles:,.0f} cycles, profile "
             f"device.kernel_launch_cycles); µs at {ev.clock_mhz:g} MHz"]
    head = f"  {'model':<22} {'SM cycles':>14} {'kernel cycles':>14} {'µs':>11}"
    if measured_kernel_cycles is not None:
        head += f" {'error':>9}"
        lines.append(f"  measured: {measured_kernel_cycles:,.0f} kernel cycles (Nsight Compute)")
    lines.append(head)
    for model_id, result in ev.models.items():
        name = model_spec(model_id).title
        if result.figures is None:
            lines.append(f"  {name:<22} {'—':>14} {'—':>14} {'—':>11}  {result.error}")
            continue
        f = result.figures
        us = f.microseconds
        row = (f"  {name:<22} {caveats.mark(_cycles(f.sm_cycles)):>14} {caveats.mark(_cycles(f.kernel_cycles)):>14} "
               f"{(caveats.mark(f'{us:,.3f}') if us is not None else '—'):>11}")
        if measured_kernel_cycles is not None:
            err = result.error_percent(measured_kernel_cycles)
            row += f" {(f'{err:+.1f} %' if err is not None else '—'):>9}"
        if result.note:
            row += f"  {result.note}"
        lines.append(row)
    if ev.traffic is not None:
        lines.append("  " + ev.traffic.summary())
    for stage, message in ev.errors.items():
        lines.append(f"  error [{stage}]: {message}")
    for warning in ev.warnings:
        lines.append(f"  warning: {warning}")
    lines.extend(assumptions_lines(ev, effects="assumptions" in ev.parts))
    if derivation:
        shown = ([("Many-BSP", ev.manybsp.prediction.quantities.values())]
                 if ev.manybsp is not None and not ev.manybsp.refused else [])
        shown += [(model_spec(model_id).title, result.details["derivation"])
                  for model_id, result in ev.models.items() if result.details.get("derivation")]
        if ev.manybsp is not None and (ev.manybsp.refused or _derived_parameter_lines(ev)):
            lines.append("  Many-BSP parameters:")
            lines.extend(_derived_parameter_lines(ev))
            if ev.manybsp.refused:
                lines.append(f"    no equations: {ev.manybsp.refused}")
        for title, quantities in shown:
            lines.append(f"  {title} derivation:")
            for q in quantities:
                lines.append(f"    {q.name:<20} {q.value:>14,.6g}   {q.equation}: {q.formula}")
    return "\n".join(lines)


def _cycles(value: float) -> str:
    return f"{value:,.1f}" if math.isfinite(value) else "inf"


PREDICTION_COLUMNS = ("model", "title", "family", "sm_cycles", "launch_cycles", "kernel_cycles",
                      "microseconds", "note", "error")


def predictions_csv(ev: Evaluation, path: str | None = None, comments: Sequence[str] = ()) -> str:
    """One row per model, figures rounded to what they mean (0.1 cycle, 0.001 µs); the figure
    columns' headers say so when the figures rest on assumed inputs; ``comments``: lines before
    the header (:func:`engine.evaluation.provenance.comment_lines`)."""
    rows = [[("" if value is None else csv_safe(value)) for value in record.values()]
            for record in prediction_records(ev)]
    caveats = figure_caveats(ev)
    columns = [caveats.csv_header(c) if c in FIGURE_TITLES and c != "launch_cycles" else c
               for c in PREDICTION_COLUMNS]
    return csv_text(columns, rows, path, comments)


def prediction_records(ev: Evaluation) -> list[dict[str, Any]]:
    """One dict per model with the CSV's columns (:data:`PREDICTION_COLUMNS`; None for no figure):
    what the CSV and the Python API's table hold."""
    out = []
    for model_id, result in ev.models.items():
        spec = model_spec(model_id)
        values = result.figures.as_dict(rounded=True) if result.figures is not None else {}
        out.append({"model": model_id, "title": spec.title, "family": spec.family,
                    **{k: values.get(k) for k in ("sm_cycles", "launch_cycles", "kernel_cycles", "microseconds")},
                    "note": result.note, "error": result.error})
    return out
