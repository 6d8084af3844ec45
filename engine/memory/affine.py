"""Addresses as affine functions of thread/block indices, loop iterations and parameters.

``AddressEvaluator`` walks the def-use graph backwards from an address register. Every value
is either an :class:`Affine` form ``const + Σ coeff·atom`` or an :class:`Unknown` with the
reason it is not one. Atoms are

* ``tid.x/y/z``, ``laneid``: differ between the threads of a block;
* ``ctaid.x/y/z``: differ between blocks;
* ``param<i>``: a kernel argument without a value in the launch (pointer arguments, always);
* ``&<symbol>``: the address of a declared variable (a ``.shared`` tile);
* ``i(<loop key>)``: the iteration number (0, 1, ...) of a loop, from an induction variable
  ``r = init + step·i``, recognised when a register's reaching definitions split into ones
  outside the loop (the initial value) and ones inside that add a constant to it.

Integer arithmetic is taken as exact (no 32-bit wrap-around): address computations of real
kernels do not overflow, and modelling the wrap would make every form non-affine.
"""

from __future__ import annotations

import itertools
import zlib
from dataclasses import dataclass

from engine.analysis import KernelAnalysis
from engine.analysis.cfg import Loop
from engine.analysis.classify import TYPE_BYTES
from engine.analysis.loaded_data import BUFFER_SHIFT, pointer_base
from engine.analysis.values import LaunchValues, as_type, shift_amount
from engine.ptx.parsed_module import Instruction, Operand, OperandKind

_AXES = {"x": 0, "y": 1, "z": 2}
_PHI = "__phi"  # prefix of the placeholder for a loop-header value while its loop is examined
ADDRESS_BITS = 64  # a form's numbers beyond this are no address (an unsigned 64-bit value is < 2**64)


@dataclass(frozen=True)
class Affine:
    """``const + Σ coeff·atom`` with integer coefficients; ``terms`` sorted, no zero coefficients."""

    const: int = 0
    terms: tuple[tuple[str, int], ...] = ()

    @staticmethod
    def atom(name: str, coeff: int = 1) -> Affine:
        return Affine(0, ((name, coeff),)) if coeff else Affine()

    @staticmethod
    def of(const: int, coeffs: dict[str, int]) -> Affine:
        return Affine(const, tuple(sorted((a, c) for a, c in coeffs.items() if c)))

    @property
    def coeffs(self) -> dict[str, int]:
        return dict(self.terms)

    @property
    def is_const(self) -> bool:
        return not self.terms

    def fits(self, bits: int) -> bool:
        """Whether the constant and every coefficient lie within ``bits``-bit integers (either sign)."""
        limit = 1 << bits
        return -limit < self.const < limit and all(-limit < c < limit for _, c in self.terms)

    def __add__(self, other: Affine) -> Affine:
        coeffs = self.coeffs
        for a, c in other.terms:
            coeffs[a] = coeffs.get(a, 0) + c
        return Affine.of(self.const + other.const, coeffs)

    def scale(self, k: int) -> Affine:
        return Affine.of(self.const * k, {a: c * k for a, c in self.terms})

    def __sub__(self, other: Affine) -> Affine:
        return self + other.scale(-1)

    def mentions(self, prefix: str) -> bool:
        return any(a.startswith(prefix) for a, _ in self.terms)


@dataclass(frozen=True)
class Unknown:
    """Not an affine function of the atoms; ``reason`` says which instruction breaks it, and
    ``from_data`` whether that is a load of data (an index read from memory)."""

    reason: str
    from_data: bool = False


Form = Affine | Unknown


def _types(instr: Instruction) -> list[str]:
    return [m for m in instr.modifiers if m in TYPE_BYTES]


class AddressEvaluator:
    """Affine forms of registers at program points of one analysed kernel."""

    def __init__(self, analysis: KernelAnalysis, values: LaunchValues) -> None:
        self.analysis = analysis
        self.function = analysis.function
        self.values = values
        self._params = {p.name: (i, p) for i, p in enumerate(self.function.params)}
        self._memo: dict[tuple[int, str], Form] = {}
        self._active: set[tuple[int, str]] = set()
        self._phis: dict[tuple[str, tuple[int, ...]], str] = {}
        self._counter = itertools.count()

    # ------------------------------------------------------------------ public
    def address(self, instr: Instruction, operand: Operand) -> Form:
        """The byte address ``[base+offset]`` of a memory operand, as read by ``instr``."""
        base = operand.base
        if base is None:
            return Unknown(f"address {operand.text!r} has no base")
        form = self.operand(base, instr.index, None)
        if isinstance(form, Unknown):
            return form
        return form + Affine(operand.offset)

    def ranges(self) -> dict[str, tuple[int, int]]:
        """Known value ranges of the atoms (inclusive), for exact masks and shifts."""
        out: dict[str, tuple[int, int]] = {"laneid": (0, 31)}
        for axis, k in _AXES.items():
            if self.values.block is not None:
                out[f"tid.{axis}"] = (0, self.values.block[k] - 1)
            if self.values.grid is not None:
                out[f"ctaid.{axis}"] = (0, self.values.grid[k] - 1)
        for loop in self.analysis.loops:
            trip = self.analysis.trip_counts.get(loop.key)
            if trip is not None and trip.value is not None and trip.value > 0:
                out[iteration_atom(loop)] = (0, trip.value - 1)
        return out

    # ------------------------------------------------------------------ registers
    def register(self, register: str, at: int) -> Form:
        defs = self.analysis.defuse.reaching(at, register)
        if not defs:
            return Unknown(f"{register} is read before any definition")
        key = (register, defs)
        if key in self._phis:  # back at the loop header while examining that loop
            return Affine.atom(self._phis[key])
        if len(defs) == 1:
            return self.definition(defs[0], register)
        loop = self._loop_splitting(at, defs)
        if loop is None:
            forms = [self.definition(d, register) for d in defs]
            if all(f == forms[0] for f in forms) and isinstance(forms[0], Affine):
                return forms[0]
            bad = next((f for f in forms if isinstance(f, Unknown)), None)
            if bad is not None:
                return bad
            lines = ", ".join(str(self.function.instructions[d].location.line) for d in defs)
            return Unknown(f"{register} depends on the path taken (defined at lines {lines})")
        return self._induction(register, defs, loop)

    def _loop_splitting(self, at: int, defs: tuple[int, ...]) -> Loop | None:
        """The innermost loop around ``at`` holding some but not all of ``defs``."""
        cfg = self.analysis.cfg
        loop = cfg.loop_of(cfg.block_of(at))
        while loop is not None:
            inside = sum(1 for d in defs if cfg.block_indices()[d] in loop.body)
            if 0 < inside < len(defs):
                return loop
            loop = cfg.loop_by_header(loop.parent) if loop.parent is not None else None
        return None

    def _induction(self, register: str, defs: tuple[int, ...], loop: Loop) -> Form:
        """``init + step·i(loop)`` when the in-loop definitions add a constant to the header value."""
        cfg = self.analysis.cfg
        block_index = cfg.block_indices()
        inside = [d for d in defs if block_index[d] in loop.body]
        outside = [d for d in defs if d not in inside]
        inits = [self.definition(d, register) for d in outside]
        init = inits[0]
        if isinstance(init, Unknown):
            return init
        if any(f != init for f in inits):
            return Unknown(f"{register} enters loop {loop.key} with path-dependent values")
        phi = f"{_PHI}{next(self._counter)}"
        self._phis[(register, defs)] = phi
        # The header placeholder breaks the cycle through the loop, so definitions that are being
        # evaluated outside this induction (a pointer derived from it: p1 = p + s) may be met again
        # here without a real self-dependence: evaluate them afresh.
        outer, self._active = self._active, set()
        # Definitions inside the loop evaluated before, from a point where this induction was not
        # being examined (a latch's test read right after the update), were kept as values of
        # iteration i; here they must be taken afresh relative to the placeholder, or the update
        # would not look like one (the result would depend on what was asked first).
        memo = self._memo
        block_index = cfg.block_indices()
        self._memo = {key: form for key, form in memo.items() if block_index[key[0]] not in loop.body}
        try:
            updates = [self.definition(d, register) for d in inside]
        finally:
            del self._phis[(register, defs)]
            self._active = outer
            self._memo = memo
        steps: set[Affine] = set()
        for update in updates:
            if isinstance(update, Unknown):
                return update
            step = update - Affine.atom(phi)
            if step.mentions(phi):
                return Unknown(f"{register} is not a constant-step induction variable of loop {loop.key}")
            steps.add(step)
        if len(steps) != 1:
            return Unknown(f"{register} changes by different amounts in loop {loop.key}")
        step = steps.pop()
        if not step.is_const:
            return Unknown(f"{register} steps by a non-constant amount in loop {loop.key} "
                           "(give the arguments' values in the launch)")
        return init + Affine.atom(iteration_atom(loop), step.const)

    def definition(self, index: int, register: str) -> Form:
        key = (index, register)
        if key in self._memo:
            return self._memo[key]
        if key in self._active:
            return Unknown(f"{register} depends on itself through a loop")
        self._active.add(key)
        try:
            form = self._evaluate(self.function.instructions[index])
        finally:
            self._active.discard(key)
        if isinstance(form, Affine) and not form.fits(ADDRESS_BITS):
            # Exact arithmetic of a chain of huge products or shifts: no address of a real kernel,
            # and numbers that only grow (their text alone would be thousands of digits).
            form = Unknown(f"{self.function.instructions[index].full_opcode} at line "
                           f"{self.function.instructions[index].location.line} gives a number beyond 64 bits")
        # Forms holding a loop-header placeholder are only valid while that loop is examined.
        if not (isinstance(form, Affine) and form.mentions(_PHI)):
            self._memo[key] = form
        return form

    # ------------------------------------------------------------------ operands
    def operand(self, op: Operand, at: int, type_name: str | None) -> Form:
        if op.kind == OperandKind.IMMEDIATE:
            if not isinstance(op.value, int):
                return Unknown(f"the literal {op.text!r} is not an integer")
            return Affine(int(as_type(op.value, type_name)) if type_name else op.value)
        if op.kind == OperandKind.REGISTER and op.name:
            return self.register(op.name, at)
        if op.kind == OperandKind.SPECIAL:
            return self._special(op.name or op.text)
        if op.kind == OperandKind.SYMBOL and op.name:
            if op.name in self._params:
                return Unknown(f"the parameter {op.name} is used by address")
            return Affine.atom(f"&{op.name}")
        return Unknown(f"operand {op.text!r} is not an integer value")

    def _special(self, name: str) -> Form:
        base, _, axis = name.lstrip("%").partition(".")
        if base in ("tid", "ctaid") and axis in _AXES:
            return Affine.atom(f"{base}.{axis}")
        if base == "laneid":
            return Affine.atom("laneid")
        if base in ("ntid", "nctaid") and axis in _AXES:
            dims = self.values.block if base == "ntid" else self.values.grid
            if dims is None:
                return Unknown(f"{name} needs the launch's {'block' if base == 'ntid' else 'grid'} size")
            return Affine(dims[_AXES[axis]])
        return Unknown(f"{name} is not an affine index")

    # ------------------------------------------------------------------ instructions
    def _evaluate(self, instr: Instruction) -> Form:
        op, line = instr.opcode, instr.location.line
        types = _types(instr)
        t = types[-1] if types else None
        if op in ("ld", "ldu"):
            return self._load(instr)
        if types and not all(x[0] in "bsu" for x in types):
            return Unknown(f"{instr.full_opcode} at line {line} is not integer arithmetic")
        if op in ("mul", "mad") and "hi" in instr.modifiers:
            return Unknown(f"{instr.full_opcode} at line {line} keeps the high half of a product")
        srcs = instr.operands[1:]
        ins = [self.operand(o, instr.index, t) for o in srcs]
        bad = next((f for f in ins if isinstance(f, Unknown)), None)
        if op == "selp" and len(ins) == 3:
            if isinstance(ins[0], Affine) and ins[0] == ins[1]:
                return ins[0]
            return Unknown(f"selp at line {line} picks between values per thread")
        if bad is not None:
            return bad
        forms: list[Affine] = [f for f in ins if isinstance(f, Affine)]
        if op in ("mov", "cvt", "cvta") and forms:
            # cvta.to.global keeps the number; cvta to/from the shared window moves it by a
            # 128-byte-aligned base, which leaves sectors and banks unchanged.
            return forms[0]
        if op in ("add", "sub") and len(forms) == 2:
            return forms[0] + forms[1] if op == "add" else forms[0] - forms[1]
        if op == "neg" and forms:
            return forms[0].scale(-1)
        if op in ("mul", "mad", "shl") and len(forms) >= 2:
            a, b = forms[0], forms[1]
            if op == "shl":
                if not b.is_const:
                    return Unknown(f"shl at line {line} shifts by a per-thread amount")
                width = 8 * TYPE_BYTES.get(t or "", 8)
                amount = shift_amount(b.const, width)
                b = Affine((1 << amount) if amount < width else 0)   # all shifted out: 0
            if not a.is_const and not b.is_const:
                return Unknown(f"{instr.full_opcode} at line {line} multiplies two non-constant "
                               f"values (give the arguments' values in the launch)")
            product = b.scale(a.const) if a.is_const else a.scale(b.const)
            if op == "mad":
                return product + forms[2] if len(forms) == 3 else Unknown(f"mad at line {line} is incomplete")
            return product
        if op in ("and", "rem", "shr", "div", "or") and len(forms) == 2:
            return self._bitwise(instr, forms[0], forms[1])
        return Unknown(f"{instr.full_opcode} at line {line} is not affine")

    def _bitwise(self, instr: Instruction, x: Affine, y: Affine) -> Form:
        """Masks, shifts, divisions by constants: exact when the low part provably fits."""
        op, line = instr.opcode, instr.location.line
        if op == "and" and x.is_const and not y.is_const:
            x, y = y, x
        if not y.is_const:
            return Unknown(f"{instr.full_opcode} at line {line} has a per-thread operand")
        c = y.const
        if op == "or":
            # x | c == x + c when the low bits c occupies are zero in every value of x.
            if c >= 0 and all(v % (1 << c.bit_length()) == 0 for v in (x.const, *x.coeffs.values())):
                return x + y
            return Unknown(f"or at line {line} may overlap set bits")
        if op == "and":
            if c < 0 and (-c) & (-c - 1) == 0:  # and x, -2^k: clear the low k bits
                split = _split(x, -c, self.ranges())
                return split[0].scale(-c) if split else Unknown(
                    f"and at line {line} clears low bits that are not provably zero")
            if c < 0 or c & (c + 1):
                return Unknown(f"and at line {line} with mask {c} is not 2^k - 1")
            divisor = c + 1
        elif op == "shr":
            width = 8 * TYPE_BYTES.get(_types(instr)[-1] if _types(instr) else "", 8)
            amount = shift_amount(c, width)
            if amount >= width:
                return Unknown(f"shr at line {line} by {amount}: every bit shifted out")
            divisor = 1 << amount
        else:
            divisor = c
        if divisor <= 0:
            return Unknown(f"{instr.full_opcode} at line {line} by {c}")
        split = _split(x, divisor, self.ranges())
        if split is None:
            return Unknown(f"{instr.full_opcode} at line {line} by {c} is not affine over the "
                           "thread indices")
        quotient, remainder = split
        return remainder if op in ("and", "rem") else quotient

    def _load(self, instr: Instruction) -> Form:
        line = instr.location.line
        if "param" not in instr.modifiers:
            return Unknown(f"the address depends on data loaded by {instr.full_opcode} at line {line}", True)
        addr = next((o for o in instr.operands if o.kind == OperandKind.ADDRESS), None)
        base = addr.base if addr is not None else None
        if addr is None or base is None or base.kind != OperandKind.SYMBOL or base.name not in self._params:
            return Unknown(f"{instr.full_opcode} at line {line} reads an unknown parameter")
        index, param = self._params[base.name]
        if addr.offset or param.array_size is not None:
            return Unknown(f"line {line} reads a field of the structure parameter {param.name}")
        value = self.values.argument(index, param.name)
        if value is None:
            return Affine.atom(f"param{index}")
        if not isinstance(value, int):
            return Unknown(f"argument {index} ({param.name}) is not an integer")
        types = _types(instr)
        return Affine(int(as_type(value, types[-1] if types else None)))


def base_address(atom: str) -> int:
    """Where lane enumeration places an unvalued pointer argument or a global variable:
    a distinct 2^40-aligned base each, so that different arrays never share a sector (and any
    multiple of 256 leaves sector, line and bank counts unchanged)."""
    if atom.startswith("param") and atom[5:].isdigit():
        return pointer_base(int(atom[5:]))
    if atom.startswith("&"):
        return (1024 + zlib.crc32(atom.encode()) % 1024) << BUFFER_SHIFT
    return 0


def iteration_atom(loop: Loop) -> str:
    return f"i({loop.key})"


def _split(x: Affine, d: int, ranges: dict[str, tuple[int, int]]) -> tuple[Affine, Affine] | None:
    """``x = d·q + r`` with ``0 <= r < d`` for every value the atoms can take, or None.

    Terms whose coefficient is a multiple of ``d`` go to ``q``; the others (and the constant's
    remainder) to ``r``, whose range must then fit in ``[0, d)``."""
    q_const, r_const = divmod(x.const, d)
    q: dict[str, int] = {}
    r: dict[str, int] = {}
    for a, c in x.terms:
        if c % d == 0:
            q[a] = c // d
        else:
            r[a] = c
    lo = hi = r_const
    for a, c in r.items():
        if a not in ranges:
            return None
        a_lo, a_hi = ranges[a]
        lo += min(c * a_lo, c * a_hi)
        hi += max(c * a_lo, c * a_hi)
    if lo < 0 or hi >= d:
        return None
    return Affine.of(q_const, q), Affine.of(r_const, r)
