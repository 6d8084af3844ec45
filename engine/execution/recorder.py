"""What a run records: each warp's path through the basic blocks and each memory access.

The run hands every executed step here; nothing is kept per lane-instruction. Per warp it keeps
the sequence of basic blocks it entered (to rebuild its dynamic path, its loops' trip counts and
its branches' outcomes), per memory instruction the sums that describe its requests, and for the
cache simulation one entry per (request, 128-byte line) in the order the run issued them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.execution.requests import warp_requests

# Request kinds of the cache log
LOAD_CACHED = 0        # a load L1 may keep (ld.global default, ld.global.nc, tex, local)
LOAD_UNCACHED = 1      # a load that goes to L2 (.cg, .cv, volatile)
STORE = 2
ATOMIC = 3


@dataclass
class AccessStats:
    """Sums over the sampled requests of one memory instruction (means are sums / requests)."""

    space: str
    kind: str
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


@dataclass
class CacheLog:
    """Requests in issue order (``request_*``) and their line entries (``entry_*``)."""

    request_instruction: list[np.ndarray] = field(default_factory=list)
    request_block: list[np.ndarray] = field(default_factory=list)
    request_kind: list[np.ndarray] = field(default_factory=list)
    entry_request: list[np.ndarray] = field(default_factory=list)
    entry_line: list[np.ndarray] = field(default_factory=list)
    entry_sectors: list[np.ndarray] = field(default_factory=list)
    entry_bytes: list[np.ndarray] = field(default_factory=list)
    requests: int = 0
    entries: int = 0

    def arrays(self) -> dict[str, np.ndarray]:
        def cat(parts: list[np.ndarray], dtype: type, shape: tuple[int, ...] = (0,)) -> np.ndarray:
            return np.concatenate(parts).astype(dtype) if parts else np.zeros(shape, dtype=dtype)
        return {
            "request_instruction": cat(self.request_instruction, np.int32),
            "request_block": cat(self.request_block, np.int32),
            "request_kind": cat(self.request_kind, np.int8),
            "entry_request": cat(self.entry_request, np.int64),
            "entry_line": cat(self.entry_line, np.int64),
            "entry_sectors": cat(self.entry_sectors, np.uint8),
            "entry_bytes": cat(self.entry_bytes, np.uint32, (0, 4)),
        }


class Recorder:
    """Collects a run's paths and memory accesses."""

    def __init__(self, n_instructions: int, warps_per_block: int, max_entries: int) -> None:
        self.warps_per_block = warps_per_block
        self.trace_warps: list[np.ndarray] = []
        self.trace_blocks: list[np.ndarray] = []
        self.access: dict[int, AccessStats] = {}
        self.log = CacheLog()
        self.max_entries = max_entries
        self.log_full = False
        self.executed = np.zeros(n_instructions, dtype=np.int64)   # warp executions per instruction

    # ------------------------------------------------------------------ paths
    def enter(self, warps: np.ndarray, block: int) -> None:
        self.trace_warps.append(warps.astype(np.int32))
        self.trace_blocks.append(np.full(len(warps), block, dtype=np.int32))

    def count(self, start: int, stop: int, n_warps: int) -> None:
        self.executed[start:stop] += n_warps

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
    def stats(self, index: int, space: str, kind: str, width: int) -> AccessStats:
        stats = self.access.get(index)
        if stats is None:
            stats = self.access[index] = AccessStats(space, kind, width)
        return stats

    def unknown(self, index: int, space: str, kind: str, width: int, lanes: int, reason: str) -> None:
        stats = self.stats(index, space, kind, width)
        stats.unknown_lanes += lanes
        stats.unknown_reason = stats.unknown_reason or reason

    def global_access(self, index: int, space: str, kind: str, request_kind: int, width: int,
                      lanes: np.ndarray, address: np.ndarray, warps_reached: int,
                      block_of_warp: np.ndarray) -> None:
        stats = self.stats(index, space, kind, width)
        stats.warp_executions += warps_reached
        if not len(lanes):
            return
        req = warp_requests(lanes, address, width, stores=request_kind in (STORE, ATOMIC))
        n = len(req.warps)
        stats.requests += n
        stats.active_lanes += int(req.active.sum())
        stats.sectors += int(req.sectors.sum())
        stats.lines += int(req.lines.sum())
        stats.sectors_max = max(stats.sectors_max, int(req.sectors.max()))
        stats.lines_max = max(stats.lines_max, int(req.lines.max()))
        stats.wavefronts += int(req.bank_degree.sum())
        stats.wavefronts_max = max(stats.wavefronts_max, int(req.bank_degree.max()))
        if self.log_full:
            return
        if self.log.entries + len(req.entry_line) > self.max_entries:
            self.log_full = True
            return
        log = self.log
        first = log.requests
        log.request_instruction.append(np.full(n, index, dtype=np.int32))
        log.request_block.append(block_of_warp[req.warps])
        log.request_kind.append(np.full(n, request_kind, dtype=np.int8))
        log.entry_request.append(req.entry_row.astype(np.int64) + first)
        log.entry_line.append(req.entry_line)
        log.entry_sectors.append(req.entry_sectors)
        log.entry_bytes.append(req.entry_bytes)
        log.requests += n
        log.entries += len(req.entry_line)

    def shared_access(self, index: int, kind: str, width: int, lanes: np.ndarray, address: np.ndarray,
                      warps_reached: int) -> None:
        stats = self.stats(index, "shared", kind, width)
        stats.warp_executions += warps_reached
        if not len(lanes):
            return
        req = warp_requests(lanes, address, width, sectors=False)
        stats.requests += len(req.warps)
        stats.active_lanes += int(req.active.sum())
        stats.wavefronts += int(req.bank_degree.sum())
        stats.wavefronts_max = max(stats.wavefronts_max, int(req.bank_degree.max()))

    def constant_access(self, index: int, width: int, lanes: np.ndarray, address: np.ndarray,
                        warps_reached: int) -> None:
        stats = self.stats(index, "const", "load", width)
        stats.warp_executions += warps_reached
        if not len(lanes):
            return
        req = warp_requests(lanes, address, width, sectors=False)
        stats.requests += len(req.warps)
        stats.active_lanes += int(req.active.sum())
        stats.distinct += int(req.distinct.sum())
