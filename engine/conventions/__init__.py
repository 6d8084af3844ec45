"""Argument values a launch does not give, from the compiler's conventions and one rule for the
rest: the inputs every model runs with.

A launch file, ``--arg`` or the window gives some argument values; PTX from numba or Triton has
many more parameters than a user thinks of (a numba array is seven or more), and a kernel read
without its arguments cannot be simulated: its loop bounds, guards and strides are unknown.
:func:`complete_arguments` supplies every integer argument the kernel reads and the launch
leaves out, in this order (docs/assumptions.md):

1. **coverage**: a size that a guard compares with a thread's index is the extent of that index
   over the launch (:mod:`engine.conventions.coverage`);
2. **numba** array fields from each other and from the signature (:mod:`engine.conventions.numba`);
3. **Triton** strides, contiguous row-major from the sizes (:mod:`engine.conventions.triton`);
4. **stand-in**: anything else is :data:`~engine.conventions.records.STAND_IN_VALUE`.

Pointer arguments need no value (each array gets its own aligned window, see
``engine.memory``), floating-point ones enter no address or loop bound. Each supplied value
records how it was obtained; all but the exact ones are assumptions, with the alternative the
evaluation re-runs to show how much they matter (``alternatives``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from engine.analysis import KernelAnalysis, LaunchValues, classify
from engine.analysis.structure import kernel_graphs
from engine.conventions import numba, triton
from engine.conventions.blocks import fitting_stand_ins
from engine.conventions.coverage import covered_sizes
from engine.conventions.params import INTEGER, NUMBA, TRITON, ParamFacts, param_facts
from engine.conventions.records import (
    CONVENTION,
    COVERAGE,
    DERIVED,
    STAND_IN,
    STAND_IN_VALUE,
    Completion,
    SuppliedValue,
)
from engine.launch import Launch, argument_index
from engine.ptx.parsed_module import Function, Module

__all__ = ["CONVENTION", "COVERAGE", "DERIVED", "STAND_IN", "STAND_IN_VALUE", "Alternative", "Completion",
           "SuppliedValue", "complete_arguments", "completed_launch", "kernel_structure"]


@dataclass(frozen=True)
class Alternative:
    """Another value for a group of assumed arguments: what it means, and the values."""

    description: str
    args: dict[int, int]


def given_arguments(function: Function, args: Mapping[str | int, int | float]) -> dict[int, int | float]:
    """The launch's arguments by parameter index (keys naming no parameter are left out)."""
    out: dict[int, int | float] = {}
    for key, value in args.items():
        index = argument_index(key, function.params)
        if index is not None:
            out[index] = value
    return out


def complete_arguments(function: Function, module: Module | None, launch: Launch,
                       analysis: KernelAnalysis) -> tuple[Completion, dict[str, Alternative]]:
    """Every integer argument the kernel reads, given or supplied; and for each group of
    assumed values an alternative (``group -> Alternative``). ``analysis`` is the kernel's
    analysis with any launch (only its CFG and def-use graph are read)."""
    facts = param_facts(function, module, analysis)
    known: dict[int, int | float] = given_arguments(function, launch.args)
    supplied: list[SuppliedValue] = []
    groups: dict[int, str] = {}

    def supply(value: SuppliedValue) -> None:
        if value.index in known:
            return
        known[value.index] = value.value
        groups[value.index] = value.group
        supplied.append(value)

    wanted = {i for i in facts.read if facts.kinds.get(i) == INTEGER}
    if facts.frontend == NUMBA:
        wanted.update(numba.needed_shapes(facts))
    values = LaunchValues.from_launch(launch)
    for index, (value, line) in sorted(covered_sizes(analysis, values, wanted - set(known), known).items()):
        supply(SuppliedValue(index, value, COVERAGE, f"the launch covers it: the guard at line {line} "
                             "compares it with a thread index whose extent over the launch is this",
                             _label(facts, index), f"size: {index}", "size"))
    if facts.frontend == NUMBA and facts.arrays:
        numba.shapes_from_siblings(facts, known, groups, supply)
    layouts = triton.tensors(analysis, facts) if facts.frontend == TRITON else []
    derived_later = {p for t in layouts for p in t.stride_params()} | {
        slot for a in facts.arrays for slot in (a.itemsize, a.nitems, *(a.stride(k) for k in range(a.array.ndim)))}
    sizes_needed = {d.size for t in layouts for d in t.dims if d.size is not None}
    pending = ((wanted | sizes_needed | set(numba.needed_shapes(facts))) - derived_later) - set(known)
    # one stand-in for every value no rule gives, large enough for every block of the launch
    fitted = fitting_stand_ins(analysis, values, STAND_IN_VALUE, pending, known)
    value = max(fitted.values(), default=STAND_IN_VALUE)
    for index in sorted(pending):
        supply(_stand_in(facts, index, "size", fitted[index]))
    if facts.frontend == NUMBA and facts.arrays:
        numba.fields_from_shapes(facts, known, supply)
    sizes = {i: int(v) for i, v in known.items() if isinstance(v, (int, float))}
    for tensor in layouts:
        for index, stride in triton.row_major(tensor, sizes, value).items():
            supply(SuppliedValue(index, stride, CONVENTION,
                                 f"contiguous row-major tensor at argument {tensor.pointer} "
                                 f"({_dims_text(tensor, known)})", _label(facts, index),
                                 triton.LAYOUT_GROUP, "stride"))
    for index in sorted(wanted - set(known)):
        supply(_stand_in(facts, index, "integer", STAND_IN_VALUE))
    completion = Completion(facts.frontend, dict(known), tuple(supplied))
    return completion, _alternatives(completion, layouts, known, value)


def kernel_structure(function: Function, module: Module | None) -> KernelAnalysis:
    """What :func:`complete_arguments` reads of a kernel (CFG, def-use graph, classes), without
    the launch-dependent trip counts a full analysis infers."""
    cfg, defuse = kernel_graphs(function)
    return KernelAnalysis(function, cfg, defuse, [classify(i) for i in function.instructions], {}, [])


def completed_launch(launch: Launch, completion: Completion) -> Launch:
    """``launch`` with the supplied values added to its arguments (by parameter index)."""
    if not completion.supplied:
        return launch
    args = dict(launch.args)
    for value in completion.supplied:
        args[value.index] = value.value
    return replace(launch, args=args)


def _alternatives(completion: Completion, layouts: list[triton.Tensor],
                  known: dict[int, int | float], stand_in: int) -> dict[str, Alternative]:
    out: dict[str, Alternative] = {}
    for value in completion.supplied:
        if value.certain or value.group in out:
            continue
        if value.group == numba.LAYOUT_GROUP:
            members = [s for s in completion.supplied if s.group == value.group]
            out[value.group] = Alternative("every stride twice as large: a view of every other element",
                                           {**completion.pinned(value.group),
                                            **{s.index: 2 * int(s.value) for s in members}})
        elif value.group == triton.LAYOUT_GROUP:
            sizes = {i: int(v) for i, v in known.items()}
            args: dict[int, int] = {}
            for tensor in layouts:
                args.update(triton.column_major(tensor, sizes, stand_in))
            members = {s.index for s in completion.supplied if s.group == value.group}
            out[value.group] = Alternative("column-major tensors (the first dimension contiguous, a "
                                           "transposed view)", {**completion.pinned(value.group),
                                                                **{i: v for i, v in args.items() if i in members}})
        else:
            # a size, a shape or a stand-in: twice as large (values derived from it follow)
            head = next(s for s in completion.supplied if s.group == value.group)
            out[value.group] = Alternative(f"twice as large: {2 * int(head.value):,}",
                                           {**completion.pinned(value.group), head.index: 2 * int(head.value)})
    return out


def _stand_in(facts: ParamFacts, index: int, role: str, value: int) -> SuppliedValue:
    why = (f"the stand-in for an unknown integer ({STAND_IN_VALUE:,})" if value == STAND_IN_VALUE else
           f"the stand-in for an unknown integer, raised from {STAND_IN_VALUE:,} to {value:,} so that "
           "every block of the launch has work (positive divisors)")
    return SuppliedValue(index, value, STAND_IN, f"no convention or guard gives it a value: {why}",
                         _label(facts, index), f"size: {index}", role)


def _label(facts: ParamFacts, index: int) -> str:
    return (facts.field_of or {}).get(index, f"argument {index}")


def _dims_text(tensor: triton.Tensor, known: dict[int, Any]) -> str:
    parts = []
    for dim in tensor.dims:
        size = f"argument {dim.size} = {known[dim.size]:,}" if dim.size is not None and dim.size in known else "?"
        parts.append(size)
    return "sizes " + " × ".join(parts)
