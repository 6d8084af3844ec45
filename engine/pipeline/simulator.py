"""Pipeline-model simulation of one SM running its share of a grid (001 section 3.2).

``simulate(description, policy="lrr", trace=True)`` encodes the description into flat int64
arrays, runs the compiled core and wraps the outcome in a :class:`SimulationResult`.

Every run is bounded (:class:`Limits`), before it starts and while it runs:

* before: the warp instructions it would issue are counted exactly (Python integers, no
  overflow) against ``max_warp_instructions``. Over it, when whole waves of resident blocks fit
  the budget, only those waves are simulated and the cycles scaled to the SM's share of the grid
  (along the line through two samples of whole waves, which drops the first wave's ramp;
  ``SimulationResult.sampled_blocks`` and ``note`` say so); when not even one wave fits, the run
  is refused with a :class:`SimulationError`.
* while: the core reads a cancel flag every few thousand events. The caller's thread waits for
  it in short slices and raises the flag when ``stop()`` says so (a newer edit in the window),
  when ``time_budget_s`` is spent, or on Ctrl+C (KeyboardInterrupt reaches the main thread only
  because the core runs in a helper thread): the run then ends within milliseconds.

:func:`limits` sets the bounds for every simulation that the current thread runs inside it
(the evaluation core wraps a whole evaluation, so the models and the sweep obey them too).
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np

from engine.errors import SimulationError
from engine.pipeline import _core
from engine.pipeline.description import KernelDescription, Loop, PathNode, Run
from engine.pipeline.trace import ISSUE_DTYPE, STALL_CAUSES, STALL_DTYPE, Aggregates, Trace

POLICIES = {"lrr": 0, "gto": 1}

# Issue rows kept at most (≈ 32 bytes each before conversion); beyond it the run continues
# untraced and the trace says it was truncated, so memory stays bounded.
DEFAULT_TRACE_LIMIT = 5_000_000

# Warp instructions one simulation may issue: about 3 s untraced and 8 s traced on a loaded
# 2-core machine (bench figures: 6.5 and 2.6 million per second).
DEFAULT_MAX_WARP_INSTRUCTIONS = 20_000_000
SAMPLE_FRACTION = 10
MIN_SAMPLE_WAVES = 16
# How often the waiting thread looks at stop() and the clock while the core runs.
_WAIT_SLICE_S = 0.01


class SimulationCancelled(Exception):
    """The run was stopped by its caller (``stop()``); not a user error: nothing to show.
    ``issued``: the warp instructions issued before it stopped."""

    def __init__(self, issued: int = 0) -> None:
        super().__init__(f"simulation cancelled after {issued:,} warp instructions")
        self.issued = issued


# issue slots are counted in quarters, so that merged instructions (4 PTX loads in one LDS.128)
# and expanded ones (2.12 SASS per PTX instruction on average) keep their share of the limit
SLOT_QUARTERS = 4

@dataclass(frozen=True)
class Limits:
    """The bounds of every simulation run inside :func:`limits` (None: unbounded)."""

    max_warp_instructions: int | None = DEFAULT_MAX_WARP_INSTRUCTIONS
    time_budget_s: float | None = None
    stop: Callable[[], bool] | None = None


_LOCAL = threading.local()


def current_limits() -> Limits:
    return getattr(_LOCAL, "limits", None) or Limits()


@contextmanager
def limits(bounds: Limits) -> Iterator[Limits]:
    """Apply ``bounds`` to the simulations this thread runs inside the block."""
    previous = getattr(_LOCAL, "limits", None)
    _LOCAL.limits = bounds
    try:
        yield bounds
    finally:
        _LOCAL.limits = previous


def path_instructions(d: KernelDescription) -> list[int]:
    """Instructions one warp of each path issues, as exact Python integers: a trip count of 10^18
    would wrap the int64 counts of ``dynamic_counts``."""
    def walk(nodes: Sequence[PathNode]) -> int:
        total = 0
        for node in nodes:
            if isinstance(node, Run):
                total += len(node.instructions)
            elif isinstance(node, Loop):
                total += int(node.count) * walk(node.body)
        return total

    return [walk(nodes) for nodes in d.paths]


def warp_instructions(d: KernelDescription, blocks: int | None = None) -> int:
    """Warp instructions ``blocks`` blocks (default: the SM's share) issue (exact)."""
    per_path = path_instructions(d)
    per_block = sum(per_path[p] * w for p, w in d.block_composition())
    return int(round(per_block * (d.blocks if blocks is None else blocks)))


def _plan(d: KernelDescription, budget: int | None) -> tuple[int, str]:
    """The blocks to simulate (all of them, or whole waves that fit ``budget``) and the note."""
    total = warp_instructions(d)
    if budget is None or total <= budget:
        return d.blocks, ""
    wave = max(1, min(d.resident_blocks, d.blocks))
    per_wave = warp_instructions(d, wave)
    if per_wave > budget:
        raise SimulationError(
            f"bounded: the simulation would issue {total:,} warp instructions, over its budget of "
            f"{budget:,} (one wave of {wave} block(s): {per_wave:,}); lower the trip counts or the "
            "arguments that set them, or raise the budget (--max-warp-instructions)")
    # A sample needs far fewer waves than the budget allows for a stable average, and several
    # models simulate the same kernel: a tenth of the budget keeps their sum well inside it.
    # Yet blocks drift out of step only over the first waves: at least MIN_SAMPLE_WAVES where the
    # budget allows, so that the extrapolated slope is the steady state's.
    sample = max(per_wave, budget // SAMPLE_FRACTION, min(MIN_SAMPLE_WAVES * per_wave, budget))
    blocks = min(d.blocks, (sample // per_wave) * wave)
    return blocks, (f"bounded: {blocks:,} of the SM's {d.blocks:,} blocks simulated ({total:,} warp "
                    f"instructions exceed the budget of {budget:,}); cycles extrapolated from whole waves")


@dataclass
class SimulationResult:
    """Outcome of one simulation. ``cycles`` is exact; ``trace`` is None in trace-free mode."""

    cycles: Fraction
    instructions_issued: int
    warps_completed: int
    warps_per_cycle: float
    stopped_early: bool
    occupancy_warps: int
    policy: str
    aggregates: Aggregates
    trace: Trace | None
    ticks_per_cycle: int
    scheduler_rounds: int = 0    # scheduling rounds the core ran (a cost figure for benchmarks)
    description: KernelDescription | None = None  # set by the PTX front end (names, costs)
    sampled_blocks: int = 0      # >0: only this many blocks were simulated, cycles scaled (see note)
    note: str = ""               # what bounded the run, in words ('' when it ran whole)

    @property
    def ipc(self) -> float:
        return self.instructions_issued / float(self.cycles) if self.cycles else 0.0


@dataclass
class _Program:
    kind: np.ndarray
    a: np.ndarray
    b: np.ndarray
    pool: np.ndarray
    path_start: np.ndarray
    max_depth: int
    # per pool position the completion slot it writes (its instruction's, or a renamed copy's)
    # and the slots it waits for (None: its instruction's static deps); renamed slot -> instruction
    pool_slot: np.ndarray
    pool_reads: list[tuple[int, ...] | None]
    slot_instruction: dict[int, int]


def _encode_paths(paths: tuple[tuple[PathNode, ...], ...]) -> _Program:
    """Flatten the path trees into items RUN(start, len) / LOOP_BEGIN(count, end) / LOOP_END(begin)."""
    kind: list[int] = []
    a: list[int] = []
    b: list[int] = []
    pool: list[int] = []
    pool_slot: list[int] = []
    pool_reads: list[tuple[int, ...] | None] = []
    slot_instruction: dict[int, int] = {}
    starts: list[int] = []
    depth_seen = [0]

    def emit(nodes: tuple[PathNode, ...], depth: int) -> None:
        depth_seen[0] = max(depth_seen[0], depth)
        for node in nodes:
            if isinstance(node, Run):
                if not node.instructions:
                    continue
                kind.append(_core.RUN)
                a.append(len(pool))
                b.append(len(node.instructions))
                pool.extend(node.instructions)
                if node.renamed is None:
                    pool_slot.extend(node.instructions)
                    pool_reads.extend([None] * len(node.instructions))
                else:
                    for i, (write, reads) in zip(node.instructions, node.renamed, strict=True):
                        pool_slot.append(write)
                        pool_reads.append(reads)
                        slot_instruction[write] = i
            elif isinstance(node, Loop):
                begin = len(kind)
                kind.append(_core.LOOP_BEGIN)
                a.append(node.count)
                b.append(-1)
                emit(node.body, depth + 1)
                kind.append(_core.LOOP_END)
                a.append(begin)
                b.append(0)
                b[begin] = len(kind) - 1

    for nodes in paths:
        starts.append(len(kind))
        emit(nodes, 0)
        kind.append(_core.HALT)
        a.append(0)
        b.append(0)
    as_i64 = lambda xs: np.asarray(xs if xs else [0], dtype=np.int64)  # noqa: E731
    return _Program(as_i64(kind), as_i64(a), as_i64(b), as_i64(pool), as_i64(starts), depth_seen[0],
                    as_i64(pool_slot), pool_reads, slot_instruction)


_STATIC_CACHE: dict[tuple, tuple] = {}
_INSTRUCTION_CACHE: dict[tuple, tuple] = {}
_STATIC_CACHE_SIZE = 8


def _cached(cache: dict[tuple, tuple], key: tuple, owners: tuple, make: Callable[[], Any]) -> Any:
    """``make()``, kept in ``cache`` under ``key`` while the ``owners`` (tuples whose ids the key
    holds) are the same objects; never kept for lists, which could change after a run."""
    hit = cache.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], owners, strict=True)):
        return hit[1]
    value = make()
    if all(isinstance(o, tuple) for o in owners):
        if len(cache) >= _STATIC_CACHE_SIZE:
            cache.pop(next(iter(cache)))
        cache[key] = (owners, value)
    return value


def _instruction_arrays(instructions: Any, ticks: int) -> tuple:
    """Per static instruction: unit, λ and Λ in ticks, memory, barrier, issue slots, and the
    dependences as a flat list with offsets."""
    def tk(x: Fraction) -> int:
        return x.numerator * ticks // x.denominator

    n = len(instructions)
    unit = np.array([ins.unit for ins in instructions], dtype=np.int64)
    lam = np.array([tk(ins.lam) for ins in instructions], dtype=np.int64)
    Lam = np.array([tk(ins.Lam) for ins in instructions], dtype=np.int64)
    ismem = np.array([ins.memory for ins in instructions], dtype=np.int64)
    isbar = np.array([ins.barrier for ins in instructions], dtype=np.int64)
    # issue slots in quarters: a quarter at least (four loads merged into one LDS.128 share one)
    slots = np.array([max(1, round(float(ins.slots) * SLOT_QUARTERS)) for ins in instructions], dtype=np.int64)
    # the warp's hold after each issue (ptxas's stall counts), rounded to the nearest tick
    gap = np.array([round(float(ins.issue_gap) * ticks) for ins in instructions], dtype=np.int64)
    # the memory levels' busy time per execution, rounded to the nearest tick as the stall counts
    level_lam = np.array([round(float(x) * ticks) for ins in instructions for x in ins.level_lam], dtype=np.int64)
    copy_groups = (np.array([ins.async_op for ins in instructions], dtype=np.int64),
                   np.array([ins.async_n for ins in instructions], dtype=np.int64))
    dep_ptr = np.zeros(n + 1, dtype=np.int64)
    dep_list: list[int] = []
    for i, ins in enumerate(instructions):
        dep_list.extend(sorted(set(ins.deps)))
        dep_ptr[i + 1] = len(dep_list)
    return unit, lam, Lam, ismem, isbar, slots, gap, level_lam, copy_groups, dep_ptr, dep_list


def _static_arrays(d: KernelDescription, ticks: int) -> tuple:
    """The per-instruction arrays and the encoded paths of ``d`` (in ``ticks`` per cycle).

    An occupancy sweep simulates one description at many occupancies, and the peer models
    simulate copies of it with other paths: copies that share the instruction tuple
    (``with_changes``) reuse its arrays, and those that also share the paths their encoding;
    on a 2,500-instruction kernel that is most of the Python time of a simulation. The caches
    hold the tuples themselves, so an id in a key cannot be reused by another object while cached.
    """
    return _cached(_STATIC_CACHE, (id(d.instructions), id(d.paths), ticks), (d.instructions, d.paths),
                   lambda: _encoded(d, ticks))


def _encoded(d: KernelDescription, ticks: int) -> tuple:
    unit, lam, Lam, ismem, isbar, slots, gap, level_lam, copy_groups, dep_ptr, shared_deps = _cached(
        _INSTRUCTION_CACHE, (id(d.instructions), ticks), (d.instructions,),
        lambda: _instruction_arrays(d.instructions, ticks))
    dep_list = list(shared_deps)       # renamed positions append their own lists below
    prog = _encode_paths(d.paths)
    # per pool position the range of dep_src it waits on: its instruction's, or a renamed
    # position's own list appended after the static ones
    pool_dlo = dep_ptr[prog.pool].copy()
    pool_dhi = dep_ptr[prog.pool + 1].copy()
    for k, reads in enumerate(prog.pool_reads):
        if reads is not None:
            pool_dlo[k] = len(dep_list)
            dep_list.extend(sorted(set(reads)))
            pool_dhi[k] = len(dep_list)
    dep_src = np.asarray(dep_list if dep_list else [0], dtype=np.int64)
    # the stall cause of each dependence (its producer's kind), so the core looks up one array
    slot_memory = np.concatenate([ismem, np.zeros(d.extra_slots, dtype=np.int64)])
    for slot, i in prog.slot_instruction.items():
        slot_memory[slot] = ismem[i]
    dep_cause = np.where(slot_memory[dep_src] != 0, _core.MEMORY_DEPENDENCY,
                         _core.COMPUTE_DEPENDENCY).astype(np.int64)
    return unit, lam, Lam, isbar, slots, gap, level_lam, copy_groups, dep_src, dep_cause, pool_dlo, pool_dhi, prog


def simulate(description: KernelDescription, policy: str = "lrr", trace: bool = True,
             cycle_budget: float | None = None, trace_limit: int = DEFAULT_TRACE_LIMIT,
             bounds: Limits | None = None) -> SimulationResult:
    """Simulate ``description`` on one SM. ``cycle_budget``: stop there and say so. ``bounds``
    (default: :func:`current_limits`): the instruction budget, time budget and stop check."""
    full = description
    _check(full, policy)
    bounds = bounds or current_limits()
    simulated, note = _plan(full, bounds.max_warp_instructions)
    d = full.with_changes(blocks=simulated) if simulated != full.blocks else full
    d, grid_note = d.on_time_grid()
    note = "; ".join(n for n in (note, grid_note) if n)
    ticks = d.ticks_per_cycle()
    n = len(d.instructions)
    static = _static_arrays(d, ticks)
    n_done = n + d.extra_slots     # completion slots per warp
    budget = -1 if cycle_budget is None else int(Fraction(cycle_budget) * ticks)
    pipes = _pipes(d)
    params = _params(d, ticks, policy, trace, budget, static[-1].max_depth, n_done, pipes.total)
    issues, stalls, buffers = _trace_tables(d, trace, trace_limit)
    totals = _core.Totals(np.zeros(pipes.total, np.int64), np.zeros(_core.N_CAUSES, np.int64),
                          np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64),
                          np.zeros(_core.N_LEVELS, np.int64))
    out = np.zeros(_core.N_RUN, np.int64)
    if d.blocks > 0:
        _run_watched(bounds, (params, _kernel_arrays(d, static, pipes), buffers, totals,
                              _work_arrays(d, static[-1].max_depth, n_done, pipes.total), out), out)
    end, issued, n_tr, n_st, stopped, err, err_block, truncated, rounds = (int(x) for x in out[:_core.N_SUMMARY])
    if pipes.total != len(d.subsystems):
        # the trace names subsystems: a scheduler's copy is its subsystem's
        subsystem_of = np.repeat(np.arange(len(d.subsystems), dtype=np.int64), pipes.copies)
        issues["subsystem"][:n_tr] = subsystem_of[issues["subsystem"][:n_tr]]
    _raise_error(err, err_block)
    cycles = Fraction(end, ticks)
    if simulated != full.blocks:
        cycles = _extrapolate(full, simulated, cycles, policy, bounds)
        issued = int(issued * Fraction(full.blocks, simulated))
    total_cycles = float(cycles)
    result_trace: Trace | None = None
    if trace:
        result_trace = Trace(issues=issues[:n_tr], stalls=stalls[:n_st], truncated=bool(truncated))
    warps_total = full.blocks * d.warps_per_block
    # each warp's instructions walk its path: only needed for a run that stopped early
    completed = warps_total if not stopped else _completed_warps(
        totals.instr_count, d, [path_instructions(d)[d.path_of_warp(w)] for w in range(d.warps_per_block)])
    return SimulationResult(
        cycles=cycles,
        instructions_issued=issued,
        warps_completed=completed,
        warps_per_cycle=(completed / total_cycles) if total_cycles else 0.0,
        stopped_early=bool(stopped),
        occupancy_warps=d.occupancy_warps,
        policy=policy,
        aggregates=_aggregates(d, totals, ticks, total_cycles, pipes),
        trace=result_trace,
        ticks_per_cycle=ticks,
        scheduler_rounds=rounds,
        sampled_blocks=simulated if simulated != full.blocks else 0,
        note=note,
    )


def _check(d: KernelDescription, policy: str) -> None:
    """Refuse a malformed description, an unknown policy, and a path that issues nothing."""
    d.validate()
    if policy not in POLICIES:
        raise SimulationError(f"unknown scheduler policy {policy!r}; choose one of {sorted(POLICIES)}")
    for p, count in enumerate(path_instructions(d)):
        if count == 0:
            raise SimulationError(f"path {p} executes no instruction: every warp must issue at least one")


def _params(d: KernelDescription, ticks: int, policy: str, trace: bool, budget: int, max_depth: int,
            n_done: int, n_pipes: int) -> np.ndarray:
    """The core's parameter vector (``_core.P_*``), times in ``ticks`` per cycle."""
    def tk(x: Fraction) -> int:
        # exact: ticks is a multiple of every denominator (and no Fraction is built per value)
        return x.numerator * ticks // x.denominator

    params = np.zeros(_core.N_PARAMS, dtype=np.int64)
    params[_core.P_BLOCKS] = d.blocks
    params[_core.P_WPB] = d.warps_per_block
    params[_core.P_GAMMA] = d.resident_blocks
    params[_core.P_IL] = (d.issue_limit or 0) * SLOT_QUARTERS
    params[_core.P_TICKS] = ticks
    params[_core.P_GAP] = tk(d.warp_issue_interval)
    params[_core.P_BOVH] = tk(d.block_launch_overhead)
    params[_core.P_WOVH] = tk(d.warp_launch_overhead)
    params[_core.P_BINT] = tk(d.block_launch_interval)
    params[_core.P_NSCHED] = d.schedulers
    params[_core.P_POLICY] = POLICIES[policy]
    params[_core.P_BUDGET] = budget
    params[_core.P_RECORD] = 1 if trace else 0
    params[_core.P_NSUB] = n_pipes
    params[_core.P_MAXDEPTH] = max_depth
    params[_core.P_NDONE] = n_done
    return params


def _trace_tables(d: KernelDescription, trace: bool,
                  trace_limit: int) -> tuple[np.ndarray, np.ndarray, _core.TraceBuffers]:
    """The issue and stall tables and the core's view of them (it writes the rows straight into
    the structured tables' fields)."""
    if trace:
        total = warp_instructions(d)      # the simulated paths (counted_paths may differ)
        cap = max(2, min(total, trace_limit))
        stall_cap = 2 * cap + 2 * d.blocks * d.warps_per_block + 16
    else:
        # two rows, not one: numpy calls a one-row field view contiguous, which would make numba
        # compile a second version of the core for trace-free runs
        cap = stall_cap = 2
    issues = np.empty(cap, dtype=ISSUE_DTYPE)
    stalls = np.empty(stall_cap, dtype=STALL_DTYPE)
    fin_rows = np.zeros(d.blocks * d.warps_per_block if trace else 2, np.int64)
    buffers = _core.TraceBuffers(
        warp=issues["warp"], block=issues["block"], instr=issues["instr"], sub=issues["subsystem"],
        issue=issues["issue"], complete=issues["complete"], st_warp=stalls["warp"],
        st_start=stalls["start"], st_end=stalls["end"], st_cause=stalls["cause"], fin_rows=fin_rows)
    return issues, stalls, buffers


class _Pipes(NamedTuple):
    """The pipes the core keeps free ticks for: each subsystem once, or once per scheduler where
    each has its own (``KernelDescription.scheduler_subsystems``). Per subsystem its first pipe
    and its copies."""

    first: np.ndarray
    copies: np.ndarray

    @property
    def total(self) -> int:
        return int(self.copies.sum())


def _pipes(d: KernelDescription) -> _Pipes:
    n = len(d.subsystems)
    copies = np.ones(n, np.int64)
    if d.schedulers > 1:
        for u, name in enumerate(d.subsystems):
            if name in d.scheduler_subsystems:
                copies[u] = d.schedulers
    if int(copies.sum()) > _core.MAX_PIPES:
        copies[:] = 1     # the core's pipe masks are 64 bits: one pipe per subsystem then
    return _Pipes(np.cumsum(copies) - copies, copies)


def _kernel_arrays(d: KernelDescription, static: tuple, pipes: _Pipes) -> _core.KernelArrays:
    """The encoded kernel as the core reads it (per path position: the instruction's pipe and
    dependence range, see ``_core._advance``). An instruction on a scheduler's own pipe keeps it
    busy for ``schedulers`` x λ: λ is the SM-wide figure, the pipe a quarter of the SM's lanes."""
    unit, lam, Lam, isbar, slots, gap, level_lam, (async_op, async_n), dep_src, dep_cause, pool_dlo, pool_dhi, \
        prog = static
    split = pipes.copies[unit] > 1
    if split.any():
        lam = lam * pipes.copies[unit]
    return _core.KernelArrays(
        lam=lam, Lam=Lam, dep_cause=dep_cause, isbar=isbar, slots=slots, gap=gap, dep_src=dep_src,
        prog_kind=prog.kind, prog_a=prog.a, prog_b=prog.b, pool=prog.pool,
        pool_unit=pipes.first[unit[prog.pool]], pool_split=split[prog.pool].astype(np.int64),
        pool_dlo=pool_dlo, pool_dhi=pool_dhi, pool_slot=prog.pool_slot, path_start=prog.path_start,
        warp_path=d.warp_path_table(), level_lam=level_lam, async_op=async_op, async_n=async_n)


def _work_arrays(d: KernelDescription, max_depth: int, n_done: int, n_pipes: int) -> _core.WorkArrays:
    """The core's work memory; slot rows are padded to whole 64-bit mask words (the core scans
    them 64 at a time)."""
    gamma = max(1, min(d.resident_blocks, d.blocks))
    nslots = gamma * d.warps_per_block
    words = _core.words_for(nslots)
    return _core.WorkArrays(
        slots=np.zeros((_core.N_FIELDS, 64 * words), np.int64),
        stack=np.zeros((nslots, max_depth + 1), np.int64),
        done=np.zeros(nslots * n_done, np.int64),
        masks=np.zeros((5 + n_pipes) * words, np.int64),
        blocks=np.zeros((_core.N_BLOCK_FIELDS, gamma + 2), np.int64),
        units=np.zeros((1, n_pipes), np.int64), levels=np.zeros(_core.N_LEVELS, np.int64),
        groups=np.zeros(nslots * _core.N_GROUP_FIELDS, np.int64))


def _raise_error(err: int, err_block: int) -> None:
    """The core's error code as a :class:`SimulationError` (none for ERR_NONE)."""
    if err == _core.ERR_BARRIER_DEADLOCK:
        raise SimulationError(
            f"barrier deadlock in block {err_block}: some warps of the block wait at a barrier that "
            "the others never reach (they finished); every warp of a block must reach each barrier")
    if err == _core.ERR_STUCK:
        raise SimulationError("the simulation can make no progress (warps wait for an event that "
                              "never comes); check barriers and dependences")


def _aggregates(d: KernelDescription, totals: _core.Totals, ticks: int, total_cycles: float,
                pipes: _Pipes) -> Aggregates:
    """The core's totals in cycles: busy time and utilisation per subsystem (a subsystem each
    scheduler has a copy of: the copies' mean), stall time per cause, and per instruction the
    issues and the mean wait and queueing before issue."""
    n = len(d.instructions)
    count = totals.instr_count
    per_pipe = np.add.reduceat(totals.unit_busy, pipes.first) / pipes.copies
    busy = {name: per_pipe[u] / ticks for u, name in enumerate(d.subsystems)}
    return Aggregates(
        unit_busy_cycles=busy,
        utilisation={k: (v / total_cycles if total_cycles else 0.0) for k, v in busy.items()},
        stall_cycles={name: totals.cause_ticks[c] / ticks for c, name in enumerate(STALL_CAUSES)},
        issue_count=count,
        average_wait=np.divide(totals.instr_wait / ticks, count, out=np.zeros(n), where=count > 0),
        average_queue=np.divide(totals.instr_queue / ticks, count, out=np.zeros(n), where=count > 0),
    )


def _extrapolate(d: KernelDescription, simulated: int, cycles: Fraction, policy: str,
                 bounds: Limits) -> Fraction:
    """The SM's cycles for all of ``d.blocks`` from a run of the first ``simulated`` blocks.

    The first wave pays a ramp (empty pipelines, every block launched at once) that later waves
    do not, so scaling proportionally overstates a short sample. With two samples, at n1 and n2
    blocks (whole waves), the line through them drops the ramp: cycles(N) = c2 + (N - n2) * slope.
    One wave only: proportional."""
    wave = max(1, min(d.resident_blocks, d.blocks))
    n1 = (simulated // wave // 2) * wave
    if n1 >= wave:
        c1 = simulate(d.with_changes(blocks=n1), policy=policy, trace=False,
                      bounds=Limits(None, bounds.time_budget_s, bounds.stop)).cycles
        slope = (cycles - c1) / (simulated - n1)
        if slope > 0:
            return cycles + (d.blocks - simulated) * slope
    return cycles * Fraction(d.blocks, simulated)


def _name_os_thread(name: bytes) -> None:
    """Name the OS thread (Linux: shown by top -H and /proc/PID/task/TID/comm), best effort."""
    try:
        libc = ctypes.CDLL(None)
        libc.prctl(15, ctypes.c_char_p(name[:15]), 0, 0, 0)   # 15: PR_SET_NAME
    except (OSError, AttributeError):
        pass


def _run_watched(bounds: Limits, arguments: tuple, out: np.ndarray) -> None:
    """Run the core in a helper thread and wait for it in short slices, raising its cancel flag
    on ``bounds.stop()``, on the time budget or on Ctrl+C (a signal handler only runs in the
    main thread between Python steps, never while that thread is inside compiled code)."""
    cancel = np.zeros(1, dtype=np.int64)
    failure: list[BaseException] = []

    def run() -> None:
        _name_os_thread(b"warpline-sim")
        try:
            _core.simulate_core(*arguments, cancel)
        except BaseException as exc:  # handed to the waiting thread
            failure.append(exc)

    # daemon: an interpreter that exits after an interrupt does not wait for it
    worker = threading.Thread(target=run, name="warpline-simulation", daemon=True)
    started = time.perf_counter()
    why = ""
    worker.start()
    try:
        while worker.is_alive():
            worker.join(_WAIT_SLICE_S)
            if not worker.is_alive() or cancel[0]:
                continue
            if bounds.stop is not None and bounds.stop():
                why = "stop"
                cancel[0] = 1
            elif bounds.time_budget_s is not None and time.perf_counter() - started > bounds.time_budget_s:
                why = "time"
                cancel[0] = 1
    except BaseException:        # KeyboardInterrupt: stop the core, then let it propagate
        cancel[0] = 1
        worker.join()
        raise
    if failure:
        raise failure[0]
    if why == "stop":
        raise SimulationCancelled(int(out[1]))
    if why == "time":
        raise SimulationError(f"bounded: the simulation ran past its time budget of {bounds.time_budget_s:g} s "
                              "and was stopped")


def _completed_warps(instr_count: np.ndarray, d: KernelDescription, per_warp: list[int]) -> int:
    """After an early stop: the work done, in warps (issued instructions / instructions per warp)."""
    mean = sum(per_warp) / len(per_warp)
    return int(instr_count.sum() // mean) if mean else 0
