"""Every model against cycles measured with Nsight Compute, on a validation suite.

Suites (:data:`SUITES`): ``v1``, the round-1 samples (``samples/``) measured on an H100; ``v2``, 54
kernels modelled on real applications (``samples/v2/``) measured on an H100 and an H200, with a
third of its kernels held out (``samples/v2/SPLIT.toml``, fixed before measuring) and reported
separately: nothing is tuned on them; ``v2x``, its tuning supplement; ``v3``, 51 kernels written as
applications write them, six compiled by Triton (``samples/v3/``, a third held out the same way),
to be measured on an H100 and an H200: until the measurement folders exist, validating it says so.

A measurement folder (``samples/measured/<run>/``) holds ``launch_order.csv`` (which launch ran in
which order, and its dynamic shared memory) and ``ncu_cycles.csv`` (ncu numbers launches in the
same order); optionally ``launch_order_memory.csv`` + ``ncu_memory.csv`` with executed
instructions, DRAM bytes and hit rates. Repeats of one configuration are reduced to their median;
several runs of one configuration are pooled.
"""

from __future__ import annotations

import csv
import math
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import TableFormatError, WarplineError
from engine.inputs import resolve_inputs
from engine.ncu import CYCLES_METRIC, load_ncu_csv

if TYPE_CHECKING:
    from engine.inputs import KernelInputs
    from engine.pipeline.description import KernelDescription

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
MEASURED = SAMPLES / "measured"
DEFAULT_RUNS = (MEASURED / "h100", MEASURED / "h100-run2")
INSTRUCTIONS_METRIC = "smsp__inst_executed.sum"
DRAM_METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum")
L2_HIT_METRIC = "lts__t_sector_hit_rate.pct"
L1_HIT_METRIC = "l1tex__t_sector_hit_rate.pct"
MEMORY_METRICS = (INSTRUCTIONS_METRIC, "dram__bytes_read.sum", "dram__bytes_write.sum", L2_HIT_METRIC, L1_HIT_METRIC)


@dataclass(frozen=True)
class Suite:
    name: str
    root: Path                                  # holds ptx/<sample>.sm_90.ptx and <sample>.launch.toml
    runs: dict[str, tuple[Path, ...]]           # GPU profile -> measurement folders
    split: Path | None = None                   # TOML with the held-out kernels
    how_measured: str = ""                      # the command that makes the measurement folders

    def measured(self, profile: str) -> bool:
        """Whether every measurement folder of ``profile`` exists (a suite is listed before it is measured)."""
        folders = self.runs.get(profile, ())
        return bool(folders) and all((run / "launch_order.csv").is_file() for run in folders)

    def held_out(self) -> frozenset[str]:
        """``family/kernel`` of the kernels nobody tunes on (empty without a split file)."""
        if self.split is None:
            return frozenset()
        import tomllib

        try:
            data = tomllib.loads(self.split.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise WarplineError(f"{self.split}: cannot read the held-out split: {exc}") from None
        return frozenset(str(k) for k in data.get("held_out", []))


SUITES = {
    "v1": Suite("v1", SAMPLES, {"h100": DEFAULT_RUNS}),
    "v2": Suite("v2", SAMPLES / "v2", {"h100": (MEASURED / "v2-h100",), "h200": (MEASURED / "v2-h200",)},
                SAMPLES / "v2" / "SPLIT.toml"),
    "v2x": Suite("v2x", SAMPLES / "v2x", {"h100": (MEASURED / "v2x-h100",), "h200": (MEASURED / "v2x-h200",)},
                 SAMPLES / "v2x" / "SPLIT.toml"),
    "v3": Suite("v3", SAMPLES / "v3", {"h100": (MEASURED / "v3-h100", MEASURED / "v3-h100-run2"),
                                      "h200": (MEASURED / "v3-h200",)},
                SAMPLES / "v3" / "SPLIT.toml",
                how_measured="`bash tools/device/suite_v3/measure.sh` on the GPU, then `python3 "
                             "tools/device/suite_v2/merge.py <gpu>/suite_v3.tar.gz samples/measured/v3-<gpu>`"),
}


@dataclass
class Measurement:
    """Measured cycles of one launch configuration (``sample/config`` or ``sample/config@smem=N``)."""

    key: str
    sample: str
    config: str
    smem_dynamic: int
    cycles: list[float] = field(default_factory=list)   # one per launch, all runs pooled
    metrics: dict[str, list[float]] = field(default_factory=dict)   # MEMORY_METRICS, one per launch

    def metric(self, name: str) -> float | None:
        values = self.metrics.get(name)
        return statistics.median(values) if values else None

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
        _load_memory_metrics(run, out)
    return out


def _load_memory_metrics(run: Path, out: dict[str, Measurement]) -> None:
    order_path, csv_path = run / "launch_order_memory.csv", run / "ncu_memory.csv"
    if not order_path.is_file() or not csv_path.is_file():
        return
    with open(order_path, newline="") as handle:
        order = list(csv.DictReader(handle))
    launches = load_ncu_csv(csv_path)
    if len(order) != len(launches):
        raise TableFormatError(f"{len(order)} launches listed but ncu measured {len(launches)}",
                               str(order_path), len(order) + 1, "order")
    for row, launch in zip(order, launches, strict=True):
        entry = out.get(row["key"])
        if entry is None:
            continue
        for name in MEMORY_METRICS:
            if name in launch.metrics:
                entry.metrics.setdefault(name, []).append(launch.metrics[name])


def kernel_key(key: str) -> str:
    """``family/kernel`` of a suite-v2 configuration key (``family/kernel/config[@smem=N]``)."""
    return "/".join(key.split("@")[0].split("/")[:2])


@dataclass
class ValidationRow:
    key: str
    kernel: str
    measured: float
    predicted: dict[str, float | None]           # model -> cycles (None: the model failed)
    errors: dict[str, str] = field(default_factory=dict)  # model -> why it failed
    held_out: bool = False
    measured_instructions: float | None = None    # warp instructions executed (ncu)
    predicted_instructions: float | None = None   # warp instructions the simulated PTX path issues
    sass_instructions: float | None = None        # the same path weighted by SASS per PTX instruction
    measured_dram_bytes: float | None = None      # DRAM bytes read + written (ncu)
    predicted_dram_bytes: float | None = None     # the memory-level model's, whole launch
    measured_l2_hit_percent: float | None = None  # lts__t_sector_hit_rate.pct (ncu)
    predicted_l2_hit_percent: float | None = None
    sass_reason: str = ""                         # why there is no SASS-weighted count
    measured_l1_hit_percent: float | None = None  # l1tex__t_sector_hit_rate.pct (ncu)
    predicted_l1_hit_percent: float | None = None

    @property
    def kernel_key(self) -> str:
        return kernel_key(self.key)

    def as_dict(self) -> dict[str, object]:
        """The row as ``validate --json`` and ``bench/results/validation-*.json`` write it."""
        return {"configuration": self.key, "kernel": self.kernel, "measured_kernel_cycles": self.measured,
                "predicted_kernel_cycles": self.predicted, "errors": self.errors, "held_out": self.held_out,
                "measured_warp_instructions": self.measured_instructions,
                "predicted_warp_instructions": self.predicted_instructions,
                "sass_warp_instructions": self.sass_instructions,
                "measured_dram_bytes": self.measured_dram_bytes, "predicted_dram_bytes": self.predicted_dram_bytes,
                "measured_l2_hit_percent": self.measured_l2_hit_percent,
                "predicted_l2_hit_percent": self.predicted_l2_hit_percent,
                "measured_l1_hit_percent": self.measured_l1_hit_percent,
                "predicted_l1_hit_percent": self.predicted_l1_hit_percent}

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> ValidationRow:
        """A row as :meth:`as_dict` wrote it (a stored validation run)."""
        return cls(row["configuration"], row["kernel"], row["measured_kernel_cycles"],
                   dict(row["predicted_kernel_cycles"]), dict(row.get("errors") or {}), bool(row["held_out"]),
                   row.get("measured_warp_instructions"), row.get("predicted_warp_instructions"),
                   row.get("sass_warp_instructions"), row.get("measured_dram_bytes"),
                   row.get("predicted_dram_bytes"), row.get("measured_l2_hit_percent"),
                   row.get("predicted_l2_hit_percent"),
                   measured_l1_hit_percent=row.get("measured_l1_hit_percent"),
                   predicted_l1_hit_percent=row.get("predicted_l1_hit_percent"))

    def instruction_error_percent(self) -> float | None:
        if not self.measured_instructions or self.predicted_instructions is None:
            return None
        return 100.0 * (self.predicted_instructions - self.measured_instructions) / self.measured_instructions

    def sass_instruction_error_percent(self) -> float | None:
        if not self.measured_instructions or self.sass_instructions is None:
            return None
        return 100.0 * (self.sass_instructions - self.measured_instructions) / self.measured_instructions

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

    def part(self, held_out: bool) -> list[ValidationRow]:
        return [r for r in self.rows if r.held_out == held_out]

    def mape(self, model: str, rows: list[ValidationRow] | None = None) -> float | None:
        rows = self.rows if rows is None else rows
        errors = [abs(e) for r in rows if (e := r.error_percent(model)) is not None]
        return sum(errors) / len(errors) if errors else None

    def instructions_within(self, percent: float, rows: list[ValidationRow] | None = None) -> tuple[int, int]:
        """(launches whose executed warp instructions are predicted within ``percent``, launches measured)."""
        rows = self.rows if rows is None else rows
        errors = [e for r in rows if (e := r.instruction_error_percent()) is not None]
        return sum(1 for e in errors if abs(e) <= percent), len(errors)

    def sass_instructions_within(self, percent: float, rows: list[ValidationRow] | None = None) -> tuple[int, int]:
        """:meth:`instructions_within` for the SASS-weighted count (launches without one are left out)."""
        rows = self.rows if rows is None else rows
        errors = [e for r in rows if (e := r.sass_instruction_error_percent()) is not None]
        return sum(1 for e in errors if abs(e) <= percent), len(errors)

    def hit_rates_within(self, level: str, points: float, rows: list[ValidationRow] | None = None
                         ) -> tuple[int, int]:
        """(launches whose ``level`` ("l1" or "l2") sector hit rate is predicted within ``points``
        percentage points, launches with both figures)."""
        rows = self.rows if rows is None else rows
        pairs = [(m, p) for r in rows
                 if (m := getattr(r, f"measured_{level}_hit_percent")) is not None
                 and (p := getattr(r, f"predicted_{level}_hit_percent")) is not None]
        return sum(1 for m, p in pairs if abs(p - m) <= points), len(pairs)

    def covered(self, model: str) -> int:
        return sum(1 for r in self.rows if r.predicted.get(model) is not None)

    def ranking(self) -> list[tuple[str, float]]:
        scored = [(m, v) for m in self.models if (v := self.mape(m)) is not None]
        return sorted(scored, key=lambda item: item[1])


def predict_measurement(m: Measurement, profile: str, arch: str = "sm_90", root: Path = SAMPLES) -> ValidationRow:
    """Every model on one measured configuration, through the evaluation core: the kernel cycles
    (launch cost included) that ``predict`` prints for the same launch."""
    from engine.evaluation import Evaluator, state_for

    inputs = resolve_inputs(root / "ptx" / f"{m.sample}.{arch}.ptx", profile=profile,
                            launch_file=root / f"{m.sample}.launch.toml", config=m.config)
    inputs = replace(inputs, launch=replace(inputs.launch, smem_dynamic=m.smem_dynamic))
    ev = Evaluator().evaluate(inputs, state_for(inputs), trace=False)
    predicted: dict[str, float | None] = {}
    errors: dict[str, str] = {}
    for model_id, result in ev.models.items():
        cycles = result.kernel_cycles
        predicted[model_id] = cycles if cycles is not None and math.isfinite(cycles) else None
        if result.error:
            errors[model_id] = result.error
    instructions = sass = None
    sass_reason = ""
    d = ev.description
    if d is not None and d.blocks:
        instructions = d.total_warp_instructions() / d.blocks * inputs.launch.n_blocks
        sass, sass_reason = _sass_instructions(inputs, d)
    return ValidationRow(m.key, inputs.kernel_name, m.median, predicted, errors,
                         measured_dram_bytes=_sum_metrics(m, DRAM_METRICS),
                         predicted_dram_bytes=(ev.traffic.dram_read_bytes + ev.traffic.dram_write_bytes
                                               if ev.traffic is not None else None),
                         measured_l2_hit_percent=m.metric(L2_HIT_METRIC),
                         predicted_l2_hit_percent=(100.0 * ev.traffic.l2_hit_rate
                                                   if ev.traffic is not None and ev.traffic.l2_hit_rate is not None
                                                   else None),
                         measured_instructions=m.metric(INSTRUCTIONS_METRIC), predicted_instructions=instructions,
                         sass_instructions=sass, sass_reason=sass_reason,
                         measured_l1_hit_percent=m.metric(L1_HIT_METRIC),
                         predicted_l1_hit_percent=(100.0 * ev.traffic.l1_hit_rate
                                                   if ev.traffic is not None and ev.traffic.l1_hit_rate is not None
                                                   else None))


def _sass_instructions(inputs: KernelInputs, d: KernelDescription) -> tuple[float | None, str]:
    """Executed SASS warp instructions of the launch: each warp's PTX path (the simulator's
    per-instruction counts) weighted by SASS instructions per PTX instruction, for the profile's
    architecture; (None, why) when ptxas/nvdisasm cannot give the weights."""
    from engine.sass import SassMap, sass_map

    sm = inputs.profile.device.sm_version if inputs.profile is not None else None
    try:
        mapped = sass_map(inputs.path, inputs.kernel_name, sm, module=inputs.module)
    except WarplineError as exc:      # the SASS count is extra: its failure keeps the row
        return None, str(exc)
    if not isinstance(mapped, SassMap):
        return None, mapped.reason
    per_block = 0.0
    for counts, warps in d.counted_composition():
        per_block += mapped.executed(counts, dict(d.retry_passes)) * warps
    return per_block * inputs.launch.n_blocks, ""


def _sum_metrics(m: Measurement, names: tuple[str, ...]) -> float | None:
    values = [m.metric(name) for name in names]
    return None if any(v is None for v in values) else float(sum(values))  # type: ignore[arg-type]


def run_validation(profile: str = "h100", runs: Iterable[Path] | None = None,
                   only: Callable[[str], bool] | None = None,
                   progress: Callable[[int, int, str], None] | None = None,
                   suite: str = "v1") -> ValidationResult:
    chosen = SUITES.get(suite)
    if chosen is None:
        raise WarplineError(f"no validation suite {suite!r} (suites: {', '.join(SUITES)})")
    if runs is None:
        if profile not in chosen.runs:
            measured = [gpu for gpu in chosen.runs if chosen.measured(gpu)]
            where = (f"measured on: {', '.join(measured)}" if measured
                     else f"not measured yet; to be measured on: {', '.join(chosen.runs)}")
            raise WarplineError(f"suite {suite} has no measurements for {profile!r} ({where})")
        runs = chosen.runs[profile]
        missing = [run for run in runs if not (run / "launch_order.csv").is_file()]
        if missing:
            raise WarplineError(
                f"suite {suite} has no measurements yet for {profile}: "
                + ", ".join(str(run.relative_to(ROOT)) if run.is_relative_to(ROOT) else str(run) for run in missing)
                + " not measured" + (f" (made by {chosen.how_measured})" if chosen.how_measured else ""))
    held = chosen.held_out()
    measurements = [m for key, m in sorted(load_measurements(runs).items()) if only is None or only(key)]
    rows = []
    for i, m in enumerate(measurements):
        if progress:
            progress(i, len(measurements), m.key)
        try:
            row = predict_measurement(m, profile, root=chosen.root)
        except WarplineError as exc:
            row = ValidationRow(m.key, m.sample, m.median, {}, {"inputs": str(exc)})
        row.held_out = kernel_key(m.key) in held
        rows.append(row)
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
    held = result.part(True)
    if held:
        tuning = result.part(False)
        lines.append("")
        lines.append(f"by part: tuning {len(tuning)} launches, held out {len(held)} launches (never tuned on)")
        for model, _ in result.ranking():
            a, b = result.mape(model, tuning), result.mape(model, held)
            lines.append(f"  {model:<16} tuning {a if a is not None else float('nan'):8.1f} %   "
                         f"held out {b if b is not None else float('nan'):8.1f} %")
    within, measured = result.instructions_within(5.0)
    if measured:
        lines.append("")
        lines.append(f"executed warp instructions (simulated PTX path vs ncu smsp__inst_executed): "
                     f"{within}/{measured} launches within 5 %")
        sass_within, sass_measured = result.sass_instructions_within(5.0)
        lines.append(f"executed warp instructions (PTX path weighted by SASS per PTX instruction vs ncu): "
                     f"{sass_within}/{sass_measured} launches within 5 %")
        pairs = [(r.measured_dram_bytes, r.predicted_dram_bytes) for r in result.rows
                 if r.measured_dram_bytes and r.predicted_dram_bytes is not None]
        if pairs:
            close = sum(1 for m, p in pairs if abs(p - m) <= 0.20 * m)
            lines.append(f"DRAM bytes read + written (memory-level model vs ncu dram__bytes): "
                         f"{close}/{len(pairs)} launches within 20 %")
        reasons = sorted({r.sass_reason for r in result.rows if r.sass_reason})
        for reason in reasons[:3]:
            lines.append(f"  no SASS weights: {reason}")
    for level, metric in (("l2", L2_HIT_METRIC), ("l1", L1_HIT_METRIC)):
        close, compared = result.hit_rates_within(level, 10.0)
        if compared:
            lines.append(f"{level.upper()} sector hit rate (cache simulation vs ncu {metric}): "
                         f"{close}/{compared} launches within 10 points")
    failed = [r for r in result.rows if "inputs" in r.errors]
    for r in failed:
        lines.append(f"  could not evaluate {r.key}: {r.errors['inputs']}")
    return "\n".join(lines)
