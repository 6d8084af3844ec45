"""Which way each warp of a block goes at a branch whose guard depends on the thread index.

A guard such as ``threadIdx.y == 0`` (a 32 x 8 block: warp 0 alone) or ``warp == 0``
(``threadIdx.x >> 5``) is not uniform over the block, so the launch-uniform evaluator cannot
decide it, yet every lane of a warp agrees: whole warps skip the body. :class:`WarpBranches`
evaluates the guard for each thread, with ``%tid`` and ``%laneid`` known and everything else as
the launch-uniform evaluator has it, and says per warp whether all its lanes take the branch, none
does, or they differ (a divergent warp runs the body for its lanes that need it). A guard that
also depends on anything per block or loaded (``%ctaid``, a value read from memory) is undecided
for every warp after one evaluation.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from typing import Any

from engine.analysis.values import LaunchValues, UniformEvaluator, Value
from engine.errors import WarplineError

WARP = 32
MAX_THREADS = 1024           # a block's threads at most (CUDA's limit): the evaluations are bounded
CACHE_SIZE = 16              # launches whose outcomes are kept (a live edit rebuilds the same one)
AXES = {"x": 0, "y": 1, "z": 2}


class ThreadEvaluator(UniformEvaluator):
    """The launch-uniform evaluator for one thread: its ``%tid`` and ``%laneid`` are known."""

    def __init__(self, function: Any, defuse: Any, values: LaunchValues, tid: tuple[int, int, int],
                 lane: int) -> None:
        super().__init__(function, defuse, values)
        self.tid = tid
        self.lane = lane

    def _special(self, name: str) -> Value:
        base, _, axis = name.lstrip("%").partition(".")
        if base == "tid" and axis in AXES:
            return Value(self.tid[AXES[axis]], name)
        if base == "laneid" and not axis:
            return Value(self.lane, name)
        return super()._special(name)


class WarpBranches:
    """Per-warp outcomes of thread-dependent branches for one launch (evaluators cached per thread)."""

    def __init__(self, function: Any, defuse: Any, values: LaunchValues) -> None:
        self.function = function
        self.defuse = defuse
        self.values = values
        block = values.block
        self.threads = math.prod(block) if block is not None else 0
        self.warps = math.ceil(self.threads / WARP) if 0 < self.threads <= MAX_THREADS else 0
        self._evaluators: dict[int, ThreadEvaluator] = {}
        self._outcomes: dict[int, tuple[bool | None, ...]] = {}
        # By (guard, its reaching definitions, negated): a thread's guard value depends on the
        # branch only through the definitions that reach it (the per-thread evaluators have no
        # loop-exit values and no feasibility filter), and nvcc guards many branches with one
        # predicate: a kernel of 50,000 such branches evaluates it once per thread, not 50,000 times.
        self._by_definitions: dict[tuple[str, tuple[int, ...], bool], tuple[bool | None, ...]] = {}

    def _thread(self, linear: int) -> ThreadEvaluator:
        evaluator = self._evaluators.get(linear)
        if evaluator is None:
            bx, by, _ = self.values.block  # type: ignore[misc]
            tid = (linear % bx, (linear // bx) % by, linear // (bx * by))
            evaluator = ThreadEvaluator(self.function, self.defuse, self.values, tid, linear % WARP)
            self._evaluators[linear] = evaluator
        return evaluator

    def _taken(self, linear: int, index: int, guard: str, negated: bool) -> bool | None:
        try:
            value = self._thread(linear).register(guard, index)
        except (WarplineError, RecursionError, KeyError, ValueError):
            return None
        if not value.known:
            return None
        return bool(value.value) != negated

    def outcomes(self, index: int) -> tuple[bool | None, ...]:
        """For each warp of the block: True when every lane takes the branch at instruction
        ``index``, False when none does, None when its lanes differ or the guard is undecided
        (empty for a branch without a guard or a launch without a block size)."""
        cached = self._outcomes.get(index)
        if cached is not None:
            return cached
        instr = self.function.instructions[index]
        if instr.guard:
            key = (instr.guard, self.defuse.reaching(index, instr.guard), instr.guard_negated)
            shared = self._by_definitions.get(key)
            if shared is None:
                shared = self._by_definitions[key] = self._evaluate(index)
            self._outcomes[index] = shared
            return shared
        self._outcomes[index] = ()
        return ()

    def _evaluate(self, index: int) -> tuple[bool | None, ...]:
        instr = self.function.instructions[index]
        result: list[bool | None] = []
        for w in range(self.warps if instr.guard else 0):
            ways: set[bool] | None = set()
            for linear in range(w * WARP, min((w + 1) * WARP, self.threads)):
                taken = self._taken(linear, index, instr.guard, instr.guard_negated)
                if taken is None:
                    ways = None
                    break
                ways.add(taken)
                if len(ways) > 1:
                    break
            if ways is None and w == 0 and not result:
                # undecided in the first warp: the guard needs more than the thread index (a
                # block or a loaded value), so it is taken as undecided for every warp
                result = [None] * self.warps
                break
            result.append(next(iter(ways)) if ways is not None and len(ways) == 1 else None)
        return tuple(result)


_CACHE: OrderedDict[tuple, tuple[Any, WarpBranches]] = OrderedDict()
_CACHE_LOCK = threading.Lock()


def _launch_key(values: LaunchValues) -> tuple:
    def items(mapping: Any) -> tuple:
        return tuple(sorted(((str(k), v) for k, v in (mapping or {}).items()), key=lambda kv: kv[0]))

    return (values.block, values.grid, items(values.args), items(values.data), items(values.trip_overrides))


def warp_branches_for(analysis: Any, values: LaunchValues) -> WarpBranches:
    """The :class:`WarpBranches` of a kernel's analysis at a launch, kept for the next calls: a
    latency edit rebuilds the description with the same analysis and launch, and evaluating every
    thread of a 1,024-thread block again would cost it tens of milliseconds."""
    key = (id(analysis), _launch_key(values))
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None and hit[0] is analysis:
            _CACHE.move_to_end(key)
            return hit[1]
    branches = WarpBranches(analysis.function, analysis.defuse, values)
    with _CACHE_LOCK:
        _CACHE[key] = (analysis, branches)      # the analysis is held: its id cannot be reused
        while len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    return branches
