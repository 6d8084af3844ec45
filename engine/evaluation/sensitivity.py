"""What-if sensitivity: how much a model's kernel cycles move when one figure of the GPU moves.

Each parameter is one knob of the GPU profile (or the launch's occupancy): every latency class
of the kernel's instructions, each memory level's latency and bandwidth, the SM clock and the
resident blocks per SM. For a step of ±X % the knob is scaled by (1 ± X) in a copy of the profile
(or the state), and the copy goes through :meth:`Evaluator.evaluate` like any other state: the
figures are the models' own, nothing is estimated here. The rows are ranked by the larger of the
two changes, the tornado chart's order.

The knobs (a knob the kernel does not use is left out and named in ``notes``):

* **latency classes**: the Λ and ``lat_comp``/``lat_comm`` of a unit's class defaults
  (``[units.<unit>]``) and of every ``[[instruction]]`` rule the kernel's instructions of that unit
  match (ALU, FP64, SFU, tensor, branch, barrier); shared memory (``shared_Lam`` and the rules of
  the kernel's shared accesses); each level a global access is served from (``l1_Lam``,
  ``l2_Lam``, ``dram_Lam`` with ``global_Lam`` and Many-BSP's ``mem_lat``), and all three together
  (the global-load latency);
* **bandwidth** of L1 and shared memory (``l1_lam``, ``l1_line_lam``, ``l1_request_lam``,
  ``l1_fill_lam``, ``shared_lam``, ``local_l1_lam``), L2 (``l2_lam``) and DRAM (``dram_lam``,
  ``global_lam``): bandwidth × (1 ± X) is each λ ÷ (1 ± X);
* **SM clock** × (1 ± X): L2 and DRAM keep their time in nanoseconds, so their latencies and λ
  in SM cycles scale with the clock (assumed: the profiles measure them at one clock only);
  kernel cycles and µs then move apart, and both are given;
* **occupancy**: resident blocks per SM × (1 ± X), rounded, at least one block either way,
  within 1 and the most that fit.

The DRAM latency added under load (``[pipeline.dram_loaded]``) and the multi-line extras are
measured additions and are not scaled.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engine.errors import WarplineError
from engine.evaluation.core import Cancelled, Evaluation, Evaluator, state_for
from engine.evaluation.provenance import comment_lines
from engine.evaluation.registry import model as model_spec
from engine.evaluation.verdict import explain
from engine.fileio import csv_text
from engine.inputs import KernelInputs
from engine.state import WorkbenchState
from engine.units import MemorySpace, Unit

DEFAULT_STEP = 0.10
MAX_STEP = 0.9                 # a latency or bandwidth scaled by 1 - 0.9 is still positive
DEFAULT_MODEL = "pipeline"

GROUP_LATENCY = "latency"
GROUP_BANDWIDTH = "bandwidth"
GROUP_CLOCK = "clock"
GROUP_OCCUPANCY = "occupancy"

# memory levels beyond the SM: their time is nanoseconds, their cycles follow the SM clock
_OFF_SM_KEYS = ("l2_Lam", "l2_lam", "dram_Lam", "dram_lam", "global_Lam", "global_lam")
_LEVEL_LATENCY = {"L1": ("l1_Lam",), "L2": ("l2_Lam",), "DRAM": ("dram_Lam", "global_Lam")}
_LEVEL_BANDWIDTH = {"L1": ("l1_lam", "l1_line_lam", "l1_request_lam", "l1_fill_lam", "shared_lam",
                           "local_l1_lam"), "L2": ("l2_lam",),
                    "DRAM": ("dram_lam", "global_lam")}
_UNIT_TITLES = {Unit.ALU: "ALU", Unit.FP64: "FP64", Unit.SFU: "SFU", Unit.TENSOR: "tensor",
                Unit.CONTROL: "branch", Unit.BARRIER: "barrier"}


@dataclass(frozen=True)
class Parameter:
    """One knob. ``memory_keys`` are ``[pipeline.memory]`` keys; ``unit`` a unit whose class
    defaults move; ``rules`` the patterns of the ``[[instruction]]`` rules that move; ``bandwidth``:
    the keys are λ (scaled by the inverse factor)."""

    key: str
    title: str
    group: str
    memory_keys: tuple[str, ...] = ()
    unit: Unit | None = None
    rules: frozenset[str] = frozenset()
    manybsp_mem_lat: bool = False
    bandwidth: bool = False
    base_text: str = ""


@dataclass(frozen=True)
class SensitivityRow:
    parameter: Parameter
    minus: float | None            # kernel cycles at (1 - step)
    plus: float | None             # kernel cycles at (1 + step)
    minus_us: float | None = None
    plus_us: float | None = None
    note: str = ""                 # why a side has no figure, or what the step became

    def delta(self, side: float | None, base: float) -> float | None:
        return None if side is None else side - base

    def swing(self, base: float) -> float:
        """The larger change either way (the tornado's ranking key)."""
        return max((abs(v - base) for v in (self.minus, self.plus) if v is not None), default=0.0)


@dataclass
class Sensitivity:
    model: str
    step: float
    base_kernel_cycles: float
    base_us: float | None
    rows: list[SensitivityRow]          # ranked, largest swing first
    notes: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    evaluations: int = 0
    verdict: str = ""                   # the base evaluation's bottleneck sentence
    source: list[str] = field(default_factory=list)   # what it ran on (provenance.comment_lines)

    def summary(self) -> str:
        """The most sensitive knob in one sentence; where the global-load latency is not first,
        where it ranks and what the simulation says limits the kernel instead."""
        if not self.rows:
            return "No parameter varied."
        base = self.base_kernel_cycles
        top = self.rows[0]
        swing = 100.0 * top.swing(base) / base if base else 0.0
        text = (f"Most sensitive to the {top.parameter.title}: up to {swing:.1f} % of the kernel cycles "
                f"for a ±{100 * self.step:g} % change.")
        rank = next((k for k, r in enumerate(self.rows, 1) if r.parameter.key == "latency:global"), None)
        if rank is not None and rank > 1:
            latency = self.rows[rank - 1]
            text += (f" The global-load latency ranks #{rank} ({100.0 * latency.swing(base) / base:.1f} %)"
                     + (f"; the simulation's verdict: {self.verdict}" if self.verdict else "."))
        return text

    def ranked_keys(self) -> list[str]:
        return [r.parameter.key for r in self.rows]

    def records(self) -> list[dict[str, Any]]:
        """One dict per row, with the CSV's column names."""
        base = self.base_kernel_cycles
        out = []
        # cycles to a tenth, µs to a thousandth, percentages to a hundredth (as every export)
        def rnd(v: float | None, digits: int) -> float | None:
            return None if v is None else round(v, digits)

        for rank, r in enumerate(self.rows, 1):
            def pct(v: float | None) -> float | None:
                return None if v is None or base == 0 else round(100.0 * (v - base) / base, 2)
            out.append({
                "rank": rank, "parameter": r.parameter.key, "title": r.parameter.title,
                "group": r.parameter.group, "base": r.parameter.base_text,
                "minus_kernel_cycles": rnd(r.minus, 1), "plus_kernel_cycles": rnd(r.plus, 1),
                "minus_delta_cycles": rnd(r.delta(r.minus, base), 1),
                "plus_delta_cycles": rnd(r.delta(r.plus, base), 1),
                "minus_delta_percent": pct(r.minus), "plus_delta_percent": pct(r.plus),
                "minus_us": rnd(r.minus_us, 3), "plus_us": rnd(r.plus_us, 3), "note": r.note,
            })
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "step": self.step, "base_kernel_cycles": self.base_kernel_cycles,
                "base_us": self.base_us, "summary": self.summary(), "verdict": self.verdict,
                "parameters": self.records(), "notes": list(self.notes),
                "evaluations": self.evaluations, "elapsed_s": self.elapsed_s}

    def text(self) -> str:
        title = model_spec(self.model).title
        lines = [self.summary(),
                 f"Sensitivity of {title} kernel cycles ({self.base_kernel_cycles:,.0f}) to each figure moved "
                 f"by ±{100 * self.step:g} %, largest change first:",
                 f"  {'#':>2}  {'parameter':<28} {'-' + format(self.step, '.0%'):>20} "
                 f"{'+' + format(self.step, '.0%'):>20}"]
        for rec in self.records():
            def side(delta: float | None, pct: float | None) -> str:
                return "—" if delta is None else f"{delta:+,.0f} ({pct:+.1f} %)"
            lines.append(f"  {rec['rank']:>2}  {rec['title']:<28} "
                         f"{side(rec['minus_delta_cycles'], rec['minus_delta_percent']):>20} "
                         f"{side(rec['plus_delta_cycles'], rec['plus_delta_percent']):>20}"
                         + (f"  ({rec['note']})" if rec["note"] else ""))
        lines += [f"  note: {n}" for n in self.notes]
        lines.append(f"  {self.evaluations} evaluations in {self.elapsed_s:.1f} s")
        return "\n".join(lines)

    def csv(self, path: str | None = None, comments: Sequence[str] = ()) -> str:
        """The ranked table; ``comments``: lines before the header (what it was computed from)."""
        records = self.records()
        header = list(records[0]) if records else ["rank", "parameter"]
        lines = [*comments, *self.source, f"sensitivity of {self.model} kernel cycles to ±{100 * self.step:g} %"]
        return csv_text(header, [list(r.values()) for r in records], path, lines)


# ---- the knobs -------------------------------------------------------------------------------------
def parameters(evaluation: Evaluation) -> tuple[list[Parameter], list[str]]:
    """The knobs that can move this kernel's figures, and notes naming those left out."""
    profile, analysis = evaluation.profile, evaluation.analysis
    if profile is None or analysis is None:
        raise WarplineError("no sensitivity: " + ("; ".join(evaluation.errors.values()) or "nothing analysed"))
    memory = profile.pipeline.memory
    notes: list[str] = []
    out: list[Parameter] = []
    instructions = analysis.function.instructions
    classes = analysis.classifications
    by_unit: dict[Unit, set[str]] = {}
    shared_rules: set[str] = set()
    spaces: set[MemorySpace] = set()
    for ins, c in zip(instructions, classes, strict=True):
        moves = c.is_load or c.is_store or c.is_atomic
        pattern = profile.cost(ins, c).pattern
        if moves:
            spaces.add(c.space)
            if c.space is MemorySpace.SHARED and pattern:
                shared_rules.add(pattern)
            continue
        by_unit.setdefault(c.unit, set())
        if pattern:
            by_unit[c.unit].add(pattern)
    for unit, title in _UNIT_TITLES.items():
        if unit in by_unit:
            spec = profile.units.get(unit)
            base = f"Λ {spec.Lam:g}" if spec is not None and spec.Lam is not None else ""
            out.append(Parameter(f"latency:{unit.value}", f"{title} latency", GROUP_LATENCY, unit=unit,
                                 rules=frozenset(by_unit[unit]), base_text=base))
    if MemorySpace.SHARED in spaces:
        out.append(Parameter("latency:shared", "shared-memory latency", GROUP_LATENCY, ("shared_Lam",),
                             rules=frozenset(shared_rules), base_text=_keys_text(memory, ("shared_Lam",))))
    global_access = MemorySpace.GLOBAL in spaces or MemorySpace.LOCAL in spaces
    if global_access:
        levels = [level for level in _LEVEL_LATENCY if any(k in memory for k in _LEVEL_LATENCY[level])]
        every = tuple(k for level in levels for k in _LEVEL_LATENCY[level] if k in memory)
        out.append(Parameter("latency:global", "global-load latency", GROUP_LATENCY, every,
                             manybsp_mem_lat=True, base_text=_keys_text(memory, every)))
        for level in levels:
            keys = tuple(k for k in _LEVEL_LATENCY[level] if k in memory)
            out.append(Parameter(f"latency:{level}", f"{level} latency", GROUP_LATENCY, keys,
                                 manybsp_mem_lat=level == "DRAM", base_text=_keys_text(memory, keys)))
        missing = [level for level in _LEVEL_LATENCY if level not in levels]
        if missing:
            notes.append(f"the profile gives no latency of {', '.join(missing)}: not varied")
    if global_access or MemorySpace.SHARED in spaces:
        for level, keys in _LEVEL_BANDWIDTH.items():
            if level != "L1" and not global_access:
                continue
            present = tuple(k for k in keys if k in memory)
            if present:
                out.append(Parameter(f"bandwidth:{level}", f"{level} bandwidth", GROUP_BANDWIDTH, present,
                                     bandwidth=True, base_text=_bandwidth_text(memory, present[0], profile)))
            else:
                notes.append(f"the profile gives no {level} bandwidth: not varied")
    else:
        notes.append("the kernel makes no global or shared access: memory figures not varied")
    out.append(Parameter("clock", "SM clock", GROUP_CLOCK, tuple(k for k in _OFF_SM_KEYS if k in memory),
                         manybsp_mem_lat=True, base_text=f"{profile.device.clock_mhz:g} MHz"))
    out.append(Parameter("occupancy", "resident blocks per SM", GROUP_OCCUPANCY,
                         base_text=f"{evaluation.resident_blocks} of {evaluation.max_blocks}"))
    return out, notes


def _keys_text(memory: Any, keys: Sequence[str]) -> str:
    return ", ".join(f"{k} {float(memory[k]):g}" for k in keys if k in memory)


def _bandwidth_text(memory: Any, key: str, profile: Any) -> str:
    per_sm = 128.0 / float(memory[key]) if float(memory[key]) > 0 else math.inf
    return f"{per_sm:.3g} B/cycle/SM ({key} {float(memory[key]):g})"


# ---- perturbed copies --------------------------------------------------------------------------------
def scaled_profile(profile: Any, p: Parameter, factor: float) -> Any:
    """A copy of ``profile`` with knob ``p`` scaled by ``factor`` (a bandwidth by 1/factor on
    its λ), named after the change so that caches keyed by the name never mix it up."""
    if p.group == GROUP_OCCUPANCY:
        return profile
    memory = dict(profile.pipeline.memory)
    key_factor = 1.0 / factor if p.bandwidth else factor
    for key in p.memory_keys:
        if key in memory:
            memory[key] = float(memory[key]) * key_factor
    pipeline = replace(profile.pipeline, memory=memory)
    units = dict(profile.units)
    if p.unit is not None and p.unit in units:
        units[p.unit] = _scaled_latencies(units[p.unit], factor)
    rules = tuple(_scaled_latencies(r, factor) if r.pattern.text in p.rules else r for r in profile.rules)
    device = profile.device
    if p.group == GROUP_CLOCK:
        device = replace(device, clock_mhz=device.clock_mhz * factor)
    manybsp = profile.manybsp
    if p.manybsp_mem_lat and manybsp is not None:
        manybsp = replace(manybsp, mem_lat=manybsp.mem_lat * factor)
    sign = "+" if factor >= 1 else "-"
    name = f"{profile.name}~{p.key}{sign}{abs(factor - 1):.6g}"
    copy = dataclasses.replace(profile, name=name, path=None, pipeline=pipeline, units=units, rules=rules,
                               device=device, manybsp=manybsp)
    return copy


def _scaled_latencies(item: Any, factor: float) -> Any:
    changes = {k: getattr(item, k) * factor for k in ("Lam", "lat_comp", "lat_comm")
               if getattr(item, k, None) is not None}
    return replace(item, **changes)


def _occupancy_at(evaluation: Evaluation, factor: float) -> tuple[int | None, str]:
    """Resident blocks × factor (rounded, at least one block away, within 1..max), or None and why."""
    now, most = evaluation.resident_blocks, evaluation.max_blocks
    wanted = round(now * factor)
    if wanted == now:
        wanted = now + (1 if factor > 1 else -1)
    if wanted < 1:
        return None, "already one block per SM"
    if wanted > most:
        return None, f"already the most that fit ({most} blocks/SM)"
    return wanted, ""


# ---- the run --------------------------------------------------------------------------------------
def sensitivity(inputs: KernelInputs, state: WorkbenchState | None = None, *, step: float = DEFAULT_STEP,
                model: str = DEFAULT_MODEL, evaluator: Evaluator | None = None,
                only: Sequence[str] | None = None,
                cancel: Callable[[], bool] | None = None,
                progress: Callable[[float, str], None] | None = None) -> Sensitivity:
    """Every knob's change of ``model``'s kernel cycles at ±``step`` (0 < step <= 0.9), each
    through the evaluation core. ``only``: parameter keys to vary (default all). ``cancel``:
    polled between evaluations and inside them (raises :class:`Cancelled`)."""
    if not (isinstance(step, (int, float)) and math.isfinite(step) and 0 < step <= MAX_STEP):
        raise WarplineError(f"sensitivity step {step!r}: a fraction above 0 and at most {MAX_STEP} (0.1 = ±10 %)")
    model_spec(model)
    started = time.perf_counter()
    evaluator = evaluator or Evaluator()
    state = state or state_for(inputs)
    base = evaluator.evaluate(inputs, state, only=[model], trace=False, cancel=cancel)
    result = base.models.get(model)
    if result is None or result.figures is None:
        raise WarplineError(f"no sensitivity: {model_spec(model).title} has no figure "
                            f"({result.error if result is not None else 'not run'})")
    knobs, notes = parameters(base)
    if only is not None:
        unknown = set(only) - {k.key for k in knobs}
        if unknown:
            raise WarplineError(f"sensitivity: no parameter {', '.join(sorted(unknown))} for this kernel "
                                f"(parameters: {', '.join(k.key for k in knobs)})")
        knobs = [k for k in knobs if k.key in only]
    rows: list[SensitivityRow] = []
    runs = 1
    total = 2 * len(knobs)
    for k, knob in enumerate(knobs):
        sides: dict[int, tuple[float | None, float | None, str]] = {}
        for s, sign in enumerate((-1, 1)):
            if cancel is not None and cancel():
                raise Cancelled()
            if progress is not None:
                progress((2 * k + s) / max(total, 1), knob.title)
            cycles, us, side_note, evaluated = _side(evaluator, inputs, state, base, knob, 1.0 + sign * step,
                                                     model, cancel)
            sides[sign] = (cycles, us, side_note)
            runs += evaluated
        (lo, lo_us, lo_note), (hi, hi_us, hi_note) = sides[-1], sides[1]
        note = "; ".join(f"{label}: {n}" for label, n in (("−", lo_note), ("+", hi_note)) if n)
        rows.append(SensitivityRow(knob, lo, hi, lo_us, hi_us, note))
    base_cycles = float(result.kernel_cycles)
    rows.sort(key=lambda r: -r.swing(base_cycles))
    if progress is not None:
        progress(1.0, "done")
    verdict = explain(base)
    return Sensitivity(model, float(step), base_cycles, result.microseconds, rows, notes,
                       time.perf_counter() - started, runs, verdict.sentence if verdict is not None else "",
                       comment_lines(base))


def _side(evaluator: Evaluator, inputs: KernelInputs, state: WorkbenchState, base: Evaluation, knob: Parameter,
          factor: float, model: str, cancel: Callable[[], bool] | None
          ) -> tuple[float | None, float | None, str, bool]:
    """(kernel cycles, µs, note, whether it evaluated) of ``model`` with ``knob`` scaled by ``factor``."""
    if knob.group == GROUP_OCCUPANCY:
        blocks, why = _occupancy_at(base, factor)
        if blocks is None:
            return None, None, why, False
        moved_inputs, moved_state, note = inputs, replace(state, occupancy=blocks), f"{blocks} blocks/SM"
    else:
        profile = scaled_profile(base.profile, knob, factor)
        moved_inputs = replace(inputs, profile=profile)
        moved_state = replace(state, profile=profile.name)
        note = ""
    ev = evaluator.evaluate(moved_inputs, moved_state, only=[model], trace=False, cancel=cancel)
    r = ev.models.get(model)
    if r is None or r.figures is None:
        return None, None, (r.error if r is not None else "not run").splitlines()[0], True
    return float(r.kernel_cycles), r.microseconds, note, True
