"""The records a GPU profile is made of: device figures, functional units, the Many-BSP and
Pipeline sections, instruction rules and the cost of one instruction.

Plain frozen data; :class:`engine.profiles.profile.Profile` holds them, :mod:`engine.profiles.parsing`
builds them from TOML, :mod:`engine.profiles.cost_rules` applies the rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from engine.profile_match import OpcodePattern
from engine.units import MemorySpace, Unit


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

    For a profile without that section, ``engine.manybsp.device_figures.manybsp_figures`` builds one
    from the other sections; ``derivation`` then lists every value it did not read from a
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
