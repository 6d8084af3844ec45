"""The results of the memory analysis: one :class:`AccessInfo` per access, and a display table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.units import AccessKind, MemorySpace


@dataclass(frozen=True)
class AccessInfo:
    """One global or shared memory instruction. Pattern fields are None when the address is
    neither affine nor computable per lane, no lane executes the access, or the launch gives
    no block shape (``unknown_reason`` says which). Means are over the sampled warps, weighted
    by the blocks/iterations each sample stands for; maxima are over the sampled warps."""

    index: int
    line: int
    text: str
    space: MemorySpace                   # GLOBAL or SHARED (generic accesses resolved)
    width_bytes: int
    affine: str | None
    unknown_reason: str | None = None
    kind: AccessKind = AccessKind.LOAD
    # "affine": lanes enumerated from the affine form; "lanes": the address is integer
    # arithmetic but not affine (``non_affine`` says where), every lane evaluated exactly;
    # "estimate": a local offset that differs between lanes, taken as spread over the frame
    # (``non_affine`` says so); "": no pattern (``unknown_reason``).
    method: str = ""
    non_affine: str | None = None
    # the address is computed from data the kernel loads (a gather's or a scatter's index)
    data_dependent: bool = False
    # an irregular address from no loaded index (hashed) whose requests the run found on lines at
    # random places (engine.caches.randomly_placed): a gather or a scatter as much as an index's
    random_lines: bool = False
    warps_sampled: int = 0
    sectors_per_request: float | None = None    # mean 32-byte sectors per warp request
    sectors_max: int | None = None
    lines_per_request: float | None = None      # mean 128-byte lines per warp request
    lines_max: int | None = None
    efficiency: float | None = None             # useful bytes / fetched sector bytes
    # R estimate (001 §6.3): DRAM bytes / requested sector bytes. Within a block, the distinct
    # sectors over the Σ of its warps' sectors; times 1/gridDim for every block axis the
    # address does not depend on (every block along it reads the same data: L2 hits).
    dram_ratio: float | None = None
    # Share of the requested sectors that the block had not touched just before (same iteration,
    # earlier accesses; the loop's previous iteration): the L1 misses when the working set fits.
    block_miss: float | None = None
    l1_cached: bool = False                     # a load that L1 may serve (not .cg/.cv, not a store)
    # Bytes of the 128-byte lines the loads of this access's loop touch in one iteration of one
    # block: the working set L1 must hold for the reuse above to hit.
    block_footprint_bytes: float | None = None
    # Global loads: the most distinct 4-byte words one L1 bank serves per request (mean over the
    # sampled warps): an L1 hit takes that many wavefronts however few lines it touches.
    l1_bank_degree: float | None = None
    bank_conflict_degree: int | None = None     # max over sampled warps (1 = conflict-free)
    bank_conflict_mean: float | None = None
    active_lanes: float | None = None           # mean active lanes per issued request
    # Share of the sampled warp executions with an active lane: the others issue no request
    # (a tile loop's last pass, a guarded tail). 1 where not known.
    issue_share: float = 1.0
    # Every thread of the grid uses the same address at once (no thread, lane or block index in
    # its affine form): atomics to it serialise, in one SM (shared) or across the GPU (global).
    uniform_address: bool = False
    mask_note: str | None = None                # why every lane was taken as active, if so
    # Constant loads: mean distinct addresses per warp request (the constant cache serves one per
    # access; 1 = a broadcast).
    distinct_addresses: float | None = None
    # Share of the compulsory sectors above (R) that are first touches of the buffer by the whole
    # grid (its footprint / what R charges, <= 1; :mod:`engine.memory.footprint`), and the
    # footprint of every buffer the kernel reads or writes: the re-reads are L2 hits while it fits.
    grid_reuse: float | None = None
    kernel_footprint_bytes: float | None = None
    # Affine global accesses: the share of the grid's blocks that run between a block and the
    # farthest neighbour (one step along a block axis the address moves with) that reads the
    # same data again: the reuse distance of a halo is that share of the kernel's footprint.
    neighbour_distance_share: float | None = None
    buffer_footprint_bytes: float | None = None   # the bytes of this access's own buffer the kernel reads
    # Stores: the share of their DRAM sectors that L2 must read before writing them back: sectors
    # only partly written (every other float) that no other store of the kernel completes.
    fill_share: float = 0.0
    # Stores: the bytes every store of the kernel writes (their buffers' footprints), and those it
    # reads from buffers it does not write: how much of the written data L2 still holds when
    # the kernel ends (:func:`engine.memory.hierarchy.write_back_share`).
    # Loads: the share of their sectors whose 64-byte DRAM neighbour (the other half of one DRAM
    # fetch) the block reads within one loop iteration of them; None when not judged.
    paired_share: float | None = None
    kernel_written_bytes: float | None = None
    kernel_read_only_bytes: float | None = None
    # the pattern fields above come from running the sampled warps (engine.execution)
    executed: bool = False
    # shared atomics the run executed: (mean, last) passes per request of a compare-and-swap
    # retry loop over the executed addresses (engine.execution.recorder.cas_contention)
    cas_passes: tuple[float, float] | None = None

    @property
    def irregular(self) -> bool:
        """The lanes' addresses are not affine in the thread and loop indices: computed from
        loaded data (an index), or hashed, wrapped or otherwise mixed; the caches see them as a
        gather's or a scatter's, whose blocks may range over the buffer at random."""
        return self.data_dependent or (bool(self.method) and self.method != "affine")

    @property
    def issuing_share(self) -> float:
        """Of the warps that reach it, the share that make a request: as the run found them (a
        warp whose lanes are all off makes none); a static pattern takes every warp as issuing."""
        return self.issue_share if self.executed else 1.0


@dataclass
class MemoryReport:
    kernel: str
    block: tuple[int, int, int] | None
    accesses: list[AccessInfo]
    assumptions: list[str] = field(default_factory=list)
    # the run of the sampled warps behind the executed patterns (engine.execution.Execution)
    execution: Any = None

    def by_index(self) -> dict[int, AccessInfo]:
        return {a.index: a for a in self.accesses}


def pattern_note(a: AccessInfo) -> str:
    """How the access's pattern was found, for display: why it has none, that its lanes were
    evaluated although the address is not affine, or that it is an estimate."""
    if a.method == "estimate":
        how = f"estimated ({a.non_affine})"
    else:
        how = f"not affine ({a.non_affine}): lanes evaluated" if a.non_affine else None
    what = None
    if a.text.startswith("tex.") and a.space is MemorySpace.GLOBAL:
        what = "1D texture fetch: read as texture base + index x texel bytes through L1"
    elif a.data_dependent and a.kind in (AccessKind.STORE, AccessKind.ATOMIC):
        what = "at data-dependent slots (a scatter): DRAM fills and write-backs as measured at the buffer's footprint"
    return "; ".join(filter(None, (a.unknown_reason, what, how, a.mask_note)))


def memory_table(report: MemoryReport) -> list[dict[str, Any]]:
    """One display row per access (plain values, rounded for reading)."""
    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 3)

    return [
        {
            "index": a.index, "line": a.line, "instruction": a.text, "space": a.space.value, "kind": a.kind,
            "width": a.width_bytes, "address": a.affine or ("non-affine" if a.method else "?"),
            "sectors/req": r(a.sectors_per_request), "lines/req": r(a.lines_per_request),
            "efficiency": r(a.efficiency), "R": r(a.dram_ratio),
            "bank conflicts": a.bank_conflict_degree, "active lanes": r(a.active_lanes),
            "method": a.method, "note": pattern_note(a),
        }
        for a in report.accesses
    ]
