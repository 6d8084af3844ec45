"""Automatic memory-access analysis: coalescing of global accesses, shared-memory bank conflicts.

``analyze_memory(analysis, launch, module)`` derives every global/shared access's address as an
affine form (:mod:`engine.memory.affine`), enumerates the lanes of one block's warps for it
(:mod:`engine.memory.patterns`) and reports sectors and lines per request, efficiency and the
bank-conflict degree. ``n_ma_by_instruction`` and ``memory_cost_overrides`` turn that into the
inputs of Many-BSP (``n_ma``) and of the Pipeline simulator (λ, Λ via 001 §6.3).
Assumptions are listed in ``MemoryReport.assumptions`` and in ``docs/memory_access.md``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from engine.analysis import KernelAnalysis, LaunchValues
from engine.memory.affine import AddressEvaluator, Affine, Unknown, iteration_atom
from engine.memory.control import control_dependences
from engine.memory.lanes import LaneError, LaneEvaluator
from engine.memory.patterns import (
    INTERIOR,
    LINE,
    MAX_PERIOD,
    SECTOR,
    Sample,
    affine_addresses,
    alignment_period,
    contexts,
    global_stats,
    shared_stats,
    spread,
    thread_indices,
)
from engine.ptx.model import Function, Instruction, Module, Operand, Variable
from engine.units import MemorySpace

__all__ = [
    "AccessInfo", "MemoryReport", "analyze_memory", "format_affine", "memory_cost_overrides",
    "memory_table", "n_ma_by_instruction", "shared_layout",
]

POINTER_ALIGN = 256        # cudaMalloc returns 256-byte aligned pointers
_OPCODES = {"ld", "ldu", "st", "atom", "red", "cp"}
_THREAD_ATOMS = ("tid.x", "tid.y", "tid.z", "laneid")


@dataclass(frozen=True)
class AccessInfo:
    """One global or shared memory instruction. Pattern fields are None when the address is
    not affine (``unknown_reason`` says why) or the launch gives no block shape."""

    index: int
    line: int
    text: str
    space: MemorySpace                   # GLOBAL or SHARED (generic accesses resolved)
    width_bytes: int
    affine: str | None
    unknown_reason: str | None = None
    # "affine": lanes enumerated from the affine form; "lanes": the address is integer
    # arithmetic but not affine (``non_affine`` says where), every lane evaluated exactly;
    # "": no pattern (``unknown_reason``).
    method: str = ""
    non_affine: str | None = None
    warps_sampled: int = 0
    sectors_per_request: float | None = None    # mean 32-byte sectors per warp request
    sectors_max: int | None = None
    lines_per_request: float | None = None      # mean 128-byte lines per warp request
    lines_max: int | None = None
    efficiency: float | None = None             # useful bytes / fetched sector bytes
    # R estimate (001 §6.3): DRAM bytes / requested sector bytes. Within a block, the distinct
    # sectors over the Σ of its warps' sectors; times 1/gridDim for every block axis the
    # address does not depend on (every block along it reads the same data: L2 hits).
    dram_ratio: float | None = None
    bank_conflict_degree: int | None = None     # max over sampled warps (1 = conflict-free)
    bank_conflict_mean: float | None = None
    active_lanes: float | None = None           # mean active lanes per issued request
    mask_note: str | None = None                # why every lane was taken as active, if so


@dataclass
class MemoryReport:
    kernel: str
    block: tuple[int, int, int] | None
    accesses: list[AccessInfo]
    assumptions: list[str] = field(default_factory=list)

    def by_index(self) -> dict[int, AccessInfo]:
        return {a.index: a for a in self.accesses}


# ---------------------------------------------------------------------------- layout / names

def shared_layout(function: Function, module: Module | None = None) -> dict[str, int]:
    """Byte offset of each ``.shared`` variable the kernel names: declaration order (module
    scope first), each aligned to its ``.align`` (else its element size), from 0; ``.extern``
    (dynamic) arrays follow the static ones, as the CUDA runtime places them."""
    used = {o.name for i in function.instructions for o in _flat(i.operands) if o.kind == "symbol"}
    declared = [*(module.variables if module is not None else []), *function.variables]
    shared = [v for v in declared if v.state_space == "shared" and v.name in used]
    ordered = [v for v in shared if v.size_bytes is not None] + [v for v in shared if v.size_bytes is None]
    out: dict[str, int] = {}
    offset = 0
    for v in ordered:
        align = v.align or _element_size(v)
        offset = -(-offset // align) * align
        out[v.name] = offset
        offset += v.size_bytes or 0
    return out


def _element_size(v: Variable) -> int:
    digits = "".join(ch for ch in v.type if ch.isdigit())
    return max(1, int(digits) // 8) if digits else 1


def _flat(operands: tuple[Operand, ...]) -> list[Operand]:
    out: list[Operand] = []
    for o in operands:
        out.append(o)
        if o.base is not None:
            out.append(o.base)
        out.extend(_flat(o.elements))
    return out


_LOCAL_STATIC = re.compile(r"^_ZZ.*E(\d+)(\w+)$")


def _short(symbol: str) -> str:
    """``_ZZ15transpose_tiledPfPKfiiE4tile`` -> ``tile`` (a function-local static's name)."""
    m = _LOCAL_STATIC.match(symbol)
    return m.group(2)[: int(m.group(1))] if m and len(m.group(2)) >= int(m.group(1)) else symbol


def _atom_rank(atom: str) -> tuple[int, str]:
    order = ("param", "&", "tid.", "laneid", "ctaid.", "i(")
    return next((k for k, p in enumerate(order) if atom.startswith(p)), len(order)), atom


def format_affine(form: Affine) -> str:
    """``param1 + 4·tid.x + 64·tid.y + 4096·i($L__BB0_3) + 12``."""
    parts: list[str] = []
    for atom, c in sorted(form.terms, key=lambda t: _atom_rank(t[0])):
        name = _short(atom[1:]) if atom.startswith("&") else atom
        mag = "" if abs(c) == 1 else f"{abs(c)}·"
        parts.append(("- " if c < 0 else "+ ") + mag + name)
    if form.const or not parts:
        parts.append(("- " if form.const < 0 else "+ ") + str(abs(form.const)))
    text = " ".join(parts)
    return text[2:] if text.startswith("+ ") else "-" + text[2:]


# ---------------------------------------------------------------------------- analysis

def _address_operand(instr: Instruction) -> Operand | None:
    addresses = [o for o in instr.operands if o.kind == "address"]
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
    values = LaunchValues.from_launch(launch)
    evaluator = AddressEvaluator(analysis, values)
    layout = shared_layout(function, module)
    extents = _extents(analysis, values)
    pointer_params = {f"param{i}" for i, p in enumerate(function.params)
                      if p.type in ("u64", "b64", "s64") or p.pointer_space is not None}
    notes: set[str] = set()
    threads = thread_indices(values.block) if values.block is not None else None
    lanes = _LaneCache(evaluator, values, threads, layout, analysis) if threads is not None else None
    accesses: list[AccessInfo] = []
    for instr in function.instructions:
        c = analysis.classifications[instr.index]
        if instr.opcode not in _OPCODES or not (c.is_load or c.is_store or c.is_atomic):
            continue
        operand = _address_operand(instr)
        raw = evaluator.address(instr, operand) if operand is not None else Unknown("no address operand")
        form = raw if isinstance(raw, Affine) else None
        space = _space(instr, analysis, form, layout)
        if space is None:
            continue
        info = AccessInfo(instr.index, instr.location.line, instr.text.strip(), space, c.width_bytes,
                          format_affine(form) if form is not None else None,
                          raw.reason if isinstance(raw, Unknown) else None)
        if lanes is None or operand is None:
            if form is not None:
                info = _with(info, unknown_reason="the launch gives no block shape: patterns not computed")
            accesses.append(info)
            continue
        atoms = _uniform_atoms(analysis, instr.index) + ([a for a, _ in form.terms] if form else [])
        ctxs = contexts(list(dict.fromkeys(atoms)), _samples(extents, layout, form))
        try:
            if form is not None:
                notes.update(f"{a} has no value in the launch: taken as 0" for a, _ in form.terms
                             if a.startswith("param") and a not in pointer_params)
                sets = [affine_addresses(form, lanes.threads, ctx) for ctx, _ in ctxs]
                info = _with(info, method="affine")
            else:
                sets = [lanes.get(ctx).address(instr, operand) for ctx, _ in ctxs]
                info = _with(info, method="lanes", non_affine=info.unknown_reason, unknown_reason=None)
        except LaneError as error:
            accesses.append(_with(info, unknown_reason=str(error)))
            continue
        masks, mask_note = lanes.masks(instr.index, [ctx for ctx, _ in ctxs])
        shared_by = _blocks_sharing(form, values.grid) if form is not None else 1
        accesses.append(_pattern(_with(info, mask_note=mask_note), sets, masks, [w for _, w in ctxs],
                                 c.width_bytes, shared_by))
    assumptions = [
        f"pointer arguments are {POINTER_ALIGN}-byte aligned (cudaMalloc); their value is taken as 0",
        "shared variables are laid out in declaration order with their alignment, from offset 0",
        "active lanes follow guards and branch conditions computable per lane; loop tests are "
        "taken as uniform, and a condition on loaded data counts every lane active",
        "integer address arithmetic does not wrap around",
        "sampled: every warp of one block, blocks 0/1/last per grid axis, loop iterations 0/1/last",
        *sorted(notes),
    ]
    return MemoryReport(function.name, values.block, accesses, assumptions)


def _with(info: AccessInfo, **changes: Any) -> AccessInfo:
    return AccessInfo(**{**info.__dict__, **changes})


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


def _blocks_sharing(form: Affine, grid: tuple[int, int, int] | None) -> int:
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
                 layout: dict[str, int], analysis: KernelAnalysis) -> None:
        self.evaluator, self.values, self.threads, self.layout = evaluator, values, threads, layout
        self.dependences = control_dependences(analysis.cfg)
        self.last = {iteration_atom(loop): t.value - 1 for loop in analysis.loops
                     if (t := analysis.trip_counts.get(loop.key)) is not None and t.value}
        self._cache: dict[tuple[tuple[str, int], ...], LaneEvaluator] = {}

    def get(self, context: dict[str, int]) -> LaneEvaluator:
        key = tuple(sorted(context.items()))
        if key not in self._cache:
            self._cache[key] = LaneEvaluator(self.evaluator, self.values, self.threads, context,
                                             self.layout, self.dependences, self.last)
        return self._cache[key]

    def masks(self, index: int, ctxs: list[dict[str, int]]) -> tuple[list[Any], str | None]:
        """Active threads per context; all threads (and the reason) when they cannot be told."""
        try:
            return [self.get(ctx).active(index) for ctx in ctxs], None
        except LaneError as error:
            return [None] * len(ctxs), f"all lanes taken as active: {error}"


def _pattern(info: AccessInfo, sets: list[Any], masks: list[Any], weights: list[float], width: int,
             shared_by: int = 1) -> AccessInfo:
    width = max(width, 1)
    if info.space is MemorySpace.SHARED:
        s = shared_stats(sets, width, masks, weights)
        if s is None:
            return _with(info, unknown_reason="no lane executes it in the sampled blocks", method="")
        return _with(info, warps_sampled=s.warps, bank_conflict_degree=s.degree_max,
                     bank_conflict_mean=s.degree_mean, active_lanes=s.active_lanes)
    g = global_stats(sets, width, masks, weights)
    if g is None:
        return _with(info, unknown_reason="no lane executes it in the sampled blocks", method="")
    return _with(info, warps_sampled=g.warps, active_lanes=g.active_lanes, sectors_per_request=g.sectors_mean,
                 sectors_max=g.sectors_max, lines_per_request=g.lines_mean, lines_max=g.lines_max,
                 efficiency=g.efficiency, dram_ratio=g.block_reuse / shared_by)


# ---------------------------------------------------------------------------- model inputs

def n_ma_by_instruction(report: MemoryReport) -> dict[int, int]:
    """Many-BSP ``n_ma`` of each analysed global access: the 128-byte lines a warp request
    touches (1 when it fits one line). Lines, not sectors, because 000 counts a coalesced
    4-byte access as 1 and an 8-byte one as 2: exactly its lines. Unknown accesses are absent
    (the caller keeps the profile's default)."""
    return {
        a.index: max(1, math.ceil(a.lines_per_request - 1e-9))
        for a in report.accesses
        if a.space is MemorySpace.GLOBAL and a.lines_per_request is not None
    }


IDEAL_SECTORS = LINE // SECTOR  # a coalesced 4-byte warp access: what a profile's λ is measured on


def memory_cost_overrides(report: MemoryReport, profile: Any) -> dict[int, tuple[float, float]]:
    """(λ, Λ) per analysed access for the Pipeline simulator.

    Global: 001 §6.3 with R = ``dram_ratio`` (the sectors a block's warps share are served by
    L2), then the request's transactions m = sectors / 4 (at least 1) are charged like 001's
    excess bytes: λ·m and Λ + (m − 1)·λ. Shared: D = extra wavefronts = mean degree − 1."""
    out: dict[int, tuple[float, float]] = {}
    for a in report.accesses:
        if a.space is MemorySpace.SHARED and a.bank_conflict_mean is not None:
            out[a.index] = profile.shared_memory_lambdas(max(a.bank_conflict_mean - 1.0, 0.0))
        elif a.space is MemorySpace.GLOBAL and a.sectors_per_request is not None:
            lam, Lam = profile.global_memory_lambdas(a.dram_ratio if a.dram_ratio is not None else 1.0)
            m = max(1.0, a.sectors_per_request / IDEAL_SECTORS)
            out[a.index] = (lam * m, Lam + (m - 1.0) * lam)
    return out


def memory_table(report: MemoryReport) -> list[dict[str, Any]]:
    """One display row per access (plain values, rounded for reading)."""
    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 3)

    return [
        {
            "index": a.index, "line": a.line, "instruction": a.text, "space": a.space.value,
            "width": a.width_bytes, "address": a.affine or ("non-affine" if a.method else "?"),
            "sectors/req": r(a.sectors_per_request), "lines/req": r(a.lines_per_request),
            "efficiency": r(a.efficiency), "R": r(a.dram_ratio),
            "bank conflicts": a.bank_conflict_degree, "method": a.method,
            "note": a.unknown_reason or (f"not affine ({a.non_affine}): lanes evaluated" if a.non_affine else ""),
        }
        for a in report.accesses
    ]
