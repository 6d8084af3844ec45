"""The PTX interpreter: every lane of the sampled blocks, a warp at a time in lock step.

Registers are rows of 64-bit patterns with a *known* mask per lane (see
:mod:`engine.execution.typed`). Each lane has its own program counter; a warp runs the lanes
waiting at its lowest instruction (the min-PC rule: lanes that left a branch early wait at the
join for the others, and a loop runs until its last lane leaves), and warps of the sampled blocks
that wait at the same instruction run it together, one numpy operation for all their lanes.
``bar.sync`` holds a lane until every lane of its block that has not exited reached a barrier.

What cannot be computed becomes unknown lanes, not an error: floating-point work the interpreter
does not model (tensor-core results, packed halves), integers read from buffers without a
declared pattern. The run stops (:class:`RunStopped`) only where the path itself would be a
guess: a branch taken by a lane whose guard is unknown, an indirect branch, a call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engine.analysis.cfg import ControlFlowGraph
from engine.analysis.values import LaunchValues
from engine.execution import alu_ops, arith, memory_ops, warp_ops
from engine.execution.compiled_memory import M_LOAD, M_LOCAL, M_PARAM, M_SHARED, MemoryRows, memory_op
from engine.execution.compiled_steps import IDLE, TO_PYTHON, UNKNOWN_GUARD, run_steps
from engine.execution.fast import Decoded, run_fast
from engine.execution.image import LOCAL_BASE, SHARED_BASE, MemoryImage
from engine.execution.instruction_facts import _BINARY, _NO_OPS, _UNARY, U64
from engine.execution.recorder import Recorder
from engine.execution.typed import immediate_bits, read
from engine.ptx.parsed_module import Function, Instruction, Module, Operand, OperandKind
from engine.units import AccessKind


class RunStopped(Exception):
    """The run cannot go on without guessing; the message says where and why."""


@dataclass(frozen=True)
class Budget:
    """Bounds of one run: lane-instructions, instruction steps, seconds, and a cancel check."""

    lane_instructions: int = 400_000_000
    steps: int = 400_000
    seconds: float = 20.0
    cancel: Callable[[], bool] | None = None


class Machine:
    """One run over the lanes of ``blocks`` (their ``ctaid``), all resident at once."""

    def __init__(self, function: Function, module: Module | None, cfg: ControlFlowGraph,
                 values: LaunchValues, blocks: list[tuple[int, int, int]], dynamic_shared: int,
                 budget: Budget, max_log_entries: int = 3_000_000) -> None:
        if values.block is None or values.grid is None:
            raise RunStopped("the launch gives no grid and block size")
        self.function, self.cfg, self.values, self.budget = function, cfg, values, budget
        self.body = function.instructions
        self.n = len(self.body)
        bx, by, bz = values.block
        self.threads = bx * by * bz
        self.warps_per_block = -(-self.threads // 32)
        self.blocks = blocks
        self.n_warps = self.warps_per_block * len(blocks)
        L = self.lanes = self.n_warps * 32
        slot = np.tile(np.arange(self.warps_per_block * 32, dtype=np.int64), len(blocks))
        self.block_row = np.repeat(np.arange(len(blocks), dtype=np.int64), self.warps_per_block * 32)
        self.block_of_warp = np.repeat(np.arange(len(blocks), dtype=np.int32), self.warps_per_block)
        real = slot < self.threads
        ctaid = np.asarray(blocks, dtype=np.int64).reshape(-1, 3)[self.block_row]
        grid = values.grid
        warp_in_block = slot // 32
        lane = slot % 32
        self.special: dict[str, np.ndarray] = {
            "%tid.x": slot % bx, "%tid.y": slot // bx % by, "%tid.z": slot // (bx * by),
            "%ntid.x": np.full(L, bx), "%ntid.y": np.full(L, by), "%ntid.z": np.full(L, bz),
            "%ctaid.x": ctaid[:, 0], "%ctaid.y": ctaid[:, 1], "%ctaid.z": ctaid[:, 2],
            "%nctaid.x": np.full(L, grid[0]), "%nctaid.y": np.full(L, grid[1]), "%nctaid.z": np.full(L, grid[2]),
            "%laneid": lane, "%warpid": warp_in_block, "%nwarpid": np.full(L, self.warps_per_block),
            "%lanemask_eq": np.int64(1) << lane, "%lanemask_lt": (np.int64(1) << lane) - 1,
            "%lanemask_le": (np.int64(2) << lane) - 1, "%lanemask_gt": ~((np.int64(2) << lane) - 1) & 0xFFFFFFFF,
            "%lanemask_ge": ~((np.int64(1) << lane) - 1) & 0xFFFFFFFF,
            "%smid": ctaid[:, 0] % 132, "%nsmid": np.full(L, 132), "%gridid": np.zeros(L, dtype=np.int64),
            "%dynamic_smem_size": np.full(L, dynamic_shared),
        }
        self.special = {k: np.asarray(v, dtype=np.int64).view(np.uint64) for k, v in self.special.items()}
        self.image = MemoryImage(function, module, values, len(blocks), L, dynamic_shared)
        self.special["%total_smem_size"] = np.full(L, self.image.shared_size, dtype=np.uint64)
        self.special["%aggr_smem_size"] = self.special["%total_smem_size"]
        self.rows = self._registers()
        # registers declared .pred (cp.async tells an ignore-src predicate from a src-size by it)
        self.predicates = {name for decl in function.registers if decl.type == "pred" for name in decl.names()}
        R = len(self.rows)
        self.regs = np.zeros((R + 1, L), dtype=np.uint64)
        self.known = np.zeros((R + 1, L), dtype=bool)
        self.carry = np.zeros(L, dtype=np.uint64)
        self.why: dict[str, str] = {}               # register -> why it is unknown somewhere
        entry = self.cfg.blocks[cfg.entry].start if cfg.entry is not None else self.n
        self.pc = np.where(real, entry, self.n).astype(np.int64)
        self.at_barrier = np.zeros(L, dtype=bool)
        self.block_of = np.zeros(self.n + 1, dtype=np.int64)
        self.block_end = np.zeros(self.n + 1, dtype=np.int64)
        self.block_start = np.zeros(self.n + 1, dtype=bool)
        for b in cfg.blocks:
            self.block_of[b.start:b.end] = b.index
            self.block_end[b.start:b.end] = b.end
            if b.end > b.start:
                self.block_start[b.start] = True
        self.labels = function.labels
        self.recorder = Recorder(self.n, self.warps_per_block, max_log_entries)
        self.lane_instructions = 0
        self.steps = 0
        self.started = time.perf_counter()
        self.read_registers = {r for ins in self.body for r in ins.srcs}
        names = sorted(self.special)
        self.special_table = np.ascontiguousarray(np.stack([self.special[k] for k in names]))
        self.fast = Decoded(function, self.rows, names, self.image.symbols, int(SHARED_BASE), int(LOCAL_BASE))
        f = self.fast
        self._fast_args = (f.op, f.typ, f.width, f.styp, f.swidth, f.mode, f.cmp, f.combine, f.dst, f.dst2,
                           f.guard, f.guard_neg, f.kind, f.val, f.base)
        self.memory_rows = MemoryRows(function, self.rows, self.image.symbols)
        self.compiled_memory = True          # the interpreted handlers alone when False (tests compare)
        self.local_frame_words = max(1, -(-self.image.local_size // 4))
        # the first calls compile the compiled paths (or load them from numba's cache): not the run's time
        run_fast(0, 0, np.zeros(0, dtype=np.int64), self.regs, self.known, self.special_table, *self._fast_args)
        memory_op(self.n, np.zeros(0, dtype=np.int64), 0, *self._memory_args())
        self._branches = self._branch_rows()
        self._counters = np.zeros(3, dtype=np.int64)          # lane-instructions, steps, trace entries
        self._trace_warps = np.zeros(max(4096, 4 * self.n_warps), dtype=np.int32)
        self._trace_blocks = np.zeros_like(self._trace_warps)
        run_steps(self.pc[:0], self.at_barrier[:0], self.n, 0, self.block_start, self.block_end, self.block_of,
                  self.recorder.executed, *self._branches, self._counters, 0, 0, self._trace_warps,
                  self._trace_blocks, self.regs, self.known, self.special_table, *self._fast_args)
        self.started = time.perf_counter()

    # ------------------------------------------------------------------ set-up
    def _registers(self) -> dict[str, int]:
        names: dict[str, int] = {}
        for decl in self.function.registers:
            if decl.count is not None and decl.count > 100_000:
                raise RunStopped(f"{decl.count} registers {decl.name}<..> are more than a run holds")
            for name in decl.names():
                names.setdefault(name, len(names))
        for ins in self.body:
            for r in (*ins.dests, *ins.srcs):
                names.setdefault(r, len(names))
        return names

    # ------------------------------------------------------------------ run
    def run(self) -> None:
        """Execute until every lane has exited; :class:`RunStopped` when it cannot or the budget is spent."""
        N = self.n
        args = (self.pc, self.at_barrier, N, self.n_warps, self.block_start, self.block_end, self.block_of,
                self.recorder.executed, *self._branches, self._counters, int(self.budget.lane_instructions),
                int(self.budget.steps), self._trace_warps, self._trace_blocks, self.regs, self.known,
                self.special_table, *self._fast_args)
        while True:
            self._counters[:] = (self.lane_instructions, self.steps, 0)
            status, g, at, starts, warp_bounds, warps, lane_bounds, lanes = run_steps(*args)
            self.lane_instructions, self.steps, traced = (int(c) for c in self._counters)
            if traced:
                self.recorder.trace_warps.append(self._trace_warps[:traced].copy())
                self.recorder.trace_blocks.append(self._trace_blocks[:traced].copy())
            if status == IDLE:
                if not self._release_barriers():
                    return
                continue
            if status == UNKNOWN_GUARD:
                self._stop_at_unknown_guard(self.body[at])
            if status == TO_PYTHON:
                if at >= 0:          # the group ran compiled up to ``at``: the rest of its segment
                    self._segment(at, lanes[lane_bounds[g]:lane_bounds[g + 1]],
                                  warps[warp_bounds[g]:warp_bounds[g + 1]])
                    g += 1
                for h in range(g, len(starts)):
                    self._segment(int(starts[h]), lanes[lane_bounds[h]:lane_bounds[h + 1]],
                                  warps[warp_bounds[h]:warp_bounds[h + 1]])
            self._release_barriers()
            self._check_budget()

    def _branch_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per instruction, how the compiled run loop takes it (:func:`run_steps`): kind 1 a
        direct unguarded ``bra``, 2 a guarded one (the predicate's register row), 0 left to
        :meth:`_branch` (indirect, a missing target or predicate)."""
        kinds = np.zeros(self.n + 1, dtype=np.int64)
        targets = np.full(self.n + 1, -1, dtype=np.int64)
        rows = np.full(self.n + 1, -1, dtype=np.int64)
        negated = np.zeros(self.n + 1, dtype=np.bool_)
        for ins in self.body:
            if ins.opcode != "bra":
                continue
            target = self.labels.get(ins.branch_target or "")
            if target is None:
                continue
            if ins.guard is None:
                kinds[ins.index], targets[ins.index] = 1, target
                continue
            row = self.rows.get(ins.guard)
            if row is not None:
                kinds[ins.index], targets[ins.index], rows[ins.index] = 2, target, row
                negated[ins.index] = ins.guard_negated
        return kinds, targets, rows, negated

    def _check_budget(self) -> None:
        b = self.budget
        if b.cancel is not None and b.cancel():
            raise RunStopped("cancelled")
        if self.lane_instructions > b.lane_instructions or self.steps > b.steps:
            raise RunStopped(f"the sampled warps need more than {b.steps:,} instruction steps or "
                             f"{b.lane_instructions:,} lane-instructions (the run's budget)")
        if time.perf_counter() - self.started > b.seconds:
            raise RunStopped(f"the run took more than its {b.seconds:g} s budget")

    def _release_barriers(self) -> bool:
        if not self.at_barrier.any():
            return False
        per_block = self.warps_per_block * 32
        waiting = self.at_barrier.reshape(-1, per_block)
        done = (waiting | (self.pc >= self.n).reshape(-1, per_block)).all(axis=1) & waiting.any(axis=1)
        if not done.any():
            return False
        lanes = np.repeat(done, per_block) & self.at_barrier
        self.pc[lanes] += 1
        self.at_barrier[lanes] = False
        return True

    def _segment(self, start: int, lanes: np.ndarray, warps: np.ndarray) -> None:
        """Run ``lanes`` (all at instruction ``start``) to the end of its basic block, a barrier,
        a branch or an exit."""
        if self.block_start[start]:
            self.recorder.enter(warps, int(self.block_of[start]))
        self.recorder.log.segment[0] += 1
        end = int(self.block_end[start])
        n_warps = len(warps)
        i = start
        fast_op = self.fast.op
        while i < end:
            if fast_op[i] > 0:
                j = run_fast(i, end, lanes, self.regs, self.known, self.special_table, *self._fast_args)
                self.recorder.executed[i:j] += n_warps
                self.lane_instructions += (j - i) * len(lanes)
                i = j
                continue
            if self.compiled_memory and self.memory_rows.space[i] > 0 \
                    and memory_op(i, lanes, n_warps, *self._memory_args()):
                self.recorder.executed[i] += n_warps
                self.steps += 1
                self.lane_instructions += len(lanes)
                if self.memory_rows.space[i] != M_PARAM:
                    self._note_access(i)
                i += 1
                continue
            ins = self.body[i]
            self.recorder.executed[i] += n_warps
            self.steps += 1
            self.lane_instructions += len(lanes)
            op = ins.opcode
            if op in ("bar", "barrier") and not any(m in ("arrive",) for m in ins.modifiers):
                run, _ = self._guarded(ins, lanes)
                if "red" in ins.modifiers:
                    warp_ops.barrier_reduction(self, ins, run)
                self.pc[run] = i
                self.at_barrier[run] = True
                skipped = np.setdiff1d(lanes, run, assume_unique=True)
                lanes = skipped
                if not len(lanes):
                    return
                i += 1
                continue
            if op in ("bra", "brx"):
                self._branch(ins, lanes)
                return
            if op in ("ret", "exit") or (op == "trap"):
                run, _ = self._guarded(ins, lanes)
                self.pc[run] = self.n
                lanes = np.setdiff1d(lanes, run, assume_unique=True)
                if not len(lanes):
                    return
                i += 1
                continue
            if op == "call":
                raise RunStopped(f"line {ins.location.line} calls a function, which the run does not follow")
            self._execute(ins, lanes)
            i += 1
        self.pc[lanes] = end

    def _memory_args(self) -> tuple:
        m, im, rec = self.memory_rows, self.image, self.recorder
        log = rec.log
        return (self.regs, self.known, m.space, m.kind, m.request, m.width, m.vector, m.float_kind, m.base_kind,
                m.base, m.offset, m.element_kind, m.element, m.guard, m.guard_negated,
                im.w_kind, im.w_a, im.w_b, im.w_start, im.w_len, im.w_written, im.initial_bytes, im.offset_tables,
                im.overlay.keys, im.overlay.vals, im.overlay.stored, im.overlay.good, im.overlay.used,
                im.shared, im.shared_known, im.local, im.local_known, im.params[0], im.params[1], self.block_row,
                self.local_frame_words, SHARED_BASE, LOCAL_BASE, rec.counters, self.block_of_warp,
                log.request_instruction, log.request_block, log.request_kind, log.request_warp,
                log.request_segment, log.segment, log.entry_request, log.entry_line,
                log.entry_sectors, log.entry_bytes, log.counts, log.max_entries)

    def _note_access(self, i: int) -> None:
        """The counters of instruction ``i`` were written by the compiled path: name what they count."""
        if i not in self.recorder.meta:
            m = self.memory_rows
            space = {M_SHARED: "shared", M_LOCAL: "local"}.get(int(m.space[i]), "global")
            kind = AccessKind.LOAD if m.kind[i] == M_LOAD else AccessKind.STORE
            self.recorder.meta[i] = (space, kind, int(m.width[i] * m.vector[i]))

    def _branch(self, ins: Instruction, lanes: np.ndarray) -> None:
        if ins.opcode == "brx":
            raise RunStopped(f"the indirect branch at line {ins.location.line} is not followed")
        target = self.labels.get(ins.branch_target or "")
        if target is None:
            raise RunStopped(f"the branch at line {ins.location.line} has no target in the kernel")
        if ins.guard is None:
            self.pc[lanes] = target
            return
        value, known = self._register(ins.guard, lanes)
        if not known.all():
            self._stop_at_unknown_guard(ins)
        taken = (value != 0) != ins.guard_negated
        self.pc[lanes[taken]] = target
        self.pc[lanes[~taken]] = ins.index + 1

    def _stop_at_unknown_guard(self, ins: Instruction) -> None:
        guard = ins.guard or ""
        reason = self.why.get(guard, f"{guard} is not set on every path")
        raise RunStopped(f"the branch at line {ins.location.line} depends on {guard}, which the run "
                         f"cannot compute: {reason}")

    def _guarded(self, ins: Instruction, lanes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(lanes that run it, lanes whose guard is unknown)."""
        if ins.guard is None:
            return lanes, lanes[:0]
        value, known = self._register(ins.guard, lanes)
        taken = (value != 0) != ins.guard_negated
        return lanes[taken & known], lanes[~known]

    def _execute(self, ins: Instruction, lanes: np.ndarray) -> None:
        run, unknown = self._guarded(ins, lanes)
        if len(unknown):
            for reg in ins.dests:
                self._poison(reg, unknown, f"whether line {ins.location.line} runs is unknown")
        handler = _HANDLERS.get(ins.opcode)
        if handler is None:
            full = ins.full_opcode
            if ins.opcode in _NO_OPS or any(full.startswith(p) for p in _NO_OPS):
                return
            handler = alu_ops.unknown_result
        if ins.opcode in ("ld", "ldu", "st", "atom", "red", "cp", "tex", "ldmatrix"):
            handler(self, ins, run)                 # memory: record even when no lane runs it
            return
        if not len(run):
            return
        try:
            handler(self, ins, run)
        except arith.Unsupported as error:
            alu_ops.unknown_result(self, ins, run, f"{ins.full_opcode} is not modelled ({error})")

    # ------------------------------------------------------------------ registers
    def _register(self, name: str, lanes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        row = self.rows.get(name)
        if row is None:
            return np.zeros(len(lanes), dtype=U64), np.zeros(len(lanes), dtype=bool)
        return self.regs[row, lanes], self.known[row, lanes]

    def _write(self, name: str | None, lanes: np.ndarray, bits: np.ndarray, known: np.ndarray | bool,
               why: str = "") -> None:
        if not name or not len(lanes):
            return
        row = self.rows.get(name)
        if row is None:
            return
        self.regs[row, lanes] = bits
        self.known[row, lanes] = known
        if why and not np.all(known):
            self.why.setdefault(name, why)

    def _poison(self, name: str | None, lanes: np.ndarray, why: str) -> None:
        if name and len(lanes):
            row = self.rows.get(name)
            if row is not None:
                self.known[row, lanes] = False
                self.why.setdefault(name, why)

    def _value(self, op: Operand, lanes: np.ndarray, t: str | None) -> tuple[np.ndarray, np.ndarray]:
        """The operand's pattern per lane as an instruction of type ``t`` reads it, and whether known."""
        n = len(lanes)
        kind = op.kind
        if kind == OperandKind.REGISTER:
            return self._register(op.name or "", lanes)
        if kind == OperandKind.PREDICATE:
            value, known = self._register(op.name or "", lanes)
            return ((value != 0) != op.negated).astype(U64), known
        if kind == OperandKind.IMMEDIATE:
            return np.full(n, immediate_bits(op.value, op.text, t), dtype=U64), np.ones(n, dtype=bool)
        if kind == OperandKind.SPECIAL:
            name = op.name or op.text
            if name in self.special:
                return self.special[name][lanes], np.ones(n, dtype=bool)
            if name.startswith("%clock") or name == "%globaltimer":
                return np.full(n, U64(self.steps * 4)), np.ones(n, dtype=bool)
            return np.zeros(n, dtype=U64), np.zeros(n, dtype=bool)
        if kind == OperandKind.SYMBOL:
            place = self.image.symbols.get(op.name or "")
            if place is None:
                return np.zeros(n, dtype=U64), np.zeros(n, dtype=bool)
            return np.full(n, U64(place[1]), dtype=U64), np.ones(n, dtype=bool)
        if kind == OperandKind.ADDRESS:
            return self._address(op, lanes)
        return np.zeros(n, dtype=U64), np.zeros(n, dtype=bool)

    def _typed(self, op: Operand, lanes: np.ndarray, t: str) -> tuple[np.ndarray, np.ndarray]:
        bits, known = self._value(op, lanes, t)
        return read(bits, t), known

    def _address(self, op: Operand, lanes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = len(lanes)
        if op.base is None:
            return np.full(n, U64(op.offset & 0xFFFFFFFFFFFFFFFF)), np.ones(n, dtype=bool)
        bits, known = self._value(op.base, lanes, "u64")
        return bits + U64(op.offset & 0xFFFFFFFFFFFFFFFF), known


# opcode -> handler (unbound: a machine holding bound methods of itself would be a reference cycle
# that keeps its lane arrays alive until the cyclic collector runs)
_HANDLERS: dict[str, Callable[[Machine, Instruction, np.ndarray], None]] = {
    **dict.fromkeys(_BINARY, alu_ops.binary), **dict.fromkeys(_UNARY, alu_ops.unary),
    "mad": alu_ops.mad, "fma": alu_ops.mad, "mad24": alu_ops.mad24, "mul24": alu_ops.mul24,
    "sad": alu_ops.sad, "mov": alu_ops.mov, "cvt": alu_ops.cvt, "cvta": alu_ops.cvta, "setp": alu_ops.setp,
    "set": alu_ops.set, "selp": alu_ops.selp, "slct": alu_ops.slct, "bfe": alu_ops.bfe, "bfi": alu_ops.bfi,
    "prmt": alu_ops.prmt, "lop3": alu_ops.lop3, "shf": alu_ops.shf, "testp": alu_ops.testp,
    "addc": alu_ops.carry_op, "subc": alu_ops.carry_op, "madc": alu_ops.carry_op,
    "ld": memory_ops.load, "ldu": memory_ops.load, "st": memory_ops.store, "atom": memory_ops.atomic,
    "red": memory_ops.atomic, "cp": memory_ops.copy, "tex": memory_ops.texture, "tld4": alu_ops.unknown_result,
    "suld": alu_ops.unknown_result, "sust": alu_ops.no_op, "shfl": warp_ops.shuffle, "vote": warp_ops.vote,
    "activemask": warp_ops.activemask, "redux": warp_ops.redux, "elect": warp_ops.elect,
    "mbarrier": warp_ops.mbarrier, "ldmatrix": memory_ops.ldmatrix, "stmatrix": alu_ops.no_op,
}
