"""The result of mapping a kernel's SASS back onto its PTX instructions."""

from __future__ import annotations

from dataclasses import astuple, dataclass, field
from typing import Any

FORMAT = 10  # bumped whenever the fields, their meaning or the mapping change: older cache files are ignored


@dataclass(frozen=True)
class LoopTail:
    """The SASS of one PTX loop outside the SASS loop that runs its steady state, charged per
    entry of the loop. ``entry``: the PTX instructions executed once per entry (the straight-line
    code that falls through into the loop: the simulator may drop some, a move of a constant, so
    the most executed of them counts the entries); ``latch``: the loop's backward branch (executed once per PTX
    iteration); ``unroll``: PTX iterations one steady-state pass covers. ``setup``: SASS
    instructions in blocks that hold no copy of the loop's work (bounds, hoisted code): once per
    entry. ``tail``: SASS instructions of the blocks holding copies of its work (the remainder
    blocks or loop that finish the ``T mod unroll`` iterations a steady-state pass does not
    cover), which hold ``tail_iterations`` iterations' worth of that work.
    ``home_per_iteration``: the steady state's SASS per PTX iteration (what the weights already
    charge every iteration, those the tail runs included)."""

    entry: tuple[int, ...]
    latch: int
    unroll: int
    setup: float
    tail: float
    tail_iterations: int
    home_per_iteration: float = 0.0

    def per_warp(self, counts: Any) -> float:
        """SASS instructions this code adds for a warp's per-instruction PTX counts: per entry, the
        set-up, and the tail in proportion to the iterations left over. A warp entering the loop
        once runs ``T`` PTX iterations (for lanes that disagree, the most any lane runs: every
        remainder block some lane needs is issued), so ``T mod unroll`` are left; entered several
        times with a mean that is not whole, half the remainder range on average."""
        entries = max((float(counts[i]) for i in self.entry if i < len(counts)), default=0.0)
        if entries <= 0:
            return 0.0
        added = self.setup
        if self.tail and self.tail_iterations:
            trips = float(counts[self.latch]) / entries
            left = (round(trips) % self.unroll if abs(trips - round(trips)) < 1e-6
                    else (self.unroll - 1) / 2)
            # the weights charged these iterations at the steady state's rate already
            added += left * (self.tail / self.tail_iterations - self.home_per_iteration)
        return entries * added


@dataclass(frozen=True)
class SassMap:
    """For each PTX instruction index (``Function.instructions[i].index``) of one kernel:

    * ``weights[i]``: SASS instructions the GPU executes per execution of PTX instruction ``i``
      (0: folded away or merged into a neighbour's SASS; 0.25: one of four loads merged into one
      ``LDS.128``; 2: ``sin.approx`` -> ``FMUL.RZ`` + ``MUFU.SIN``). A loop that ptxas unrolled
      ``u`` times is divided by ``u``: the weight is per PTX execution, so the simulator's
      per-warp counts times the weights give executed SASS instructions.
    * ``opcodes[i]``: the SASS opcodes of one execution, in address order (rounded).
    * ``class_weights[i]``: the weight split by class (``alu``, ``fp64``, ``sfu``, ``ldst``,
      ``tensor``, ``control``, ``barrier``); sums to ``weights[i]``.

    ``overhead`` counts SASS instructions outside every loop that map to no PTX instruction (run
    once per warp); ``unroll`` gives, for each PTX loop ``"first-last"`` (0-based instruction
    indices of its first instruction and its backward branch), how many PTX iterations one pass
    of its SASS code covers; ``outside_steady_state`` counts the static SASS instructions of loop
    bodies left out of the weights (peeled or remainder iterations, code hoisted out of a loop).
    ``retry_body[i]``: for an atomic that ptxas made into a compare-and-swap retry loop, the SASS
    instructions of one pass of that loop (its weight counts one pass; contention adds passes).
    ``positions[i]``: where in the SASS listing the copies of ``i`` that make its weight lie (one
    per unrolled copy, in address order): the order ptxas issues them in.
    ``loop_tails``: for each PTX loop whose SASS code lies partly outside its steady state and
    which one PTX instruction enters (:class:`LoopTail`), what that code adds per entry.
    ``stall_cycles[i]``: the stall counts ptxas wrote into the control fields of those SASS
    instructions, summed per PTX execution like the weights: the cycles a warp spends issuing one
    execution of ``i`` before it may issue its next instruction (``engine.sass.control_fields``; empty
    when the cubin's control fields could not be read).
    """

    kernel: str
    arch: str
    tool: str
    weights: dict[int, float]
    opcodes: dict[int, tuple[str, ...]]
    classes: dict[int, tuple[str, ...]]
    class_weights: dict[int, dict[str, float]]
    overhead: float = 0.0
    overhead_opcodes: tuple[str, ...] = ()
    unroll: dict[str, int] = field(default_factory=dict)
    outside_steady_state: int = 0
    static_sass: int = 0
    notes: tuple[str, ...] = ()
    retry_body: dict[int, float] = field(default_factory=dict)
    positions: dict[int, tuple[int, ...]] = field(default_factory=dict)
    stall_cycles: dict[int, float] = field(default_factory=dict)
    loop_tails: tuple[LoopTail, ...] = ()

    def executed(self, counts: Any, passes: dict[int, float] | None = None) -> float:
        """SASS instructions executed for per-instruction PTX execution counts (a sequence or array
        indexed by instruction index, e.g. ``KernelDescription.dynamic_counts(path)``), overhead
        included. ``passes``: mean passes of each retry loop (``retry_body``) per execution."""
        total = self.overhead
        passes = passes or {}
        for i, n in enumerate(counts):
            extra = (passes.get(i, 1.0) - 1.0) * self.retry_body.get(i, 0.0)
            total += float(n) * (self.weights.get(i, 1.0) + extra)
        return total + sum(t.per_warp(counts) for t in self.loop_tails)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "kernel": self.kernel, "arch": self.arch, "tool": self.tool,
            "weights": {str(k): v for k, v in self.weights.items()},
            "opcodes": {str(k): list(v) for k, v in self.opcodes.items()},
            "classes": {str(k): list(v) for k, v in self.classes.items()},
            "class_weights": {str(k): v for k, v in self.class_weights.items()},
            "overhead": self.overhead, "overhead_opcodes": list(self.overhead_opcodes),
            "unroll": self.unroll, "outside_steady_state": self.outside_steady_state,
            "static_sass": self.static_sass, "notes": list(self.notes),
            "retry_body": {str(k): v for k, v in self.retry_body.items()},
            "positions": {str(k): list(v) for k, v in self.positions.items()},
            "stall_cycles": {str(k): v for k, v in self.stall_cycles.items()},
            "loop_tails": [astuple(t) for t in self.loop_tails],     # LoopTail's fields in order
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SassMap:
        """Raises KeyError/TypeError/ValueError on anything malformed (the cache drops the file)."""
        if data.get("format") != FORMAT:
            raise ValueError("another format")
        # map() and zip() rather than comprehensions: a 10^5-instruction kernel's map has
        # hundreds of thousands of entries, and the cache reads it at every run
        return cls(
            kernel=str(data["kernel"]), arch=str(data["arch"]), tool=str(data["tool"]),
            weights=dict(zip(map(int, data["weights"]), map(float, data["weights"].values()), strict=True)),
            opcodes={int(k): tuple(map(str, v)) for k, v in data["opcodes"].items()},
            classes={int(k): tuple(map(str, v)) for k, v in data["classes"].items()},
            class_weights={int(k): {str(c): float(w) for c, w in v.items()}
                           for k, v in data["class_weights"].items()},
            overhead=float(data["overhead"]),
            overhead_opcodes=tuple(str(x) for x in data["overhead_opcodes"]),
            unroll={str(k): int(v) for k, v in data["unroll"].items()},
            outside_steady_state=int(data["outside_steady_state"]),
            static_sass=int(data["static_sass"]),
            notes=tuple(str(x) for x in data["notes"]),
            retry_body={int(k): float(v) for k, v in data["retry_body"].items()},
            positions={int(k): tuple(map(int, v)) for k, v in data["positions"].items()},
            stall_cycles=dict(zip(map(int, data["stall_cycles"]), map(float, data["stall_cycles"].values()),
                                  strict=True)),
            loop_tails=tuple(LoopTail(tuple(map(int, e)), int(f), int(u), float(s), float(t), int(k), float(h))
                             for e, f, u, s, t, k, h in data["loop_tails"]),
        )


@dataclass(frozen=True)
class SassUnavailable:
    """No SASS map: the tools are missing, ptxas rejected the PTX, the architecture is too old..."""

    reason: str
