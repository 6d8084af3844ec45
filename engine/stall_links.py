"""Which instructions a stall of the simulation's trace is about.

* **waits for**: the instruction the warp issues when the stall ends, its next issue at or after
  the stall's end (none for a finished warp): what the warp is stuck on, what the chart's
  tooltip names;
* **held by**: for a dependency stall (memory or arithmetic results), the warp's own instruction
  whose result the wait ends on, the one that completes last at or before the stall's end and
  after its start; for a barrier, the barrier the warp issued before it. Stalls for a busy unit or
  an issue slot are held by the other warps' traffic, not by one instruction: none.

The timeline CSV, the Chrome trace and the chart's tooltips read :class:`StallLinks`, so they
name the same instructions. Instruction numbers here are 0-based (the trace's), -1 for none.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.pipeline.trace import STALL_CAUSES, Trace

_DEPENDENCY = (STALL_CAUSES.index("memory_dependency"), STALL_CAUSES.index("compute_dependency"))
_BARRIER = STALL_CAUSES.index("barrier")
_EPS = 1e-6


class StallLinks:
    """The links of a trace's stalls, computed for the rows asked for (the sorts of the issue table
    are made once, on construction)."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        issues = trace.issues
        self._by_issue = np.lexsort((issues["issue"], issues["warp"]))
        self._warps_i = issues["warp"][self._by_issue]
        self._issue_t = issues["issue"][self._by_issue]
        self._by_complete = np.lexsort((issues["complete"], issues["warp"]))
        self._warps_c = issues["warp"][self._by_complete]
        self._complete_t = issues["complete"][self._by_complete]

    def _bounds(self, warps_sorted: np.ndarray, warp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.searchsorted(warps_sorted, warp, "left"), np.searchsorted(warps_sorted, warp, "right")

    def waits_for(self, rows: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
        """Per stall row, the 0-based instruction the warp issues next (-1: none)."""
        st = self.trace.stalls if rows is None else self.trace.stalls[np.asarray(rows, dtype=np.int64)]
        lo, hi = self._bounds(self._warps_i, st["warp"])
        # within each warp's rows (sorted by issue time), the first issue at or after the end
        keys = st["end"].astype(np.float64) - _EPS
        pos = _search_within(self._issue_t, lo, hi, keys, "left")
        out = np.full(len(st), -1, dtype=np.int64)
        ok = pos < hi
        out[ok] = self.trace.issues["instr"][self._by_issue[pos[ok]]]
        return out

    def held_by(self, rows: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
        """Per stall row, the 0-based instruction whose result (or barrier) holds the warp (-1: none)."""
        st = self.trace.stalls if rows is None else self.trace.stalls[np.asarray(rows, dtype=np.int64)]
        out = np.full(len(st), -1, dtype=np.int64)
        cause = st["cause"].astype(np.int64)
        instr = self.trace.issues["instr"]
        dep = np.isin(cause, _DEPENDENCY)
        if dep.any():
            d = st[dep]
            lo, hi = self._bounds(self._warps_c, d["warp"])
            # the last of the warp's issues completing at or before the end ...
            pos = _search_within(self._complete_t, lo, hi, d["end"].astype(np.float64) + _EPS, "right") - 1
            ok = pos >= lo
            found = np.full(len(d), -1, dtype=np.int64)
            # ... and after the stall began (else nothing of its own held it)
            later = np.zeros(len(d), dtype=bool)
            later[ok] = self._complete_t[pos[ok]] > d["start"][ok] - _EPS
            found[later] = instr[self._by_complete[pos[later]]]
            out[dep] = found
        bar = cause == _BARRIER
        if bar.any():
            b = st[bar]
            lo, hi = self._bounds(self._warps_i, b["warp"])
            pos = _search_within(self._issue_t, lo, hi, b["start"].astype(np.float64) + _EPS, "right") - 1
            found = np.full(len(b), -1, dtype=np.int64)
            ok = pos >= lo
            found[ok] = instr[self._by_issue[pos[ok]]]
            out[bar] = found
        return out


def _search_within(values: np.ndarray, lo: np.ndarray, hi: np.ndarray, keys: np.ndarray, side: str) -> np.ndarray:
    """``np.searchsorted`` of each key in its own slice values[lo:hi] (each slice sorted), as
    absolute positions: one vectorised binary search over all the slices at once."""
    lo = lo.astype(np.int64)
    hi = hi.astype(np.int64)
    left, right = lo.copy(), hi.copy()
    while True:
        active = left < right
        if not active.any():
            return left
        mid = (left + right) // 2
        probe = values[np.minimum(mid, len(values) - 1)] if len(values) else np.zeros_like(keys)
        go_right = (probe < keys) if side == "left" else (probe <= keys)
        go_right &= active
        stay = active & ~go_right
        left = np.where(go_right, mid + 1, left)
        right = np.where(stay, mid, right)
