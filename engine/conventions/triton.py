"""Triton's tensor arguments: a pointer plus one integer stride per dimension (in elements), as
``tl.load(ptr + rows[:, None] * stride_r + cols[None, :] * stride_c)`` writes them. Triton
compiles strides it was told are 1 away (the parameter disappears and its index is added bare),
and puts the sizes that bound each index in masks (``cols < n``) or remainders (``rows % M``).

For each pointer the kernel addresses, the rule finds its stride parameters (the integer
factors of its address, :mod:`engine.conventions.terms`), in parameter order (Triton kernels
list a tensor's strides from the outermost dimension in), and for each the size parameter that
bounds the index it multiplies. Strides without values are then taken as **contiguous row-major**
(the last dimension's stride 1, each other the product of the sizes inside it): how
``torch.empty`` lays tensors out. It is an assumption (a transposed view is column-major), listed
with the column-major alternative.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.analysis import KernelAnalysis
from engine.conventions.params import INTEGER, POINTER, ParamFacts
from engine.conventions.terms import TermExpander
from engine.ptx.parsed_module import OperandKind
from engine.units import MemorySpace

LAYOUT_GROUP = "layout: Triton tensors"
_MEMORY = {"ld", "st", "atom", "red", "cp"}
TERM_LIMIT = 60_000          # instructions: beyond this the strides are not looked for


@dataclass
class Dimension:
    stride: int | None                 # the stride parameter; None: a stride of 1 compiled away
    size: int | None = None            # the size parameter bounding its index, if one does


@dataclass
class Tensor:
    pointer: int
    dims: list[Dimension] = field(default_factory=list)

    def stride_params(self) -> list[int]:
        return [d.stride for d in self.dims if d.stride is not None]


def tensors(analysis: KernelAnalysis, facts: ParamFacts) -> list[Tensor]:
    """The strided tensors the kernel's global accesses address, one per pointer."""
    function = analysis.function
    if len(function.instructions) > TERM_LIMIT:
        return []
    pointers = {i for i, k in facts.kinds.items() if k == POINTER}
    integers = {i for i, k in facts.kinds.items() if k == INTEGER}
    expander = TermExpander(analysis, pointers, integers)
    bounds = _index_bounds(analysis, expander)
    found: dict[int, dict[int | None, set[int]]] = {}     # pointer -> stride (None: bare) -> sizes
    for instr in function.instructions:
        c = analysis.classifications[instr.index]
        if instr.opcode not in _MEMORY or not c.is_global_memory and c.space is not MemorySpace.GLOBAL:
            continue
        addresses = [o for o in instr.operands if o.kind == OperandKind.ADDRESS]
        address = addresses[1] if instr.opcode == "cp" and len(addresses) > 1 else (addresses[0] if addresses else None)
        if (address is None or address.base is None or address.base.kind != OperandKind.REGISTER
                or not address.base.name):
            continue
        try:
            terms = expander.register(address.base.name, instr.index)
        except RecursionError:
            continue
        if terms is None:
            continue
        bases = [t.pointer for t in terms if t.pointer is not None]
        if len(bases) != 1:
            continue
        strides = found.setdefault(bases[0], {})
        for term in terms:
            if term.pointer is not None:
                continue
            sizes = {bounds[leaf] for leaf in term.leaves if leaf in bounds}
            if len(term.params) == 1:
                strides.setdefault(term.params[0], set()).update(sizes)
            elif not term.params and term.leaves:
                strides.setdefault(None, set()).update(sizes)
    out = []
    for pointer, strides in sorted(found.items()):
        params = sorted(p for p in strides if p is not None)
        if not params:
            continue
        tensor = Tensor(pointer, [Dimension(p, _one(strides[p])) for p in params])
        if None in strides:
            tensor.dims.append(Dimension(None, _one(strides[None])))
        out.append(tensor)
    return out


def row_major(tensor: Tensor, sizes: dict[int, int], fallback: int) -> dict[int, int]:
    """Stride values (by parameter) of a contiguous row-major tensor: innermost 1."""
    return _contiguous(tensor.dims[::-1], sizes, fallback)


def column_major(tensor: Tensor, sizes: dict[int, int], fallback: int) -> dict[int, int]:
    """The alternative: the first dimension contiguous. A tensor whose innermost stride was
    compiled away (it is 1) keeps it; its outer strides are taken twice as large instead (rows
    padded to twice their length), the other way a layout can differ."""
    if tensor.dims and tensor.dims[-1].stride is None:
        return {p: 2 * v for p, v in row_major(tensor, sizes, fallback).items()}
    return _contiguous(tensor.dims, sizes, fallback)


def _contiguous(inner_first: list[Dimension], sizes: dict[int, int], fallback: int) -> dict[int, int]:
    out: dict[int, int] = {}
    stride = 1
    for dim in inner_first:
        if dim.stride is not None:
            out[dim.stride] = stride
        extent = sizes.get(dim.size, fallback) if dim.size is not None else fallback
        stride *= max(1, int(extent))
    return out


def _one(sizes: set[int]) -> int | None:
    return min(sizes) if len(sizes) == 1 else None


def _index_bounds(analysis: KernelAnalysis, expander: TermExpander) -> dict[tuple[int, str], int]:
    """Index leaves bounded by a size parameter: ``r = x % n`` and ``setp r, n`` (``n`` possibly
    less a multiple of the loop's step, as ``k < K - i·BK`` compiles)."""
    out: dict[tuple[int, str], int] = {}
    function = analysis.function
    for instr in function.instructions:
        if instr.opcode == "rem" and len(instr.operands) == 3 and instr.operands[0].name:
            size = _size_param(expander.operand(instr.operands[2], instr.index))
            if size is not None:
                out[(instr.index, instr.operands[0].name)] = size
        elif instr.opcode == "setp" and len(instr.operands) >= 3:
            a, b = instr.operands[1], instr.operands[2]
            for index_side, bound_side in ((a, b), (b, a)):
                if index_side.kind != OperandKind.REGISTER or not index_side.name:
                    continue
                size = _size_param(expander.operand(bound_side, instr.index))
                if size is None:
                    continue
                for d in analysis.defuse.reaching(instr.index, index_side.name):
                    out.setdefault((d, index_side.name), size)
    return out


def _size_param(terms: object) -> int | None:
    """``n`` or ``n + constant``: the parameter, else None."""
    if not isinstance(terms, tuple):
        return None
    params = [t for t in terms if t.params]
    if len(params) != 1 or params[0].coeff != 1 or len(params[0].params) != 1 or params[0].leaves:
        return None
    if any(t.leaves or t.pointer is not None for t in terms if not t.params):
        return None
    return params[0].params[0]
