"""Occupancy sweeps: every model's warp throughput as the resident warps vary (001 Figs. 2, 14)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.errors import ModelError
from engine.pipeline.description import KernelDescription
from engine.pipeline.peers import PEERS, all_peers
from engine.pipeline.simulator import simulate


def at_occupancy(d: KernelDescription, warps: int) -> KernelDescription:
    """The description with ``warps`` resident warps (whole blocks; at least one block)."""
    if warps < 1:
        raise ModelError(f"occupancy {warps} warps: must be at least one warp")
    blocks = max(1, warps // d.warps_per_block)
    return d.with_changes(resident_blocks=blocks)


def occupancy_sweep(d: KernelDescription, occupancies: Sequence[int], policy: str = "lrr",
                    models: Sequence[str] = PEERS) -> dict[str, np.ndarray]:
    """Warps per cycle of each model (and ``pipeline``, the simulation) at each occupancy (warps).

    The work (blocks on the SM) stays as described; only the resident blocks change. The key
    ``occupancy`` holds the occupancies in warps actually used (whole blocks).
    """
    out: dict[str, list[float]] = {name: [] for name in (*models, "pipeline")}
    used: list[int] = []
    for warps in occupancies:
        dd = at_occupancy(d, warps)
        used.append(dd.resident_blocks * dd.warps_per_block)
        peers = all_peers(dd)
        for name in models:
            out[name].append(peers[name].warps_per_cycle)
        out["pipeline"].append(simulate(dd, policy=policy, trace=False).warps_per_cycle)
    result = {name: np.asarray(values, dtype=float) for name, values in out.items()}
    result["occupancy"] = np.asarray(used, dtype=float)
    return result
