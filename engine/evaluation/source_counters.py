"""Predicted warp-cycles per line of SASS (or CUDA source), split by stall cause, beside the
samples Nsight Compute measured there (:mod:`engine.ncu_source`), with the lines where the two
disagree most ranked first.

Predicted, per PTX instruction: the simulation's issue cycles and the cycles its warps waited to
issue it (:mod:`engine.evaluation.hotspots`, which add up to the run's resident warp-cycles),
split by cause as the trace's stalls before it are (:mod:`engine.stall_links`: a stall is charged
to the instruction the warp waits to issue). A PTX instruction's cycles are shared evenly by its
SASS lines in its loop's steady state (the lines the SASS weights count; its other copies, peeled
or remainder iterations, get none), and a CUDA line adds up its instructions.

Compared as shares: each line's share of the run's predicted warp-cycles against its share of the
kernel's measured samples (sampling is proportional to warp-cycles), so the disagreement is in
percentage points and needs no clock or scale. Measured SASS lines are matched to the listing by
their offset from the function's first address when the opcodes agree there (the same PTX and
ptxas give the same code), else by aligning the two opcode sequences.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import numpy as np

from engine.errors import WarplineError
from engine.evaluation.hotspots import hotspots
from engine.ncu_source import VIEW_SASS, SourceView
from engine.pipeline.trace import STALL_CAUSES
from engine.stall_links import StallLinks

CAUSES = ("issuing", "memory_dependency", "compute_dependency", "barrier", "subsystem_busy", "issue_limit", "other")
_RESIDENT = [c for c in STALL_CAUSES if c not in ("not_resident", "finished")]
MATCH_BY_OFFSET = 0.9      # share of measured lines whose opcode must agree at their offset
FOLDED = -1                # the key of the line that holds the PTX instructions without SASS


def instruction_causes(evaluation: Any) -> np.ndarray:
    """Warp-cycles per static instruction (rows, 0-based) and cause (:data:`CAUSES`); each row
    adds up to the instruction's hot-spot total (issue + stall cycles)."""
    hot = hotspots(evaluation)
    if hot is None:
        raise WarplineError("no prediction per line: the simulation or the analysis is missing")
    n = len(hot.issue_cycles)
    out = np.zeros((n, len(CAUSES)))
    out[:, 0] = hot.issue_cycles
    trace = evaluation.simulation.trace
    by_cause = np.zeros((n, len(CAUSES)))
    if trace is not None and len(trace.stalls):
        waits = StallLinks(trace).waits_for()
        st = trace.stalls
        length = (st["end"] - st["start"]).astype(np.float64)
        for name in _RESIDENT:
            mask = (st["cause"] == STALL_CAUSES.index(name)) & (waits >= 0)
            if mask.any():
                by_cause[:, CAUSES.index(name)] = np.bincount(waits[mask], weights=length[mask], minlength=n)[:n]
    seen = by_cause.sum(axis=1)
    stall = hot.stall_cycles
    has = seen > 0
    out[has] += by_cause[has] * (stall[has] / seen[has])[:, None]
    # stall cycles the trace does not show (a trace cut at its row limit): their cause is unknown
    out[~has, CAUSES.index("other")] += stall[~has]
    return out


@dataclass
class LineComparison:
    key: int                                # SASS position (0-based) or source line number
    text: str
    predicted: float                        # warp-cycles
    predicted_share: float                  # of the run's predicted warp-cycles
    predicted_causes: dict[str, float]      # shares of this line's warp-cycles
    measured: float | None = None           # samples (None: no measurement for this line)
    measured_share: float | None = None
    measured_causes: dict[str, float] = field(default_factory=dict)
    instructions: tuple[int, ...] = ()      # 1-based PTX instructions (the BLOCK table's rows)
    address: int | None = None              # SASS: byte offset in the function

    @property
    def disagreement(self) -> float | None:
        """Measured share minus predicted share, in percentage points."""
        if self.measured_share is None:
            return None
        return 100.0 * (self.measured_share - self.predicted_share)


@dataclass
class SourceComparison:
    view: str                               # "sass" or "source"
    kernel: str
    lines: list[LineComparison]             # in listing (or line) order
    matched_by: str = ""                    # "offset", "alignment" or "line number"
    unmatched_samples: float = 0.0          # measured samples on lines not found in the prediction
    total_samples: float = 0.0
    notes: list[str] = field(default_factory=list)

    def ranked(self, limit: int | None = None) -> list[LineComparison]:
        """Lines with a measurement, largest disagreement first."""
        rows = [line for line in self.lines if line.disagreement is not None]
        rows.sort(key=lambda line: -abs(line.disagreement or 0.0))
        return rows[:limit]

    def as_dict(self, limit: int | None = None) -> dict[str, Any]:
        def row(line: LineComparison) -> dict[str, Any]:
            return {"key": line.key, "address": line.address, "text": line.text,
                    "instructions": list(line.instructions),
                    "predicted_warp_cycles": round(line.predicted, 1),
                    "predicted_share": round(line.predicted_share, 5),
                    "predicted_causes": {k: round(v, 4) for k, v in line.predicted_causes.items()},
                    "measured_samples": line.measured, "measured_share": None if line.measured_share is None
                    else round(line.measured_share, 5),
                    "measured_causes": {k: round(v, 4) for k, v in line.measured_causes.items()},
                    "disagreement_points": None if line.disagreement is None else round(line.disagreement, 2)}
        return {"view": self.view, "kernel": self.kernel, "matched_by": self.matched_by,
                "total_samples": self.total_samples, "unmatched_samples": self.unmatched_samples,
                "largest_disagreements": [row(line) for line in self.ranked(limit)],
                "lines": [row(line) for line in self.lines], "notes": list(self.notes)}

    def text(self, limit: int = 15) -> str:
        what = "SASS line" if self.view == VIEW_SASS else "source line"
        lines = [f"Measured (Nsight Compute samples) against predicted warp-cycles per {what}, {self.kernel}: "
                 f"{self.total_samples:,.0f} samples, matched by {self.matched_by}"
                 + (f", {self.unmatched_samples:,.0f} on lines not found" if self.unmatched_samples else ""),
                 f"  {'where':>8} {'measured':>9} {'predicted':>9} {'Δ points':>9}  "
                 "top cause (measured / predicted)  text"]
        for line in self.ranked(limit):
            top_m = max(line.measured_causes, key=line.measured_causes.get, default="—")
            top_p = max(line.predicted_causes, key=line.predicted_causes.get, default="—")
            where = f"{line.address:#06x}" if line.address is not None else str(line.key)
            lines.append(f"  {where:>8} {100 * (line.measured_share or 0):8.1f}% {100 * line.predicted_share:8.1f}% "
                         f"{line.disagreement:+9.1f}  {top_m} / {top_p:<20}  {line.text[:60]}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def _cause_shares(values: np.ndarray) -> dict[str, float]:
    total = float(values.sum())
    return {c: float(v) / total for c, v in zip(CAUSES, values, strict=True) if v > 0} if total > 0 else {}


def _measured_shares(causes: dict[str, float]) -> dict[str, float]:
    total = sum(causes.values())
    return {c: v / total for c, v in causes.items() if v > 0} if total > 0 else {}


def predicted_sass(evaluation: Any, listing: Any, positions: dict[int, tuple[int, ...]]) -> list[LineComparison]:
    """Predicted warp-cycles per SASS line of ``listing`` (engine.sass.SassListing); ``positions``:
    each PTX instruction's steady-state SASS positions (``SassMap.positions``; where an
    instruction has none there, all its lines share its cycles)."""
    causes = instruction_causes(evaluation)
    total = float(causes.sum())
    per_line = np.zeros((len(listing.lines), len(CAUSES)))
    by_owner: dict[int, list[int]] = {}
    for k, line in enumerate(listing.lines):
        if line.owner is not None:
            by_owner.setdefault(line.owner, []).append(k)
    index = {line.position: k for k, line in enumerate(listing.lines)}
    folded = np.zeros(len(CAUSES))
    folded_ids: list[int] = []
    for i in range(len(causes)):
        chosen = [index[p] for p in positions.get(i, ()) if p in index] or by_owner.get(i, [])
        for k in chosen:
            per_line[k] += causes[i] / len(chosen)
        if not chosen and causes[i].sum() > 0:
            folded += causes[i]
            folded_ids.append(i + 1)
    out = [LineComparison(line.position, line.text, float(per_line[k].sum()),
                          float(per_line[k].sum()) / total if total > 0 else 0.0, _cause_shares(per_line[k]),
                          instructions=() if line.owner is None else (line.owner + 1,), address=line.address)
           for k, line in enumerate(listing.lines)]
    if folded_ids:
        # PTX instructions ptxas made no SASS of their own for (folded into an address, merged
        # into a wider access): the simulation issued them, so their cycles stay, on one line
        out.append(LineComparison(FOLDED, f"(no SASS of their own: PTX {', '.join(map(str, folded_ids[:12]))}"
                                  + (" …)" if len(folded_ids) > 12 else ")"), float(folded.sum()),
                                  float(folded.sum()) / total if total > 0 else 0.0, _cause_shares(folded),
                                  instructions=tuple(folded_ids)))
    return out


def compare_sass(evaluation: Any, listing: Any, positions: dict[int, tuple[int, ...]],
                 measured: SourceView) -> SourceComparison:
    lines = predicted_sass(evaluation, listing, positions)
    rows = [r for r in measured.rows if r.address is not None]
    if not rows:
        raise WarplineError("the SASS view of the source page has no addresses")
    base = min(r.address for r in rows)  # type: ignore[type-var]
    ours = [line.base for line in listing.lines]
    theirs = [r.opcode.split(".", 1)[0] for r in rows]
    offsets = [((r.address or 0) - base) // 16 for r in rows]
    agree = sum(1 for p, op in zip(offsets, theirs, strict=True) if 0 <= p < len(ours) and ours[p] == op)
    pairs: dict[int, int] = {}
    if rows and agree >= MATCH_BY_OFFSET * len(rows):
        how = "offset"
        pairs = {k: p for k, p in enumerate(offsets) if 0 <= p < len(ours)}
    else:
        how = "alignment"
        matcher = difflib.SequenceMatcher(None, theirs, ours, autojunk=False)
        for block in matcher.get_matching_blocks():
            for k in range(block.size):
                pairs[block.a + k] = block.b + k
    total = measured.total_samples
    result = SourceComparison(VIEW_SASS, measured.kernel, lines, how, total_samples=total)
    if how == "alignment":
        result.notes.append(f"the measured SASS differs from this PTX's ({agree} of {len(rows)} opcodes at the same "
                            "offset): lines matched by aligning the opcodes")
    for k, r in enumerate(rows):
        p = pairs.get(k)
        if p is None:
            result.unmatched_samples += r.samples
            continue
        line = lines[p]
        line.measured = (line.measured or 0.0) + r.samples
        line.measured_causes = _measured_shares(r.causes())
    for line in lines:
        if line.measured is None:
            line.measured = 0.0
        line.measured_share = line.measured / total if total > 0 else 0.0
    return result


def compare_source(evaluation: Any, measured: SourceView) -> SourceComparison:
    """CUDA (or PTX) lines: the predicted cycles of the instructions a line's ``.loc`` names."""
    hot = hotspots(evaluation)
    if hot is None:
        raise WarplineError("no prediction per line: the simulation or the analysis is missing")
    causes = instruction_causes(evaluation)
    total = float(causes.sum())
    wanted = PurePath(measured.file).name if measured.file else ""
    heats = [h for h in hot.cuda_lines if h.line > 0 and (not wanted or PurePath(h.file).name == wanted)]
    if not heats:
        raise WarplineError("the kernel's PTX has no .loc lines of that source file: compile with -lineinfo")
    files = {PurePath(h.file).name for h in heats}
    if len(files) > 1 and not wanted:
        main = max(files, key=lambda f: sum(h.total for h in heats if PurePath(h.file).name == f))
        heats = [h for h in heats if PurePath(h.file).name == main]
    by_line = {}
    for h in heats:
        values = causes[[i - 1 for i in h.instructions]].sum(axis=0)
        by_line[h.line] = LineComparison(h.line, "", float(values.sum()), float(values.sum()) / total if total else 0.0,
                                         _cause_shares(values), instructions=h.instructions)
    result = SourceComparison(measured.view, measured.kernel, [], "line number", total_samples=measured.total_samples)
    for r in measured.rows:
        line = by_line.get(r.number or -1)
        if line is None:
            if r.samples:
                line = LineComparison(r.number or 0, r.source.strip(), 0.0, 0.0, {})
                by_line[line.key] = line
            else:
                continue
        line.text = r.source.strip()
        line.measured = (line.measured or 0.0) + r.samples
        line.measured_causes = _measured_shares(r.causes())
    total_m = measured.total_samples
    for line in by_line.values():
        line.measured = line.measured or 0.0
        line.measured_share = line.measured / total_m if total_m > 0 else 0.0
    result.lines = sorted(by_line.values(), key=lambda line: line.key)
    return result


def views_for(views: list[SourceView], kernel: str) -> list[SourceView]:
    """The tables of ``kernel`` (its mangled name) among a file's (by function name; a file of
    one kernel is taken as that kernel's)."""
    from engine.names import base_name, display_name

    name = base_name(display_name(kernel))
    mine = [v for v in views if v.function_name == name]
    if not mine and len({v.kernel for v in views}) == 1:
        return list(views)
    if not mine:
        found = ", ".join(sorted({v.function_name for v in views}))
        raise WarplineError(f"no source table of {name} (the file has {found})")
    return mine
