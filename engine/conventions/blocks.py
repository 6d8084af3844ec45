"""Whether stand-in sizes fit the launch: every block's divisors stay positive.

A kernel that maps its blocks onto tiles (Triton's grouped ordering: ``pid_m = first_m + pid %
group_size``) divides by counts computed from the sizes. With sizes too small for the launch, the
last blocks find no tile, and those counts reach zero: the kernel would never be launched that
way. :func:`fitting_stand_ins` takes the smallest power of two, from the stand-in up, for which
the divisors every block computes from its block index and the arguments are positive, at the
first and the last block of the launch; a parameter no divisor depends on keeps the stand-in.
"""

from __future__ import annotations

import numpy as np

from engine.analysis import KernelAnalysis
from engine.analysis.lane_arith import LaneError, integer_result, wrap
from engine.analysis.values import LaunchValues
from engine.ptx.parsed_module import Operand, OperandKind

LARGEST = 1 << 20          # no stand-in beyond a million elements per dimension
_SPECIALS = {"ctaid", "nctaid", "ntid"}
_MAX_DEPTH = 200


class _NotUniform(Exception):
    """The value depends on something the evaluator does not have."""


NotComputable = _NotUniform


def fitting_stand_ins(analysis: KernelAnalysis, values: LaunchValues, stand_in: int,
                      params: set[int], known: dict[int, int | float]) -> dict[int, int]:
    """The stand-in of each of ``params``: the smallest power of two from ``stand_in`` up that,
    given to all of them, the launch's blocks fit; then back to ``stand_in`` for each parameter
    the blocks fit without (one whose value no divisor depends on, such as a reduction's length)."""
    chosen = dict.fromkeys(params, stand_in)
    divisors = [(i.index, i.operands[2]) for i in analysis.function.instructions
                if i.opcode in ("div", "rem") and len(i.operands) == 3 and i.operands[2].kind == OperandKind.REGISTER]
    if not params or not divisors or values.grid is None or values.block is None:
        return chosen
    value = stand_in
    while value <= LARGEST and not _fits(analysis, values, {**known, **dict.fromkeys(params, value)}, divisors):
        value *= 2
    if value > LARGEST or value == stand_in:
        return chosen
    chosen = dict.fromkeys(params, value)
    for param in sorted(params):
        trial = {**chosen, param: stand_in}
        if _fits(analysis, values, {**known, **trial}, divisors):
            chosen = trial
    return chosen


def launch_evaluator(analysis: KernelAnalysis, values: LaunchValues, args: dict[int, int | float],
                     threads: bool = False) -> _BlockEvaluator:
    """An evaluator of values at the first and the last block of the launch; ``threads``: at
    every thread of those blocks (the block's own values need not be uniform then)."""
    grid, block = values.grid, values.block
    assert grid is not None and block is not None
    last = [g - 1 for g in grid]
    count = int(np.prod(block)) if threads else 1
    contexts = {axis: np.repeat(np.array([0, last[k]], dtype=np.int64), count) for k, axis in enumerate("xyz")}
    if threads:
        linear = np.tile(np.arange(count, dtype=np.int64), 2)
        contexts["tid.x"] = linear % block[0]
        contexts["tid.y"] = (linear // block[0]) % block[1]
        contexts["tid.z"] = linear // (block[0] * block[1])
        contexts["laneid"] = linear % 32
    return _BlockEvaluator(analysis, values, args, contexts)


def _fits(analysis: KernelAnalysis, values: LaunchValues, args: dict[int, int | float],
          divisors: list[tuple[int, Operand]]) -> bool:
    evaluator = launch_evaluator(analysis, values, args)
    for at, operand in divisors:
        try:
            divisor = evaluator.operand(operand, at, None)
        except (_NotUniform, LaneError, RecursionError):
            continue
        if np.any(divisor <= 0):
            return False
    return True


class _BlockEvaluator:
    """Values computed from the block index (and, where given, the thread index) and the
    arguments, at the sampled blocks (threads); a value that depends on anything else (a load,
    a register with several definitions reaching it, an argument without a value) raises
    :class:`NotComputable`."""

    def __init__(self, analysis: KernelAnalysis, values: LaunchValues, args: dict[int, int | float],
                 blocks: dict[str, np.ndarray]) -> None:
        self.analysis = analysis
        self.function = analysis.function
        self.values = values
        self.args = args
        self.blocks = blocks
        self._params = {p.name: i for i, p in enumerate(self.function.params)}
        self._memo: dict[tuple[int, str], np.ndarray] = {}
        self._depth = 0

    def operand(self, op: Operand, at: int, type_name: str | None) -> np.ndarray:
        n = len(self.blocks["x"])
        if op.kind == OperandKind.IMMEDIATE and isinstance(op.value, int):
            return wrap(np.full(n, op.value, dtype=np.int64), type_name)
        if op.kind in (OperandKind.REGISTER, OperandKind.PREDICATE) and op.name:
            defs = self.analysis.defuse.reaching(at, op.name)
            if len(defs) != 1:
                raise _NotUniform(op.name)
            value = self._definition(defs[0], op.name)
            return (value == 0).astype(np.int64) if op.negated else value
        if op.kind == OperandKind.SPECIAL:
            base, _, axis = (op.name or op.text).lstrip("%").partition(".")
            if base == "laneid" and "laneid" in self.blocks:
                return self.blocks["laneid"]
            if base == "tid" and f"tid.{axis}" in self.blocks:
                return self.blocks[f"tid.{axis}"]
            if base not in _SPECIALS or axis not in "xyz" or not axis:
                raise _NotUniform(op.text)
            k = "xyz".index(axis)
            if base == "ctaid":
                return self.blocks[axis]
            dims = self.values.block if base == "ntid" else self.values.grid
            assert dims is not None
            return np.full(n, dims[k], dtype=np.int64)
        raise _NotUniform(op.text)

    def _definition(self, index: int, register: str) -> np.ndarray:
        key = (index, register)
        if key in self._memo:
            return self._memo[key]
        if self._depth > _MAX_DEPTH:
            raise _NotUniform(register)
        instr = self.function.instructions[index]
        self._depth += 1
        try:
            if instr.opcode == "ld":
                value = self._parameter(instr)
            else:
                value = integer_result(instr, register, lambda o, t: self.operand(o, index, t))
        finally:
            self._depth -= 1
        self._memo[key] = value
        return value

    def _parameter(self, instr: object) -> np.ndarray:
        operands = getattr(instr, "operands", ())
        modifiers = getattr(instr, "modifiers", ())
        address = next((o for o in operands if o.kind == OperandKind.ADDRESS), None)
        base = address.base if address is not None else None
        if "param" not in modifiers or base is None or base.name not in self._params or address.offset:
            raise _NotUniform("a load")
        value = self.args.get(self._params[base.name])
        if not isinstance(value, int):
            raise _NotUniform("an argument without an integer value")
        types = [m for m in modifiers if m[:1] in "bsu" and m[1:].isdigit()]
        return wrap(np.full(len(self.blocks["x"]), value, dtype=np.int64), types[-1] if types else None)
