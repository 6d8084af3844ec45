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

from engine.memory.affine import Affine

WARP = 32
SECTOR = 32        # bytes: the L1/L2 transaction unit
LINE = 128         # bytes: one cache line, four sectors
BANKS = 32         # shared memory banks, 4 bytes wide
BANK_WORD = 4
MAX_CONTEXTS = 64  # cap on sampled (block index, iteration) combinations per access


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


@dataclass(frozen=True)
class SharedStats:
    warps: int
    degree_mean: float         # wavefronts per request: max distinct words in one bank
    degree_max: int


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


def contexts(atoms: list[str], samples: Mapping[str, tuple[int, ...]]) -> list[dict[str, int]]:
    """Values for uniform atoms (absent from ``samples``: 0). The Cartesian product of each
    atom's samples when it has at most ``MAX_CONTEXTS`` combinations; otherwise all atoms at
    their first sample plus each atom alone at each of its other samples."""
    names = [a for a in atoms if a not in ("tid.x", "tid.y", "tid.z", "laneid")]
    choices = [samples.get(a, (0,)) for a in names]
    if math.prod(len(c) for c in choices) <= MAX_CONTEXTS:
        return [dict(zip(names, values, strict=True)) for values in itertools.product(*choices)]
    base = {a: c[0] for a, c in zip(names, choices, strict=True)}
    out = [base]
    for a, c in zip(names, choices, strict=True):
        out.extend({**base, a: v} for v in c[1:])
    return out


def affine_addresses(form: Affine, threads: dict[str, np.ndarray], context: dict[str, int]) -> np.ndarray:
    """Every thread's address in one context (uniform atoms from ``context``, else 0)."""
    n = len(threads["tid.x"])
    addr = np.full(n, form.const, dtype=np.int64)
    for a, c in form.terms:
        addr += c * (threads[a] if a in threads else context.get(a, 0))
    return addr


def _units(addr: np.ndarray, width: int, unit: int) -> np.ndarray:
    """Distinct ``unit``-byte blocks touched by accesses of ``width`` bytes at ``addr``."""
    step = min(max(width, 1), unit)
    offsets = np.unique(np.append(np.arange(0, max(width, 1), step), max(width, 1) - 1))
    return np.unique((addr[:, None] + offsets[None, :]) // unit)


def _useful_bytes(addr: np.ndarray, width: int) -> int:
    starts = np.unique(addr)
    gaps = np.diff(starts)
    return int(np.minimum(gaps, width).sum()) + width


def _warps(n: int) -> list[slice]:
    return [slice(s, min(s + WARP, n)) for s in range(0, n, WARP)]


def global_stats(address_sets: list[np.ndarray], width: int) -> GlobalStats:
    """Sectors/lines per warp request over every warp of each address set (one set = the
    addresses of all threads of a block in one context)."""
    sectors: list[int] = []
    lines: list[int] = []
    useful: list[int] = []
    reuse: list[float] = []
    for addr in address_sets:
        per_warp = 0
        for warp in _warps(len(addr)):
            s = len(_units(addr[warp], width, SECTOR))
            sectors.append(s)
            lines.append(len(_units(addr[warp], width, LINE)))
            useful.append(_useful_bytes(addr[warp], width))
            per_warp += s
        reuse.append(len(_units(addr, width, SECTOR)) / per_warp)
    return GlobalStats(
        warps=len(sectors),
        sectors_mean=float(np.mean(sectors)),
        sectors_max=int(max(sectors)),
        lines_mean=float(np.mean(lines)),
        lines_max=int(max(lines)),
        useful_bytes_mean=float(np.mean(useful)),
        efficiency=float(sum(useful)) / (SECTOR * sum(sectors)),
        block_reuse=float(np.mean(reuse)),
    )


def bank_degree(addr: np.ndarray, width: int) -> int:
    """Max number of distinct 4-byte words one bank must serve (same word: broadcast)."""
    words = _units(addr, width, BANK_WORD)
    return int(np.bincount(words % BANKS, minlength=BANKS).max())


def shared_stats(address_sets: list[np.ndarray], width: int) -> SharedStats:
    degrees = [bank_degree(addr[warp], width) for addr in address_sets for warp in _warps(len(addr))]
    return SharedStats(len(degrees), float(np.mean(degrees)), int(max(degrees)))
