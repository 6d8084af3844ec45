"""Functional execution of sampled warps: the paths, masks and addresses a launch really has.

:func:`execute_launch` runs the kernel's PTX (:mod:`engine.execution.machine`) on every lane of
a sample of its blocks (:mod:`engine.execution.sampling`) over a synthetic memory image made from
the launch (:mod:`engine.execution.image`), and returns an :class:`Execution`: each sampled
warp's dynamic path (the basic blocks it entered, in order), how often each instruction ran,
per memory instruction its requests (sectors, lines, bank wavefronts, active lanes), and the
requests in issue order for the cache simulation (:mod:`engine.caches`).

The run is bounded by deterministic budgets (lane-instructions and interpreted steps: the same
kernel and launch execute or fall back the same way on any machine), by a wall-clock cap that only
guards against a stuck run, and it is cancellable. When it cannot run (an
argument without a value decides a branch, a call, the budget) the :class:`Execution` says why
(``stopped``) and the models fall back to the static analysis, listing that as an assumption.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.analysis import KernelAnalysis
from engine.analysis.values import LaunchValues
from engine.execution.issue_order import load_waits
from engine.execution.machine import Budget, Machine, RunStopped
from engine.execution.recorder import AccessStats
from engine.execution.sampling import Sample, choose_blocks, sm_group

__all__ = ["Budget", "Execution", "ExecutionCancelled", "RunStopped", "cancellable", "current_cancel",
           "execute_launch", "execute_sm_group"]


class ExecutionCancelled(Exception):
    """The caller cancelled the run (nothing of it is kept)."""

_CANCEL: ContextVar[Callable[[], bool] | None] = ContextVar("warpline_execution_cancel", default=None)


@contextmanager
def cancellable(cancel: Callable[[], bool] | None) -> Iterator[None]:
    """Runs started in the body stop (as "cancelled") as soon as ``cancel()`` is true."""
    token = _CANCEL.set(cancel)
    try:
        yield
    finally:
        _CANCEL.reset(token)


def current_cancel() -> Callable[[], bool] | None:
    return _CANCEL.get()

MAX_LANES = 32768                 # lanes one run holds at most (1024 warps)
MAX_STEPS = 1_000_000             # interpreted instruction steps of one run (tens of µs each: 10-30 s at most)
TARGET_LANE_INSTRUCTIONS = 1.5e8  # the sample is sized so the run does about this much work
SM_GROUP_BLOCKS = 16              # blocks run together for the L1 of one SM, at most
UNKNOWN_TRIPS = 16                # iterations assumed per loop without a count, to size the sample


@dataclass
class Execution:
    """What a run of the sampled blocks found. ``stopped`` is None when it ran to the end."""

    kernel: str
    sample: Sample | None
    warps_per_block: int
    stopped: str | None = None
    paths: list[np.ndarray] = field(default_factory=list)        # per executed warp: entered blocks
    executed: np.ndarray | None = None                           # warp executions per instruction
    access: dict[int, AccessStats] = field(default_factory=dict)
    log: dict[str, np.ndarray] = field(default_factory=dict)
    log_complete: bool = True
    lane_instructions: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    grid: tuple[int, int, int] | None = None
    memo: dict[str, Any] = field(default_factory=dict)   # what later stages derive from the run

    @property
    def ok(self) -> bool:
        return self.stopped is None and self.sample is not None

    def block_warps(self, block: int) -> range:
        return range(block * self.warps_per_block, (block + 1) * self.warps_per_block)

    def summary(self) -> str:
        if not self.ok:
            return f"not executed: {self.stopped}"
        assert self.sample is not None
        return (f"executed {self.sample.describe()}; {self.lane_instructions:,} lane-instructions in "
                f"{self.seconds:.2f} s")


_COMPILED_OPCODES = frozenset({"mov", "add", "sub", "mul", "mad", "fma", "min", "max", "and", "or", "xor", "not",
                               "shl", "shr", "neg", "abs", "setp", "selp", "cvt", "cvta", "div", "rem", "rcp",
                               "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "popc", "cnot"})


def _guessed_trips(analysis: KernelAnalysis) -> bool:
    """Whether the static estimate of a thread's instructions counts a loop it has no count for."""
    return any(trip is None or trip.value is None for trip in
               (analysis.trip_counts.get(loop.key) for loop in analysis.cfg.loops))


def estimated_instructions(analysis: KernelAnalysis) -> tuple[float, float]:
    """Instructions one thread runs, from the static trip counts (unknown loops: a few passes),
    and of those the ones the compiled path does not take (memory, control, warp-wide)."""
    cfg = analysis.cfg
    body = analysis.function.instructions
    total = interpreted = 0.0
    for block in cfg.blocks:
        factor = 1.0
        loop = cfg.loop_of(block.index)
        while loop is not None:
            trip = analysis.trip_counts.get(loop.key)
            count = trip.value if trip is not None and trip.value is not None else UNKNOWN_TRIPS
            factor *= max(1, count)
            loop = cfg.loop_by_header(loop.parent) if loop.parent is not None else None
        total += factor * (block.end - block.start)
        interpreted += factor * sum(1 for ins in body[block.start:block.end] if ins.opcode not in _COMPILED_OPCODES)
    return max(1.0, total), max(1.0, interpreted)


_RUNS: OrderedDict[tuple, Execution] = OrderedDict()
RUNS_KEPT = 12                 # runs kept per process (a window, a test session, a batch reuse them)


def _fingerprint(function: Any) -> str:
    """The kernel's code, hashed once per parsed function (runs are kept across parses of one file)."""
    cached = getattr(function, "_warpline_fingerprint", None)
    if cached is None:
        digest = hashlib.sha256()
        digest.update(function.name.encode())
        for ins in function.instructions:
            digest.update(ins.text.encode())
            digest.update(b"\n")
        for v in function.variables:
            digest.update(f"{v.state_space} {v.name} {v.size_bytes} {v.initializer}".encode())
        cached = digest.hexdigest()
        try:
            function._warpline_fingerprint = cached
        except AttributeError:      # a slotted stand-in: hash again next time
            pass
    return cached


def _run_key(function: Any, launch: Any, module: Any, max_lanes: int) -> tuple:
    values = LaunchValues.from_launch(launch)
    variables = tuple(sorted((v.name, v.state_space, v.size_bytes, v.initializer)
                             for v in getattr(module, "variables", ()) or ()))
    return (_fingerprint(function), values.grid, values.block, int(getattr(launch, "smem_dynamic", 0) or 0),
            tuple(sorted((str(k), repr(v)) for k, v in values.args.items())),
            tuple(sorted((str(k), str(v)) for k, v in values.data.items())), variables, max_lanes)


def execute_launch(analysis: KernelAnalysis, launch: Any, module: Any = None,
                   cancel: Callable[[], bool] | None = None, max_lanes: int = MAX_LANES,
                   seconds: float = 60.0) -> Execution:
    """The run of the sampled blocks of ``launch`` (a :class:`engine.launch.Launch`); the last
    :data:`RUNS_KEPT` runs are kept, keyed by the kernel's code and the launch's values, so that
    the same launch is not run twice (its budgets are counts: a run is the same wherever it ran)."""
    key = _run_key(analysis.function, launch, module, max_lanes)
    kept = _kept_run(key)
    if kept is not None:
        return kept
    return _keep_run(key, _execute(analysis, launch, module, cancel, max_lanes, seconds))


def _kept_run(key: tuple) -> Execution | None:
    kept = _RUNS.get(key)
    if kept is not None:
        _RUNS.move_to_end(key)
    return kept


def _keep_run(key: tuple, execution: Execution) -> Execution:
    """Keeps ``execution`` among the last :data:`RUNS_KEPT` runs (not a run stopped by the clock:
    a stuck run may go better next time)."""
    if "took more than" not in (execution.stopped or ""):
        _RUNS[key] = execution
        while len(_RUNS) > RUNS_KEPT:
            _RUNS.popitem(last=False)
    return execution


def _execute(analysis: KernelAnalysis, launch: Any, module: Any, cancel: Callable[[], bool] | None,
             max_lanes: int, seconds: float) -> Execution:
    function = analysis.function
    values = LaunchValues.from_launch(launch)
    if values.block is None or values.grid is None:
        return Execution(function.name, None, 1, stopped="the launch gives no grid and block size")
    threads = values.block[0] * values.block[1] * values.block[2]
    warps_per_block = -(-threads // 32)
    dynamic = int(getattr(launch, "smem_dynamic", 0) or 0)
    started = time.perf_counter()

    def run(sample: Sample) -> Machine:
        return _run_sample(analysis, values, module, sample, dynamic, cancel, seconds)

    if _guessed_trips(analysis):
        # The static estimate rests on guessed loop counts: the grid's middle block runs first
        # alone, and the sample is sized on the instructions its threads really ran.
        middle = choose_blocks(values.grid, 1)
        try:
            pilot = run(middle)
        except RunStopped as stop:
            return Execution(function.name, middle, warps_per_block, stopped=f"one block alone: {stop}",
                             seconds=time.perf_counter() - started, grid=values.grid)
        per_thread = max(1.0, pilot.lane_instructions / max(1, threads))
    else:
        per_thread, interpreted = estimated_instructions(analysis)
        if interpreted > MAX_STEPS:
            return Execution(function.name, None, warps_per_block,
                             stopped=f"a thread runs about {interpreted:,.0f} memory and control instructions, "
                                     f"more than a run's {MAX_STEPS:,} steps", grid=values.grid)
    lanes = int(min(max_lanes, TARGET_LANE_INSTRUCTIONS / per_thread))
    max_blocks = max(1, lanes // (warps_per_block * 32))
    attempt = 0
    while True:
        sample = choose_blocks(values.grid, max_blocks)
        try:
            machine = run(sample)
        except RunStopped as stop:
            text = str(stop)
            if "lane-instructions" in text and attempt == 0 and max_blocks > 1:
                attempt += 1
                max_blocks = max(1, max_blocks // 8)
                continue
            return Execution(function.name, sample, warps_per_block, stopped=text,
                             seconds=time.perf_counter() - started)
        break
    execution = _finished(function.name, machine, sample, warps_per_block, started, values.grid)
    if attempt:
        execution.notes.append("the first sample was over the run's budget; a smaller one was executed")
    return execution


def _run_sample(analysis: KernelAnalysis, values: LaunchValues, module: Any, sample: Sample, dynamic: int,
                cancel: Callable[[], bool] | None, seconds: float) -> Machine:
    """The sample's blocks run to the end (RunStopped, but ExecutionCancelled when cancelled)."""
    budget = Budget(lane_instructions=int(4 * TARGET_LANE_INSTRUCTIONS), seconds=seconds, cancel=cancel,
                    steps=MAX_STEPS)
    try:
        machine = Machine(analysis.function, module, analysis.cfg, values, list(sample.ctaid), dynamic, budget)
        machine.run()
    except RunStopped as stop:
        if str(stop) == "cancelled":
            raise ExecutionCancelled() from None
        raise
    return machine


def _finished(kernel: str, machine: Machine, sample: Sample, warps_per_block: int, started: float,
              grid: tuple[int, int, int] | None) -> Execution:
    rec = machine.recorder
    log = rec.log.arrays()
    log["request_waits"] = load_waits(machine.body, machine.cfg.blocks)[log["request_instruction"]]
    execution = Execution(
        kernel, sample, warps_per_block, paths=rec.paths(machine.n_warps), executed=rec.executed,
        access=rec.access, log=log, log_complete=not rec.log_full,
        lane_instructions=machine.lane_instructions, seconds=time.perf_counter() - started, grid=grid)
    if rec.log_full:
        execution.notes.append("the cache simulation saw the first part of the sampled requests only "
                               f"({rec.max_entries:,} line accesses)")
    return execution


def execute_sm_group(analysis: KernelAnalysis, launch: Any, module: Any, main: Execution, sms: int,
                     resident: int, cancel: Callable[[], bool] | None = None, seconds: float = 60.0
                     ) -> Execution | None:
    """The run of blocks one SM holds at once (:func:`engine.execution.sampling.sm_group`), for
    the L1 they share; kept like :func:`execute_launch`'s runs. At most :data:`SM_GROUP_BLOCKS`
    blocks, and no more than half the blocks of the launch's own sample (``main``: the group
    costs at most half its run); None where that leaves fewer than two blocks, or the run stops."""
    if not main.ok or main.sample is None or main.sample.whole or resident < 2:
        return None
    values = LaunchValues.from_launch(launch)
    if values.grid is None or values.block is None:
        return None
    size = min(resident, SM_GROUP_BLOCKS, main.sample.blocks // 2)
    if size < 2:
        return None
    key = (_run_key(analysis.function, launch, module, MAX_LANES), "sm group", sms, resident, size)
    kept = _kept_run(key)
    if kept is not None:
        return kept if kept.ok else None
    sample = sm_group(values.grid, sms, resident, size)
    started = time.perf_counter()
    warps_per_block = -(-values.block[0] * values.block[1] * values.block[2] // 32)
    try:
        machine = _run_sample(analysis, values, module, sample, int(getattr(launch, "smem_dynamic", 0) or 0),
                              cancel, seconds)
        execution = _finished(analysis.function.name, machine, sample, warps_per_block, started, values.grid)
    except RunStopped as stop:
        execution = Execution(analysis.function.name, sample, warps_per_block, stopped=str(stop), grid=values.grid)
    return execution if _keep_run(key, execution).ok else None


def mean_per_warp(execution: Execution) -> float:
    if execution.executed is None or not execution.paths:
        return math.nan
    return float(execution.executed.sum()) / len(execution.paths)
