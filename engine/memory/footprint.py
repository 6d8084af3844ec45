"""What the whole grid touches of each buffer, against what it reads: reuse that only L2 can see.

The block-level model (:mod:`engine.memory.hierarchy`) counts as DRAM traffic every sector that
no earlier access of the *same block* touched, divided among the blocks that provably share an
address (an axis the address ignores, halos overlapping the next block). Reuse between blocks
that are far apart in the grid escapes it: a stencil whose rows are read again by the block
below, a struct array read by two kernels' worth of fields, a tiled kernel whose tiles overlap.
L2 keeps such data when the kernel's working set fits in it, so DRAM reads each byte once.

Per buffer (the pointer argument or global variable an address starts from) and kind (loads,
stores), this module compares

* the **footprint**: the union of the address ranges of its accesses over the whole grid (first
  to last thread, block and loop iteration), at most the requested sectors (a sparse walk touches
  one sector per element, not the whole range), and
* the **compulsory bytes** the block-level model charges: requests × sectors × 32 B × R,

and gives each access the share ``grid_reuse = footprint / compulsory`` (≤ 1) of its compulsory
sectors that are first touches. :func:`engine.memory.hierarchy.level_shares` turns the rest into
L2 hits as far as the kernel's footprint (every buffer's, summed) fits in L2. An estimate: ranges
are taken as dense where the access count allows it, and addresses without a pattern (data the
tool cannot see) are left out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from engine.analysis.loaded_data import BUFFER_SHIFT
from engine.memory.access_report import AccessInfo
from engine.memory.affine import Affine, base_address
from engine.memory.patterns import SECTOR
from engine.units import AccessKind, MemorySpace


@dataclass(frozen=True)
class AddressRange:
    """Lowest and highest byte address one access reaches over the grid, and how many distinct
    elements it can touch there at most (None: not bounded by the form)."""

    low: int
    high: int
    elements: int | None = None

    @property
    def buffer(self) -> int | None:
        """The array the range lies in; None when it straddles two (then nothing is told)."""
        a, b = self.low >> BUFFER_SHIFT, self.high >> BUFFER_SHIFT
        return a if a == b else None


def affine_range(form: Affine, ranges: dict[str, int | None], width: int) -> AddressRange | None:
    """The range of an affine address when every atom runs over ``ranges`` (values 0..n-1: thread
    and block indices, loop iterations) or is a pointer or global at its lane-enumeration base
    (``affine.base_address``). None when an atom is neither."""
    low = high = form.const
    elements = 1
    floor = None   # the buffer's start: no valid address lies below it (a halo's x - 1 at x = 0 is guarded)
    for atom, coeff in form.terms:
        n = ranges.get(atom)
        if n is not None:
            span = coeff * (max(n, 1) - 1)
            low += min(0, span)
            high += max(0, span)
            elements *= max(n, 1)
            continue
        base = base_address(atom)
        if not base:
            return None
        low += coeff * base
        high += coeff * base
        if coeff == 1:
            floor = base if floor is None else max(floor, base)
    if floor is not None and floor <= high:
        low = max(low, floor)
    return AddressRange(low, high + width - 1, elements)


def sampled_range(addresses: Sequence[np.ndarray]) -> AddressRange | None:
    """The range of an access evaluated per lane at the sampled contexts (first and last blocks
    and iterations among them)."""
    arrays = [np.asarray(a) for a in addresses if np.asarray(a).size]
    if not arrays:
        return None
    return AddressRange(int(min(a.min() for a in arrays)), int(max(a.max() for a in arrays)))


def with_grid_reuse(accesses: list[AccessInfo], ranges: dict[int, AddressRange],
                    requests: Callable[[int], float]) -> list[AccessInfo]:
    """``accesses`` with ``grid_reuse`` and ``kernel_footprint_bytes`` set on the global loads
    and stores that have a pattern and a range (``ranges``: by position in ``accesses``).
    ``requests(i)``: warp requests of instruction ``i`` over the grid."""
    groups: dict[tuple[int, str], list[int]] = {}
    for position, r in ranges.items():
        a = accesses[position]
        if (a.space is not MemorySpace.GLOBAL or a.dram_ratio is None or a.sectors_per_request is None
                or r.buffer is None):
            continue
        groups.setdefault((r.buffer, a.kind), []).append(position)
    footprint: dict[tuple[int, str], float] = {}
    reuse: dict[int, float] = {}
    fill: dict[int, float] = {}
    floor: dict[int, float] = {}
    for key, members in groups.items():
        requested = {p: requests(accesses[p].index) * (accesses[p].sectors_per_request or 0.0) * SECTOR
                     for p in members}
        compulsory = sum(requested[p] * (accesses[p].dram_ratio or 0.0) for p in members)
        footprint[key] = min(_union_bytes([ranges[p] for p in members]), sum(requested.values()))
        if compulsory > 0:
            share = footprint[key] / compulsory
            for p in members:
                reuse[p] = min(1.0, share)
            if share > 1.0:
                # The block-level model found fewer first touches than the buffer has bytes (the
                # next block along an axis reads the same panel, so it called them L2 hits): but
                # the grid reads every byte of it once, and that once is from DRAM.
                for p in members:
                    floor[p] = min(1.0, (accesses[p].dram_ratio or 0.0) * share)
        if key[1] == AccessKind.STORE and footprint[key] > 0 \
                and (key[0], AccessKind.LOAD) not in groups:
            # Bytes the stores write against the sectors they touch: short of them, some sectors
            # stay partly written, and L2 reads those from DRAM before writing them back, unless
            # the kernel reads the buffer itself (an AoS update leaves two fields unwritten, but
            # its loads brought the sectors into L2).
            written = sum(requests(accesses[p].index) * accesses[p].issue_share
                          * (accesses[p].active_lanes if accesses[p].active_lanes is not None else 32.0)
                          * accesses[p].width_bytes for p in members)
            if written < 0.99 * footprint[key]:
                for p in members:
                    if (accesses[p].efficiency or 1.0) < 0.99:
                        fill[p] = 1.0
    # A buffer both read and written occupies L2 once.
    per_buffer: dict[int, float] = {}
    for (buffer, _kind), size in footprint.items():
        per_buffer[buffer] = max(per_buffer.get(buffer, 0.0), size)
    total = float(sum(per_buffer.values()))
    written = sum(size for (_buffer, kind), size in footprint.items() if kind == AccessKind.STORE)
    read_only = sum(size for (buffer, kind), size in footprint.items()
                    if kind == AccessKind.LOAD and (buffer, AccessKind.STORE) not in footprint)
    out = list(accesses)
    for key, members in groups.items():
        for p in members:
            out[p] = replace(out[p], buffer_footprint_bytes=footprint[key])
            if key[1] == AccessKind.STORE:
                out[p] = replace(out[p], kernel_written_bytes=written, kernel_read_only_bytes=read_only)
    for p, share in reuse.items():
        out[p] = replace(out[p], grid_reuse=share, kernel_footprint_bytes=total)
    for p, share in fill.items():
        out[p] = replace(out[p], fill_share=share)
    for p, ratio in floor.items():
        out[p] = replace(out[p], dram_ratio=ratio)
    return out


def _union_bytes(ranges: Sequence[AddressRange]) -> float:
    """Bytes of the union of the ranges, in whole sectors. A range's share is at most its
    elements' sectors (a walk with a stride over 32 bytes touches one sector per element); ranges
    that overlap form one cluster, worth at most its hull and at most the sum of its members'
    shares (four loads of an unrolled loop, each every fourth float4 of one array, cover it all;
    as one range each, only the first counted, and the array looked half its size)."""
    spans = sorted(((r.low // SECTOR, r.high // SECTOR + 1, r.elements) for r in ranges),
                   key=lambda span: (span[0], span[1]))
    total = 0
    cluster_lo, cluster_hi, cluster_share = 0, -1, 0
    for lo, hi, elements in spans:
        share = hi - lo if elements is None else min(hi - lo, elements)
        if lo < cluster_hi:                  # overlaps the cluster: widen it
            cluster_hi = max(cluster_hi, hi)
            cluster_share += share
            continue
        if cluster_hi > cluster_lo:
            total += min(cluster_hi - cluster_lo, cluster_share)
        cluster_lo, cluster_hi, cluster_share = lo, hi, share
    if cluster_hi > cluster_lo:
        total += min(cluster_hi - cluster_lo, cluster_share)
    return float(total * SECTOR)
