"""The evaluation core: one call turns a kernel's inputs and the user's state into every figure.

The window's worker, every CLI command, ``validate`` and sessions call :meth:`Evaluator.evaluate`;
nothing else computes a model's cycles. It runs, in order:

1. the kernel analysis (loops, inferred trip counts), the memory-access analysis and the
   occupancy rules: the resident blocks every model runs at;
2. part ``timeline``: the Pipeline-model simulation with its trace and lane layout;
3. parts ``models`` and ``derivation``: Many-BSP (BLOCK table, supersteps, equations) and every
   other model of the registry, each as :class:`~engine.evaluation.figures.CycleFigures`;
4. part ``sweep`` (when asked): every model at each resident-blocks count;
5. part ``assumptions`` (when asked): the headline figure again with each assumed input at its
   alternative value (:mod:`engine.evaluation.assumptions`).

Before any of them, the launch's missing argument values are supplied by the compiler
conventions and the rule for unknown values (:mod:`engine.conventions`): every stage and model
reads :attr:`Evaluation.launch`, the state's launch with those values added, and every value
that is a guess is listed in :attr:`Evaluation.assumptions`.

``on_part`` receives a snapshot after each step, so a window redraws the chart before the slower
models finish. A stage that fails with a ``WarplineError`` records its message and lets the others
run. ``cancel`` is polled between stages and sweep points, and every few milliseconds while a
simulation runs (:class:`Cancelled`). Every simulation is bounded by ``max_warp_instructions``
and ``time_budget_s`` (see :mod:`engine.pipeline.simulator`): over the instruction budget a run is
sampled (whole waves, scaled, with a "bounded" warning) or refused (its models say why).

The evaluator caches what an edit does not change (profiles, analyses, the Many-BSP instruction
table, the unedited Pipeline description), keyed by the inputs and the launch.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engine.analysis import KernelAnalysis, analyze_kernel
from engine.conventions import complete_arguments, completed_launch, kernel_structure
from engine.errors import WarplineError
from engine.evaluation.assumptions import Effect, headline_model, list_assumptions
from engine.evaluation.context import ModelContext
from engine.evaluation.figures import CycleFigures, ModelResult
from engine.evaluation.manybsp_at import occupancy_overrides
from engine.evaluation.occupancy_sweep import Sweep, plan_blocks
from engine.evaluation.registry import (
    FAMILY_MANYBSP,
    MAX_COUNT,
    STAGE_TIMELINE,
    model,
    models,
    uncountable_instructions,
)
from engine.execution import ExecutionCancelled, cancellable
from engine.inputs import KernelInputs
from engine.launch import Launch
from engine.manybsp import ManyBspResult, manybsp_inputs, run_manybsp
from engine.manybsp.from_ptx import executed_shares, missing_params
from engine.manybsp.prediction import override_number
from engine.mechanisms import current as current_mechanisms
from engine.mechanisms import enabled, using
from engine.memory.executed import executed_memory, with_executed_trips
from engine.memory.traffic import kernel_traffic
from engine.occupancy import Occupancy, occupancy
from engine.pipeline.adapter import (
    PipelineOverrides,
    build_description,
    in_registers,
    issue_scales,
    issue_weights,
    kernel_sass,
    sm_context,
)
from engine.pipeline.description import KernelDescription, to_fraction
from engine.pipeline.dram_under_load import simulate_with_traffic
from engine.pipeline.simulator import (
    DEFAULT_MAX_WARP_INSTRUCTIONS,
    Limits,
    SimulationCancelled,
    limits,
)
from engine.profiles import Profile, list_profiles, load_profile
from engine.ptx.gc_pause import paused_gc
from engine.state import WorkbenchState
from engine.timeline.layout import layout_trace

CancelCheck = Callable[[], bool]          # True when the caller wants the work stopped
ProgressFn = Callable[[float, str], None]  # fraction done (0..1), what is running

PART_TIMELINE = "timeline"
PART_MODELS = "models"
PART_DERIVATION = "derivation"
PART_SWEEP = "sweep"
PART_ASSUMPTIONS = "assumptions"
PARTS = (PART_TIMELINE, PART_MODELS, PART_DERIVATION, PART_SWEEP, PART_ASSUMPTIONS)


class Cancelled(Exception):
    """The caller asked the running evaluation to stop (its result would be stale)."""


@dataclass
class Evaluation:
    """Everything computed for one state. Stage errors are messages, never exceptions.

    ``parts`` lists what is filled in so far (a snapshot handed to ``on_part`` may lack the later
    parts; a finished evaluation has every part it was asked for).
    """

    state: WorkbenchState
    profile: Profile | None
    analysis: KernelAnalysis | None
    occupancy: Occupancy | None
    resident_blocks: int                     # the occupancy every model ran at
    launch_source: str = ""
    memory: Any = None                       # engine.memory MemoryReport (None: not available)
    traffic: Any = None                      # engine.memory.traffic KernelTraffic of the launch
    # per instruction (0-based), the factor SASS puts on its issue cost (adapter.issue_scales)
    issue_weights: dict[int, float] = field(default_factory=dict)
    unroll: dict[str, int] = field(default_factory=dict)           # SASS unroll factor per loop
    # per instruction (0-based), where its SASS copies lie (SassMap.positions; empty without the
    # SASS map or with the sass_order mechanism off): the order a warp issues them in
    sass_positions: dict[int, tuple[int, ...]] = field(default_factory=dict)
    inferred_trips: dict[str, Any] = field(default_factory=dict)  # loop key -> TripCount, no overrides
    simulation: Any = None                   # engine.pipeline SimulationResult (with trace)
    # engine.pipeline.dram_under_load DramUnderLoad: the DRAM load the simulation was solved at (None: none)
    dram_under_load: Any = None
    description: KernelDescription | None = None
    timeline: Any = None                     # engine.timeline.lanes.TimelineLayout of the trace
    trace_names: list[str] = field(default_factory=list)   # instruction text per static index
    trace_units: list[str] = field(default_factory=list)   # subsystem names
    manybsp: ManyBspResult | None = None
    models: dict[str, ModelResult] = field(default_factory=dict)   # registry order
    sweep: Sweep | None = None
    errors: dict[str, str] = field(default_factory=dict)    # stage -> message
    warnings: list[str] = field(default_factory=list)
    parts: tuple[str, ...] = ()
    finished: bool = False                   # True on the evaluation returned at the end (not a snapshot)
    elapsed_s: float = 0.0
    # The launch every stage ran with: the state's, with the argument values it lacks supplied
    # (engine.conventions); None when the analysis failed.
    launch: Launch | None = None
    completion: Any = None                   # engine.conventions Completion: each supplied value
    assumptions: tuple[Any, ...] = ()        # engine.evaluation.assumptions Assumption, every guess
    effects: dict[str, Any] = field(default_factory=dict)   # assumption key -> Effect (part "assumptions")

    @property
    def run_launch(self) -> Launch:
        """The launch the models ran with (the state's when nothing was supplied)."""
        return self.launch if self.launch is not None else self.state.launch

    @property
    def max_blocks(self) -> int:
        return self.occupancy.blocks_per_sm if self.occupancy is not None else 0

    @property
    def launch_cycles(self) -> float:
        return self.profile.device.kernel_launch_cycles if self.profile is not None else 0.0

    @property
    def clock_mhz(self) -> float:
        return self.profile.device.clock_mhz if self.profile is not None else 0.0

    def figures(self, sm_cycles: float) -> CycleFigures:
        return CycleFigures(float(sm_cycles), self.launch_cycles, self.clock_mhz)

    def result(self, model_id: str) -> ModelResult | None:
        return self.models.get(model_id)

    def snapshot(self) -> Evaluation:
        """A copy whose containers the receiver owns (the evaluation goes on filling its own)."""
        return dataclasses.replace(self, models=dict(self.models), errors=dict(self.errors),
                                   warnings=list(self.warnings), effects=dict(self.effects), finished=False)


PartFn = Callable[[Evaluation, tuple[str, ...]], None]


def state_for(inputs: KernelInputs, *, occupancy: int | None = None, policy: str = "lrr",
              measured_cycles: float | None = None) -> WorkbenchState:
    """The state a front end starts from: the inputs' kernel, profile and launch."""
    profile = inputs.profile
    if profile is None:
        raise WarplineError("no GPU profile")
    name = profile.name if profile.path is None or profile.name in list_profiles() else str(profile.path)
    if occupancy is not None and occupancy < 1:
        raise WarplineError(f"occupancy {occupancy}: at least one resident block per SM")
    return WorkbenchState(kernel=inputs.kernel_name, profile=name, launch=inputs.launch,
                          occupancy=occupancy, policy=policy, measured_cycles=measured_cycles,
                          launch_source=inputs.launch_source)


class Evaluator:
    """Runs the models for a state; caches what does not change between edits."""

    CACHE_LIMIT = 32
    DESCRIPTION_LIMIT = 64     # (kernel, launch, resident blocks): a sweep's points and their edits

    def __init__(self) -> None:
        self._profiles: dict[str, Profile] = {}
        self._analyses: dict[tuple, KernelAnalysis] = {}
        # (owner, value) per key holding id(owner): see _held
        self._tables: dict[tuple, tuple[Any, Any]] = {}
        self._descriptions: dict[tuple, tuple[Any, KernelDescription]] = {}
        self._sass_maps: dict[tuple, tuple[Any, tuple[Any, str]]] = {}
        self._traffic_cache: dict[tuple, tuple[KernelDescription, Any]] = {}
        self._memory: dict[tuple, tuple[Any, tuple[Any, str]]] = {}
        self._completions: dict[tuple, tuple[Any, Any]] = {}
        self._structures: dict[tuple, KernelAnalysis] = {}

    # ------------------------------------------------------------------ cached inputs

    def profile(self, name: str, given: Profile | None = None) -> Profile:
        if name not in self._profiles:
            if given is not None and name in (given.name, str(given.path)):
                self._profiles[name] = given
            else:
                self._profiles[name] = load_profile(name)
        return self._profiles[name]

    def analysis(self, inputs: KernelInputs, launch: Launch) -> KernelAnalysis:
        # The analysis reads the launch (argument values, trip overrides); the Launch repr
        # covers every field, so equal launches share one analysis.
        key = (id(inputs.function), inputs.kernel_name, repr(launch), current_mechanisms())
        if key not in self._analyses:
            _bounded(self._analyses, self.CACHE_LIMIT)
            self._analyses[key] = analyze_kernel(inputs.function, launch, inputs.module)
        return self._analyses[key]

    def structure(self, inputs: KernelInputs) -> KernelAnalysis:
        """The kernel's CFG, def-use graph and classes without launch-dependent trip counts (what
        the conventions read), once per kernel."""
        key = (id(inputs.function), inputs.kernel_name)
        if key not in self._structures:
            _bounded(self._structures, self.CACHE_LIMIT)
            self._structures[key] = kernel_structure(inputs.function, inputs.module)
        return self._structures[key]

    def completion(self, inputs: KernelInputs, launch: Launch, analysis: KernelAnalysis) -> tuple[Any, Any]:
        """(Completion, alternatives) of ``launch``'s arguments (engine.conventions), once per
        kernel and launch."""
        key = (id(inputs.function), inputs.kernel_name, repr(launch))
        hit = _held(self._completions, key, inputs.function)
        if hit is None:
            _bounded(self._completions, self.CACHE_LIMIT)
            hit = _hold(self._completions, key, inputs.function,
                        complete_arguments(inputs.function, inputs.module, launch, analysis))
        return hit

    def memory(self, inputs: KernelInputs, analysis: KernelAnalysis, launch: Launch) -> tuple[Any, str]:
        """The memory-access analysis and why it is missing if it is (keyed by the analysis: an
        edit of a latency or of the occupancy reuses it)."""
        key = (id(analysis), current_mechanisms())
        hit = _held(self._memory, key, analysis)
        if hit is None:
            _bounded(self._memory, self.CACHE_LIMIT)
            try:
                found: tuple[Any, str] = (executed_memory(analysis, launch, inputs.module), "")
            except WarplineError as exc:
                found = (None, f"memory-access analysis failed ({exc}); coalesced "
                               "accesses and the profile's memory costs assumed")
            hit = _hold(self._memory, key, analysis, found)
        return hit

    # ------------------------------------------------------------------ evaluation

    def prepare(self, inputs: KernelInputs, state: WorkbenchState | None = None) -> Evaluation:
        """Only what every model needs first: the launch completed, the analysis, occupancy,
        memory accesses and the assumptions (``info``); no model runs."""
        with paused_gc(promote=True):
            return self._prepare(inputs, state or state_for(inputs))

    def evaluate(self, inputs: KernelInputs, state: WorkbenchState | None = None, *,
                 sweep: bool = False, sweep_blocks: Sequence[int] | None = None,
                 sweep_warps: Sequence[int] | None = None,
                 only: Sequence[str] | None = None, trace: bool = True,
                 cycle_budget: float | None = None,
                 cancel: CancelCheck | None = None, progress: ProgressFn | None = None,
                 on_part: PartFn | None = None,
                 max_warp_instructions: int | None = DEFAULT_MAX_WARP_INSTRUCTIONS,
                 time_budget_s: float | None = None, effects: bool = False,
                 effects_max_instructions: int | None = None, mechanisms: Any = None) -> Evaluation:
        """Every model for ``state`` (default: :func:`state_for` the inputs).

        ``sweep``: also the occupancy sweep (``sweep_blocks``/``sweep_warps`` choose its points;
        default every reachable count). ``only``: model ids to run (default all). ``trace``:
        keep the simulation's trace and lay out the timeline. ``cycle_budget``: stop the
        simulation after that many cycles (its figure is then a lower bound, and says so).
        ``max_warp_instructions``/``time_budget_s``: the bounds of each simulation (None: none).
        ``effects``: also part ``assumptions``, how far each assumed input moves the headline figure.
        ``effects_max_instructions``: with ``effects``, evaluate the alternatives only when the
        kernel's PTX instructions times the number of alternatives (what re-evaluating them costs:
        each is a whole evaluation again) is at most this; otherwise each effect says it was not
        evaluated and why (None: no bound). A count, not a time, so the answer does not depend on
        the machine's load.
        ``mechanisms``: the :class:`engine.mechanisms.MechanismConfig` to model with (default: the
        one in effect, every mechanism on unless a caller switched some off); it is part of every
        cache key.
        """
        bounds = Limits(max_warp_instructions, time_budget_s, cancel)
        try:
            # paused: the collector's passes over a large kernel's objects cost a third of the time
            with limits(bounds), cancellable(cancel), using(mechanisms or current_mechanisms()), \
                    paused_gc(promote=True):
                return self._evaluate(inputs, state, sweep, sweep_blocks, sweep_warps, only, trace,
                                      cycle_budget, cancel, progress, on_part, effects, effects_max_instructions)
        except (SimulationCancelled, ExecutionCancelled):
            raise Cancelled() from None

    def _evaluate(self, inputs: KernelInputs, state: WorkbenchState | None, sweep: bool,
                  sweep_blocks: Sequence[int] | None, sweep_warps: Sequence[int] | None,
                  only: Sequence[str] | None, trace: bool, cycle_budget: float | None,
                  cancel: CancelCheck | None, progress: ProgressFn | None,
                  on_part: PartFn | None, effects: bool = False,
                  effects_max_instructions: int | None = None) -> Evaluation:
        started = time.perf_counter()
        state = state or state_for(inputs)
        wanted = [m for m in models() if only is None or m.id in only]
        if only is not None:
            for model_id in only:
                model(model_id)      # unknown ids are an error, not silently nothing

        def step(fraction: float, what: str) -> None:
            if cancel is not None and cancel():
                raise Cancelled()
            if progress is not None:
                progress(fraction, what)

        step(0.0, "analysis")
        ev = self._prepare(inputs, state)
        done: list[str] = []

        def deliver(*parts: str) -> None:
            done.extend(parts)
            ev.parts = tuple(done)
            ev.elapsed_s = time.perf_counter() - started
            if on_part is not None:
                on_part(ev.snapshot(), parts)

        ready = ev.profile is not None and ev.analysis is not None and ev.resident_blocks > 0
        if ready:
            step(0.1, "simulation")
            try:
                self._describe(inputs, ev)
                if any(m.id == "pipeline" for m in wanted) or trace:
                    self._simulate(ev, trace, cycle_budget)
            except WarplineError as exc:
                ev.errors["simulation"] = str(exc)
        self._predict(ev, [m for m in wanted if m.stage == STAGE_TIMELINE])
        deliver(PART_TIMELINE)

        step(0.3, "Many-BSP")
        if ready and any(m.family == FAMILY_MANYBSP for m in wanted):
            try:
                ev.manybsp = self._manybsp(inputs, ev)
                ev.warnings.extend(ev.manybsp.warnings)
                if ev.manybsp.refused:
                    ev.errors["Many-BSP"] = ev.manybsp.refused   # the model's figure says why it has none
            except WarplineError as exc:
                ev.errors["Many-BSP"] = str(exc)
        step(0.45, "analytical models")
        self._predict(ev, wanted)
        deliver(PART_MODELS, PART_DERIVATION)

        if sweep and ready and ev.description is not None:
            step(0.5, "occupancy sweep")
            ev.sweep = self._sweep(inputs, ev, wanted, sweep_blocks, sweep_warps,
                                   lambda f: step(0.5 + 0.5 * f, "occupancy sweep"))
            deliver(PART_SWEEP)
        if effects and ready and ev.assumptions:
            step(0.9, "assumptions")
            ev.effects = self._effects(inputs, ev, cancel, _effects_refusal(ev, effects_max_instructions))
            deliver(PART_ASSUMPTIONS)
        step(1.0, "done")
        ev.elapsed_s = time.perf_counter() - started
        ev.finished = True
        return ev

    # ------------------------------------------------------------------ stages

    def _prepare(self, inputs: KernelInputs, state: WorkbenchState) -> Evaluation:
        launch = state.launch
        errors: dict[str, str] = {}
        profile: Profile | None = None
        analysis: KernelAnalysis | None = None
        occ: Occupancy | None = None
        inferred: dict[str, Any] = {}
        completion: Any = None
        alternatives: dict[str, Any] = {}
        try:
            profile = self.profile(state.profile, inputs.profile)
        except WarplineError as exc:
            errors["profile"] = str(exc)
        try:
            # the arguments the launch lacks, supplied before anything reads them (the CFG and
            # def-use graph they are inferred from do not depend on the launch)
            completion, alternatives = self.completion(inputs, launch, self.structure(inputs))
            launch = completed_launch(launch, completion)
            analysis = self.analysis(inputs, launch)
            # What the analysis infers without the user's trip counts, shown beside them.
            plain = self.analysis(inputs, replace(launch, trip_overrides={})) if launch.trip_overrides \
                else analysis
            inferred = dict(plain.trip_counts)
        except WarplineError as exc:
            errors["analysis"] = str(exc)
        resources = _resources(inputs, launch)
        if profile is not None:
            try:
                occ = occupancy(profile, launch.threads_per_block, resources.registers,
                                resources.static_shared_bytes + launch.smem_dynamic)
            except WarplineError as exc:
                errors["occupancy"] = str(exc)
        max_blocks = occ.blocks_per_sm if occ is not None else 0
        resident = max_blocks if state.occupancy is None else max(1, min(state.occupancy, max_blocks))
        if max_blocks == 0:
            resident = 0
        ev = Evaluation(state=state, profile=profile, analysis=analysis, occupancy=occ, resident_blocks=resident,
                        launch_source=state.launch_source or inputs.launch_source, errors=errors,
                        inferred_trips=inferred, launch=launch if analysis is not None else None,
                        completion=completion)
        if state.occupancy is not None and max_blocks and state.occupancy > max_blocks:
            ev.warnings.append(f"occupancy {state.occupancy} blocks/SM cannot be reached: at most {max_blocks} "
                               f"fit ({occ.limiter if occ else '?'}); {max_blocks} used")
        if profile is not None and occ is not None and max_blocks == 0:
            errors["occupancy"] = (f"the block does not fit on an SM of {profile.device.name} "
                                   f"(limited by {occ.limiter})")
        if analysis is not None and profile is not None:
            ev.memory, why = self.memory(inputs, analysis, launch)
            if why:
                ev.warnings.append(why)
            execution = getattr(ev.memory, "execution", None)
            if execution is not None and execution.ok and not launch.trip_overrides:
                # the loops as the sampled warps ran them: every model counts the same passes
                ev.analysis = with_executed_trips(analysis, execution)
                ev.inferred_trips = dict(ev.analysis.trip_counts)
        if analysis is not None:
            ev.assumptions = list_assumptions(ev, alternatives)
        return ev

    def _describe(self, inputs: KernelInputs, ev: Evaluation) -> None:
        """The Pipeline-model description for this state.

        Building it from PTX costs every instruction a profile look-up (tens of ms), yet a latency
        edit alters one Λ only. So the unedited description is built once per (kernel, profile,
        launch, resident blocks) and the edits are applied to a copy, exactly as the adapter's
        index-keyed cost overrides would. The resident blocks are part of the key because the
        memory costs depend on them (the L1 left beside the blocks' shared memory, the waves that
        re-read data in L2): the occupancy sweep builds each of its points the same way, so a point
        of the curve is the prediction at that occupancy.
        """
        profile, analysis = ev.profile, ev.analysis
        assert profile is not None and analysis is not None
        sass, no_sass = self._sass(inputs, profile) if enabled("sass") else (None, "")
        if no_sass:
            ev.warnings.append(f"SASS not used ({no_sass}): each PTX instruction issues once")
        if sass is not None:
            kept = in_registers(analysis, sass)
            ev.issue_weights = issue_scales(analysis, profile, issue_weights(analysis, sass, kept), kept)
        else:
            ev.issue_weights = {}
        ev.unroll = dict(sass.unroll) if sass is not None else {}
        ev.sass_positions = dict(sass.positions) if sass is not None and enabled("sass_order") else {}
        base, d = self._description_at(inputs, ev, ev.resident_blocks)
        ev.description = d
        ev.traffic = self._traffic(inputs, ev, base, ev.resident_blocks)
        ev.trace_names = [ins.name for ins in d.instructions]
        ev.trace_units = list(d.subsystems)
        ev.warnings.extend(d.notes)

    def _description_at(self, inputs: KernelInputs, ev: Evaluation, resident: int
                        ) -> tuple[KernelDescription, KernelDescription]:
        """(unedited, edited) description of ``ev``'s state at ``resident`` blocks per SM."""
        state, profile, analysis = ev.state, ev.profile, ev.analysis
        assert profile is not None and analysis is not None
        key = (id(analysis), profile.name, str(profile.path), repr(ev.run_launch), resident, current_mechanisms())
        base = _held(self._descriptions, key, analysis)
        if base is None:
            _bounded(self._descriptions, self.DESCRIPTION_LIMIT)
            sass = self._sass(inputs, profile)[0] if enabled("sass") else None
            base = _hold(self._descriptions, key, analysis,
                         build_description(analysis, profile, ev.run_launch, PipelineOverrides(),
                                           resident_blocks=resident, module=inputs.module, memory=ev.memory,
                                           sass=sass))
        d = base.with_changes(resident_blocks=resident)
        costs = pipeline_overrides(state, analysis).costs
        if costs:
            instructions = list(d.instructions)
            for index, (lam, Lam) in costs.items():
                ins = instructions[index]  # type: ignore[index]
                where = f"instruction {index + 1} ({ins.name})"  # type: ignore[operator]
                # a Λ the user typed is the latency, whatever the DRAM load
                instructions[index] = replace(  # type: ignore[index]
                    ins,
                    lam=ins.lam if lam is None else to_fraction(lam, f"λ of {where}"),
                    Lam=ins.Lam if Lam is None else to_fraction(Lam, f"Λ of {where}"),
                    dram_wait=ins.dram_wait if Lam is None else 0.0)  # type: ignore[union-attr]
            d = d.with_changes(instructions=tuple(instructions))
        return base, d

    def _sass(self, inputs: KernelInputs, profile: Profile) -> tuple[Any, str]:
        """The kernel's SASS map for the profile's GPU, or None and why (``kernel_sass``), once
        per module, kernel and architecture: an edit never re-runs ptxas."""
        key = (id(inputs.module), inputs.kernel_name, profile.device.sm_version)
        hit = self._sass_maps.get(key)
        if hit is None or hit[0] is not inputs.module:
            _bounded(self._sass_maps, self.CACHE_LIMIT)
            hit = self._sass_maps[key] = (inputs.module, kernel_sass(inputs.module, inputs.kernel_name, profile))
        return hit[1]

    def _traffic(self, inputs: KernelInputs, ev: Evaluation, base: KernelDescription, resident: int) -> Any:
        """Bytes per memory level for the whole launch at ``resident`` blocks per SM (None without
        a memory analysis). It depends on the unedited description's paths and the occupancy, not
        on latency edits: computed once per (description, resident blocks)."""
        if ev.memory is None or ev.profile is None or ev.analysis is None:
            return None
        key = (id(base), resident)
        hit = self._traffic_cache.get(key)
        if hit is not None and hit[0] is base:
            return hit[1]
        launch, device = ev.run_launch, ev.profile.device
        per_warp = uncountable_instructions(base)
        if per_warp is not None:
            # Nested trip counts whose product leaves 64 bits (10^10 x 10^10): no per-instruction
            # count exists to weigh the traffic with; the rest of the evaluation goes on.
            why = (f"memory traffic not computed (bounded): one warp would issue {per_warp:,} "
                   "instructions, beyond 64-bit counts; lower the trip counts")
            if why not in ev.warnings:      # once, however many occupancies the sweep asks for
                ev.warnings.append(why)
            return None
        counts = base.access_counts()
        sm = sm_context(ev.analysis, ev.profile, launch, inputs.module, resident, ev.memory)
        traffic = kernel_traffic(ev.memory, ev.profile, sm, {i: float(n) for i, n in enumerate(counts)},
                                 launch.n_blocks * base.warps_per_block, min(device.sm_count, launch.n_blocks))
        _bounded(self._traffic_cache, self.CACHE_LIMIT)
        self._traffic_cache[key] = (base, traffic)
        return traffic

    def _simulate(self, ev: Evaluation, trace: bool, cycle_budget: float | None = None) -> None:
        d = ev.description
        assert d is not None
        if cycle_budget is not None and cycle_budget * d.ticks_per_cycle() >= MAX_COUNT:
            # further than the simulator's 64-bit clock counts (1e308): no run gets there, so the
            # budget is no limit at all
            cycle_budget = None
        sim, ev.dram_under_load = simulate_with_traffic(d, ev.traffic, ev.profile, policy=ev.state.policy,
                                                    trace=trace, cycle_budget=cycle_budget)
        ev.simulation = sim
        if sim.note:
            ev.warnings.append(f"simulation {sim.note}")
        if sim.stopped_early:
            ev.warnings.append(f"the simulation stopped at its cycle budget ({cycle_budget:g}): its cycles "
                               "are a lower bound")
        if sim.trace is not None and sim.trace.truncated:
            ev.warnings.append("the simulation trace hit its row limit; the timeline shows its start")
        if sim.trace is not None:
            # The lane layout is plain numpy work: done here, off the UI thread.
            ev.timeline = layout_trace(sim.trace, ev.trace_names, None, float(sim.cycles), ev.trace_units)

    def _manybsp(self, inputs: KernelInputs, ev: Evaluation) -> ManyBspResult:
        """Many-BSP at the resident blocks every model runs at (:mod:`manybsp_at`); the
        instruction table is cached, so an edit re-runs the BLOCK table, supersteps and equations."""
        profile, analysis, state = ev.profile, ev.analysis, ev.state
        assert profile is not None and analysis is not None
        launch = ev.run_launch
        resources = _resources(inputs, launch)
        key = (id(analysis), current_mechanisms(), profile.name, str(profile.path), repr(launch), resources.registers,
               resources.static_shared_bytes)
        tables = _held(self._tables, key, analysis)
        if tables is None:
            _bounded(self._tables, self.CACHE_LIMIT)
            tables = _hold(self._tables, key, analysis, manybsp_inputs(analysis, profile, launch, resources, ev.memory))
        rows, specs, warnings, params = tables
        overrides = occupancy_overrides(state.overrides, ev.resident_blocks, launch)
        # A profile without a [manybsp] section runs on derived figures; one it cannot derive
        # refuses the prediction (result.refused) but keeps the BLOCK table and the supersteps.
        result = run_manybsp(rows, params, specs, overrides, warnings, missing=missing_params(profile, rows))
        result.kernel_name = inputs.kernel_name
        result.executed_share = executed_shares(specs, getattr(ev.memory, "execution", None), launch)
        return result

    def _context(self, ev: Evaluation, description: KernelDescription | None, blocks: int,
                 simulation: Any, traffic: Any) -> ModelContext:
        return ModelContext(description=description, resident_blocks=blocks, policy=ev.state.policy,
                            manybsp=ev.manybsp, simulation=simulation, profile=ev.profile,
                            issue_weights=ev.issue_weights, unroll=ev.unroll,
                            sass_positions=ev.sass_positions, traffic=traffic)

    def _predict(self, ev: Evaluation, wanted: Sequence[Any]) -> None:
        ctx = self._context(ev, ev.description, ev.resident_blocks, ev.simulation, ev.traffic)
        for spec in wanted:
            if spec.id not in ev.models:
                ev.models[spec.id] = self._one(ev, spec, ctx)
        order = {m.id: k for k, m in enumerate(models())}
        ev.models = dict(sorted(ev.models.items(), key=lambda item: order.get(item[0], len(order))))

    def _one(self, ev: Evaluation, spec: Any, ctx: ModelContext) -> ModelResult:
        why = _blocked(ev, spec.id)
        if why:
            return ModelResult(spec.id, None, error=why)
        try:
            cycles = spec.predict(ctx)
        except WarplineError as exc:
            return ModelResult(spec.id, None, error=str(exc))
        note = ""
        details: dict[str, Any] = {}
        if spec.id == "manybsp" and ev.manybsp is not None:
            note = f"eq. {ev.manybsp.prediction.branch.removeprefix('eq. ')}"
        elif spec.id == "manybsp_star":
            prediction = ctx.shared("manybsp_star", lambda: None)
            if prediction is not None:
                details["derivation"] = list(prediction.quantities.values())
                note = prediction.branch
        elif spec.id == "pipeline" and ctx.simulation is not None:
            note = f"{ev.resident_blocks} blocks/SM, {ev.state.policy}"
            if ctx.simulation.stopped_early:
                note += ", stopped at the cycle budget (lower bound)"
            if ctx.simulation.sampled_blocks:
                note += f", bounded: {ctx.simulation.sampled_blocks:,} blocks simulated, extrapolated"
            if ev.dram_under_load is not None:
                note += f"; {ev.dram_under_load.describe()}"
        return ModelResult(spec.id, ev.figures(cycles), note=note, details=details)

    def _sweep(self, inputs: KernelInputs, ev: Evaluation, wanted: Sequence[Any], blocks: Sequence[int] | None,
               warps: Sequence[int] | None, progress: Callable[[float], None]) -> Sweep:
        d = ev.description
        assert d is not None
        chosen, notes = plan_blocks(ev.max_blocks, d.blocks, d.warps_per_block, blocks, warps)
        sweep = Sweep(blocks=chosen, warps_per_block=d.warps_per_block, notes=notes)
        for spec in wanted:
            sweep.figures[spec.id] = []
        for k, b in enumerate(chosen):
            same = b == ev.resident_blocks
            if same:
                at_b, traffic = d, ev.traffic
            else:
                base_b, at_b = self._description_at(inputs, ev, b)
                traffic = self._traffic(inputs, ev, base_b, b)
            ctx = self._context(ev, at_b, b, ev.simulation if same else None, traffic)
            for spec in wanted:
                result = ev.models[spec.id] if same and spec.id in ev.models else self._one(ev, spec, ctx)
                sweep.figures[spec.id].append(result.figures)
                if result.figures is None and result.error:
                    sweep.errors.setdefault(spec.id, result.error)
            progress((k + 1) / max(1, len(chosen)))
        return sweep


    def assumption_effects(self, inputs: KernelInputs, ev: Evaluation, cancel: CancelCheck | None = None,
                           max_warp_instructions: int | None = DEFAULT_MAX_WARP_INSTRUCTIONS,
                           time_budget_s: float | None = None) -> Evaluation:
        """``ev`` (a finished evaluation) with part ``assumptions`` added: the window's worker runs
        it after delivering the rest, so that nothing waits for these extra evaluations."""
        out = ev.snapshot()
        if not ev.assumptions or ev.analysis is None or ev.profile is None:
            return out
        try:
            with limits(Limits(max_warp_instructions, time_budget_s, cancel)):
                out.effects = self._effects(inputs, ev, cancel)
        except SimulationCancelled:
            raise Cancelled() from None
        out.parts = (*ev.parts, PART_ASSUMPTIONS)
        out.finished = True
        return out

    def _effects(self, inputs: KernelInputs, ev: Evaluation, cancel: CancelCheck | None,
                 refusal: str = "") -> dict[str, Any]:
        """The headline figure with each assumed input at its alternative value: the state's
        launch with that input given (what is derived from it follows), one headline model, no
        trace; a failed alternative records why, and with ``refusal`` none is evaluated (each
        effect says why)."""
        headline = headline_model(ev)
        if headline is None:
            return {}
        base = ev.models[headline].figures
        assert base is not None
        out: dict[str, Any] = {}
        for assumption in ev.assumptions:
            change = assumption.alternative
            if change is None:
                continue
            if refusal:
                out[assumption.key] = Effect(headline, base.kernel_cycles, None, refusal)
                continue
            if cancel is not None and cancel():
                raise Cancelled()
            try:
                state = replace(ev.state, launch=change.apply(ev.state.launch))
                other = self._evaluate(inputs, state, False, None, None, [headline], False, None, cancel, None, None)
                figures = other.models[headline].figures
                out[assumption.key] = Effect(headline, base.kernel_cycles,
                                             figures.kernel_cycles if figures is not None else None,
                                             other.models[headline].error if figures is None else "")
            except WarplineError as exc:
                out[assumption.key] = Effect(headline, base.kernel_cycles, None, str(exc))
        return out


def _effects_refusal(ev: Evaluation, max_instructions: int | None) -> str:
    """Why the assumptions' effects are not evaluated (or ''): re-evaluating the kernel once per
    alternative would go through more than ``max_instructions`` PTX instructions in all."""
    if max_instructions is None or ev.analysis is None:
        return ""
    alternatives = sum(1 for a in ev.assumptions if a.alternative is not None)
    size = len(ev.analysis.function.instructions)
    if alternatives * size <= max_instructions:
        return ""
    return (f"{alternatives} more evaluation{'s' if alternatives != 1 else ''} of this {size:,}-instruction kernel "
            f"would pass the {max_instructions:,} instructions re-evaluated for effects; --effects evaluates "
            f"{'them' if alternatives != 1 else 'it'} anyway")


def _blocked(ev: Evaluation, model_id: str) -> str:
    """Why no model can run (a failed earlier stage), or ''."""
    for stage in ("profile", "analysis", "occupancy"):
        if stage in ev.errors:
            return ev.errors[stage]
    if model_id == "manybsp":
        return ev.errors.get("Many-BSP", "")
    if ev.description is None:
        return ev.errors.get("simulation", "no Pipeline-model description")
    if model_id == "pipeline" and "simulation" in ev.errors:
        return ev.errors["simulation"]
    return ""


def _resources(inputs: KernelInputs, launch: Launch) -> Any:
    resources = inputs.resources
    if launch.regs_per_thread is not None and launch.regs_per_thread != resources.registers:
        resources = replace(resources, registers=launch.regs_per_thread, source="override")
    return resources


def _held(cache: dict[Any, tuple[Any, Any]], key: Any, owner: Any) -> Any:
    """The value cached under ``key`` for ``owner`` (None if none). Keys hold ``id(owner)``; the
    entry holds ``owner`` itself, so that while it is cached no other object can get its id (an
    analysis freed and a new one at the same address would otherwise read the old one's entry)."""
    entry = cache.get(key)
    if entry is None or entry[0] is not owner:
        return None
    return entry[1]


def _hold(cache: dict[Any, tuple[Any, Any]], key: Any, owner: Any, value: Any) -> Any:
    cache[key] = (owner, value)
    return value


def _bounded(cache: dict, limit: int) -> None:
    if len(cache) >= limit:
        cache.clear()


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
            # finite, >= 0, <= MAX_CYCLES (a ModelError otherwise: the stage records it)
            costs[index] = (None, override_number(cells[key], f"override of row {row}, {key}"))
    return PipelineOverrides(costs=costs, policy=state.policy)


def evaluate(inputs: KernelInputs, state: WorkbenchState | None = None, **options: Any) -> Evaluation:
    """One evaluation without a cache to keep (the CLI, ``validate``): see :meth:`Evaluator.evaluate`."""
    return Evaluator().evaluate(inputs, state, **options)
