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

from collections.abc import Callable

import numpy as np

from engine.analysis.classify import TYPE_BYTES
from engine.analysis.values import LaunchValues, as_type
from engine.mechanisms import enabled
from engine.memory.affine import AddressEvaluator, Affine, Unknown, base_address, iteration_atom
from engine.memory.control import Dependence
from engine.ptx.model import Instruction, Operand

_AXES = {"x": 0, "y": 1, "z": 2}
_COMPARE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal,
}


class LaneError(Exception):
    """An address that cannot be computed per lane; the message says why."""


def int64(v: int) -> int:
    """A Python int as the int64 with the same low 64 bits (``0xFFFFFFFFFFFFFFFF`` -> -1)."""
    return ((int(v) + (1 << 63)) % (1 << 64)) - (1 << 63)


def _wrap(v: np.ndarray, type_name: str | None) -> np.ndarray:
    """Re-read ``v`` as ``type_name`` (two's complement wrap for 8/16/32-bit types)."""
    if type_name is None or type_name == "pred":
        return v
    bits = 8 * TYPE_BYTES.get(type_name, 8)
    if bits >= 64:
        return v  # int64 arithmetic already wraps at 64 bits
    v = np.asarray(v, dtype=np.int64) & ((1 << bits) - 1)
    if type_name[0] == "s":
        v = np.where(v >= 1 << (bits - 1), v - (1 << bits), v)
    return v


def _cdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C division (toward zero)."""
    if np.any(b == 0):
        raise LaneError("division by zero")
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


# Loaded integers whose values are unknown are taken as pseudo-random in [0, this): an index
# into an array of 4 M elements (16 MB of floats) scatters a warp over 32 lines.
SYNTHETIC_RANGE = 1 << 22


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
                 pointers: frozenset[str] = frozenset(), strict: bool = False) -> None:
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
        self._n = len(threads["tid.x"])
        self._memo: dict[tuple[int, str], np.ndarray] = {}
        self._exec: dict[int, np.ndarray] = {}
        self._exec_active: set[int] = set()
        self._after: dict[tuple[tuple[str, int], ...], LaneEvaluator] = {}

    def address(self, instr: Instruction, operand: Operand) -> np.ndarray:
        if operand.base is None:
            raise LaneError(f"address {operand.text!r} has no base")
        return self.operand(operand.base, instr.index, None) + operand.offset

    # ------------------------------------------------------------------ values
    def _affine(self, form: Affine) -> np.ndarray:
        out = np.full(self._n, int64(form.const), dtype=np.int64)
        for a, c in form.terms:
            if a in self.threads:
                out = out + int64(c) * self.threads[a]
            elif a.startswith("&"):
                out = out + int64(c * self.layout.get(a[1:], base_address(a)))
            else:
                if a.startswith("param") and (self.strict or a not in self.pointers):
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
        if any(defuse.is_loop_carried(d, at, register) for d in defs):
            raise LaneError(form.reason)  # a value from the previous iteration
        result: np.ndarray | None = None
        for d in sorted(defs):
            evaluator = self._after_loops(d, at, register)
            value = evaluator._definition(d, register)
            result = value if result is None else np.where(evaluator.active(d), value, result)
        assert result is not None
        return result

    def _definition(self, index: int, register: str) -> np.ndarray:
        key = (index, register)
        if key not in self._memo:
            self._memo[key] = self._evaluate(self.function.instructions[index], register)
        return self._memo[key]

    def _loaded_data(self, instr: Instruction, reason: str) -> np.ndarray:
        """Stand-in values for integers loaded from memory, so that an address computed from them
        (a gather's index, a CSR row start) gets a lane pattern: each distinct address yields a
        pseudo-random value in [0, SYNTHETIC_RANGE), equal for equal addresses. A load every lane
        of a warp makes from one address thus stays warp-uniform and an indexed read scatters. An
        estimate (the data is unknown), never used to decide control flow (``strict``)."""
        integer = [m for m in instr.modifiers if m in TYPE_BYTES and m[0] in "bsu"]
        if self.strict or not integer or not enabled("synthetic_data"):
            raise LaneError(reason)
        operand = next((o for o in instr.operands if o.kind == "address"), None)
        if operand is None:
            raise LaneError(reason)
        address = self.address(instr, operand).astype(np.uint64)
        mixed = (address + np.uint64(0x632BE59BD9B4E019)) * np.uint64(0x9E3779B97F4A7C15)
        return ((mixed >> np.uint64(29)) % np.uint64(SYNTHETIC_RANGE)).astype(np.int64)

    def _after_loops(self, d: int, at: int, register: str) -> LaneEvaluator:
        """This evaluator, or one at the last iteration of the loops holding ``d`` but not ``at``."""
        at_block = self.cfg.block_of(at).index
        changes: dict[str, int] = {}
        loop = self.cfg.loop_of(self.cfg.block_of(d))
        while loop is not None and at_block not in loop.body:
            atom = iteration_atom(loop)
            if atom not in self.last_iterations:
                raise LaneError(f"{register} after loop {loop.key} needs that loop's trip count")
            changes[atom] = self.last_iterations[atom]
            loop = self.cfg.loop_by_header(loop.parent) if loop.parent is not None else None
        if not changes:
            return self
        key = tuple(sorted(changes.items()))
        if key not in self._after:
            self._after[key] = LaneEvaluator(self.affine, self.values, self.threads,
                                             {**self.context, **changes}, self.layout,
                                             self.dependences, self.last_iterations,
                                             self.pointers, self.strict)
        return self._after[key]

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
            for dep in self.dependences[block]:
                runs = self.executes(dep.block)
                mask |= runs if dep.loop_test else runs & self._takes(dep.block, dep.successor)
        finally:
            self._exec_active.discard(block)
        self._exec[block] = mask
        return mask

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
        if op.kind == "immediate":
            if not isinstance(op.value, int):
                raise LaneError(f"the literal {op.text!r} is not an integer")
            value = as_type(op.value, type_name) if type_name else op.value
            return np.full(self._n, int64(value), dtype=np.int64)
        if op.kind in ("register", "predicate") and op.name:
            v = self.register(op.name, at)
            return (v == 0).astype(np.int64) if op.negated else v
        form = self.affine.operand(op, at, type_name)
        if isinstance(form, Unknown):
            raise LaneError(form.reason)
        return self._affine(form)

    # ------------------------------------------------------------------ instructions
    def _evaluate(self, instr: Instruction, register: str) -> np.ndarray:
        op, line = instr.opcode, instr.location.line
        if op in ("ld", "ldu"):  # a parameter is a value (or a pointer); anything else is data
            form = self.affine.definition(instr.index, register)
            if isinstance(form, Unknown):
                return self._loaded_data(instr, form.reason)
            return self._affine(form)
        types = [m for m in instr.modifiers if m in TYPE_BYTES]
        if types and not all(t[0] in "bsu" or t == "pred" for t in types):
            raise LaneError(f"{instr.full_opcode} at line {line} is not integer arithmetic")
        t = types[-1] if types else None
        dest = instr.operands[0] if instr.operands else None
        # setp.<cmp> %p|%q: the second register of the pair receives the complement
        complement = (dest is not None and dest.kind == "pair" and len(dest.elements) == 2
                      and dest.elements[1].name == register)
        if complement and op != "setp":
            raise LaneError(f"{instr.full_opcode} at line {line} writes a register pair")
        ins = [self.operand(o, instr.index, t) for o in instr.operands[1:]]
        xs = [_wrap(v, t) for v in ins]
        if op in ("mov", "cvt", "cvta"):
            # cvt.<dst>.<src>: read as the source type, then wrap to the destination type.
            src = _wrap(ins[0], types[-1] if types else None)
            return _wrap(src, types[0] if types else None)
        if op == "setp":
            cmp = next((m for m in instr.modifiers if m in _COMPARE), None)
            if cmp is None or len(xs) < 2:
                raise LaneError(f"{instr.full_opcode} at line {line} is not an integer comparison")
            if t is not None and t[0] in "bu" and cmp in ("lt", "le", "gt", "ge"):
                xs = [_wrap(v, "u" + t[1:]) for v in xs]
            result = _COMPARE[cmp](xs[0], xs[1])
            combine = next((m for m in instr.modifiers if m in ("and", "or", "xor")), None)
            if combine is not None and len(ins) >= 3:
                other = ins[2] != 0
                result = result & other if combine == "and" else result | other if combine == "or" \
                    else result ^ other
            return (~result if complement else result).astype(np.int64)
        if op == "selp" and len(ins) == 3:
            return np.where(ins[2] != 0, xs[0], xs[1])
        out_t = t[0] + str(2 * 8 * TYPE_BYTES[t]) if "wide" in instr.modifiers and t else t
        result = self._arith(instr, xs, t)
        return _wrap(result, out_t)

    def _arith(self, instr: Instruction, xs: list[np.ndarray], t: str | None) -> np.ndarray:
        op, line = instr.opcode, instr.location.line
        if op == "not" and t == "pred" and xs:  # logical, not bitwise (~1 would still be true)
            return (xs[0] == 0).astype(np.int64)
        if op in ("neg", "not", "abs") and xs:
            return -xs[0] if op == "neg" else ~xs[0] if op == "not" else np.abs(xs[0])
        if len(xs) < 2:
            raise LaneError(f"{instr.full_opcode} at line {line} is not supported")
        a, b = xs[0], xs[1]
        bits = 8 * TYPE_BYTES.get(t or "", 4)
        if op in ("mul", "mad"):
            if "hi" in instr.modifiers:
                if bits > 32:
                    raise LaneError(f"{instr.full_opcode} at line {line}: 64-bit high products")
                if t and t[0] in "bu":
                    a, b = _wrap(a, f"u{bits}"), _wrap(b, f"u{bits}")
                r = (a * b) >> bits
            else:
                r = a * b
            return r + xs[2] if op == "mad" and len(xs) > 2 else r
        simple: dict[str, Callable[[], np.ndarray]] = {
            "add": lambda: a + b, "sub": lambda: a - b, "and": lambda: a & b, "or": lambda: a | b,
            "xor": lambda: a ^ b, "min": lambda: np.minimum(a, b), "max": lambda: np.maximum(a, b),
            "div": lambda: _cdiv(a, b), "rem": lambda: a - _cdiv(a, b) * b,
            "shl": lambda: a << np.minimum(b, bits),
        }
        if op in simple:
            return simple[op]()
        if op == "bfe" and len(xs) == 3:  # bit field extract: len bits from pos, sign-extended for .s
            pos, length = np.clip(xs[1] & 0xFF, 0, bits), np.clip(xs[2] & 0xFF, 0, bits)
            field = (_wrap(a, f"u{bits}") if bits < 64 else a) >> pos & ((1 << length) - 1)
            if t and t[0] == "s":
                sign = (length > 0) & ((field >> np.maximum(length - 1, 0)) & 1 == 1)
                field = np.where(sign, field - (1 << length), field)
            return field
        if op == "shr":
            if t and t[0] in "bu":  # logical shift: read as unsigned first
                a = _wrap(a, f"u{bits}") if bits < 64 else a
            return a >> np.minimum(b, bits - 1)
        raise LaneError(f"{instr.full_opcode} at line {line} is not integer arithmetic")
