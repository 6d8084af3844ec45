"""Uniform values: what every thread of the launch agrees on, evaluated over def-use chains.

Trip counts need the loop bounds as numbers. They come from constants, kernel arguments
(``ld.param``), ``%ntid``/``%nctaid`` and integer arithmetic on those. Anything that differs
between threads or blocks (``%tid``, ``%ctaid``, ``%laneid``, loads from memory) is *not*
uniform: the evaluator then returns an unknown value whose ``reason`` names the culprit, so the
GUI can tell the user which trip count to type in.

Integer values are kept as Python ints in the representation of their PTX type (``u32``/``b32``
masked to 32 bits, ``s32`` sign-extended); every operation re-reads its inputs through its own
type, which is what makes ``shr.u32`` of an ``s32`` value behave like the hardware.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.analysis.cfg import Loop
from engine.analysis.classify import TYPE_BYTES
from engine.analysis.defuse import DefUseGraph
from engine.analysis.loaded_data import LoadedData, parse_loaded_data
from engine.ptx.parsed_module import Function, Instruction, Operand, OperandKind

Number = int | float


@dataclass(frozen=True)
class Value:
    """A uniform value (``value`` set) or an unknown one (``value`` None, ``reason`` says why).
    ``expr`` is the value as a formula of parameters and launch dimensions, for display."""

    value: Number | None
    expr: str
    reason: str = ""
    # An unknown integer may still be *linear*: ``offset + sum(coeff * atom)``, where an atom is a
    # non-uniform leaf (``%ctaid.y``, a loaded value ``%r5@12``). Loop bounds such as
    # ``a < a_first + width`` then have a uniform distance even though neither side is uniform.
    terms: tuple[tuple[str, int], ...] = ()
    offset: int = 0

    @property
    def known(self) -> bool:
        return self.value is not None

    @property
    def linear(self) -> tuple[int, dict[str, int]] | None:
        """``(offset, {atom: coefficient})`` for known integers and linear unknowns, else None."""
        if self.value is not None:
            return (self.value, {}) if isinstance(self.value, int) else None
        if self.terms:
            return self.offset, dict(self.terms)
        return None


def _unknown(reason: str, expr: str = "?") -> Value:
    return Value(None, expr, reason)


def atom(name: str, reason: str, expr: str | None = None) -> Value:
    """A non-uniform leaf that stays usable in linear arithmetic."""
    return Value(None, expr or name, reason, ((name, 1),), 0)


def from_linear(offset: int, terms: dict[str, int], expr: str, reason: str) -> Value:
    terms = {k: c for k, c in terms.items() if c}
    if not terms:
        return Value(offset, expr)
    return Value(None, expr, reason, tuple(sorted(terms.items())), offset)


def atom_definition(name: str) -> int | None:
    """The instruction index an atom ``%r5@12`` was defined at (None for special registers)."""
    _, sep, index = name.rpartition("@")
    return int(index) if sep and index.isdigit() else None


def _dim3(dim: Any) -> tuple[int, int, int] | None:
    """Accept ``(x, y, z)``, ``(x,)``, an int, or an object with ``x``/``y``/``z``."""
    if dim is None:
        return None
    if isinstance(dim, int):
        return (dim, 1, 1)
    if all(hasattr(dim, a) for a in ("x", "y", "z")):
        return (int(dim.x), int(dim.y), int(dim.z))
    x, y, z = ([int(v) for v in dim] + [1, 1, 1])[:3]
    return (x, y, z)


@dataclass
class LaunchValues:
    """The launch facts the evaluator may use. ``args`` is keyed by parameter index (int or
    its string) or by parameter name; ``trip_overrides`` by loop key (header label)."""

    args: Mapping[str | int, Number] = field(default_factory=dict)
    block: tuple[int, int, int] | None = None
    grid: tuple[int, int, int] | None = None
    trip_overrides: Mapping[str, int] = field(default_factory=dict)
    data: Mapping[str | int, str] = field(default_factory=dict)    # pointer argument -> data pattern

    @classmethod
    def from_launch(cls, launch: Any) -> LaunchValues:
        """Read a duck-typed launch (``.grid``, ``.block``, ``.args``, ``.trip_overrides``)."""
        if launch is None:
            return cls()
        if isinstance(launch, LaunchValues):
            return launch
        return cls(
            args=dict(getattr(launch, "args", None) or {}),
            block=_dim3(getattr(launch, "block", None)),
            grid=_dim3(getattr(launch, "grid", None)),
            trip_overrides=dict(getattr(launch, "trip_overrides", None) or {}),
            data=dict(getattr(launch, "data", None) or {}),
        )

    def argument(self, index: int, name: str) -> Number | None:
        for key in (index, str(index), name):
            if key in self.args:
                return self.args[key]
        return None

    def loaded_data(self, index: int, name: str) -> LoadedData | None:
        """The declared pattern of the integers pointer argument ``index`` points to."""
        for key in (index, str(index), name):
            if key in self.data:
                return parse_loaded_data(self.data[key])
        return None


# ---------------------------------------------------------------- integer type handling

def _bits_of(type_name: str | None) -> int:
    return 8 * TYPE_BYTES.get(type_name or "", 8)


def as_type(v: Number, type_name: str | None) -> Number:
    """Re-read ``v`` as a value of ``type_name`` (wrap integers, pass floats through)."""
    if type_name is None or type_name[0] == "f" or isinstance(v, float):
        return v  # floats, and float bit patterns moved into integer registers, stay as they are
    if type_name == "pred":
        return 1 if v else 0
    width = _bits_of(type_name)
    v = int(v) & ((1 << width) - 1)
    if type_name[0] == "s" and v >> (width - 1):
        v -= 1 << width
    return v


_MAX_DEPTH = 64  # definitions followed at once (about 6 frames each); real bounds are a few deep
_SPECIAL_DIMS = {"ntid": "block", "nctaid": "grid"}
_AXES = {"x": 0, "y": 1, "z": 2}
_THREAD_DEPENDENT = ("tid", "laneid", "warpid", "lanemask", "clock", "globaltimer", "smid")
_INT_OPS = {"add", "sub", "mul", "mad", "div", "rem", "min", "max", "neg", "abs", "not", "and",
            "or", "xor", "shl", "shr", "mov", "cvt", "cvta", "selp", "setp"}
_CMP = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
    "lo": lambda a, b: a < b, "ls": lambda a, b: a <= b,
    "hi": lambda a, b: a > b, "hs": lambda a, b: a >= b,
}
_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "/", "rem": "%", "and": "&", "or": "|",
           "xor": "^", "shl": "<<", "shr": ">>"}


def instruction_type(instr: Instruction) -> str | None:
    types = [m for m in instr.modifiers if m in TYPE_BYTES]
    return types[-1] if types else None


class UniformEvaluator:
    """Evaluates registers at a program point through their reaching definitions.

    ``feasible`` optionally restricts which blocks' definitions count (blocks that uniform
    branch decisions make unreachable cannot define anything)."""

    def __init__(self, function: Function, defuse: DefUseGraph, values: LaunchValues,
                 feasible: set[int] | None = None) -> None:
        self.function = function
        self.defuse = defuse
        self.values = values
        self.feasible = feasible
        self._params = {p.name: (i, p) for i, p in enumerate(function.params)}
        self._memo: dict[tuple[int, str], Value] = {}
        self._active: set[tuple[int, str]] = set()
        # Set by the trip-count pass: the value a register has when it leaves a loop (its
        # induction value after the last iteration), for reads after that loop.
        self.loop_exit: Callable[[Loop, str], Value] | None = None

    # -- public ---------------------------------------------------------------------------
    def register(self, register: str, at: int) -> Value:
        """The value of ``register`` as read by instruction ``at``."""
        return self.merge(register, self.defs(register, at), at)

    def defs(self, register: str, at: int) -> tuple[int, ...]:
        defs = self.defuse.reaching(at, register)
        if self.feasible is not None:
            block_of = self.defuse.cfg.block_of
            defs = tuple(d for d in defs if block_of(d).index in self.feasible)
        return defs

    def merge(self, register: str, defs: Iterable[int], at: int | None = None) -> Value:
        """One value for several reaching definitions, when they all agree. With ``at`` (the
        reading instruction), definitions inside a loop that ``at`` is outside of stand for the
        loop's exit value."""
        defs = tuple(defs)
        if not defs:
            return _unknown(f"{register} is read before any definition", register)
        values = [self.definition(d, register) for d in self._outside_loops(defs, at)]
        values += [self.loop_exit(loop, register) for loop in self._left_loops(defs, at)]
        first = values[0]
        if len(values) == 1:
            return first
        if all(v.known for v in values) and all(v.value == first.value for v in values):
            return Value(first.value, register)
        if first.terms and all(v.terms == first.terms and v.offset == first.offset for v in values):
            return first
        bad = next((v for v in values if not v.known), None)
        if bad is not None:
            return Value(None, bad.expr, bad.reason)  # paths disagree: not even linear
        return _unknown(f"{register} has {len(defs)} definitions reaching here with different values "
                        "(it depends on the path taken)", register)

    def _leaving(self, d: int, at: int | None) -> Loop | None:
        """The outermost loop that holds definition ``d`` but not the reader ``at``."""
        if at is None or self.loop_exit is None:
            return None
        cfg = self.defuse.cfg
        at_block = cfg.block_of(at).index
        loop, outer = cfg.loop_of(cfg.block_of(d)), None
        while loop is not None and at_block not in loop.body:
            outer = loop
            loop = cfg.loop_by_header(loop.parent) if loop.parent is not None else None
        return outer

    def _outside_loops(self, defs: tuple[int, ...], at: int | None) -> list[int]:
        return [d for d in defs if self._leaving(d, at) is None]

    def _left_loops(self, defs: tuple[int, ...], at: int | None) -> list[Loop]:
        loops = {id(lp): lp for d in defs if (lp := self._leaving(d, at)) is not None}
        return list(loops.values())

    def operand(self, operand: Operand, at: int) -> Value:
        kind = operand.kind
        if kind == OperandKind.IMMEDIATE:
            if operand.value is None:
                return _unknown(f"cannot read the literal {operand.text!r}", operand.text)
            return Value(operand.value, operand.text or str(operand.value))
        if kind in (OperandKind.REGISTER, OperandKind.PREDICATE):
            v = self.register(operand.name or "", at)
            if operand.negated and v.known:
                return Value(0 if v.value else 1, f"!{v.expr}")
            return v
        if kind == OperandKind.SPECIAL:
            return self._special(operand.name or operand.text)
        if kind == OperandKind.SYMBOL:
            return atom(operand.name or "?", f"{operand.name} is an address")
        return _unknown(f"operand {operand.text!r} is not a uniform value", operand.text)

    def definition(self, index: int, register: str) -> Value:
        """The value instruction ``index`` writes into ``register``."""
        key = (index, register)
        if key in self._memo:
            return self._memo[key]
        if key in self._active:  # a cycle through a back edge: changes every iteration
            return _unknown(f"{register} changes on every iteration of a loop", register)
        if len(self._active) > _MAX_DEPTH:  # keeps Python's recursion limit out of reach
            return _unknown(f"{register} is computed by too long a chain of instructions", register)
        self._active.add(key)
        try:
            result = self._evaluate(self.function.instructions[index], register)
        finally:
            self._active.discard(key)
        self._memo[key] = result
        return result

    # -- internals ------------------------------------------------------------------------
    def _special(self, name: str) -> Value:
        base, _, axis = name.lstrip("%").partition(".")
        if base in _SPECIAL_DIMS and axis in _AXES:
            dims = self.values.block if base == "ntid" else self.values.grid
            if dims is None:
                return _unknown(f"{name} needs the launch's {_SPECIAL_DIMS[base]} size", name)
            return Value(dims[_AXES[axis]], name)
        if base.startswith(_THREAD_DEPENDENT):
            return atom(name, f"{name} differs between threads")
        if base in ("ctaid", "clusterid", "cluster_ctaid", "gridid"):
            return atom(name, f"{name} differs between blocks")
        return _unknown(f"{name} is not a uniform value", name)

    def _evaluate(self, instr: Instruction, register: str) -> Value:
        op = instr.opcode
        if instr.guard is not None:
            # Whether a guarded definition happened depends on its guard; only a known,
            # true guard keeps the value meaningful.
            g = self.register(instr.guard, instr.index)
            if not g.known:
                return _unknown(f"{register} is set under guard {instr.guard}: {g.reason}", register)
            if bool(g.value) == instr.guard_negated:
                return _unknown(f"{register}'s guarded definition does not execute", register)
        if op in ("ld", "ldu"):
            return self._load(instr, register)
        if op == "cvta" and "global" not in instr.modifiers:
            # Shared/local windows move the number; global<->generic keeps it (handled as mov).
            return atom(f"{register}@{instr.index}", f"{register} is a {instr.full_opcode} address",
                        register)
        if op not in _INT_OPS:
            return _unknown(f"{register} comes from {instr.full_opcode} (line {instr.location.line})",
                            register)
        dest = instr.operands[0] if instr.operands else None
        complement = (dest is not None and dest.kind == OperandKind.PAIR and len(dest.elements) == 2
                      and dest.elements[1].name == register)
        ins = [self.operand(o, instr.index) for o in instr.operands[1:]]
        if op == "selp" and len(ins) == 3:
            c = ins[2]
            if not c.known:
                return c
            return ins[0] if c.value else ins[1]
        bad = next((v for v in ins if not v.known), None)
        if bad is not None and op == "setp" and len(ins) == 2:
            decided = _compare_linear(instr, ins[0], ins[1])
            if decided is not None:
                return Value(0 if decided == complement else 1, f"({ins[0].expr} ? {ins[1].expr})")
        if bad is not None:
            linear = _linear_apply(instr, ins, bad.reason)
            return linear if linear is not None else Value(None, bad.expr, bad.reason)
        try:
            value, expr = self._apply(instr, [v.value for v in ins], [v.expr for v in ins])
        except (ZeroDivisionError, ValueError, OverflowError, TypeError, IndexError):
            return _unknown(f"cannot evaluate {instr.full_opcode} at line {instr.location.line}", register)
        if complement:
            value = 0 if value else 1
        return Value(value, expr)

    def _load(self, instr: Instruction, register: str) -> Value:
        if "param" not in instr.modifiers:
            return atom(f"{register}@{instr.index}", f"{register} is loaded from memory by "
                        f"{instr.full_opcode} (line {instr.location.line})", register)
        addr = next((o for o in instr.operands if o.kind == OperandKind.ADDRESS), None)
        base = addr.base if addr is not None else None
        if base is None or base.kind != OperandKind.SYMBOL or base.name not in self._params:
            return _unknown(f"{register} is loaded from an unknown parameter address", register)
        index, param = self._params[base.name]
        if addr.offset != 0 or param.array_size is not None:
            return _unknown(f"{register} is a field of the structure parameter {param.name}", register)
        value = self.values.argument(index, param.name)
        if value is None:
            return atom(f"param{index}", f"argument {index} ({param.name}) has no value in the launch")
        return Value(as_type(value, instruction_type(instr)), f"param{index}")

    def _apply(self, instr: Instruction, a: list[Number], e: list[str]) -> tuple[Number, str]:
        op, mods = instr.opcode, instr.modifiers
        t = instruction_type(instr)
        if op in ("cvt", "mov", "cvta"):
            src_t = [m for m in mods if m in TYPE_BYTES]
            x = as_type(a[0], src_t[-1] if src_t else t)
            dst = src_t[0] if src_t else t
            if dst and dst[0] in "bsu" and isinstance(x, float):
                x = _round(x, mods)
            elif dst and dst[0] == "f" and isinstance(x, int):
                x = float(x)
            return as_type(x, dst), e[0]
        if op == "setp":
            cmp = next((m for m in mods if m in _CMP), None)
            if cmp is None:  # unordered float compares (ltu, nan, ...) are not bounds
                raise ValueError(f"unsupported comparison {instr.full_opcode}")
            result = _CMP[cmp](as_type(a[0], t), as_type(a[1], t))
            # setp.<cmp>.and/or/xor p, a, b, c combines the compare with predicate c.
            combine = next((m for m in mods if m in ("and", "or", "xor")), None)
            if combine is not None and len(a) >= 3:
                c = bool(a[2])
                result = (result and c) if combine == "and" else (result or c) if combine == "or" \
                    else (result != c)
            return (1 if result else 0), f"({e[0]} {cmp} {e[1]})"
        xs = [as_type(v, t) for v in a]
        out_t = t
        if "wide" in mods and t:
            out_t = t[0] + str(2 * _bits_of(t))
        if op in ("neg", "not", "abs"):
            x = xs[0]
            r = -x if op == "neg" else abs(x) if op == "abs" else ~int(x)
            return as_type(r, out_t), f"{op}({e[0]})"
        x, y = xs[0], xs[1]
        if op == "add":
            r: Number = x + y
        elif op == "sub":
            r = x - y
        elif op in ("mul", "mad"):
            r = x * y
            if "hi" in mods:
                r = int(r) >> _bits_of(t)
            if op == "mad":
                r = r + as_type(a[2], out_t)
                return as_type(r, out_t), f"({e[0]} * {e[1]} + {e[2]})"
        elif op == "div":
            r = x / y if isinstance(x, float) or isinstance(y, float) else _trunc_div(x, y)
        elif op == "rem":
            r = x - _trunc_div(x, y) * y
        elif op in ("min", "max"):
            r = min(x, y) if op == "min" else max(x, y)
            return as_type(r, out_t), f"{op}({e[0]}, {e[1]})"
        elif op == "and":
            r = int(x) & int(y)
        elif op == "or":
            r = int(x) | int(y)
        elif op == "xor":
            r = int(x) ^ int(y)
        elif op == "shl":
            r = int(x) << shift_amount(a[1], _bits_of(t))
        else:  # shr: arithmetic for signed types, logical otherwise (x is already typed)
            r = int(x) >> shift_amount(a[1], _bits_of(t))
        return as_type(r, out_t), f"({e[0]} {_SYMBOL[op]} {e[1]})"


def shift_amount(amount: Number, width: int) -> int:
    """A shift's amount as PTX reads it: a .u32, and amounts above the width act as the width."""
    return min(int(amount) & 0xFFFFFFFF, width)


def _trunc_div(x: Number, y: Number) -> int:
    """C-style integer division (rounds toward zero), as PTX ``div.s32`` does."""
    q = abs(int(x)) // abs(int(y))
    return q if (x >= 0) == (y >= 0) else -q


def _round(x: float, mods: tuple[str, ...]) -> int:
    if "rni" in mods:
        return int(round(x))
    if "rmi" in mods:
        return math.floor(x)
    if "rpi" in mods:
        return math.ceil(x)
    return int(x)  # rzi and the default for float->int


def _linear_apply(instr: Instruction, ins: list[Value], reason: str) -> Value | None:
    """Integer add/sub/mul-by-constant/shl/neg/mov on linear values; None when not linear."""
    op, mods = instr.opcode, instr.modifiers
    types = [m for m in mods if m in TYPE_BYTES]
    if not types or any(x[0] not in "bsu" for x in types) or "hi" in mods:
        return None  # floats (and cvt to/from them) and high halves are not linear
    lins = [v.linear for v in ins]
    if any(x is None for x in lins):
        return None
    exprs = [v.expr for v in ins]

    def scaled(x: tuple[int, dict[str, int]], k: int) -> tuple[int, dict[str, int]]:
        return x[0] * k, {a: c * k for a, c in x[1].items()}

    def summed(x: tuple[int, dict[str, int]], y: tuple[int, dict[str, int]]) -> tuple[int, dict[str, int]]:
        terms = dict(x[1])
        for a, c in y[1].items():
            terms[a] = terms.get(a, 0) + c
        return x[0] + y[0], terms

    if op in ("mov", "cvt", "cvta") and len(lins) == 1:
        r, expr = lins[0], exprs[0]
    elif op == "neg" and len(lins) == 1:
        r, expr = scaled(lins[0], -1), f"-{exprs[0]}"
    elif op in ("add", "sub") and len(lins) == 2:
        r = summed(lins[0], scaled(lins[1], -1 if op == "sub" else 1))
        expr = f"({exprs[0]} {_SYMBOL[op]} {exprs[1]})"
    elif op in ("mul", "mad", "shl") and len(lins) >= 2:
        a, b = lins[0], lins[1]
        if op == "shl":
            if b[1]:
                return None
            width = _bits_of(types[-1])
            amount = shift_amount(b[0], width)
            # shifted out entirely: 0, as the hardware gives (not x * 2**64)
            b = ((1 << amount) if amount < width else 0, {})
        if a[1] and b[1]:
            return None  # a product of two unknowns is not linear
        const, other = (a[0], b) if not a[1] else (b[0], a)
        r = scaled(other, const)
        expr = f"({exprs[0]} {_SYMBOL['mul' if op == 'mad' else op]} {exprs[1]})"
        if op == "mad":
            if len(lins) < 3:
                return None
            r = summed(r, lins[2])
            expr = f"({expr} + {exprs[2]})"
    else:
        return None
    if any(not -(1 << 64) < v < (1 << 64) for v in (r[0], *r[1].values())):
        return None  # beyond 64 bits: no index of a real kernel (and numbers that only grow)
    return from_linear(r[0], r[1], expr, reason)


def _compare_linear(instr: Instruction, a: Value, b: Value) -> bool | None:
    """``setp`` of two linear values with the same non-uniform part (``p < a + 4*n`` against
    ``p = a``): only the offsets differ, so the outcome is uniform. None when undecidable."""
    la, lb = a.linear, b.linear
    if la is None or lb is None or la[1] != lb[1]:
        return None
    cmp = next((m for m in instr.modifiers if m in _CMP), None)
    if cmp is None or any(m in ("and", "or", "xor") for m in instr.modifiers):
        return None
    return bool(_CMP[cmp](la[0], lb[0]))
