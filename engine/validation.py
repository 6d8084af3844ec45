"""Every model against cycles measured with Nsight Compute on the sample launches.

A measurement folder (``samples/measured/<run>/``, written by ``tools/device/measure.sh``) holds
``launch_order.csv`` (which sample launch ran in which order, and its dynamic shared memory) and
``ncu_cycles.csv`` (ncu numbers launches in the same order). Repeated launches of one
configuration are reduced to their median; several runs of one configuration are pooled.
"""

from __future__ import annotations

import csv
import math
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from engine.errors import TableFormatError, WarplineError
from engine.inputs import resolve_inputs
from engine.ncu import CYCLES_METRIC, load_ncu_csv

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
DEFAULT_RUNS = (SAMPLES / "measured" / "h100", SAMPLES / "measured" / "h100-run2")


@dataclass
class Measurement:
    """Measured cycles of one launch configuration (``sample/config`` or ``sample/config@smem=N``)."""

    key: str
    sample: str
    config: str
    smem_dynamic: int
    cycles: list[float] = field(default_factory=list)   # one per launch, all runs pooled

    @property
    def median(self) -> float:
        return statistics.median(self.cycles)

    @property
    def spread_percent(self) -> float:
        """(max − min) / median: how much the repeats disagree."""
        return 100.0 * (max(self.cycles) - min(self.cycles)) / self.median if self.cycles else 0.0


def load_measurements(runs: Iterable[Path] = DEFAULT_RUNS) -> dict[str, Measurement]:
    out: dict[str, Measurement] = {}
    for run in runs:
        run = Path(run)
        order_path = run / "launch_order.csv"
        try:
            with open(order_path, newline="") as handle:
                order = list(csv.DictReader(handle))
        except OSError as exc:
            raise WarplineError(f"{order_path}: cannot read: {exc.strerror or exc}") from exc
        launches = load_ncu_csv(run / "ncu_cycles.csv")
        if len(order) != len(launches):
            raise TableFormatError(f"{len(order)} launches listed but ncu measured {len(launches)}",
                                   str(order_path), len(order) + 1, "order")
        for row, launch in zip(order, launches, strict=True):
            key = row["key"]
            sample, _, config = key.partition("/")
            entry = out.setdefault(key, Measurement(key, sample, config.split("@")[0], int(row["smem_dynamic"])))
            if launch.cycles is None:
                raise TableFormatError(f"launch {launch.id} has no {CYCLES_METRIC}", str(run / "ncu_cycles.csv"),
                                       launch.id + 2, CYCLES_METRIC)
            entry.cycles.append(launch.cycles)
    return out


@dataclass
class ValidationRow:
    key: str
    kernel: str
    measured: float
    predicted: dict[str, float | None]           # model -> cycles (None: the model failed)
    errors: dict[str, str] = field(default_factory=dict)  # model -> why it failed

    def error_percent(self, model: str) -> float | None:
        value = self.predicted.get(model)
        if value is None:
            return None
        return 100.0 * (value - self.measured) / self.measured


@dataclass
class ValidationResult:
    profile: str
    rows: list[ValidationRow]
    models: list[str]

    def mape(self, model: str) -> float | None:
        errors = [abs(e) for r in self.rows if (e := r.error_percent(model)) is not None]
        return sum(errors) / len(errors) if errors else None

    def covered(self, model: str) -> int:
        return sum(1 for r in self.rows if r.predicted.get(model) is not None)

    def ranking(self) -> list[tuple[str, float]]:
        scored = [(m, v) for m in self.models if (v := self.mape(m)) is not None]
        return sorted(scored, key=lambda item: item[1])


def predict_measurement(m: Measurement, profile: str, arch: str = "sm_90") -> ValidationRow:
    """Every model on one measured configuration, through the evaluation core: the kernel cycles
    (launch cost included) that ``predict`` prints for the same launch."""
    from engine.evaluation import Evaluator, state_for

    inputs = resolve_inputs(SAMPLES / "ptx" / f"{m.sample}.{arch}.ptx", profile=profile,
                            launch_file=SAMPLES / f"{m.sample}.launch.toml", config=m.config)
    inputs = replace(inputs, launch=replace(inputs.launch, smem_dynamic=m.smem_dynamic))
    ev = Evaluator().evaluate(inputs, state_for(inputs), trace=False)
    predicted: dict[str, float | None] = {}
    errors: dict[str, str] = {}
    for model_id, result in ev.models.items():
        cycles = result.kernel_cycles
        predicted[model_id] = cycles if cycles is not None and math.isfinite(cycles) else None
        if result.error:
            errors[model_id] = result.error
    return ValidationRow(m.key, inputs.kernel_name, m.median, predicted, errors)


def run_validation(profile: str = "h100", runs: Iterable[Path] = DEFAULT_RUNS,
                   only: Callable[[str], bool] | None = None,
                   progress: Callable[[int, int, str], None] | None = None) -> ValidationResult:
    measurements = [m for key, m in sorted(load_measurements(runs).items()) if only is None or only(key)]
    rows = []
    for i, m in enumerate(measurements):
        if progress:
            progress(i, len(measurements), m.key)
        rows.append(predict_measurement(m, profile))
    models: list[str] = []
    for row in rows:
        for name in row.predicted:
            if name not in models:
                models.append(name)
    return ValidationResult(profile, rows, models)


def format_validation(result: ValidationResult, models: list[str] | None = None) -> str:
    models = models or result.models
    width = max(len(r.key) for r in result.rows) if result.rows else 10
    head = f"{'configuration':<{width}} {'measured':>11} " + " ".join(f"{m[:10]:>10}" for m in models)
    lines = [f"profile {result.profile}: error % of each model (predicted − measured) / measured", head]
    for r in result.rows:
        cells = []
        for m in models:
            e = r.error_percent(m)
            cells.append(f"{'—':>10}" if e is None else f"{e:>+10.1f}")
        lines.append(f"{r.key:<{width}} {r.measured:>11,.0f} " + " ".join(cells))
    lines.append("")
    lines.append("MAPE by model (configurations covered):")
    for model, value in result.ranking():
        lines.append(f"  {model:<16} {value:8.1f} %   ({result.covered(model)}/{len(result.rows)})")
    return "\n".join(lines)
