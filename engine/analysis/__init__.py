"""Kernel analysis: CFG, loops, def-use, classification and trip counts in one object.

``analyze_kernel`` is what the models and the GUI call; the sub-modules stay usable on their own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from engine.analysis.cfg import BasicBlock, ControlFlowGraph, Loop, build_cfg
from engine.analysis.classify import Classification, classify
from engine.analysis.defuse import DefUseEdge, DefUseGraph, build_def_use
from engine.analysis.structure import kernel_graphs
from engine.analysis.tripcount import TripCount, infer_trip_counts
from engine.analysis.values import LaunchValues, UniformEvaluator
from engine.ptx.gc_pause import paused_gc
from engine.ptx.parsed_module import Function, Module, OperandKind
from engine.units import MemorySpace

__all__ = [
    "BasicBlock", "Classification", "ControlFlowGraph", "DefUseEdge", "DefUseGraph", "KernelAnalysis",
    "LaunchValues", "Loop", "LoopInfo", "TripCount", "UniformEvaluator", "analyze_kernel", "build_cfg",
    "build_def_use", "classify", "infer_trip_counts",
]


@dataclass(frozen=True)
class LoopInfo:
    """One loop as the GUI lists it."""

    key: str                   # header label or ``B<index>``: the trip-count key
    header_label: str | None
    header_block: int
    depth: int                 # 1 = outermost
    parent: str | None         # key of the enclosing loop
    first_instruction: int     # smallest / largest instruction index in the body
    last_instruction: int
    trip_count: TripCount


@dataclass
class KernelAnalysis:
    function: Function
    cfg: ControlFlowGraph
    defuse: DefUseGraph
    classifications: list[Classification]   # one per instruction, by index
    trip_counts: dict[str, TripCount]
    loop_info: list[LoopInfo]

    @property
    def loops(self) -> list[Loop]:
        return self.cfg.loops

    def loop_key_of(self, instruction_index: int) -> str | None:
        """Key of the innermost loop holding an instruction, None outside loops."""
        loop = self.cfg.loop_of(self.cfg.block_of(instruction_index))
        return None if loop is None else loop.key


def _pointer_space(function: Function, defuse: DefUseGraph, module: Module | None,
                   index: int, register: str, depth: int = 0) -> MemorySpace | None:
    """Follow a generic address back through moves/adds to a ``cvta`` or a named variable.

    Returns SHARED/LOCAL/GLOBAL when every path agrees, None when it cannot tell."""
    if depth > 16:
        return None
    spaces: set[MemorySpace | None] = set()
    variables = {v.name: v.state_space for v in function.variables}
    if module is not None:
        variables.update({v.name: v.state_space for v in module.variables})
    for d in defuse.reaching(index, register):
        instr = function.instructions[d]
        if instr.opcode == "cvta":
            # cvta.shared / cvta.local give generic pointers into those windows; cvta.to.* is
            # the other direction, whose result is not used by generic accesses.
            named = [m for m in instr.modifiers if m in ("shared", "local", "global", "const")]
            space = {"shared": MemorySpace.SHARED, "local": MemorySpace.LOCAL,
                     "const": MemorySpace.CONST}.get(named[0] if named else "", MemorySpace.GLOBAL)
            spaces.add(space)
        elif instr.opcode == "ld" and "param" in instr.modifiers:
            spaces.add(MemorySpace.GLOBAL)  # pointer arguments of a kernel point to global memory
        elif instr.opcode in ("mov", "add", "sub", "mad", "cvt"):
            found = None
            for o in instr.operands[1:]:
                if o.kind == OperandKind.SYMBOL and o.name in variables:
                    found = {"shared": MemorySpace.SHARED, "local": MemorySpace.LOCAL}.get(
                        variables[o.name], MemorySpace.GLOBAL)
                elif o.kind == OperandKind.REGISTER and o.name and o.name.startswith("%rd"):
                    found = _pointer_space(function, defuse, module, d, o.name, depth + 1)
                if found is not None:
                    break
            spaces.add(found)
        else:
            spaces.add(None)
    return spaces.pop() if len(spaces) == 1 else None


def _refine_generic(function: Function, defuse: DefUseGraph, module: Module | None,
                    classes: list[Classification]) -> None:
    """Generic accesses whose pointer provably targets shared/local memory are not global."""
    for i, c in enumerate(classes):
        if c.space is not MemorySpace.GENERIC:
            continue
        addr = next((o for o in function.instructions[i].operands if o.kind == OperandKind.ADDRESS), None)
        if addr is None or addr.base is None or addr.base.kind != OperandKind.REGISTER or not addr.base.name:
            continue
        space = _pointer_space(function, defuse, module, i, addr.base.name)
        if space is not None and space is not MemorySpace.GLOBAL:
            classes[i] = replace(c, is_global_memory=False)


def analyze_kernel(function: Function, launch: Any = None, module: Module | None = None) -> KernelAnalysis:
    """Everything the models need about one kernel. ``launch`` is a duck-typed launch
    (``grid``, ``block``, ``args``, ``trip_overrides``), a :class:`LaunchValues`, or None;
    ``module`` lets generic addresses resolve module-scope variables."""
    with paused_gc():  # millions of objects, no garbage cycles: the collector only costs time
        return _analyze(function, launch, module)


def _analyze(function: Function, launch: Any, module: Module | None) -> KernelAnalysis:
    cfg, defuse = kernel_graphs(function)
    classes = [classify(instr) for instr in function.instructions]
    _refine_generic(function, defuse, module, classes)
    trips = infer_trip_counts(function, cfg, defuse, LaunchValues.from_launch(launch))
    info = []
    for loop in cfg.loops:
        parent = cfg.loop_by_header(loop.parent) if loop.parent is not None else None
        info.append(LoopInfo(
            key=loop.key,
            header_label=loop.header_label,
            header_block=loop.header_block,
            depth=loop.depth,
            parent=parent.key if parent is not None else None,
            first_instruction=cfg.blocks[min(loop.body)].start,  # blocks are in text order
            last_instruction=cfg.blocks[max(loop.body)].end - 1,
            trip_count=trips[loop.key],
        ))
    return KernelAnalysis(function, cfg, defuse, classes, trips, info)
