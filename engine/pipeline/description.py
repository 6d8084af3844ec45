"""Plain-data kernel description that the Pipeline-model simulator and the analytical peers read.

A description holds three things, all independent of PTX:

* the **static instructions**: subsystem, CPI λ and latency Λ (exact rationals), a memory flag
  (memory latency vs computational latency, for stall causes and the peers) and a barrier flag;
* the **dependences**: for each consumer the static producers it reads from. At run time a
  consumer waits for the *latest executed instance* of each producer. Because every warp issues
  in program order, that instance is exactly the reaching definition, including loop-carried
  ones (a producer placed after its consumer in a loop body is the previous iteration's), so no
  iteration distance needs to be stored;
* the **dynamic paths**: what a warp executes, as a tree of runs of static instructions and
  counted loops, so a loop of a million iterations costs one node, not a million objects.

Time is exact: every λ/Λ and overhead becomes an integer number of ticks, with
``ticks_per_cycle`` the least common multiple of their denominators. Where that would exceed
:data:`MAX_TICKS_PER_CYCLE` (a latency table of many unrelated fractions), the durations are
rounded to multiples of 1/:data:`TIME_GRID` cycle instead (:meth:`KernelDescription.on_time_grid`),
and the simulation says so in its note: it runs on any latency table.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache

import numpy as np

from engine.errors import SimulationError

# Rationals with a denominator above this are rounded to it: simulated time must stay exact and
# the tick counts must fit comfortably in int64.
MAX_DENOMINATOR = 10_000
# Ticks per cycle the simulator's clock may take: beyond, tick counts of long kernels would near
# int64's range. A table that needs more is put on a grid of 1/TIME_GRID cycle: 2520 is the least
# common multiple of 1..10, so halves, thirds, ..., tenths (and eighths, the memory costs' unit)
# stay exact, and any other duration moves by at most 1/5040 cycle.
MAX_TICKS_PER_CYCLE = 10**6
TIME_GRID = 2520


def to_fraction(value: float | int | Fraction, what: str) -> Fraction:
    """An exact rational for a λ/Λ/overhead; NaN and infinity are refused with ``what`` named."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, float) and not math.isfinite(value):
        raise SimulationError(f"{what} is {value}; it must be a finite number of cycles")
    return _rounded(value)


@lru_cache(maxsize=4096)
def _rounded(value: float | int) -> Fraction:
    # A kernel of 10^5 instructions asks for a few dozen distinct latencies 2 x 10^5 times, and
    # limit_denominator is the costliest step of building its description.
    return Fraction(value).limit_denominator(MAX_DENOMINATOR)


def schedulers_sharing(schedulers: int, issue_limit: int | None) -> int:
    """The SM's schedulers the simulator binds warps to: ``schedulers`` where the core supports
    that many (1, 2, 4 or 8) and they share ``issue_limit`` evenly, else 1 (one pool)."""
    if schedulers in (2, 4, 8) and issue_limit is not None and issue_limit % schedulers == 0:
        return schedulers
    return 1


@dataclass(frozen=True)
class Run:
    """Static instructions ``instructions`` executed once, in this order.

    ``renamed`` (None for plain runs): per position, the completion *slot* it writes and the
    slots it waits for, instead of its own index and its static ``deps``. Slots ``0..n-1`` are the
    static instructions, ``n..`` the description's ``extra_slots``. A loop body that ptxas
    unrolled u times runs as u copies scheduled together; ptxas gives each copy its own
    registers, so copy c's consumer waits for copy c's (or c-1's) producer, not for the latest
    instance of it, which a later copy may already have overwritten.
    """

    instructions: tuple[int, ...]
    renamed: tuple[tuple[int, tuple[int, ...]], ...] | None = None


@dataclass(frozen=True)
class Loop:
    """``body`` executed ``count`` times (0 skips it).

    ``dropped``: (instruction, executions per pass) that the PTX runs in each pass but the
    scheduled body leaves out: the backward branch of all but the last of the u copies of a body
    ptxas unrolled (its SASS has one branch a pass, and the SASS map weighs the PTX branch 1/u).
    Counted with the launch's executed instructions, not issued by the simulator."""

    body: tuple[Run | Loop, ...]
    count: int
    dropped: tuple[tuple[int, int], ...] = ()


PathNode = Run | Loop


@dataclass(frozen=True)
class StaticInstruction:
    """One static instruction as the pipeline model sees it."""

    name: str                 # what the user sees: ``mul.f32`` or the PTX text
    unit: int                 # index into ``KernelDescription.subsystems``
    lam: Fraction             # CPI: the subsystem is busy for λ cycles after an issue
    Lam: Fraction             # latency: the result is available Λ cycles after the issue
    memory: bool = False      # latency is a memory latency (stall cause, peers' α_mem)
    barrier: bool = False     # block-wide barrier (bar.sync)
    deps: tuple[int, ...] = ()  # static producers this instruction reads
    # share of its requests whose Λ is DRAM's latency (a global load by cache level): each cycle
    # DRAM's latency grows under the GPU's load adds this much to Λ (with_dram_delay)
    dram_wait: float = 0.0
    # SASS instructions one execution issues (the SASS map's weight; 1 without it): the share of
    # the SM's issue limit it takes
    slots: float = 1.0
    # cycles after this instruction's issue before its warp may issue the next one: the stall
    # counts ptxas wrote into its SASS instructions' control fields (fixed-latency results the
    # hardware does not interlock). 0: only the description's warp_issue_interval. On the
    # simulator's tick grid (rounded to the nearest tick).
    issue_gap: float = 0.0
    # cycles one execution keeps the memory levels beyond the SM busy for it (L2, DRAM; the
    # profile's per-SM rates): each level serves the SM's requests in turn, beside the LSU pipe
    # (λ), so a request waits there only when the level is behind
    level_lam: tuple[float, float] = (0.0, 0.0)
    # what the instruction does to its warp's groups of asynchronous copies (cp.async): 0 nothing,
    # 1 a copy (joins the open group), 2 commit_group, 3 wait_group ``async_n`` (completes when at
    # most the newest ``async_n`` groups are pending), 4 wait_all (the open group too)
    async_op: int = 0
    async_n: int = 0

    @property
    def memory_pipe_lam(self) -> float:
        """λ with the memory levels taken as part of the LSU pipe (the slowest of them): the
        single-pipe view the analytical peers and Many-BSP read."""
        return max(float(self.lam), *self.level_lam)


# An occupancy sweep validates and times copies of one description that share its instruction
# tuple (``with_changes``): the per-instruction work is done once per tuple. Entries hold the
# tuple itself, so an id in a key cannot be reused by another object while it is cached.
_CHECKED: dict[tuple[int, int], tuple] = {}
_DENOMINATORS: dict[int, tuple[tuple, int]] = {}
_CACHE_SIZE = 8


def _remember(cache: dict, key: object, value: object, owner: object) -> None:
    if not isinstance(owner, tuple):
        return                  # a list could change after it was checked: never cached
    if len(cache) >= _CACHE_SIZE:
        cache.pop(next(iter(cache)))
    cache[key] = value


def _check_instructions(instructions: tuple, n_subsystems: int) -> None:
    """Refuse an instruction the simulator cannot run, naming it."""
    key = (id(instructions), n_subsystems)
    if _CHECKED.get(key) is instructions:
        return
    n = len(instructions)
    for i, ins in enumerate(instructions):
        # numerators: λ and Λ are Fractions (positive denominators), and comparing those
        # directly costs microseconds each
        if (0 <= ins.unit < n_subsystems and ins.lam.numerator > 0 and ins.Lam.numerator >= 0
                and 0 <= ins.issue_gap < math.inf and all(0 <= p < n for p in ins.deps)):
            continue            # the common case, without formatting a message
        where = f"instruction {i} ({ins.name})"
        if not 0 <= ins.unit < n_subsystems:
            raise SimulationError(f"{where}: subsystem index {ins.unit} is out of range")
        if ins.lam <= 0:
            raise SimulationError(f"{where}: λ (CPI) is {ins.lam}; it must be positive, or the "
                                  "subsystem could issue infinitely many instructions at once")
        if ins.Lam < 0:
            raise SimulationError(f"{where}: Λ (latency) is {ins.Lam}; it cannot be negative")
        if not 0 <= ins.issue_gap < math.inf:
            raise SimulationError(f"{where}: issue gap is {ins.issue_gap}; it must be a finite number of "
                                  "cycles, 0 or more")
        for p in ins.deps:
            if not 0 <= p < n:
                raise SimulationError(f"{where}: depends on instruction {p}, which does not exist")
    _remember(_CHECKED, key, instructions, instructions)


def _instruction_ticks(instructions: tuple) -> int:
    """LCM of the denominators of every λ and Λ."""
    hit = _DENOMINATORS.get(id(instructions))
    if hit is not None and hit[0] is instructions:
        return hit[1]
    ticks = 1
    for ins in instructions:
        for d in (ins.lam.denominator, ins.Lam.denominator):
            ticks = ticks * d // math.gcd(ticks, d)
    _remember(_DENOMINATORS, id(instructions), (instructions, ticks), instructions)
    return ticks


@dataclass(frozen=True)
class KernelDescription:
    """Everything the simulator and the peers need about one kernel on one SM.

    ``paths`` are the dynamic paths; ``warp_path[i]`` says which one warp ``i`` of a block runs
    (all warps run path 0 unless told otherwise: uniform control flow).
    ``issue_limit`` is the most instructions the SM issues per cycle (``None``: unlimited).
    ``warp_issue_interval`` is the least time between two issues of one warp (one per cycle on
    every NVIDIA scheduler). Launch overheads delay a block's (and each next warp's) first issue.
    """

    instructions: tuple[StaticInstruction, ...]
    subsystems: tuple[str, ...]
    paths: tuple[tuple[PathNode, ...], ...]
    warps_per_block: int
    blocks: int                                  # blocks this SM runs in all
    resident_blocks: int                         # γ: blocks resident at once
    issue_limit: int | None = None
    warp_path: tuple[int, ...] | None = None
    # The SM's warp schedulers: warp slot s (block slot b's warp w is slot b x warps per block + w)
    # issues through scheduler s mod ``schedulers``, each at most issue_limit / schedulers
    # instructions a cycle (1: one pool of issue_limit a cycle for every warp)
    schedulers: int = 1
    # The subsystems each scheduler has its own copy of, at 1 / ``schedulers`` of the SM's rate
    # (its lanes of the sub-partition: FP32, FP64, MUFU, tensor core); λ stays the SM's figure (a
    # warp instruction's time on the SM-wide pipe) and a copy is busy ``schedulers`` x λ per
    # instruction. Subsystems not named are one pipe of the SM's (the memory path). Measured:
    # docs/pipeline.md, "Schedulers".
    scheduler_subsystems: frozenset[str] = frozenset()
    warp_issue_interval: Fraction = Fraction(1)
    block_launch_overhead: Fraction = Fraction(0)
    warp_launch_overhead: Fraction = Fraction(0)
    # The SM starts its blocks one at a time: two block starts are at least this far apart
    # (the measured serial launch rate; 0: no limit). A kernel of short blocks is bound by it.
    block_launch_interval: Fraction = Fraction(0)
    name: str = "kernel"
    notes: tuple[str, ...] = field(default=())
    extra_slots: int = 0    # completion slots beyond the static instructions (renamed runs)
    # The paths whose counts make the launch's totals (executed instructions, bytes) when they
    # differ from the simulated ones: a single wave is simulated at its slowest warp's trip
    # counts (that SM sets the time) but counted at the mean over warps. None: ``paths``.
    counted_paths: tuple[tuple[PathNode, ...], ...] | None = None
    # With ``counted_paths``: the counted mix of blocks, per kind the counted path of each warp
    # (a single wave whose blocks differ in work: its largest block is simulated, every kind of
    # the sample counted alike). None: ``counted_paths[p]`` is simulated path ``p``'s count.
    counted_kinds: tuple[tuple[int, ...], ...] | None = None
    # Atomics that ptxas made into compare-and-swap retry loops: (instruction, mean passes of the
    # loop per execution), for counting the SASS the launch executes.
    retry_passes: tuple[tuple[int, float], ...] = ()
    # the paths are the ones the sampled warps ran (engine.execution): each warp's own
    traced: bool = False
    # Blocks of several kinds (a triangular grid's full, partial and empty blocks): per kind, the
    # path of each of its warps; the SM's blocks take the kinds in turn, in launch order (block b
    # is kind b mod len). None: every block is ``warp_path``'s.
    block_kinds: tuple[tuple[int, ...], ...] | None = None

    # ---- derived figures -------------------------------------------------------------------
    @property
    def occupancy_warps(self) -> int:
        """ω: warps resident at once."""
        return min(self.resident_blocks, self.blocks) * self.warps_per_block

    def path_of_warp(self, warp_in_block: int) -> int:
        if self.block_kinds is not None:
            return self.block_kinds[0][warp_in_block]
        return 0 if self.warp_path is None else self.warp_path[warp_in_block]

    def block_composition(self) -> list[tuple[int, float]]:
        """(path, warps) of an average block: each warp's path, the kinds of blocks weighted alike."""
        return _composition(self.block_kinds or (tuple(self.path_of_warp(w) for w in range(self.warps_per_block)),))

    def warp_path_table(self) -> np.ndarray:
        """[kinds, warps] path of each warp of each kind of block (one kind without kinds)."""
        kinds = self.block_kinds or (tuple(self.path_of_warp(w) for w in range(self.warps_per_block)),)
        return np.array(kinds, dtype=np.int64).reshape(len(kinds), self.warps_per_block)

    def _counts(self, nodes: Sequence[PathNode]) -> np.ndarray:
        """How often one warp running ``nodes`` executes each static instruction (int64 array)."""
        counts = np.zeros(len(self.instructions), dtype=np.int64)

        def walk(body: Sequence[PathNode], times: int) -> None:
            for node in body:
                if isinstance(node, Run):
                    for i in node.instructions:
                        counts[i] += times
                else:
                    for i, per_pass in node.dropped:
                        counts[i] += times * node.count * per_pass
                    walk(node.body, times * node.count)

        walk(nodes, 1)
        return counts

    def dynamic_counts(self, path: int = 0) -> np.ndarray:
        """How often one warp on ``path`` executes each static instruction (int64 array), on
        average over the launch (``counted_paths`` where they stand for the simulated paths)."""
        if self.counted_paths is not None and self.counted_kinds is None:
            return self._counts(self.counted_paths[path])
        return self._counts(self.paths[path])

    def counted_composition(self) -> list[tuple[np.ndarray, float]]:
        """(per-instruction counts of one warp, warps) of an average block as the launch counts it:
        the launch's totals (executed instructions, SASS, bytes) are sums over this."""
        if self.counted_kinds is None or self.counted_paths is None:
            return [(self.dynamic_counts(p), w) for p, w in self.block_composition()]
        return [(self._counts(self.counted_paths[p]), w) for p, w in _composition(self.counted_kinds)]

    def mean_counts(self) -> np.ndarray:
        """How often a warp of a block executes each instruction, on average over its warps (and
        over the kinds of blocks, as the launch counts them)."""
        return sum((counts * w for counts, w in self.counted_composition()),
                   np.zeros(len(self.instructions), dtype=np.float64)) / self.warps_per_block

    def access_counts(self) -> np.ndarray:
        """Per static instruction, the executions per warp the launch's memory traffic is weighted
        with. Where each warp ran its own path (``traced``), a request counts where its warp ran
        it: the mean over the block's warps. Otherwise the most any path runs it: the memory
        model's per-lane activity already shares the bytes out among warps that go different ways."""
        if self.traced:
            return self.mean_counts()
        return np.maximum.reduce([self.dynamic_counts(p) for p in range(len(self.paths))]).astype(np.float64)

    def instructions_per_warp(self, path: int = 0) -> int:
        return int(self.dynamic_counts(path).sum())

    def total_warp_instructions(self) -> int:
        """Warp instructions the whole SM share issues (every block, every warp)."""
        per_block = sum(float(counts.sum()) * w for counts, w in self.counted_composition())
        return int(round(per_block * self.blocks))

    def with_changes(self, **changes: object) -> KernelDescription:
        """A copy with some fields replaced (occupancy sweeps, overrides)."""
        return replace(self, **changes)

    def with_dram_delay(self, cycles: float) -> KernelDescription:
        """A copy whose instructions wait ``cycles`` more for each request that goes to DRAM
        (``dram_wait`` × cycles added to Λ, in eighths of a cycle as the memory costs are)."""
        if cycles <= 0 or not any(ins.dram_wait > 0 for ins in self.instructions):
            return self
        extra = [Fraction(round(ins.dram_wait * cycles * 8), 8) for ins in self.instructions]
        return replace(self, instructions=tuple(
            replace(ins, Lam=ins.Lam + add) if add else ins for ins, add in zip(self.instructions, extra, strict=True)))

    # ---- exact time --------------------------------------------------------------------
    def exact_ticks_per_cycle(self) -> int:
        """LCM of the denominators of every duration: the ticks per cycle that keep each exact."""
        denominators = [self.warp_issue_interval.denominator, self.block_launch_overhead.denominator,
                        self.warp_launch_overhead.denominator, self.block_launch_interval.denominator,
                        _instruction_ticks(self.instructions)]
        ticks = 1
        for d in denominators:
            ticks = ticks * d // math.gcd(ticks, d)
        return ticks

    def ticks_per_cycle(self) -> int:
        """The simulator's ticks per cycle for this description: the exact ones, or
        :data:`TIME_GRID` when those exceed :data:`MAX_TICKS_PER_CYCLE` (see :meth:`on_time_grid`)."""
        exact = self.exact_ticks_per_cycle()
        return exact if exact <= MAX_TICKS_PER_CYCLE else TIME_GRID

    def on_time_grid(self) -> tuple[KernelDescription, str]:
        """This description with every duration a whole number of ticks of :meth:`ticks_per_cycle`,
        and a note when that rounded any ('' when all were exact already)."""
        exact = self.exact_ticks_per_cycle()
        if exact <= MAX_TICKS_PER_CYCLE:
            return self, ""
        moved = Fraction(0)

        def grid(value: Fraction, least: Fraction = Fraction(0)) -> Fraction:
            nonlocal moved
            # a positive duration stays positive (λ = 0 would let a subsystem issue without end)
            snapped = max(Fraction(round(value * TIME_GRID), TIME_GRID), least if value > 0 else Fraction(0))
            moved = max(moved, abs(snapped - value))
            return snapped

        step = Fraction(1, TIME_GRID)
        instructions = tuple(
            ins if TIME_GRID % ins.lam.denominator == 0 and TIME_GRID % ins.Lam.denominator == 0
            else replace(ins, lam=grid(ins.lam, step), Lam=grid(ins.Lam)) for ins in self.instructions)
        snapped = replace(self, instructions=instructions,
                          warp_issue_interval=grid(self.warp_issue_interval, step),
                          block_launch_overhead=grid(self.block_launch_overhead),
                          warp_launch_overhead=grid(self.warp_launch_overhead),
                          block_launch_interval=grid(self.block_launch_interval))
        note = (f"timed on a grid of 1/{TIME_GRID} cycle: keeping every λ/Λ exact would need {exact} ticks "
                f"per cycle (more than {MAX_TICKS_PER_CYCLE}), so durations were rounded, each by at most "
                f"{float(moved):.2g} cycles")
        return snapped, note

    def validate(self) -> None:
        """Refuse inputs the simulator cannot run, naming the offending item."""
        n = len(self.instructions)
        if n == 0:
            raise SimulationError(f"kernel {self.name!r} has no instructions")
        if not self.subsystems:
            raise SimulationError("no subsystems are defined")
        _check_instructions(self.instructions, len(self.subsystems))
        if self.warps_per_block < 1:
            raise SimulationError(f"a block needs at least one warp (got {self.warps_per_block})")
        if self.warps_per_block > 64:
            raise SimulationError(f"{self.warps_per_block} warps per block: at most 64 (2048 threads) "
                                  "are supported")
        if self.blocks < 0:
            raise SimulationError(f"negative number of blocks ({self.blocks})")
        if self.resident_blocks < 1:
            raise SimulationError(
                f"occupancy of {self.resident_blocks} resident blocks is impossible: the kernel "
                "does not fit on the SM (registers, shared memory or threads per block)")
        if min(self.resident_blocks, self.blocks) > 64:
            raise SimulationError(f"{self.resident_blocks} resident blocks: at most 64 are supported "
                                  "(GPUs hold at most 32 blocks per SM)")
        if self.issue_limit is not None and self.issue_limit < 1:
            raise SimulationError(f"issue limit {self.issue_limit} must be a positive integer or None")
        if self.schedulers != schedulers_sharing(self.schedulers, self.issue_limit):
            raise SimulationError(f"{self.schedulers} schedulers: 1, 2, 4 or 8, and an issue limit they "
                                  "share evenly")
        unknown = self.scheduler_subsystems - set(self.subsystems)
        if unknown:
            raise SimulationError(f"scheduler_subsystems names unknown subsystems: {sorted(unknown)}")
        if self.warp_issue_interval <= 0:
            raise SimulationError("the warp issue interval must be positive")
        if self.block_launch_overhead < 0 or self.warp_launch_overhead < 0 or self.block_launch_interval < 0:
            raise SimulationError("launch overheads cannot be negative")
        if not self.paths:
            raise SimulationError("no dynamic path is given")
        if self.warp_path is not None:
            if len(self.warp_path) != self.warps_per_block:
                raise SimulationError(f"warp_path names {len(self.warp_path)} warps, the block has "
                                      f"{self.warps_per_block}")
            for p in self.warp_path:
                if not 0 <= p < len(self.paths):
                    raise SimulationError(f"warp_path refers to path {p}, which does not exist")
        if self.block_kinds is not None:
            for kind in self.block_kinds:
                if len(kind) != self.warps_per_block or not all(0 <= p < len(self.paths) for p in kind):
                    raise SimulationError("a kind of block names a path for each of its warps, and only "
                                          "paths that exist")
        if self.counted_kinds is not None:
            counted = len(self.counted_paths) if self.counted_paths is not None else 0
            for kind in self.counted_kinds:
                if len(kind) != self.warps_per_block or not all(0 <= p < counted for p in kind):
                    raise SimulationError("a counted kind of block names a counted path for each of "
                                          "its warps, and only counted paths that exist")
        if self.extra_slots < 0:
            raise SimulationError(f"negative number of extra completion slots ({self.extra_slots})")
        for p, nodes in enumerate(self.paths):
            _check_nodes(nodes, n, n + self.extra_slots, f"path {p}")


def _composition(kinds: Sequence[tuple[int, ...]]) -> list[tuple[int, float]]:
    """(path, warps) of an average block whose kinds (per kind, the path of each warp) are
    weighted alike."""
    weights: dict[int, float] = {}
    for kind in kinds:
        for path in kind:
            weights[path] = weights.get(path, 0.0) + 1.0 / len(kinds)
    return sorted(weights.items())


def _check_nodes(nodes: Sequence[PathNode], n: int, slots: int, where: str) -> None:
    for node in nodes:
        if isinstance(node, Run):
            for i in node.instructions:
                if not 0 <= i < n:
                    raise SimulationError(f"{where}: instruction {i} does not exist")
            if node.renamed is not None:
                if len(node.renamed) != len(node.instructions):
                    raise SimulationError(f"{where}: a renamed run names {len(node.renamed)} slots "
                                          f"for {len(node.instructions)} instructions")
                for write, reads in node.renamed:
                    if not all(0 <= x < slots for x in (write, *reads)):
                        raise SimulationError(f"{where}: a renamed run refers to a completion slot "
                                              f"outside 0..{slots - 1}")
        elif isinstance(node, Loop):
            if node.count < 0:
                raise SimulationError(f"{where}: loop count {node.count} is negative")
            if not _has_instruction(node.body):
                raise SimulationError(f"{where}: a loop body executes no instruction")
            if not all(0 <= i < n and times >= 0 for i, times in node.dropped):
                raise SimulationError(f"{where}: a loop's dropped instructions must exist and run "
                                      "a non-negative number of times")
            _check_nodes(node.body, n, slots, where)
        else:
            raise SimulationError(f"{where}: {node!r} is neither a Run nor a Loop")


def _has_instruction(nodes: Sequence[PathNode]) -> bool:
    for node in nodes:
        if isinstance(node, Run) and node.instructions:
            return True
        if isinstance(node, Loop) and node.count > 0 and _has_instruction(node.body):
            return True
    return False


def make_instruction(name: str, unit: int, lam: float | Fraction, Lam: float | Fraction, *,
                     memory: bool = False, barrier: bool = False,
                     deps: Sequence[int] = ()) -> StaticInstruction:
    """Convenience constructor that turns floats into exact fractions."""
    return StaticInstruction(name=name, unit=unit, lam=to_fraction(lam, f"λ of {name}"),
                             Lam=to_fraction(Lam, f"Λ of {name}"), memory=memory, barrier=barrier,
                             deps=tuple(int(d) for d in deps))
