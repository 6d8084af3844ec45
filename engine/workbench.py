"""Qt-free facade that the desktop app drives: one call turns a kernel's inputs plus the user's
state (launch, overrides, occupancy, scheduler policy) into everything the window shows.

``Workbench.compute(inputs, state, cancel=..., progress=...)`` runs, in order: the kernel
analysis (loops, inferred trip counts), the occupancy rules, the Many-BSP model
(:func:`engine.manybsp.predict_manybsp`), the Pipeline-model simulation with its trace and the
analytical peers (``engine.pipeline``), then the occupancy sweep of every model. Each stage that
fails with a :class:`WarplineError` records its message and lets the others run, so one model
that cannot evaluate (a profile without a ``[manybsp]`` section, say) never blanks the window.

The state is immutable: every edit builds a new :class:`WorkbenchState`, so undo/redo and the
session file only ever store snapshots, and a background computation never sees a half-edit.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.analysis import KernelAnalysis, analyze_kernel
from engine.errors import WarplineError
from engine.inputs import KernelInputs
from engine.launch import Launch
from engine.manybsp import ManyBspResult, Overrides, manybsp_inputs, run_manybsp
from engine.memory import analyze_memory
from engine.occupancy import Occupancy, occupancy
from engine.pipeline.adapter import PipelineOverrides, build_description
from engine.pipeline.description import KernelDescription, to_fraction
from engine.pipeline.peers import all_peers
from engine.pipeline.simulator import simulate
from engine.pipeline.sweep import occupancy_sweep
from engine.profiles import Profile, list_profiles, load_profile
from engine.ptx.model import Module
from engine.timeline import layout_trace

CancelCheck = Callable[[], bool]          # returns True when the caller wants the work stopped
ProgressFn = Callable[[float, str], None]  # fraction done (0..1), what is running

POLICIES = ("lrr", "gto")
FALLBACK_PROFILE = "gtx1070"   # 000's worked cases (hotspot, knn, mm) run on it

# Editable BLOCK-table columns and where an edit lands in engine.manybsp.Overrides.
LATENCY_COLUMNS = ("lat_comp", "lat_comm")
CELL_COLUMNS = ("issue", "fu1", "fu2", "fu3", "fu4", "comm", "ovh", "sync")
EDITABLE_COLUMNS = (*LATENCY_COLUMNS, "n_ma", *CELL_COLUMNS)


class Cancelled(Exception):
    """The caller asked the running computation to stop (its result would be stale)."""


# ---------------------------------------------------------------------------- state


@dataclass(frozen=True)
class WorkbenchState:
    """What the user chose. ``occupancy`` None means "as many blocks as fit" (the launch's max).

    ``overrides`` is treated as immutable: the ``with_*`` helpers copy it before changing it.
    """

    kernel: str
    profile: str                       # shipped profile name or a .toml path
    launch: Launch
    overrides: Overrides = field(default_factory=Overrides)
    occupancy: int | None = None
    policy: str = "lrr"
    measured_cycles: float | None = None

    def with_launch(self, **changes: Any) -> WorkbenchState:
        return replace(self, launch=replace(self.launch, **changes))

    def with_overrides(self, edit: Callable[[Overrides], None]) -> WorkbenchState:
        """A copy whose overrides went through ``edit`` (applied to a deep copy)."""
        ov = copy_overrides(self.overrides)
        edit(ov)
        return replace(self, overrides=ov)


def copy_overrides(ov: Overrides) -> Overrides:
    return Overrides(
        block_cells=dict(ov.block_cells),
        latencies={k: dict(v) for k, v in ov.latencies.items()},
        n_ma=dict(ov.n_ma),
        iterations=dict(ov.iterations),
        params=dict(ov.params),
    )


def parse_cell_value(column: str, text: str) -> float | str | None:
    """Validate what the user typed into an editable cell; WarplineError says why it is refused.

    FU cells take ``16+1`` (exposed latency + occupancy) or a plain number; ``issue`` may be left
    blank (dual issue, costs 0); every other cell needs a non-negative number.
    """
    if column not in EDITABLE_COLUMNS:
        raise WarplineError(f"column {column!r} cannot be edited")
    value = text.strip()
    if value == "":
        if column == "issue" or column.startswith("fu"):
            return None
        raise WarplineError(f"{column}: a value is required (a non-negative number)")
    if column.startswith("fu") and "+" in value:
        parts = value.split("+")
        if len(parts) != 2:
            raise WarplineError(f"{column}: {value!r} is not 'latency+occupancy' such as 16+1")
        for part in parts:
            _non_negative(column, part)
        return value.replace(" ", "")
    number = _non_negative(column, value)
    if column == "n_ma" and not float(number).is_integer():
        raise WarplineError(f"n_ma: {value!r} must be a whole number of transactions")
    return number


def _non_negative(column: str, text: str) -> float:
    try:
        number = float(text)
    except ValueError:
        raise WarplineError(f"{column}: {text.strip()!r} is not a number") from None
    if not math.isfinite(number):
        raise WarplineError(f"{column}: {text.strip()!r} is not a finite number")
    if number < 0:
        raise WarplineError(f"{column}: {number:g} is negative; cycles and counts cannot be")
    return number


def with_cell_edit(state: WorkbenchState, row: int, column: str, value: float | str | None,
                   reset: bool = False) -> WorkbenchState:
    """The state with BLOCK-table cell (``row`` = 1-based instruction, ``column``) set or reset."""
    if column not in EDITABLE_COLUMNS:
        raise WarplineError(f"column {column!r} cannot be edited")

    def edit(ov: Overrides) -> None:
        if column in LATENCY_COLUMNS:
            lat = ov.latencies.setdefault(row, {})
            if reset:
                lat.pop(column, None)
            else:
                lat[column] = float(value)  # type: ignore[arg-type]
            if not lat:
                ov.latencies.pop(row, None)
        elif column == "n_ma":
            if reset:
                ov.n_ma.pop(row, None)
            else:
                ov.n_ma[row] = int(float(value))  # type: ignore[arg-type]
        elif reset:
            ov.block_cells.pop((row, column), None)
        else:
            ov.block_cells[(row, column)] = value

    return state.with_overrides(edit)


def with_iterations(state: WorkbenchState, level1: int, value: int | None) -> WorkbenchState:
    """Level-1 superstep ``level1`` (1-based) runs ``value`` times; None drops the override."""
    if value is not None and value < 0:
        raise WarplineError(f"level-1 superstep {level1}: {value} iterations is negative")

    def edit(ov: Overrides) -> None:
        if value is None:
            ov.iterations.pop(level1, None)
        else:
            ov.iterations[level1] = int(value)

    return state.with_overrides(edit)


def is_overridden(state: WorkbenchState, row: int, column: str) -> bool:
    ov = state.overrides
    if column in LATENCY_COLUMNS:
        return column in ov.latencies.get(row, {})
    if column == "n_ma":
        return row in ov.n_ma
    return (row, column) in ov.block_cells


def default_profile_for(module: Module) -> str:
    """A shipped profile of the PTX's own architecture with Many-BSP figures, else 000's GPU."""
    target = module.sm_version
    names = list_profiles()
    for name in names:
        try:
            prof = load_profile(name)
        except WarplineError:
            continue
        if prof.manybsp is not None and target is not None and prof.device.sm_version == target:
            return name
    return FALLBACK_PROFILE if FALLBACK_PROFILE in names else next(iter(names), FALLBACK_PROFILE)


def initial_state(inputs: KernelInputs, profile: str | None = None) -> WorkbenchState:
    """The state right after opening a file: its launch (sample launch file or a 1x32 guess)."""
    launch = inputs.launch or Launch(grid=(1, 1, 1), block=(32, 1, 1), kernel=inputs.kernel_name)
    name = profile or (inputs.profile.name if inputs.profile is not None else default_profile_for(inputs.module))
    if inputs.profile is not None and inputs.profile.path is not None and profile is None:
        name = str(inputs.profile.path) if inputs.profile.name not in list_profiles() else inputs.profile.name
    return WorkbenchState(kernel=inputs.kernel_name, profile=name, launch=launch)


# ---------------------------------------------------------------------------- results


@dataclass(frozen=True)
class ModelPrediction:
    """One row of the results panel."""

    model: str
    cycles: float | None
    microseconds: float | None
    note: str = ""

    def error_percent(self, measured: float | None) -> float | None:
        if measured is None or measured <= 0 or self.cycles is None:
            return None
        return 100.0 * (self.cycles - measured) / measured


@dataclass
class WorkbenchResult:
    """Everything the window shows for one state. Stage errors are messages, never exceptions."""

    state: WorkbenchState
    profile: Profile | None
    analysis: KernelAnalysis | None
    occupancy: Occupancy | None
    resident_blocks: int                     # the occupancy the models ran at
    manybsp: ManyBspResult | None = None
    simulation: Any = None                   # engine.pipeline SimulationResult (with trace)
    description: Any = None                  # engine.pipeline KernelDescription simulated
    timeline: Any = None                     # engine.timeline TimelineLayout of the trace
    memory: Any = None                       # engine.memory MemoryReport (None: not available)
    inferred_trips: dict[str, Any] = field(default_factory=dict)  # loop key -> TripCount, no overrides
    trace_names: list[str] = field(default_factory=list)     # instruction label per static index
    trace_units: list[str] = field(default_factory=list)     # subsystem names
    peers: dict[str, float] = field(default_factory=dict)   # analytical model -> cycles
    sweep: dict[str, list[tuple[int, float]]] = field(default_factory=dict)  # model -> [(occ, cycles)]
    predictions: list[ModelPrediction] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)    # stage -> message
    warnings: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    complete: bool = True                    # False for the early results sent before the last stage
    # Stages still to come in an early result (MANYBSP_STAGE, PEERS_STAGE, SWEEP_STAGE): their
    # fields are empty here, and a window keeps showing the previous values until they arrive.
    pending: tuple[str, ...] = ()

    @property
    def max_blocks(self) -> int:
        return self.occupancy.blocks_per_sm if self.occupancy is not None else 0


# ---------------------------------------------------------------------------- the facade

MANYBSP_STAGE = "Many-BSP"
PEERS_STAGE = "analytical models"
SWEEP_STAGE = "occupancy sweep"


class Workbench:
    """Runs the models; caches what does not change between edits (profiles, analyses)."""

    def __init__(self) -> None:
        self._profiles: dict[str, Profile] = {}
        self._analyses: dict[tuple[int, str, str], KernelAnalysis] = {}
        self._tables: dict[tuple, tuple] = {}
        self._descriptions: dict[tuple, KernelDescription] = {}
        self._memory: dict[int, tuple[Any, str]] = {}

    def profile(self, name: str) -> Profile:
        if name not in self._profiles:
            self._profiles[name] = load_profile(name)
        return self._profiles[name]

    def analysis(self, inputs: KernelInputs, launch: Launch) -> KernelAnalysis:
        # The analysis reads the launch (argument values, trip overrides); the Launch repr
        # covers every field, so equal launches share one analysis.
        key = (id(inputs.function), inputs.kernel_name, repr(launch))
        if key not in self._analyses:
            if len(self._analyses) > 32:
                self._analyses.clear()
            self._analyses[key] = analyze_kernel(inputs.function, launch, inputs.module)
        return self._analyses[key]

    def memory(self, inputs: KernelInputs, analysis: KernelAnalysis, launch: Launch) -> tuple[Any, str]:
        """The memory-access analysis (coalescing, bank conflicts) and why it is missing if it is.

        It depends on the kernel and the launch only, like the analysis it is keyed by, so an edit
        of a latency or of the occupancy reuses it. Both models read it: Many-BSP's ``n_ma`` and
        the Pipeline model's memory λ/Λ.
        """
        key = id(analysis)
        if key not in self._memory:
            if len(self._memory) > 32:
                self._memory.clear()
            try:
                self._memory[key] = (analyze_memory(analysis, launch, inputs.module), "")
            except WarplineError as exc:
                self._memory[key] = (None, f"memory-access analysis failed ({exc}); coalesced "
                                           "accesses and the profile's memory costs assumed")
        return self._memory[key]

    def compute(self, inputs: KernelInputs, state: WorkbenchState, *,
                cancel: CancelCheck | None = None, progress: ProgressFn | None = None,
                partial: Callable[[WorkbenchResult], None] | None = None,
                sweep: bool = True) -> WorkbenchResult:
        """Run every model for ``state``. ``cancel`` is polled between stages (and handed to the
        simulator where it supports it): when it returns True, :class:`Cancelled` is raised.
        ``partial`` receives early results (``complete`` False, the stages still to come in
        ``pending``): first the simulation with its timeline, then the Many-BSP model and the
        analytical peers as well; only the occupancy sweep (the slow part) follows. A window thus
        redraws the Gantt without waiting for Many-BSP, and the tables without waiting for the
        sweep."""
        started = time.perf_counter()

        def step(fraction: float, what: str) -> None:
            if cancel is not None and cancel():
                raise Cancelled()
            if progress is not None:
                progress(fraction, what)

        step(0.0, "analysis")
        launch = state.launch
        profile: Profile | None = None
        analysis: KernelAnalysis | None = None
        occ: Occupancy | None = None
        errors: dict[str, str] = {}
        try:
            profile = self.profile(state.profile)
        except WarplineError as exc:
            errors["profile"] = str(exc)
        inferred: dict[str, Any] = {}
        try:
            analysis = self.analysis(inputs, launch)
            # What the analysis infers without the user's trip counts, shown beside them.
            plain = self.analysis(inputs, replace(launch, trip_overrides={})) if launch.trip_overrides \
                else analysis
            inferred = dict(plain.trip_counts)
        except WarplineError as exc:
            errors["analysis"] = str(exc)
        resources = inputs.resources
        if launch.regs_per_thread is not None:
            resources = replace(resources, registers=launch.regs_per_thread, source="override")
        smem = resources.static_shared_bytes + launch.smem_dynamic
        if profile is not None:
            try:
                occ = occupancy(profile, launch.threads_per_block, resources.registers, smem)
            except WarplineError as exc:
                errors["occupancy"] = str(exc)
        max_blocks = occ.blocks_per_sm if occ is not None else 0
        resident = max_blocks if state.occupancy is None else max(1, min(state.occupancy, max_blocks))
        result = WorkbenchResult(state=state, profile=profile, analysis=analysis, occupancy=occ,
                                 resident_blocks=resident, errors=errors, inferred_trips=inferred)
        if profile is None:
            return self._finish(result, started)
        if max_blocks == 0 and occ is not None:
            errors["occupancy"] = (f"the block does not fit on an SM of {profile.device.name} "
                                   f"(limited by {occ.limiter})")

        if analysis is None:
            return self._finish(result, started)
        result.memory, why = self.memory(inputs, analysis, launch)
        if why:
            result.warnings.append(why)

        later_sweep = (SWEEP_STAGE,) if sweep and max_blocks > 0 else ()

        def early(pending: tuple[str, ...]) -> None:
            if partial is None:
                return
            result.elapsed_s = time.perf_counter() - started
            # A copy of every container: the stages below keep filling this result's own, while
            # the receiver (another thread) reads the early one.
            partial(dataclasses.replace(result, predictions=list(result.predictions), sweep=dict(result.sweep),
                                        peers=dict(result.peers), errors=dict(result.errors),
                                        warnings=list(result.warnings), complete=False, pending=pending))

        # The simulation first: the Gantt, what a latency edit is watched on, needs nothing else.
        step(0.1, "simulation")
        if max_blocks > 0:
            try:
                self._simulate(inputs, state, profile, resources, analysis, resident, result)
            except WarplineError as exc:
                errors["simulation"] = str(exc)
        self._predictions(result, manybsp_pending=True)
        early((MANYBSP_STAGE, PEERS_STAGE, *later_sweep))

        step(0.3, "Many-BSP")
        try:
            result.manybsp = self._manybsp(inputs, state, profile, resources, analysis, result.memory)
            result.warnings.extend(result.manybsp.warnings)
        except WarplineError as exc:
            errors["Many-BSP"] = str(exc)
        if result.description is not None:
            step(0.45, "analytical models")
            try:
                for name, pred in all_peers(result.description).items():
                    result.peers[PEER_TITLES.get(name, name)] = float(pred.cycles)
            except WarplineError as exc:
                errors["peers"] = str(exc)
        self._predictions(result)
        if later_sweep:
            early(later_sweep)
        if sweep and max_blocks > 0:
            step(0.5, "occupancy sweep")
            try:
                self._sweep(result, max_blocks, state.policy,
                            lambda f: step(0.5 + 0.5 * f, "occupancy sweep"))
            except WarplineError as exc:
                errors["sweep"] = str(exc)
        step(1.0, "done")
        return self._finish(result, started)

    @staticmethod
    def _finish(result: WorkbenchResult, started: float) -> WorkbenchResult:
        result.elapsed_s = time.perf_counter() - started
        return result

    @staticmethod
    def _predictions(result: WorkbenchResult, manybsp_pending: bool = False) -> None:
        """The table of predicted cycles (without a Many-BSP row while that stage is to come)."""
        clock = result.profile.device.clock_mhz if result.profile is not None else 0.0

        def row(model: str, cycles: float | None, note: str = "") -> ModelPrediction:
            us = cycles / clock if cycles is not None and clock > 0 else None
            return ModelPrediction(model, cycles, us, note)

        rows = []
        if result.manybsp is not None:
            rows.append(row("Many-BSP", float(result.manybsp.kernel_exec_cycle),
                            f"eq. {result.manybsp.prediction.branch.removeprefix('eq. ')}"))
        elif not manybsp_pending:
            rows.append(row("Many-BSP", None, result.errors.get("Many-BSP", "")))
        if result.simulation is not None:
            rows.append(row("Pipeline simulation", float(result.simulation.cycles),
                            f"{result.resident_blocks} blocks/SM, {result.state.policy}"))
        else:
            rows.append(row("Pipeline simulation", None, result.errors.get("simulation", "")))
        for name, cycles in result.peers.items():
            rows.append(row(name, cycles))
        result.predictions = rows

    # ------------------------------------------------------------------ pipeline stages

    def _manybsp(self, inputs: KernelInputs, state: WorkbenchState, profile: Profile, resources: Any,
                 analysis: KernelAnalysis, memory: Any) -> ManyBspResult:
        """:func:`predict_manybsp` with the analysis, the memory report and :func:`manybsp_inputs`
        cached: an edit re-runs only the BLOCK table, the supersteps and the
        equations. (tests/test_workbench.py checks that both paths agree.)"""
        launch = state.launch
        key = (id(analysis), profile.name, str(profile.path), repr(launch), resources.registers,
               resources.static_shared_bytes)
        if key not in self._tables:
            if len(self._tables) > 32:
                self._tables.clear()
            self._tables[key] = manybsp_inputs(analysis, profile, launch, resources, memory)
        rows, specs, warnings, params = self._tables[key]
        result = run_manybsp(rows, params, specs, _manybsp_overrides(state, launch), warnings)
        result.kernel_name = inputs.kernel_name
        return result

    def _simulate(self, inputs: KernelInputs, state: WorkbenchState, profile: Profile, resources: Any,
                  analysis: KernelAnalysis, resident: int, result: WorkbenchResult) -> None:
        """The Pipeline-model simulation with its trace (the Gantt's data)."""
        d = self._description(inputs, state, profile, analysis, resident, result.memory)
        sim = simulate(d, policy=state.policy, trace=True)
        result.description = d
        result.simulation = sim
        result.trace_names = [ins.name for ins in d.instructions]
        result.trace_units = list(d.subsystems)
        result.warnings.extend(d.notes)
        if sim.trace is not None and sim.trace.truncated:
            result.warnings.append("the simulation trace hit its row limit; the Gantt shows its start")
        if sim.trace is not None:
            # The Gantt's lane layout is plain numpy work: done here, off the UI thread, it is
            # what GanttView.set_trace would compute (same call, same defaults).
            result.timeline = layout_trace(sim.trace, result.trace_names, None, float(sim.cycles),
                                           result.trace_units)

    def _description(self, inputs: KernelInputs, state: WorkbenchState, profile: Profile,
                     analysis: KernelAnalysis, resident: int, memory: Any) -> KernelDescription:
        """The Pipeline-model description for this state.

        Building it from PTX costs every instruction a profile look-up (tens of ms), yet a latency
        edit or an occupancy change alters one Λ or the resident blocks only. So the unedited
        description is built once per (kernel, profile, launch) and the edits are applied to a
        copy, exactly as the adapter's index-keyed cost overrides and ``at_occupancy`` would.
        """
        key = (id(analysis), profile.name, str(profile.path), repr(state.launch))
        base = self._descriptions.get(key)
        if base is None:
            if len(self._descriptions) > 16:
                self._descriptions.clear()
            base = build_description(analysis, profile, state.launch, PipelineOverrides(),
                                     resident_blocks=resident, module=inputs.module, memory=memory)
            self._descriptions[key] = base
        d = base.with_changes(resident_blocks=resident)
        costs = pipeline_overrides(state, analysis).costs
        if costs:
            instructions = list(d.instructions)
            for index, (lam, Lam) in costs.items():
                ins = instructions[index]  # type: ignore[index]
                where = f"instruction {index} ({ins.name})"
                instructions[index] = replace(  # type: ignore[index]
                    ins,
                    lam=ins.lam if lam is None else to_fraction(lam, f"λ of {where}"),
                    Lam=ins.Lam if Lam is None else to_fraction(Lam, f"Λ of {where}"))
            d = d.with_changes(instructions=tuple(instructions))
        return d

    def _sweep(self, result: WorkbenchResult, max_blocks: int, policy: str,
               progress: Callable[[float], None]) -> None:
        """Cycles of every model at 1..max_blocks resident blocks per SM."""
        if result.manybsp is not None:
            result.sweep["Many-BSP"] = manybsp_sweep(result.manybsp, max_blocks)
        progress(0.1)
        d = result.description
        if d is None:
            return
        total_warps = d.blocks * d.warps_per_block
        points: dict[str, list[tuple[int, float]]] = {}
        for blocks in range(1, max_blocks + 1):
            # One occupancy at a time, so the cancel check (inside progress) runs between points.
            curves = occupancy_sweep(d, [blocks * d.warps_per_block], policy=policy)
            used = int(curves["occupancy"][0]) // d.warps_per_block
            for name, values in curves.items():
                if name == "occupancy":
                    continue
                wpc = float(values[0])
                title = "Pipeline simulation" if name == "pipeline" else PEER_TITLES.get(name, name)
                points.setdefault(title, []).append((used, total_warps / wpc if wpc > 0 else math.inf))
            progress(0.1 + 0.9 * blocks / max_blocks)
        result.sweep.update(points)


PEER_TITLES = {
    "roofline": "Roofline", "volkov": "Volkov", "mwp_cwp": "MWP-CWP", "mwp_cwp_star": "MWP-CWP*",
    "wfg": "WFG", "wfg_star": "WFG*", "gpumech_rr": "GPUMech (RR)", "gpumech_rr_star": "GPUMech* (RR)",
    "gpumech_gto": "GPUMech (GTO)",
}


def pipeline_overrides(state: WorkbenchState, analysis: KernelAnalysis) -> PipelineOverrides:
    """The BLOCK-table latency edits as the Pipeline model's Λ of the same instruction.

    A global access's latency is its ``lat_comm``, anything else's its ``lat_comp`` (Many-BSP keeps
    the other one at 0 for that row); row numbers are 1-based, the simulator's indices 0-based.
    """
    costs: dict[int | str, tuple[float | None, float | None]] = {}
    for row, cells in state.overrides.latencies.items():
        index = row - 1
        if not 0 <= index < len(analysis.classifications):
            continue
        c = analysis.classifications[index]
        is_global = c.is_global_memory and (c.is_load or c.is_store or c.is_atomic)
        key = "lat_comm" if is_global else "lat_comp"
        if key in cells:
            costs[index] = (None, cells[key])
    return PipelineOverrides(costs=costs, policy=state.policy)


def _manybsp_overrides(state: WorkbenchState, launch: Launch) -> Overrides:
    """The user's overrides, plus the chosen occupancy expressed as Many-BSP's ρ.

    000's ρ (eq. 21) is min{⌊max_thread_per_sm / n_t⌋, register and shared-memory terms}; capping
    ``max_thread_per_sm`` at γ·n_t makes ρ = min(γ, eq. 21) without touching the other terms, and
    the derivation then shows the capped figure, so the user sees how the occupancy entered.
    """
    if state.occupancy is None:
        return state.overrides
    ov = copy_overrides(state.overrides)
    ov.params.setdefault("max_thread_per_sm", state.occupancy * launch.threads_per_block)
    return ov


def manybsp_sweep(mb: ManyBspResult, max_blocks: int) -> list[tuple[int, float]]:
    """Many-BSP's kernel cycles at ρ = 1..max_blocks: eqs. 10-25 re-evaluated on the same
    supersteps with ``max_thread_per_sm`` capped at ρ·n_t (see :func:`_manybsp_overrides`)."""
    from engine.manybsp import Level1Input, evaluate

    steps = [Level1Input(s.comp, s.comm, s.ovh, s.iterations) for s in mb.level1]
    last_comm = mb.level2[-1].comm if mb.level2 else 0.0
    out = []
    for blocks in range(1, max(1, max_blocks) + 1):
        params = replace(mb.params, max_thread_per_sm=blocks * mb.params.n_t)
        out.append((blocks, float(evaluate(params, steps, last_comm).kernel_exec_cycle)))
    return out


# ---------------------------------------------------------------------------- files

NCU_METRIC = "gpc__cycles_elapsed.max"


def read_ncu_cycles(path: str | os.PathLike[str], kernel: str | None = None) -> float:
    """Measured kernel cycles from an Nsight Compute CSV (``ncu --csv``).

    Reads both layouts: the long one (``Metric Name``/``Metric Value`` columns, one metric per
    row) and the raw page (one column per metric, a units row under the header). When several
    launches are listed, the ones of ``kernel`` (matched on the ``Kernel Name`` column, mangled or
    demangled) are averaged; without a match, all of them.
    """
    source = os.fspath(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig", errors="replace")
    except OSError as exc:
        raise WarplineError(f"{source}: cannot read: {exc.strerror or exc}") from None
    # ncu prints "==PROF==" chatter before the table when stdout was captured whole.
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("==")]
    records = list(csv.DictReader(io.StringIO("\n".join(lines))))
    if not records:
        raise WarplineError(f"{source}: no table found (expected the CSV of `ncu --csv`)")
    values: list[tuple[str, float]] = []
    for line, rec in enumerate(records, start=2):
        name = rec.get("Kernel Name", "") or ""
        if "Metric Name" in rec:
            if (rec.get("Metric Name") or "").strip() != NCU_METRIC:
                continue
            raw = rec.get("Metric Value", "")
        elif NCU_METRIC in rec:
            raw = rec[NCU_METRIC]
        else:
            raise WarplineError(f"{source}: no {NCU_METRIC} column; profile with "
                                f"`ncu --csv --metrics {NCU_METRIC} ...`")
        cleaned = (raw or "").replace(",", "").strip()
        try:
            values.append((name, float(cleaned)))
        except ValueError:
            if line == 2 and "Metric Name" not in rec:
                continue   # the raw page's units row ("cycle")
            raise WarplineError(f"{source}: line {line}: {NCU_METRIC} value {raw!r} is not a number") from None
    if not values:
        raise WarplineError(f"{source}: no {NCU_METRIC} value in the file")
    if kernel:
        mine = [v for n, v in values if kernel in n or (n and n.split("(")[0] in kernel)]
        if mine:
            return sum(mine) / len(mine)
    return sum(v for _, v in values) / len(values)


def curves_csv(result: WorkbenchResult, path: str | os.PathLike[str] | None = None) -> str:
    """The occupancy sweep as CSV: one row per resident-blocks value, one column per model."""
    models = list(result.sweep)
    occupancies = sorted({occ for pts in result.sweep.values() for occ, _ in pts})
    table = {m: dict(pts) for m, pts in result.sweep.items()}
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["blocks_per_sm", *models])
    for occ in occupancies:
        writer.writerow([occ, *(repr(table[m][occ]) if occ in table[m] else "" for m in models)])
    text = buffer.getvalue()
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text
