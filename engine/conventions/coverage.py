"""Sizes that bound a thread's index: the launch covers the data once.

A kernel written for a launch of one thread per element guards its work with ``if (i < n)``,
where ``i`` is built from ``%tid``/``%ctaid``/``%ntid``. Without ``n``'s value the guard cannot be
decided; the rule takes ``n`` as the extent of ``i`` over the launch (its largest value plus
one), i.e. the grid was sized to the data, which is how such launches are written
(``blocks = (n + threads - 1) / threads``). A grid-stride loop's index is taken on its first pass.
Where several guards bound the same argument, the largest extent wins (``0 < y < rows - 1``
and ``y < rows`` both hold for every row of the launch).
"""

from __future__ import annotations

import math

from engine.analysis import KernelAnalysis, LaunchValues
from engine.analysis.lane_arith import LaneError
from engine.conventions.blocks import NotComputable, launch_evaluator
from engine.memory.affine import AddressEvaluator, Affine

_STRICT = {"lt", "ge", "lo", "hs"}        # boundary where index == bound
_CLOSED = {"le", "gt", "ls", "hi"}        # boundary where index == bound + 1
_THREAD_ATOMS = ("tid.", "ctaid.", "laneid")


def covered_sizes(analysis: KernelAnalysis, values: LaunchValues, unknown: set[int],
                  known: dict[int, int | float] | None = None) -> dict[int, tuple[int, int]]:
    """For each parameter of ``unknown`` some guard compares with a thread index:
    (its value if the launch covers it exactly, the line of the guard). The index's largest
    value is computed at every thread of the first and the last block (exact for masks, ``or``
    of a thread's element offset, remainders); where it cannot be (a loop-carried index), from
    its affine form over the launch."""
    if values.block is None or values.grid is None:
        return {}
    evaluator = AddressEvaluator(analysis, values)
    numeric = launch_evaluator(analysis, values, dict(known or {}), threads=True)
    extents = {**{f"tid.{a}": values.block[k] for k, a in enumerate("xyz")},
               **{f"ctaid.{a}": values.grid[k] for k, a in enumerate("xyz")}, "laneid": 32}
    found: dict[int, tuple[int, int]] = {}
    for instr in analysis.function.instructions:
        if instr.opcode != "setp" or len(instr.operands) < 3:
            continue
        relation = next((m for m in instr.modifiers if m in _STRICT | _CLOSED), None)
        if relation is None or any(m.startswith("f") for m in instr.modifiers):
            continue
        types = [m for m in instr.modifiers if m[:1] in "bsu" and m[1:].isdigit()]
        sides = []
        for op in instr.operands[1:3]:
            try:
                sides.append(evaluator.operand(op, instr.index, types[-1] if types else None))
            except RecursionError:
                sides.append(None)
        for index_side, bound_side in ((0, 1), (1, 0)):
            index, bound = sides[index_side], sides[bound_side]
            param = _single_param(bound) if isinstance(bound, Affine) else None
            if param is None or param[0] not in unknown:
                continue
            largest = _largest_value(numeric, instr.operands[1 + index_side], instr.index,
                                     types[-1] if types else None)
            if largest is None and isinstance(index, Affine):
                largest = _largest(index, extents)
            if largest is None:
                continue
            which, coeff = param
            # index on the left: i < c·n + d; on the right the relation reads the other way
            strict = (relation in _STRICT) == (index_side == 0)
            boundary = largest + 1 if strict else largest
            value = math.ceil((boundary - bound.const) / coeff)
            if value >= 1 and value > found.get(which, (0, 0))[0]:
                found[which] = (value, instr.location.line)
    return found


def _largest_value(numeric: object, operand: object, at: int, type_name: str | None) -> int | None:
    """The operand's largest value over the sampled threads, when it varies between them."""
    try:
        found = numeric.operand(operand, at, type_name)          # type: ignore[attr-defined]
    except (NotComputable, LaneError, RecursionError, OverflowError):
        return None
    if len(found) == 0 or int(found.min()) == int(found.max()):
        return None
    return int(found.max())


def _largest(form: Affine, extents: dict[str, int]) -> int | None:
    """The index's largest value over the launch; loop iterations count from 0 (first pass).
    None when it is not a growing function of the thread and block indices."""
    total = form.const
    moving = False
    for atom, coeff in form.terms:
        if atom.startswith("i(") and coeff > 0:
            continue
        if not atom.startswith(_THREAD_ATOMS) or coeff <= 0 or atom not in extents:
            return None
        total += coeff * (extents[atom] - 1)
        moving = True
    return total if moving else None


def _single_param(form: Affine) -> tuple[int, int] | None:
    """(parameter index, coefficient) when ``form`` is c·param + d with c > 0."""
    if len(form.terms) != 1:
        return None
    atom, coeff = form.terms[0]
    if not atom.startswith("param") or not atom[5:].isdigit() or coeff <= 0:
        return None
    return int(atom[5:]), coeff
