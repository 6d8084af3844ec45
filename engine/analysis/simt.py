"""Trip counts the data decides, found by running the kernel's integer work on sampled warps.

Some loops have no closed-form trip count: a ``while`` whose exit depends on the values it
computes (Collatz steps), a CSR row whose bounds are loaded from ``rowptr``, a count read from
an array, a step that halves. When the launch gives the argument values and declares what the
integer buffers hold (:mod:`engine.analysis.loaded_data`), the loop is still decided by integer
arithmetic, so :func:`run_trip_counts` runs it: every thread of a few sampled blocks executes the
kernel's integer instructions and branches with PTX semantics (:mod:`engine.analysis.lane_arith`),
a warp at a time in lock step. Each warp runs the lowest block any of its live lanes waits at
(the classic lowest-PC reconvergence), so a warp goes round a loop until its last lane leaves,
as the GPU does.

Anything else (floating point, shared memory, shuffles, loads from buffers without declared
data) makes the registers it writes *unknown* lane by lane. Unknown values may flow anywhere
except into a branch that a live lane takes: then the run stops and no count is given, because
a guessed branch would give a made-up count. The run is bounded (lanes, block executions and
instructions) and says so when it stops.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.analysis.cfg import ControlFlowGraph, Loop, top_tested
from engine.analysis.classify import TYPE_BYTES
from engine.analysis.lane_arith import LaneError, int64, integer_result, wrap
from engine.analysis.loaded_data import declared_buffer, pointer_base
from engine.analysis.values import LaunchValues, as_type
from engine.ptx.parsed_module import Function, Instruction, Operand, OperandKind

MAX_LANES = 16384            # threads run at once (whole blocks, evenly spaced over the grid)
MAX_BLOCKS = 64              # blocks sampled at most
MAX_ROUNDS = 200_000         # block executions per warp, at most
MAX_STEPS = 60_000           # instructions executed (each a few numpy operations), at most
MAX_WORK = 100_000_000       # lane-instructions, at most (about 2 s of numpy at worst)
_AXES = {"x": 0, "y": 1, "z": 2}
@dataclass(frozen=True)
class RunTrip:
    """One loop's count from the run: the mean over the sampled warps of the passes per entry
    (a warp that never enters counts 0) and the largest warp's."""

    mean: float
    slowest: int
    warps: int


class RunStopped(Exception):
    """The run could not decide every branch it reached; the message says where and why."""


def run_trip_counts(function: Function, cfg: ControlFlowGraph, values: LaunchValues,
                    loops: list[Loop]) -> dict[str, RunTrip]:
    """Counts of ``loops`` from a run of sampled warps; :class:`RunStopped` when it cannot run."""
    if values.block is None or values.grid is None:
        raise RunStopped("the launch gives no grid and block size")
    machine = _Machine(function, cfg, values)
    machine.run()
    return {loop.key: machine.trip(loop) for loop in loops}


def _sample_blocks(grid: tuple[int, int, int], per_block: int) -> list[tuple[int, int, int]]:
    """Whole blocks, first, last and evenly spaced in launch order, as many as fit the lanes."""
    total = grid[0] * grid[1] * grid[2]
    count = max(1, min(MAX_BLOCKS, total, MAX_LANES // max(per_block, 1)))
    linear = np.unique(np.linspace(0, total - 1, count).round().astype(np.int64))
    return [(int(b % grid[0]), int(b // grid[0] % grid[1]), int(b // (grid[0] * grid[1]))) for b in linear]


class _Machine:
    def __init__(self, function: Function, cfg: ControlFlowGraph, values: LaunchValues) -> None:
        self.function, self.cfg, self.values = function, cfg, values
        self.body = function.instructions
        bx, by, bz = values.block  # type: ignore[misc]
        threads = bx * by * bz
        if threads > MAX_LANES:
            raise RunStopped(f"a block of {threads} threads is more than the {MAX_LANES} lanes a run holds")
        warps_per_block = -(-threads // 32)
        blocks = _sample_blocks(values.grid, warps_per_block * 32)
        self.warps = warps_per_block * len(blocks)
        n = self.warps * 32
        self.n = n
        slot = np.arange(warps_per_block * 32, dtype=np.int64)
        local = np.tile(slot, len(blocks))
        self.real = local < threads                       # padding lanes of a partial last warp
        which = np.repeat(np.arange(len(blocks)), warps_per_block * 32)
        ctaid = np.asarray(blocks, dtype=np.int64)[which]
        self.special: dict[str, np.ndarray] = {
            "tid.x": local % bx, "tid.y": local // bx % by, "tid.z": local // (bx * by),
            "laneid": local % 32,
            "ctaid.x": ctaid[:, 0], "ctaid.y": ctaid[:, 1], "ctaid.z": ctaid[:, 2],
        }
        for axis, k in _AXES.items():
            self.special[f"ntid.{axis}"] = np.full(n, values.block[k], dtype=np.int64)   # type: ignore[index]
            self.special[f"nctaid.{axis}"] = np.full(n, values.grid[k], dtype=np.int64)  # type: ignore[index]
        self.params = {p.name: i for i, p in enumerate(function.params)}
        self.regs: dict[str, tuple[np.ndarray, np.ndarray]] = {}   # name -> (values, known)
        self.blocks_n = len(cfg.blocks)
        self.pc = np.where(self.real, cfg.entry if cfg.entry is not None else self.blocks_n, self.blocks_n)
        self.previous = np.full(n, -1, dtype=np.int64)            # block each lane ran last
        self.runs = np.zeros((self.blocks_n, self.warps), dtype=np.int64)     # warp executions
        self.entries: dict[int, np.ndarray] = {lp.header_block: np.zeros(self.warps, dtype=np.int64)
                                               for lp in cfg.loops}
        self.bodies = {lp.header_block: np.fromiter(lp.body, dtype=np.int64) for lp in cfg.loops}
        self.work = 0
        self.steps = 0
        self.why: dict[str, str] = {}       # register -> why some lane's value is unknown
        self.zeros = np.zeros(n, dtype=np.int64)
        self.none = np.zeros(n, dtype=bool)

    # ------------------------------------------------------------------ the run
    def run(self) -> None:
        done = self.blocks_n
        for _ in range(MAX_ROUNDS):
            live = self.pc < done
            if not live.any():
                return
            lowest = np.where(live, self.pc, done).reshape(self.warps, 32).min(axis=1)
            for block in np.unique(lowest[lowest < done]).tolist():
                warps = lowest == block
                mask = (self.pc == block) & np.repeat(warps, 32)
                self._execute(int(block), mask, warps)
            if self.work > MAX_WORK or self.steps > MAX_STEPS:
                break
        raise RunStopped(f"the sampled warps were still running after {MAX_ROUNDS} block executions, "
                         f"{MAX_STEPS:,} instruction steps or {MAX_WORK:,} lane-instructions")

    def _execute(self, index: int, mask: np.ndarray, warps: np.ndarray) -> None:
        block = self.cfg.blocks[index]
        self.runs[index] += warps
        if index in self.entries:
            outside = mask & ~np.isin(self.previous, self.bodies[index])
            self.entries[index] += outside.reshape(self.warps, 32).any(axis=1)
        self.previous = np.where(mask, index, self.previous)
        for instr in self.body[block.start:block.end]:
            self.work += int(mask.sum())
            self.steps += 1
            runs = mask
            if instr.guard is not None:
                guard, known = self._register(instr.guard)
                if instr.opcode == "bra" and np.any(mask & ~known):
                    raise RunStopped(self._unknown_branch(instr))
                taken = (guard != 0) != instr.guard_negated
                runs = mask & taken
                if not known[mask].all():      # whether it ran is itself unknown in some lanes
                    for reg in instr.dests:
                        self._write(reg, mask & ~known, self.zeros, self.none)
                    runs = runs & known
            if instr.opcode == "bra":
                self._branch(instr, index, mask, runs)
                return
            if instr.opcode in ("ret", "exit", "trap"):
                self.pc = np.where(mask, self.blocks_n, self.pc)
                return
            if instr.opcode == "brx":
                raise RunStopped(f"the indirect branch at line {instr.location.line} is not followed")
            if runs.any():
                self._define(instr, runs)
        self.pc = np.where(mask, index + 1 if index + 1 < self.blocks_n else self.blocks_n, self.pc)

    def _branch(self, instr: Instruction, index: int, mask: np.ndarray, taken: np.ndarray) -> None:
        target = self.function.labels.get(instr.branch_target or "")
        if target is None:
            raise RunStopped(f"the branch at line {instr.location.line} has no target in the kernel")
        goes = self.cfg.block_of(target).index
        after = index + 1 if index + 1 < self.blocks_n else self.blocks_n
        self.pc = np.where(taken, goes, np.where(mask, after, self.pc))

    def _unknown_branch(self, instr: Instruction) -> str:
        reason = self.why.get(instr.guard or "", f"{instr.guard} is not set on every path")
        return (f"the branch at line {instr.location.line} depends on {instr.guard}, which the run cannot "
                f"compute: {reason}")

    # ------------------------------------------------------------------ values
    def _define(self, instr: Instruction, runs: np.ndarray) -> None:
        dests = [r for r in instr.dests if r]
        if not dests:
            return
        try:
            results = self._results(instr, dests)
        except LaneError as error:
            for reg in dests:
                self._write(reg, runs, self.zeros, self.none)
                self.why[reg] = str(error)
            return
        for reg, (value, known) in results.items():
            self._write(reg, runs, value, known)

    def _results(self, instr: Instruction, dests: list[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        op = instr.opcode
        if op in ("ld", "ldu"):
            if len(dests) != 1:
                raise LaneError(f"{instr.full_opcode} at line {instr.location.line} loads a vector")
            return {dests[0]: self._load(instr)}
        known = np.ones(self.n, dtype=bool)
        cause = ""

        def read(operand: Operand, type_name: str | None) -> np.ndarray:
            nonlocal known, cause
            value, ok = self._operand(operand, type_name)
            if not cause and not ok.all() and operand.name:
                cause = self.why.get(operand.name, f"{operand.name} is not set on every path")
            known = known & ok
            return value

        out = {}
        for reg in dests:
            known = np.ones(self.n, dtype=bool)
            value = integer_result(instr, reg, read)
            out[reg] = (value, known)
            if cause:
                self.why[reg] = cause
        return out

    def _write(self, reg: str, lanes: np.ndarray, value: np.ndarray, known: np.ndarray) -> None:
        old_value, old_known = self.regs.get(reg, (self.zeros, self.none))
        self.regs[reg] = (np.where(lanes, value, old_value), np.where(lanes, known, old_known))

    def _register(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        return self.regs.get(name, (self.zeros, self.none))

    def _operand(self, operand: Operand, type_name: str | None) -> tuple[np.ndarray, np.ndarray]:
        everywhere = np.ones(self.n, dtype=bool)
        if operand.kind == OperandKind.IMMEDIATE:
            if not isinstance(operand.value, int):
                raise LaneError(f"the literal {operand.text!r} is not an integer")
            value = as_type(operand.value, type_name) if type_name else operand.value
            return np.full(self.n, int64(value), dtype=np.int64), everywhere
        if operand.kind in (OperandKind.REGISTER, OperandKind.PREDICATE) and operand.name:
            value, known = self._register(operand.name)
            return ((value == 0).astype(np.int64) if operand.negated else value), known
        if operand.kind == OperandKind.SPECIAL:
            name = (operand.name or operand.text).lstrip("%")
            if name in self.special:
                return self.special[name], everywhere
            raise LaneError(f"%{name} is not known before the kernel runs")
        raise LaneError(f"operand {operand.text!r} is not an integer value")

    def _load(self, instr: Instruction) -> tuple[np.ndarray, np.ndarray]:
        line = instr.location.line
        address = next((o for o in instr.operands if o.kind == OperandKind.ADDRESS), None)
        types = [m for m in instr.modifiers if m in TYPE_BYTES]
        if address is None or address.base is None or not types or types[-1][0] not in "bsu":
            raise LaneError(f"{instr.full_opcode} at line {line} does not load an integer")
        t = types[-1]
        if "param" in instr.modifiers:
            return self._parameter(instr, address, t)
        if "shared" in instr.modifiers or "local" in instr.modifiers:
            raise LaneError(f"{instr.full_opcode} at line {line} reads memory the kernel itself writes")
        base, known = self._operand(address.base, "u64")
        if not known.all() and address.base.name:
            self.why.setdefault(instr.dests[0], self.why.get(address.base.name, "its address is unknown"))
        where = base + int64(address.offset)
        pointer = declared_buffer(where[known], self.function.params, self.values)
        if pointer is None:
            raise LaneError(f"{instr.full_opcode} at line {line} reads a buffer without declared data")
        index, data = pointer
        element = (where - pointer_base(index)) // TYPE_BYTES[t]
        return wrap(data.values(element, where), t), known

    def _parameter(self, instr: Instruction, address: Operand, t: str) -> tuple[np.ndarray, np.ndarray]:
        line = instr.location.line
        name = address.base.name if address.base is not None else None
        if name not in self.params or address.offset:
            raise LaneError(f"{instr.full_opcode} at line {line} reads a field of a structure parameter")
        index = self.params[name]
        param = self.function.params[index]
        value = self.values.argument(index, param.name)
        if value is None:
            # Only a buffer the launch declares data for is placed (its address does not decide
            # branches, its values may); any other argument without a value stays unknown: a
            # size read as an address would make a loop run 2^40 times (numba's array shapes).
            if TYPE_BYTES.get(t, 4) != 8 or self.values.loaded_data(index, param.name) is None:
                raise LaneError(f"argument {index} ({param.name}) has no value in the launch")
            value = pointer_base(index)
        if isinstance(value, float):
            raise LaneError(f"argument {index} ({param.name}) is not an integer")
        return np.full(self.n, int64(value), dtype=np.int64), np.ones(self.n, dtype=bool)

    # ------------------------------------------------------------------ counts
    def trip(self, loop: Loop) -> RunTrip:
        header = loop.header_block
        runs = self.runs[header].astype(np.float64)
        entries = self.entries[header].astype(np.float64)
        if top_tested(self.cfg, loop):
            runs = np.maximum(runs - entries, 0)   # the last pass of each entry only tests
        per_entry = np.where(entries > 0, runs / np.maximum(entries, 1), 0.0)
        return RunTrip(float(per_entry.mean()), int(np.ceil(per_entry.max())) if self.warps else 0, self.warps)
