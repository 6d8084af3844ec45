"""The memory analysis of one kernel: :func:`analyze_memory` walks every global, shared, local,
constant and texture access, derives its address as an affine form (:mod:`engine.memory.affine`),
enumerates the lanes of one block's warps for it (:mod:`engine.memory.patterns`) and builds the
:class:`~engine.memory.access_report.MemoryReport`: sectors and lines per request, efficiency, the
bank-conflict degree, reuse between instructions and blocks. Assumptions are listed in
``MemoryReport.assumptions`` and in ``docs/memory_access.md``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from engine.analysis import KernelAnalysis, LaunchValues
from engine.mechanisms import enabled
from engine.memory.access_report import AccessInfo, MemoryReport
from engine.memory.affine import AddressEvaluator, Affine, Unknown, iteration_atom
from engine.memory.control import control_dependences
from engine.memory.costs import executions_per_warp
from engine.memory.footprint import AddressRange, affine_range, sampled_range, with_grid_reuse
from engine.memory.fragments import Fragment, fragment_of, stride_operand
from engine.memory.hierarchy import SECTORS_PER_LINE
from engine.memory.lane_addresses import MAX_RECURRENCE, LaneError, LaneEvaluator, RecurrenceTooLong
from engine.memory.naming import format_affine, shared_layout
from engine.memory.patterns import (
    INTERIOR,
    LINE,
    MAX_PERIOD,
    Sample,
    affine_addresses,
    alignment_period,
    block_sectors,
    contexts,
    global_stats,
    shared_stats,
    spread,
    thread_indices,
)
from engine.memory.texels import TexelFetch, texel_fetch
from engine.ptx.parsed_module import Instruction, Module, Operand, OperandKind
from engine.units import AccessKind, MemorySpace

WARP = 32
POINTER_ALIGN = 256        # cudaMalloc returns 256-byte aligned pointers
_PER_THREAD_ATOMS = {"tid", "ctaid", "laneid", "warpid", "ntid", "nctaid"}
_OPCODES = {"ld", "ldu", "st", "atom", "red", "cp"}


# ---------------------------------------------------------------------------- analysis

def _address_operand(instr: Instruction) -> Operand | None:
    addresses = [o for o in instr.operands if o.kind == OperandKind.ADDRESS]
    if instr.opcode == "cp":  # cp.async dst_shared, src_global: the global side costs traffic
        return addresses[1] if len(addresses) > 1 else None
    return addresses[0] if addresses else None


def _extents(analysis: KernelAnalysis, values: LaunchValues) -> dict[str, int | None]:
    """How many values each uniform atom takes: grid extents and trip counts (None: unknown)."""
    out: dict[str, int | None] = {}
    for k, axis in enumerate("xyz"):
        out[f"ctaid.{axis}"] = values.grid[k] if values.grid is not None else None
    for loop in analysis.loops:
        trip = analysis.trip_counts.get(loop.key)
        out[iteration_atom(loop)] = trip.value if trip is not None else None
    return out


def _atom_ranges(extents: dict[str, int | None], values: LaunchValues) -> dict[str, int | None]:
    """How many values each atom of an affine address runs over in the grid: thread indices
    (the block's extents), block indices and loop iterations (``extents``; unknown trip counts
    count once)."""
    out: dict[str, int | None] = {name: (n if n is not None else 1) for name, n in extents.items()}
    if values.block is not None:
        out.update({f"tid.{axis}": values.block[k] for k, axis in enumerate("xyz")})
    return out


def _samples(extents: dict[str, int | None], layout: dict[str, int],
             form: Affine | None) -> dict[str, tuple[Sample, ...]]:
    """Weighted samples of the uniform atoms (see ``patterns.spread``). For an affine address
    the interior values of an atom cover its alignment period (one value when its coefficient
    is a multiple of 128 bytes); shared variables sit at their layout offset, pointers at 0."""
    coeffs = form.coeffs if form is not None else {}
    out: dict[str, tuple[Sample, ...]] = {}
    for atom, n in extents.items():
        # An affine address's atoms need their alignment period; atoms it does not mention
        # matter only through the active lanes (edges), one interior value will do.
        if form is None:
            interior = INTERIOR
        else:
            interior = min(alignment_period(coeffs[atom]), MAX_PERIOD) if atom in coeffs else 1
        out[atom] = spread(n, interior)
    for name, offset in layout.items():
        out[f"&{name}"] = ((offset, 1.0),)
    return out


def _space(instr: Instruction, analysis: KernelAnalysis, form: Affine | None,
           layout: dict[str, int]) -> MemorySpace | None:
    c = analysis.classifications[instr.index]
    if c.space in (MemorySpace.GLOBAL, MemorySpace.SHARED):
        return c.space
    if c.space is not MemorySpace.GENERIC:
        return None
    if form is not None and any(a[1:] in layout for a, _ in form.terms if a.startswith("&")):
        return MemorySpace.SHARED
    return MemorySpace.GLOBAL if c.is_global_memory else None


def analyze_memory(analysis: KernelAnalysis, launch: Any = None, module: Module | None = None) -> MemoryReport:
    """Address forms and warp access patterns of every global/shared load, store and atomic.

    ``launch`` is a :class:`engine.launch.Launch` (or anything ``LaunchValues.from_launch``
    reads); without a block shape only the affine forms are reported."""
    function = analysis.function
    scope = _Scope.of(analysis, LaunchValues.from_launch(launch), module)
    values, lanes = scope.values, scope.lanes
    accesses: list[AccessInfo] = []
    footprints: list[tuple[int, Affine | None, Instruction, Operand, int]] = []
    grid_ranges: dict[int, AddressRange] = {}     # by position in accesses: over the whole grid
    for instr in function.instructions:
        found = _access_of(scope, instr)
        if found is None:
            continue
        access, footprint, extent = found
        accesses.append(access)
        if footprint is not None:
            footprints.append((len(accesses) - 1, *footprint))
            if extent is not None:
                grid_ranges[len(accesses) - 1] = extent
    if lanes is not None:
        _share_between_instructions(accesses, footprints, lanes, analysis, values)
        if values.grid is not None and values.block is not None:
            # switched by ``l2_footprint`` where the shares are taken (hierarchy.level_shares)
            warps = math.ceil(math.prod(values.block) / WARP) * math.prod(values.grid)
            accesses = with_grid_reuse(accesses, grid_ranges,
                                       lambda i: executions_per_warp(analysis, i) * warps)
        # The evaluators refer to the cache that holds them (a cycle holding every lane array of
        # the kernel): empty it now rather than leave megabytes to the cyclic collector, which a
        # long run (a validation suite, an ablation) otherwise outgrows by gigabytes.
        lanes.release()
    return MemoryReport(function.name, values.block, accesses, _assumptions(scope.notes))


def _assumptions(notes: set[str]) -> list[str]:
    """What the analysis takes for granted, and the notes of this kernel's accesses."""
    assumptions = [
        f"pointer arguments are {POINTER_ALIGN}-byte aligned (cudaMalloc); their value is taken as 0",
        "shared variables are laid out in declaration order with their alignment, from offset 0",
        "active lanes follow guards and branch conditions computable per lane; loop tests are "
        "taken as uniform, and a condition on loaded data counts every lane active",
        "integer address arithmetic does not wrap around",
        "an address computed from loaded integers (a gather's index, a CSR row start) uses stand-in "
        "values: pseudo-random in [0, 2^22), equal for equal addresses, so indexed reads scatter over "
        "the lines and warp-uniform loads stay uniform; sorted or clustered indices are cheaper in reality",
        "sampled: every warp of one block; per grid axis and loop the first, the last and a few "
        "interior values (an affine address's alignment period), weighted by what they stand for",
        *sorted(notes),
    ]
    return assumptions


@dataclasses.dataclass
class _Scope:
    """What every access's analysis reads: the launch's values, the address evaluator, the shared
    layout, the loops' extents, the pointer parameters, the lane cache (None without a block
    shape), one thread's local frame (its .local arrays), the atoms' ranges over the grid; and
    what it adds to: the notes, and the producer map (built at the first constant load)."""

    analysis: KernelAnalysis
    values: LaunchValues
    evaluator: AddressEvaluator
    layout: Any
    extents: Any
    pointer_params: set[str]
    lanes: _LaneCache | None
    local_frame: int
    atom_ranges: Any
    notes: set[str] = dataclasses.field(default_factory=set)
    producers: dict[int, list[int]] | None = None

    @staticmethod
    def of(analysis: KernelAnalysis, values: LaunchValues, module: Module | None) -> _Scope:
        function = analysis.function
        evaluator = AddressEvaluator(analysis, values)
        layout = shared_layout(function, module)
        extents = _extents(analysis, values)
        pointer_params = {f"param{i}" for i, p in enumerate(function.params)
                          if p.type in ("u64", "b64", "s64") or p.pointer_space is not None}
        threads = thread_indices(values.block) if values.block is not None else None
        lanes = (_LaneCache(evaluator, values, threads, layout, analysis, frozenset(pointer_params))
                 if threads is not None else None)
        local_frame = sum(v.size_bytes or 0 for v in function.variables if v.state_space == "local")
        return _Scope(analysis, values, evaluator, layout, extents, pointer_params, lanes, local_frame,
                      _atom_ranges(extents, values))


_Footprint = tuple[Affine | None, Instruction, Operand, int]


def _access_of(scope: _Scope, instr: Instruction
               ) -> tuple[AccessInfo, _Footprint | None, AddressRange | None] | None:
    """The access ``instr`` makes (None: it makes none the analysis reports), with its global
    footprint entry and its address range over the grid where it has them."""
    analysis, lanes = scope.analysis, scope.lanes
    c = analysis.classifications[instr.index]
    fragment = fragment_of(instr) if enabled("matrix_fragments") else None
    texel = texel_fetch(instr, analysis.defuse) if c.space is MemorySpace.TEXTURE else None
    if texel is not None and lanes is not None:
        lanes.texels[instr.index] = texel
    if (instr.opcode not in _OPCODES and fragment is None and texel is None) or not (
            c.is_load or c.is_store or c.is_atomic):
        return None
    operand = _address_operand(instr)
    raw = scope.evaluator.address(instr, operand) if operand is not None else Unknown("no address operand")
    if texel is not None and isinstance(raw, Affine):
        index = scope.evaluator.register(texel.index_register, instr.index)
        raw = raw + index.scale(texel.texel_bytes) if isinstance(index, Affine) else index
    form = raw if isinstance(raw, Affine) else None
    if c.space is MemorySpace.CONST and c.is_load:
        if scope.producers is None:
            scope.producers = _producer_map(analysis)
        return _constant_access(instr, c, form, raw, lanes, operand, analysis, scope.producers), None, None
    if c.space is MemorySpace.LOCAL and (c.is_load or c.is_store) and not c.is_atomic:
        return _local_access(instr, c, form, lanes, analysis, scope.local_frame, scope.values,
                             _samples(scope.extents, scope.layout, form)), None, None
    space = MemorySpace.GLOBAL if texel is not None else _space(instr, analysis, form, scope.layout)
    if space is None:
        return None
    kind = AccessKind.ATOMIC if c.is_atomic else AccessKind.LOAD if c.is_load else AccessKind.STORE
    width = texel.texel_bytes if texel is not None else c.width_bytes
    info = AccessInfo(instr.index, instr.location.line, instr.text.strip(), space, width,
                      format_affine(form) if form is not None else None,
                      raw.reason if isinstance(raw, Unknown) else None, kind)
    if lanes is None or operand is None:
        if form is not None:
            info = _with(info, unknown_reason="the launch gives no block shape: patterns not computed")
        return info, None, None
    return _patterned(scope, lanes, instr, info, raw, form, operand, fragment, space, width)


def _patterned(scope: _Scope, lanes: _LaneCache, instr: Instruction, info: AccessInfo, raw: Any,
               form: Affine | None, operand: Operand, fragment: Fragment | None, space: MemorySpace,
               width: int) -> tuple[AccessInfo, _Footprint | None, AddressRange | None]:
    """``info`` with its warp access pattern from the lanes' addresses at the sampled contexts."""
    analysis, values = scope.analysis, scope.values
    atoms = _uniform_atoms(analysis, instr.index) + ([a for a, _ in form.terms] if form else [])
    ctxs = contexts(list(dict.fromkeys(atoms)), _samples(scope.extents, scope.layout, form))
    try:
        if form is not None:
            scope.notes.update(f"{a} has no value in the launch: taken as 0" for a, _ in form.terms
                               if a.startswith("param") and a not in scope.pointer_params)
            sets = [affine_addresses(form, lanes.threads, ctx) for ctx, _ in ctxs]
            info = _with(info, method="affine")
        else:
            try:
                sets = [lanes.addresses(ctx, instr, operand) for ctx, _ in ctxs]
            except RecurrenceTooLong:
                # a long loop's last iteration stands for 1/n of it: sampled at the last step run
                ctxs = [({a: min(v, MAX_RECURRENCE) if a.startswith("i(") else v for a, v in ctx.items()}, w)
                        for ctx, w in ctxs]
                sets = [lanes.addresses(ctx, instr, operand) for ctx, _ in ctxs]
            info = _with(info, method="lanes", non_affine=info.unknown_reason, unknown_reason=None,
                         data_dependent=isinstance(raw, Unknown) and raw.from_data)
    except LaneError as error:
        return _with(info, unknown_reason=str(error)), None, None
    except RecursionError:  # pathological def-use chains: give up on this access only
        return _with(info, unknown_reason="the address computation is too deeply nested"), None, None
    if fragment is not None:
        try:
            sets = _fragment_sets(fragment, instr, sets, [ctx for ctx, _ in ctxs], lanes)
        except (LaneError, RecursionError) as error:
            why = str(error) if isinstance(error, LaneError) else "the stride computation is too deeply nested"
            return _with(info, unknown_reason=f"fragment stride: {why}"), None, None
        width = fragment.lane_bytes
    masks, mask_note = lanes.masks(instr.index, [ctx for ctx, _ in ctxs])
    shared_by = _blocks_sharing(form, values.grid) if form is not None else 1
    if form is not None and space is MemorySpace.GLOBAL and values.grid is not None:
        info = _with(info, neighbour_distance_share=_neighbour_distance(form, values.grid))
    if space is MemorySpace.GLOBAL:
        # divide by the sharing factor below: 1 / Π(1 − overlap with the next block)
        shared_by /= _neighbour_overlap(lanes, form, instr, operand, ctxs, width, values.grid)
    uniform = form is not None and not any(
        atom.split(".")[0].lstrip("%") in _PER_THREAD_ATOMS for atom, _ in form.terms)
    access = _pattern(_with(info, mask_note=mask_note, uniform_address=uniform and fragment is None),
                      sets, masks, [w for _, w in ctxs], width, shared_by)
    if space is MemorySpace.GLOBAL and access.dram_ratio is not None:
        extent = (affine_range(form, scope.atom_ranges, width) if form is not None and fragment is None
                  else sampled_range(sets))
        return access, (form, instr, operand, width), extent
    return access, None, None


def _fragment_sets(fragment: Fragment, instr: Instruction, bases: list[np.ndarray],
                   ctxs: list[dict[str, int]], lanes: _LaneCache) -> list[np.ndarray]:
    """Per sampled context, the addresses of the 32 pieces each warp's fragment moves."""
    stride = stride_operand(instr)
    out = []
    for base, ctx in zip(bases, ctxs, strict=True):
        ldm = (lanes.get(ctx).operand(stride, instr.index, "u32") if stride is not None
               else np.full(len(base), fragment.row_bytes // fragment.element_bytes, dtype=np.int64))
        out.append(fragment.addresses(base, ldm))
    return out


def _local_access(instr: Instruction, c: Any, form: Affine | None, lanes: _LaneCache | None,
                  analysis: KernelAnalysis, frame_bytes: int, values: LaunchValues,
                  samples: dict[str, tuple[Sample, ...]]) -> AccessInfo:
    """A local-memory load or store. Local memory interleaves the threads of a warp word by
    word (word w of lane l at (w × 32 + l) × 4 of the warp's area), so a request whose lanes use
    one offset touches one 128-byte line per 4-byte word of the access; lanes at different
    offsets touch a line per distinct word. An offset from the frame and uniform values only
    is the same in every lane; any other (an index computed from data) is taken as uniformly
    spread over the frame's slots of that width: the expected distinct slots of the active
    lanes (``method="estimate"``). ``block_footprint_bytes``: the block's local data (the frame of
    every thread), which L1 must hold for the loads to hit."""
    kind = AccessKind.LOAD if c.is_load else AccessKind.STORE
    info = AccessInfo(instr.index, instr.location.line, instr.text.strip(), MemorySpace.LOCAL, c.width_bytes,
                      format_affine(form) if form is not None else None, None, kind)
    threads = math.prod(values.block) if values.block is not None else None
    if threads is not None and frame_bytes:
        info = _with(info, block_footprint_bytes=float(frame_bytes * threads))
    active, share, note = float(WARP), 1.0, "active lanes unknown: all taken"
    groups = float(SECTORS_PER_LINE)
    if lanes is not None:
        ctxs = contexts(list(dict.fromkeys(_uniform_atoms(analysis, instr.index))), samples)
        masks, note = lanes.masks(instr.index, [ctx for ctx, _ in ctxs])
        n = len(next(iter(lanes.threads.values())))
        # One word of every thread, where local memory puts it (lane × 4 in the warp's line): the
        # sectors of that line are the 8-lane groups with an active lane.
        words_of_lanes = (np.arange(n, dtype=np.int64) % WARP) * 4
        stats = global_stats([words_of_lanes for _ in ctxs], 4, masks, [w for _, w in ctxs])
        if stats is None:
            return _with(info, unknown_reason="no lane executes it in the sampled blocks", issue_share=0.0)
        active, share, groups = stats.active_lanes, stats.issue_share, stats.sectors_mean
    words = max(1, math.ceil(max(c.width_bytes, 1) / 4))
    uniform = form is not None and not any(
        atom.split(".")[0].lstrip("%") in _PER_THREAD_ATOMS for atom, _ in form.terms)

    def pattern(lines: float, sectors: float) -> dict[str, Any]:
        useful = active * max(c.width_bytes, 1) / (sectors * 32.0)    # bytes used / sector bytes moved
        return {"lines_per_request": lines, "sectors_per_request": sectors, "efficiency": min(1.0, useful),
                "active_lanes": active, "issue_share": share, "mask_note": note}

    if uniform:
        return _with(info, method="affine", uniform_address=True, **pattern(float(words), words * groups))
    slots = max(1, frame_bytes // max(c.width_bytes, 1))

    def distinct(lanes_: float) -> float:
        return min(slots * (1.0 - (1.0 - 1.0 / slots) ** lanes_), lanes_)

    return _with(info, method="estimate", non_affine="local offset differs between lanes: spread over "
                 f"the frame's {slots} slots",
                 **pattern(distinct(active) * words, groups * distinct(active / groups) * words))


def _constant_access(instr: Instruction, c: Any, form: Affine | None, raw: Any, lanes: _LaneCache | None,
                     operand: Operand | None, analysis: KernelAnalysis,
                     producers: dict[int, list[int]]) -> AccessInfo:
    """A constant-memory load: the constant cache broadcasts one address per warp request and
    serialises distinct ones: ``distinct_addresses`` is their mean number per warp (1: uniform);
    when the lanes cannot be told (a value carried from the previous iteration) every lane is
    taken as distinct, and ``mask_note`` says so."""
    info = AccessInfo(instr.index, instr.location.line, instr.text.strip(), MemorySpace.CONST, c.width_bytes,
                      format_affine(form) if form is not None else None, None, AccessKind.LOAD)
    if not _thread_dependent(analysis, producers, instr.index) or (form is not None and not any(
            a.split(".")[0].lstrip("%") in _PER_THREAD_ATOMS for a, _ in form.terms)):
        return _with(info, method="affine" if form is not None else "", uniform_address=True, distinct_addresses=1.0)
    if lanes is None or operand is None:
        return _with(info, unknown_reason=getattr(raw, "reason", None) or "no block shape",
                     distinct_addresses=float(WARP),
                     mask_note="distinct addresses per warp unknown: all lanes taken")
    context = {f"ctaid.{axis}": 0 for axis in "xyz"}
    try:
        addresses = (affine_addresses(form, lanes.threads, context) if form is not None
                     else lanes.get(context).address(instr, operand))
    except (LaneError, RecursionError) as error:
        return _with(info, unknown_reason=str(error), distinct_addresses=float(WARP),
                     mask_note="distinct addresses per warp unknown: all lanes taken")
    per_warp = [len(set(addresses[k:k + WARP].tolist())) for k in range(0, len(addresses), WARP)]
    return _with(info, method="affine" if form is not None else "lanes",
                 distinct_addresses=float(sum(per_warp)) / max(len(per_warp), 1))


_THREAD_SPECIALS = ("tid", "laneid", "warpid")


def _producer_map(analysis: KernelAnalysis) -> dict[int, list[int]]:
    producers: dict[int, list[int]] = {}
    for edge in analysis.defuse.edges:
        producers.setdefault(edge.consumer, []).append(edge.producer)
    return producers


def _thread_dependent(analysis: KernelAnalysis, producers: dict[int, list[int]], index: int) -> bool:
    """Whether instruction ``index`` reads a value that can differ between the threads of a warp:
    its producers (:func:`_producer_map`), transitively, reach a thread index. A load from an
    address that does not is uniform too (every lane reads the same word), so loads are followed
    like any instruction."""
    instructions = analysis.function.instructions
    seen: set[int] = set()
    stack = [index]
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        if i != index and any(o.kind == OperandKind.SPECIAL
                              and (o.name or o.text).lstrip("%").startswith(_THREAD_SPECIALS)
                              for o in instructions[i].operands):
            return True
        stack.extend(producers.get(i, ()))
    return False


def _with(info: AccessInfo, **changes: Any) -> AccessInfo:
    return dataclasses.replace(info, **changes)


def _uniform_atoms(analysis: KernelAnalysis, index: int) -> list[str]:
    """Uniform atoms a non-affine address may depend on: the block indices and the iteration
    numbers of the loops around the instruction."""
    atoms = [f"ctaid.{axis}" for axis in "xyz"]
    cfg = analysis.cfg
    loop = cfg.loop_of(cfg.block_of(index))
    while loop is not None:
        atoms.append(iteration_atom(loop))
        loop = cfg.loop_by_header(loop.parent) if loop.parent is not None else None
    return atoms


ITERATION_SAMPLES = 8   # iteration pairs (t - 1, t) sampled per loop: sector reuse has a period


def _share_between_instructions(accesses: list[AccessInfo],
                                footprints: list[tuple[int, Affine | None, Instruction, Operand, int]],
                                lanes: _LaneCache, analysis: KernelAnalysis, values: LaunchValues) -> None:
    """Scale each access's block miss share (and R with it) by the share of its sectors that the
    block did not touch just before: no earlier access of the same kind (loads, stores) in the
    same loop iteration, and no access of that kind in the loop's previous iteration. A struct's
    second field, a stencil's other neighbours and a thread walking along its own row hit in L1
    (loads) or merge in L2 (stores). Judged for block 1 along each axis, the first iteration of
    the outer loops and iterations 1..8 of the innermost one (a thread stepping 4 bytes per
    iteration finds a new sector every 8th); the lines one iteration touches are kept as the
    loop's L1 working set (:attr:`AccessInfo.block_footprint_bytes`)."""
    base = {f"ctaid.{axis}": min(1, (values.grid[k] if values.grid else 1) - 1)
            for k, axis in enumerate("xyz")}
    cfg = analysis.cfg

    def iterations_of(index: int) -> tuple[str | None, int]:
        # the innermost loop that repeats: a loop run once per pass of its parent (a copy loop
        # whose trip count is 1 at this block size) steps with the parent
        loop = cfg.loop_of(cfg.block_of(index))
        while loop is not None:
            trip = analysis.trip_counts.get(loop.key)
            if trip is None or trip.value is None:
                return None, 0
            if trip.value >= 2:
                return iteration_atom(loop), min(trip.value - 1, ITERATION_SAMPLES)
            if trip.value < 1:
                return None, 0
            loop = cfg.loop_by_header(loop.parent) if loop.parent is not None else None
        return None, 0

    usable = [f for f in footprints
              if accesses[f[0]].kind != AccessKind.ATOMIC and accesses[f[0]].dram_ratio is not None]
    groups: dict[tuple[AccessKind, str | None], list[tuple[int, Affine | None, Instruction, Operand, int]]] = {}
    for item in usable:
        groups.setdefault((accesses[item[0]].kind, analysis.loop_key_of(item[2].index)), []).append(item)
    lines: dict[str | None, set[int]] = {}
    for (kind, loop_key), members in groups.items():
        atom, samples = iterations_of(members[0][2].index)
        new_sectors = dict.fromkeys((m[0] for m in members), 0)
        all_sectors = dict.fromkeys((m[0] for m in members), 0)
        paired = dict.fromkeys((m[0] for m in members), 0)
        # each member's sectors per iteration, once: t is also the next sample's 'before' and
        # the previous one's 'after'
        by_iteration: dict[int | None, dict[int, set[int]]] = {}
        for t in range(1, samples + 1) if atom is not None else (None,):
            seen: set[int] = set()
            try:
                near: set[int] = set()      # what the block reads one iteration before, now and after
                if atom is not None:
                    seen = set().union(*_sectors_at(by_iteration, lanes, members, base, atom, t - 1).values())
                    near |= seen
                    if kind == AccessKind.LOAD:
                        near = near.union(*_sectors_at(by_iteration, lanes, members, base, atom, t + 1).values())
                sectors_now = _sectors_at(by_iteration, lanes, members, base, atom, t)
                for here in sectors_now.values():
                    near |= here
                for position, _form, _instr, _operand, _width in members:
                    here = sectors_now[position]
                    new_sectors[position] += len(here - seen)
                    all_sectors[position] += len(here)
                    paired[position] += sum(1 for x in here if x ^ 1 in near)
                    seen |= here
                    if kind == AccessKind.LOAD and t in (1, None):
                        lines.setdefault(loop_key, set()).update(x // SECTORS_PER_LINE for x in here)
            except (LaneError, RecursionError):
                break
        for position in new_sectors:
            if all_sectors[position]:
                info = accesses[position]
                new = max(new_sectors[position] / all_sectors[position], 1e-9)
                accesses[position] = _with(info, dram_ratio=info.dram_ratio * new,
                                           block_miss=(info.block_miss or 1.0) * new,
                                           paired_share=paired[position] / all_sectors[position])
    for position, _form, instr, _operand, _width in usable:
        accesses[position] = _with(accesses[position], block_footprint_bytes=float(
            len(lines.get(analysis.loop_key_of(instr.index), ())) * LINE))


def _neighbour_overlap(lanes: _LaneCache, form: Affine | None, instr: Instruction, operand: Operand,
                       ctxs: list[tuple[dict[str, int], float]], width: int,
                       grid: tuple[int, int, int] | None) -> float:
    """Π over the block axes the address moves with of (1 − f), f = the share of a block's
    sectors that the next block along that axis touches too (overlapping halos, misaligned
    tiles): in a stream of blocks those are L2 hits. f is averaged over the sampled contexts,
    since it changes with the block's alignment. 1 when it cannot be told."""
    if grid is None:
        return 1.0
    factor = 1.0
    try:
        for k, axis in enumerate("xyz"):
            atom = f"ctaid.{axis}"
            if grid[k] < 2 or (form is not None and not form.coeffs.get(atom)):
                continue
            kept, total = 0.0, 0.0
            for context, weight in ctxs:
                here = _block_sectors(lanes, form, instr, operand, context, width)
                at = context.get(atom, 0)
                neighbour = {**context, atom: at + 1 if at + 1 < grid[k] else at - 1}
                if here:
                    there = _block_sectors(lanes, form, instr, operand, neighbour, width)
                    kept += weight * len(here - there) / len(here)
                    total += weight
            if total:
                factor *= kept / total
    except (LaneError, RecursionError):
        return 1.0
    return max(factor, 1e-9)


def _block_sectors(lanes: _LaneCache, form: Affine | None, instr: Instruction, operand: Operand,
                   context: dict[str, int], width: int) -> set[int]:
    addr = (affine_addresses(form, lanes.threads, context) if form is not None
            else lanes.addresses(context, instr, operand))
    fragment = fragment_of(instr) if enabled("matrix_fragments") else None
    if fragment is not None:      # ``form`` is the fragment's address: its pieces are the accesses
        addr = _fragment_sets(fragment, instr, [addr], [context], lanes)[0]
    try:
        mask = lanes.get(context, strict=True).active(instr.index)
    except LaneError:
        mask = None
    return block_sectors(addr, width, mask)


def _sectors_at(memo: dict[int | None, dict[int, set[int]]], lanes: _LaneCache, members: list[tuple[Any, ...]],
                base: dict[str, int], atom: str | None, t: int | None) -> dict[int, set[int]]:
    """Each member's (position, form, instruction, operand, width) sectors of the block at
    iteration ``t`` of loop ``atom`` (None: no loop), kept in ``memo``."""
    if t not in memo:
        ctx = base if atom is None else {**base, atom: t}
        memo[t] = {m[0]: _block_sectors(lanes, m[1], m[2], m[3], ctx, m[4]) for m in members}
    return memo[t]


def _neighbour_distance(form: Affine, grid: tuple[int, int, int]) -> float:
    """The share of the grid's blocks launched between a block and its neighbour one step along
    the slowest block axis the address moves with (blocks go out x fastest, then y, then z):
    block (x, y + 1) comes grid.x blocks after (x, y)."""
    total = max(1, math.prod(grid))
    step = 1
    farthest = 1
    for k, axis in enumerate("xyz"):
        if grid[k] > 1 and form.coeffs.get(f"ctaid.{axis}"):
            farthest = step
        step *= grid[k]
    return farthest / total


def _blocks_sharing(form: Affine, grid: tuple[int, int, int] | None) -> float:
    """How many blocks access the same addresses: the product of the grid extents along
    the block axes the affine address does not depend on."""
    if grid is None:
        return 1
    coeffs = form.coeffs
    return math.prod(g for axis, g in zip("xyz", grid, strict=True) if not coeffs.get(f"ctaid.{axis}"))


class _LaneCache:
    """One lane evaluator per sampled context, shared by all accesses of the kernel (their
    active-lane masks reuse the same branch conditions)."""

    def __init__(self, evaluator: AddressEvaluator, values: LaunchValues, threads: dict[str, Any],
                 layout: dict[str, int], analysis: KernelAnalysis, pointers: frozenset[str]) -> None:
        self.evaluator, self.values, self.threads, self.layout = evaluator, values, threads, layout
        self.pointers = pointers
        self.dependences = control_dependences(analysis.cfg)
        self.last = {iteration_atom(loop): t.value - 1 for loop in analysis.loops
                     if (t := analysis.trip_counts.get(loop.key)) is not None and t.value}
        self._cache: dict[tuple[Any, ...], LaneEvaluator] = {}
        self.texels: dict[int, TexelFetch] = {}    # instruction index -> what its texture fetch reads

    def release(self) -> None:
        """Drop every evaluator (and the per-lane values they hold) once the analysis is done."""
        self._cache.clear()

    def addresses(self, context: dict[str, int], instr: Instruction, operand: Operand) -> Any:
        """Each thread's byte address of ``instr`` in ``context`` (a texel fetch's: base + index x bytes)."""
        ev = self.get(context)
        base = ev.address(instr, operand)
        texel = self.texels.get(instr.index)
        if texel is None:
            return base
        return base + texel.texel_bytes * ev.register(texel.index_register, instr.index)

    def get(self, context: dict[str, int], strict: bool = False) -> LaneEvaluator:
        """The evaluator of a context; ``strict`` ones (for active lanes) refuse unknown arguments."""
        key = (strict, tuple(sorted(context.items())))
        if key not in self._cache:
            self._cache[key] = LaneEvaluator(self.evaluator, self.values, self.threads, context,
                                             self.layout, self.dependences, self.last,
                                             self.pointers, strict, self._cache)
        return self._cache[key]

    def masks(self, index: int, ctxs: list[dict[str, int]]) -> tuple[list[Any], str | None]:
        """Active threads per context; all threads (and the reason) when they cannot be told."""
        try:
            return [self.get(ctx, strict=True).active(index) for ctx in ctxs], None
        except LaneError as error:
            return [None] * len(ctxs), f"all lanes taken as active: {error}"
        except RecursionError:
            return [None] * len(ctxs), "all lanes taken as active: the branch conditions nest too deeply"


def _pattern(info: AccessInfo, sets: list[Any], masks: list[Any], weights: list[float], width: int,
             shared_by: float = 1.0) -> AccessInfo:
    width = max(width, 1)
    if info.space is MemorySpace.SHARED:
        s = shared_stats(sets, width, masks, weights)
        if s is None:
            return _with(info, unknown_reason="no lane executes it in the sampled blocks", method="", issue_share=0.0)
        return _with(info, warps_sampled=s.warps, bank_conflict_degree=s.degree_max,
                     bank_conflict_mean=s.degree_mean, active_lanes=s.active_lanes, issue_share=s.issue_share)
    g = global_stats(sets, width, masks, weights)
    if g is None:
        return _with(info, unknown_reason="no lane executes it in the sampled blocks", method="", issue_share=0.0)
    return _with(info, warps_sampled=g.warps, active_lanes=g.active_lanes, sectors_per_request=g.sectors_mean,
                 sectors_max=g.sectors_max, lines_per_request=g.lines_mean, lines_max=g.lines_max,
                 efficiency=g.efficiency, dram_ratio=g.block_reuse / shared_by, block_miss=g.block_reuse,
                 l1_bank_degree=g.bank_degree_mean,
                 l1_cached=_l1_cached(info), issue_share=g.issue_share)


def _l1_cached(info: AccessInfo) -> bool:
    """Whether a hit in L1 can serve this access: loads, unless they bypass L1 (``.cg``: L2 only;
    ``.cv``/``.volatile``: fetched again each time). Stores write through to L2, atomics run there."""
    if info.kind != AccessKind.LOAD:
        return False
    opcode = info.text.split(None, 1)[0] if info.text else ""
    return not any(part in ("cg", "cv", "volatile") for part in opcode.split("."))
