"""Addresses as sums of products, for telling a kernel's stride parameters apart and pairing
each with the size that bounds its index.

``address_terms`` expands the register an access addresses memory with into
``Σ coeff · Π parameters · Π index leaves (+ one pointer parameter)``: additions, subtractions,
products, shifts by constants, moves and conversions are expanded; anything else (a remainder,
a bit mask of ``%tid``, a loaded value, a special register) is an *index leaf*, named by the
instruction that defines it. A register a loop carries (``p += step``) is followed into its
value before the loop: the step adds no new term. Unlike :mod:`engine.memory.affine`, products of
two unknowns stay whole, which is what a row-major address ``base + row·stride + col`` is before
its arguments have values.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.analysis import KernelAnalysis
from engine.ptx.parsed_module import Instruction, Operand, OperandKind

MAX_TERMS = 32            # more terms than this in one address: not a strided tensor access
MAX_DEPTH = 48            # definitions followed from one address
_EXPANDED = {"mov", "cvt", "cvta", "add", "sub", "mul", "mad", "shl", "neg"}


@dataclass(frozen=True)
class Term:
    """``coeff · Π params · Π leaves``; ``pointer`` is the pointer parameter the term is
    (then params and leaves are empty and coeff is 1)."""

    coeff: int
    params: tuple[int, ...] = ()
    leaves: tuple[tuple[int, str], ...] = ()       # (defining instruction, register)
    pointer: int | None = None


Terms = tuple[Term, ...] | None      # None: not a sum of such terms


class TermExpander:
    """Expands registers of one analysed kernel; ``pointers``/``integers`` are the indices of
    the parameters of each kind (others, read as values, end the expansion)."""

    def __init__(self, analysis: KernelAnalysis, pointers: set[int], integers: set[int]) -> None:
        self.analysis = analysis
        self.function = analysis.function
        self.pointers = pointers
        self.integers = integers
        self._params = {p.name: i for i, p in enumerate(self.function.params)}
        self._memo: dict[tuple[int, str], Terms] = {}
        self._active: set[tuple[int, str]] = set()

    def operand(self, op: Operand, at: int, depth: int = 0) -> Terms:
        if op.kind == OperandKind.IMMEDIATE:
            return (Term(op.value),) if isinstance(op.value, int) else None
        if op.kind in (OperandKind.REGISTER) and op.name:
            return self.register(op.name, at, depth)
        if op.kind == OperandKind.SPECIAL:
            return None
        return None

    def register(self, register: str, at: int, depth: int = 0) -> Terms:
        defs = self.analysis.defuse.reaching(at, register)
        if not defs:
            return None
        if len(defs) > 1:
            # a loop-carried register: its value on entry (the steps add multiples of the
            # same strides); else the first path's (the paths agree on the layout)
            entry = [d for d in defs if not self.analysis.defuse.is_loop_carried(d, at, register)]
            defs = tuple(entry or defs)
        return self.definition(defs[0], register, depth + 1)

    def definition(self, index: int, register: str, depth: int = 0) -> Terms:
        key = (index, register)
        if key in self._memo:
            return self._memo[key]
        if key in self._active or depth > MAX_DEPTH:
            return ((Term(1, leaves=(key,)),))
        self._active.add(key)
        try:
            terms = self._expand(self.function.instructions[index], key, depth)
        finally:
            self._active.discard(key)
        if terms is not None and len(terms) > MAX_TERMS:
            terms = None
        self._memo[key] = terms
        return terms

    def _expand(self, instr: Instruction, key: tuple[int, str], depth: int) -> Terms:
        leaf = (Term(1, leaves=(key,)),)
        if instr.opcode in ("ld", "ldu") and "param" in instr.modifiers:
            address = next((o for o in instr.operands if o.kind == OperandKind.ADDRESS), None)
            base = address.base if address is not None else None
            if base is None or base.name not in self._params or address.offset:
                return leaf
            index = self._params[base.name]
            if index in self.pointers:
                return (Term(1, pointer=index),)
            if index in self.integers:
                return (Term(1, params=(index,)),)
            return leaf
        if instr.opcode not in _EXPANDED or "hi" in instr.modifiers:
            return leaf
        srcs = [self.operand(o, instr.index, depth) for o in instr.operands[1:]]
        if any(s is None for s in srcs) or not srcs:
            return leaf
        parts: list[tuple[Term, ...]] = [s for s in srcs if s is not None]
        op = instr.opcode
        if op in ("mov", "cvt", "cvta"):
            return parts[0]
        if op == "neg":
            return _scaled(parts[0], -1) or leaf
        if op == "add" and len(parts) == 2:
            return _sum(parts[0], parts[1])
        if op == "sub" and len(parts) == 2:
            negated = _scaled(parts[1], -1)
            return _sum(parts[0], negated) if negated is not None else leaf
        if op == "shl" and len(parts) == 2:
            shift = parts[1]
            if len(shift) != 1 or shift[0].params or shift[0].leaves or shift[0].pointer is not None:
                return leaf
            if not 0 <= shift[0].coeff < 63:
                return leaf
            return _scaled(parts[0], 1 << shift[0].coeff) or leaf
        if op in ("mul", "mad") and len(parts) >= 2:
            product = _product(parts[0], parts[1])
            if product is None:
                return leaf
            if op == "mad":
                return _sum(product, parts[2]) if len(parts) == 3 else leaf
            return product
        return leaf


def _scaled(terms: tuple[Term, ...], k: int) -> tuple[Term, ...] | None:
    if k != 1 and any(t.pointer is not None for t in terms):
        return None                 # a scaled pointer is no address of an array
    return tuple(Term(t.coeff * k, t.params, t.leaves, t.pointer) for t in terms)


def _sum(a: tuple[Term, ...], b: tuple[Term, ...]) -> tuple[Term, ...]:
    merged: dict[tuple, Term] = {}
    for t in (*a, *b):
        k = (t.params, t.leaves, t.pointer)
        old = merged.get(k)
        merged[k] = t if old is None else Term(old.coeff + t.coeff, t.params, t.leaves, t.pointer)
    return tuple(t for t in merged.values() if t.coeff or t.pointer is not None)


def _product(a: tuple[Term, ...], b: tuple[Term, ...]) -> tuple[Term, ...] | None:
    if len(a) * len(b) > MAX_TERMS:
        return None
    out: tuple[Term, ...] = ()
    for x in a:
        for y in b:
            if x.pointer is not None or y.pointer is not None:
                return None         # a pointer is never multiplied: not an address computation
            term = Term(x.coeff * y.coeff, tuple(sorted(x.params + y.params)), tuple(sorted(x.leaves + y.leaves)))
            out = _sum(out, (term,))
    return out
