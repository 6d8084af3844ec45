"""What a batch says about its rows: the best launch per kernel and GPU, and per kernel the
predicted cycles against the parameter the batch swept (the data of ``--plot``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.batch.result_rows import COLUMN_TYPES, STATUS_OK
from engine.names import display_name

# Input columns that a batch varies, in the order in which one is chosen as a plot's x axis.
SWEPT = ("grid", "block", "smem_dynamic", "args", "trips", "occupancy", "launch")
LAUNCH_COLUMNS = ("launch", "grid", "block", "smem_dynamic", "args", "trips", "occupancy", "resident_blocks")
BEST_COLUMNS = ("file", "kernel", "profile", "model", *LAUNCH_COLUMNS, "kernel_cycles", "microseconds",
                "launches")
BEST_TYPES = {**COLUMN_TYPES, "launches": "int"}


@dataclass
class KernelSeries:
    """One plot panel: a kernel's kernel cycles at each value of the swept parameter, per profile.
    Where the batch varied more than one parameter, each point is the best over the others."""

    file: str
    kernel: str
    parameter: str                       # the swept column ("" when only one launch ran)
    labels: list[str]                    # its values, in the order the batch ran them
    cycles: dict[str, list[float | None]] = field(default_factory=dict)   # profile -> one per label

    @property
    def title(self) -> str:
        return f"{display_name(self.kernel)} ({Path(self.file).name})"


def _ok(rows: Sequence[dict[str, Any]], model: str) -> list[dict[str, Any]]:
    return [r for r in rows if r.get("model") == model and r.get("status") == STATUS_OK
            and r.get("kernel_cycles") is not None]


def best_launches(rows: Sequence[dict[str, Any]], model: str) -> list[dict[str, Any]]:
    """Per (file, kernel, profile), the row of ``model`` with the fewest kernel cycles (the first
    one on a tie), with ``launches``: how many launches gave a figure."""
    best: dict[tuple[str, str, str], dict[str, Any]] = {}
    counts: dict[tuple[str, str, str], int] = {}
    for row in _ok(rows, model):
        key = (row["file"], row["kernel"], row["profile"])
        counts[key] = counts.get(key, 0) + 1
        if key not in best or row["kernel_cycles"] < best[key]["kernel_cycles"]:
            best[key] = row
    return [{**{c: row.get(c) for c in BEST_COLUMNS}, "launches": counts[key]} for key, row in best.items()]


def best_text(best: Sequence[dict[str, Any]]) -> str:
    if not best:
        return "no launch gave a figure"
    model = best[0]["model"]
    lines = [f"best launch per kernel and GPU ({model}, fewest kernel cycles)",
             f"{'kernel':<36} {'profile':<10} {'grid':>14} {'block':>12} {'occ':>4} {'kernel cycles':>15} "
             f"{'µs':>11} {'of':>4}  other inputs"]
    for row in best:
        other = " ".join(f"{c}={row[c]}" for c in ("launch", "args", "trips", "smem_dynamic") if row.get(c))
        occupancy = row.get("occupancy") or row.get("resident_blocks") or ""
        micro = row.get("microseconds")
        lines.append(f"{display_name(row['kernel'])[:36]:<36} {row['profile'][:10]:<10} {row['grid']:>14} "
                     f"{row['block']:>12} {occupancy!s:>4} {row['kernel_cycles']:>15,.1f} "
                     f"{'' if micro is None else f'{micro:,.3f}':>11} {row['launches']:>4}  {other}")
    return "\n".join(lines)


def kernel_series(rows: Sequence[dict[str, Any]], model: str) -> list[KernelSeries]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in _ok(rows, model):
        groups.setdefault((row["file"], row["kernel"]), []).append(row)
    out = []
    for (file, kernel), group in groups.items():
        parameter = next((c for c in SWEPT if len({_label(r.get(c)) for r in group}) > 1), "")
        labels = list(dict.fromkeys(_label(r.get(parameter)) for r in group)) if parameter else [""]
        series = KernelSeries(file, kernel, parameter, labels)
        for row in group:
            values = series.cycles.setdefault(row["profile"], [None] * len(labels))
            at = labels.index(_label(row.get(parameter))) if parameter else 0
            if values[at] is None or row["kernel_cycles"] < values[at]:
                values[at] = row["kernel_cycles"]
        out.append(series)
    return out


def _label(value: Any) -> str:
    return "" if value is None else str(value)
