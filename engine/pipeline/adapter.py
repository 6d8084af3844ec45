"""From a parsed PTX kernel to a :class:`KernelDescription`, and one-call simulation/prediction.

* instructions: subsystem = the classification's unit; λ/Λ from ``Profile.cost`` (then a
  pluggable memory-cost function for memory instructions, then the user's overrides);
* dependences: the def-use edges of the analysis (the engine reads the latest executed instance of
  each producer, which covers loop-carried edges);
* dynamic path: a structural walk of the CFG from the entry; every natural loop becomes a
  ``Loop`` node with its trip count (override > inferred > 1 with a note); a conditional branch
  that is not a loop exit goes the way its uniform predicate says when the launch's argument
  values decide it; otherwise it has a taken probability p (default 0.5): one such branch in a
  loop body splits the loop by expected counts (round(p·N) iterations take it), elsewhere the
  more likely side is followed (a tie falls through); a guard that depends on the thread index
  goes, per warp, the way all its lanes go (``warp_branches``): warps that go different ways walk
  different paths, and ``KernelDescription.warp_path`` maps each warp of a block to its own;
* launch: warps per block, the busiest SM's share of the blocks (ceil(blocks / SMs)), resident
  blocks from the occupancy rules (overridable), the profile's issue limit and launch overheads.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from engine.analysis import KernelAnalysis, LaunchValues, UniformEvaluator, analyze_kernel
from engine.analysis.warp_branches import WarpBranches, warp_branches_for
from engine.errors import ModelError, SimulationError, WarplineError
from engine.frozen_rows import built
from engine.mechanisms import enabled
from engine.pipeline._core import ASYNC_COMMIT, ASYNC_COPY, ASYNC_NONE, ASYNC_WAIT, ASYNC_WAIT_ALL
from engine.pipeline.description import (
    KernelDescription,
    Loop,
    PathNode,
    Run,
    StaticInstruction,
    schedulers_sharing,
    to_fraction,
)
from engine.pipeline.schedule import block_issue_order, issue_positions
from engine.pipeline.traced import block_paths, counted_block_paths
from engine.sass.order import copy_positions
from engine.units import MemorySpace, Unit

# (instruction index, instruction, classification, profile cost) -> (λ, Λ)
MemoryCost = Callable[[int, Any, Any, Any], tuple[float, float]]

# The subsystem of global atomics (mechanism atomic_units): L2's atomic units, not the SM's pipe.
L2_ATOMIC_SUBSYSTEM = "l2_atomic"
# The subsystem of texture fetches served by L1: the SM's texture pipe (TEX issues there, not to the
# LSU pipe; ncu counts them apart, sm__inst_executed_pipe_tex), at its measured rate. A fetch that
# waits on L2 or DRAM longer than that stays on the memory pipe, whose λ carries the bandwidth the
# texture path shares with loads and stores.
TEXTURE_SUBSYSTEM = "texture"


@dataclass
class PipelineOverrides:
    """User edits, all optional. ``costs`` keys: an instruction index (int), a full opcode or a
    dotted prefix of one (``"ld.global"``), or a unit name (``"alu"``); most specific wins.
    Values are ``(λ, Λ)`` with None keeping the computed figure."""

    costs: dict[int | str, tuple[float | None, float | None]] = field(default_factory=dict)
    resident_blocks: int | None = None
    policy: str | None = None
    branch_probability: dict[int | str, float] = field(default_factory=dict)  # index or target label
    trip_counts: dict[str, int] = field(default_factory=dict)                # loop key
    issue_limit: int | None = None
    memory_cost: MemoryCost | None = None
    schedule: bool = True    # issue each block in a latency-driven order (as ptxas does), not as written


def ratio_memory_cost(profile: Any, dram_ratio: float | None = None,
                      conflict_degree: float | Mapping[int, float] | None = None) -> MemoryCost:
    """001 §6.3's context-dependent mapper g as a ``memory_cost`` function.

    Global accesses take the profile's λ/Λ for the DRAM/global byte ratio R (from a profiler);
    shared accesses the bank-conflict degree D (one value, or per instruction index). Accesses
    without a figure keep the profile's per-instruction cost.
    """
    from engine.units import MemorySpace

    def cost(index: int, instr: Any, cls: Any, base: Any) -> tuple[float, float]:
        if dram_ratio is not None and cls.is_global_memory:
            return profile.global_memory_lambdas(dram_ratio)
        if cls.space is MemorySpace.SHARED and conflict_degree is not None:
            degree = (conflict_degree.get(index) if isinstance(conflict_degree, Mapping)
                      else conflict_degree)
            if degree is not None:
                return profile.shared_memory_lambdas(degree)
        return base.lam, base.Lam

    return cost


def _cost_override(ov: PipelineOverrides, index: int, full_opcode: str,
                   unit: Unit) -> tuple[float | None, float | None]:
    if index in ov.costs:
        return ov.costs[index]
    best: tuple[int, tuple[float | None, float | None]] | None = None
    for key, value in ov.costs.items():
        if not isinstance(key, str):
            continue
        if full_opcode == key or full_opcode.startswith(key + "."):
            rank = 100 + key.count(".")
        elif key == unit.value:
            rank = 0
        else:
            continue
        if best is None or rank > best[0]:
            best = (rank, value)
    return best[1] if best else (None, None)


def kernel_sass(module: Any, kernel: str, profile: Any) -> tuple[Any, str]:
    """The SASS map of ``kernel`` for the profile's GPU (``engine.sass.SassMap``) and ``""``, or
    None and why there is none: the mechanism is off, the module has no file, the tools are
    missing or ptxas refuses it (the PTX then issues one for one)."""
    from engine.sass import SassMap, sass_map

    if not enabled("sass"):
        return None, "switched off"
    filename = getattr(module, "filename", "") or ""
    if not filename or filename.startswith("<"):
        return None, "the PTX has no file for ptxas"
    try:
        result = sass_map(filename, kernel, profile.device.sm_version)
    except WarplineError as exc:
        return None, str(exc)
    return (result, "") if isinstance(result, SassMap) else (None, result.reason)


def issue_weights(analysis: KernelAnalysis, sass: Any, kept: frozenset[int] = frozenset()) -> dict[int, float]:
    """SASS weights the simulator applies: those of instructions that are not memory accesses.
    A memory access's cost comes from the memory model, and its SASS line attribution is the
    least certain (a texture fetch or a merged load is credited to one of its PTX lines). Local
    accesses ptxas kept in registers (``kept``, :func:`in_registers`) are no memory accesses any more."""
    return {i: w for i, w in sass.weights.items()
            if i < len(analysis.classifications) and (not analysis.classifications[i].is_memory or i in kept)}


def async_copy_ops(instructions: Sequence[Any]) -> dict[int, tuple[int, int]]:
    """Per instruction that acts on its warp's groups of asynchronous copies (cp.async, not the
    bulk copies, which complete on an mbarrier): (``ASYNC_*`` of the simulator's core, the groups
    a ``wait_group`` leaves pending)."""
    out: dict[int, tuple[int, int]] = {}
    for i, instr in enumerate(instructions):
        opcode = instr.full_opcode
        if not opcode.startswith("cp.async") or opcode.startswith("cp.async.bulk"):
            continue
        if opcode.startswith("cp.async.commit_group"):
            out[i] = (ASYNC_COMMIT, 0)
        elif opcode.startswith("cp.async.wait_all"):
            out[i] = (ASYNC_WAIT_ALL, 0)
        elif opcode.startswith("cp.async.wait_group"):
            try:
                out[i] = (ASYNC_WAIT, int(instr.text.strip().rstrip(";").split()[-1], 0))
            except ValueError:           # not a number: wait for every group
                out[i] = (ASYNC_WAIT_ALL, 0)
        elif ".shared" in opcode:
            out[i] = (ASYNC_COPY, 0)
    return out


def _texture_index(names: list[str]) -> int:
    """The texture pipe's subsystem index, added on first use."""
    if TEXTURE_SUBSYSTEM not in names:
        names.append(TEXTURE_SUBSYSTEM)
    return names.index(TEXTURE_SUBSYSTEM)


def issue_gaps(sass: Any) -> Mapping[int, float]:
    """Cycles each instruction holds its warp after issue: the stall counts ptxas wrote into its
    SASS instructions' control fields, per PTX execution (``SassMap.stall_cycles``); empty
    without a SASS map or with mechanism ``sass_stall_counts`` off."""
    if sass is None or not enabled("sass") or not enabled("sass_stall_counts"):
        return {}
    return sass.stall_cycles


def in_registers(analysis: KernelAnalysis, sass: Any) -> frozenset[int]:
    """Local loads and stores whose SASS holds no memory instruction: ptxas kept the local array
    in registers (an index known per copy becomes a register, a run-time one a chain of selects
    and moves), so they cost their SASS on the ALU, or nothing when folded away."""
    if not enabled("local_memory"):
        return frozenset()
    out = set()
    for i, cls in enumerate(analysis.classifications):
        if cls.space is MemorySpace.LOCAL and (cls.is_load or cls.is_store) and not cls.is_atomic \
                and i in sass.weights and sass.class_weights.get(i, {}).get("ldst", 0.0) <= 0:
            out.add(i)
    return frozenset(out)


def _issue_scale(weight: float, cost: Any, cls: Any) -> float:
    """The factor an instruction's λ takes from its SASS weight. ptxas did less than the PTX says
    (one of four loads merged into an LDS.128: a quarter; an unrolled loop's branch), or more: a
    64-bit integer operation is two SASS instructions. An expansion is already in a λ the profile
    measured on the PTX instruction itself (sin.approx: FMUL + MUFU), but not in its class
    default, measured on one representative SASS instruction (fma.rn.f32). Folded instructions
    (weight 0) are not issued at all: 1 here."""
    if 0 < weight < 1 or (weight > 1 and cost.is_default and not cls.is_memory):
        return weight
    return 1.0


def issue_scales(analysis: KernelAnalysis, profile: Any, weights: Mapping[int, float],
                 registers: frozenset[int] = frozenset()) -> dict[int, float]:
    """:func:`_issue_scale` of every weighted instruction (those ptxas folds keep 0): what the
    Pipeline simulator multiplies λ by, and Many-BSP* its rows' issue and FU cycles. A local
    access kept in registers (``registers``, :func:`in_registers`) issues its whole SASS weight."""
    out = {}
    instructions = analysis.function.instructions
    for i, weight in weights.items():
        if i < len(analysis.classifications):
            cls = analysis.classifications[i]
            if weight <= 0:
                out[i] = 0.0
            elif i in registers:
                out[i] = weight
            else:
                out[i] = _issue_scale(weight, profile.cost(instructions[i], cls), cls)
    return out


_PACKED_HALF = ("HFMA2", "HADD2", "HMUL2")


def packed_half_scale(sass: Any) -> tuple[frozenset[int], float]:
    """(instructions, factor) for packed half-precision arithmetic. The profile's λ of
    ``fma/add/mul.f16x2`` was measured on code in which ptxas alternates the plain form
    (``HFMA2``: the FMA pipe) and the ``.MMA`` form (the tensor pipe's half-precision path), so half
    the operations went to each of two pipes. A kernel whose SASS puts a share p of them on one of
    the pipes keeps that pipe busy 2·p of the measured λ per operation (mechanism
    ``half_pipe_split``): a chain ptxas leaves as plain HFMA2 runs at half the measured rate."""
    if sass is None or not enabled("half_pipe_split"):
        return frozenset(), 1.0
    plain = mma = 0.0
    members = set()
    for i, ops in sass.opcodes.items():
        forms = [op for op in ops if op.startswith(_PACKED_HALF)]
        if not forms:
            continue
        members.add(i)
        weight = sass.weights.get(i, 1.0) / len(ops)
        for op in forms:
            if ".MMA" in op:
                mma += weight
            else:
                plain += weight
    if plain + mma <= 0:
        return frozenset(), 1.0
    return frozenset(members), 2.0 * max(plain, mma) / (plain + mma)


def _forwarded_deps(deps: dict[int, set[int]], dropped: set[int]) -> dict[int, set[int]]:
    """Producers with the dropped instructions replaced by their own producers (transitively): a
    consumer of an instruction ptxas folded away waits for what that instruction read."""
    if not dropped:
        return deps
    resolved: dict[int, set[int]] = {}

    def live(p: int, visiting: frozenset[int]) -> set[int]:
        if p not in dropped:
            return {p}
        if p in resolved:
            return resolved[p]
        if p in visiting:
            return set()                   # a loop of dropped instructions: nothing real to wait for
        out: set[int] = set()
        for q in deps.get(p, ()):
            out |= live(q, visiting | {p})
        resolved[p] = out
        return out

    def resolved_producers(ps: set[int]) -> set[int]:
        out: set[int] = set()
        for p in ps:
            if p in dropped:
                out |= live(p, frozenset())
            else:
                out.add(p)                 # most producers stay: no call for them
        return out

    # most consumers read no dropped instruction: their producer sets stay as they are
    return {c: ps if ps.isdisjoint(dropped) else resolved_producers(ps) for c, ps in deps.items()}


def _exact(value: float | Fraction, what: str, index: int, text: str) -> Fraction:
    """:func:`to_fraction` of instruction ``index``'s λ or Λ; the message that names the
    instruction is written only for a value it refuses (once per instruction of a large kernel,
    the text costs as much as the conversion)."""
    if isinstance(value, float) and not math.isfinite(value):
        return to_fraction(value, f"{what} of instruction {index} ({text})")
    return to_fraction(value, what)


def _instructions(analysis: KernelAnalysis, profile: Any, ov: PipelineOverrides,
                  weights: Mapping[int, float] | None = None, blocking: frozenset[int] = frozenset(),
                  half: tuple[frozenset[int], float] = (frozenset(), 1.0),
                  registers: frozenset[int] = frozenset(),
                  dram: Mapping[int, float] | None = None,
                  gaps: Mapping[int, float] | None = None,
                  levels: Mapping[int, tuple[float, float]] | None = None,
                  copies: Mapping[int, tuple[int, int]] | None = None,
                  ) -> tuple[tuple[StaticInstruction, ...], tuple[str, ...]]:
    """The static instructions. ``blocking``: instructions the warp cannot pass before they
    complete (an atomic's retry loop: the next instruction waits for its last pass); ``half``:
    :func:`packed_half_scale`; ``registers``: local accesses ptxas kept in registers
    (:func:`in_registers`), which issue their SASS weight of ALU moves; ``dram``: the share of
    each global access's requests that wait for DRAM (``memory_cost_overrides``), kept where
    its Λ is the memory model's (not a store's issue, not the user's figure); ``gaps``: each
    instruction's stall counts (:func:`issue_gaps`); ``levels``: each asynchronous copy's L2 and
    DRAM busy time per execution (``memory_cost_overrides``); ``copies``: what each instruction
    does to its warp's copy groups (:func:`async_copy_ops`)."""
    function = analysis.function
    gaps = gaps or {}
    levels = levels or {}
    copies = copies or {}
    units: list[Unit] = [Unit.ALU] if registers else []
    for cls in analysis.classifications:
        if cls.unit not in units:
            units.append(cls.unit)
    units.sort(key=lambda u: list(Unit).index(u))
    names = [u.value for u in units]
    # global atomics (and generic ones, which the memory model takes as global): L2's atomic units
    # run them (ptxas's own retry loops, for atomics the hardware lacks, keep each pass on the
    # memory pipe, as a load)
    to_atomic_units = frozenset(
        i for i, cls in enumerate(analysis.classifications)
        if cls.is_atomic and cls.is_global_memory and i not in blocking) if enabled("atomic_units") else frozenset()
    if to_atomic_units:
        names.append(L2_ATOMIC_SUBSYSTEM)
    texture_lam = float((getattr(getattr(profile, "pipeline", None), "memory", None) or {}).get("texture_fetch_lam")
                        or 0.0)
    to_texture_pipe: set[int] = set()
    deps: dict[int, set[int]] = {}
    for edge in analysis.defuse.edges:
        deps.setdefault(edge.consumer, set()).add(edge.producer)
    weights = weights or {}
    deps = _forwarded_deps(deps, {i for i, w in weights.items() if w <= 0})
    for i in sorted(set(blocking) | {i for i, (op, _) in copies.items() if op >= ASYNC_WAIT}):
        after = next((j for j in range(i + 1, len(analysis.classifications)) if weights.get(j, 1.0) > 0), None)
        if after is not None:
            deps.setdefault(after, set()).add(i)
    out = []
    consumed = {p for producers in deps.values() for p in producers}   # results something reads
    move = profile.cost_for_opcode("mov.b32", Unit.ALU) if registers else None
    issue_slots = enabled("sass_issue_slots")
    costs = profile.costs_of(function.instructions, analysis.classifications)
    for i, (instr, cls) in enumerate(zip(function.instructions, analysis.classifications, strict=False)):
        unit, memory = cls.unit, cls.is_memory
        op, pending = copies.get(i, (ASYNC_NONE, 0))
        dram_wait = (dram or {}).get(i, 0.0)
        if move is not None and i in registers:
            # no memory access left: its SASS weight of moves on the ALU
            unit, memory = Unit.ALU, False
            lam, Lam = move.lam * max(weights.get(i, 1.0), 1.0), move.Lam
        else:
            cost = costs[i]
            lam, Lam = cost.lam, cost.Lam
            if cls.is_memory and ov.memory_cost is not None:
                lam, Lam = ov.memory_cost(i, instr, cls, cost)
            if (cls.is_store and not cls.is_atomic and not instr.dests and i not in levels) or (
                    cls.is_atomic and i not in consumed and i not in blocking):
                # A store has no consumer; what the simulator's warp waits for at retirement is the
                # LSU accepting it, not the write reaching DRAM (warps exit with stores in flight).
                # Nor has an atomic whose old value nothing reads: ptxas makes it a RED (the ISA's
                # reduction without a return value), which the warp issues and leaves to L2.
                Lam, dram_wait = lam, 0.0
            lam = lam * _issue_scale(weights.get(i, 1.0), cost, cls)
            if i in half[0] and not cost.is_default:
                lam = lam * half[1]
            if texture_lam and instr.opcode == "tex" and lam <= texture_lam:
                lam = texture_lam
                to_texture_pipe.add(i)
            if op >= ASYNC_WAIT:
                Lam = lam             # a wait's result is the groups' data: no latency of its own
        o_lam, o_Lam = _cost_override(ov, i, instr.full_opcode, unit)
        lam = lam if o_lam is None else o_lam
        Lam, dram_wait = (Lam, dram_wait) if o_Lam is None else (o_Lam, 0.0)
        text = instr.text.strip()
        out.append(built(StaticInstruction,
            name=text or instr.full_opcode,
            unit=(names.index(L2_ATOMIC_SUBSYSTEM) if i in to_atomic_units
                  else _texture_index(names) if i in to_texture_pipe else units.index(unit)),
            lam=_exact(lam, "λ", i, text), Lam=_exact(Lam, "Λ", i, text),
            memory=memory, barrier=cls.is_barrier, deps=tuple(sorted(deps.get(i, ()))),
            dram_wait=dram_wait if memory else 0.0,
            slots=max(weights.get(i, 1.0), 0.0) if issue_slots else 1.0,
            issue_gap=gaps.get(i, 0.0), level_lam=levels.get(i, (0.0, 0.0)) if memory else (0.0, 0.0),
            async_op=op, async_n=pending))
    return tuple(out), tuple(names)


# ---- dynamic path ------------------------------------------------------------------------------------
class _PathBuilder:
    """Walks the CFG structurally: loops become Loop nodes, branches pick one side."""

    # Blocks visited while walking the path, beyond one visit per block: a loop split by a
    # data-dependent branch walks its body twice, a straight kernel of 10^5 labels once per
    # block; only control flow that keeps re-walking (irreducible, split within split) gets here.
    MAX_STEPS = 100_000
    # The path is built, counted and simulated by walking nested Loop nodes recursively (two
    # Python frames per level). Real kernels nest a handful of loops; a file nesting hundreds
    # is refused by name instead of exhausting the interpreter's stack.
    MAX_LOOP_DEPTH = 128

    def __init__(self, analysis: KernelAnalysis, launch: Any, ov: PipelineOverrides,
                 latencies: list[float] | None = None, dropped: frozenset[int] = frozenset(),
                 unroll: Mapping[str, int] | None = None,
                 deps: Sequence[tuple[int, ...]] | None = None, sm_count: int | None = None,
                 sass_positions: Mapping[int, tuple[int, ...]] | None = None,
                 warp: int | None = None, warp_branches: WarpBranches | None = None) -> None:
        self.a = analysis
        # the warp of the block whose path this is, and the per-warp outcomes of branches whose
        # guard depends on the thread index (None: every warp walks the one path)
        self.warp = warp
        self.warp_branches = warp_branches
        self.warp_decided: set[int] = set()   # branches this walk decided for its warp
        # where ptxas put each instruction's copies in its SASS: the order blocks issue in
        self.sass_positions = sass_positions
        # At most one block per SM: per-thread trip counts take their slowest warp's, not the mean.
        self.single_wave = 0 < launch.n_blocks <= (sm_count or 0)
        self.used_slowest = False
        self.deps = deps             # each instruction's producers (the description's deps)
        self.extra_slots = 0         # completion slots the renamed copies of unrolled loops use
        self.latencies = latencies   # Λ per instruction: blocks issue in scheduled order
        self.dropped = dropped       # instructions ptxas folds away: never issued
        self.unroll = unroll or {}   # "first-last" instruction of a loop -> ptxas's unroll factor
        self.cfg = analysis.cfg
        self.ov = ov
        self.notes: list[str] = []
        self.loops = {loop.header_block: loop for loop in self.cfg.loops}
        self.steps = 0
        self.max_steps = self.MAX_STEPS + 4 * len(self.cfg.blocks)
        # data-dependent branches met while walking each enclosing loop body, innermost last
        self._chance: list[list[tuple[int, float]]] = []
        self.forced: dict[int, bool] = {}   # branch block -> taken, while building a split loop
        try:
            self.evaluator: UniformEvaluator | None = UniformEvaluator(
                analysis.function, analysis.defuse, LaunchValues.from_launch(launch))
        except WarplineError:
            self.evaluator = None

    def build(self) -> tuple[PathNode, ...]:
        if self.cfg.entry is None:
            raise ModelError(f"kernel {self.a.function.name}: no entry block")
        deepest = max((loop.depth for loop in self.cfg.loops), default=0)
        if deepest > self.MAX_LOOP_DEPTH:
            raise ModelError(f"bounded: loops nested {deepest} deep; the simulation follows at most "
                             f"{self.MAX_LOOP_DEPTH} levels")
        return tuple(self._region(self.cfg.entry, None))

    def _trip(self, loop: Any) -> int:
        key = loop.key
        if key in self.ov.trip_counts:
            return int(self.ov.trip_counts[key])
        trip = self.a.trip_counts.get(key)
        if trip is not None and trip.value is not None:
            if trip.slowest is not None and self.single_wave and trip.slowest != trip.value:
                # one block per SM: the SM with the block of the slowest warp sets the time
                self.used_slowest = True
                return int(trip.slowest)
            return int(trip.value)
        self.notes.append(f"loop {key}: trip count unknown ({trip.reason if trip else 'no analysis'}); "
                          "assumed 1 - set it to simulate the real work")
        return 1

    def _exit_of(self, loop: Any) -> int | None:
        if not loop.exits:
            return None
        from_latch = [e for e in loop.exits
                      if any(e in self.cfg.blocks[latch].successors for latch in loop.latches)]
        return min(from_latch) if from_latch else min(loop.exits)

    def _region(self, start: int, loop: Any) -> list[PathNode]:
        nodes: list[PathNode] = []
        seen: set[int] = set()
        b: int | None = start
        while b is not None:
            self.steps += 1
            if self.steps > self.max_steps:
                raise ModelError("the control flow is too large or irreducible to follow")
            if loop is not None and b not in loop.body:
                break                      # left the loop: its Loop node's count takes over
            if b in seen:
                break                      # back at the header: one iteration done
            inner = self.loops.get(b)
            if inner is not None and (loop is None or inner.header_block != loop.header_block):
                nodes.extend(self._loop(inner))
                seen.add(b)
                b = self._exit_of(inner)
                continue
            seen.add(b)
            block = self.cfg.blocks[b]
            order = tuple(i for i in self._issue_order(block.start, block.end) if i not in self.dropped)
            if order:
                nodes.append(Run(order))
            b = self._next(block, loop)
        return nodes

    def _issue_order(self, start: int, end: int) -> tuple[int, ...]:
        if self.latencies is None:
            return tuple(range(start, end))
        return block_issue_order(self.a.function.instructions, self.a.classifications, self.latencies,
                                 start, end, self._sass_order([(0, i) for i in range(start, end)]))

    def _sass_order(self, copies: Sequence[tuple[int, int]]) -> list[float | None] | None:
        """SASS positions of (unrolled copy, instruction) pairs (:func:`engine.sass.order.copy_positions`);
        None without a SASS map."""
        return copy_positions(copies, self.sass_positions, self.deps)

    def _loop(self, loop: Any) -> list[PathNode]:
        """Loop node(s) for ``loop``. One data-dependent branch in the body (taken with
        probability p) splits the loop into round(p·N) iterations that take it and the rest that
        do not, so the expected counts are kept; with several such branches each goes its more
        likely way (noted)."""
        count = self._trip(loop)
        self._chance.append([])
        body = self._region(loop.header_block, loop)
        chance = self._chance.pop()
        if count <= 0 or not _executes(body):
            return []
        if len(chance) == 1:
            return self._split_loop(loop, count, chance)
        if len(chance) > 1:
            self.notes.append(f"loop {loop.key}: {len(chance)} data-dependent branches; each "
                              "follows its more likely side in every iteration")
        return self._unrolled(loop, body, count)

    def _unrolled(self, loop: Any, body: list[PathNode], count: int) -> list[PathNode]:
        """The loop as ptxas runs it: a body it unrolled u times is u copies scheduled as one
        block (the copies' loads issue together) for count // u passes, then the remaining
        iterations one at a time. Only straight-line bodies; the inner backward branches go.

        ptxas gives each copy registers of its own, so a copy's instructions complete into slots
        of their own (the last copy into the instructions' own, which the next pass and the code
        after the loop read): a copy's load can issue before the previous copy's consumer of the
        same PTX register has read it, as the SASS does (16 loads in flight, not 4)."""
        first = self.cfg.blocks[loop.header_block].start
        last = max(self.cfg.blocks[latch].end - 1 for latch in loop.latches)
        u = self.unroll.get(f"{first}-{last}", 1)
        if u < 2 or count < u or self.latencies is None or not all(isinstance(n, Run) for n in body):
            return [Loop(tuple(body), count)]
        one = [i for node in body for i in node.instructions]   # type: ignore[union-attr]
        copies = [(c, i) for c in range(u - 1) for i in one if i != last] + [(u - 1, i) for i in one]
        renamed = self._rename(one, copies, u) if self.deps is not None and enabled("renamed_copies") else None
        sequence = [i for _, i in copies]
        positions = issue_positions(self.a.function.instructions, self.a.classifications, self.latencies,
                                    sequence, renamed, self._sass_order(copies))
        run = Run(tuple(sequence[k] for k in positions),
                  None if renamed is None else tuple(renamed[k] for k in positions))
        nodes: list[PathNode] = [Loop((run,), count // u, ((last, u - 1),) if last in one else ())]
        if count % u:
            nodes.append(Loop(tuple(body), count % u))
        return nodes

    def _rename(self, one: list[int], copies: list[tuple[int, int]], u: int
                ) -> list[tuple[int, tuple[int, ...]]]:
        """Per position of ``copies`` (copy, instruction): the slot it completes into and the
        slots it waits for. A producer earlier in the body is the same copy's; one later in the
        body (or the instruction itself) is the previous copy's, and for the first copy the
        previous pass's last copy, whose slots are the instructions' own."""
        assert self.deps is not None
        n = len(self.deps)
        where = {i: k for k, i in enumerate(one)}
        slot: dict[tuple[int, int], int] = {}
        for c, i in copies:
            if c < u - 1:
                slot[(c, i)] = n + self.extra_slots
                self.extra_slots += 1

        def of(c: int, i: int) -> int:
            return slot.get((c, i), i)

        out = []
        for c, i in copies:
            reads = []
            for p in self.deps[i]:
                if p not in where:
                    reads.append(p)                  # defined before the loop
                elif where[p] < where[i]:
                    reads.append(of(c, p))           # this iteration
                else:
                    reads.append(of(c - 1, p) if c > 0 else p)   # the previous iteration
            out.append((of(c, i), tuple(reads)))
        return out

    def _split_loop(self, loop: Any, count: int, chance: list[tuple[int, float]]) -> list[PathNode]:
        branch_block, p = chance[0]
        taken_n = int(round(p * count))
        variants = []
        for take, n in ((True, taken_n), (False, count - taken_n)):
            self.forced[branch_block] = take
            self._chance.append([])
            variant = self._region(loop.header_block, loop)
            self._chance.pop()
            if n > 0 and _executes(variant):
                variants.append(Loop(tuple(variant), n))
        del self.forced[branch_block]
        variants.sort(key=lambda node: -node.count)
        return variants

    def _next(self, block: Any, loop: Any) -> int | None:
        succ = list(dict.fromkeys(block.successors))
        if loop is not None:
            inside = [s for s in succ if s in loop.body]
            if len(inside) == 1 or (inside and len(succ) == 1):
                return inside[0]
            if not inside:
                return None
            succ = inside
        if not succ:
            return None
        if len(succ) == 1:
            return succ[0]
        return self._decide(block, succ)

    def _decide(self, block: Any, succ: list[int]) -> int:
        """Which way a two-way branch goes (the block's last instruction is the branch)."""
        index = block.end - 1
        instr = self.a.function.instructions[index]
        target = instr.branch_target
        taken = next((s for s in succ if self.cfg.blocks[s].label == target), None)
        fall = next((s for s in succ if s != taken), succ[0])
        if taken is None:
            return succ[0]
        if block.index in self.forced:
            return taken if self.forced[block.index] else fall
        p = self.ov.branch_probability.get(index, self.ov.branch_probability.get(target or "", None))
        if p is None and instr.guard and self.evaluator is not None:
            try:
                value = self.evaluator.register(instr.guard, index)
            except (WarplineError, RecursionError, KeyError, ValueError):
                value = None
            if value is not None and value.known:
                return taken if bool(value.value) != instr.guard_negated else fall
        if p is None and instr.guard and self.warp is not None and self.warp_branches is not None:
            ways = self.warp_branches.outcomes(index)
            way = ways[self.warp] if self.warp < len(ways) else None
            if way is not None:        # every lane of this warp goes one way
                self.warp_decided.add(index)
                return taken if way else fall
        if p is None:
            p = 0.5
        if 0.0 < p < 1.0 and self._chance:
            self._chance[-1].append((block.index, float(p)))
        return taken if p > 0.5 else fall


def _executes(nodes: list[PathNode]) -> bool:
    for node in nodes:
        if isinstance(node, Run) and node.instructions:
            return True
        if isinstance(node, Loop) and node.count > 0 and _executes(list(node.body)):
            return True
    return False


# ---- public API -------------------------------------------------------------------------------------
def build_description(analysis: KernelAnalysis, profile: Any, launch: Any,
                      overrides: PipelineOverrides | None = None,
                      resident_blocks: int | None = None, module: Any = None,
                      memory: Any = True, sass: Any = True) -> KernelDescription:
    """The Pipeline-model input for one kernel launch on the profile's GPU (one SM's share).

    ``module`` (the parsed PTX) lets the occupancy use the kernel's registers (ptxas when it is
    installed, else an estimate) and static shared memory; without it 32 registers are assumed.
    ``memory``: an ``engine.memory.MemoryReport`` (or True: analyse here; None: skip) whose
    coalescing, DRAM ratio and bank conflicts set each analysed access's λ/Λ, unless the
    overrides bring their own ``memory_cost``. ``sass``: an ``engine.sass.SassMap`` of the kernel
    (True: look it up for the module's file and the profile's GPU; None: none);
    instructions ptxas folds away (weight 0) are not issued (their consumers wait for their
    producers instead) and those it merges (weight below 1) keep their pipeline busy that share of
    their λ. Weights above 1 change nothing: the profile's λ of an instruction is measured on it
    and so already holds the SASS it expands to.
    """
    ov = overrides or PipelineOverrides()
    device = profile.device
    resident = ov.resident_blocks or resident_blocks
    notes: list[str] = []
    if resident is None:
        resident = _resident_blocks(analysis, profile, launch, module, notes)
    if sass is True:
        sass, _ = kernel_sass(module, analysis.function.name, profile)
    retried = frozenset(sass.retry_body) if sass is not None and enabled("sass") else frozenset()
    passes: dict[int, tuple[float, float]] = {}
    dram: dict[int, float] = {}
    levels: dict[int, tuple[float, float]] = {}
    copies = async_copy_ops(analysis.function.instructions) if enabled("async_copy_queues") else {}
    report: Any = memory if memory is not True else None
    if ov.memory_cost is None and memory is not None:
        from engine.memory import retry_passes
        from engine.memory.executed import executed_memory, with_executed_trips

        report = executed_memory(analysis, launch, module) if memory is True else memory
        if memory is True and report.execution is not None and not getattr(launch, "trip_overrides", None):
            analysis = with_executed_trips(analysis, report.execution)   # as the evaluator counts loops
        sm = sm_context(analysis, profile, launch, module, resident, report)
        passes = retry_passes(report, sm, retried)
        ov = dataclasses.replace(ov, memory_cost=analysed_memory_cost(
            analysis, profile, launch, module, report, sm, passes,
            dram_waits=dram if enabled("loaded_dram_latency") else None,
            levels=levels, copies=frozenset(i for i, (op, _) in copies.items() if op == ASYNC_COPY)))
    registers = in_registers(analysis, sass) if sass is not None and enabled("sass") else frozenset()
    weights = issue_weights(analysis, sass, registers) if sass is not None and enabled("sass") else {}
    instructions, subsystems = _instructions(analysis, profile, ov, weights, frozenset(passes),
                                             packed_half_scale(sass if enabled("sass") else None), registers,
                                             dram, issue_gaps(sass), levels,
                                             copies if levels else None)   # no copy queued: no groups
    latencies = [float(x.Lam) for x in instructions] if ov.schedule and enabled("schedule") else None
    dropped = frozenset(i for i, w in weights.items() if w <= 0)
    unroll = sass.unroll if sass is not None and enabled("sass") else None
    order = sass.positions if sass is not None and enabled("sass") and enabled("sass_order") else None
    deps = [x.deps for x in instructions]
    branches = warp_branches_for(analysis, LaunchValues.from_launch(launch))

    def walk(warp: int | None, mean_counts: bool = False) -> tuple[_PathBuilder, tuple[PathNode, ...]]:
        if mean_counts:       # trip counts at the mean over warps: no renaming, no SASS order
            builder = _PathBuilder(analysis, launch, ov, latencies, dropped, unroll,
                                   warp=warp, warp_branches=branches)
        else:
            builder = _PathBuilder(analysis, launch, ov, latencies, dropped, unroll, deps, device.sm_count,
                                   order, warp=warp, warp_branches=branches)
        return builder, builder.build()

    execution = getattr(report, "execution", None)
    if execution is not None and execution.ok and enabled("execution") and not ov.trip_counts \
            and not getattr(launch, "trip_overrides", None) \
            and not ov.branch_probability:
        # the paths the sampled warps ran: one block's warps, each its own path
        def builder_for(warp: int | None) -> _PathBuilder:
            return _PathBuilder(analysis, launch, ov, latencies, dropped, unroll, deps, device.sm_count, order)

        single_wave = 0 < launch.n_blocks <= device.sm_count
        traced, kinds, extra = block_paths(execution, builder_for, single_wave)
        counted_traced: tuple[tuple[PathNode, ...], ...] | None = None
        counted_mix: tuple[tuple[int, ...], ...] | None = None
        if single_wave:
            # the largest block sets the time; the launch counts the blocks' mix (one kind: warp by warp)
            counted, counted_kinds, _ = counted_block_paths(execution, builder_for)
            traced = [traced[p] for p in kinds[0]]
            kinds = (tuple(range(len(traced))),)
            one = len(counted_kinds) == 1
            counted_traced = tuple(counted[p] for p in counted_kinds[0]) if one else tuple(counted)
            counted_mix = None if one else counted_kinds
        if any(_executes(list(p)) for p in traced):
            return dataclasses.replace(
                _finish(analysis, profile, launch, resident, ov, instructions, subsystems, traced, None,
                        extra, counted_traced, notes, passes), traced=True, counted_kinds=counted_mix,
                block_kinds=kinds if len(kinds) > 1 or len(set(kinds[0])) > 1 else None)
    walks = [walk(0 if branches is not None else None)]
    representatives = [walks[0][0].warp]
    warp_path = None
    decided = sorted(walks[0][0].warp_decided)
    if decided and branches is not None:
        # warps that go different ways at the thread-dependent branches run different paths:
        # one walk per distinct set of ways (its first warp walks it), each warp mapped to its own.
        # A branch that only a later walk meets is decided for that walk's first warp.
        ways = [tuple(branches.outcomes(i)[w] for i in decided) for w in range(branches.warps)]
        first: dict[tuple[bool | None, ...], int] = {}
        for w, key in enumerate(ways):
            first.setdefault(key, w)
        if len(first) > 1:
            representatives = list(first.values())
            walks += [walk(w) for w in representatives[1:]]
            position = {key: k for k, key in enumerate(first)}
            warp_path = tuple(position[key] for key in ways)
    builders = [b for b, _ in walks]
    path = walks[0][1]
    counted = None
    if any(b.used_slowest for b in builders):
        # simulated at the slowest warp's trip counts, counted (instructions, bytes) at the mean:
        # the same walks at the mean counts (their notes are the ones above; renaming changes no count)
        counted = tuple(walk(w, mean_counts=True)[1] for w in representatives)
    if not _executes(list(path)):
        raise ModelError(f"kernel {analysis.function.name}: the path this launch takes executes nothing")
    notes = list(dict.fromkeys(n for b in builders for n in b.notes)) + notes
    return _finish(analysis, profile, launch, resident, ov, instructions, subsystems, [p for _, p in walks],
                   warp_path, max(b.extra_slots for b in builders), counted, notes, passes)


def _finish(analysis: KernelAnalysis, profile: Any, launch: Any, resident: int, ov: PipelineOverrides,
            instructions: Any, subsystems: Any, paths: Sequence[tuple[PathNode, ...]],
            warp_path: tuple[int, ...] | None, extra_slots: int, counted: Any, notes: list[str],
            passes: Mapping[int, tuple[float, float]]) -> KernelDescription:
    """The description around the paths: blocks, occupancy, issue limit and launch overheads."""
    device = profile.device
    warps_per_block = math.ceil(launch.threads_per_block / device.warp_size)
    blocks = math.ceil(launch.n_blocks / device.sm_count)
    if resident < 1:
        raise SimulationError(f"kernel {analysis.function.name} does not fit on an SM of "
                              f"{profile.name} (occupancy 0 blocks)")
    il = ov.issue_limit
    if il is None:
        il = max(1, int(round(profile.pipeline.issue_limit)))
    mb = profile.manybsp
    block_ovh = Fraction(0) if mb is None else to_fraction(mb.block_lnch_ovh, "block launch overhead")
    warp_ovh = Fraction(0) if mb is None else to_fraction(mb.warp_lnch_ovh, "warp launch overhead")
    # The SM-wide launch rate, from the fit that measured both overheads: one block of a full
    # wave every block_lnch_ovh + warp_lnch_ovh * (warps each scheduler gets) cycles.
    launch_interval = Fraction(0)
    if enabled("launch_queue"):
        per_scheduler = math.ceil(warps_per_block / max(1, device.schedulers_per_sm))
        launch_interval = block_ovh + warp_ovh * per_scheduler
    # a freed slot's own restart, measured with one block per SM: about twice that rate
    turnaround = profile.pipeline.block_turnaround
    restart = to_fraction(turnaround, "block turnaround") \
        if turnaround is not None and enabled("block_turnaround") else block_ovh
    # each scheduler issues for its own warps (a warp slot's scheduler is fixed, and with blocks
    # of 2 warps every block's warp 0 is on the same two of four: docs/pipeline.md, "Schedulers"),
    # onto its own MUFU, FP64 and tensor pipes
    schedulers = schedulers_sharing(device.schedulers_per_sm, il)
    return KernelDescription(
        instructions=instructions, subsystems=subsystems, paths=tuple(paths),
        schedulers=schedulers, scheduler_subsystems=scheduler_pipes(profile, subsystems, schedulers),
        warp_path=warp_path, warps_per_block=warps_per_block, blocks=blocks, resident_blocks=resident, issue_limit=il,
        block_launch_overhead=restart, warp_launch_overhead=warp_ovh,
        block_launch_interval=launch_interval, name=analysis.function.name, notes=tuple(notes),
        extra_slots=extra_slots,
        counted_paths=counted, retry_passes=tuple(sorted((i, p[0]) for i, p in passes.items())))


# The units whose lanes each sub-partition has its own of (bench/micro/pipe_schedulers.cu: MUFU,
# DFMA and HMMA run at half the rate when only two of the four schedulers have warps). The memory
# path is the SM's: its λ is the L1 / shared-memory rate all schedulers share.
_SUB_PARTITION_UNITS = (Unit.ALU, Unit.FP64, Unit.SFU, Unit.TENSOR)


def scheduler_pipes(profile: Any, subsystems: Sequence[str], schedulers: int) -> frozenset[str]:
    """The subsystems each of ``schedulers`` has its own copy of: the arithmetic units whose
    lanes the profile divides evenly among the schedulers (``per_scheduler`` x schedulers =
    ``per_sm``; Kepler's shared units do not) with fewer lanes than a warp per scheduler. A pipe
    of a warp's width takes an instruction every cycle, as fast as its scheduler issues: the
    scheduler's own issue limit binds it already (FFMA ran at half the rate with two of four
    schedulers busy, as MUFU did), and a copy of it per scheduler would only round the measured
    λ (0.255 SM cycles, 1.02 a scheduler) up against the issue grid."""
    if schedulers <= 1:
        return frozenset()
    names = set(subsystems)
    own = set()
    for unit in _SUB_PARTITION_UNITS:
        spec = profile.units.get(unit)
        if (spec is not None and unit.value in names and spec.per_scheduler * schedulers == spec.per_sm
                and spec.per_scheduler < profile.device.warp_size):
            own.add(unit.value)
    return frozenset(own)


def sm_context(analysis: KernelAnalysis, profile: Any, launch: Any, module: Any, resident: int,
               report: Any = None) -> Any:
    """The launch on one SM as the memory-level model sees it; with the memory ``report`` of an
    executed launch, its requests replayed through the caches at this occupancy."""
    from engine.caches import simulated_levels
    from engine.memory.hierarchy import SmContext

    smem = launch.smem_dynamic
    if module is not None:
        from engine.resources import static_shared_bytes

        # static shared memory is in the declarations: neither ptxas nor the register estimate
        # (a walk of the whole kernel) is needed for it
        smem += static_shared_bytes(module, analysis.function)
    sms = profile.device.sm_count or 1
    per_sm = max(1, min(resident, math.ceil(launch.n_blocks / sms)))
    execution = getattr(report, "execution", None)
    # the cache simulation asks whether the blocks of these range over their buffers at random:
    # gathers through loaded indices, and hashed addresses the run found on lines at random
    gathers = frozenset(a.index for a in getattr(report, "accesses", ()) if a.data_dependent or a.random_lines)
    group = None
    if execution is not None and execution.ok and enabled("execution"):
        from engine.execution import current_cancel, execute_sm_group

        # the blocks an SM holds at once share its L1: run a group of them together
        group = execute_sm_group(analysis, launch, module, execution, sms, per_sm, cancel=current_cancel())
    levels = simulated_levels(execution, profile, per_sm, smem, gathers, group) if execution is not None else None
    return SmContext(resident_blocks=per_sm, simulated=levels,
                     waves=launch.n_blocks / (sms * max(1, resident)),
                     shared_bytes_per_block=smem,
                     warps_per_block=math.ceil(launch.threads_per_block / profile.device.warp_size),
                     active_sm_share=min(1.0, launch.n_blocks / sms) if enabled("grid_share") else 1.0)


def analysed_memory_cost(analysis: KernelAnalysis, profile: Any, launch: Any, module: Any,
                         memory: Any = True, sm: Any = None,
                         passes: Mapping[int, tuple[float, float]] | None = None,
                         dram_waits: dict[int, float] | None = None,
                         levels: dict[int, tuple[float, float]] | None = None,
                         copies: Collection[int] = ()) -> MemoryCost:
    """A ``memory_cost`` from the memory-access analysis; unanalysed accesses keep the profile's.
    ``sm``: an ``engine.memory.hierarchy.SmContext`` (default: one block on a full GPU);
    ``passes``: of the atomics the SASS makes into retry loops (``engine.memory.retry_passes``);
    ``dram_waits``: filled with each global access's share of requests that wait for DRAM
    (``memory_cost_overrides``); ``levels``: filled with the L2 and DRAM busy time per request of
    each asynchronous copy in ``copies``, its λ then being its L1 time (``memory_cost_overrides``)."""
    from engine.memory import analyze_memory, memory_cost_overrides

    report = analyze_memory(analysis, launch, module) if memory is True else memory
    # The analysis yields arbitrary reals; 1/8 cycle keeps exact simulated time cheap (few
    # distinct denominators) and is far below the accuracy of any of these figures.
    costs = {index: (_eighths(lam, minimum=Fraction(1, 8)), _eighths(Lam))
             for index, (lam, Lam) in memory_cost_overrides(report, profile, sm, passes, dram_waits, levels,
                                                                     copies).items()}

    def cost(index: int, instr: Any, cls: Any, base: Any) -> tuple[float, float]:
        return costs.get(index, (base.lam, base.Lam))

    return cost


def _eighths(value: float, minimum: Fraction = Fraction(0)) -> Fraction:
    return max(minimum, Fraction(round(value * 8), 8))


def _resident_blocks(analysis: KernelAnalysis, profile: Any, launch: Any, module: Any,
                     notes: list[str]) -> int:
    """Blocks per SM from the occupancy rules, with the kernel's registers and shared memory."""
    from engine.occupancy import occupancy
    from engine.resources import kernel_resources

    regs = launch.regs_per_thread
    smem = launch.smem_dynamic
    if module is not None:
        # The PTX's own target, as engine.inputs counts them: one register count everywhere.
        res = kernel_resources(module, analysis.function.name)
        regs = regs or res.registers
        smem += res.static_shared_bytes
    if regs is None:
        regs = 32
        notes.append("registers per thread unknown: 32 assumed for the occupancy")
    return occupancy(profile, launch.threads_per_block, regs, smem).blocks_per_sm


def _find_function(module: Any, kernel_name: str | None) -> Any:
    from engine.names import find_kernel

    try:
        return find_kernel([f for f in module.functions if f.is_kernel] or list(module.functions), kernel_name,
                           getattr(module, "filename", ""))
    except ModelError:
        raise
    except WarplineError as exc:
        raise ModelError(str(exc)) from None


def describe_kernel(module: Any, kernel_name: str | None, profile: Any, launch: Any,
                    occupancy: int | None = None,
                    overrides: PipelineOverrides | None = None,
                    analysis: KernelAnalysis | None = None, memory: Any = True) -> KernelDescription:
    """Parse-free front end: analysis + :func:`build_description` for a kernel of ``module``.
    ``analysis``/``memory`` may come from the caller's cache (they depend on kernel and launch)."""
    if analysis is None:
        analysis = analyze_kernel(_find_function(module, kernel_name), launch, module)
    return build_description(analysis, profile, launch, overrides, resident_blocks=occupancy, module=module,
                             memory=memory)


def cost_table(d: KernelDescription) -> list[Mapping[str, object]]:
    """One row per static instruction: subsystem, λ, Λ, flags, producers (for the GUI table)."""
    return [{"index": i, "instruction": x.name, "subsystem": d.subsystems[x.unit], "lam": float(x.lam),
             "Lam": float(x.Lam), "memory": x.memory, "barrier": x.barrier, "deps": x.deps}
            for i, x in enumerate(d.instructions)]
