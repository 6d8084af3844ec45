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
from engine.execution import arith
from engine.execution.compiled_memory import M_LOAD, M_LOCAL, M_PARAM, M_SHARED, MemoryRows, memory_op
from engine.execution.fast import Decoded, run_fast
from engine.execution.image import LOCAL_BASE, SHARED_BASE, WINDOW_MASK, MemoryImage
from engine.execution.recorder import ATOMIC, LOAD_CACHED, LOAD_UNCACHED, STORE, Recorder
from engine.execution.typed import BITS, FLOAT_TYPES, PACKED_TYPES, immediate_bits, is_type, read, write
from engine.ptx.parsed_module import Function, Instruction, Module, Operand

U64 = np.uint64
SPACES = ("global", "shared", "local", "const", "param", "tex", "shared::cta", "shared::cluster")
_AXES = {"x": 0, "y": 1, "z": 2}
_BINARY = frozenset({"add", "sub", "mul", "div", "rem", "min", "max", "and", "or", "xor", "shl", "shr", "copysign"})
_UNARY = frozenset({"neg", "abs", "not", "cnot", "popc", "clz", "bfind", "brev", "sqrt", "rsqrt", "rcp", "sin",
                    "cos", "ex2", "lg2", "tanh"})
_NO_OPS = frozenset({"membar", "fence", "nanosleep", "prefetch", "prefetchu", "pmevent", "griddepcontrol",
                     "setmaxnreg", "discard", "applypriority", "createpolicy", "trap", "brkpt",
                     "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group", "cp.async.commit_group",
                     "cp.async.wait_group", "cp.async.wait_all", "cp.async.bulk.commit_group",
                     "cp.async.bulk.wait_group", "cp.async.bulk.wait_group.read"})


class RunStopped(Exception):
    """The run cannot go on without guessing; the message says where and why."""


@dataclass(frozen=True)
class Budget:
    """Bounds of one run: lane-instructions, instruction steps, seconds, and a cancel check."""

    lane_instructions: int = 400_000_000
    steps: int = 400_000
    seconds: float = 20.0
    cancel: Callable[[], bool] | None = None


def _warps_of(lanes: np.ndarray) -> int:
    """Distinct warps among sorted lane numbers."""
    if not len(lanes):
        return 0
    w = lanes >> 5
    return 1 + int(np.count_nonzero(w[1:] != w[:-1]))


def _types(modifiers: tuple[str, ...]) -> list[str]:
    return [m for m in modifiers if is_type(m)]


def _vector(modifiers: tuple[str, ...]) -> int:
    for m in modifiers:
        if m in ("v2", "v4", "v8"):
            return int(m[1])
    return 1


def _space(modifiers: tuple[str, ...]) -> str:
    for m in modifiers:
        if m in SPACES:
            return "shared" if m.startswith("shared") else m
    return "generic"


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
        big = np.int64(N + 1)
        while True:
            live = (self.pc < N) & ~self.at_barrier
            if not live.any():
                if not self._release_barriers():
                    return
                continue
            lowest = np.where(live, self.pc, big).reshape(self.n_warps, 32).min(axis=1)
            for p in np.unique(lowest[lowest < N]).tolist():
                warps = np.flatnonzero(lowest == p)
                lanes = (warps[:, None] * 32 + np.arange(32)).ravel()
                lanes = lanes[(self.pc[lanes] == p) & live[lanes]]
                self._segment(int(p), lanes, warps)
            self._release_barriers()
            self._check_budget()

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
                    self._barrier_reduction(ins, run)
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
                log.request_instruction, log.request_block, log.request_kind, log.entry_request, log.entry_line,
                log.entry_sectors, log.entry_bytes, log.counts, log.max_entries)

    def _note_access(self, i: int) -> None:
        """The counters of instruction ``i`` were written by the compiled path: name what they count."""
        if i not in self.recorder.meta:
            m = self.memory_rows
            space = {M_SHARED: "shared", M_LOCAL: "local"}.get(int(m.space[i]), "global")
            kind = "load" if m.kind[i] == M_LOAD else "store"
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
            reason = self.why.get(ins.guard, f"{ins.guard} is not set on every path")
            raise RunStopped(f"the branch at line {ins.location.line} depends on {ins.guard}, which the run "
                             f"cannot compute: {reason}")
        taken = (value != 0) != ins.guard_negated
        self.pc[lanes[taken]] = target
        self.pc[lanes[~taken]] = ins.index + 1

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
            handler = Machine._unknown_result
        if ins.opcode in ("ld", "ldu", "st", "atom", "red", "cp", "tex", "ldmatrix"):
            handler(self, ins, run)                 # memory: record even when no lane runs it
            return
        if not len(run):
            return
        try:
            handler(self, ins, run)
        except arith.Unsupported as error:
            self._unknown_result(ins, run, f"{ins.full_opcode} is not modelled ({error})")

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
        if kind == "register":
            return self._register(op.name or "", lanes)
        if kind == "predicate":
            value, known = self._register(op.name or "", lanes)
            return ((value != 0) != op.negated).astype(U64), known
        if kind == "immediate":
            return np.full(n, immediate_bits(op.value, op.text, t), dtype=U64), np.ones(n, dtype=bool)
        if kind == "special":
            name = op.name or op.text
            if name in self.special:
                return self.special[name][lanes], np.ones(n, dtype=bool)
            if name.startswith("%clock") or name == "%globaltimer":
                return np.full(n, U64(self.steps * 4)), np.ones(n, dtype=bool)
            return np.zeros(n, dtype=U64), np.zeros(n, dtype=bool)
        if kind == "symbol":
            place = self.image.symbols.get(op.name or "")
            if place is None:
                return np.zeros(n, dtype=U64), np.zeros(n, dtype=bool)
            return np.full(n, U64(place[1]), dtype=U64), np.ones(n, dtype=bool)
        if kind == "address":
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

    # ------------------------------------------------------------------ arithmetic
    def _dest(self, ins: Instruction) -> Operand:
        return ins.operands[0]

    def _store_result(self, ins: Instruction, lanes: np.ndarray, result: np.ndarray, known: np.ndarray,
                      t: str) -> None:
        dest = self._dest(ins)
        bits = write(result, t)
        if dest.kind == "register":
            self._write(dest.name, lanes, bits, known, f"line {ins.location.line} reads unknown values")
        elif dest.kind == "pair" and dest.elements:
            self._write(dest.elements[0].name, lanes, bits, known, f"line {ins.location.line} reads unknown values")

    def _binary(self, ins: Instruction, lanes: np.ndarray) -> None:
        types = _types(ins.modifiers)
        t = types[-1] if types else "b32"
        op = ins.opcode
        if t in PACKED_TYPES:
            self._packed(ins, lanes, t)
            return
        a, ka = self._typed(ins.operands[1], lanes, t)
        if op in ("shl", "shr"):
            b, kb = self._typed(ins.operands[2], lanes, "u32")
        else:
            b, kb = self._typed(ins.operands[2], lanes, t)
        known = ka & kb
        out_t = t
        if t in FLOAT_TYPES:
            result = arith.float_binary(op, a, b)
            if "sat" in ins.modifiers:
                result = np.clip(result, 0.0, 1.0)
        elif op == "mul":
            mode = "hi" if "hi" in ins.modifiers else "wide" if "wide" in ins.modifiers else "lo"
            result = arith.int_mul(a, b, t, mode)
            if mode == "wide":
                out_t = t[0] + str(2 * BITS[t])
        elif t == "pred":
            result = arith.int_binary(op, a.astype(np.uint64), b.astype(np.uint64), "b8", ins.modifiers)
        else:
            if op in ("div", "rem"):
                known = known & (b != 0)
            result = arith.int_binary(op, a, b, t, ins.modifiers)
        self._store_result(ins, lanes, result, known, out_t)

    def _packed(self, ins: Instruction, lanes: np.ndarray, t: str) -> None:
        half = "f16" if t == "f16x2" else "bf16"
        srcs = [self._value(o, lanes, "b32") for o in ins.operands[1:]]
        known = np.logical_and.reduce([k for _, k in srcs])
        out = np.zeros(len(lanes), dtype=U64)
        for part in (0, 1):
            vals = [read((bits >> U64(16 * part)) & U64(0xFFFF), half) for bits, _ in srcs]
            op = ins.opcode
            if op in ("fma", "mad"):
                r = arith.float_fma(*vals)
            elif op in _BINARY:
                r = arith.float_binary(op, vals[0], vals[1])
            elif op in ("neg", "abs"):
                r = arith.float_unary(op, vals[0])
            else:
                raise arith.Unsupported(f"{ins.full_opcode}")
            out |= write(r, half) << U64(16 * part)
        self._write(self._dest(ins).name, lanes, out, known)

    def _unary(self, ins: Instruction, lanes: np.ndarray) -> None:
        types = _types(ins.modifiers)
        t = types[-1] if types else "b32"
        if t in PACKED_TYPES:
            self._packed(ins, lanes, t)
            return
        a, known = self._typed(ins.operands[1], lanes, t)
        if t in FLOAT_TYPES:
            result = arith.float_unary(ins.opcode, a)
        elif t == "pred":
            result = ~a if ins.opcode == "not" else a
        else:
            result = arith.int_unary(ins.opcode, a, t)
            if ins.opcode in ("popc", "clz", "bfind"):
                self._store_result(ins, lanes, result, known, "u32")
                return
        self._store_result(ins, lanes, result, known, t)

    def _mad(self, ins: Instruction, lanes: np.ndarray) -> None:
        types = _types(ins.modifiers)
        t = types[-1] if types else "f32"
        if t in PACKED_TYPES:
            self._packed(ins, lanes, t)
            return
        if any(m == "cc" for m in ins.modifiers):
            self._carry_op(ins, lanes)
            return
        a, ka = self._typed(ins.operands[1], lanes, t)
        b, kb = self._typed(ins.operands[2], lanes, t)
        known = ka & kb
        if t in FLOAT_TYPES:
            c, kc = self._typed(ins.operands[3], lanes, t)
            result = arith.float_fma(a, b, c)
            if "sat" in ins.modifiers:
                result = np.clip(result, 0.0, 1.0)
            self._store_result(ins, lanes, result, known & kc, t)
            return
        mode = "hi" if "hi" in ins.modifiers else "wide" if "wide" in ins.modifiers else "lo"
        out_t = t[0] + str(2 * BITS[t]) if mode == "wide" else t
        c, kc = self._typed(ins.operands[3], lanes, out_t)
        product = arith.int_mul(a, b, t, mode)
        result = product + c
        if "sat" in ins.modifiers and t == "s32":
            result = np.clip(result.astype(np.int64), -(1 << 31), (1 << 31) - 1)
        self._store_result(ins, lanes, result, known & kc, out_t)

    def _mul24(self, ins: Instruction, lanes: np.ndarray) -> None:
        t = (_types(ins.modifiers) or ["u32"])[-1]
        a, ka = self._typed(ins.operands[1], lanes, t)
        b, kb = self._typed(ins.operands[2], lanes, t)
        self._store_result(ins, lanes, arith.mul24(a, b, t, "hi" in ins.modifiers), ka & kb, t)

    def _mad24(self, ins: Instruction, lanes: np.ndarray) -> None:
        t = (_types(ins.modifiers) or ["u32"])[-1]
        a, ka = self._typed(ins.operands[1], lanes, t)
        b, kb = self._typed(ins.operands[2], lanes, t)
        c, kc = self._typed(ins.operands[3], lanes, t)
        self._store_result(ins, lanes, arith.mul24(a, b, t, "hi" in ins.modifiers) + c, ka & kb & kc, t)

    def _sad(self, ins: Instruction, lanes: np.ndarray) -> None:
        t = (_types(ins.modifiers) or ["u32"])[-1]
        a, ka = self._typed(ins.operands[1], lanes, t)
        b, kb = self._typed(ins.operands[2], lanes, t)
        c, kc = self._typed(ins.operands[3], lanes, t)
        diff = np.where(a > b, a - b, b - a)
        self._store_result(ins, lanes, c + diff, ka & kb & kc, t)

    def _carry_op(self, ins: Instruction, lanes: np.ndarray) -> None:
        """``add.cc``/``addc``/``sub.cc``/``subc``/``mad.cc``/``madc``: 32- and 64-bit carry chains."""
        t = (_types(ins.modifiers) or ["u32"])[-1]
        bits = BITS.get(t, 32)
        mask = U64((1 << bits) - 1) if bits < 64 else U64(0xFFFFFFFFFFFFFFFF)
        a, ka = self._value(ins.operands[1], lanes, t)
        b, kb = self._value(ins.operands[2], lanes, t)
        a, b = a & mask, b & mask
        known = ka & kb
        carry_in = self.carry[lanes] if ins.opcode in ("addc", "subc", "madc") else np.zeros(len(lanes), dtype=U64)
        op = ins.opcode.rstrip("c") if ins.opcode in ("addc", "subc", "madc") else ins.opcode
        if op == "mad":
            c, kc = self._value(ins.operands[3], lanes, t)
            known &= kc
            mode = "hi" if "hi" in ins.modifiers else "lo"
            product = write(arith.int_mul(read(a, t), read(b, t), t, mode), t) & mask
            a, b = product, c & mask
            op = "add"
        if op == "add":
            total = a + b + carry_in
            carry = ((total & mask) < a) | (((total & mask) == a) & (carry_in > 0) & (b > 0)) if bits == 64 \
                else (total >> U64(bits)) & U64(1)
        else:
            borrow_in = carry_in
            total = a - b - borrow_in
            carry = (a < b + borrow_in).astype(U64)
        if "cc" in ins.modifiers or ins.opcode in ("addc", "subc", "madc") and "cc" in ins.modifiers:
            self.carry[lanes] = np.asarray(carry).astype(U64)
        self._write(self._dest(ins).name, lanes, total & mask, known)

    def _mov(self, ins: Instruction, lanes: np.ndarray) -> None:
        t = (_types(ins.modifiers) or ["b64"])[-1]
        dest, src = ins.operands[0], ins.operands[1]
        width = BITS.get(t, 64)
        if dest.kind == "vector":                    # unpack: mov.b64 {%r1, %r2}, %rd1
            bits, known = self._value(src, lanes, t)
            parts = [e for e in dest.elements]
            piece = width // max(len(parts), 1)
            for k, element in enumerate(parts):
                if element.kind == "register":
                    self._write(element.name, lanes, (bits >> U64(piece * k)) & U64((1 << piece) - 1), known)
            return
        if src.kind == "vector":                     # pack: mov.b64 %rd1, {%r1, %r2}
            piece = width // max(len(src.elements), 1)
            out = np.zeros(len(lanes), dtype=U64)
            known = np.ones(len(lanes), dtype=bool)
            for k, element in enumerate(src.elements):
                bits, kk = self._value(element, lanes, f"b{piece}")
                out |= (bits & U64((1 << piece) - 1)) << U64(piece * k)
                known &= kk
            self._write(dest.name, lanes, out, known)
            return
        bits, known = self._value(src, lanes, t)
        if t == "pred":
            bits = (bits != 0).astype(U64)
        self._write(dest.name, lanes, bits, known, f"line {ins.location.line} copies an unknown value")

    def _cvt(self, ins: Instruction, lanes: np.ndarray) -> None:
        types = _types(ins.modifiers)
        if len(types) < 2:
            types = types * 2 if types else ["b32", "b32"]
        dst, src = types[0], types[1]
        if dst in PACKED_TYPES or src in PACKED_TYPES:
            raise arith.Unsupported("packed conversion")
        value, known = self._typed(ins.operands[1], lanes, src)
        mods = ins.modifiers
        if src in FLOAT_TYPES:
            if any(m in mods for m in ("rni", "rzi", "rmi", "rpi")):
                value = arith.round_float(value, mods)
            elif dst not in FLOAT_TYPES:
                value = np.trunc(value)
            if dst in FLOAT_TYPES:
                result = value.astype(np.float64 if dst == "f64" else np.float32)
                if "sat" in mods:
                    result = np.clip(result, 0.0, 1.0)
                if "relu" in mods:
                    result = np.maximum(result, 0.0)
            else:
                result = value                          # saturating conversion in write()
        elif dst in FLOAT_TYPES:
            result = value.astype(np.float64 if dst == "f64" else np.float32)
        else:
            result = value
            if "sat" in mods:
                bits = BITS.get(dst, 32)
                lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if dst[0] == "s" else (0, (1 << bits) - 1)
                result = np.clip(value.astype(np.float64), lo, hi)
        self._store_result(ins, lanes, result, known, dst)

    def _cvta(self, ins: Instruction, lanes: np.ndarray) -> None:
        bits, known = self._value(ins.operands[1], lanes, "u64")
        to = "to" in ins.modifiers
        space = _space(ins.modifiers)
        base = {"shared": SHARED_BASE, "local": LOCAL_BASE}.get(space)
        if base is not None:
            if to:
                bits = np.where((bits & ~WINDOW_MASK) == base, bits & WINDOW_MASK, bits)
            else:
                bits = bits + base
        if "u32" in ins.modifiers:
            bits = bits & U64(0xFFFFFFFF)
        self._write(self._dest(ins).name, lanes, bits, known)

    def _setp(self, ins: Instruction, lanes: np.ndarray) -> None:
        types = _types(ins.modifiers)
        t = types[-1] if types else "s32"
        cmp = next((m for m in ins.modifiers if m in arith.COMPARISONS), None)
        if cmp is None:
            raise arith.Unsupported("setp without a comparison")
        if t in PACKED_TYPES:
            raise arith.Unsupported("packed comparison")
        a, ka = self._typed(ins.operands[1], lanes, t)
        b, kb = self._typed(ins.operands[2], lanes, t)
        known = ka & kb
        result = arith.float_compare(cmp, a, b) if t in FLOAT_TYPES else arith.int_compare(cmp, a, b)
        combine = next((m for m in ins.modifiers if m in ("and", "or", "xor")), None)
        other = np.zeros(len(lanes), dtype=bool)
        if combine is not None and len(ins.operands) > 3:
            c, kc = self._value(ins.operands[3], lanes, "pred")
            other = c != 0
            known = known & kc
        first, second = result, ~result
        if combine is not None:
            fn = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[combine]
            first, second = fn(result, other), fn(~result, other)
        dest = ins.operands[0]
        why = f"the comparison at line {ins.location.line} reads unknown values"
        if dest.kind == "pair" and len(dest.elements) == 2:
            self._write(dest.elements[0].name, lanes, first.astype(U64), known, why)
            self._write(dest.elements[1].name, lanes, second.astype(U64), known, why)
        else:
            self._write(dest.name, lanes, first.astype(U64), known, why)

    def _set(self, ins: Instruction, lanes: np.ndarray) -> None:
        types = _types(ins.modifiers)
        dst, src = (types[0], types[-1]) if len(types) >= 2 else ("u32", types[-1] if types else "s32")
        cmp = next((m for m in ins.modifiers if m in arith.COMPARISONS), "eq")
        a, ka = self._typed(ins.operands[1], lanes, src)
        b, kb = self._typed(ins.operands[2], lanes, src)
        result = arith.float_compare(cmp, a, b) if src in FLOAT_TYPES else arith.int_compare(cmp, a, b)
        values = np.where(result, 1.0, 0.0) if dst in FLOAT_TYPES else np.where(result, 0xFFFFFFFF, 0)
        self._store_result(ins, lanes, values, ka & kb, dst)

    def _selp(self, ins: Instruction, lanes: np.ndarray) -> None:
        t = (_types(ins.modifiers) or ["b32"])[-1]
        a, ka = self._value(ins.operands[1], lanes, t)
        b, kb = self._value(ins.operands[2], lanes, t)
        c, kc = self._value(ins.operands[3], lanes, "pred")
        choose = c != 0
        known = kc & np.where(choose, ka, kb)
        self._write(self._dest(ins).name, lanes, np.where(choose, a, b), known,
                    f"the selection at line {ins.location.line} reads unknown values")

    def _slct(self, ins: Instruction, lanes: np.ndarray) -> None:
        types = _types(ins.modifiers)
        t, ct = types[0], types[-1]
        a, ka = self._value(ins.operands[1], lanes, t)
        b, kb = self._value(ins.operands[2], lanes, t)
        c, kc = self._typed(ins.operands[3], lanes, ct)
        choose = c >= 0
        self._write(self._dest(ins).name, lanes, np.where(choose, a, b), kc & np.where(choose, ka, kb))

    def _bfe(self, ins: Instruction, lanes: np.ndarray) -> None:
        t = (_types(ins.modifiers) or ["u32"])[-1]
        a, ka = self._typed(ins.operands[1], lanes, t)
        p, kp = self._typed(ins.operands[2], lanes, "u32")
        n, kn = self._typed(ins.operands[3], lanes, "u32")
        self._store_result(ins, lanes, arith.bfe(a, p, n, t), ka & kp & kn, t)

    def _bfi(self, ins: Instruction, lanes: np.ndarray) -> None:
        t = (_types(ins.modifiers) or ["b32"])[-1]
        a, ka = self._typed(ins.operands[1], lanes, t)
        b, kb = self._typed(ins.operands[2], lanes, t)
        p, kp = self._typed(ins.operands[3], lanes, "u32")
        n, kn = self._typed(ins.operands[4], lanes, "u32")
        self._store_result(ins, lanes, arith.bfi(a, b, p, n, t), ka & kb & kp & kn, t)

    def _prmt(self, ins: Instruction, lanes: np.ndarray) -> None:
        a, ka = self._typed(ins.operands[1], lanes, "b32")
        b, kb = self._typed(ins.operands[2], lanes, "b32")
        c, kc = self._typed(ins.operands[3], lanes, "b32")
        self._store_result(ins, lanes, arith.prmt(a, b, c, ins.modifiers), ka & kb & kc, "b32")

    def _lop3(self, ins: Instruction, lanes: np.ndarray) -> None:
        a, ka = self._typed(ins.operands[1], lanes, "b32")
        b, kb = self._typed(ins.operands[2], lanes, "b32")
        c, kc = self._typed(ins.operands[3], lanes, "b32")
        lut = ins.operands[4]
        if lut.kind != "immediate":
            raise arith.Unsupported("lop3 with a register table")
        self._store_result(ins, lanes, arith.lop3(a, b, c, int(lut.value or 0)), ka & kb & kc, "b32")

    def _shf(self, ins: Instruction, lanes: np.ndarray) -> None:
        a, ka = self._typed(ins.operands[1], lanes, "b32")
        b, kb = self._typed(ins.operands[2], lanes, "b32")
        c, kc = self._typed(ins.operands[3], lanes, "u32")
        result = arith.funnel_shift(a, b, c, "l" in ins.modifiers, "clamp" in ins.modifiers)
        self._store_result(ins, lanes, result, ka & kb & kc, "b32")

    def _testp(self, ins: Instruction, lanes: np.ndarray) -> None:
        t = (_types(ins.modifiers) or ["f32"])[-1]
        what = next((m for m in ins.modifiers if m in ("finite", "infinite", "number", "notanumber", "normal",
                                                       "subnormal")), "finite")
        a, known = self._typed(ins.operands[1], lanes, t)
        self._write(self._dest(ins).name, lanes, arith.testp(what, a).astype(U64), known)

    def _unknown_result(self, ins: Instruction, lanes: np.ndarray, why: str = "") -> None:
        reason = why or f"{ins.full_opcode} at line {ins.location.line} is not modelled"
        for reg in ins.dests:
            self._poison(reg, lanes, reason)

    def _no_op(self, ins: Instruction, lanes: np.ndarray) -> None:
        return

    # ------------------------------------------------------------------ warps
    def _warp_rows(self, lanes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        warp = lanes >> 5
        warps, row = np.unique(warp, return_inverse=True)
        return warps, row, lanes & 31

    def _shuffle(self, ins: Instruction, lanes: np.ndarray) -> None:
        mode = next((m for m in ins.modifiers if m in ("up", "down", "bfly", "idx")), "idx")
        dest = ins.operands[0]
        a_op, b_op, c_op = ins.operands[1], ins.operands[2], ins.operands[3]
        b, kb = self._value(b_op, lanes, "b32")
        c, kc = self._value(c_op, lanes, "b32")
        lane = (lanes & 31).astype(np.int64)
        bval = (b & U64(31)).astype(np.int64)
        cval = (c & U64(31)).astype(np.int64)
        segmask = ((c >> U64(8)) & U64(31)).astype(np.int64)
        max_lane = (lane & segmask) | (cval & ~segmask)
        min_lane = lane & segmask
        if mode == "up":
            j = lane - bval
            ok = j >= max_lane
        elif mode == "down":
            j = lane + bval
            ok = j <= max_lane
        elif mode == "bfly":
            j = lane ^ bval
            ok = j <= max_lane
        else:
            j = min_lane | (bval & ~segmask)
            ok = j <= max_lane
        del min_lane
        j = np.where(ok, j, lane)
        source = (lanes & ~np.int64(31)) + np.clip(j, 0, 31)
        a_row = self.rows.get(a_op.name or "") if a_op.kind == "register" else None
        if a_row is not None:
            value, ka = self.regs[a_row, source], self.known[a_row, source]
        else:
            value, ka = self._value(a_op, lanes, "b32")
        known = ka & kb & kc
        name = dest.elements[0].name if dest.kind == "pair" else dest.name
        self._write(name, lanes, value, known, f"the shuffle at line {ins.location.line} reads unknown values")
        if dest.kind == "pair" and len(dest.elements) == 2:
            self._write(dest.elements[1].name, lanes, ok.astype(U64), kb & kc)

    def _vote(self, ins: Instruction, lanes: np.ndarray) -> None:
        mode = next((m for m in ins.modifiers if m in ("all", "any", "uni", "ballot")), "any")
        value, known = self._value(ins.operands[1], lanes, "pred")
        pred = value != 0
        warps, row, lane = self._warp_rows(lanes)
        n = len(warps)
        ballot = np.zeros(n, dtype=U64)
        np.bitwise_or.at(ballot, row, np.where(pred, U64(1) << lane.astype(U64), U64(0)))
        active = np.zeros(n, dtype=U64)
        np.bitwise_or.at(active, row, U64(1) << lane.astype(U64))
        all_known = np.ones(n, dtype=bool)
        np.logical_and.at(all_known, row, known)
        if mode == "ballot":
            result = ballot[row]
        elif mode == "all":
            result = (ballot == active)[row].astype(U64)
        elif mode == "any":
            result = (ballot != 0)[row].astype(U64)
        else:
            result = ((ballot == active) | (ballot == 0))[row].astype(U64)
        self._write(self._dest(ins).name, lanes, result, all_known[row],
                    f"the vote at line {ins.location.line} reads unknown values")

    def _activemask(self, ins: Instruction, lanes: np.ndarray) -> None:
        warps, row, lane = self._warp_rows(lanes)
        active = np.zeros(len(warps), dtype=U64)
        np.bitwise_or.at(active, row, U64(1) << lane.astype(U64))
        self._write(self._dest(ins).name, lanes, active[row], np.ones(len(lanes), dtype=bool))

    def _elect(self, ins: Instruction, lanes: np.ndarray) -> None:
        warps, row, lane = self._warp_rows(lanes)
        first = np.full(len(warps), 99, dtype=np.int64)
        np.minimum.at(first, row, lane)
        leader = lane == first[row]
        dest = ins.operands[0]
        if dest.kind == "pair" and len(dest.elements) == 2:
            self._write(dest.elements[0].name, lanes, (first[row] + (lanes & ~np.int64(31))).astype(U64) & U64(31),
                        np.ones(len(lanes), dtype=bool))
            self._write(dest.elements[1].name, lanes, leader.astype(U64), np.ones(len(lanes), dtype=bool))
        else:
            self._write(dest.name, lanes, leader.astype(U64), np.ones(len(lanes), dtype=bool))

    def _redux(self, ins: Instruction, lanes: np.ndarray) -> None:
        op = next((m for m in ins.modifiers if m in ("add", "min", "max", "and", "or", "xor")), None)
        t = (_types(ins.modifiers) or ["u32"])[-1]
        if op is None or t in FLOAT_TYPES:
            raise arith.Unsupported("redux")
        value, known = self._typed(ins.operands[1], lanes, t)
        warps, row, _ = self._warp_rows(lanes)
        n = len(warps)
        v = value.astype(np.int64)
        if op == "add":
            acc = np.zeros(n, dtype=np.int64)
            np.add.at(acc, row, v)
        elif op in ("min", "max"):
            acc = np.full(n, np.iinfo(np.int64).max if op == "min" else np.iinfo(np.int64).min, dtype=np.int64)
            (np.minimum if op == "min" else np.maximum).at(acc, row, v)
        else:
            acc = np.zeros(n, dtype=np.int64) if op != "and" else np.full(n, -1, dtype=np.int64)
            {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op].at(acc, row, v)
        all_known = np.ones(n, dtype=bool)
        np.logical_and.at(all_known, row, known)
        self._store_result(ins, lanes, acc[row], all_known[row], t)

    def _barrier_reduction(self, ins: Instruction, lanes: np.ndarray) -> None:
        """``bar.red.popc/and/or``: the block-wide result is written when the barrier releases;
        the run writes it at arrival, which only the block's own later instructions read."""
        op = next((m for m in ins.modifiers if m in ("popc", "and", "or")), "or")
        pred_op = ins.operands[-1]
        value, known = self._value(pred_op, lanes, "pred")
        rows = self.block_row[lanes]
        blocks = np.unique(rows)
        result = np.zeros(len(lanes), dtype=U64)
        for blk in blocks.tolist():
            sel = rows == blk
            votes = value[sel] != 0
            if op == "popc":
                r = U64(int(votes.sum()))
            elif op == "and":
                r = U64(bool(votes.all()))
            else:
                r = U64(bool(votes.any()))
            result[sel] = r
        self._write(ins.operands[0].name, lanes, result, np.ones(len(lanes), dtype=bool) & known.all())

    def _mbarrier(self, ins: Instruction, lanes: np.ndarray) -> None:
        """Transaction barriers of asynchronous copies: the run completes every copy at once, so a
        ``try_wait``/``test_wait`` succeeds; an ``arrive`` returns a state token nothing decodes."""
        full = ins.full_opcode
        if "try_wait" in full or "test_wait" in full:
            self._write(ins.operands[0].name if ins.operands[0].kind == "register" else None, lanes,
                        np.ones(len(lanes), dtype=U64), np.ones(len(lanes), dtype=bool))
        elif ins.dests and ins.operands and ins.operands[0].kind == "register":
            self._write(ins.operands[0].name, lanes, np.zeros(len(lanes), dtype=U64), np.ones(len(lanes), dtype=bool))

    # ------------------------------------------------------------------ memory
    def _access(self, ins: Instruction, operand: Operand, lanes: np.ndarray
                ) -> tuple[str, np.ndarray, np.ndarray]:
        """(space, address, known): the address of each lane's access, generic addresses resolved."""
        space = _space(ins.modifiers)
        address, known = self._address(operand, lanes)
        if space == "generic":
            window = address & ~WINDOW_MASK
            if (window == SHARED_BASE).all():
                return "shared", address & WINDOW_MASK, known
            if (window == LOCAL_BASE).all():
                return "local", address & WINDOW_MASK, known
            if ((window == SHARED_BASE) | (window == LOCAL_BASE)).any():
                return "mixed", address, known
            return "global", address, known
        if space in ("shared", "local"):
            window = address & ~WINDOW_MASK
            address = np.where((window == SHARED_BASE) | (window == LOCAL_BASE), address & WINDOW_MASK, address)
        return space, address, known

    def _local_physical(self, lanes: np.ndarray, offset: np.ndarray) -> np.ndarray:
        """Where a thread's local word lives: consecutive lanes' same word are adjacent, so a
        warp reading one local variable reads one line."""
        warp = (lanes >> 5).astype(U64)
        frame_words = U64(max(1, -(-self.image.local_size // 4)))
        word = offset >> U64(2)
        lane = (lanes & 31).astype(U64)
        return LOCAL_BASE + ((warp * frame_words + word) * U64(32) + lane) * U64(4) + (offset & U64(3))

    def _elements(self, ins: Instruction, data: Operand) -> tuple[list[Operand], str, int]:
        types = _types(ins.modifiers)
        t = types[-1] if types else "b32"
        elements = list(data.elements) if data.kind == "vector" else [data]
        return elements, t, max(1, BITS.get(t, 32) // 8)

    def _request_kind(self, ins: Instruction) -> int:
        if ins.opcode in ("atom", "red"):
            return ATOMIC
        if ins.opcode == "st":
            return STORE
        if any(m in ("cg", "cv", "volatile", "relaxed", "acquire") for m in ins.modifiers):
            return LOAD_UNCACHED
        return LOAD_CACHED

    def _load(self, ins: Instruction, lanes: np.ndarray) -> None:
        dest, address_op = ins.operands[0], ins.operands[1]
        elements, t, width = self._elements(ins, dest)
        total = width * len(elements)
        reached = _warps_of(lanes)
        space, address, known = self._access(ins, address_op, lanes)
        if space == "param":
            offsets = address.astype(np.int64)
            bits_all = [self.image.load_param(offsets + k * width, width) for k in range(len(elements))]
            for element, (bits, kk) in zip(elements, bits_all, strict=True):
                if element.kind == "register":
                    self._write(element.name, lanes, bits, kk & known, "a kernel argument has no value")
            return
        self._record_with(ins, address_op, space, "load", total, lanes, address, known, reached)
        for k, element in enumerate(elements):
            if element.kind != "register":
                continue
            bits, kk = self._read_memory(space, lanes, address + U64(k * width), width, t, known)
            self._write(element.name, lanes, bits, kk,
                        f"line {ins.location.line} loads data the launch does not describe")

    def _read_memory(self, space: str, lanes: np.ndarray, address: np.ndarray, width: int, t: str,
                     known: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if not len(lanes):
            return np.zeros(0, dtype=U64), np.zeros(0, dtype=bool)
        if space == "shared":
            bits, kk = self.image.load_block("shared", self.block_row[lanes], address, width)
        elif space == "local":
            bits, kk = self.image.load_block("local", lanes, address, width)
        elif space in ("global", "const", "tex"):
            bits, kk = self.image.load_global(address, width, t)
        else:
            return np.zeros(len(lanes), dtype=U64), np.zeros(len(lanes), dtype=bool)
        return bits, kk & known

    def _write_memory(self, space: str, lanes: np.ndarray, address: np.ndarray, width: int,
                      bits: np.ndarray, known: np.ndarray) -> None:
        if not len(lanes):
            return
        if space == "shared":
            self.image.store_block("shared", self.block_row[lanes], address, width, bits, known)
        elif space == "local":
            self.image.store_block("local", lanes, address, width, bits, known)
        elif space == "global":
            self.image.store_global(address, width, bits, known)

    def _store(self, ins: Instruction, lanes: np.ndarray) -> None:
        address_op, data = ins.operands[0], ins.operands[1]
        elements, t, width = self._elements(ins, data)
        reached = _warps_of(lanes)
        space, address, known = self._access(ins, address_op, lanes)
        self._record_with(ins, address_op, space, "store", width * len(elements), lanes, address, known, reached)
        for k, element in enumerate(elements):
            bits, kk = self._value(element, lanes, t)
            ok = known
            self._write_memory(space, lanes[ok], address[ok] + U64(k * width), width, bits[ok], kk[ok])

    def _record_with(self, ins: Instruction, address_op: Operand, space: str, kind: str, width: int,
                     lanes: np.ndarray, address: np.ndarray, known: np.ndarray, reached: int) -> None:
        rec = self.recorder
        if len(lanes) and not known.all():
            base = address_op.base.name if address_op.kind == "address" and address_op.base is not None else ""
            rec.unknown(ins.index, space if space != "mixed" else "global", kind, width, int((~known).sum()),
                        self.why.get(base or "", "its address depends on values the run does not know"))
            lanes, address = lanes[known], address[known]
        if space == "mixed":
            rec.unknown(ins.index, "global", kind, width, len(lanes), "its generic address mixes state spaces")
        elif space == "shared":
            rec.shared_access(ins.index, kind, width, lanes, address, reached)
        elif space == "const":
            rec.constant_access(ins.index, width, lanes, address, reached)
        elif space in ("global", "tex"):
            request = {"store": STORE, "atomic": ATOMIC}.get(kind, self._request_kind(ins))
            rec.global_access(ins.index, space, kind, request, width, lanes, address, reached, self.block_of_warp)
        elif space == "local":
            rec.global_access(ins.index, "local", kind, LOAD_CACHED if kind == "load" else STORE, width, lanes,
                              self._local_physical(lanes, address), reached, self.block_of_warp)

    def _atomic(self, ins: Instruction, lanes: np.ndarray) -> None:
        has_dest = ins.opcode == "atom"
        address_op = ins.operands[1] if has_dest else ins.operands[0]
        srcs = ins.operands[2:] if has_dest else ins.operands[1:]
        types = _types(ins.modifiers)
        t = types[-1] if types else "b32"
        width = max(1, BITS.get(t, 32) // 8)
        op = next((m for m in ins.modifiers if m in ("add", "min", "max", "inc", "dec", "cas", "exch", "and", "or",
                                                       "xor")), "add")
        reached = _warps_of(lanes)
        space, address, known = self._access(ins, address_op, lanes)
        self._record_with(ins, address_op, space, "atomic", width, lanes, address, known, reached)
        if not len(lanes):
            return
        values = [self._value(o, lanes, t) for o in srcs]
        value_known = np.logical_and.reduce([k for _, k in values]) if values else np.ones(len(lanes), bool)
        sel = np.flatnonzero(known)
        old_all = np.zeros(len(lanes), dtype=U64)
        old_known = np.zeros(len(lanes), dtype=bool)
        if len(sel) and space in ("global", "shared"):
            self._apply_atomics(op, t, width, space, lanes, address, sel, values, value_known, old_all, old_known)
        if has_dest:
            self._write(ins.operands[0].name, lanes, old_all, old_known,
                        f"the atomic at line {ins.location.line} returns data the run does not know")

    def _apply_atomics(self, op: str, t: str, width: int, space: str, lanes: np.ndarray, address: np.ndarray,
                       sel: np.ndarray, values: list[tuple[np.ndarray, np.ndarray]], value_known: np.ndarray,
                       old_all: np.ndarray, old_known: np.ndarray) -> None:
        """The lanes' atomics applied one after another in lane order (a fixed, documented order):
        each lane's old value is what the lanes before it on the same word left."""
        addr = address[sel]
        key = addr if space == "global" else (self.block_row[lanes[sel]].astype(U64) << U64(40)) | addr
        uniq, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
        head_lanes = lanes[sel][first]
        base, base_known = self._read_memory(space, head_lanes, addr[first], width, t, np.ones(len(first), bool))
        order = np.argsort(inverse, kind="stable")
        group = inverse[order]
        operand = values[0][0][sel][order] if values else np.zeros(len(sel), U64)
        okv = value_known[sel][order]
        final = base.copy()
        final_known = base_known.copy()
        olds = np.zeros(len(sel), dtype=U64)
        olds_known = np.zeros(len(sel), dtype=bool)
        starts = np.searchsorted(group, np.arange(len(uniq)))
        if op == "add":
            typed = read(operand, t)
            acc = typed.astype(np.float64) if t in FLOAT_TYPES else typed.astype(np.int64)
            cs = np.cumsum(acc)
            before = np.where(starts > 0, cs[np.maximum(starts - 1, 0)], 0)[group]
            exclusive = cs - acc - before
            base_typed = read(base, t).astype(acc.dtype)
            olds = write((base_typed[group] + exclusive).astype(typed.dtype), t)
            totals = np.add.reduceat(acc, starts) if len(starts) else acc[:0]
            final = write((base_typed + totals).astype(typed.dtype), t)
            group_ok = np.logical_and.reduceat(okv, starts) if len(starts) else okv[:0]
            final_known = base_known & group_ok
            olds_known = (base_known & group_ok)[group]
        else:
            for g in range(len(uniq)):
                current, current_known = final[g:g + 1], bool(final_known[g])
                for j in range(starts[g], starts[g] + counts[g]):
                    olds[j], olds_known[j] = current[0], current_known
                    lane_index = sel[order[j]]
                    current = self._atomic_value(op, t, current, operand[j:j + 1], values, lane_index)
                    current_known = current_known and bool(okv[j])
                final[g], final_known[g] = current[0], current_known
        back = np.empty(len(sel), dtype=np.int64)
        back[order] = np.arange(len(sel))
        old_all[sel] = olds[back]
        old_known[sel] = olds_known[back]
        self._write_memory(space, head_lanes, addr[first], width, final, final_known)

    @staticmethod
    def _atomic_value(op: str, t: str, old: np.ndarray, operand: np.ndarray,
                      values: list[tuple[np.ndarray, np.ndarray]], i: int) -> np.ndarray:
        a, b = read(old, t), read(operand, t)
        if op == "add":
            r = a + b
        elif op == "min":
            r = np.minimum(a, b)
        elif op == "max":
            r = np.maximum(a, b)
        elif op == "exch":
            r = b
        elif op == "cas":
            new = read(values[1][0][i:i + 1], t)
            r = np.where(a == b, new, a)
        elif op == "inc":
            r = np.where(a >= b, 0, a + 1)
        elif op == "dec":
            r = np.where((a == 0) | (a > b), b, a - 1)
        else:
            ua, ub = old.astype(U64), operand.astype(U64)
            r = ua & ub if op == "and" else ua | ub if op == "or" else ua ^ ub
            return r
        return write(r, t)

    def _copy(self, ins: Instruction, lanes: np.ndarray) -> None:
        """``cp.async.ca/cg.shared.global [dst], [src], bytes``: the copy happens at once; its
        global read is recorded like a load (``.cg`` bypasses L1) and its shared write like a store."""
        full = ins.full_opcode
        if not full.startswith("cp.async") or "bulk" in full:
            if "bulk" in full:
                self.recorder.unknown(ins.index, "global", "load", 0, len(lanes),
                                      "bulk (TMA) copies are not followed by the run")
            return
        if len(ins.operands) < 3:
            return
        dst_op, src_op, size_op = ins.operands[0], ins.operands[1], ins.operands[2]
        size = int(size_op.value or 16) if size_op.kind == "immediate" else 16
        reached = _warps_of(lanes)
        run = lanes
        src, known_src = self._address(src_op, run)
        dst, known_dst = self._address(dst_op, run)
        dst = np.where((dst & ~WINDOW_MASK) == SHARED_BASE, dst & WINDOW_MASK, dst)
        kind = LOAD_UNCACHED if "cg" in ins.modifiers else LOAD_CACHED
        rec = self.recorder
        ok = known_src
        if len(run) and not ok.all():
            rec.unknown(ins.index, "global", "load", size, int((~ok).sum()), "its source address is unknown")
        rec.global_access(ins.index, "global", "load", kind, size, run[ok], src[ok], reached, self.block_of_warp)
        for k in range(0, size, 4):
            piece = min(4, size - k)
            bits, kk = self.image.load_global(src[ok] + U64(k), piece, "b32")
            self.image.store_block("shared", self.block_row[run[ok & known_dst]], dst[ok & known_dst] + U64(k),
                                   piece, bits[known_dst[ok]], kk[known_dst[ok]])

    def _texture(self, ins: Instruction, lanes: np.ndarray) -> None:
        """``tex.1d`` at an integer coordinate reads texel ``index`` of the texture's buffer: an
        L1/texture-path load of base + index x texel bytes (4 bytes per component the kernel
        uses). Other geometries have results the run treats as unknown and no address."""
        dest, coords = ins.operands[0], ins.operands[1]
        elements = list(dest.elements) if dest.kind == "vector" else [dest]
        used = [e for e in elements if e.kind == "register" and e.name in self.read_registers]
        reached = _warps_of(lanes)
        geometry = next((m for m in ins.modifiers if m in ("1d", "2d", "3d", "a1d", "a2d", "cube", "acube",
                                                           "2dms", "a2dms")), "")
        types = _types(ins.modifiers)
        coord_t = types[-1] if types else "s32"
        if geometry != "1d" or coord_t[0] not in "su" or coords.kind != "address" or not coords.elements:
            self.recorder.unknown(ins.index, "tex", "load", 4 * max(len(used), 1), len(lanes),
                                  f"{geometry or 'this'} texture fetches have no address in the run")
            for e in elements:
                if e.kind == "register":
                    self._poison(e.name, lanes, "a texture fetch the run does not follow")
            return
        handle = coords.base
        base, kb = self._value(handle, lanes, "u64") if handle is not None else (np.zeros(len(lanes), U64),
                                                                                  np.zeros(len(lanes), bool))
        coord = coords.elements[0].elements[0] if coords.elements[0].kind == "vector" else coords.elements[0]
        index, ki = self._typed(coord, lanes, coord_t)
        texel = 4 * max(len(used), 1)
        address = base + (index.astype(np.int64) * texel).astype(np.int64).view(U64)
        known = kb & ki
        self._record_with(ins, coords, "tex", "load", texel, lanes, address, known, reached)
        for k, element in enumerate(elements):
            if element.kind != "register":
                continue
            bits, kk = self.image.load_global(address + U64(4 * k), 4, "f32") if len(lanes) else \
                (np.zeros(0, U64), np.zeros(0, bool))
            self._write(element.name, lanes, bits, kk & known)

    def _ldmatrix(self, ins: Instruction, lanes: np.ndarray) -> None:
        """``ldmatrix``: each of the first 8/16/32 lanes names one 16-byte row in shared memory;
        the fragments it returns are data the run does not follow."""
        dest, address_op = ins.operands[0], ins.operands[1]
        count = next((int(m[1]) for m in ins.modifiers if m in ("x1", "x2", "x4")), 1)
        reached = _warps_of(lanes)
        rows = lanes[(lanes & 31) < 8 * count]
        space, address, known = self._access(ins, address_op, rows)
        self._record_with(ins, address_op, "shared", "load", 16, rows, address, known, reached)
        for e in (dest.elements if dest.kind == "vector" else [dest]):
            if e.kind == "register":
                self._poison(e.name, lanes, "matrix fragments are not followed by the run")


# opcode -> handler (unbound: a machine holding bound methods of itself would be a reference cycle
# that keeps its lane arrays alive until the cyclic collector runs)
_HANDLERS: dict[str, Callable[[Machine, Instruction, np.ndarray], None]] = {
    **dict.fromkeys(_BINARY, Machine._binary), **dict.fromkeys(_UNARY, Machine._unary),
    "mad": Machine._mad, "fma": Machine._mad, "mad24": Machine._mad24, "mul24": Machine._mul24,
    "sad": Machine._sad, "mov": Machine._mov, "cvt": Machine._cvt, "cvta": Machine._cvta, "setp": Machine._setp,
    "set": Machine._set, "selp": Machine._selp, "slct": Machine._slct, "bfe": Machine._bfe, "bfi": Machine._bfi,
    "prmt": Machine._prmt, "lop3": Machine._lop3, "shf": Machine._shf, "testp": Machine._testp,
    "addc": Machine._carry_op, "subc": Machine._carry_op, "madc": Machine._carry_op,
    "ld": Machine._load, "ldu": Machine._load, "st": Machine._store, "atom": Machine._atomic,
    "red": Machine._atomic, "cp": Machine._copy, "tex": Machine._texture, "tld4": Machine._unknown_result,
    "suld": Machine._unknown_result, "sust": Machine._no_op, "shfl": Machine._shuffle, "vote": Machine._vote,
    "activemask": Machine._activemask, "redux": Machine._redux, "elect": Machine._elect,
    "mbarrier": Machine._mbarrier, "ldmatrix": Machine._ldmatrix, "stmatrix": Machine._no_op,
}
