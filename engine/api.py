"""Warpline from Python (notebooks, scripts): open a PTX file, pick a kernel and a launch, and get
every figure as a table with the same columns as the CSV exports.

    import engine.api as wl

    k = wl.open("samples/ptx/mm.sm_90.ptx", profile="h100", launch="samples/mm.launch.toml", config="case")
    k.predict()                 # pyarrow.Table: model, title, family, sm_cycles, ..., kernel_cycles, microseconds
    k.predict().to_pandas()     # a DataFrame, where pandas is installed
    wl.predict("file.ptx", kernel="k", profile="h100")   # the same in one call

A :class:`Kernel` is immutable: :meth:`Kernel.edit`, :meth:`Kernel.with_occupancy` and
:meth:`Kernel.with_launch` return another one (the what-if of the window's cells and sliders).
Every figure comes from :meth:`engine.evaluation.Evaluator.evaluate`, as in the window and the CLI;
tables are ``pyarrow.Table`` (pyarrow is one of Warpline's dependencies; pandas is not), columns
named as the CSVs name them. Pictures go through the renderer ``export`` uses: pass
``renderer=gui.render.QtRenderer()`` (it needs PySide6, which the engine never imports).
Documented, with runnable examples, in ``docs/python.md``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from engine.errors import WarplineError
from engine.evaluation import Evaluation, Evaluator, state_for
from engine.evaluation.diff import diff as diff_evaluations
from engine.evaluation.occupancy_sweep import sweep_rows
from engine.evaluation.prediction_report import PREDICTION_COLUMNS, prediction_records
from engine.evaluation.roofline import roofline as roofline_of
from engine.evaluation.sensitivity import DEFAULT_MODEL
from engine.evaluation.sensitivity import sensitivity as sensitivity_of
from engine.evaluation.timeseries import time_series
from engine.inputs import KernelInputs, resolve_inputs
from engine.launch import parse_dim
from engine.names import find_kernel
from engine.ptx import index_kernels
from engine.ptx.index import read_ptx_bytes
from engine.state import WorkbenchState, with_cell_edit
from engine.timeline.csv_export import CSV_COLUMNS, trace_columns

__all__ = ["Kernel", "batch", "kernels", "open", "predict", "sensitivity", "sweep", "table", "trace"]

# one evaluator for the session: what an edit does not change (analysis, memory, SASS) is reused
_evaluator = Evaluator()


def table(records: Sequence[Mapping[str, Any]] | Mapping[str, Sequence[Any]],
          columns: Sequence[str] | None = None) -> Any:
    """A ``pyarrow.Table`` of row dicts (or of columns), in ``columns``' order."""
    import pyarrow as pa

    if isinstance(records, Mapping):
        names = list(columns or records.keys())
        return pa.table({name: list(records[name]) for name in names})
    names = list(columns or (records[0].keys() if records else []))
    return pa.table({name: [r.get(name) for r in records] for name in names})


def kernels(path: str | os.PathLike[str]) -> list[str]:
    """Every kernel of a PTX file (mangled names, in file order), without parsing their bodies."""
    return [entry.name for entry in index_kernels(read_ptx_bytes(os.fspath(path)), filename=os.fspath(path))]


def open(path: str | os.PathLike[str], kernel: str | None = None, *, profile: str | None = None,  # noqa: A001
         launch: str | os.PathLike[str] | None = None, config: str | None = None,
         grid: int | Sequence[int] | None = None, block: int | Sequence[int] | None = None,
         smem_dynamic: int | None = None, regs: int | None = None,
         args: Mapping[str | int, int | float] | None = None, trips: Mapping[str, int] | None = None,
         occupancy: int | None = None, policy: str = "lrr", use_ptxas: bool = True) -> Kernel:
    """One kernel of a PTX file with its launch, as the CLI's options choose them (``kernel``: any
    spelling ``--kernel`` takes; the rest as ``--profile``, ``--launch``, ``--config``, ``--grid``,
    ``--block``, ``--smem-dynamic``, ``--regs``, ``--arg``, ``--trip``, ``--occupancy``,
    ``--policy``, ``--no-ptxas``). Defaults (profile, launch, registers) are those of the CLI and
    the window; :attr:`Kernel.defaults` says where each came from."""
    if kernel is not None:
        entries = index_kernels(read_ptx_bytes(os.fspath(path)), filename=os.fspath(path))
        kernel = find_kernel(entries, kernel, os.fspath(path)).name
    inputs = resolve_inputs(path, kernel=kernel, profile=profile, launch_file=launch, config=config,
                            grid=_dim(grid, "grid"), block=_dim(block, "block"), smem_dynamic=smem_dynamic,
                            regs=regs, args=dict(args or {}), trips=dict(trips or {}), use_ptxas=use_ptxas)
    state = state_for(inputs, occupancy=occupancy, policy=policy)
    return Kernel(inputs, state)


def _dim(value: int | Sequence[int] | None, what: str) -> Any:
    if value is None:
        return None
    return parse_dim(value if isinstance(value, int) else list(value), what)


@dataclass(frozen=True)
class Kernel:
    """A kernel, its launch and the user's edits (immutable; every method computes on demand,
    and an evaluation already made for the same state is reused)."""

    inputs: KernelInputs
    state: WorkbenchState

    # ---- what it is --------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.inputs.kernel_name

    @property
    def path(self) -> Path:
        return self.inputs.path

    @property
    def defaults(self) -> dict[str, str]:
        """Where the profile and the launch came from, in words."""
        return {"profile": self.inputs.profile_source, "launch": self.inputs.launch_source}

    def __repr__(self) -> str:
        launch = self.state.launch
        return (f"Kernel({self.name!r}, profile={self.state.profile!r}, grid={launch.grid}, block={launch.block}"
                + (f", occupancy={self.state.occupancy}" if self.state.occupancy else "")
                + (", edited" if not self.state.overrides.is_empty() else "") + ")")

    # ---- what-if ---------------------------------------------------------------------------------
    def edit(self, row: int, column: str, value: float | str | None) -> Kernel:
        """The kernel with a BLOCK-table cell set (``row``: the 1-based instruction; ``column``:
        ``lat_comp``, ``lat_comm``, ``n_ma``, ``issue``, ``fu1``..``fu4``, ``comm``, ``ovh``,
        ``sync``), with the window's rules (WarplineError for a refused value)."""
        return replace(self, state=with_cell_edit(self.state, row, column, value))

    def with_occupancy(self, blocks: int | None) -> Kernel:
        """Resident blocks per SM (None: as many as fit)."""
        if blocks is not None and blocks < 1:
            raise WarplineError(f"occupancy {blocks}: at least one resident block per SM")
        return replace(self, state=replace(self.state, occupancy=blocks))

    def with_launch(self, **changes: Any) -> Kernel:
        """Launch settings changed (``grid``, ``block``, ``smem_dynamic``, ``regs_per_thread``,
        ``args``, ``trip_overrides``)."""
        return replace(self, state=self.state.with_launch(**changes))

    def with_profile(self, profile: str) -> Kernel:
        """Another GPU profile (a shipped name or a .toml path)."""
        inputs = resolve_inputs(self.inputs.path, kernel=self.name, module=self.inputs.module, profile=profile)
        return replace(self, inputs=inputs, state=replace(self.state, profile=profile))

    # ---- figures ---------------------------------------------------------------------------------
    def evaluate(self, *, trace: bool = False, sweep: bool = False, models: Sequence[str] | None = None) -> Evaluation:
        """The evaluation core's :class:`~engine.evaluation.Evaluation` of this state."""
        return _evaluator.evaluate(self.inputs, self.state, trace=trace, sweep=sweep, only=models)

    def predict(self, models: Sequence[str] | None = None) -> Any:
        """Every model's figures (``export --predictions-csv``'s columns)."""
        return table(prediction_records(self.evaluate(models=models)), PREDICTION_COLUMNS)

    def sweep(self) -> Any:
        """Every model's kernel cycles at each resident-blocks count (``sweep --csv``'s columns)."""
        ev = self.evaluate(sweep=True)
        if ev.sweep is None:
            raise WarplineError("no sweep: " + ("; ".join(ev.errors.values()) or "the simulation did not run"))
        header, rows = sweep_rows(ev.sweep)
        return table([dict(zip(header, [None if v == "" else v for v in row], strict=True)) for row in rows], header)

    def trace(self) -> Any:
        """The simulation's issues and stalls (``trace --csv``'s columns, one row each)."""
        ev = self.evaluate(trace=True, models=["pipeline"])
        if ev.simulation is None or ev.simulation.trace is None:
            raise WarplineError(ev.errors.get("simulation", "the simulation kept no trace"))
        return table(trace_columns(ev.simulation.trace, ev.trace_names, ev.trace_units), CSV_COLUMNS)

    def time_series(self, buckets: int = 400) -> Any:
        """DRAM/L2/L1 bytes per cycle, active warps and the stall mix over time (``export
        --time-series-csv``'s columns)."""
        return table(time_series(self.evaluate(trace=True, models=["pipeline"]), buckets).records())

    def sensitivity(self, step: float = 0.10, model: str = DEFAULT_MODEL) -> Any:
        """Each latency, bandwidth, the clock and the occupancy moved ±``step`` (``sensitivity
        --csv``'s columns), ranked."""
        result = sensitivity_of(self.inputs, self.state, step=step, model=model, evaluator=_evaluator)
        return table(result.records())

    def roofline(self, work: str | None = None) -> Any:
        """The kernel at L1, L2 and DRAM against the profile's ceilings (one row per level)."""
        r = roofline_of(self.evaluate(models=["pipeline"]), work)
        return table([{"level": p.level, "bytes": p.bytes, "intensity": p.intensity, "work": r.work,
                       "attained_per_second": r.attained, "attainable_per_second": r.attainable(p.level),
                       "bound": r.bound} for p in r.points])

    def diff(self, other: Kernel) -> Any:
        """Instructions aligned with ``other``'s (``diff --csv``'s columns); ``self`` is 'before'."""
        result = diff_evaluations(self.evaluate(trace=True), other.evaluate(trace=True), repr(self), repr(other))
        return table(result.records())

    # ---- pictures (through export's renderer) -----------------------------------------------------
    def timeline_image(self, path: str | os.PathLike[str], *, renderer: Any, width: int = 1600, height: int = 900,
                       color_mode: str = "class", time_series: bool = False) -> Path:
        """The timeline as PNG, SVG or PDF, as ``export --png`` draws it (``renderer``:
        ``gui.render.QtRenderer()``)."""
        ev = self.evaluate(trace=True)
        extra = {"series_buckets": 400} if time_series else {}
        return Path(_renderer(renderer).timeline_image(ev, path, width=width, height=height, color_mode=color_mode,
                                                       **extra))

    def roofline_image(self, path: str | os.PathLike[str], *, renderer: Any, width: int = 1200,
                       height: int = 800) -> Path:
        """The roofline chart as ``export --roofline-png`` draws it."""
        return Path(_renderer(renderer).roofline_image(self.evaluate(models=["pipeline"]), path, width=width,
                                                       height=height))


def _renderer(renderer: Any) -> Any:
    if renderer is None:
        raise WarplineError("pictures need the drawing layer: pass renderer=gui.render.QtRenderer() (PySide6)")
    return renderer


# ---- one-call forms -------------------------------------------------------------------------------
def predict(path: str | os.PathLike[str], kernel: str | None = None, **options: Any) -> Any:
    """``open(path, kernel, **options).predict()``."""
    return open(path, kernel, **options).predict()


def sweep(path: str | os.PathLike[str], kernel: str | None = None, **options: Any) -> Any:
    return open(path, kernel, **options).sweep()


def trace(path: str | os.PathLike[str], kernel: str | None = None, **options: Any) -> Any:
    return open(path, kernel, **options).trace()


def sensitivity(path: str | os.PathLike[str], kernel: str | None = None, step: float = 0.10, **options: Any) -> Any:
    return open(path, kernel, **options).sensitivity(step)


def batch(sources: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], *,
          profiles: Sequence[str] = ("h100",), models: Sequence[str] = ("pipeline",), kernels: Sequence[str] = (),
          occupancies: Sequence[int | None] = (None,), cache: str | os.PathLike[str] | None = None) -> Any:
    """Every kernel of the files, folders or glob patterns on every profile, one row per model
    (``batch --out``'s columns), evaluated in this process. ``cache``: a folder that keeps the
    rows for the next call (default: none kept)."""
    from engine.batch import COLUMNS, BatchSpec, InProcess, ResultCache, plan_batch, run_batch

    listed = [os.fspath(sources)] if isinstance(sources, (str, os.PathLike)) else [os.fspath(s) for s in sources]
    spec = BatchSpec(sources=tuple(listed), profiles=tuple(profiles), models=tuple(models), kernels=tuple(kernels),
                     occupancies=tuple(occupancies))
    plan = plan_batch(spec)
    with tempfile.TemporaryDirectory(prefix="warpline-batch-") as scratch:
        result = run_batch(plan, InProcess(), ResultCache(cache or scratch).load())
    return table(result.rows, COLUMNS)
