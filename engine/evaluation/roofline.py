"""The hierarchical roofline of an evaluation: the kernel's work against the bytes it moves at L1,
L2 and DRAM, and the ceilings of the GPU profile it ran on.

Work is floating-point operations (``flop``: add, sub and mul count one per lane, fma and mad two,
packed half types twice that; ``mma``/``wmma``/``wgmma`` 2·m·n·k per matrix product; divisions,
square roots and transcendental functions count nothing, as Nsight Compute's achieved FLOP/s
counts them), or, for a kernel without floating-point arithmetic, issued warp instructions
(``instruction``, the instruction roofline). Every count is the launch's: the Pipeline
description's per-warp dynamic counts (the mean over a block's warps) × the warps of the grid,
with every lane of a warp taken as active.

Bytes per level, over the launch:

* **L1**: every global sector requested (requests × sectors per request × 32 B) and every
  shared-memory wavefront (requests × bank-conflict ways × 128 B): the L1/shared data path;
* **L2**: the global sectors L1 did not serve (the memory model's L1 hit share);
* **DRAM**: the bytes read and written in DRAM (``engine.memory.traffic``).

Ceilings come from the profile: a compute ceiling per pipe (FP32, FP16, FP64, tensor) is the
FLOP of one warp instruction of that pipe's representative (``fma.rn.f32``, ``fma.rn.f16x2``,
``fma.rn.f64``, ``mma…m16n8k16``) over the SM cycles the profile charges it (λ), and the
instruction ceiling is the issue limit; a memory ceiling per level is 128 bytes over the level's λ
(``[pipeline.memory]``: ``l1_lam``, ``l2_lam``, ``dram_lam``, each measured per SM with every SM
streaming). L1 and the pipes are per SM and scale with the SMs the grid occupies; L2 and DRAM are
shared by the GPU. Time is the Pipeline simulation's kernel cycles (the launch cost included, as
Nsight Compute measures it) at the profile's clock.

The bound is the ceiling that needs the longest time for the kernel's work or bytes; it names
what a roofline argument says limits the kernel (the verdict, :mod:`engine.evaluation.verdict`,
says what the simulation saw).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.errors import WarplineError
from engine.memory.patterns import SECTOR
from engine.units import MemorySpace, Unit

WORK_FLOP = "flop"
WORK_INSTRUCTION = "instruction"
WORKS = (WORK_FLOP, WORK_INSTRUCTION)
LEVELS = ("L1", "L2", "DRAM")
LINE_BYTES = 128                         # what a λ of [pipeline.memory] moves
TIME_MODEL = "pipeline"                  # the model whose kernel cycles time the kernel

# pipe -> (its representative instruction, its unit, FLOP of one warp instruction of it)
PIPES: dict[str, tuple[str, Unit, float]] = {
    "FP32": ("fma.rn.f32", Unit.ALU, 64.0),
    "FP16": ("fma.rn.f16x2", Unit.ALU, 128.0),
    "FP64": ("fma.rn.f64", Unit.FP64, 64.0),
    "tensor": ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", Unit.TENSOR, 2.0 * 16 * 8 * 16),
}
_ARITHMETIC = {"add": 1.0, "sub": 1.0, "mul": 1.0, "fma": 2.0, "mad": 2.0}
_SHAPE = re.compile(r"^m(\d+)n(\d+)k(\d+)$")


@dataclass(frozen=True)
class Ceiling:
    """One roof: a pipe's FLOP/s (or instructions/s) or a level's bytes/s, for the SMs in use."""

    name: str               # "FP32", "tensor", "issue", "L1", "L2", "DRAM"
    kind: str               # "compute" or "memory"
    per_second: float
    source: str             # the profile key (or the fallback) it comes from
    used: bool = True       # compute: the kernel has work on this pipe


@dataclass(frozen=True)
class LevelPoint:
    """The kernel at one memory level: its bytes there and its work per byte."""

    level: str
    bytes: float
    intensity: float | None  # work per byte; None without bytes at that level


@dataclass
class Roofline:
    work: str                               # WORK_FLOP or WORK_INSTRUCTION
    work_total: float                       # FLOP (or warp instructions) of the launch
    work_by_pipe: dict[str, float]          # FLOP per pipe (flop mode)
    kernel_cycles: float                    # the time model's kernel cycles
    clock_mhz: float
    sms_used: int
    points: list[LevelPoint]
    compute: list[Ceiling]
    memory: list[Ceiling]
    bound: str                              # a ceiling's name
    times: dict[str, float]                 # ceiling name -> seconds it needs for the kernel
    notes: list[str] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return self.kernel_cycles / (self.clock_mhz * 1e6) if self.clock_mhz > 0 else math.nan

    @property
    def attained(self) -> float:
        """Work per second over the kernel's time."""
        return self.work_total / self.seconds if self.seconds > 0 else 0.0

    @property
    def unit(self) -> str:
        return "FLOP" if self.work == WORK_FLOP else "warp instr."

    def rate_text(self, value: float) -> str:
        """Work per second in this roofline's unit (FLOP/s or instr/s)."""
        unit = Ceiling("issue" if self.work == WORK_INSTRUCTION else "FP32", "compute", value, "")
        return format_rate(value, unit)

    def peak_compute(self) -> Ceiling | None:
        used = [c for c in self.compute if c.used] or self.compute
        return max(used, key=lambda c: c.per_second, default=None)

    def ceiling(self, name: str) -> Ceiling | None:
        return next((c for c in self.compute + self.memory if c.name == name), None)

    def attainable(self, level: str) -> float | None:
        """What the roofs allow at ``level``'s intensity: min(peak compute, bandwidth × intensity)."""
        point = next((p for p in self.points if p.level == level), None)
        roof, peak = self.ceiling(level), self.peak_compute()
        if point is None or point.intensity is None or roof is None or peak is None:
            return None
        return min(peak.per_second, roof.per_second * point.intensity)

    def sentence(self) -> str:
        bound = self.ceiling(self.bound)
        if bound is None:
            return "No roofline bound: the kernel does no work the roofline counts."
        peak = self.peak_compute()
        share = self.times[self.bound] / self.seconds if self.seconds > 0 else 0.0
        what = (f"{bound.name} bandwidth" if bound.kind == "memory"
                else f"the {bound.name} pipe's peak" if bound.name != "issue" else "the issue rate")
        text = (f"Roofline: {what} bounds this kernel; at {format_rate(bound.per_second, bound)} it needs "
                f"{share:.0%} of the predicted time.")
        if share < 0.5:
            text += " The kernel is far below every roof: latency, not throughput, limits it."
        elif peak is not None and bound.kind == "memory":
            text += f" Peak compute ({peak.name}) is {format_rate(peak.per_second, peak)}."
        return text

    def as_dict(self) -> dict[str, Any]:
        return {
            "work": self.work, "work_unit": self.unit, "work_total": self.work_total,
            "work_by_pipe": dict(self.work_by_pipe), "time_model": TIME_MODEL,
            "kernel_cycles": self.kernel_cycles, "seconds": self.seconds, "attained_per_second": self.attained,
            "sms_used": self.sms_used, "bound": self.bound, "verdict": self.sentence(),
            "levels": [{"level": p.level, "bytes": p.bytes, "intensity": p.intensity,
                        "attainable_per_second": self.attainable(p.level)} for p in self.points],
            "ceilings": [{"name": c.name, "kind": c.kind, "per_second": c.per_second, "source": c.source,
                          "used": c.used, "seconds_needed": self.times.get(c.name)}
                         for c in self.compute + self.memory],
            "notes": list(self.notes),
        }

    def text(self) -> str:
        lines = [self.sentence(),
                 f"  work: {self.work_total:,.0f} {self.unit} in {self.kernel_cycles:,.0f} kernel cycles "
                 f"({self.seconds * 1e6:,.3f} µs) = {self.rate_text(self.attained)}"
                 f" on {self.sms_used} SMs"]
        lines.append("  level        bytes   intensity     attainable")
        for p in self.points:
            att = self.attainable(p.level)
            lines.append(f"  {p.level:<5} {p.bytes:>12,.0f}  {_fmt(p.intensity):>10}  "
                         f"{'—' if att is None else self.rate_text(att):>13}")
        lines.append("  ceiling      per second                 needs    from")
        for c in self.compute + self.memory:
            need = self.times.get(c.name)
            lines.append(f"  {c.name:<7} {format_rate(c.per_second, c):>18} {'' if c.used else '(unused)':>9} "
                         f"{'—' if need is None else f'{need * 1e6:,.3f} µs':>12}    {c.source}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3g}"


def format_rate(value: float, ceiling: Ceiling | None) -> str:
    """``3.16 TB/s``, ``67.2 TFLOP/s``, ``1.02 Tinstr/s``."""
    unit = "B/s" if ceiling is not None and ceiling.kind == "memory" else \
        ("instr/s" if ceiling is not None and ceiling.name == "issue" else "FLOP/s")
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


# ---- work ------------------------------------------------------------------------------------------
def flop_per_warp_instruction(instruction: Any, warp_size: int = 32) -> tuple[str, float] | None:
    """(pipe, FLOP) of one warp executing ``instruction`` (an ``engine.ptx`` Instruction), or None
    when it does no floating-point operation the roofline counts."""
    op, mods = instruction.opcode, tuple(instruction.modifiers)
    if op in ("mma", "wmma", "wgmma"):
        shape = next((m for m in mods if _SHAPE.match(m)), None)
        if shape is None or (op == "wmma" and "mma" not in mods) or (op == "wgmma" and "mma_async" not in mods):
            return None
        m, n, k = (int(x) for x in _SHAPE.match(shape).groups())  # type: ignore[union-attr]
        # wgmma: the four warps of a warp group issue one product between them
        return "tensor", 2.0 * m * n * k / (4.0 if op == "wgmma" else 1.0)
    per_lane = _ARITHMETIC.get(op)
    if per_lane is None:
        return None
    types = [m for m in mods if m in ("f16", "f16x2", "bf16", "bf16x2", "f32", "f64")]
    if not types:
        return None
    kind = types[-1]
    if kind == "f64":
        return "FP64", per_lane * warp_size
    if kind == "f32":
        return "FP32", per_lane * warp_size
    return "FP16", per_lane * warp_size * (2.0 if kind.endswith("x2") else 1.0)


def _launch_counts(d: Any, warps_in_grid: int) -> np.ndarray:
    """Executions of each static instruction over the launch: the mean per-warp counts of a block
    × the warps of the grid."""
    return np.asarray(d.mean_counts(), dtype=np.float64) * float(warps_in_grid)


# ---- ceilings --------------------------------------------------------------------------------------
def level_rates(profile: Any) -> dict[str, tuple[float, str]]:
    """λ (SM cycles per 128-byte request, every SM streaming) of each level and where it came
    from, with the memory model's fallbacks (engine.memory.hierarchy.level_times)."""
    memory = profile.pipeline.memory
    out: dict[str, tuple[float, str]] = {}
    if "dram_lam" in memory:
        out["DRAM"] = (float(memory["dram_lam"]), "pipeline.memory.dram_lam")
    else:
        load = profile.cost_for_opcode("ld.global.b32", Unit.LDST, space=MemorySpace.GLOBAL, width_bytes=4)
        out["DRAM"] = (float(load.lam), "the cost of ld.global (no pipeline.memory.dram_lam)")
    out["L2"] = ((float(memory["l2_lam"]), "pipeline.memory.l2_lam") if "l2_lam" in memory
                 else (out["DRAM"][0], "DRAM's λ (no pipeline.memory.l2_lam)"))
    if "l1_lam" in memory:
        out["L1"] = (float(memory["l1_lam"]), "pipeline.memory.l1_lam")
    elif "shared_lam" in memory:
        out["L1"] = (float(memory["shared_lam"]), "pipeline.memory.shared_lam (no l1_lam)")
    else:
        out["L1"] = (1.0, "one request a cycle (no pipeline.memory.l1_lam or shared_lam)")
    return out


def ceilings(profile: Any, sms_used: int, work: str) -> tuple[list[Ceiling], list[Ceiling]]:
    """(compute, memory) ceilings of ``profile`` for a grid on ``sms_used`` SMs."""
    device = profile.device
    hz = device.clock_mhz * 1e6
    compute: list[Ceiling] = []
    if work == WORK_INSTRUCTION:
        limit = profile.pipeline.issue_limit
        compute.append(Ceiling("issue", "compute", limit * sms_used * hz, "pipeline.issue_limit"))
    else:
        for pipe, (opcode, unit, flop) in PIPES.items():
            if unit not in profile.units:
                continue
            cost = profile.cost_for_opcode(opcode, unit)
            if cost.lam > 0:
                where = f"{flop:g} FLOP per {opcode} / λ {cost.lam:g} ({cost.source or 'profile'})"
                compute.append(Ceiling(pipe, "compute", flop / cost.lam * sms_used * hz, where))
    memory = []
    for level, (lam, source) in level_rates(profile).items():
        if lam <= 0:
            continue
        # L1 is each SM's own; L2 and DRAM are the GPU's, λ measured with every SM streaming
        sms = sms_used if level == "L1" else device.sm_count
        memory.append(Ceiling(level, "memory", LINE_BYTES / lam * sms * hz, source))
    memory.sort(key=lambda c: LEVELS.index(c.name))
    return compute, memory


# ---- the roofline ------------------------------------------------------------------------------------
def roofline(evaluation: Any, work: str | None = None) -> Roofline:
    """The roofline of a finished (or models-part) evaluation. ``work``: WORK_FLOP or
    WORK_INSTRUCTION (default: FLOP when the kernel has any, else instructions). WarplineError
    when the evaluation lacks what it needs (a description, the time model's figure)."""
    if work is not None and work not in WORKS:
        raise WarplineError(f"roofline work {work!r}: one of {', '.join(WORKS)}")
    profile, d, analysis = evaluation.profile, evaluation.description, evaluation.analysis
    if profile is None or d is None or analysis is None:
        raise WarplineError("no roofline: " + ("; ".join(evaluation.errors.values()) or "the kernel was not analysed"))
    timed = evaluation.models.get(TIME_MODEL)
    if timed is None or timed.figures is None:
        why = timed.error if timed is not None else "not computed"
        raise WarplineError(f"no roofline: the Pipeline simulation has no figure ({why})")
    launch = evaluation.state.launch
    warps_in_grid = launch.n_blocks * d.warps_per_block
    counts = _launch_counts(d, warps_in_grid)
    instructions = analysis.function.instructions
    if len(instructions) != len(counts):
        raise WarplineError("no roofline: the description and the kernel disagree on its instructions")
    warp_size = profile.device.warp_size
    by_pipe: dict[str, float] = {}
    for ins, n in zip(instructions, counts.tolist(), strict=True):
        flop = flop_per_warp_instruction(ins, warp_size) if n else None
        if flop is not None:
            by_pipe[flop[0]] = by_pipe.get(flop[0], 0.0) + flop[1] * n
    chosen = work or (WORK_FLOP if sum(by_pipe.values()) > 0 else WORK_INSTRUCTION)
    notes: list[str] = []
    if work is None and chosen == WORK_INSTRUCTION:
        notes.append("the kernel does no floating-point arithmetic: work is issued warp instructions "
                     "(PTX), against the issue limit")
    total = sum(by_pipe.values()) if chosen == WORK_FLOP else float(counts.sum())
    sms_used = max(1, min(profile.device.sm_count, launch.n_blocks))
    compute, memory = ceilings(profile, sms_used, chosen)
    if chosen == WORK_FLOP:
        compute = [Ceiling(c.name, c.kind, c.per_second, c.source, c.name in by_pipe) for c in compute]
        missing = [p for p in by_pipe if all(c.name != p for c in compute)]
        if missing:
            notes.append(f"the profile has no unit for {', '.join(missing)}: its FLOP have no ceiling")
    level_bytes, level_notes = _level_bytes(evaluation)
    notes += level_notes
    points = [LevelPoint(level, b, total / b if b > 0 else None) for level, b in level_bytes.items()]
    result = Roofline(chosen, total, by_pipe if chosen == WORK_FLOP else {}, float(timed.figures.kernel_cycles),
                      evaluation.clock_mhz, sms_used, points, compute, memory, "", {}, notes)
    result.times = _times(result, by_pipe, level_bytes)
    result.bound = max(result.times, key=lambda k: result.times[k]) if result.times else ""
    if sms_used < profile.device.sm_count:
        notes.append(f"the grid's {launch.n_blocks} blocks occupy {sms_used} of {profile.device.sm_count} SMs: "
                     "the pipes' and L1's ceilings are those SMs'")
    return result


def _times(r: Roofline, by_pipe: dict[str, float], level_bytes: dict[str, float]) -> dict[str, float]:
    """Seconds each ceiling needs for the kernel: its pipe's FLOP (or all instructions) over the
    pipe's rate, a level's bytes over its bandwidth. Pipes run side by side: each on its own."""
    times: dict[str, float] = {}
    for c in r.compute:
        amount = r.work_total if r.work == WORK_INSTRUCTION else by_pipe.get(c.name, 0.0)
        if amount > 0 and c.per_second > 0:
            times[c.name] = amount / c.per_second
    for c in r.memory:
        amount = level_bytes.get(c.name, 0.0)
        if amount > 0 and c.per_second > 0:
            times[c.name] = amount / c.per_second
    return times


def _level_bytes(evaluation: Any) -> tuple[dict[str, float], list[str]]:
    memory, traffic = evaluation.memory, evaluation.traffic
    if memory is None or traffic is None:
        return {}, ["no memory analysis for this kernel: no bytes per level"]
    d = evaluation.description
    warps = evaluation.state.launch.n_blocks * d.warps_per_block
    per_warp = d.access_counts()       # as the launch's traffic is weighted
    l1 = l2 = 0.0
    for a in memory.accesses:
        if a.space is MemorySpace.GLOBAL:
            t = traffic.accesses.get(a.index)
            if t is None:
                continue
            sectors = t.requests * (a.sectors_per_request or 0.0) * SECTOR
            l1 += sectors
            l2 += sectors * (1.0 - t.l1_hit)
        elif a.space is MemorySpace.SHARED and 0 <= a.index < len(per_warp):
            # the data path moves a 128-byte wavefront per conflict way, however few lanes read
            # distinct words (a broadcast is one wavefront)
            ways = a.bank_conflict_mean if a.bank_conflict_mean is not None else 1.0
            l1 += per_warp[a.index] * warps * max(ways, 1.0) * LINE_BYTES
    notes = []
    if traffic.unanalysed:
        notes.append(f"{traffic.unanalysed} global access(es) without an address pattern are not counted")
    return {"L1": l1, "L2": l2, "DRAM": traffic.dram_read_bytes + traffic.dram_write_bytes}, notes
