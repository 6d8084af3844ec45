"""Pipeline-model simulation of one SM running its share of a grid (001 section 3.2).

``simulate(description, policy="lrr", trace=True)`` encodes the description into flat int64
arrays, runs the compiled core and wraps the outcome in a :class:`SimulationResult`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from engine.errors import SimulationError
from engine.pipeline import _core
from engine.pipeline.description import KernelDescription, Loop, PathNode, Run
from engine.pipeline.trace import ISSUE_DTYPE, STALL_CAUSES, STALL_DTYPE, Aggregates, Trace

POLICIES = {"lrr": 0, "gto": 1}

# Issue rows kept at most (≈ 32 bytes each before conversion); beyond it the run continues
# untraced and the trace says it was truncated, so memory stays bounded.
DEFAULT_TRACE_LIMIT = 5_000_000


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


def _encode_paths(paths: tuple[tuple[PathNode, ...], ...]) -> _Program:
    """Flatten the path trees into items RUN(start, len) / LOOP_BEGIN(count, end) / LOOP_END(begin)."""
    kind: list[int] = []
    a: list[int] = []
    b: list[int] = []
    pool: list[int] = []
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
    return _Program(as_i64(kind), as_i64(a), as_i64(b), as_i64(pool), as_i64(starts), depth_seen[0])


_STATIC_CACHE: dict[tuple, tuple] = {}
_STATIC_CACHE_SIZE = 8


def _static_arrays(d: KernelDescription, ticks: int) -> tuple:
    """The per-instruction arrays and the encoded paths of ``d`` (in ``ticks`` per cycle).

    An occupancy sweep simulates one description at many occupancies: copies that share the
    instruction and path tuples (``with_changes``) reuse one encoding, which on a
    2,500-instruction kernel is most of the Python time of a simulation. The cache holds the
    tuples themselves, so an id in its key cannot be reused by another object while cached.
    """
    key = (id(d.instructions), id(d.paths), ticks)
    hit = _STATIC_CACHE.get(key)
    if hit is not None and hit[0] is d.instructions and hit[1] is d.paths:
        return hit[2]
    n = len(d.instructions)

    def tk(x: Fraction) -> int:
        return x.numerator * ticks // x.denominator

    unit = np.array([ins.unit for ins in d.instructions], dtype=np.int64)
    lam = np.array([tk(ins.lam) for ins in d.instructions], dtype=np.int64)
    Lam = np.array([tk(ins.Lam) for ins in d.instructions], dtype=np.int64)
    ismem = np.array([ins.memory for ins in d.instructions], dtype=np.int64)
    isbar = np.array([ins.barrier for ins in d.instructions], dtype=np.int64)
    dep_ptr = np.zeros(n + 1, dtype=np.int64)
    dep_list: list[int] = []
    for i, ins in enumerate(d.instructions):
        dep_list.extend(sorted(set(ins.deps)))
        dep_ptr[i + 1] = len(dep_list)
    dep_src = np.asarray(dep_list if dep_list else [0], dtype=np.int64)
    # the stall cause of each dependence (its producer's kind), so the core looks up one array
    dep_cause = np.where(ismem[dep_src] != 0, _core.MEMORY_DEPENDENCY, _core.COMPUTE_DEPENDENCY).astype(np.int64)
    arrays = (unit, lam, Lam, isbar, dep_ptr, dep_src, dep_cause, _encode_paths(d.paths))
    if not (isinstance(d.instructions, tuple) and isinstance(d.paths, tuple)):
        return arrays       # lists could change after this run: not cached
    if len(_STATIC_CACHE) >= _STATIC_CACHE_SIZE:
        _STATIC_CACHE.pop(next(iter(_STATIC_CACHE)))
    _STATIC_CACHE[key] = (d.instructions, d.paths, arrays)
    return arrays


def simulate(description: KernelDescription, policy: str = "lrr", trace: bool = True,
             cycle_budget: float | None = None, trace_limit: int = DEFAULT_TRACE_LIMIT) -> SimulationResult:
    """Simulate ``description`` on one SM. ``cycle_budget``: stop there and say so."""
    d = description
    d.validate()
    if policy not in POLICIES:
        raise SimulationError(f"unknown scheduler policy {policy!r}; choose one of {sorted(POLICIES)}")
    for p in range(len(d.paths)):
        if d.instructions_per_warp(p) == 0:
            raise SimulationError(f"path {p} executes no instruction: every warp must issue at least one")
    ticks = d.ticks_per_cycle()
    n = len(d.instructions)

    def tk(x: Fraction) -> int:
        # exact: ticks is a multiple of every denominator (and no Fraction is built per value)
        return x.numerator * ticks // x.denominator

    unit, lam, Lam, isbar, dep_ptr, dep_src, dep_cause, prog = _static_arrays(d, ticks)
    warp_path = np.array([d.path_of_warp(w) for w in range(d.warps_per_block)], dtype=np.int64)

    budget = -1 if cycle_budget is None else int(Fraction(cycle_budget) * ticks)
    params = np.zeros(_core.N_PARAMS, dtype=np.int64)
    params[_core.P_BLOCKS] = d.blocks
    params[_core.P_WPB] = d.warps_per_block
    params[_core.P_GAMMA] = d.resident_blocks
    params[_core.P_IL] = d.issue_limit or 0
    params[_core.P_TICKS] = ticks
    params[_core.P_GAP] = tk(d.warp_issue_interval)
    params[_core.P_BOVH] = tk(d.block_launch_overhead)
    params[_core.P_WOVH] = tk(d.warp_launch_overhead)
    params[_core.P_POLICY] = POLICIES[policy]
    params[_core.P_BUDGET] = budget
    params[_core.P_RECORD] = 1 if trace else 0
    params[_core.P_NSUB] = len(d.subsystems)
    params[_core.P_MAXDEPTH] = prog.max_depth

    if trace:
        total = d.total_warp_instructions()
        cap = max(2, min(total, trace_limit))
        stall_cap = 2 * cap + 2 * d.blocks * d.warps_per_block + 16
    else:
        # two rows, not one: numpy calls a one-row field view contiguous, which would make numba
        # compile a second version of the core for trace-free runs
        cap = stall_cap = 2
    # the core writes the trace rows straight into the structured tables (field views)
    issues = np.empty(cap, dtype=ISSUE_DTYPE)
    stalls = np.empty(stall_cap, dtype=STALL_DTYPE)
    unit_busy = np.zeros(len(d.subsystems), np.int64)
    cause_ticks = np.zeros(_core.N_CAUSES, np.int64)
    instr_count = np.zeros(n, np.int64)
    instr_wait = np.zeros(n, np.int64)
    out = np.zeros(9, np.int64)
    fin_rows = np.zeros(d.blocks * d.warps_per_block if trace else 2, np.int64)
    gamma = max(1, min(d.resident_blocks, d.blocks))
    nslots = gamma * d.warps_per_block
    words = _core.words_for(nslots)
    # slot rows are padded to whole 64-bit mask words: the core scans them 64 at a time
    work_slots = np.zeros((_core.N_FIELDS, 64 * words), np.int64)
    work_stack = np.zeros((nslots, prog.max_depth + 1), np.int64)
    work_done = np.zeros(nslots * n, np.int64)
    work_masks = np.zeros((4 + len(d.subsystems)) * words, np.int64)
    work_blocks = np.zeros((_core.N_BLOCK_FIELDS, gamma + 2), np.int64)
    work_units = np.zeros((1, len(d.subsystems)), np.int64)
    if d.blocks == 0:
        out[:] = 0
    else:
        # per path position: the instruction's subsystem and dependence range (see _core._advance)
        _core.simulate_core(params, unit, lam, Lam, dep_cause, isbar, dep_src,
                            prog.kind, prog.a, prog.b, prog.pool, unit[prog.pool], dep_ptr[prog.pool],
                            dep_ptr[prog.pool + 1], prog.path_start, warp_path,
                            issues["warp"], issues["block"], issues["instr"], issues["subsystem"],
                            issues["issue"], issues["complete"],
                            stalls["warp"], stalls["start"], stalls["end"], stalls["cause"],
                            unit_busy, cause_ticks, instr_count, instr_wait, out, fin_rows,
                            work_slots, work_stack, work_done, work_masks, work_blocks, work_units)
    end, issued, n_tr, n_st, stopped, err, err_block, truncated, rounds = (int(x) for x in out)
    if err == _core.ERR_BARRIER_DEADLOCK:
        raise SimulationError(
            f"barrier deadlock in block {err_block}: some warps of the block wait at a barrier that "
            "the others never reach (they finished); every warp of a block must reach each barrier")
    if err == _core.ERR_STUCK:
        raise SimulationError("the simulation can make no progress (warps wait for an event that "
                              "never comes); check barriers and dependences")

    cycles = Fraction(end, ticks)
    total_cycles = float(cycles)
    busy = {name: unit_busy[u] / ticks for u, name in enumerate(d.subsystems)}
    aggregates = Aggregates(
        unit_busy_cycles=busy,
        utilisation={k: (v / total_cycles if total_cycles else 0.0) for k, v in busy.items()},
        stall_cycles={name: cause_ticks[c] / ticks for c, name in enumerate(STALL_CAUSES)},
        issue_count=instr_count,
        average_wait=np.divide(instr_wait / ticks, instr_count, out=np.zeros(n), where=instr_count > 0),
    )
    result_trace: Trace | None = None
    if trace:
        result_trace = Trace(issues=issues[:n_tr], stalls=stalls[:n_st], truncated=bool(truncated))
    per_warp = [d.instructions_per_warp(d.path_of_warp(w)) for w in range(d.warps_per_block)]
    warps_total = d.blocks * d.warps_per_block
    completed = warps_total if not stopped else _completed_warps(instr_count, d, per_warp)
    return SimulationResult(
        cycles=cycles,
        instructions_issued=issued,
        warps_completed=completed,
        warps_per_cycle=(completed / total_cycles) if total_cycles else 0.0,
        stopped_early=bool(stopped),
        occupancy_warps=d.occupancy_warps,
        policy=policy,
        aggregates=aggregates,
        trace=result_trace,
        ticks_per_cycle=ticks,
        scheduler_rounds=rounds,
    )


def _completed_warps(instr_count: np.ndarray, d: KernelDescription, per_warp: list[int]) -> int:
    """After an early stop: the work done, in warps (issued instructions / instructions per warp)."""
    mean = sum(per_warp) / len(per_warp)
    return int(instr_count.sum() // mean) if mean else 0
