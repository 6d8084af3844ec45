"""GPU profiles: device figures, functional units, model parameters and per-instruction costs.

A profile is one TOML file (``profiles/<name>.toml``, format in ``profiles/README.md``).
:func:`load_profile` validates it (:mod:`engine.profile_schema`) and returns a frozen
:class:`Profile`; :meth:`Profile.cost` turns an instruction into the numbers both models need.

Reading is defensive: a profile must be a regular file of at most :data:`MAX_PROFILE_BYTES`
(checked before reading, so ``/dev/zero`` or a FIFO is refused at once), UTF-8 text, and valid
TOML; every failure is a one-line :class:`ProfileError`. :func:`list_profiles` lists only the
profiles that load: a broken file in a profile folder is skipped, and the reason is kept for
:func:`profile_problems` (and logged). A broken file still shadows a shipped profile of the same
name: ``load_profile(name)`` then raises that file's error instead of loading another file.
"""

from __future__ import annotations

import logging
import math
import os
import stat
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from engine.errors import ModelError, ProfileError, WarplineError
from engine.profile_match import OpcodePattern, compile_pattern
from engine.profile_schema import validate_profile_data
from engine.ptx.model import OperandKind
from engine.units import MemorySpace, Unit

SHIPPED_DIR = Path(__file__).resolve().parent.parent / "profiles"
MAX_PROFILE_BYTES = 1 << 20  # shipped profiles are under 20 KB
_LOG = logging.getLogger(__name__)
USER_DIR = Path("~/.config/warpline/profiles")
PATH_ENV = "WARPLINE_PROFILE_PATH"

# Spaces whose accesses leave the SM: they pay the global-memory latency (000's lat_comm).
OFF_CHIP_SPACES = frozenset({MemorySpace.GLOBAL, MemorySpace.LOCAL, MemorySpace.TEXTURE, MemorySpace.GENERIC})


class ClassificationLike(Protocol):
    """What :meth:`Profile.cost` reads from ``engine.analysis.classify.Classification``."""

    unit: Unit
    space: MemorySpace
    is_load: bool
    is_store: bool
    is_barrier: bool
    width_bytes: int | None


class InstructionLike(Protocol):
    @property
    def full_opcode(self) -> str: ...


@dataclass(frozen=True)
class Device:
    """The ``[device]`` section. Sizes in bytes, clock in MHz."""

    name: str
    architecture: str
    sm_count: int
    schedulers_per_sm: int
    dispatch_units_per_scheduler: int
    warp_size: int
    clock_mhz: float
    max_threads_per_sm: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    max_threads_per_block: int
    registers_per_sm: int
    max_registers_per_block: int
    max_registers_per_thread: int
    register_allocation_unit: int
    register_file_partitions: int
    shared_memory_per_sm: int
    max_shared_memory_per_block: int
    shared_memory_allocation_unit: int
    reserved_shared_memory_per_block: int
    warp_allocation_granularity: int = 1
    shared_memory_carveouts: tuple[int, ...] = ()
    max_shared_memory_per_block_optin: int | None = None
    shared_memory_banks: int = 32
    vendor: str = "nvidia"
    chip: str | None = None
    compute_capability: str | None = None
    l1_cache_bytes: int | None = None
    l2_cache_bytes: int | None = None
    global_memory_bytes: int | None = None
    global_memory_segment_bytes: int = 128
    memory_bandwidth_gbps: float | None = None
    kernel_launch_cycles: float = 0.0
    default_for_target: bool = False

    @property
    def sm_version(self) -> int | None:
        """``"8.6"`` -> 86 (what ptxas's ``-arch=sm_XX`` wants); None without a capability."""
        if not self.compute_capability:
            return None
        major, _, minor = self.compute_capability.partition(".")
        return int(major) * 10 + int(minor or 0) if major.isdigit() else None

    @property
    def max_smem_per_block_any(self) -> int:
        """The most shared memory one block can get (opt-in limit where there is one)."""
        return max(self.max_shared_memory_per_block, self.max_shared_memory_per_block_optin or 0)


@dataclass(frozen=True)
class UnitSpec:
    """One ``[units.<name>]`` section: unit counts and the class defaults of its instructions."""

    unit: Unit
    per_sm: int
    per_scheduler: int
    n_fu: int | None = None
    T: float | None = None
    lat_comp: float | None = None
    lat_comm: float | None = None
    lam: float | None = None
    Lam: float | None = None
    source: str = ""


# How a Many-BSP figure of a profile without a [manybsp] section was obtained.
DERIVED = "derived"          # computed from this profile's own figures (the key is named)
ASSUMED = "assumed"          # a value no profile figure gives, taken from 000's convention
PLACEHOLDER = "placeholder"  # nothing defines it: a stand-in the predictions must not be trusted on
MISSING = "missing"          # cannot be derived: the Many-BSP prediction is refused without it

# μ (eq. 24) has no measurement recipe in 000; the measured profiles (h100, h200) keep this
# placeholder too (docs/microbenchmarks.md), so a derived profile uses the same one.
MU_PLACEHOLDER = 2.0


@dataclass(frozen=True)
class DerivedValue:
    """One Many-BSP figure that a profile does not state: ``kind`` (DERIVED, ASSUMED,
    PLACEHOLDER or MISSING), ``provenance`` (one line: which key it came from, or why nothing
    gives it) and ``origin`` (the same, a few words long)."""

    key: str
    kind: str
    provenance: str
    origin: str = ""   # short form for one-line warnings: the key it came from, or the kind


@dataclass(frozen=True)
class ManyBspParams:
    """The ``[manybsp]`` section (000's device-level parameters).

    For a profile without that section, :attr:`Profile.manybsp_figures` builds one from the other
    sections (:func:`derive_manybsp`); ``derivation`` then lists every value it did not read from a
    ``[manybsp]`` section. A MISSING value is 0 here and only good for the BLOCK table and the
    supersteps, which never read it: the prediction must be refused (``missing``).
    """

    mem_lat: float
    mu: float
    block_lnch_ovh: float
    warp_lnch_ovh: float
    barrier_overhead: tuple[tuple[int, float], ...]  # (threads per block, cycles), sorted
    g0: float | None = None
    g1: float | None = None
    g2: float | None = None
    issue_cycle: float = 1.0
    source: str = ""
    derivation: tuple[DerivedValue, ...] = ()

    @property
    def is_derived(self) -> bool:
        """True when these figures were built from a profile's other sections."""
        return bool(self.derivation)

    @property
    def missing(self) -> dict[str, str]:
        """Key -> why it cannot be derived, for the values the prediction cannot do without."""
        return {d.key: d.provenance for d in self.derivation if d.kind == MISSING}

    def derived_value(self, key: str) -> DerivedValue | None:
        """How ``key`` (``mem_lat``, ``barrier_overhead``...) was obtained; None when stated."""
        return next((d for d in self.derivation if d.key == key), None)

    def value_text(self, key: str) -> str:
        """``key``'s value as the front ends show it ("—" for a missing one; the barrier table as
        ``threads: cycles`` pairs)."""
        derived = self.derived_value(key)
        if derived is not None and derived.kind == MISSING:
            return "—"
        if key == "barrier_overhead":
            return ", ".join(f"{threads}: {cycles:g}" for threads, cycles in self.barrier_overhead)
        value = getattr(self, key)
        return "—" if value is None else f"{value:g}"


@dataclass(frozen=True)
class PipelineParams:
    """The ``[pipeline]`` section (001): issue limit and memory λ/Λ. λ is cycles per warp
    instruction for the whole SM (0.25 = four per cycle), as in 001's Tables 4 and 5."""

    issue_limit: float
    lambda_alu: float | None = None
    lambda_sfu: float | None = None
    memory: Mapping[str, float] = field(default_factory=dict)
    source: str = ""
    # DRAM latency under load: (share of peak DRAM bandwidth, cycles added to dram_Lam), the
    # shares rising from 0 to 1; empty when the profile has no measured curve
    dram_loaded: tuple[tuple[float, float], ...] = ()
    # the same beside gathering warps (isolated sectors): shares of the *streaming* peak, rising
    # from 0 to where scattered fetches saturate DRAM (below 1); empty when not measured
    dram_loaded_scattered: tuple[tuple[float, float], ...] = ()
    # the same beside streams that write part of their bytes: (share written, curve) by rising
    # share written, each curve in shares of the reading streams' peak; empty when not measured
    dram_loaded_mixed: tuple[tuple[float, tuple[tuple[float, float], ...]], ...] = ()
    # cycles from a block's last result to the next block's first warp on that slot of the SM
    # ([pipeline.blocks]); None when not measured
    block_turnaround: float | None = None
    # multi-line load latency: (lines, L1, L2, DRAM cycles over the one-line latency), lines rising
    # from 1; empty when the profile has no measured table
    line_latency: tuple[tuple[float, float, float, float], ...] = ()
    # stores / atomic adds at random slots ([[pipeline.scattered_stores]]): operation ("store",
    # "red") -> (footprint MiB, DRAM bytes read and written per store, SM cycles per store) rows,
    # footprints rising; empty when not measured
    scattered_stores: Mapping[str, tuple[tuple[float, float, float, float], ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class InstructionRule:
    """One ``[[instruction]]`` table. ``None`` fields fall back to the unit defaults."""

    pattern: OpcodePattern
    index: int
    unit: Unit | None = None
    n_fu: int | None = None
    T: float | None = None
    lat_comp: float | None = None
    lat_comm: float | None = None
    n_ma: float | None = None
    lam: float | None = None
    Lam: float | None = None
    special_registers: tuple[str, ...] = ()
    source: str = ""
    note: str = ""

    @property
    def specificity(self) -> tuple[int, int, int, int]:
        # An operand condition makes a rule more specific than the same pattern without it.
        return (*self.pattern.specificity, 1 if self.special_registers else 0)

    def matches(self, full_opcode: str, specials: frozenset[str]) -> bool:
        if self.special_registers and not specials.intersection(self.special_registers):
            return False
        return self.pattern.matches(full_opcode)


@dataclass(frozen=True)
class InstructionCost:
    """Everything both models charge for one instruction on one GPU.

    ``T`` is results per clock per warp scheduler (000); ``lam``/``Lam`` are 001's CPI and
    latency. ``is_default`` is True when no ``[[instruction]]`` rule matched and the unit's
    class defaults were used; ``defaulted`` names the fields a matching rule left to them.
    """

    opcode: str
    unit: Unit
    n_fu: int
    T: float
    lat_comp: float
    lat_comm: float
    n_ma: float
    lam: float
    Lam: float
    is_default: bool
    source: str
    pattern: str | None = None
    defaulted: tuple[str, ...] = ()


@dataclass(frozen=True)
class Provenance:
    """The ``[provenance]`` section: what the figures rest on, and whether they were measured on
    the GPU itself (``bench/micro``)."""

    basis: str
    measured_here: bool


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

    @cached_property
    def manybsp_figures(self) -> ManyBspParams:
        """The Many-BSP device figures: the ``[manybsp]`` section, or, for a profile without one,
        figures derived from its pipeline and device sections (:func:`derive_manybsp`), each
        marked with its provenance. ``manybsp`` itself stays None for such a profile, so that the
        Pipeline model and the default-profile choice see only what the file states."""
        return self.manybsp if self.manybsp is not None else derive_manybsp(self)

    # ------------------------------------------------------------------ costs
    def rule_for(self, full_opcode: str, special_registers: Iterable[str] = ()) -> InstructionRule | None:
        """The most specific matching rule (ties: the earlier rule in the file).
        ``special_registers`` are the special registers the instruction reads (``tid``)."""
        specials = frozenset(special_registers)
        best: InstructionRule | None = None
        for rule in self.rules:
            if rule.matches(full_opcode, specials) and (best is None or rule.specificity > best.specificity):
                best = rule
        return best

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
            special_registers=_special_registers(instruction),
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
            known = self._costs[key] = self._cost_for_opcode(full_opcode, unit, space, width_bytes, specials)
        return known

    @cached_property
    def _costs(self) -> dict[tuple, InstructionCost]:
        return {}

    def _cost_for_opcode(self, full_opcode: str, unit: Unit, space: MemorySpace, width_bytes: int | None,
                         special_registers: frozenset[str]) -> InstructionCost:
        rule = self.rule_for(full_opcode, special_registers)
        unit = rule.unit if rule is not None and rule.unit is not None else unit
        defaults = self._class_defaults(unit, space, width_bytes)
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
            if rule.lam is None and rule.T is not None and self._unit_spec(unit).lam is None:
                values["lam"] = self._lam_from_T(values["T"])
            if rule.Lam is None and (rule.lat_comp is not None or rule.lat_comm is not None):
                values["Lam"] = values["lat_comp"] + values["lat_comm"]
        source = rule.source if rule is not None and rule.source else self._unit_source(unit)
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

    def _unit_spec(self, unit: Unit) -> UnitSpec:
        # Control, barrier and tensor instructions without their own section run on the
        # integer/FP32 pipeline's issue slots, which is how 000 charges branches (to FU1).
        return self.units.get(unit) or self.units[Unit.ALU]

    def _unit_source(self, unit: Unit) -> str:
        spec = self._unit_spec(unit)
        base = spec.source or self.sources.get(f"units.{spec.unit.value}", self.sources.get("units", ""))
        label = f"class default of unit {spec.unit.value}"
        return f"{label} ({base})" if base else label

    def _lam_from_T(self, T: float) -> float:
        # T results per clock per scheduler, all schedulers in parallel: one warp instruction
        # occupies the SM's pipeline for warp_size / (T * n_ws) cycles (001's λ convention).
        if T <= 0:
            return math.inf
        return self.device.warp_size / (T * self.device.schedulers_per_sm)

    def _class_defaults(self, unit: Unit, space: MemorySpace, width_bytes: int | None) -> dict[str, float]:
        spec = self._unit_spec(unit)
        T = spec.T if spec.T is not None else float(spec.per_scheduler)
        off_chip = space in OFF_CHIP_SPACES
        mem = self.pipeline.memory
        if off_chip:
            mem_lat = self.manybsp.mem_lat if self.manybsp else mem.get("global_Lam", 0.0)
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
            segment = self.device.global_memory_segment_bytes
            n_ma = float(max(1, math.ceil(width * self.device.warp_size / segment)))
        lam = spec.lam if spec.lam is not None else self._lam_from_T(T)
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

    # ------------------------------------------------------------------ 001's memory mapper
    def global_memory_lambdas(self, dram_ratio: float) -> tuple[float, float]:
        """(λ, Λ) of a global access for R = bytes_DRAM / bytes_global (001 section 6.3).

        R < 1: the other 1 - R of the bytes come from L2, so λ and Λ are the R-weighted mix of
        the DRAM and L2 figures. R > 1: the excess bytes queue behind each other, adding
        (R - 1) DRAM issue slots to the latency and multiplying λ by R. Missing L2 figures fall
        back to DRAM ones, missing DRAM figures to the cost of a plain ``ld.global``.
        """
        m = self.pipeline.memory
        # Without [pipeline.memory] figures, a plain global load's cost stands in for DRAM.
        load = self.cost_for_opcode("ld.global.b32", Unit.LDST, space=MemorySpace.GLOBAL, width_bytes=4)
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

    def shared_memory_lambdas(self, conflict_degree: float) -> tuple[float, float]:
        """(λ, Λ) of a shared-memory access with bank-conflict degree D (001 section 6.3:
        OpenCL "local" memory): each extra way of conflict costs one more λ."""
        if not conflict_degree >= 0:
            raise ModelError(f"the bank-conflict degree D must be >= 0, got {conflict_degree}")
        base = self.cost_for_opcode("ld.shared.b32", Unit.LDST, space=MemorySpace.SHARED, width_bytes=4)
        return (1 + conflict_degree) * base.lam, base.Lam + conflict_degree * base.lam

    # ------------------------------------------------------------------ other look-ups
    def kernel_cycles(self, execution_cycles: float) -> float:
        """A model's execution cycles as a measured kernel duration: plus the fixed cost of a
        launch (``device.kernel_launch_cycles``; 0 where the profile has not measured it)."""
        return execution_cycles + self.device.kernel_launch_cycles

    def barrier_overhead(self, threads_per_block: int) -> float:
        """000's barrier overhead for a block size: the table value, linear interpolation
        between table rows, and the nearest row's value outside the table (no extrapolation:
        the two measured points do not say how the cost grows beyond them). A profile without a
        ``[manybsp]`` section uses the table derived from its ``bar.sync`` rule."""
        figures = self.manybsp_figures
        if MISSING_BARRIER in figures.missing:
            where = str(self.path or self.name)
            raise ProfileError("this profile has no [manybsp] section and no bar.sync rule to derive "
                               "the barrier overhead from", where, "manybsp")
        table = figures.barrier_overhead
        if threads_per_block <= table[0][0]:
            return table[0][1]
        for (t0, c0), (t1, c1) in zip(table, table[1:], strict=False):
            if threads_per_block <= t1:
                return c0 + (c1 - c0) * (threads_per_block - t0) / (t1 - t0)
        return table[-1][1]

    def source_of(self, dotted_key: str) -> str:
        """Where a number came from: the most specific ``[sources]`` entry, else the
        ``source`` key of its section, else ``""``."""
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
        if parts[0] == "manybsp":
            # No [manybsp] section: say how each derived value was obtained.
            figures = self.manybsp_figures
            derived = figures.derived_value(parts[1]) if len(parts) > 1 else None
            if derived is not None:
                return f"{derived.kind}: {derived.provenance}"
            return figures.source
        if parts[0] == "pipeline":
            return self.pipeline.source
        return ""


MISSING_BARRIER = "barrier_overhead"


def derive_manybsp(profile: Profile) -> ManyBspParams:
    """Many-BSP figures for a profile without a ``[manybsp]`` section (001's GPUs), built from its
    pipeline and device figures; every value says where it came from (``derivation``).

    * ``mem_lat``: the latency Λ of a global access, ``pipeline.memory.global_Lam``, else
      ``dram_Lam``, else the ``ld.global`` rule's ``lat_comm``/Λ, else ``units.ldst.lat_comm``.
    * ``barrier_overhead``: from the ``bar.sync`` rule (or a ``[units.barrier]`` section):
      ``Λ + (warps − 1)·λ``, the cycles until 001's pipeline releases a block whose warps all
      issue the barrier into a pipe that takes one every λ cycles; a two-row table (one warp, the
      largest block), so the linear interpolation gives that line at every block size.
    * ``issue_cycle`` = 1 (assumed: 000's value on all its GPUs; 001's issue limit IL is not
      used, as it folds in unit throughput that the BLOCK table's FU columns already charge).
    * ``mu`` = :data:`MU_PLACEHOLDER` (nothing defines μ; 000 gives no way to measure it).
    * ``block_lnch_ovh``, ``warp_lnch_ovh``: no profile section has launch-overhead figures, so
      they are MISSING (0 here): the prediction is refused until they are given.
    """
    dev, mem = profile.device, profile.pipeline.memory
    notes: list[DerivedValue] = []

    mem_lat = 0.0
    global_rule = profile.rule_for("ld.global.b32")
    ldst = profile.units.get(Unit.LDST)
    candidates: list[tuple[str, float | None]] = [
        ("pipeline.memory.global_Lam", mem.get("global_Lam")),
        ("pipeline.memory.dram_Lam", mem.get("dram_Lam")),
    ]
    if global_rule is not None:
        rule_lat = global_rule.lat_comm if global_rule.lat_comm else global_rule.Lam
        candidates.append((f"the '{global_rule.pattern.text}' rule's latency", rule_lat))
    candidates.append(("units.ldst.lat_comm", ldst.lat_comm if ldst is not None else None))
    found = next(((key, value) for key, value in candidates if value is not None and value > 0), None)
    if found is not None:
        mem_lat = float(found[1])
        notes.append(DerivedValue("mem_lat", DERIVED, f"{mem_lat:g} cycles from {found[0]}, the profile's "
                                  "global-memory latency Λ", f"from {found[0]}"))
    else:
        notes.append(DerivedValue("mem_lat", MISSING, "no global-memory latency in the profile "
                                  "(pipeline.memory.global_Lam/dram_Lam, an ld.global rule or units.ldst.lat_comm)",
                                  "no global-memory latency"))

    barrier: tuple[tuple[int, float], ...] = ((dev.warp_size, 0.0),)
    bar_rule = profile.rule_for("bar.sync")
    if bar_rule is not None or Unit.BARRIER in profile.units:
        cost = profile.cost_for_opcode("bar.sync", Unit.BARRIER)
        lam, Lam = cost.lam, cost.Lam
        where = f"the '{bar_rule.pattern.text}' rule" if bar_rule is not None else "units.barrier"
        if math.isfinite(lam) and math.isfinite(Lam):
            top = dev.max_threads_per_block
            warps = math.ceil(top / dev.warp_size)
            barrier = ((dev.warp_size, float(Lam)),)
            if top > dev.warp_size:
                barrier += ((top, float(Lam + (warps - 1) * lam)),)
            notes.append(DerivedValue(MISSING_BARRIER, DERIVED,
                                      f"from {where} (λ = {lam:g}, Λ = {Lam:g}): Λ + (warps − 1)·λ, "
                                      f"{Lam:g} cycles for one warp, {barrier[-1][1]:g} for {top} threads",
                                      f"from {where}'s λ/Λ"))
        else:
            notes.append(DerivedValue(MISSING_BARRIER, MISSING, f"{where} has no finite λ/Λ", "no finite λ/Λ"))
    else:
        notes.append(DerivedValue(MISSING_BARRIER, MISSING, "no bar.sync rule or [units.barrier] section "
                                  "to derive it from", "no bar.sync rule"))

    notes.append(DerivedValue("issue_cycle", ASSUMED, "1 cycle per warp instruction and scheduler, 000's "
                              "value on all its GPUs (pipeline.issue_limit is not used: it includes unit "
                              "throughput that the FU columns already charge)", "assumed, 000's value"))
    notes.append(DerivedValue("mu", PLACEHOLDER, "nothing in the profile defines μ and 000 gives no way to "
                              f"measure it; {MU_PLACEHOLDER:g} is the placeholder the measured h100/h200 profiles "
                              "use too (000's GPUs print 1.93 to 3.49)", "placeholder, nothing defines μ"))
    for key in ("block_lnch_ovh", "warp_lnch_ovh"):
        notes.append(DerivedValue(key, MISSING, "the profile has no [manybsp] section and no launch-overhead "
                                  "figure to derive it from: [pipeline] has none, 001 measures none",
                                  "no launch-overhead figure"))
    return ManyBspParams(
        mem_lat=mem_lat,
        mu=MU_PLACEHOLDER,
        block_lnch_ovh=0.0,
        warp_lnch_ovh=0.0,
        barrier_overhead=barrier,
        issue_cycle=1.0,
        source="derived: the profile has no [manybsp] section; each figure comes from its [pipeline], "
               "instruction and device figures or is marked assumed, placeholder or missing",
        derivation=tuple(notes),
    )


def manybsp_derivation_line(profile: Profile) -> str:
    """One line naming every Many-BSP figure the profile does not state, with its provenance
    ('' for a profile with a [manybsp] section): the warning the front ends print."""
    figures = profile.manybsp_figures
    if not figures.is_derived:
        return ""
    values = {"mem_lat": figures.mem_lat, "issue_cycle": figures.issue_cycle, "mu": figures.mu}
    shown = [f"{d.key}{f' = {values[d.key]:g}' if d.key in values else ''} ({d.origin})"
             for d in figures.derivation if d.kind != MISSING]
    missing = [f"{d.key} ({d.origin})" for d in figures.derivation if d.kind == MISSING]
    line = (f"Many-BSP parameters derived from the pipeline figures (profile {profile.name!r} has no "
            f"[manybsp] section): " + ", ".join(shown))
    if missing:
        line += f"; cannot be derived: {', '.join(missing)}"
    return line


def _special_registers(instruction: InstructionLike | str) -> tuple[str, ...]:
    """``("tid", "ctaid")`` for ``mov.u32 %r1, %tid.x`` style operands (no ``%``, no ``.x``)."""
    operands = getattr(instruction, "operands", ())
    names = []
    for operand in operands:
        if getattr(operand, "kind", None) == OperandKind.SPECIAL and operand.name:
            names.append(operand.name.lstrip("%").split(".")[0])
    return tuple(names)


# ---------------------------------------------------------------------- loading


def profile_dirs() -> list[Path]:
    """Search order: ``$WARPLINE_PROFILE_PATH`` entries, the user directory, the shipped one."""
    dirs = [Path(p).expanduser() for p in os.environ.get(PATH_ENV, "").split(os.pathsep) if p]
    dirs.append(USER_DIR.expanduser())
    dirs.append(SHIPPED_DIR)
    return dirs


# path -> (the file's identity when checked, the ProfileError it gave or None)
_CHECKED: dict[Path, tuple[tuple[int, int, int, int], ProfileError | None]] = {}
_PROBLEMS: list[str] = []


def profile_problems() -> list[str]:
    """One line per profile file that the latest :func:`list_profiles` skipped, and why."""
    return list(_PROBLEMS)


def _candidates() -> list[tuple[str, Path]]:
    """(name, path) of every ``*.toml`` in the search directories, in search order; folders
    that cannot be listed are reported as problems."""
    out: list[tuple[str, Path]] = []
    for directory in profile_dirs():
        try:
            if not directory.is_dir():
                continue
            paths = sorted(directory.glob("*.toml"))
        except OSError as exc:
            _PROBLEMS.append(f"{directory}: cannot list the profile folder: {exc.strerror or exc}")
            continue
        out.extend((path.stem, path) for path in paths)
    return out


def _check(path: Path) -> ProfileError | None:
    """The error loading ``path`` gives (None when it loads), cached by the file's identity."""
    try:
        st = os.stat(path)
        identity = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev)
    except OSError as exc:
        return ProfileError(f"cannot read the profile: {exc.strerror or exc}", str(path))
    cached = _CHECKED.get(path)
    if cached is not None and cached[0] == identity:
        return cached[1]
    try:
        _load_path(path)
        problem = None
    except ProfileError as exc:
        problem = exc
    except WarplineError as exc:  # pragma: no cover - every refusal is a ProfileError
        problem = ProfileError(str(exc), str(path))
    if problem is not None and (cached is None or cached[1] is None or str(cached[1]) != str(problem)):
        _LOG.warning("skipping profile %s", problem)
    _CHECKED[path] = (identity, problem)
    return problem


def list_profiles() -> dict[str, Path]:
    """Every profile name that loads, mapped to its file. A user file shadows a shipped one of
    the same name, so a user can edit a copy without touching the installation; a broken file
    is left out (its reason goes to :func:`profile_problems`) and still shadows the others, as
    it does for :func:`load_profile`."""
    _PROBLEMS.clear()
    found: dict[str, Path] = {}
    claimed: set[str] = set()
    candidates = _candidates()
    for name, path in candidates:
        if name in claimed:
            continue
        claimed.add(name)
        problem = _check(path)
        if problem is None:
            found[name] = path
            continue
        hidden = [p for n, p in candidates if n == name and p != path]
        also = f" (it hides {hidden[0]})" if hidden else ""
        _PROBLEMS.append(f"{problem} [skipped{also}]")
    return dict(sorted(found.items()))


def _named(name: str) -> Path | None:
    """The file ``load_profile(name)`` reads: the first ``<name>.toml`` in search order,
    whether or not it is valid."""
    for directory in profile_dirs():
        path = directory / f"{name}.toml"
        try:
            if path.exists() or path.is_symlink():
                return path
        except OSError:
            return path
    return None


def load_profile(name_or_path: str | os.PathLike[str]) -> Profile:
    """Load by name (``gtx1070``) or by path to a ``.toml`` file. Any problem with the file is a
    ProfileError naming it, even when another directory has a valid file of that name."""
    text_name = os.fspath(name_or_path)
    path = Path(text_name).expanduser()
    if not (text_name.endswith(".toml") or os.sep in text_name or path.is_file()):
        found = _named(text_name) if text_name and "\0" not in text_name else None
        if found is None:
            names = ", ".join(list_profiles()) or "none"
            raise ProfileError(f"no profile named {text_name!r} (known: {names})", text_name)
        path = found
    return _load_path(path)


def _load_path(path: Path) -> Profile:
    text = read_profile_text(path)
    return parse_profile(text, str(path), name=path.stem, path=path)


def read_profile_text(path: Path) -> str:
    """The text of a profile file: a regular file, at most MAX_PROFILE_BYTES, UTF-8."""
    where = str(path)
    try:
        # Non-blocking, so that opening a FIFO does not wait for a writer; fstat then refuses it.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb", buffering=0) as handle:
            st = os.fstat(handle.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise ProfileError("not a regular file (a profile is a .toml text file)", where)
            if st.st_size > MAX_PROFILE_BYTES:
                raise ProfileError(f"the file is {st.st_size} bytes; a profile may have at most "
                                   f"{MAX_PROFILE_BYTES}", where)
            data = handle.read(MAX_PROFILE_BYTES + 1)
    except OSError as exc:
        raise ProfileError(f"cannot read the profile: {exc.strerror or exc}", where) from exc
    except ValueError as exc:  # a path with a NUL byte
        raise ProfileError(f"cannot read the profile: {exc}", where) from exc
    if len(data) > MAX_PROFILE_BYTES:
        raise ProfileError(f"the file has more than {MAX_PROFILE_BYTES} bytes", where)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ProfileError(f"the file is not UTF-8 text (byte 0x{data[exc.start]:02x})", where,
                           None, line) from exc


def parse_profile(
    text: str, file: str = "<string>", *, name: str | None = None, path: Path | None = None
) -> Profile:
    """Validate and build a profile from TOML text."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = _decode_error_line(str(exc))
        raise ProfileError(f"not valid TOML: {exc}", file, None, line) from exc
    except RecursionError as exc:
        raise ProfileError("not valid TOML: arrays or tables nested too deeply", file) from exc
    except ValueError as exc:  # a number too long for Python's int conversion
        raise ProfileError("not valid TOML: a number has too many digits", file) from exc
    validate_profile_data(data, text, file)
    return _build(data, name or Path(file).stem, path)


def _decode_error_line(message: str) -> int | None:
    # tomllib reports "... (at line 12, column 5)".
    marker = "at line "
    if marker in message:
        digits = message.split(marker, 1)[1].split(",")[0].split(")")[0]
        return int(digits) if digits.isdigit() else None
    return None


def _curve(table: dict[str, Any] | None) -> tuple[tuple[float, float], ...]:
    """A ``[pipeline.dram_loaded*]`` table as (share, extra cycles) points; empty without one."""
    return tuple(zip(map(float, table["bandwidth_share"]), map(float, table["extra_Lam"]), strict=True)) \
        if table else ()


def _build(data: dict[str, Any], name: str, path: Path | None) -> Profile:
    dev = dict(data["device"])
    if "shared_memory_carveouts" in dev:
        dev["shared_memory_carveouts"] = tuple(sorted(dev["shared_memory_carveouts"]))
    device = Device(**dev)
    units = {
        Unit(unit_name): UnitSpec(unit=Unit(unit_name), **{k: v for k, v in table.items()})
        for unit_name, table in data["units"].items()
    }
    pipe = dict(data["pipeline"])
    memory = {k: float(v) for k, v in pipe.pop("memory", {}).items() if k != "source"}
    curve = _curve(pipe.pop("dram_loaded", None))
    scattered = _curve(pipe.pop("dram_loaded_scattered", None))
    mixed = tuple(sorted((float(t["write_share"]), _curve(t)) for t in pipe.pop("dram_loaded_mixed", [])))
    blocks = pipe.pop("blocks", None) or {}
    table = pipe.pop("line_latency", None)
    lines = tuple(zip(*(map(float, table[k]) for k in ("lines", "l1_extra", "l2_extra", "dram_extra")),
                      strict=True)) if table else ()
    stores = {str(t["operation"]): tuple(zip(*(map(float, t[k]) for k in ("footprint_mib", "read_bytes", "write_bytes",
                                                                          "sm_cycles")), strict=True))
              for t in pipe.pop("scattered_stores", [])}
    pipeline = PipelineParams(memory=memory, dram_loaded=curve, dram_loaded_scattered=scattered,
                              dram_loaded_mixed=mixed, block_turnaround=blocks.get("block_turnaround"),
                              line_latency=lines, scattered_stores=stores, **pipe)
    manybsp = None
    if "manybsp" in data:
        body = dict(data["manybsp"])
        barrier = tuple(sorted((int(k), float(v)) for k, v in body.pop("barrier_overhead").items()))
        manybsp = ManyBspParams(barrier_overhead=barrier, **body)
    rules = tuple(
        InstructionRule(
            pattern=compile_pattern(rule["pattern"]),
            index=i,
            unit=Unit(rule["unit"]) if "unit" in rule else None,
            special_registers=tuple(rule.get("special_registers", ())),
            **{k: v for k, v in rule.items() if k not in ("pattern", "unit", "special_registers")},
        )
        for i, rule in enumerate(data.get("instruction", []))
    )
    return Profile(
        name=name,
        path=path,
        description=data.get("description", ""),
        device=device,
        units=units,
        pipeline=pipeline,
        manybsp=manybsp,
        rules=rules,
        sources=dict(data.get("sources", {})),
        provenance=Provenance(**data["provenance"]) if "provenance" in data else None,
    )
