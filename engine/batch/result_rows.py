"""The result row: its columns, their types, and how an evaluation fills them.

One row per (file, kernel, launch, profile, model). Input columns say what ran (the launch as
resolved: a default launch shows its real grid), figure columns are the evaluation core's
(rounded as every CSV of Warpline: cycles to 0.1, µs to 0.001), and ``status``/``message`` say
whether the model gave a figure and, if not, why in one line.

The evaluation has no bottleneck verdict of its own, so the bottleneck columns come from the
Pipeline simulation's aggregates (filled only when the ``pipeline`` model is among the models):
``bottleneck`` is the stall cause with the most warp-cycles (of memory_dependency,
compute_dependency, barrier, subsystem_busy, issue_limit; waiting to become resident and idling
after the end are consequences, not causes, and are left out), ``bottleneck_share`` its share of
those stalled warp-cycles, ``busiest_subsystem`` the subsystem with the highest utilisation and
``busiest_utilisation`` that utilisation (busy cycles / total cycles).
"""

from __future__ import annotations

import math
from typing import Any

from engine.evaluation import Evaluation
from engine.launch import Launch

COLUMN_TYPES: dict[str, str] = {
    "file": "str", "kernel": "str", "launch": "str", "grid": "str", "block": "str",
    "smem_dynamic": "int", "registers": "int", "args": "str", "trips": "str",
    "occupancy": "int", "resident_blocks": "int", "policy": "str", "profile": "str", "model": "str",
    "sm_cycles": "float", "launch_cycles": "float", "kernel_cycles": "float", "microseconds": "float",
    "bottleneck": "str", "bottleneck_share": "float", "busiest_subsystem": "str", "busiest_utilisation": "float",
    "status": "str", "message": "str",
}
COLUMNS: tuple[str, ...] = tuple(COLUMN_TYPES)
STATUS_OK = "ok"
STATUS_ERROR = "error"

# Stall causes that explain time (engine.pipeline.trace.STALL_CAUSES less the two that are not).
CAUSES = ("memory_dependency", "compute_dependency", "barrier", "subsystem_busy", "issue_limit")
SHARE_DIGITS = 3


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def dim_text(dim: tuple[int, int, int] | None) -> str:
    return "" if dim is None else ",".join(str(v) for v in dim)


def args_text(args: dict[str | int, int | float]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(args.items(), key=lambda kv: (isinstance(kv[0], str), str(kv[0]))))


def empty_row(**values: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    for name in COLUMNS:
        if COLUMN_TYPES[name] == "str":
            row[name] = ""
    row.update(values)
    return row


def launch_columns(launch: Launch | None, occupancy: int | None) -> dict[str, Any]:
    if launch is None:
        return {"occupancy": occupancy}
    return {"launch": launch.name, "grid": dim_text(launch.grid), "block": dim_text(launch.block),
            "smem_dynamic": launch.smem_dynamic, "args": args_text(launch.args),
            "trips": " ".join(f"{k}={v}" for k, v in sorted(launch.trip_overrides.items())),
            "occupancy": occupancy}


def bottleneck_columns(ev: Evaluation) -> dict[str, Any]:
    sim = ev.simulation
    if sim is None:
        return {}
    out: dict[str, Any] = {}
    stalls = {cause: float(sim.aggregates.stall_cycles.get(cause, 0.0)) for cause in CAUSES}
    total = sum(stalls.values())
    if total > 0:
        cause = max(CAUSES, key=lambda c: stalls[c])    # ties: the first in CAUSES order
        out.update(bottleneck=cause, bottleneck_share=round(stalls[cause] / total, SHARE_DIGITS))
    else:
        out.update(bottleneck="none", bottleneck_share=0.0)
    busy = {unit: float(u) for unit, u in sim.aggregates.utilisation.items() if math.isfinite(float(u))}
    if busy:
        unit = max(busy, key=lambda name: busy[name])
        out.update(busiest_subsystem=unit, busiest_utilisation=round(busy[unit], SHARE_DIGITS))
    return out


def evaluation_rows(base: dict[str, Any], ev: Evaluation, models: tuple[str, ...]) -> list[dict[str, Any]]:
    """One row per model of a finished evaluation; ``base`` holds the input columns."""
    shared = dict(base)
    shared["resident_blocks"] = ev.resident_blocks or None
    shared.update(bottleneck_columns(ev))
    warnings = [one_line(w) for w in ev.warnings]
    rows = []
    for model_id in models:
        result = ev.models.get(model_id)
        row = empty_row(**shared, model=model_id)
        if result is None or result.figures is None:
            why = result.error if result is not None else "; ".join(ev.errors.values()) or "no figure"
            row.update(status=STATUS_ERROR, message=one_line(why))
        elif not math.isfinite(result.figures.sm_cycles):
            row.update(status=STATUS_ERROR, message=f"the model's cycles are not finite ({result.figures.sm_cycles})")
        else:
            figures = result.figures.as_dict(rounded=True)
            row.update({k: _finite(v) for k, v in figures.items()})
            row.update(status=STATUS_OK, message="; ".join([one_line(result.note), *warnings]).strip("; "))
        rows.append(row)
    return rows


def _finite(value: float | None) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None
