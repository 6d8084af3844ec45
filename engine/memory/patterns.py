"""Warp-level access patterns from affine addresses, by enumerating the lanes.

Counting the sectors, lines and banks of the actual lane addresses is exact for the sampled
warps, which avoids the case analysis (stride vs. alignment vs. block shape) a closed form
would need. Every thread of one block is enumerated; the values of the uniform atoms (block
indices, loop iterations) are sampled, see :func:`contexts`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from engine.mechanisms import enabled
from engine.memory.affine import Affine, base_address

WARP = 32
SECTOR = 32        # bytes: the L1/L2 transaction unit
LINE = 128         # bytes: one cache line, four sectors
BANKS = 32         # shared memory banks, 4 bytes wide
BANK_WORD = 4
MAX_CONTEXTS = 64  # cap on sampled (block index, iteration) combinations per access
INTERIOR = 4       # interior values sampled per block axis / loop (non-affine addresses)
MAX_PERIOD = 16    # most interior values for an affine atom: its alignment period, capped


@dataclass(frozen=True)
class GlobalStats:
    """Per warp request, over the sampled warps: means, maxima, and the block-level reuse."""

    warps: int
    sectors_mean: float
    sectors_max: int
    lines_mean: float
    lines_max: int
    useful_bytes_mean: float
    efficiency: float          # useful bytes / fetched sector bytes, summed over the warps
    block_reuse: float         # distinct sectors of the whole block / Σ sectors of its warps
    active_lanes: float        # mean active lanes per issued request
    issue_share: float = 1.0   # share of the sampled warps with an active lane (they issue a request)
    bank_degree_mean: float = 1.0   # most distinct words in one bank per request (L1's data banks)


@dataclass(frozen=True)
class SharedStats:
    warps: int
    degree_mean: float         # wavefronts per request: max distinct words in one bank
    degree_max: int
    active_lanes: float
    issue_share: float = 1.0   # as in GlobalStats


def thread_indices(block: tuple[int, int, int]) -> dict[str, np.ndarray]:
    """Per-thread index arrays of one block, in linear-id order (x fastest)."""
    bx, by, bz = block
    lin = np.arange(bx * by * bz, dtype=np.int64)
    return {
        "tid.x": lin % bx,
        "tid.y": (lin // bx) % by,
        "tid.z": lin // (bx * by),
        "laneid": lin % WARP,
    }


Sample = tuple[int, float]  # (value of a uniform atom, how many values it stands for)


def spread(n: int | None, interior: int = INTERIOR) -> tuple[Sample, ...]:
    """Samples of an index running over ``range(n)``: up to ``interior`` interior values sharing
    the weight of the ``n - 2`` interior ones, then the two ends (where guards and clamps
    differ); 0 and 1 when ``n`` is unknown. The interior values take every residue 1..k modulo
    k once, so that alignments that repeat with the index are averaged, and with
    ``spread_samples`` they lie spread over the interior (the j-th near its (j-1)/(k-1) point)
    rather than at its start, so that what changes along a loop (lanes that have left it) is
    averaged too."""
    if n is None:
        return ((0, 1.0), (1, 1.0))
    if n >= 3:
        k = max(1, min(n - 2, interior))
        values = list(range(1, k + 1))
        if k > 1 and n - 2 > k:
            # residue j, placed at or below the j-th of k evenly spaced points of 1..n-2
            values = [j + k * max(0, int((1 + (j - 1) * (n - 3) / (k - 1) - j) // k)) for j in values]
        return (*((v, (n - 2) / k) for v in values), (0, 1.0), (n - 1, 1.0))
    return tuple((v, 1.0) for v in range(max(n, 1)))


def alignment_period(coeff: int) -> int:
    """After how many steps of an atom with this byte coefficient the address's position in a
    128-byte line repeats (1 for multiples of 128)."""
    return LINE // math.gcd(abs(coeff), LINE) if coeff else 1


def contexts(atoms: list[str], samples: Mapping[str, tuple[Sample, ...]]) -> list[tuple[dict[str, int], float]]:
    """Weighted values for uniform atoms (absent from ``samples``: 0). The Cartesian product of
    the atoms' samples when it has at most ``MAX_CONTEXTS`` combinations; otherwise every atom
    at its first (interior) sample plus each atom alone at each of its other samples."""
    names = [a for a in dict.fromkeys(atoms) if a not in ("tid.x", "tid.y", "tid.z", "laneid")]
    choices = [samples.get(a, ((0, 1.0),)) for a in names]
    if math.prod(len(c) for c in choices) <= MAX_CONTEXTS:
        return [({a: v for a, (v, _) in zip(names, combo, strict=True)}, math.prod(w for _, w in combo))
                for combo in itertools.product(*choices)]
    base = {a: c[0][0] for a, c in zip(names, choices, strict=True)}
    base_weight = math.prod(c[0][1] for c in choices)
    out = [(base, base_weight)]
    for a, c in zip(names, choices, strict=True):
        out.extend(({**base, a: v}, base_weight / c[0][1] * w) for v, w in c[1:])
    return out


def affine_addresses(form: Affine, threads: dict[str, np.ndarray], context: dict[str, int]) -> np.ndarray:
    """Every thread's address in one context (uniform atoms from ``context``; pointers and
    global variables at their ``base_address``; anything else 0)."""
    n = len(threads["tid.x"])
    addr = np.full(n, _int64(form.const), dtype=np.int64)
    for a, c in form.terms:
        addr += _int64(c) * threads[a] if a in threads else _int64(c * context.get(a, base_address(a)))
    return addr


def _int64(v: int) -> int:
    """Wrap to int64 (addresses computed with 64-bit two's complement, as the hardware does)."""
    return ((int(v) + (1 << 63)) % (1 << 64)) - (1 << 63)


def _offsets(width: int, unit: int) -> np.ndarray:
    """Byte offsets within an access of ``width`` bytes that hit every ``unit``-byte block."""
    width = max(width, 1)
    return np.unique(np.append(np.arange(0, width, min(width, unit)), width - 1))


def _lanes(addr: np.ndarray, mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Active lanes' addresses and warp numbers."""
    warp = np.arange(len(addr)) // WARP
    if mask is None:
        return addr, warp
    return addr[mask], warp[mask]


def _per_warp_units(addr: np.ndarray, warp: np.ndarray, width: int, unit: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (warp, unit-block) pairs touched: their warp numbers and block numbers."""
    blocks = (addr[:, None] + _offsets(width, unit)[None, :]) // unit
    warps = np.broadcast_to(warp[:, None], blocks.shape)
    low = int(blocks.min())
    span = int(blocks.max()) - low + 1
    if span * (int(warp.max()) + 1) >= 1 << 62:  # addresses too far apart for one int64 key
        pairs = np.unique(np.stack([warps.ravel(), blocks.ravel()], axis=1), axis=0)
        return pairs[:, 0], pairs[:, 1]
    # one int64 key per pair: a 1-D unique is much faster than unique(axis=0)
    keys = np.unique((warps * span + (blocks - low)).ravel())
    return keys // span, keys % span + low


def _dedup(address_sets: list[np.ndarray], masks: list[np.ndarray | None] | None,
           weights: list[float] | None) -> list[tuple[np.ndarray, np.ndarray | None, float]]:
    """Merge contexts with identical addresses and active lanes (common: most sampled blocks
    or iterations leave a shared-memory address unchanged), adding their weights."""
    n = len(address_sets)
    merged: dict[bytes, list] = {}
    for addr, mask, w in zip(address_sets, masks or [None] * n, weights or [1.0] * n, strict=True):
        key = addr.tobytes() + (b"" if mask is None else np.packbits(mask).tobytes())
        if key in merged:
            merged[key][2] += w
        else:
            merged[key] = [addr, mask, w]
    return [(a, m, w) for a, m, w in merged.values()]


def global_stats(address_sets: list[np.ndarray], width: int, masks: list[np.ndarray | None] | None = None,
                 weights: list[float] | None = None) -> GlobalStats | None:
    """Sectors/lines per warp request over every warp of each address set (one set = the
    addresses of all threads of a block in one context; ``masks`` its active threads,
    ``weights`` how many blocks/iterations it stands for). None when no lane is active."""
    cols: list[np.ndarray] = []  # per issued warp: weight, sectors, lines, useful bytes, lanes, bank degree
    reuse: list[tuple[float, float]] = []
    width = max(width, 1)
    sampled = 0.0
    for addr, mask, w in _dedup(address_sets, masks, weights):
        sampled += w * -(-len(addr) // WARP)
        lanes, warp = _lanes(addr, mask)
        if not len(lanes):
            continue
        issued, active = np.unique(warp, return_counts=True)
        index = np.searchsorted(issued, warp)
        sector_warps, _ = _per_warp_units(lanes, index, width, SECTOR)
        line_warps, _ = _per_warp_units(lanes, index, width, LINE)
        sectors = np.bincount(sector_warps, minlength=len(issued))
        # useful bytes: distinct starts per warp, each adds min(gap to the previous one, width)
        warps, starts = _per_warp_units(lanes, index, 1, 1)  # distinct (warp, address), sorted
        first = np.r_[True, warps[1:] != warps[:-1]]
        gaps = np.where(first, width, np.minimum(np.diff(starts, prepend=0), width))
        useful = np.bincount(warps, weights=gaps, minlength=len(issued))
        degrees = _bank_degrees(lanes, index, width, len(issued))
        cols.append(np.stack([np.full(len(issued), w), sectors, np.bincount(line_warps, minlength=len(issued)),
                              useful, active, degrees], axis=1))
        reuse.append((w, len(np.unique((lanes[:, None] + _offsets(width, SECTOR)) // SECTOR)) / sectors.sum()))
    if not cols:
        return None
    table = np.concatenate(cols)
    wt = table[:, 0]

    def mean(column: int) -> float:
        return float(np.average(table[:, column], weights=wt))

    return GlobalStats(
        warps=len(table),
        sectors_mean=mean(1),
        sectors_max=int(table[:, 1].max()),
        lines_mean=mean(2),
        lines_max=int(table[:, 2].max()),
        useful_bytes_mean=mean(3),
        efficiency=float((wt * table[:, 3]).sum() / (SECTOR * (wt * table[:, 1]).sum())),
        block_reuse=float(np.average([r for _, r in reuse], weights=[w for w, _ in reuse])),
        active_lanes=mean(4),
        issue_share=float(wt.sum() / sampled) if sampled else 1.0,
        bank_degree_mean=mean(5),
    )


def block_sectors(addr: np.ndarray, width: int, mask: np.ndarray | None = None) -> set[int]:
    """The 32-byte sectors the active threads of a block touch."""
    lanes = addr if mask is None else addr[mask]
    return set(np.unique((lanes[:, None] + _offsets(max(width, 1), SECTOR)) // SECTOR).tolist())


def _bank_degrees(lanes: np.ndarray, index: np.ndarray, width: int, n_warps: int,
                  lane_ids: np.ndarray | None = None) -> np.ndarray:
    """Per warp: the wavefronts its request takes, the most distinct 4-byte words any one bank
    must serve (same word: broadcast). With ``lane_ids`` (each address's lane) and accesses of 8
    bytes or more (mechanism ``shared_phases``), the warp is served in phases of 128 bytes, a
    half warp of 8-byte accesses or a quarter warp of 16-byte ones at a time, and the degrees of
    its phases add up: conflicts inside a phase cannot borrow another phase's banks."""
    phases = min(WARP, width // BANK_WORD) if lane_ids is not None and width >= 8 and enabled("shared_phases") else 1
    if phases > 1:
        group = index * phases + lane_ids // (WARP // phases)
        return _bank_degrees(lanes, group, width, n_warps * phases).reshape(n_warps, phases).sum(axis=1)
    warps, words = _per_warp_units(lanes, index, width, BANK_WORD)
    per_bank = np.bincount(warps * BANKS + words % BANKS, minlength=n_warps * BANKS)
    return per_bank.reshape(n_warps, BANKS).max(axis=1)


def bank_degree(addr: np.ndarray, width: int) -> int:
    """The conflict degree of one warp's request (addresses of its active lanes)."""
    return int(_bank_degrees(addr, np.zeros(len(addr), dtype=np.int64), width, 1)[0])


def shared_stats(address_sets: list[np.ndarray], width: int, masks: list[np.ndarray | None] | None = None,
                 weights: list[float] | None = None) -> SharedStats | None:
    cols: list[np.ndarray] = []  # per issued warp: weight, degree, lanes
    sampled = 0.0
    for addr, mask, w in _dedup(address_sets, masks, weights):
        sampled += w * -(-len(addr) // WARP)
        lanes, warp = _lanes(addr, mask)
        if not len(lanes):
            continue
        issued, active = np.unique(warp, return_counts=True)
        index = np.searchsorted(issued, warp)
        positions = np.arange(len(addr)) % WARP
        degrees = _bank_degrees(lanes, index, max(width, 1), len(issued),
                                positions if mask is None else positions[mask])
        cols.append(np.stack([np.full(len(issued), w), degrees, active], axis=1))
    if not cols:
        return None
    table = np.concatenate(cols)
    return SharedStats(len(table), float(np.average(table[:, 1], weights=table[:, 0])),
                       int(table[:, 1].max()), float(np.average(table[:, 2], weights=table[:, 0])),
                       float(table[:, 0].sum() / sampled) if sampled else 1.0)
