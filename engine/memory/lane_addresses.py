"""Exact per-lane evaluation of addresses that are integer arithmetic but not affine.

Clamped neighbours (``min``/``max``/``selp``), torus wrap-around (``rem``) and divisions by
constants (``mul.hi`` magic numbers) are not affine, yet every lane's address is still a
function of its thread index and the uniform values of one context. :class:`LaneEvaluator`
computes it with numpy over all threads of a block, using PTX integer semantics (wrap to the
instruction type, C division/remainder, arithmetic vs. logical shifts). Sub-expressions that
*are* affine (loop induction variables included) come from the affine evaluator, so loops
work here too. Loaded values stay unknown: they are data, not arithmetic.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from engine.analysis.cfg import Loop
from engine.analysis.classify import TYPE_BYTES
from engine.analysis.lane_arith import COMPARE, LaneError, int64, integer_result
from engine.analysis.loaded_data import LoadedData, declared_buffer, scrambled
from engine.analysis.values import LaunchValues, as_type
from engine.memory.affine import AddressEvaluator, Affine, Unknown, base_address, iteration_atom
from engine.memory.control import Dependence
from engine.ptx.parsed_module import Instruction, Operand, OperandKind

_AXES = {"x": 0, "y": 1, "z": 2}
# re-exported: the memory analysis catches these as its own
__all__ = ["COMPARE", "LaneError", "LaneEvaluator", "MAX_RECURRENCE", "RecurrenceTooLong", "int64",
           "SYNTHETIC_RANGE"]

# Loaded integers whose values are unknown are taken as pseudo-random in [0, this): an index
# into an array of 4 M elements (16 MB of floats) scatters a warp over 32 lines.
SYNTHETIC_RANGE = 1 << 22
# Iterations of a non-affine recurrence evaluated step by step, at most (each step is a few
# numpy operations over the block's threads, and its values are kept for the next one).
MAX_RECURRENCE = 64


class RecurrenceTooLong(LaneError):
    """A loop-carried value needed at an iteration beyond ``MAX_RECURRENCE``."""


class LaneEvaluator:
    """Values of registers for every thread of one block in one context (uniform atom values),
    and which threads execute a block (``executes``) or an instruction (``active``).

    A register with several reaching definitions takes, per lane, the value of the last
    definition that lane executed (definitions in program order; a definition inside a loop
    the reader is outside of is evaluated at that loop's last iteration)."""

    def __init__(self, affine: AddressEvaluator, values: LaunchValues, threads: dict[str, np.ndarray],
                 context: dict[str, int], layout: dict[str, int],
                 dependences: dict[int, list[Dependence]] | None = None,
                 last_iterations: dict[str, int] | None = None,
                 pointers: frozenset[str] = frozenset(), strict: bool = False,
                 family: dict[tuple[Any, ...], LaneEvaluator] | None = None, lane_exits: bool = True) -> None:
        self.affine = affine
        self.function = affine.function
        self.cfg = affine.analysis.cfg
        self.values = values
        self.threads = threads
        self.context = context
        self.layout = layout
        self.dependences = dependences or {}
        self.last_iterations = last_iterations or {}
        # Arguments without a value: pointers sit at 0 in addresses (256-byte aligned), but no
        # unknown argument may decide a branch (``strict``, for active lanes) or, unless it is
        # a pointer, enter an address.
        self.pointers = pointers
        self.strict = strict
        # Whether lanes that left a loop drop out of its later iterations (``_still_looping``);
        # False for the evaluators that decide it, so that deciding iteration t never needs t - 2
        self.lane_exits = lane_exits
        # While the address of a declared data load is computed, pointers may enter it even when
        # strict: the declared values depend on the element read, not on where the buffer is.
        self._reading_data = False
        self._n = len(threads["tid.x"])
        self._memo: dict[tuple[int, str], np.ndarray] = {}
        self._exec: dict[int, np.ndarray] = {}
        self._exec_active: set[int] = set()
        self._family = family if family is not None else {}
        self._carried: dict[tuple[str, ...] | tuple[str, int], np.ndarray] = {}

    def address(self, instr: Instruction, operand: Operand) -> np.ndarray:
        if operand.base is None:
            raise LaneError(f"address {operand.text!r} has no base")
        return self.operand(operand.base, instr.index, None) + int64(operand.offset)

    # ------------------------------------------------------------------ values
    def _affine(self, form: Affine) -> np.ndarray:
        out = np.full(self._n, int64(form.const), dtype=np.int64)
        for a, c in form.terms:
            if a in self.threads:
                out = out + int64(c) * self.threads[a]
            elif a.startswith("&"):
                out = out + int64(c * self.layout.get(a[1:], base_address(a)))
            else:
                if a.startswith("param") and ((self.strict and not self._reading_data) or a not in self.pointers):
                    raise LaneError(f"argument {a[5:]} has no value in the launch")
                out = out + int64(c * self.context.get(a, base_address(a)))
        return out

    def register(self, register: str, at: int) -> np.ndarray:
        form = self.affine.register(register, at)
        if isinstance(form, Affine):
            return self._affine(form)
        defs = self.affine.analysis.defuse.reaching(at, register)
        if not defs:
            raise LaneError(form.reason)
        if len(defs) == 1:
            return self._definition(defs[0], register)
        defuse = self.affine.analysis.defuse
        carried = [d for d in defs if defuse.is_loop_carried(d, at, register)]
        if carried:
            return self._recurrence(register, at, defs, carried, form.reason)
        return self._last_executed(sorted(defs), register, at, None)

    def _last_executed(self, defs: list[int], register: str, at: int,
                       before: np.ndarray | None) -> np.ndarray:
        """Per lane, the value of the last of ``defs`` (program order) the lane executed;
        ``before`` where it executed none (None: the first definition's value)."""
        result = before
        for d in defs:
            if self._never_runs(d, at):
                continue
            evaluator = self._after_loops(d, at, register)
            value = evaluator._definition(d, register)
            result = value if result is None else np.where(evaluator.active(d), value, result)
        if result is None:
            raise LaneError(f"{register} has no definition before line {self.function.instructions[at].location.line}")
        return result

    def _recurrence(self, register: str, at: int, defs: tuple[int, ...], carried: list[int],
                    reason: str) -> np.ndarray:
        """A register the loop carries from one iteration to the next by arithmetic that is not
        affine (a wrapped index ``j += s; if (j >= n) j -= n``, a running product): its value at
        iteration k is the value leaving iteration k - 1, which an evaluator of that iteration
        computes, down to iteration 0 where the definitions before the loop hold. Iterations are
        evaluated in ascending order, each once (memoised), so the depth stays bounded."""
        loop = self.cfg.loop_of(self.cfg.block_of(at))
        while loop is not None and not all(self.cfg.block_of(d).index in loop.body for d in carried):
            loop = self.cfg.loop_by_header(loop.parent) if loop.parent is not None else None
        if loop is None or len(loop.latches) != 1:
            raise LaneError(reason)
        atom = iteration_atom(loop)
        k = self.context.get(atom)
        if k is None:
            raise LaneError(reason)
        if k > MAX_RECURRENCE:
            raise RecurrenceTooLong(f"{register} is carried by loop {loop.key} in a way that is not affine: "
                                    f"iteration {k} would need more than {MAX_RECURRENCE} steps of it")
        straight = sorted(d for d in defs if d not in carried)
        if k <= 0:
            return self._last_executed(straight, register, at, None)
        inner = [d for d in straight if self.cfg.block_of(d).index in loop.body]
        key = (register, at)
        if key not in self._carried:
            latch_end = self.cfg.blocks[loop.latches[0]].end - 1
            leaving = None
            for j in range(k):   # ascending: each step one level deep
                previous = self._sibling({atom: j})
                leaving = previous._leaving(register, latch_end)
            assert leaving is not None
            self._carried[key] = self._last_executed(inner, register, at, leaving)
        return self._carried[key]

    def _leaving(self, register: str, latch_end: int) -> np.ndarray:
        """The register's value as the loop's latch ends this iteration."""
        if register in self.function.instructions[latch_end].dests:
            return self._definition(latch_end, register)
        key = ("leaving", register, latch_end)
        if key not in self._carried:
            self._carried[key] = self.register(register, latch_end)
        return self._carried[key]

    def _definition(self, index: int, register: str) -> np.ndarray:
        key = (index, register)
        if key not in self._memo:
            self._memo[key] = self._evaluate(self.function.instructions[index], register)
        return self._memo[key]

    def _loaded_data(self, instr: Instruction, reason: str) -> np.ndarray:
        """Values for integers loaded from memory, so that an address computed from them (a
        gather's index, a CSR row start) gets a lane pattern. Where the launch declares what the
        buffer holds (:mod:`engine.analysis.loaded_data`) its values, which may also decide
        branches; otherwise stand-ins: each distinct address yields a pseudo-random value in
        [0, SYNTHETIC_RANGE), equal for equal addresses, so a load every lane of a warp makes
        from one address stays warp-uniform and an indexed read scatters. An estimate (the data
        is unknown), never used to decide control flow (``strict``)."""
        integer = [m for m in instr.modifiers if m in TYPE_BYTES and m[0] in "bsu"]
        operand = next((o for o in instr.operands if o.kind == OperandKind.ADDRESS), None)
        stand_ins = not self.strict
        if not integer or operand is None or not (stand_ins or self.values.data):
            raise LaneError(reason)
        reading, self._reading_data = self._reading_data, True
        try:
            address = self.address(instr, operand)
        finally:
            self._reading_data = reading
        declared = self._declared_data(address)
        if declared is None:
            if not stand_ins:
                raise LaneError(reason)
            return scrambled(address, SYNTHETIC_RANGE)
        pointer, data = declared
        element = (address - base_address(pointer)) // TYPE_BYTES[integer[-1]]
        return data.values(element, address)

    def _declared_data(self, address: np.ndarray) -> tuple[str, LoadedData] | None:
        """The pointer argument the addresses fall in and the data the launch declares for it
        (:func:`engine.analysis.loaded_data.declared_buffer`), for a pointer of this context."""
        if not self.values.data:
            return None
        found = declared_buffer(address, self.function.params, self.values)
        if found is None or f"param{found[0]}" not in self.pointers:
            return None
        return f"param{found[0]}", found[1]

    def _loops_left(self, d: int, at: int) -> Iterator[Loop]:
        """The loops holding ``d`` but not ``at``, innermost first."""
        at_block = self.cfg.block_of(at).index
        loop = self.cfg.loop_of(self.cfg.block_of(d))
        while loop is not None and at_block not in loop.body:
            yield loop
            loop = self.cfg.loop_by_header(loop.parent) if loop.parent is not None else None

    def _never_runs(self, d: int, at: int) -> bool:
        """Whether ``d`` sits in a loop (not holding ``at``) that the launch runs zero times: an
        unrolled loop's remainder when the count divides evenly leaves its registers as they were."""
        trips = self.affine.analysis.trip_counts
        return any((t := trips.get(loop.key)) is not None and t.value == 0 for loop in self._loops_left(d, at))

    def _after_loops(self, d: int, at: int, register: str) -> LaneEvaluator:
        """This evaluator, or one at the last iteration of the loops holding ``d`` but not ``at``."""
        changes: dict[str, int] = {}
        for loop in self._loops_left(d, at):
            atom = iteration_atom(loop)
            if atom not in self.last_iterations:
                raise LaneError(f"{register} after loop {loop.key} needs that loop's trip count")
            changes[atom] = self.last_iterations[atom]
        return self._sibling(changes)

    def _sibling(self, changes: dict[str, int], lane_exits: bool | None = None) -> LaneEvaluator:
        """The evaluator of this context with some atoms changed (self when none change); shared
        through ``family`` when given, so that every access and context reuses its values.
        ``lane_exits``: whether the sibling's active lanes drop those that left a loop (default:
        as this one's)."""
        exits = self.lane_exits if lane_exits is None else lane_exits
        if exits == self.lane_exits and all(self.context.get(a) == v for a, v in changes.items()):
            return self
        context = {**self.context, **changes}
        key = (self.strict, tuple(sorted(context.items()))) + (() if exits else ("no lane exits",))
        if key not in self._family:
            self._family[key] = LaneEvaluator(self.affine, self.values, self.threads, context, self.layout,
                                              self.dependences, self.last_iterations, self.pointers,
                                              self.strict, self._family, exits)
        return self._family[key]

    # ------------------------------------------------------------------ active lanes
    def active(self, index: int) -> np.ndarray:
        """Lanes that execute instruction ``index``: its block runs and its guard holds."""
        instr = self.function.instructions[index]
        mask = self.executes(self.cfg.block_of(index).index)
        if instr.guard is not None:
            guard = self.register(instr.guard, index) != 0
            mask = mask & (~guard if instr.guard_negated else guard)
        return mask

    def executes(self, block: int) -> np.ndarray:
        if block in self._exec:
            return self._exec[block]
        if block in self._exec_active or not self.dependences.get(block):
            return np.ones(self._n, dtype=bool)  # entry-like, or a loop's own test (cycle)
        self._exec_active.add(block)
        try:
            mask = np.zeros(self._n, dtype=bool)
            # A loop's own tests decide how often, not which lanes (they are taken as uniform):
            # the lanes that enter it are those of the branches that lead into it. A block that
            # depends on loop tests only runs with the lanes that run the test.
            deps = self.dependences[block]
            entering = [dep for dep in deps if not dep.loop_test]
            for dep in entering or deps:
                runs = self.executes(dep.block)
                mask |= runs if dep.loop_test else runs & self._takes(dep.block, dep.successor)
        finally:
            self._exec_active.discard(block)
        if self.lane_exits:
            staying = self._still_looping(block)
            if staying is not None:
                mask = mask & staying
        self._exec[block] = mask
        return mask

    def _still_looping(self, block: int) -> np.ndarray | None:
        """Lanes that have not yet left the loops holding ``block`` at this context's iterations
        (None: no loop says so). A lane goes round a bottom-tested loop again while its latch
        branch goes back to the header, so at iteration t > 0 it runs the body when its test
        held at iteration t - 1 (a thread's CSR row shorter than the warp's longest ends
        early). Counted loops are monotone: a lane that leaves does not come back."""
        staying = None
        loop = self.cfg.loop_of(self.cfg.blocks[block])
        while loop is not None:
            atom = iteration_atom(loop)
            t = self.context.get(atom)
            if t and len(loop.latches) == 1:
                try:
                    went_back = self._sibling({atom: t - 1}, lane_exits=False)._takes(loop.latches[0],
                                                                                      loop.header_block)
                except (LaneError, RecursionError):
                    went_back = None       # the test is not computable per lane: taken as uniform
                if went_back is not None:
                    staying = went_back if staying is None else staying & went_back
            loop = self.cfg.loop_by_header(loop.parent) if loop.parent is not None else None
        return staying

    def _takes(self, block: int, successor: int) -> np.ndarray:
        """Lanes whose branch at the end of ``block`` goes to ``successor``."""
        branch = self.function.instructions[self.cfg.blocks[block].end - 1]
        target = branch.branch_target
        if branch.opcode != "bra" or branch.guard is None or target not in self.function.labels:
            raise LaneError(f"cannot tell which lanes take {branch.full_opcode} at line {branch.location.line}")
        taken = self.register(branch.guard, branch.index) != 0
        if branch.guard_negated:
            taken = ~taken
        goes_to_target = self.cfg.block_of(self.function.labels[target]).index == successor
        return taken if goes_to_target else ~taken

    def operand(self, op: Operand, at: int, type_name: str | None) -> np.ndarray:
        if op.kind == OperandKind.IMMEDIATE:
            if not isinstance(op.value, int):
                raise LaneError(f"the literal {op.text!r} is not an integer")
            value = as_type(op.value, type_name) if type_name else op.value
            return np.full(self._n, int64(value), dtype=np.int64)
        if op.kind in (OperandKind.REGISTER, OperandKind.PREDICATE) and op.name:
            v = self.register(op.name, at)
            return (v == 0).astype(np.int64) if op.negated else v
        form = self.affine.operand(op, at, type_name)
        if isinstance(form, Unknown):
            raise LaneError(form.reason)
        return self._affine(form)

    # ------------------------------------------------------------------ instructions
    def _evaluate(self, instr: Instruction, register: str) -> np.ndarray:
        if instr.opcode in ("ld", "ldu"):  # a parameter is a value (or a pointer); anything else is data
            form = self.affine.definition(instr.index, register)
            if isinstance(form, Unknown):
                return self._loaded_data(instr, form.reason)
            return self._affine(form)
        return integer_result(instr, register, lambda o, t: self.operand(o, instr.index, t))
