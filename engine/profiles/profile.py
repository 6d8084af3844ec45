"""A validated GPU profile: its records, and the look-ups both models ask of it.

``engine.profiles.parsing`` builds a :class:`Profile` from TOML; its instruction costs follow the
rules of :mod:`engine.profiles.cost_rules` and are remembered per question (the profile is immutable).
The Many-BSP figures of a profile without a ``[manybsp]`` section are derived a layer up
(``engine.manybsp.device_figures``), where the model that needs them lives.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from engine.profiles.cost_rules import (
    global_memory_lambdas,
    instruction_cost,
    matching_rule,
    shared_memory_lambdas,
    special_registers_read,
)
from engine.profiles.sections import (
    ClassificationLike,
    Device,
    InstructionCost,
    InstructionLike,
    InstructionRule,
    ManyBspParams,
    PipelineParams,
    Provenance,
    UnitSpec,
)
from engine.units import MemorySpace, Unit

KEPT_BODIES = 4        # bodies whose cost lists a profile keeps (Profile.costs_of)


@dataclass(frozen=True)
class Profile:
    """A validated GPU profile. ``name`` is the file stem (``gtx1070``)."""

    name: str
    path: Path | None
    description: str
    device: Device
    units: Mapping[Unit, UnitSpec]
    pipeline: PipelineParams
    manybsp: ManyBspParams | None
    rules: tuple[InstructionRule, ...]
    sources: Mapping[str, str]
    provenance: Provenance | None = None

    # ------------------------------------------------------------------ costs
    def rule_for(self, full_opcode: str, special_registers: Iterable[str] = ()) -> InstructionRule | None:
        """The most specific matching rule (ties: the earlier rule in the file).
        ``special_registers`` are the special registers the instruction reads (``tid``)."""
        return matching_rule(self.rules, full_opcode, special_registers)

    def cost(self, instruction: InstructionLike | str, classification: ClassificationLike) -> InstructionCost:
        """Cost of ``instruction`` (an ``Instruction`` or its full opcode) as classified."""
        opcode = instruction if isinstance(instruction, str) else instruction.full_opcode
        # Atomics and reductions move data like loads/stores (classify sets is_atomic for them).
        atomic = getattr(classification, "is_atomic", False)
        memory = classification.is_load or classification.is_store or atomic
        return self.cost_for_opcode(
            opcode,
            classification.unit,
            space=classification.space if memory else MemorySpace.NONE,
            width_bytes=classification.width_bytes,
            special_registers=special_registers_read(instruction),
        )

    def cost_for_opcode(
        self,
        full_opcode: str,
        unit: Unit,
        *,
        space: MemorySpace = MemorySpace.NONE,
        width_bytes: int | None = None,
        special_registers: Iterable[str] = (),
    ) -> InstructionCost:
        """Cost for callers without an Instruction. ``space`` is the memory space of a load
        or store (NONE otherwise); ``width_bytes`` its per-thread access width;
        ``special_registers`` the special registers read (``tid``, ``ctaid``).

        Remembered per distinct question (the profile is immutable): a kernel of 10^5
        instructions repeats a few dozen opcodes, and each answer tries every rule's pattern."""
        specials = frozenset(special_registers)
        key = (full_opcode, unit, space, width_bytes, specials)
        known = self._costs.get(key)
        if known is None:
            known = self._costs[key] = instruction_cost(self, full_opcode, unit, space, width_bytes, specials)
        return known

    @cached_property
    def _costs(self) -> dict[tuple[object, ...], InstructionCost]:
        return {}

    def costs_of(self, instructions: Sequence[InstructionLike], classifications: Sequence[ClassificationLike]
                 ) -> list[InstructionCost]:
        """:meth:`cost` of each instruction of a body with its classification. The lists of the
        last :data:`KEPT_BODIES` bodies are kept, found by the two sequences' identity (the entry
        holds them, so an id is not reused while it is kept): the Pipeline adapter and the
        Many-BSP instruction table of one analysis cost its instructions once."""
        kept = self._cost_lists
        for entry in kept:
            if entry[0] is instructions and entry[1] is classifications:
                return entry[2]
        costs = [self.cost(i, c) for i, c in zip(instructions, classifications, strict=False)]
        kept.append((instructions, classifications, costs))
        del kept[:-KEPT_BODIES]
        return costs

    @cached_property
    def _cost_lists(self) -> list[tuple[object, object, list[InstructionCost]]]:
        return []

    def __getstate__(self) -> dict[str, object]:
        # what a profile remembers of the kernels it costed stays in this process (a batch sends
        # profiles to its workers: the bodies kept by costs_of would travel with them)
        return {k: v for k, v in self.__dict__.items() if k not in ("_costs", "_cost_lists")}

    # ------------------------------------------------------------------ 001's memory mapper
    def global_memory_lambdas(self, dram_ratio: float) -> tuple[float, float]:
        """(λ, Λ) of a global access for R = bytes_DRAM / bytes_global (001 section 6.3;
        :func:`engine.profiles.cost_rules.global_memory_lambdas`)."""
        return global_memory_lambdas(self, dram_ratio)

    def shared_memory_lambdas(self, conflict_degree: float) -> tuple[float, float]:
        """(λ, Λ) of a shared-memory access with bank-conflict degree D (001 section 6.3;
        :func:`engine.profiles.cost_rules.shared_memory_lambdas`)."""
        return shared_memory_lambdas(self, conflict_degree)

    # ------------------------------------------------------------------ other look-ups
    def kernel_cycles(self, execution_cycles: float) -> float:
        """A model's execution cycles as a measured kernel duration: plus the fixed cost of a
        launch (``device.kernel_launch_cycles``; 0 where the profile has not measured it)."""
        return execution_cycles + self.device.kernel_launch_cycles

    def source_of(self, dotted_key: str) -> str:
        """Where a number came from: the most specific ``[sources]`` entry, else the
        ``source`` key of its section, else ``""``. (The Many-BSP figures of a profile without a
        ``[manybsp]`` section say where each came from: ``engine.manybsp.device_figures.figure_source``.)"""
        parts = dotted_key.split(".")
        for n in range(len(parts), 0, -1):
            key = ".".join(parts[:n])
            if key in self.sources:
                return self.sources[key]
        if parts[0] == "units" and len(parts) > 1:
            try:
                return self.units[Unit(parts[1])].source
            except (ValueError, KeyError):
                return ""
        if parts[0] == "manybsp" and self.manybsp is not None:
            return self.manybsp.source
        if parts[0] == "pipeline":
            return self.pipeline.source
        return ""
