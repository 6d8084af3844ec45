"""Many-BSP*: source 000's superstep structure with the corrections a modern GPU needs.

Eqs. 10-25 of 000 go wrong on current GPUs for structural reasons (``docs/manybsp.md``, "Many-BSP*"):
communication is latency × warps × transactions with no bandwidth term, a scheduler's warps move
through each superstep in lock step, eq. 25 charges a block's exposed memory time once per wave
without overlap, the launch overhead is charged once per kernel, and μ is an undefined constant.
This model keeps what users edit (the BLOCK table, the supersteps and their iteration counts) and
replaces the combination:

* each level-2 superstep j gives the **busy cycles of each unit** (the dispatcher and every FU
  column: the ``b`` part of an ``a+b`` cell plus the first warp's own share) and **one warp's time
  through it** (the head latency ``a``, then its other rows issuing behind it);
* a memory row costs its **latency at the level it hits** (Λ of the memory-hierarchy model, or the
  user's ``lat_comm``) once per warp, and its pipeline's λ per warp request (cycles of that SM's
  share of the limiting level's bandwidth with every SM streaming);
* one warp runs a level-1 superstep in ``L_s``: its rows issued in ptxas's SASS order, each once
  its operands are there (an unrolled loop's copies where ptxas put them; without a SASS map, the
  rows' dataflow, or 000's superstep order ``Σ_j (one warp through j + Λ_j + ovh_j)``); the
  block's warps overlap each other inside it, so the block needs ``max(L_s, P_s, M_s, B_s)`` per
  iteration (P_s: the busiest unit summed over the supersteps, M_s: the busiest memory pipeline,
  B_s: the barrier unit);
* the ρ resident blocks overlap each other (they never synchronise): the SM is bound by the
  largest of its issue throughput, its memory and barrier pipelines, the latency of its blocks as a
  closed queueing network, and the block launch rate, each over the blocks it runs;
* launch overhead per block (000's block_lnch_ovh, measured as the serial rate at which an SM
  starts blocks) and per warp.

μ here is no constant: the **block-overlap factor** μ* = (blocks per SM × a block's time alone) /
the SM's time is what the combination yields, shown in the derivation (eq. 24 of 000 divides by
min{μ, (1+ρ)/2}; μ* is the figure that division stands for). Every intermediate is a
:class:`~engine.manybsp.equations.Quantity` with its formula, as in the published model.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from engine.errors import ModelError
from engine.frozen_rows import built
from engine.manybsp.equations import Prediction, Quantity
from engine.manybsp.rows import BlockRow, InstructionRow, ManyBspParams
from engine.manybsp.supersteps import Level1Superstep
from engine.mechanisms import enabled
from engine.sass.order import copy_positions


@dataclass(frozen=True)
class AccessCost:
    """What one memory row costs a warp in the memory hierarchy.

    ``lam``: SM cycles the SM's memory pipeline is busy per warp request (bytes at the level that
    limits it over that SM's share of the level's bandwidth). ``Lam``: cycles until the data is
    back (the latency of the slowest level the request needs). ``waits``: the warp waits for it
    (loads, atomics; a store releases the warp once the LSU has taken it)."""

    lam: float
    Lam: float
    waits: bool = True
    unit: str = "global"        # the SM pipeline it occupies (the Pipeline model's subsystem)
    is_global: bool = True      # False: shared/constant/local, which have a BLOCK cell of their own


@dataclass(frozen=True)
class CorrectedInputs:
    """What Many-BSP* adds to the Many-BSP result: the occupancy the SM really runs at (ρ from the
    occupancy calculator, not eq. 21), the memory-hierarchy cost of each memory row and the barrier
    unit's λ of each barrier row (by 1-based row index), the SASS weights and ptxas's unrolling."""

    resident_blocks: int
    access: dict[int, AccessCost] = field(default_factory=dict)
    barrier_lam: dict[int, float] = field(default_factory=dict)   # row -> SM cycles per warp
    # What the SASS does to each PTX row's issue and FU cycles (ptxas folds, merges, unrolls and
    # expands; ``engine.pipeline.adapter.issue_scales``): 0 = not executed, a fraction = shares a
    # SASS instruction, above 1 = an expansion the row's class-default cost does not hold.
    issue_weights: dict[int, float] = field(default_factory=dict)
    # ptxas's unroll factor of each loop, by its (first, last) row (1-based, inclusive): the copies
    # of an unrolled body issue together, so their latency chains overlap.
    unroll: dict[tuple[int, int], int] = field(default_factory=dict)
    # Where ptxas put each row's SASS copies (by row, in address order) and every row's producers,
    # loop-carried ones included (by row): one warp's path through an unrolled superstep follows
    # ptxas's order (mechanism ``sass_order``). Empty: the rows' dataflow, copies fully overlapped.
    sass_positions: dict[int, tuple[int, ...]] = field(default_factory=dict)
    deps: Sequence[Sequence[int]] = ()     # deps[row]: the rows it reads (deps[0] unused)
    # Per row, the share of the block's warp-passes that run it (``ManyBspResult.executed_share``,
    # from the sampled warps): the block's issue, memory and barrier work count a row that often.
    # One warp's latency path is a warp that runs the superstep: it is not scaled. Empty: 1.
    executed_share: dict[int, float] = field(default_factory=dict)


def _fmt(x: float) -> str:
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return f"{x:.4g}" if isinstance(x, float) else str(x)


def _busy_cycles(rows: list[BlockRow], weights: dict[int, float] | None = None
                 ) -> tuple[dict[int, float], float, int]:
    """(busy cycles per unit, head latency, rows with cells) of a level-2 superstep for the block's
    w warps of one scheduler. Units: 0 the dispatcher (Σ issue), 1-4 the FU columns' warp occupancy
    (a full ``a+b`` cell counts ``b``, the other warps, plus the first warp's own
    ``warp_size/T``); eq. 9 adds the head's issue on top, which on GPUs that dispatch a warp per
    cycle counts an SFU/LDST warp's occupancy twice. Head latency: the largest ``a``."""
    if not rows:
        return {}, 0.0, 0
    # 000 charges a DPU/SFU/LDST row w × warp_size/T issue cycles (older GPUs dispatched such a
    # warp over several cycles); a GPU that dispatches a warp per cycle spends w, and the unit's
    # occupancy is its FU column's. Dividing by warp_size/T keeps an edited issue cell in effect.
    # One pass over the rows (a large kernel has 10^5 supersteps of a row or two): each row's
    # weighted issue term is kept and summed at the end, so the sum adds them as before.
    weights = weights or {}
    issue_terms: list[float] = []
    columns: dict[int, float] = {}
    latency = 0.0
    counted = 0
    for r in rows:
        share = r.warp_over_T or 0.0
        k = max(0.0, weights.get(r.index, 1.0))
        issue_terms.append(k * (r.issue_value / share if r.fu and 1 not in r.fu and share > 1
                                else r.issue_value))
        counted += bool(r.fu) and k > 0
        for column, cell in r.fu.items():
            occupied = cell.occupancy + (min(share, cell.latency) if cell.is_full else 0.0)
            columns[column] = columns.get(column, 0.0) + k * occupied
            if k > 0 and cell.latency > latency:
                latency = cell.latency
    columns[0] = sum(issue_terms)     # column 0: the dispatcher
    return columns, latency, counted


def _own_latency(b: BlockRow) -> float:
    """The latency ``a`` a BLOCK row's FU cells expose (the largest; 0 without a cell)."""
    return max([cell.latency for cell in b.fu.values()], default=0.0)


@dataclass(frozen=True)
class Level2Costs:
    """One level-2 superstep as Many-BSP* reads it (per pass, one block)."""

    busy: dict[int, float]  # cycles per column (0 = dispatch) for the w warps
    one_warp: float  # one warp alone: head latency + the superstep's other rows
    mem_lat: float   # latency of the slowest waited-for global access
    mem_busy: dict[str, float]  # memory-pipeline cycles per warp, per pipeline (Σ λ of its accesses)
    ovh: float
    barrier_busy: float = 0.0  # the SM's barrier unit, cycles per warp (Σ λ of its barriers)
    global_busy: float = 0.0   # the part of mem_busy that global accesses take (L1/L2/DRAM)


def level2_costs(inside: list[BlockRow], ovh: float, rows_by_index: dict[int, InstructionRow],
                 access: dict[int, AccessCost], w: int, barrier_lam: dict[int, float] | None = None,
                 weights: dict[int, float] | None = None, share: dict[int, float] | None = None) -> Level2Costs:
    """The costs of the level-2 superstep made of the BLOCK rows ``inside`` (overhead ``ovh``);
    ``share``: per row, the share of the warps' passes that run it (absent: 1), on its issue,
    memory and barrier cycles."""
    share = share or {}
    if share:
        weights = {b.index: (weights or {}).get(b.index, 1.0) * share.get(b.index, 1.0) for b in inside}
    busy, head, k = _busy_cycles(inside, weights)
    thr = max(busy.values(), default=0.0)
    mem_lat = global_busy = 0.0
    mem_busy: dict[str, float] = {}
    lam = barrier_lam or {}
    barrier_busy = sum([lam.get(b.index, 0.0) * share.get(b.index, 1.0) for b in inside])
    for b in inside:
        row = rows_by_index.get(b.index)
        if row is None:
            continue
        cost = access.get(b.index)
        if cost is None and row.is_global_access:
            # No hierarchy figure (an access the analysis could not place): 000's own charge,
            # comm = lat_comm × w × n_ma, read back as one warp's latency.
            cost = AccessCost(0.0, b.comm / max(1, w * max(1, row.n_ma)) if b.comm else row.lat_comm)
        if cost is None:
            continue
        ran = cost.lam * share.get(b.index, 1.0)
        mem_busy[cost.unit] = mem_busy.get(cost.unit, 0.0) + ran
        global_busy += ran if cost.is_global else 0.0
        if cost.waits:
            # A shared/constant row's BLOCK cell already charges its table latency as the head
            # of its superstep; the memory model adds what conflicts or serialisation cost beyond.
            own = 0.0 if cost.is_global else _own_latency(b)
            mem_lat = max(mem_lat, cost.Lam - own)
    # One warp: the head's latency, then the other rows of the superstep issue behind it.
    one_warp = max(head + thr / w * (1 - 1 / k), thr / w) if k else thr / w
    return built(Level2Costs, busy=busy, one_warp=one_warp, mem_lat=mem_lat, mem_busy=mem_busy, ovh=ovh,
                 barrier_busy=barrier_busy, global_busy=global_busy)


def _latency_path(slices: list[list[BlockRow]], costs: list[Level2Costs],
                  rows_by_index: dict[int, InstructionRow],
                  memory_rows: set[int] | frozenset[int] = frozenset(), hoist: bool = False,
                  w: int = 1) -> float:
    """One warp's time through a level-1 superstep's level-2 supersteps. A superstep issues once
    the one before it has issued and the loads its own rows read have arrived; its own loads then
    take Λ_j. A load no later row of the pass reads (a value the next pass uses, carried in a
    register) overlaps with what follows instead of adding its latency. ``memory_rows``: rows
    with a memory cost besides the global accesses (shared, constant).

    ``hoist``: the rows' own dependences instead (:func:`_dataflow_path`; ``w``: the scheduler's
    warps, whose busy cycles the supersteps' costs count)."""

    def is_load(index: int) -> bool:
        return _is_load(rows_by_index, memory_rows, index)

    if hoist:
        return _dataflow_path(slices, costs, rows_by_index, is_load, w)
    owner = {b.index: j for j, inside in enumerate(slices) for b in inside}
    issued = finish = 0.0
    arrived: list[float] = []
    for j, (inside, c) in enumerate(zip(slices, costs, strict=True)):
        start = issued
        for b in inside:
            row = rows_by_index.get(b.index)
            for p in row.producers if row is not None else ():
                k = owner.get(p)
                if k is not None and k < j and is_load(p):
                    start = max(start, arrived[k])
        issued = start + c.one_warp + c.ovh
        arrived.append(issued + c.mem_lat)
        finish = max(finish, arrived[-1])
    return finish


def _dataflow_path(slices: list[list[BlockRow]], costs: list[Level2Costs],
                   rows_by_index: dict[int, InstructionRow], is_load: Callable[[int], bool], w: int) -> float:
    """One warp's path as ptxas's schedule lets it run: each row goes once the warp has issued
    the rows before it (its superstep's issue cycles for one warp, spread over its rows, and the
    superstep's overhead) and once the rows it reads have their results (a load's Λ_j after it
    went, an arithmetic row's FU latency). The PTX order puts the load of a stencil's next
    neighbour behind the add that waits for the previous one; ptxas moves every load up to where
    its address is known, and the latencies of loads that need nothing from each other overlap.
    The latest result is the path."""
    clock = finish = 0.0
    ready: dict[int, float] = {}
    for inside, c in zip(slices, costs, strict=True):
        issue = (max(c.busy.values(), default=0.0) / max(1, w) + c.ovh) / max(1, len(inside))
        for b in inside:
            row = rows_by_index.get(b.index)
            clock += issue
            t = clock
            for p in row.producers if row is not None else ():
                t = max(t, ready.get(p, 0.0))
            own = _own_latency(b)
            ready[b.index] = t + own + (c.mem_lat if is_load(b.index) else 0.0)
            finish = max(finish, ready[b.index], clock)
    return finish


# What M*1's figure is, as the derivation tab names it: in ptxas's SASS order (``sass_order``),
# by the rows' dataflow (``manybsp_dataflow`` without a SASS map) or in 000's superstep order.
_PATH_RULES = {
    "sass": "one warp's path in ptxas's SASS order: each row issues in turn once its operands are there "
            "(a load's Λ after it went, an FU row's latency after it); unrolled copies where ptxas put them",
    "dataflow": "one warp's path through its rows' dependences: a row goes once the rows before it have issued "
                "and its operands are there (a load's Λ after it went, an FU row's latency after it)",
    "supersteps": "one warp's path: superstep j starts when j − 1 has issued and the loads its rows read have "
                  "arrived; it ends Λ_j after its own issue (+ ovh_j)",
}


def _sass_path(slices: list[list[BlockRow]], costs: list[Level2Costs], is_load: Callable[[int], bool],
               w: int, u: int, inputs: CorrectedInputs) -> float | None:
    """One warp's time through one pass of a level-1 superstep that ptxas unrolled ``u`` times
    (u = 1: not unrolled), its u copies issued in the order of the SASS: in order, each row once
    the rows before it have issued and its operands are there (a load's Λ_j after it went, an
    arithmetic row's FU latency after it). A producer earlier in the body is the same copy's, one
    later in the body (carried over the back edge) the previous copy's. Where ptxas uses a
    load's value before it issues the next copies' loads, the warp waits for it there, so the
    latencies of the u copies do not all overlap. None when the SASS does not place the copies."""
    one = [b.index for inside in slices for b in inside]
    if not one or not inputs.sass_positions:
        return None
    # rows ptxas wrote no instruction for (issue weight 0: a multiply fused into its consumer's
    # FFMA, a move renamed away) issue nothing: the warp does not stop at them for their operands,
    # and their value is there as soon as those are (the consumer pays the latency). A row the map
    # could not place but that issues (a texture fetch) keeps its place after the row before it.
    fused = {r for r in one if inputs.issue_weights.get(r, 1.0) <= 0}
    issue: dict[int, float] = {}
    latency: dict[int, float] = {}
    for inside, c in zip(slices, costs, strict=True):
        per_row = (max(c.busy.values(), default=0.0) / max(1, w) + c.ovh) / max(1, len(inside))
        for b in inside:
            issue[b.index] = per_row
            own = _own_latency(b)
            latency[b.index] = own + (c.mem_lat if is_load(b.index) else 0.0)
    copies = [(c, r) for c in range(u) for r in one]
    where = copy_positions(copies, inputs.sass_positions, inputs.deps)
    if where is None or all(x is None for x in where):
        return None
    # a row without a placed copy goes right after the row written before it (a fused one too,
    # though it issues nothing: ``fused`` above)
    keys: list[float] = []
    last = -1.0
    for x in where:
        last = last + 1e-3 if x is None else x
        keys.append(last)
    # copy c of the row in slot s is copies[c × n + s]
    n = len(one)
    slot = {r: k for k, r in enumerate(one)}
    deps = inputs.deps
    preds: list[list[int]] = []
    for c, r in copies:
        mine = []
        here = slot[r]
        for p in (deps[r] if r < len(deps) else ()):
            s = slot.get(p)
            if s is None:
                continue                          # defined before the superstep
            if s < here:
                mine.append(c * n + s)
            elif c > 0:
                mine.append((c - 1) * n + s)      # carried: the previous copy's
        preds.append(mine)
    # ptxas's order, never a row before the rows it reads
    waiting = [len(p) for p in preds]
    users: list[list[int]] = [[] for _ in copies]
    for k, mine in enumerate(preds):
        for p in mine:
            users[p].append(k)
    free = [(keys[k], k) for k in range(len(copies)) if waiting[k] == 0]
    heapq.heapify(free)
    clock = finish = 0.0
    ready = [0.0] * len(copies)
    while free:
        _, k = heapq.heappop(free)
        r = copies[k][1]
        start = clock
        for p in preds[k]:
            if ready[p] > start:
                start = ready[p]
        if r in fused:
            ready[k] = start
            clock += issue[r]
        else:
            ready[k] = start + latency[r]
            clock = start + issue[r]
        finish = max(finish, ready[k], clock)
        for v in users[k]:
            waiting[v] -= 1
            if waiting[v] == 0:
                heapq.heappush(free, (keys[v], v))
    return finish


def _is_load(rows_by_index: dict[int, InstructionRow], memory_rows: set[int] | frozenset[int], index: int) -> bool:
    """Whether a row's result comes from memory: a global access, or a row with a memory cost of
    its own (shared, constant)."""
    row = rows_by_index.get(index)
    return index in memory_rows or (row is not None and row.is_global_access)


def _unroll_of(step: Level1Superstep, unroll: dict[tuple[int, int], int]) -> int:
    """ptxas's unroll factor of the innermost unrolled loop holding the level-1 superstep (1 when
    none, or when the superstep runs fewer iterations than one unrolled pass)."""
    best, span = 1, None
    for (first, last), u in unroll.items():
        if first <= step.start and step.end <= last and (span is None or last - first < span):
            best, span = u, last - first
    return best if step.iterations >= best else 1


def _closed_network_bound(blocks: int, rho: int, alone: float, memory: float) -> tuple[float, str]:
    """The ρ resident blocks as the customers of a closed queueing network (exact mean-value
    analysis): each block spends ``alone`` cycles of its own (its time apart from its
    global-memory demand, plus a launch interval) and queues ``memory`` cycles at the SM's
    global-memory path, which serves one block at a time.
    With n blocks, a block's memory residence is memory × (1 + blocks queued at n − 1); the SM
    finishes X(ρ) = ρ / (alone + residence) blocks per cycle."""
    queued = throughput = 0.0
    for n in range(1, rho + 1):
        residence = memory * (1 + queued)
        throughput = n / (alone + residence)
        queued = throughput * residence
    if throughput <= 0:
        return 0.0, "no time"
    return blocks / throughput, (f"{blocks} blocks / X({rho}), X by mean-value analysis of {rho} blocks "
                                 f"each {_fmt(alone)} of its own (block_own + a launch interval) + queueing "
                                 f"for {_fmt(memory)} of global memory")


def evaluate_corrected(params: ManyBspParams, level1: list[Level1Superstep], block: list[BlockRow],
                       rows: list[InstructionRow], inputs: CorrectedInputs) -> Prediction:
    """Many-BSP* cycles of one SM for its share of the grid, every intermediate with its formula."""
    if not level1:
        raise ModelError("Many-BSP*: no level-1 supersteps (the kernel has no instructions)")
    if params.n_b <= 0 or params.n_t <= 0 or params.n_SM <= 0 or params.n_ws <= 0:
        raise ModelError(f"Many-BSP*: empty launch or device (n_b={params.n_b}, n_t={params.n_t})")
    if inputs.resident_blocks <= 0:
        raise ModelError("Many-BSP*: no block fits on an SM (0 resident blocks)")
    pred = Prediction(branch="Many-BSP*")
    put = _putter(pred.quantities)
    warps_per_block = max(1, -(-params.n_t // params.warp_size))
    rows_by_index = {r.index: r for r in rows}
    # A level-2 superstep is a run of consecutive BLOCK rows: sliced by position, not searched.
    position = {b.index: k for k, b in enumerate(block)}
    # The rows with a memory cost, and those whose result comes from memory (:func:`_is_load`),
    # found once for all the level-1 supersteps, not once per superstep.
    memory_rows = frozenset(inputs.access)
    loads = memory_rows | {index for index, r in rows_by_index.items() if r.is_global_access}
    sums = _BlockSums()
    for step in level1:
        slices = [block[position[s.start]:position[s.end] + 1] for s in step.children]
        _add_superstep(sums, step, slices, rows_by_index, memory_rows, loads, inputs, params.w,
                       warps_per_block, put)
    slowest = any(step.slowest is not None for step in level1)
    return _kernel_time(pred, put, params, inputs, sums, warps_per_block, slowest)


_Put = Callable[[str, float, str, str], float]


def _putter(q: dict[str, Quantity]) -> _Put:
    """``put(name, value, eq, formula)``: records a quantity (refusing one that is no time) and
    returns its value."""
    def put(name: str, value: float, eq: str, formula: str) -> float:
        if not math.isfinite(value) or value < 0:
            raise ModelError(f"Many-BSP*: {name} = {value!r} ({formula}) is not a time")
        q[name] = Quantity(name, value, value, eq, f"{formula} = {_fmt(value)}")
        return value

    return put


@dataclass
class _BlockSums:
    """One block's costs summed over the level-1 supersteps, each × its iterations."""

    chain: float = 0.0
    busy: float = 0.0
    bar: float = 0.0
    memory_pipes: dict[str, float] = field(default_factory=dict)
    global_demand: float = 0.0   # what a block asks of the L1/L2/DRAM path: the queue of the latency bound
    block_alone: float = 0.0
    block_own: float = 0.0       # a block's time less its global-memory demand: the network's delay
    slow_own: float = 0.0        # the same at the slowest warp's iterations
    slow_demand: float = 0.0


def _add_superstep(sums: _BlockSums, step: Level1Superstep, slices: list[list[BlockRow]],
                   rows_by_index: dict[int, InstructionRow], memory_rows: frozenset[int], loads: frozenset[int],
                   inputs: CorrectedInputs, w: int, warps_per_block: int, put: _Put) -> None:
    """Level-1 superstep ``step`` (its level-2 supersteps' BLOCK rows in ``slices``): its latency
    path L, issue P, memory M and barrier B per pass (M*1..M*3), added to ``sums``. ``memory_rows``:
    the rows with a memory cost (``inputs.access``); ``loads``: the rows whose result comes from
    memory."""
    costs = [level2_costs(inside, s.ovh, rows_by_index, inputs.access, w, inputs.barrier_lam,
                          inputs.issue_weights) for inside, s in zip(slices, step.children, strict=True)]
    # the block's work: each row as often as the warps ran it (the path above: one warp that runs
    # it); a level-2 superstep every warp runs whole costs what it costs one warp
    share = inputs.executed_share
    work = [c if all(share.get(b.index, 1.0) == 1.0 for b in inside) else
            level2_costs(inside, s.ovh, rows_by_index, inputs.access, w, inputs.barrier_lam, inputs.issue_weights,
                         share) for c, inside, s in zip(costs, slices, step.children, strict=True)]
    # The warps of a block do not wait for each other inside a level-1 superstep (it ends at
    # barriers), so each unit's busy time adds up over its level-2 supersteps and the busiest
    # unit bounds the pass: Σ_j per unit, then the max (not Σ_j of each superstep's max).
    units: dict[int, float] = {}
    for c in work:
        for column, cycles in c.busy.items():
            units[column] = units.get(column, 0.0) + cycles
    P = max(units.values(), default=0.0)
    u = _unroll_of(step, inputs.unroll)
    hoist = enabled("manybsp_dataflow")
    in_order = _sass_path(slices, costs, loads.__contains__, w, u, inputs) if hoist else None
    if in_order is not None:
        rule = "sass"
        L = max(in_order / u, P / w)
    else:
        rule = "dataflow" if hoist else "supersteps"
        L = _latency_path(slices, costs, rows_by_index, memory_rows, hoist=hoist, w=w)
        if u > 1:
            # u copies of the body in flight: one warp's chain per iteration is 1/u of a pass,
            # never less than its own issue (P for w warps).
            L = max(L / u, P / w)
    pipes: dict[str, float] = {}
    for c in work:
        for unit, cycles in c.mem_busy.items():
            pipes[unit] = pipes.get(unit, 0.0) + warps_per_block * cycles
    M = max(pipes.values(), default=0.0)
    B = warps_per_block * sum(c.barrier_busy for c in work)
    t = step.iterations
    t_slow = t if step.slowest is None else put(
        f"slowest_t_{step.index}", float(step.slowest), "M*10",
        f"the slowest warp's iterations (per-thread trip counts; mean over warps {t})")
    put(f"L_{step.index}", L, "M*1", _PATH_RULES[rule] + (f", ÷ {u} unrolled copies" if u > 1 else ""))
    put(f"P_{step.index}", P, "M*2", "max over dispatch and FU columns of Σ_j busy cycles")
    put(f"M_{step.index}", M, "M*3", f"{warps_per_block} warps × Σ_j λ_j of the busiest memory pipeline")
    sums.chain += t * L
    sums.busy += t * P
    for unit, cycles in pipes.items():
        sums.memory_pipes[unit] = sums.memory_pipes.get(unit, 0.0) + t * cycles
    G = warps_per_block * sum(c.global_busy for c in work)
    sums.global_demand += t * G
    sums.bar += t * B
    sums.block_alone += t * max(L, P, M, B)
    # what the block spends apart from the global-memory path it queues for in M*8's network
    own = max(L, P, B, M - G)
    sums.block_own += t * own
    sums.slow_own += t_slow * own
    sums.slow_demand += t_slow * G


def _kernel_time(pred: Prediction, put: _Put, params: ManyBspParams, inputs: CorrectedInputs,
                 sums: _BlockSums, warps_per_block: int, slowest: bool) -> Prediction:
    """From one block's sums to the SM's time (M*4..M*9): the bounds of the SM's blocks, the
    largest of which (plus a block launch) is the kernel's time and names the branch."""
    w = params.w
    chain, busy, bar, memory_pipes = sums.chain, sums.busy, sums.bar, sums.memory_pipes
    global_demand, block_alone, block_own = sums.global_demand, sums.block_alone, sums.block_own
    slow_own, slow_demand = sums.slow_own, sums.slow_demand
    put("chain", chain, "M*1", "Σ_s iterations_s × L_s: one warp's latency path through the kernel")
    wl = w * params.warp_lnch_ovh
    t_b = put("block_alone", wl + block_alone, "M*4",
              f"w × warp_lnch_ovh + Σ_s iterations_s × max(L_s, P_s, M_s, barrier) = {_fmt(wl)} + "
              f"{_fmt(block_alone)}")
    t_own = put("block_own", wl + block_own, "M*4",
                f"w × warp_lnch_ovh + Σ_s iterations_s × max(L_s, P_s, barrier, M_s less its global part) = "
                f"{_fmt(wl)} + {_fmt(block_own)}: a block's time apart from its global-memory demand")
    # A block's issue work on the SM: P is per scheduler for w warps of the block; the block
    # occupies warps_per_block of the SM's w × n_ws warp slots.
    x_b = put("issue_per_block", busy * warps_per_block / (w * params.n_ws), "M*5",
              f"Σ_s iterations_s × P_s × {warps_per_block} / ({w} × {params.n_ws})")
    busiest = max(memory_pipes, key=memory_pipes.__getitem__, default="")
    m_b = put("memory_per_block", memory_pipes.get(busiest, 0.0), "M*6",
              f"Σ_s iterations_s × M_s of the busiest memory pipeline ({busiest or 'none'})")
    b_b = put("barrier_per_block", bar, "M*6",
              f"Σ_s iterations_s × {warps_per_block} warps × Σ λ of the superstep's barriers")
    blocks = math.ceil(params.n_b / params.n_SM)
    put("blocks_per_sm", float(blocks), "M*7", f"⌈{params.n_b} / {params.n_SM}⌉")
    rho = min(inputs.resident_blocks, blocks)
    put("rho", float(rho), "M*7", f"min(resident blocks {inputs.resident_blocks}, {blocks})")
    waves = math.ceil(blocks / rho)
    put("waves", float(waves), "M*7", f"⌈{blocks} / {rho}⌉")
    blo = params.block_lnch_ovh
    terms = {
        "issue_bound": (blocks * x_b, f"{blocks} × {_fmt(x_b)}"),
        "memory_bound": (blocks * m_b, f"{blocks} × {_fmt(m_b)}"),
        "barrier_bound": (blocks * b_b, f"{blocks} × {_fmt(b_b)}"),
        "latency_bound": _closed_network_bound(blocks, rho, t_own + blo, global_demand),
        "launch_bound": (blocks * blo, f"{blocks} × {_fmt(blo)}"),
    }
    if slowest:
        # Any block's own time bounds the kernel: where trip counts differ per thread, the block
        # of the slowest warp alone (with its memory queue) is the floor; one block per SM, the time.
        t_s = put("slowest_block_own", wl + slow_own, "M*10",
                  f"block_own at the slowest warp's iterations: w × warp_lnch_ovh + Σ_s slowest_t_s × "
                  f"max(L_s, P_s, barrier, M_s less its global part) = {_fmt(wl)} + {_fmt(slow_own)}")
        terms["slowest_block_bound"] = (t_s + blo + slow_demand,
                                        f"the block alone in M*8's network: {_fmt(t_s)} of its own + {_fmt(blo)} "
                                        f"launch + {_fmt(slow_demand)} of global memory")
    for name, (value, formula) in terms.items():
        put(name, value, "M*8", formula)
    limiter = max(terms, key=lambda k: terms[k][0])
    sm = max(v for v, _ in terms.values())
    names = ", ".join(k.removesuffix("_bound") for k in terms)
    total = put("kernel_exec_cycle", blo + sm, "M*8",
                f"block_lnch_ovh + max({names}) = {_fmt(blo)} + {_fmt(sm)} ({limiter})")
    put("mu_star", blocks * t_b / max(sm, 1e-9), "M*9",
        f"{blocks} × {_fmt(t_b)} / {_fmt(sm)}: blocks whose time alone overlaps on the SM")
    pred.branch = limiter.replace("_", " ")
    if total <= 0:
        raise ModelError("Many-BSP*: the kernel costs no cycles (see the derivation)")
    return pred
