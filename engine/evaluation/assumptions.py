"""Every input an evaluation guessed: what was assumed, why, the alternative that shows how much
it matters, and how to give the real value. The one list the Assumptions panel, ``predict``,
``info`` and the figures' marks (:mod:`engine.evaluation.caveats`) read.

An input is *unknown* when neither the launch (launch file, ``--arg/--trip/--data/--grid``, the
window) nor the PTX gives it. Every unknown is handled by one rule, the same for every model,
because it is applied to the inputs before any model runs (docs/assumptions.md):

* an **argument value** is supplied by the compiler's conventions, the launch's coverage of the
  data, or the stand-in (:mod:`engine.conventions`); pointers need none;
* a **loop trip count** the analysis cannot compute from the (completed) arguments counts
  :data:`UNKNOWN_TRIP_ITERATIONS` iteration in every model;
* the **integers behind a gather** (an index array, CSR row starts) are pseudo-random stand-ins
  (``engine.memory``), and a branch on loaded data counts every lane active;
* the **launch**, without a launch file or ``--grid``, fills the GPU once;
* a global access whose **address pattern** the analysis cannot compute even so costs one
  coalesced request per warp (the profile's class default) and is not counted in the launch's
  bytes; it is listed too, though no input of the user's would settle it.

Each is listed here with an alternative; the evaluation's part ``assumptions`` re-runs the
headline model with it (:class:`Effect`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from engine.analysis import LaunchValues
from engine.inputs import ASSUMED_LAUNCH, launch_is_assumed
from engine.launch import Dim3, Launch
from engine.memory.affine import AddressEvaluator, Affine
from engine.ptx.parsed_module import OperandKind

ARGUMENT, LAYOUT, TRIP, DATA, LAUNCH, PATTERN = "argument", "layout", "trip count", "data", "launch", "pattern"
UNKNOWN_TRIP_ITERATIONS = 1     # what every model counts for a loop whose trip count is unknown
DATA_STAND_IN = "pseudo-random integers in [0, 2^22), equal for equal addresses"
HEADLINE_MODELS = ("pipeline", "manybsp")     # the figure an effect is measured on, first present
_NO_VALUE = re.compile(r"argument (\d+) \(([^)]*)\) has no value")


@dataclass(frozen=True)
class FillIn:
    """Where the real value goes: ``kind`` "args" (parameter indices), "trip" (a loop key),
    "data" (a pointer argument) or "launch"; ``option`` the command-line form; ``values`` what
    was assumed, one per key (the launch: grid and block)."""

    kind: str
    keys: tuple[Any, ...]
    option: str
    values: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Change:
    """An alternative value for an assumed input, as launch settings the user could have given."""

    description: str
    args: dict[int, int] = field(default_factory=dict)
    trips: dict[str, int] = field(default_factory=dict)
    data: dict[int, str] = field(default_factory=dict)
    grid: Dim3 | None = None

    def apply(self, launch: Launch) -> Launch:
        changes: dict[str, Any] = {}
        if self.args:
            args = {k: v for k, v in launch.args.items() if k not in self.args}
            args.update(self.args)
            changes["args"] = args
        if self.trips:
            changes["trip_overrides"] = {**launch.trip_overrides, **self.trips}
        if self.data:
            changes["data"] = {**launch.data, **self.data}
        if self.grid is not None:
            changes["grid"] = self.grid
        return replace(launch, **changes)


@dataclass(frozen=True)
class Assumption:
    key: str                     # stable within a kernel: "args:size: 5", "trip:$L__BB0_2", "data:3", "launch"
    kind: str                    # ARGUMENT, LAYOUT, TRIP, DATA or LAUNCH
    subject: str                 # the input, in words
    assumed: str                 # the value taken
    rule: str                    # why that value
    fill: FillIn
    alternative: Change | None
    details: tuple[str, ...] = ()    # one line per value of a group

    def as_dict(self, effect: Effect | None = None) -> dict[str, Any]:
        return {"key": self.key, "kind": self.kind, "input": self.subject, "assumed": self.assumed,
                "rule": self.rule, "details": list(self.details), "fill_in": self.fill.option,
                "alternative": self.alternative.description if self.alternative is not None else None,
                "effect": effect.as_dict() if effect is not None else None}


@dataclass(frozen=True)
class Effect:
    """The headline model's kernel cycles with the assumption, and with its alternative."""

    model: str
    base: float
    alternative: float | None
    error: str = ""

    @property
    def percent(self) -> float | None:
        if self.alternative is None or not self.base:
            return None
        return 100.0 * (self.alternative - self.base) / self.base

    def text(self) -> str:
        if self.alternative is None:
            return f"not evaluated ({self.error})" if self.error else "not evaluated"
        return f"{self.percent:+.0f} % ({self.base:,.0f} → {self.alternative:,.0f} kernel cycles)"

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "kernel_cycles": self.base, "alternative_kernel_cycles": self.alternative,
                "percent": self.percent, "error": self.error or None}


def headline_model(ev: Any) -> str | None:
    """The model whose kernel cycles the effects are measured on: the simulation, else Many-BSP."""
    for model_id in HEADLINE_MODELS:
        result = ev.models.get(model_id)
        if result is not None and result.figures is not None:
            return model_id
    return None


def list_assumptions(ev: Any, alternatives: dict[str, Any]) -> tuple[Assumption, ...]:
    """Every guessed input of evaluation ``ev`` (its launch completed, analysis and memory done)."""
    out: list[Assumption] = []
    out.extend(_argument_assumptions(ev, alternatives))
    launch = ev.run_launch
    pinned = ev.completion.pinned() if ev.completion is not None else {}
    # the sampled warps ran: the paths the models read are theirs, every loop's trips included
    ran = _paths_executed(ev)
    for loop in ev.analysis.loop_info if ev.analysis is not None and not ran else ():
        if loop.trip_count.value is not None or loop.key in launch.trip_overrides:
            continue
        line = ev.analysis.function.instructions[loop.first_instruction].location.line
        out.append(Assumption(
            f"trip:{loop.key}", TRIP, f"trip count of loop {loop.key} (line {line})",
            f"{UNKNOWN_TRIP_ITERATIONS} iteration", loop.trip_count.reason or "the analysis cannot compute it",
            FillIn("trip", (loop.key,), f"--trip {loop.key}=N", (UNKNOWN_TRIP_ITERATIONS,)),
            Change(f"{2 * UNKNOWN_TRIP_ITERATIONS} iterations", trips={loop.key: 2 * UNKNOWN_TRIP_ITERATIONS},
                   args=pinned)))
    out.extend(_data_assumptions(ev, pinned))
    out.extend(_unvalued_arguments(ev, {a.key for a in out}))
    out.extend(_unknown_patterns(ev))
    if launch_is_assumed(ev.launch_source):
        grid = launch.grid
        out.append(Assumption(
            LAUNCH, LAUNCH, "the launch (grid and block)",
            f"grid {'x'.join(map(str, grid))}, block {'x'.join(map(str, launch.block))}",
            ev.launch_source.removeprefix(ASSUMED_LAUNCH),
            FillIn("launch", (), "--grid X[,Y,Z] --block X[,Y,Z]", (launch.grid, launch.block)),
            # the sizes that cover the launch grow with it; the other guesses stay
            Change("twice the grid (the data covering it twice as large)", grid=(2 * grid[0], grid[1], grid[2]),
                   args=ev.completion.pinned(coverage=False) if ev.completion is not None else {})))
    return tuple(out)


def _paths_executed(ev: Any) -> bool:
    """Whether the run of the sampled warps decided the paths (mechanism ``execution`` on and the
    run complete): then no loop's trip count is a guess."""
    from engine.mechanisms import enabled

    execution = getattr(getattr(ev, "memory", None), "execution", None)
    return bool(execution is not None and getattr(execution, "ok", False) and enabled("execution"))


def _argument_assumptions(ev: Any, alternatives: dict[str, Any]) -> list[Assumption]:
    completion = ev.completion
    if completion is None:
        return []
    params = ev.analysis.function.params if ev.analysis is not None else []
    groups: dict[str, list[Any]] = {}
    for value in completion.supplied:
        if not value.certain:
            groups.setdefault(value.group, []).append(value)
    out = []
    for group, members in groups.items():
        head = members[0]
        kind = LAYOUT if group.startswith("layout") else ARGUMENT
        role = {"size": ", a size", "shape": ", a shape", "stride": ", a stride"}.get(head.role, "")
        subject = (f"{head.label} ({_param_name(params, head.index)}){role}" if len(members) == 1
                   else f"{head.label} and {len(members) - 1} more" if kind == ARGUMENT
                   else f"strides of {len(members)} arguments")
        assumed = (f"{head.value:,}" if len({m.value for m in members}) == 1 and kind == ARGUMENT
                   else ", ".join(f"{m.index} = {m.value:,}" for m in members))
        alternative = alternatives.get(group)
        out.append(Assumption(
            f"args:{group}", kind, subject, assumed, head.rule,
            FillIn("args", tuple(m.index for m in members),
                   " ".join(f"--arg {m.index}=VALUE" for m in members), tuple(m.value for m in members)),
            Change(alternative.description, args=dict(alternative.args)) if alternative is not None else None,
            tuple(f"argument {m.index} ({m.label}) = {m.value:,}" + (f": {m.rule}" if m.rule != head.rule else "")
                  for m in members)))
    return out


def _param_name(params: list[Any], index: int) -> str:
    return params[index].name if 0 <= index < len(params) else f"#{index}"


def _data_assumptions(ev: Any, pinned: dict[int, int]) -> list[Assumption]:
    """Gathers whose address comes from loaded integers the launch declares nothing about."""
    memory = ev.memory
    if memory is None or ev.analysis is None:
        return []
    launch = ev.run_launch
    values = LaunchValues.from_launch(launch)
    evaluator = AddressEvaluator(ev.analysis, values)
    function = ev.analysis.function
    found: dict[int, list[int]] = {}       # pointer argument -> lines of the accesses it feeds
    unknown_lines: list[int] = []
    for access in memory.accesses:
        if not access.data_dependent:
            continue
        pointers = set()
        for load in _feeding_loads(ev.analysis, access.index):
            instr = function.instructions[load]
            operand = next((o for o in instr.operands if o.kind == OperandKind.ADDRESS), None)
            if operand is None:
                continue
            try:
                form = evaluator.address(instr, operand)
            except RecursionError:
                continue
            if isinstance(form, Affine):
                pointers.update(int(a[5:]) for a, c in form.terms if a.startswith("param") and c == 1)
        declared = {p for p in pointers if values.loaded_data(p, function.params[p].name) is not None}
        if pointers and pointers == declared:
            continue
        for p in pointers - declared:
            found.setdefault(p, []).append(access.line)
        if not pointers:
            unknown_lines.append(access.line)
    out = []
    for pointer, lines in sorted(found.items()):
        name = _param_name(function.params, pointer)
        out.append(Assumption(
            f"data:{pointer}", DATA, f"the integers argument {pointer} ({name}) points to, which addresses "
            f"at line{'s' if len(set(lines)) > 1 else ''} {', '.join(map(str, sorted(set(lines))))} are computed from",
            DATA_STAND_IN, "an address computed from loaded integers depends on data no analysis sees; "
            "a branch on them counts every lane active",
            FillIn("data", (pointer,), f"--data {pointer}=PATTERN"),
            Change("sorted, evenly spread indices (linear:1)", data={pointer: "linear:1"}, args=pinned)))
    if unknown_lines:
        lines = ", ".join(map(str, sorted(set(unknown_lines))))
        out.append(Assumption(
            "data:?", DATA, f"loaded integers behind the addresses at line(s) {lines}", DATA_STAND_IN,
            "the buffer they are read from is not a pointer argument the analysis can name",
            FillIn("data", (), "--data POINTER=PATTERN"), None))
    return out


def _feeding_loads(analysis: Any, index: int, limit: int = 256) -> list[int]:
    """Global loads whose values reach instruction ``index`` (through any arithmetic)."""
    function = analysis.function
    seen: set[int] = {index}
    stack = [index]
    loads = []
    while stack and len(seen) < limit:
        i = stack.pop()
        instr = function.instructions[i]
        for reg in instr.srcs:
            for d in analysis.defuse.reaching(i, reg):
                if d in seen:
                    continue
                seen.add(d)
                producer = function.instructions[d]
                if producer.opcode in ("ld", "ldu") and "param" not in producer.modifiers:
                    loads.append(d)
                else:
                    stack.append(d)
    return loads


def _unknown_patterns(ev: Any) -> list[Assumption]:
    """Global accesses left without a pattern (one entry for all of them)."""
    memory = ev.memory
    if memory is None:
        return []
    missing = [a for a in memory.accesses if a.space.value == "global" and a.unknown_reason
               and a.sectors_per_request is None and a.issue_share != 0.0]
    if not missing:
        return []
    lines = ", ".join(str(line) for line in sorted({a.line for a in missing})[:12])
    reasons = sorted({a.unknown_reason for a in missing})
    return [Assumption(
        "pattern", PATTERN, f"the address pattern of {len(missing)} global access{'es' if len(missing) > 1 else ''} "
        f"(line{'s' if len(missing) > 1 else ''} {lines}{' …' if len(missing) > 12 else ''})",
        "one coalesced request per warp; not counted in the launch's bytes",
        "the analysis could not compute the addresses: " + "; ".join(reasons[:3]) + (" …" if len(reasons) > 3 else ""),
        FillIn("none", (), "(no input settles it: see the Memory tab)"), None)]


def _unvalued_arguments(ev: Any, listed: set[str]) -> list[Assumption]:
    """Any argument still without a value that decided something (a branch, a mask): a float, a
    structure's field. Its stand-in is "every lane active"; no alternative is tried."""
    texts: list[str] = []
    if ev.memory is not None:
        for access in ev.memory.accesses:
            texts.extend(t for t in (access.mask_note, access.unknown_reason) if t)
    if ev.analysis is not None:
        texts.extend(loop.trip_count.reason for loop in ev.analysis.loop_info if loop.trip_count.reason)
    out = []
    seen: set[int] = set()
    for text in texts:
        for match in _NO_VALUE.finditer(text):
            index = int(match.group(1))
            key = f"arg:{index}"
            if index in seen or key in listed:
                continue
            seen.add(index)
            out.append(Assumption(key, ARGUMENT, f"argument {index} ({match.group(2)})", "no value",
                                  "no convention or rule supplies a value of its type; where it decides "
                                  "a branch every lane is counted active", FillIn("args", (index,),
                                                                                 f"--arg {index}=VALUE"), None))
    return out
