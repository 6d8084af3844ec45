"""Loop trip counts from the exit test, the induction register and uniform bounds.

For each exiting branch ``@p bra`` of a natural loop, ``p`` must come from
``setp.<cmp>.<int type> p, a, b``. One side must be an *induction value*: a register that, read
at the ``setp``, equals ``phi + offset`` where ``phi`` is a register carried around the back edge
(``add r, r, step``, possibly through ``mov``s between registers, as nvcc writes rotated loops)
and ``offset`` the updates already done in this iteration. The step must be uniform; the bound
and the initial value of ``phi`` must be uniform or differ by a uniform amount (``a < a0 + n``
with ``a0 = 16 * wA * blockIdx.y``, pointer loops; see :mod:`engine.analysis.values`). The first
iteration ``k`` at which the test leaves the loop then has a closed form for ``< <= > >= != ==``.
An initial value may be an earlier loop's exit value (nvcc's remainder-first unrolled loops).

The reported value is the number of iterations per entry of the loop that run its body: the
number of times the header runs (``k + 1``), except for a top-tested loop whose header is nothing
but the test (``k``: the last pass only tests). With several exits (``break``), the earliest one
wins, provided it runs on every iteration; an exit that cannot be analysed makes the count unknown.
Branches whose predicate is uniform prune the CFG first: loops this launch never reaches (nvcc's
unrolled main loop when ``n < 4``, a loop behind ``if (n > 0)``) get 0. A user override always
wins.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from engine.analysis import simt
from engine.analysis.cfg import ControlFlowGraph, Loop, top_tested
from engine.analysis.defuse import DefUseGraph, reaching_definitions
from engine.analysis.lane_arith import LaneError, int64, integer_result
from engine.analysis.values import (
    LaunchValues,
    UniformEvaluator,
    Value,
    as_type,
    atom_definition,
    from_linear,
    instruction_type,
)
from engine.ptx.parsed_module import Function, Operand, OperandKind

Source = Literal["inferred", "override", "unknown", "executed"]
_MAX_TRIPS = 1 << 31  # more than this means wrap-around or a misread loop: do not trust it
_MIRROR = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "lo": "hi", "ls": "hs", "hi": "lo",
           "hs": "ls", "eq": "eq", "ne": "ne"}
_NEGATE = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "lo": "hs", "ls": "hi", "hi": "ls",
           "hs": "lo", "eq": "ne", "ne": "eq"}
_TEXT = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "lo": "<", "ls": "<=", "hi": ">", "hs": ">=",
         "eq": "==", "ne": "!="}


@dataclass(frozen=True)
class TripCount:
    value: int | None
    source: Source
    reason: str
    expression: str = ""
    # Per-thread counts: ``value`` is the mean over the launch's warps of their last lane's
    # count, ``slowest`` the largest (the block that runs it sets the time of a single wave).
    slowest: int | None = None

    @property
    def known(self) -> bool:
        return self.value is not None


class _Fail(Exception):
    """Why a loop's trip count cannot be inferred (the message is shown to the user)."""


@dataclass(frozen=True)
class _Affine:
    """``phi + offset`` (``phi`` a loop-carried register) or a loop-invariant ``value``."""

    phi: str | None
    offset: int = 0
    value: Value | None = None


class _LoopAnalysis:
    def __init__(self, function: Function, cfg: ControlFlowGraph, defuse: DefUseGraph,
                 ev: UniformEvaluator, loop: Loop) -> None:
        self.body = function.instructions
        self.cfg, self.defuse, self.ev, self.loop = cfg, defuse, ev, loop
        self.exit: tuple[int, int] | None = None  # (iteration that leaves, exiting block)
        self._slowest: dict[int, int] = {}         # exiting block -> slowest warp's exit (per thread)

    def exit_value(self, reg: str) -> Value:
        """``reg`` as it leaves the loop (after ``infer`` succeeded)."""
        assert self.exit is not None
        k, block = self.exit
        branch = self.cfg.blocks[block].end - 1
        a = self.register(reg, branch, frozenset())
        if a.phi is None:
            assert a.value is not None
            return a.value
        step, init = self.step_and_init(a.phi)
        offset, terms = init.linear  # type: ignore[misc]  # step_and_init checked it
        return from_linear(offset + step * k + a.offset, terms,
                           f"{reg} after {k + 1} passes of {self.loop.key}", init.reason)

    def _in_loop(self, index: int) -> bool:
        return self.cfg.block_of(index).index in self.loop.body

    def operand(self, operand: Operand, at: int, seen: frozenset[tuple[int, str]] = frozenset()) -> _Affine:
        if operand.kind == OperandKind.REGISTER and operand.name:
            return self.register(operand.name, at, seen)
        return _Affine(None, value=self.ev.operand(operand, at))

    def register(self, reg: str, at: int, seen: frozenset[tuple[int, str]]) -> _Affine:
        defs = self.ev.defs(reg, at)
        if not any(self._in_loop(d) for d in defs):
            return _Affine(None, value=self.ev.merge(reg, defs, at))
        # Definitions made earlier in this same iteration (not through the back edge).
        same = [d for d in defs if self._in_loop(d) and not self.defuse.is_loop_carried(d, at, reg)]
        if not same:
            return _Affine(reg)  # nothing in this iteration has redefined it yet: the carried value
        if len(defs) != 1:
            raise _Fail(f"{reg} is updated on some paths through the loop only")
        return self.transfer(defs[0], reg, seen)

    def transfer(self, d: int, reg: str, seen: frozenset[tuple[int, str]]) -> _Affine:
        """The value definition ``d`` gives ``reg``, in terms of a carried register."""
        if (d, reg) in seen:
            raise _Fail(f"{reg} is defined in a cycle inside one iteration")
        if len(seen) > 100:
            raise _Fail(f"{reg} is updated through too long a chain of copies")
        seen = seen | {(d, reg)}
        instr = self.body[d]
        text = f"{instr.full_opcode} at line {instr.location.line}"
        if instr.guard is not None:
            raise _Fail(f"{reg} is updated conditionally ({text})")
        ops = instr.operands[1:]
        if instr.opcode == "mov" and len(ops) == 1 and ops[0].kind == OperandKind.REGISTER:
            return self.register(ops[0].name or "", d, seen)
        if instr.opcode in ("add", "sub") and len(ops) == 2 and _is_int(instruction_type(instr)):
            a = self.operand(ops[0], d, seen)
            b = self.operand(ops[1], d, seen)
            sign = 1 if instr.opcode == "add" else -1
            if a.phi is not None and b.phi is None:
                return _Affine(a.phi, a.offset + sign * self._constant(b, reg))
            if b.phi is not None and a.phi is None and sign == 1:
                return _Affine(b.phi, b.offset + self._constant(a, reg))
        value = self.ev.definition(d, reg)
        if value.linear is not None and all(
                (i := atom_definition(name)) is None or not self._in_loop(i) for name, _ in value.terms):
            return _Affine(None, value=value)  # recomputed each iteration, but always the same
        raise _Fail(f"{reg} is updated by {text}, which is not an add/sub of a uniform step")

    @staticmethod
    def _constant(a: _Affine, reg: str) -> int:
        v = a.value
        if v is None or not v.known:
            raise _Fail(f"the step of {reg} is not uniform: {v.reason if v else 'unknown'}")
        if not isinstance(v.value, int):
            raise _Fail(f"the step of {reg} is not an integer")
        return v.value

    def step_and_init(self, phi: str) -> tuple[int, Value]:
        step, init, _ = self.step_init_defs(phi)
        if init.linear is None:
            raise _Fail(f"the initial value of {phi} is not uniform: {init.reason}")
        return step, init

    def step_init_defs(self, phi: str) -> tuple[int, Value, list[int]]:
        """The induction step of ``phi``, its value on entry and the definitions that give it
        (the value may be neither uniform nor linear: a remainder of a thread index)."""
        steps = set()
        for latch in self.loop.latches:
            defs = [d for d in self.defuse.reaching_at_exit(latch, phi) if self._in_loop(d)]
            outside = [d for d in self.defuse.reaching_at_exit(latch, phi) if not self._in_loop(d)]
            if len(defs) != 1 or outside:
                raise _Fail(f"{phi} is not updated exactly once per iteration")
            a = self.transfer(defs[0], phi, frozenset())
            if a.phi != phi:
                raise _Fail(f"{phi} is not an induction register (it takes {a.phi}'s value)")
            steps.add(a.offset)
        if len(steps) != 1:
            raise _Fail(f"{phi} steps by different amounts on different paths")
        init_defs = [d for d in self.defuse.reaching_at_entry(self.loop.header_block, phi)
                     if not self._in_loop(d)]
        if self.ev.feasible is not None:
            init_defs = [d for d in init_defs if self.cfg.block_of(d).index in self.ev.feasible]
        init = self.ev.merge(phi, init_defs, self.cfg.blocks[self.loop.header_block].start)
        return steps.pop(), init, init_defs

    def infer(self) -> TripCount:
        loop, cfg = self.loop, self.cfg
        # Blocks of the body with a successor outside: the predecessors of the exits inside it.
        exiting = list({p for e in loop.exits for p in cfg.blocks[e].predecessors if p in loop.body})
        if not exiting:
            raise _Fail("the loop has no exit")
        # Header first, then program order: at equal k the earlier test in the iteration wins.
        exiting.sort(key=lambda b: (b != loop.header_block, cfg.blocks[b].start))
        results = [(self._exit_iteration(b), order, b) for order, b in enumerate(exiting)]
        finite = [(r[0], order, b, r) for r, order, b in results if r[0] is not None]
        if not finite:
            raise _Fail(results[0][0][2])
        k, _, block, (_, expression, reason) = min(finite)
        if k > _MAX_TRIPS:
            raise _Fail(f"implausible trip count {k} ({reason}): wrap-around?")
        if len(exiting) > 1 and not all(cfg.dominates(block, latch) for latch in loop.latches):
            raise _Fail(f"the first exit ({cfg.blocks[block].name}) does not run on every iteration")
        self.exit = (k, block)
        # The pass that leaves from a header that is nothing but the loop test ran none of the
        # body (a top-tested loop); any other last pass did real work and counts.
        is_top_tested = block == loop.header_block and top_tested(cfg, loop)
        if len(exiting) > 1:
            reason += f" (first of {len(exiting)} exits)"
        slowest = self._slowest.get(block)
        if slowest is not None and not is_top_tested:
            slowest += 1
        return TripCount(k if is_top_tested else k + 1, "inferred", reason, expression, slowest)

    def _exit_iteration(self, exiting_block: int) -> tuple[int | None, str, str]:
        """The iteration (0-based) whose test in ``exiting_block`` leaves the loop, or None
        when it never does; with the loop-control expression and a human-readable reason."""
        block = self.cfg.blocks[exiting_block]
        branch = self.body[block.end - 1]
        where = f"the exit at line {branch.location.line}"
        if branch.opcode != "bra" or branch.guard is None:
            raise _Fail(f"{where} is not a conditional branch")
        target = self.cfg.function.labels.get(branch.branch_target or "")
        taken_stays = target is not None and target < len(self.body) and self._in_loop(target)
        # The loop continues while (guard is true) == taken_stays (xor the guard's negation).
        stay_if_true = taken_stays != branch.guard_negated

        setp_defs = self.ev.defs(branch.guard, branch.index)
        if len(setp_defs) != 1 or not self._in_loop(setp_defs[0]):
            raise _Fail(f"the predicate {branch.guard} of {where} is not set once inside the loop")
        setp = self.body[setp_defs[0]]
        cmp = next((m for m in setp.modifiers if m in _MIRROR), None)
        t = instruction_type(setp)
        if setp.opcode != "setp" or cmp is None or len(setp.operands) != 3 or setp.guard is not None:
            raise _Fail(f"the predicate of {where} comes from {setp.full_opcode}, not a plain setp")
        if not _is_int(t):
            raise _Fail(f"{where} compares {t} values (only integer induction is inferred)")
        dest = setp.operands[0]
        if dest.kind == OperandKind.PAIR and len(dest.elements) == 2 and dest.elements[1].name == branch.guard:
            stay_if_true = not stay_if_true
        a = self.operand(setp.operands[1], setp.index)
        b = self.operand(setp.operands[2], setp.index)
        bound_operand = setp.operands[2]
        if a.phi is None and b.phi is not None:
            a, b, cmp = b, a, _MIRROR[cmp]
            bound_operand = setp.operands[1]
        if a.phi is None:
            why = next((v.reason for v in (a.value, b.value) if v is not None and not v.known), "")
            raise _Fail(f"{where} does not test an induction register{': ' + why if why else ''}")
        if b.phi is not None:
            raise _Fail(f"{where} compares two induction registers")
        bound = b.value
        if bound is None:
            raise _Fail("the loop bound is not uniform: unknown")
        step, init, init_defs = self.step_init_defs(a.phi)
        stay_cmp = cmp if stay_if_true else _NEGATE[cmp]
        per_thread = ""
        if bound.linear is None or init.linear is None:
            # Not linear in the thread and block indices (a remainder such as the (i + 1) & 3 of
            # a loop unrolled by 4): evaluated lane by lane when the indices decide it.
            if len(init_defs) != 1:
                raise _Fail(f"the loop bound is not uniform: {(bound if bound.linear is None else init).reason}")
            lanes = _LaneValues(self.ev, self.body)
            start_def = init_defs[0]

            def exits(env: dict[str, Any]) -> Any:
                distance = (lanes.operand(bound_operand, setp.index, env)
                            - lanes.definition(start_def, a.phi, env) - a.offset)
                return _lane_exits(distance, step, stay_cmp)

            k, self._slowest[exiting_block] = _mean_over_warps(self.ev.values, init.reason or bound.reason,
                                                               exits)
            per_thread = " (per thread, evaluated lane by lane; mean over warps of the last lane's count)"
        elif bound.known and init.known:
            v0 = _typed(int(init.value) + a.offset, t)
            limit = _typed(int(bound.value), t)
            k = _first_exit(v0, step, stay_cmp, limit)
        else:
            # Only the distance matters. When it depends on thread or block indices (grid-stride
            # and block-stride loops, triangular loops), a warp runs until its last lane leaves:
            # the count is the mean over the warps of the launch of their lanes' maximum.
            (b_off, b_terms), (i_off, i_terms) = bound.linear, init.linear
            if b_terms != i_terms:
                distance = {n: b_terms.get(n, 0) - i_terms.get(n, 0) for n in set(b_terms) | set(i_terms)}
                k, self._slowest[exiting_block] = _mean_warp_exit(
                    b_off - i_off - a.offset, distance, step, stay_cmp, self.ev.values, bound if b_terms else init)
                per_thread = " (per thread; mean over warps of the last lane's count)"
            else:
                k = _first_exit(0, step, stay_cmp, b_off - i_off - a.offset)
        off = f" {a.offset:+d}" if a.offset else ""
        start = init.value if init.known else init.expr
        expression = (f"{a.phi} = {init.expr}; while {a.phi}{off} {_TEXT[stay_cmp]} {bound.expr}; "
                      f"{a.phi} += {step}")
        reason = (f"{a.phi} from {start} step {step:+d} while {a.phi}{off} {_TEXT[stay_cmp]} "
                  f"{bound.value if bound.known else bound.expr}{per_thread}")
        if k is None:
            reason = f"{a.phi} never leaves the loop ({reason}): wrap-around or an infinite loop"
        return k, expression, reason


_BLOCK_SAMPLES = 256     # blocks sampled for a per-thread trip count (first, last, evenly spaced)


def _mean_warp_exit(limit: int, coeffs: dict[str, int], step: int, cmp: str, values: LaunchValues,
                    culprit: Value) -> tuple[int, int]:
    """Mean over warps of max over their lanes of the first exit iteration, for a distance
    ``limit + Σ coeff·atom`` between bound and induction value whose atoms are thread and block
    indices of a known launch."""
    for name in coeffs:
        if _index_atom(name) is None:
            raise _Fail(f"the loop bound is not uniform: {culprit.reason}")

    _fits_lanes(limit, *coeffs.values(), what="the loop's bound")

    def exits(env: dict[str, Any]) -> Any:
        distance = np.full(len(env["%tid.x"]), limit, dtype=np.int64)
        for name, c in coeffs.items():
            distance = distance + c * env[name]
        return _first_exit_array(distance, step, cmp)

    block_axes = {found[1] for found in map(_index_atom, coeffs) if found and found[0] == "ctaid"}
    return _mean_over_warps(values, culprit.reason, exits, block_axes)


def _fits_lanes(*numbers: int, what: str) -> None:
    """Refuse per-lane arithmetic on numbers beyond 64 bits (huge immediates, shifts out of the
    register): the lanes are int64 arrays, and such a bound is no real loop's."""
    if any(not -(1 << 63) <= int(n) < (1 << 63) for n in numbers):
        raise _Fail(f"{what}: a number outside the signed 64-bit range, not evaluated per lane")


def _index_atom(name: str) -> tuple[str, int] | None:
    """(``tid``/``ctaid``/``laneid``, axis) of a thread or block index atom, else None."""
    base, _, axis = name.lstrip("%").partition(".")
    if base == "laneid":
        return base, 0
    if base in ("tid", "ctaid") and axis in ("x", "y", "z"):
        return base, "xyz".index(axis)
    return None


def _mean_over_warps(values: LaunchValues, reason: str, exits: Any,
                     block_axes: set[int] | None = None) -> tuple[int, int]:
    """Mean and maximum over the launch's warps of their lanes' maximum of ``exits(env)``, where ``env`` maps
    ``%tid.*``, ``%ctaid.*`` and ``%laneid`` to per-thread arrays of one block (blocks sampled:
    first, last and evenly spaced along ``block_axes``, default every axis longer than 1)."""
    if values.block is None or values.grid is None:
        raise _Fail(f"the loop bound is not uniform: {reason} (the launch gives no grid/block)")
    bx, by, bz = values.block
    threads = bx * by * bz
    linear = np.arange(threads, dtype=np.int64)
    tid = (linear % bx, (linear // bx) % by, linear // (bx * by))
    if block_axes is None:
        block_axes = {k for k in range(3) if values.grid[k] > 1}
    per_axis = max(1, int(_BLOCK_SAMPLES ** (1 / max(1, len(block_axes)))))
    samples = []
    for k in range(3):
        n = values.grid[k]
        if k in block_axes and n > per_axis:
            samples.append(np.unique(np.linspace(0, n - 1, per_axis).round().astype(np.int64)))
        else:
            samples.append(np.arange(n) if k in block_axes else np.zeros(1, np.int64))
    warps = -(-threads // 32)
    total, count, slowest = 0.0, 0, 0
    for ctaid in itertools.product(*samples):
        env = {"%laneid": linear % 32}
        for k, axis in enumerate("xyz"):
            env[f"%tid.{axis}"] = tid[k]
            env[f"%ctaid.{axis}"] = np.full(threads, int(ctaid[k]), dtype=np.int64)
        found = exits(env)
        if found is None:
            raise _Fail("some thread never leaves the loop: wrap-around or an infinite loop")
        padded = np.zeros(warps * 32, dtype=np.int64)
        padded[:threads] = found
        per_warp = padded.reshape(warps, 32).max(axis=1)
        total += float(per_warp.sum())
        slowest = max(slowest, int(per_warp.max()))
        count += warps
    return (int(round(total / count)) if count else 0), slowest


class _LaneValues:
    """Integer registers per thread of one block, where they are computed from thread and block
    indices and uniform values by integer arithmetic (no loads, no loops; the semantics of
    :mod:`engine.analysis.lane_arith`): what a trip count needs when its start is a remainder or
    a mask of an index. Refuses anything else with :class:`_Fail`."""

    _MAX_DEPTH = 64

    def __init__(self, ev: UniformEvaluator, body: Any) -> None:
        self.ev, self.body = ev, body

    def operand(self, operand: Operand, at: int, env: dict[str, Any], depth: int = 0,
                type_name: str | None = None) -> Any:
        if operand.kind in (OperandKind.REGISTER, OperandKind.PREDICATE) and operand.name:
            v = self.register(operand.name, at, env, depth)
            return (v == 0).astype(np.int64) if operand.negated else v
        if operand.kind == OperandKind.IMMEDIATE and isinstance(operand.value, int) and type_name:
            return np.full(len(env["%tid.x"]), int64(as_type(operand.value, type_name)), dtype=np.int64)
        return self._linear(self.ev.operand(operand, at), env)

    def register(self, reg: str, at: int, env: dict[str, Any], depth: int = 0) -> Any:
        value = self.ev.register(reg, at)
        if value.linear is not None:
            return self._linear(value, env)
        defs = self.ev.defs(reg, at)
        if len(defs) != 1:
            raise _Fail(f"{reg} has {len(defs)} reaching definitions: not evaluated per lane")
        return self.definition(defs[0], reg, env, depth)

    def definition(self, d: int, reg: str, env: dict[str, Any], depth: int = 0) -> Any:
        value = self.ev.definition(d, reg)
        if value.linear is not None:
            return self._linear(value, env)
        if depth > self._MAX_DEPTH:
            raise _Fail(f"{reg}: too long a chain to evaluate per lane")
        instr = self.body[d]
        if instr.guard is not None or instr.opcode in ("ld", "ldu"):
            raise _Fail(f"{reg} comes from {instr.full_opcode}: not evaluated per lane")
        try:
            return integer_result(instr, reg, lambda o, t: self.operand(o, d, env, depth + 1, t))
        except LaneError as error:
            raise _Fail(f"{reg}: {error}") from None

    @staticmethod
    def _linear(value: Value, env: dict[str, Any]) -> Any:
        linear = value.linear
        if linear is None:
            raise _Fail(f"not a per-thread integer: {value.reason}")
        offset, terms = linear
        _fits_lanes(offset, *terms.values(), what=value.expr)
        out = np.full(len(env["%tid.x"]), offset, dtype=np.int64)
        for name, c in terms.items():
            if name not in env:
                raise _Fail(f"{name} is neither a thread nor a block index: not evaluated per lane")
            out = out + c * env[name]
        return out


def _first_exit_array(distance: Any, step: int, cmp: str) -> Any:
    """:func:`_first_exit` for v0 = 0 and every lane's bound ``distance`` (numpy), or None when a
    lane never leaves."""
    out = _exits_or_never(np.asarray(distance, dtype=np.int64), step, cmp)
    return None if np.any(out < 0) else out


def _lane_exits(distance: Any, step: int, cmp: str) -> Any:
    """:func:`_first_exit_array` with a lane that would never leave counting 0: in a kernel that
    ends, such a lane does not enter the loop (a guard before it, such as a remainder loop's
    ``i < 3`` test, sends it around). None when no lane leaves."""
    out = _exits_or_never(np.asarray(distance, dtype=np.int64), step, cmp)
    if not np.any(out >= 0):
        return None
    return np.maximum(out, 0)


def _exits_or_never(distance: Any, step: int, cmp: str) -> Any:
    """Per lane the first k >= 0 at which ``k·step <cmp> distance`` is false, -1 for never."""
    if cmp in ("le", "ls"):
        return _exits_or_never(distance + 1, step, "lt")
    if cmp in ("ge", "hs"):
        return _exits_or_never(distance - 1, step, "gt")
    if cmp in ("lt", "lo"):
        inside = distance > 0
        if step <= 0:
            return np.where(inside, -1, 0)
        return np.where(inside, (distance + step - 1) // step, 0)
    if cmp in ("gt", "hi"):
        inside = distance < 0
        if step >= 0:
            return np.where(inside, -1, 0)
        down = -step
        return np.where(inside, (down - 1 - distance) // down, 0)
    if cmp == "ne" and step != 0:
        # stays while k·step != distance: leaves at k = distance / step when that is a whole
        # number >= 0
        q, r = np.divmod(distance, step)
        return np.where((r == 0) & (q >= 0), q, -1)
    out = [_first_exit(0, step, cmp, int(d)) for d in distance.tolist()]
    return np.asarray([-1 if k is None else k for k in out], dtype=np.int64)


def _is_int(t: str | None) -> bool:
    return t is not None and t[0] in "bsu"


def _typed(v: int, t: str | None) -> int:
    return int(as_type(v, t))


def _first_exit(v0: int, step: int, cmp: str, bound: int) -> int | None:
    """Smallest k >= 0 for which ``v0 + k*step <cmp> bound`` is false; None if never."""
    if cmp in ("le", "ls"):
        return _first_exit(v0, step, "lt", bound + 1)
    if cmp in ("ge", "hs"):
        return _first_exit(v0, step, "gt", bound - 1)
    if cmp in ("lt", "lo"):
        if v0 >= bound:
            return 0
        return None if step <= 0 else -(-(bound - v0) // step)  # ceil division on ints
    if cmp in ("gt", "hi"):
        if v0 <= bound:
            return 0
        return None if step >= 0 else -(-(v0 - bound) // -step)
    if cmp == "ne":
        if v0 == bound:
            return 0
        diff = bound - v0
        if step == 0 or diff % step or diff // step < 0:
            return None
        return diff // step
    # eq: stays only while equal
    if v0 != bound:
        return 0
    return 1 if step != 0 else None


def feasible_region(cfg: ControlFlowGraph, ev: UniformEvaluator) -> tuple[set[int], set[tuple[int, int]]]:
    """Blocks reachable when every branch whose predicate is uniform goes its one way, and the
    edges such branches never take."""
    if cfg.entry is None:
        return set(), set()
    body = cfg.function.instructions
    seen = {cfg.entry}
    stack = [cfg.entry]
    dead: set[tuple[int, int]] = set()
    while stack:
        b = cfg.blocks[stack.pop()]
        last = body[b.end - 1]
        succ = b.successors
        if last.opcode == "bra" and last.guard is not None:
            g = ev.register(last.guard, last.index)
            if g.known:
                taken = bool(g.value) != last.guard_negated
                target = cfg.function.labels.get(last.branch_target or "")
                if taken:
                    succ = [s for s in succ if cfg.blocks[s].start == target]
                else:
                    succ = [b.index + 1] if b.index + 1 < len(cfg.blocks) else []
                dead.update((b.index, s) for s in b.successors if s not in succ)
        for s in succ:
            if s not in seen:
                seen.add(s)
                stack.append(s)
    return seen, dead


class _Solver:
    """Trip counts of all loops, computed on demand so that a loop can use the exit value of an
    earlier loop's induction register (nvcc's remainder-first unrolled loops need that)."""

    def __init__(self, function: Function, cfg: ControlFlowGraph, defuse: DefUseGraph,
                 ev: UniformEvaluator, feasible: set[int]) -> None:
        self.function, self.cfg, self.defuse, self.ev, self.feasible = function, cfg, defuse, ev, feasible
        self.done: dict[int, tuple[TripCount, _LoopAnalysis | None]] = {}
        self.active: set[int] = set()
        ev.loop_exit = self.exit_value

    def trip(self, loop: Loop) -> tuple[TripCount, _LoopAnalysis | None]:
        h = loop.header_block
        if h in self.done:
            return self.done[h]
        if h in self.active:
            return TripCount(None, "unknown", "the loop bound depends on the loop itself"), None
        self.active.add(h)
        try:
            if h not in self.feasible:
                result = (TripCount(0, "inferred", "the loop is never entered with these launch values",
                                    "skipped"), None)
            else:
                analysis = _LoopAnalysis(self.function, self.cfg, self.defuse, self.ev, loop)
                result = (analysis.infer(), analysis)
        except _Fail as fail:
            result = (TripCount(None, "unknown", str(fail), ""), None)
        finally:
            self.active.discard(h)
        self.done[h] = result
        return result

    def exit_value(self, loop: Loop, reg: str) -> Value:
        tc, analysis = self.trip(loop)
        if analysis is None or analysis.exit is None:
            return Value(None, reg, f"{reg} is set in loop {loop.key}, whose trip count is unknown"
                         f" ({tc.reason})")
        try:
            return analysis.exit_value(reg)
        except _Fail as fail:
            return Value(None, reg, f"{reg} leaves loop {loop.key} with an unknown value: {fail}")


def infer_trip_counts(function: Function, cfg: ControlFlowGraph, defuse: DefUseGraph,
                      values: Any = None) -> dict[str, TripCount]:
    """Trip count of every natural loop, keyed by ``Loop.key`` (header label or ``B<index>``).

    ``values`` is a :class:`LaunchValues`, a duck-typed launch, or None. Branches whose
    predicate is uniform prune the CFG first, so definitions on paths this launch never takes
    do not blur the values (def-use is recomputed over the feasible edges when needed)."""
    values = LaunchValues.from_launch(values)
    feasible, dead = feasible_region(cfg, UniformEvaluator(function, defuse, values))
    if dead:
        defuse = reaching_definitions(function, cfg, frozenset(dead))
    solver = _Solver(function, cfg, defuse, UniformEvaluator(function, defuse, values, feasible), feasible)
    in_order = sorted(cfg.loops, key=lambda lp: cfg.blocks[lp.header_block].start)
    found = {loop.key: solver.trip(loop)[0] for loop in in_order}
    undecided = [loop for loop in cfg.loops if not found[loop.key].known]
    if undecided:
        found.update(_run_counts(function, cfg, values, undecided, found))
    out: dict[str, TripCount] = {}
    for loop in cfg.loops:
        inferred = found[loop.key]
        override = values.trip_overrides.get(loop.key)
        if override is not None:
            was = inferred.value if inferred.known else "unknown"
            inferred = TripCount(int(override), "override", f"set by the user (inferred: {was})",
                                 inferred.expression)
        out[loop.key] = inferred
    return {loop.key: out[loop.key] for loop in cfg.loops}


def _run_counts(function: Function, cfg: ControlFlowGraph, values: LaunchValues, loops: list[Loop],
                found: dict[str, TripCount]) -> dict[str, TripCount]:
    """Counts the data decides, from a run of sampled warps (:mod:`engine.analysis.simt`); the
    static reason stays beside the run's, or is kept when the run cannot decide."""
    try:
        runs = simt.run_trip_counts(function, cfg, values, loops)
    except simt.RunStopped as stopped:
        return {loop.key: replace(found[loop.key], reason=f"{found[loop.key].reason}; running sampled warps "
                                  f"did not decide it: {stopped}") for loop in loops}
    out = {}
    for loop in loops:
        run = runs[loop.key]
        out[loop.key] = TripCount(
            int(round(run.mean)), "inferred",
            f"run on {run.warps} sampled warps with the launch's values and declared data: mean over warps "
            f"{run.mean:.2f} passes per entry, slowest warp {run.slowest} (static analysis: "
            f"{found[loop.key].reason})", "run", run.slowest)
    return out
