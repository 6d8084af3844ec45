"""Two kernels (or two versions of one) side by side: their instructions aligned by text, the
BLOCK-table cells and simulated shares that changed, and every model's cycles with the absolute
and relative difference (:func:`engine.evaluation.compare.compare`).

Alignment. Each instruction is reduced to its text with the kernel's own name taken out of its
parameter names (``_Z6kernelPf_param_0`` → ``param_0``); a longest-common-subsequence alignment
(difflib) pairs equal texts first. Within the stretches that differ, instructions are aligned
again by their *shape* (the text with register numbers blanked: ``add.s32 %r, %r, 1``), so that a
version whose registers were renumbered lines up row by row. Each row is then

* ``same``: the same text; its BLOCK cells may still differ (a latency edited, another profile):
  ``changed_cells`` names them;
* ``renamed``: the same instruction with other registers, labels or mangled symbols;
* ``changed``: paired with an instruction of the other kernel in a stretch that differs;
* ``added`` / ``removed``: only in the second (``after``) / first (``before``) kernel.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.evaluation.compare import CompareRow, compare
from engine.evaluation.hotspots import hotspots
from engine.fileio import csv_text

SAME, RENAMED, CHANGED, ADDED, REMOVED = "same", "renamed", "changed", "added", "removed"
STATUSES = (SAME, RENAMED, CHANGED, ADDED, REMOVED)
# BLOCK-table cells compared between aligned rows (the instruction table's latencies and n_ma,
# the BLOCK table's issue, functional-unit, communication, overhead and sync cells)
CELLS = ("lat_comp", "lat_comm", "n_ma", "issue", "fu1", "fu2", "fu3", "fu4", "comm", "ovh", "sync")
_REGISTER = re.compile(r"%[a-z]+\d+")
_LABEL = re.compile(r"\$L__BB\d+_\d+")
_MANGLED = re.compile(r"\b_Z\w+")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class DiffRow:
    status: str
    before: int | None              # 1-based instruction number in the first kernel
    after: int | None               # ... in the second
    before_text: str = ""
    after_text: str = ""
    changed_cells: tuple[str, ...] = ()
    before_share: float | None = None   # share of the run's simulated warp-cycles
    after_share: float | None = None

    @property
    def marked(self) -> bool:
        """Worth a reader's eye: anything but an unchanged row."""
        return self.status != SAME or bool(self.changed_cells)


@dataclass
class KernelDiff:
    before_label: str
    after_label: str
    rows: list[DiffRow]
    models: list[CompareRow]
    notes: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in STATUSES}
        for r in self.rows:
            out[r.status] += 1
        out["cells_changed"] = sum(1 for r in self.rows if r.status == SAME and r.changed_cells)
        return out

    def records(self) -> list[dict[str, Any]]:
        return [{"status": r.status, "before": r.before, "after": r.after, "before_text": r.before_text,
                 "after_text": r.after_text, "changed_cells": " ".join(r.changed_cells),
                 "before_share_percent": None if r.before_share is None else round(100 * r.before_share, 2),
                 "after_share_percent": None if r.after_share is None else round(100 * r.after_share, 2)}
                for r in self.rows]

    def model_records(self) -> list[dict[str, Any]]:
        out = []
        for r in self.models:
            if r.section != "model":
                continue
            out.append({"model": r.key, "title": r.title,
                        "before_kernel_cycles": None if r.baseline is None else round(r.baseline, 1),
                        "after_kernel_cycles": None if r.current is None else round(r.current, 1),
                        "difference_cycles": None if r.difference is None else round(r.difference, 1),
                        "difference_percent": None if r.relative is None else round(100 * r.relative, 2)})
        return out

    def as_dict(self) -> dict[str, Any]:
        verdict = next((r for r in self.models if r.section == "bottleneck"), None)
        return {"before": self.before_label, "after": self.after_label, "counts": self.counts(),
                "models": self.model_records(), "rows": self.records(),
                "bottleneck": {"before": verdict.baseline_text, "after": verdict.current_text} if verdict else None,
                "notes": list(self.notes)}

    def text(self, all_rows: bool = False) -> str:
        c = self.counts()
        lines = [f"before: {self.before_label}", f"after:  {self.after_label}",
                 f"instructions: {c[SAME]} same ({c['cells_changed']} with changed BLOCK cells), "
                 f"{c[RENAMED]} renamed registers, {c[CHANGED]} changed, {c[ADDED]} added, {c[REMOVED]} removed",
                 f"  {'model':<24} {'before':>14} {'after':>14} {'difference':>14} {'change':>9}"]
        for m in self.model_records():
            def num(x: float | None, sign: bool = False) -> str:
                return "—" if x is None else (f"{x:+,.0f}" if sign else f"{x:,.0f}")
            pct = "" if m["difference_percent"] is None else f"{m['difference_percent']:+.1f} %"
            lines.append(f"  {m['title']:<24} {num(m['before_kernel_cycles']):>14} {num(m['after_kernel_cycles']):>14}"
                         f" {num(m['difference_cycles'], True):>14} {pct:>9}")
        shown = self.rows if all_rows else [r for r in self.rows if r.marked]
        if shown:
            lines.append("  rows" + ("" if all_rows else " that differ") + ":")
        for r in shown:
            where = f"{r.before or '':>4} {r.after or '':>4}"
            text = r.after_text or r.before_text
            if r.status in (CHANGED, RENAMED):
                text = f"{r.before_text}  →  {r.after_text}"
            cells = f"  [{', '.join(r.changed_cells)}]" if r.changed_cells else ""
            lines.append(f"  {r.status:<8} {where}  {text}{cells}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def csv(self, path: str | None = None, comments: Sequence[str] = ()) -> str:
        """The aligned rows; ``comments``: lines before the header (before and after are named)."""
        records = self.records()
        header = list(records[0]) if records else ["status", "before", "after"]
        lines = [f"before: {self.before_label}", f"after: {self.after_label}", *comments]
        return csv_text(header, [list(r.values()) for r in records], path, lines)


def normalised(text: str, kernel: str) -> str:
    """An instruction's text without its kernel's name in parameter symbols, spaces collapsed."""
    if kernel:
        text = text.replace(f"{kernel}_param_", "param_")
    return _SPACES.sub(" ", text.strip().rstrip(";").strip())


def shape(text: str) -> str:
    """The text with what a recompilation renames blanked: register numbers (``%r12`` → ``%r``),
    branch labels (``$L__BB0_2``) and mangled symbols (a template's shared arrays)."""
    text = _REGISTER.sub(lambda m: re.sub(r"\d+$", "", m.group(0)), text)
    return _MANGLED.sub("_Z…", _LABEL.sub("$L", text))


def align(before: list[str], after: list[str]) -> list[tuple[str, int | None, int | None]]:
    """(status, index in before, index in after), 0-based, in order: equal texts, then the
    differing stretches aligned by shape."""
    out: list[tuple[str, int | None, int | None]] = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend((SAME, i1 + k, j1 + k) for k in range(i2 - i1))
            continue
        a, b = [shape(t) for t in before[i1:i2]], [shape(t) for t in after[j1:j2]]
        inner = difflib.SequenceMatcher(None, a, b, autojunk=False)
        for tag2, p1, p2, q1, q2 in inner.get_opcodes():
            if tag2 == "equal":
                out.extend((RENAMED, i1 + p1 + k, j1 + q1 + k) for k in range(p2 - p1))
            elif tag2 == "replace":
                pairs = min(p2 - p1, q2 - q1)
                out.extend((CHANGED, i1 + p1 + k, j1 + q1 + k) for k in range(pairs))
                out.extend((REMOVED, i1 + p1 + k, None) for k in range(pairs, p2 - p1))
                out.extend((ADDED, None, j1 + q1 + k) for k in range(pairs, q2 - q1))
            elif tag2 == "delete":
                out.extend((REMOVED, i1 + k, None) for k in range(p1, p2))
            else:
                out.extend((ADDED, None, j1 + k) for k in range(q1, q2))
    return out


def _cells(evaluation: Any) -> dict[int, dict[str, str]]:
    """Per 1-based instruction, the compared BLOCK cells as text (cycles to a tenth)."""
    mb = getattr(evaluation, "manybsp", None)
    if mb is None:
        return {}
    out: dict[int, dict[str, str]] = {}
    for r in mb.rows:
        out[r.index] = {"lat_comp": f"{r.lat_comp:.1f}", "lat_comm": f"{r.lat_comm:.1f}", "n_ma": str(r.n_ma)}
    for b in mb.block:
        cells = out.setdefault(b.index, {})
        cells["issue"] = "" if b.issue is None else f"{b.issue:.1f}"
        for column in range(1, 5):
            cell = b.fu.get(column)
            cells[f"fu{column}"] = "" if cell is None else f"{cell.value:.1f}"
        cells.update(comm=f"{b.comm:.1f}", ovh=f"{b.ovh:.1f}", sync=f"{b.sync:.1f}")
    return out


def _shares(evaluation: Any) -> dict[int, float]:
    hot = hotspots(evaluation)
    if hot is None:
        return {}
    return {i + 1: hot.share(i + 1) for i in range(len(hot.issue_cycles))}


def diff(before: Any, after: Any, before_label: str = "before", after_label: str = "after") -> KernelDiff:
    """The diff of two evaluations (``engine.evaluation.Evaluation``). ``before`` may also be
    stored figures (``BaselineFigures``): then only the models are compared."""
    models = compare(before, after)
    notes: list[str] = []
    b_analysis, a_analysis = getattr(before, "analysis", None), getattr(after, "analysis", None)
    if b_analysis is None or a_analysis is None:
        notes.append("the instructions of " + ("the first" if b_analysis is None else "the second")
                     + " kernel are not known (stored figures, or the analysis failed): models only")
        return KernelDiff(before_label, after_label, [], models, notes)
    b_kernel, a_kernel = before.state.kernel, after.state.kernel
    b_text = [normalised(i.text, b_kernel) for i in b_analysis.function.instructions]
    a_text = [normalised(i.text, a_kernel) for i in a_analysis.function.instructions]
    b_cells, a_cells = _cells(before), _cells(after)
    b_share, a_share = _shares(before), _shares(after)
    if not b_cells or not a_cells:
        notes.append("a BLOCK table is missing (Many-BSP could not be built): cells not compared")
    rows = []
    for status, i, j in align(b_text, a_text):
        bn = None if i is None else i + 1
        an = None if j is None else j + 1
        changed: tuple[str, ...] = ()
        if bn is not None and an is not None and bn in b_cells and an in a_cells:
            changed = tuple(c for c in CELLS if b_cells[bn].get(c) != a_cells[an].get(c))
        rows.append(DiffRow(status, bn, an, "" if i is None else b_text[i], "" if j is None else a_text[j],
                            changed, b_share.get(bn) if bn else None, a_share.get(an) if an else None))
    return KernelDiff(before_label, after_label, rows, models, notes)
