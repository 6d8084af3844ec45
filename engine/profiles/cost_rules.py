"""The cost rules: what one instruction costs on a profile's GPU, for both models.

The most specific ``[[instruction]]`` rule that matches the opcode (and the special registers it
reads) gives its figures; what the rule leaves out comes from the unit's class defaults
(``[units.*]``, the memory space's ``[pipeline.memory]`` figures, 000's n_ma conventions).
001's memory mapper turns a DRAM/global byte ratio or a bank-conflict degree into λ and Λ.
:class:`engine.profiles.profile.Profile` answers through these functions and remembers each answer.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from engine.errors import ModelError
from engine.profiles.sections import InstructionCost, InstructionLike, InstructionRule, UnitSpec
from engine.units import MemorySpace, Unit

if TYPE_CHECKING:
    from engine.profiles.profile import Profile

# Spaces whose accesses leave the SM: they pay the global-memory latency (000's lat_comm).
OFF_CHIP_SPACES = frozenset({MemorySpace.GLOBAL, MemorySpace.LOCAL, MemorySpace.TEXTURE, MemorySpace.GENERIC})


def matching_rule(rules: Iterable[InstructionRule], full_opcode: str,
                  special_registers: Iterable[str] = ()) -> InstructionRule | None:
    """The most specific of ``rules`` that matches (ties: the earlier rule in the file).
    ``special_registers`` are the special registers the instruction reads (``tid``)."""
    specials = frozenset(special_registers)
    best: InstructionRule | None = None
    for rule in rules:
        if rule.matches(full_opcode, specials) and (best is None or rule.specificity > best.specificity):
            best = rule
    return best


def special_registers_read(instruction: InstructionLike | str) -> tuple[str, ...]:
    """``("tid", "ctaid")`` for ``mov.u32 %r1, %tid.x`` style operands (no ``%``, no ``.x``)."""
    operands = getattr(instruction, "operands", ())
    names = []
    for operand in operands:
        if getattr(operand, "kind", None) == "special" and operand.name:
            names.append(operand.name.lstrip("%").split(".")[0])
    return tuple(names)


def instruction_cost(profile: Profile, full_opcode: str, unit: Unit, space: MemorySpace, width_bytes: int | None,
                     special_registers: frozenset[str]) -> InstructionCost:
    """The cost of one instruction: its rule's figures over the unit's class defaults (see
    :meth:`engine.profiles.profile.Profile.cost_for_opcode`, which remembers the answers)."""
    rule = profile.rule_for(full_opcode, special_registers)
    unit = rule.unit if rule is not None and rule.unit is not None else unit
    defaults = class_defaults(profile, unit, space, width_bytes)
    values = dict(defaults)
    defaulted: list[str] = []
    if rule is not None:
        for name in values:
            given = getattr(rule, name)
            if given is None:
                defaulted.append(name)
            else:
                values[name] = given
        # A rule that sets T but not λ keeps λ consistent with its own T.
        if rule.lam is None and rule.T is not None and unit_spec(profile, unit).lam is None:
            values["lam"] = lam_from_T(profile, values["T"])
        if rule.Lam is None and (rule.lat_comp is not None or rule.lat_comm is not None):
            values["Lam"] = values["lat_comp"] + values["lat_comm"]
    source = rule.source if rule is not None and rule.source else unit_source(profile, unit)
    return InstructionCost(
        opcode=full_opcode,
        unit=unit,
        n_fu=int(values["n_fu"]),
        T=float(values["T"]),
        lat_comp=float(values["lat_comp"]),
        lat_comm=float(values["lat_comm"]),
        n_ma=float(values["n_ma"]),
        lam=float(values["lam"]),
        Lam=float(values["Lam"]),
        is_default=rule is None,
        source=source,
        pattern=rule.pattern.text if rule is not None else None,
        defaulted=tuple(defaulted),
    )


def unit_spec(profile: Profile, unit: Unit) -> UnitSpec:
    """The ``[units.*]`` section that charges ``unit``."""
    # Control, barrier and tensor instructions without their own section run on the
    # integer/FP32 pipeline's issue slots, which is how 000 charges branches (to FU1).
    return profile.units.get(unit) or profile.units[Unit.ALU]


def unit_source(profile: Profile, unit: Unit) -> str:
    """Where the class defaults of ``unit`` come from, in words."""
    spec = unit_spec(profile, unit)
    base = spec.source or profile.sources.get(f"units.{spec.unit.value}", profile.sources.get("units", ""))
    label = f"class default of unit {spec.unit.value}"
    return f"{label} ({base})" if base else label


def lam_from_T(profile: Profile, T: float) -> float:
    """001's λ of a unit that gives ``T`` results per clock per warp scheduler."""
    # T results per clock per scheduler, all schedulers in parallel: one warp instruction
    # occupies the SM's pipeline for warp_size / (T * n_ws) cycles (001's λ convention).
    if T <= 0:
        return math.inf
    return profile.device.warp_size / (T * profile.device.schedulers_per_sm)


def class_defaults(profile: Profile, unit: Unit, space: MemorySpace, width_bytes: int | None) -> dict[str, float]:
    """The figures of an instruction of ``unit`` (accessing ``space``) that no rule gives."""
    spec = unit_spec(profile, unit)
    T = spec.T if spec.T is not None else float(spec.per_scheduler)
    off_chip = space in OFF_CHIP_SPACES
    mem = profile.pipeline.memory
    if off_chip:
        mem_lat = profile.manybsp.mem_lat if profile.manybsp else mem.get("global_Lam", 0.0)
        lat_comp, lat_comm = 0.0, spec.lat_comm if spec.lat_comm is not None else mem_lat
    else:
        lat_comp, lat_comm = (spec.lat_comp or 0.0), 0.0
    if space in (MemorySpace.NONE, MemorySpace.PARAM, MemorySpace.CONST):
        n_ma = 0.0  # 000 leaves n_ma blank for parameter loads: they never reach memory
    elif space == MemorySpace.SHARED:
        n_ma = 1.0  # one shared-memory access per warp; bank conflicts come from the analysis
    else:
        # Transactions per fully coalesced warp access: 4-byte words fill one 128-byte
        # segment, 8-byte ones two (000 charges n_ma = 2 there). The memory analysis
        # replaces this for uncoalesced patterns.
        width = width_bytes or 4
        segment = profile.device.global_memory_segment_bytes
        n_ma = float(max(1, math.ceil(width * profile.device.warp_size / segment)))
    lam = spec.lam if spec.lam is not None else lam_from_T(profile, T)
    Lam = spec.Lam if spec.Lam is not None else lat_comp + lat_comm
    kind = {
        MemorySpace.GLOBAL: "global",
        MemorySpace.GENERIC: "global",
        MemorySpace.TEXTURE: "global",
        MemorySpace.LOCAL: "local",
        MemorySpace.SHARED: "shared",
    }.get(space)
    if kind is not None:
        lam = mem.get(f"{kind}_lam", lam)
        Lam = mem.get(f"{kind}_Lam", Lam)
    n_fu = spec.n_fu if spec.n_fu is not None else spec.per_scheduler
    return {
        "n_fu": n_fu,
        "T": T,
        "lat_comp": lat_comp,
        "lat_comm": lat_comm,
        "n_ma": n_ma,
        "lam": lam,
        "Lam": Lam,
    }


# ---------------------------------------------------------------------- 001's memory mapper


def global_memory_lambdas(profile: Profile, dram_ratio: float) -> tuple[float, float]:
    """(λ, Λ) of a global access for R = bytes_DRAM / bytes_global (001 section 6.3).

    R < 1: the other 1 - R of the bytes come from L2, so λ and Λ are the R-weighted mix of
    the DRAM and L2 figures. R > 1: the excess bytes queue behind each other, adding
    (R - 1) DRAM issue slots to the latency and multiplying λ by R. Missing L2 figures fall
    back to DRAM ones, missing DRAM figures to the cost of a plain ``ld.global``.
    """
    m = profile.pipeline.memory
    # Without [pipeline.memory] figures, a plain global load's cost stands in for DRAM.
    load = profile.cost_for_opcode("ld.global.b32", Unit.LDST, space=MemorySpace.GLOBAL, width_bytes=4)
    dram_lam = m.get("dram_lam", load.lam)
    dram_Lam = m.get("dram_Lam", load.Lam)
    if not dram_ratio >= 0:
        raise ModelError(f"the DRAM/global byte ratio R must be >= 0, got {dram_ratio}")
    l2_lam = m.get("l2_lam", dram_lam)
    l2_Lam = m.get("l2_Lam", dram_Lam)
    if dram_ratio <= 1:
        lam = dram_ratio * dram_lam + (1 - dram_ratio) * l2_lam
        Lam = dram_ratio * dram_Lam + (1 - dram_ratio) * l2_Lam
        return lam, Lam
    return dram_ratio * dram_lam, dram_Lam + (dram_ratio - 1) * dram_lam


def shared_memory_lambdas(profile: Profile, conflict_degree: float) -> tuple[float, float]:
    """(λ, Λ) of a shared-memory access with bank-conflict degree D (001 section 6.3:
    OpenCL "local" memory): each extra way of conflict costs one more λ."""
    if not conflict_degree >= 0:
        raise ModelError(f"the bank-conflict degree D must be >= 0, got {conflict_degree}")
    base = profile.cost_for_opcode("ld.shared.b32", Unit.LDST, space=MemorySpace.SHARED, width_bytes=4)
    return (1 + conflict_degree) * base.lam, base.Lam + conflict_degree * base.lam
