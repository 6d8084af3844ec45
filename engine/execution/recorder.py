"""What a run records: each warp's path through the basic blocks and each memory access.

The run hands every executed step here; nothing is kept per lane-instruction. Per warp it keeps
the sequence of basic blocks it entered (to rebuild its dynamic path, its loops' trip counts and
its branches' outcomes), per memory instruction the sums that describe its requests, and for the
cache simulation one entry per (request, 128-byte line) in the order the run issued them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.execution.requests import warp_requests
from engine.units import AccessKind

# Request kinds of the cache log
LOAD_CACHED = 0        # a load L1 may keep (ld.global default, ld.global.nc, tex, local)
LOAD_UNCACHED = 1      # a load that goes to L2 (.cg, .cv, volatile)
STORE = 2
ATOMIC = 3


@dataclass
class AccessStats:
    """Sums over the sampled requests of one memory instruction (means are sums / requests)."""

    space: str
    kind: AccessKind
    width: int
    warp_executions: int = 0       # warps that reached it (predicated off or not)
    requests: int = 0              # warps with at least one active lane
    active_lanes: int = 0
    sectors: int = 0
    lines: int = 0
    sectors_max: int = 0
    lines_max: int = 0
    wavefronts: int = 0            # shared: bank-conflict wavefronts; global: L1 bank degree
    wavefronts_max: int = 0
    distinct: int = 0              # constant: distinct addresses
    unknown_lanes: int = 0         # lanes whose address the run could not compute
    unknown_reason: str = ""
    # shared atomics: passes of a compare-and-swap retry loop, were ptxas to make one of it
    # (:func:`cas_contention`), summed over requests: twice the mean passes, and the last ones
    cas_passes_2x: int = 0
    cas_last: int = 0

    def cas_passes(self) -> tuple[float, float] | None:
        """(mean, last) passes per request of a retry loop over the run's addresses, or None."""
        if not self.requests or not self.cas_passes_2x:
            return None
        return self.cas_passes_2x / (2.0 * self.requests), self.cas_last / float(self.requests)


# columns of Recorder.counters (one row per instruction), shared with the compiled path
(C_WARPS, C_REQUESTS, C_ACTIVE, C_SECTORS, C_LINES, C_SECTORS_MAX, C_LINES_MAX, C_WAVEFRONTS, C_WAVEFRONTS_MAX,
 C_DISTINCT, C_UNKNOWN, C_CAS_PASSES_2X, C_CAS_LAST) = range(13)
COUNTERS = 13
SPACES = ("global", "shared", "local", "const", "tex", "param")
KINDS = tuple(AccessKind)


class CacheLog:
    """Requests in issue order and their line entries, in arrays that grow (the compiled path
    writes into them): ``counts`` = [requests, entries, full]."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self.counts = np.zeros(3, dtype=np.int64)
        # the segment (one group of warps running one basic block, ``Machine._segment``) that
        # requests logged now belong to: the cache replay issues a segment's requests warp by warp
        self.segment = np.zeros(1, dtype=np.int64)
        self._allocate(1 << 12, 1 << 14)

    def _allocate(self, requests: int, entries: int) -> None:
        def grow(old: np.ndarray | None, size: int, dtype: type, shape: tuple[int, ...] = ()) -> np.ndarray:
            new = np.zeros((size, *shape), dtype=dtype)
            if old is not None:
                new[:len(old)] = old
            return new
        self.request_instruction = grow(getattr(self, "request_instruction", None), requests, np.int32)
        self.request_block = grow(getattr(self, "request_block", None), requests, np.int32)
        self.request_kind = grow(getattr(self, "request_kind", None), requests, np.int8)
        self.request_warp = grow(getattr(self, "request_warp", None), requests, np.int32)
        self.request_segment = grow(getattr(self, "request_segment", None), requests, np.int64)
        self.entry_request = grow(getattr(self, "entry_request", None), entries, np.int64)
        self.entry_line = grow(getattr(self, "entry_line", None), entries, np.int64)
        self.entry_sectors = grow(getattr(self, "entry_sectors", None), entries, np.uint8)
        self.entry_bytes = grow(getattr(self, "entry_bytes", None), entries, np.uint32, (4,))

    @property
    def requests(self) -> int:
        return int(self.counts[0])

    @property
    def entries(self) -> int:
        return int(self.counts[1])

    @property
    def full(self) -> bool:
        return bool(self.counts[2])

    def reserve(self, requests: int, entries: int) -> bool:
        """Room for that many more; False (and the log marked full) beyond ``max_entries``."""
        if self.counts[2]:
            return False
        if self.counts[1] + entries > self.max_entries:
            self.counts[2] = 1
            return False
        need_r, need_e = self.counts[0] + requests, self.counts[1] + entries
        if need_r > len(self.request_instruction) or need_e > len(self.entry_line):
            self._allocate(max(need_r, 2 * len(self.request_instruction)), max(need_e, 2 * len(self.entry_line)))
        return True

    def arrays(self) -> dict[str, np.ndarray]:
        r, e = self.requests, self.entries
        return {
            "request_instruction": self.request_instruction[:r].copy(),
            "request_block": self.request_block[:r].copy(),
            "request_kind": self.request_kind[:r].copy(),
            "request_warp": self.request_warp[:r].copy(),
            "request_segment": self.request_segment[:r].copy(),
            "entry_request": self.entry_request[:e].copy(),
            "entry_line": self.entry_line[:e].copy(),
            "entry_sectors": self.entry_sectors[:e].copy(),
            "entry_bytes": self.entry_bytes[:e].copy(),
        }


class Recorder:
    """Collects a run's paths and memory accesses."""

    def __init__(self, n_instructions: int, warps_per_block: int, max_entries: int) -> None:
        self.warps_per_block = warps_per_block
        self.trace_warps: list[np.ndarray] = []
        self.trace_blocks: list[np.ndarray] = []
        self.counters = np.zeros((n_instructions + 1, COUNTERS), dtype=np.int64)
        self.meta: dict[int, tuple[str, AccessKind, int]] = {}   # index -> space, kind, width
        self.reasons: dict[int, str] = {}
        self.log = CacheLog(max_entries)
        self.max_entries = max_entries
        self.executed = np.zeros(n_instructions, dtype=np.int64)   # warp executions per instruction

    @property
    def log_full(self) -> bool:
        return self.log.full

    # ------------------------------------------------------------------ paths
    def enter(self, warps: np.ndarray, block: int) -> None:
        self.trace_warps.append(warps.astype(np.int32))
        self.trace_blocks.append(np.full(len(warps), block, dtype=np.int32))

    def paths(self, n_warps: int) -> list[np.ndarray]:
        """Each warp's sequence of entered basic blocks."""
        if not self.trace_warps:
            return [np.zeros(0, dtype=np.int32) for _ in range(n_warps)]
        warps = np.concatenate(self.trace_warps)
        blocks = np.concatenate(self.trace_blocks)
        order = np.argsort(warps, kind="stable")
        warps, blocks = warps[order], blocks[order]
        bounds = np.searchsorted(warps, np.arange(n_warps + 1))
        return [blocks[bounds[w]:bounds[w + 1]] for w in range(n_warps)]

    # ------------------------------------------------------------------ memory
    @property
    def access(self) -> dict[int, AccessStats]:
        """The sums of every memory instruction that was reached."""
        out: dict[int, AccessStats] = {}
        for index, (space, kind, width) in self.meta.items():
            c = self.counters[index]
            out[index] = AccessStats(space, kind, width, int(c[C_WARPS]), int(c[C_REQUESTS]), int(c[C_ACTIVE]),
                                     int(c[C_SECTORS]), int(c[C_LINES]), int(c[C_SECTORS_MAX]),
                                     int(c[C_LINES_MAX]), int(c[C_WAVEFRONTS]), int(c[C_WAVEFRONTS_MAX]),
                                     int(c[C_DISTINCT]), int(c[C_UNKNOWN]), self.reasons.get(index, ""),
                                     int(c[C_CAS_PASSES_2X]), int(c[C_CAS_LAST]))
        return out

    def _row(self, index: int, space: str, kind: AccessKind, width: int) -> np.ndarray:
        self.meta.setdefault(index, (space, kind, width))
        return self.counters[index]

    def unknown(self, index: int, space: str, kind: AccessKind, width: int, lanes: int, reason: str) -> None:
        self._row(index, space, kind, width)[C_UNKNOWN] += lanes
        self.reasons.setdefault(index, reason)

    def _add(self, row: np.ndarray, req: Any) -> None:
        row[C_REQUESTS] += len(req.warps)
        row[C_ACTIVE] += int(req.active.sum())
        row[C_SECTORS] += int(req.sectors.sum())
        row[C_LINES] += int(req.lines.sum())
        row[C_SECTORS_MAX] = max(row[C_SECTORS_MAX], int(req.sectors.max()))
        row[C_LINES_MAX] = max(row[C_LINES_MAX], int(req.lines.max()))
        row[C_WAVEFRONTS] += int(req.bank_degree.sum())
        row[C_WAVEFRONTS_MAX] = max(row[C_WAVEFRONTS_MAX], int(req.bank_degree.max()))
        row[C_DISTINCT] += int(req.distinct.sum())

    def global_access(self, index: int, space: str, kind: AccessKind, request_kind: int, width: int,
                      lanes: np.ndarray, address: np.ndarray, warps_reached: int,
                      block_of_warp: np.ndarray) -> None:
        row = self._row(index, space, kind, width)
        row[C_WARPS] += warps_reached
        if not len(lanes):
            return
        req = warp_requests(lanes, address, width, stores=request_kind in (STORE, ATOMIC))
        self._add(row, req)
        n, e = len(req.warps), len(req.entry_line)
        log = self.log
        if not log.reserve(n, e):
            return
        r0, e0 = log.requests, log.entries
        log.request_instruction[r0:r0 + n] = index
        log.request_block[r0:r0 + n] = block_of_warp[req.warps]
        log.request_kind[r0:r0 + n] = request_kind
        log.request_warp[r0:r0 + n] = req.warps
        log.request_segment[r0:r0 + n] = log.segment[0]
        log.entry_request[e0:e0 + e] = req.entry_row + r0
        log.entry_line[e0:e0 + e] = req.entry_line
        log.entry_sectors[e0:e0 + e] = req.entry_sectors
        log.entry_bytes[e0:e0 + e] = req.entry_bytes
        log.counts[0] += n
        log.counts[1] += e

    def shared_access(self, index: int, kind: AccessKind, width: int, lanes: np.ndarray, address: np.ndarray,
                      warps_reached: int, block_row: np.ndarray) -> None:
        row = self._row(index, "shared", kind, width)
        row[C_WARPS] += warps_reached
        if len(lanes):
            self._add(row, warp_requests(lanes, address, width, sectors=False))
            if kind == AccessKind.ATOMIC:
                mean_2x, last = cas_contention(lanes, address, width, block_row)
                row[C_CAS_PASSES_2X] += mean_2x
                row[C_CAS_LAST] += last

    def constant_access(self, index: int, width: int, lanes: np.ndarray, address: np.ndarray,
                        warps_reached: int) -> None:
        row = self._row(index, "const", AccessKind.LOAD, width)
        row[C_WARPS] += warps_reached
        if len(lanes):
            self._add(row, warp_requests(lanes, address, width, sectors=False))


def cas_contention(lanes: np.ndarray, address: np.ndarray, width: int, block_row: np.ndarray) -> tuple[int, int]:
    """Passes of a compare-and-swap retry loop for one shared atomic that ``lanes`` (of one or
    more warps at the same dynamic instruction, which the run keeps in step) execute on ``address``:
    summed over the warps, twice the mean passes and the last passes.

    The retry loop (``LDS``, ``FADD``, ``ATOMS.CAST.SPIN``, branch back while a lane failed) was
    measured on the H200 (bench/micro/shared_atomic_cas.cu, docs/microbenchmarks.md): a pass
    retires at most one lane per shared-memory bank, whatever words the lanes update (32 lanes on
    32 words of one bank take 32 passes, as 32 lanes on one word do; two lanes per word over 16
    banks take 2). So a warp alone makes as many passes as it has lanes in its fullest bank.
    Warps of the block on the same word take turns besides: the k-th of ``k`` warps with ``m``
    lanes each on one word finishes after about ``m × k`` passes, ``m × (k + 1) / 2`` on average
    (measured: 150 passes per warp for 8 warps of 32 lanes on one word, 144 by this rule). A warp's
    passes are the larger of the two; the block's lanes on one word (``M``) bound the last warp's.
    Words of different blocks never contend (shared memory is the block's)."""
    if not len(lanes):
        return 0, 0
    warp = (lanes >> 5).astype(np.int64)
    block = block_row[lanes].astype(np.int64)
    word = address.astype(np.int64) // max(1, width)
    bank = (address.astype(np.int64) >> 2) % 32
    # a warp alone: its lanes in its fullest bank
    warps = np.unique(warp)
    warp_banks, per_bank = np.unique(np.stack([warp, bank], axis=1), axis=0, return_counts=True)
    alone = np.zeros(len(warps), dtype=np.int64)
    np.maximum.at(alone, np.searchsorted(warps, warp_banks[:, 0]), per_bank)
    # warps of the block on one word
    pairs, m = np.unique(np.stack([warp, block, word], axis=1), axis=0, return_counts=True)
    groups, group_of_pair = np.unique(pairs[:, 1:], axis=0, return_inverse=True)
    group_of_pair = group_of_pair.reshape(-1)
    k = np.bincount(group_of_pair, minlength=len(groups))
    lanes_on_word = np.bincount(group_of_pair, weights=m, minlength=len(groups)).astype(np.int64)
    warp_of_pair = np.searchsorted(warps, pairs[:, 0])
    turns_2x = np.zeros(len(warps), dtype=np.int64)
    last = np.zeros(len(warps), dtype=np.int64)
    np.maximum.at(turns_2x, warp_of_pair, m * (k[group_of_pair] + 1))
    np.maximum.at(last, warp_of_pair, lanes_on_word[group_of_pair])
    mean_2x = np.maximum(2 * alone, turns_2x)
    return int(mean_2x.sum()), int(np.maximum(alone, last).sum())
