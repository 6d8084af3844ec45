"""The result of mapping a kernel's SASS back onto its PTX instructions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FORMAT = 7  # bumped whenever the fields, their meaning or the mapping change: older cache files are ignored


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

    def executed(self, counts: Any, passes: dict[int, float] | None = None) -> float:
        """SASS instructions executed for per-instruction PTX execution counts (a sequence or array
        indexed by instruction index, e.g. ``KernelDescription.dynamic_counts(path)``), overhead
        included. ``passes``: mean passes of each retry loop (``retry_body``) per execution."""
        total = self.overhead
        passes = passes or {}
        for i, n in enumerate(counts):
            extra = (passes.get(i, 1.0) - 1.0) * self.retry_body.get(i, 0.0)
            total += float(n) * (self.weights.get(i, 1.0) + extra)
        return total

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
        )


@dataclass(frozen=True)
class SassUnavailable:
    """No SASS map: the tools are missing, ptxas rejected the PTX, the architecture is too old..."""

    reason: str
