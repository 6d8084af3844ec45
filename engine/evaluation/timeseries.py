"""What the simulated SM does over time, in buckets of cycles: the bytes each memory level moves,
the resident warps, and the share of those warps issuing or waiting for each stall cause (the
series the window draws under the Gantt chart, on its time axis, and exports with it).

* **Bytes per cycle at L1, L2 and DRAM** (this SM): each global request the trace issued moves
  its access's bytes at each level (as :mod:`engine.evaluation.roofline` counts them: every
  requested sector at L1, the sectors L1 does not serve at L2, the launch's DRAM bytes of the
  access per request at DRAM), spread evenly from its issue to its completion; a shared-memory
  request moves its wavefronts (128 bytes per conflict way) at L1. The profile's bandwidth per SM
  (128 bytes over the level's λ) is the ceiling each line is drawn against.
* **Active warps**: resident warps (issuing or waiting), from the trace's issues and stalls.
* **Stall mix**: per bucket, the share of the active warp-cycles spent issuing and waiting for
  each cause (:data:`engine.timeline.activity.HEAT_CATEGORIES` but idle); they add up to one
  wherever a warp is resident.

Each bucket's figures are exact integrals over the bucket (running sums and binary searches, no
sampling), so the series add up to the run's totals whatever the bucket width.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.errors import WarplineError
from engine.evaluation.roofline import LINE_BYTES, level_rates
from engine.fileio import csv_text
from engine.memory.patterns import SECTOR
from engine.timeline.activity import HEAT_CATEGORIES, IDLE, group_activities
from engine.units import MemorySpace

LEVELS = ("L1", "L2", "DRAM")
CAUSES = tuple(c for c in HEAT_CATEGORIES if c != "idle")
DEFAULT_BUCKETS = 400


@dataclass
class TimeSeries:
    edges: np.ndarray                       # bucket edges in cycles, len(buckets) + 1
    bytes_per_cycle: dict[str, np.ndarray]  # level -> bytes per cycle of this SM, per bucket
    active_warps: np.ndarray                # mean resident warps per bucket
    shares: np.ndarray                      # (buckets, len(CAUSES)): share of the active warp-cycles
    peaks: dict[str, float] = field(default_factory=dict)   # level -> bytes per cycle per SM (profile)
    notes: list[str] = field(default_factory=list)

    @property
    def centres(self) -> np.ndarray:
        return (self.edges[:-1] + self.edges[1:]) / 2

    def total_bytes(self, level: str) -> float:
        return float((self.bytes_per_cycle[level] * np.diff(self.edges)).sum())

    def records(self) -> list[dict[str, Any]]:
        rows = []
        for k in range(len(self.edges) - 1):
            row: dict[str, Any] = {"start": round(float(self.edges[k]), 1), "end": round(float(self.edges[k + 1]), 1)}
            for level in LEVELS:
                row[f"{level}_bytes_per_cycle"] = round(float(self.bytes_per_cycle[level][k]), 3)
            row["active_warps"] = round(float(self.active_warps[k]), 3)
            for c, cause in enumerate(CAUSES):
                row[f"share_{cause}"] = round(float(self.shares[k, c]), 4)
            rows.append(row)
        return rows

    def csv(self, path: str | os.PathLike[str] | None = None, comments: list[str] | tuple[str, ...] = ()) -> str:
        records = self.records()
        header = list(records[0]) if records else ["start", "end"]
        return csv_text(header, [list(r.values()) for r in records], path,
                        [*comments, "one SM of the Pipeline simulation; bytes per cycle of that SM"])


def _spread(start: np.ndarray, end: np.ndarray, weight: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Σ weight_i × (share of [start_i, end_i] inside each bucket): each weight spread evenly over
    its interval (a zero-length interval puts all of it at its start)."""
    width = end - start
    point = width <= 0
    out = np.zeros(len(edges) - 1)
    if point.any():
        k = np.clip(np.searchsorted(edges, start[point], "right") - 1, 0, len(out) - 1)
        np.add.at(out, k, weight[point])
    span = ~point
    if span.any():
        s, e, r = start[span], end[span], weight[span] / width[span]

        def cumulative(t: np.ndarray) -> np.ndarray:
            """Σ r_i × (time of [s_i, e_i] before t)."""
            order_s, order_e = np.argsort(s), np.argsort(e)
            ss, rs = s[order_s], r[order_s]
            ee, re = e[order_e], r[order_e]
            rs_c, rss_c = np.r_[0.0, np.cumsum(rs)], np.r_[0.0, np.cumsum(rs * ss)]
            re_c, ree_c = np.r_[0.0, np.cumsum(re)], np.r_[0.0, np.cumsum(re * ee)]
            ns, ne = np.searchsorted(ss, t, "left"), np.searchsorted(ee, t, "left")
            return (t * rs_c[ns] - rss_c[ns]) - (t * re_c[ne] - ree_c[ne])

        out += np.diff(cumulative(edges))
    return out


def time_series(evaluation: Any, buckets: int = DEFAULT_BUCKETS,
                span: tuple[float, float] | None = None) -> TimeSeries:
    """The series of an evaluation with a trace, in ``buckets`` equal buckets over the run (or
    ``span``, in cycles)."""
    sim = getattr(evaluation, "simulation", None)
    if sim is None or sim.trace is None:
        raise WarplineError("no time series: the simulation kept no trace")
    if buckets < 1:
        raise WarplineError(f"{buckets} buckets: at least one")
    trace = sim.trace
    lo, hi = span if span is not None else (0.0, max(float(sim.cycles), 1.0))
    if not hi > lo:
        raise WarplineError(f"time series over {lo:g}..{hi:g} cycles: an empty range")
    edges = np.linspace(lo, hi, buckets + 1)
    width = np.diff(edges)
    notes: list[str] = []
    if trace.truncated:
        notes.append("the trace hit its row limit: the series cover its start only")

    # bytes per level: per static instruction, what one request moves at each level
    per_request = {level: np.zeros(len(evaluation.trace_names)) for level in LEVELS}
    memory, traffic = evaluation.memory, evaluation.traffic
    if memory is None or traffic is None:
        notes.append("no memory analysis: no bytes per level")
    else:
        for a in memory.accesses:
            if not 0 <= a.index < len(per_request["L1"]):
                continue
            if a.space is MemorySpace.GLOBAL:
                t = traffic.accesses.get(a.index)
                if t is None or t.requests <= 0:
                    continue
                sectors = (a.sectors_per_request or 0.0) * SECTOR
                per_request["L1"][a.index] = sectors
                per_request["L2"][a.index] = sectors * (1.0 - t.l1_hit)
                per_request["DRAM"][a.index] = t.dram_bytes / t.requests
            elif a.space is MemorySpace.SHARED:
                ways = a.bank_conflict_mean if a.bank_conflict_mean is not None else 1.0
                per_request["L1"][a.index] = max(ways, 1.0) * LINE_BYTES
    issues = trace.issues
    instr = issues["instr"].astype(np.int64)
    start, end = issues["issue"].astype(np.float64), issues["complete"].astype(np.float64)
    moved = {}
    for level in LEVELS:
        weight = per_request[level][instr]
        mask = weight > 0
        moved[level] = _spread(start[mask], end[mask], weight[mask], edges) / width

    warps = np.unique(np.concatenate([issues["warp"], trace.stalls["warp"]]))
    activity = group_activities(trace, [warps])[0]
    cycles = activity.lane_cycles(edges)          # (buckets, categories), idle last
    active = cycles[:, :IDLE].sum(axis=1)
    shares = np.zeros((buckets, len(CAUSES)))
    has = active > 0
    shares[has] = cycles[has, :IDLE] / active[has, None]
    profile = evaluation.profile
    peaks = {level: LINE_BYTES / lam for level, (lam, _src) in level_rates(profile).items() if lam > 0} \
        if profile is not None else {}
    return TimeSeries(edges, moved, active / width, shares, peaks, notes)
