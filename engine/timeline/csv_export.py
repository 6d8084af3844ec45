"""The timeline CSV: issues and stalls of a trace in one table, as a file
(:func:`export_trace_csv`) and as columns for the Python API (:func:`trace_columns`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from engine.pipeline.trace import STALL_CAUSES, Trace
from engine.timeline.labels import subsystem_names

CSV_COLUMNS = ("kind", "row", "warp", "block", "instruction", "name", "subsystem", "start", "end", "cause",
               "held_by", "held_by_name")


def export_trace_csv(trace: Trace, path: str | Path, names: Sequence[str],
                     subsystems: Sequence[str] | None = None,
                     header_of: Callable[[str], str] | None = None, header: Sequence[str] = ()) -> int:
    """One CSV, both tables, told apart by the ``kind`` column; returns the data rows written.

    ``header``: lines written first, each as a ``# `` comment (what the run was: file, kernel,
    profile, launch, edits; :func:`engine.evaluation.provenance.comment_lines`).
    ``kind=issue`` rows (in ``trace.issues`` order, ``row`` = index there): warp, block,
    instruction (1-based, the BLOCK table's number), name, subsystem name, start = issue cycle,
    end = completion cycle, empty cause. ``kind=stall`` rows (``trace.stalls`` order): warp,
    start, end, cause name; instruction and name: the instruction the warp waits to issue, and
    ``held_by``/``held_by_name`` the one whose result (or barrier) holds it
    (:mod:`engine.stall_links`); empty where there is none. Cycles are rounded to a tenth; text
    that a spreadsheet would evaluate (``@%p1 bra``) is escaped. The file is written atomically.
    ``header_of`` marks the cycle columns (``Caveats.csv_header`` of the evaluation: cycles that
    rest on assumed inputs say so).
    """
    from engine.fileio import csv_safe, write_text_atomic
    from engine.stall_links import StallLinks

    subs = [_csv_field(str(csv_safe(x))) for x in subsystem_names(trace, subsystems, None)]
    text = [_csv_field(str(csv_safe(n))) for n in names]
    causes = list(STALL_CAUSES)
    iss, st = trace.issues, trace.stalls
    # Hand-formatted lines: csv.writer costs ~5 µs a row, which is seconds on a full trace.
    columns = [header_of(c) if header_of is not None and c in ("start", "end") else c for c in CSV_COLUMNS]
    lines = [f"# {_comment(line)}\r\n" for line in header]
    lines.append(",".join(_csv_field(c) for c in columns) + "\r\n")
    cols = (iss["warp"].tolist(), iss["block"].tolist(), iss["instr"].tolist(),
            iss["subsystem"].tolist(), _tenths(iss["issue"]), _tenths(iss["complete"]))
    lines.extend(f"issue,{r},{w},{b},{i + 1},{text[i]},{subs[k]},{a},{c},,,\r\n"
                 for r, (w, b, i, k, a, c) in enumerate(zip(*cols, strict=True)))
    links = StallLinks(trace)

    def named(k: int) -> tuple[str, str]:
        return ("", "") if k < 0 else (str(k + 1), text[k])

    cols = (st["warp"].tolist(), _tenths(st["start"]), _tenths(st["end"]), st["cause"].tolist(),
            links.waits_for().tolist(), links.held_by().tolist())
    lines.extend("stall,{},{},,{},,{},{},{},{}\r\n".format(r, w, ",".join(named(i)), a, b, causes[c],
                                                             ",".join(named(h)))
                 for r, (w, a, b, c, i, h) in enumerate(zip(*cols, strict=True)))
    write_text_atomic(path, "".join(lines))
    return len(iss) + len(st)


def trace_columns(trace: Trace, names: Sequence[str], subsystems: Sequence[str] | None = None) -> dict[str, list]:
    """The timeline CSV as columns (:data:`CSV_COLUMNS`; None for an empty cell, cycles to a
    tenth): issues, then stalls, as :func:`export_trace_csv` writes them (the Python API's table)."""
    from engine.stall_links import StallLinks

    subs = subsystem_names(trace, subsystems, None)
    iss, st = trace.issues, trace.stalls
    links = StallLinks(trace)
    waits, held = links.waits_for(), links.held_by()
    n_i, n_s = len(iss), len(st)

    def named(index: np.ndarray) -> tuple[list, list]:
        ids = [None if k < 0 else int(k) + 1 for k in index.tolist()]
        return ids, [None if k is None else names[k - 1] for k in ids]

    wait_ids, wait_names = named(waits)
    held_ids, held_names = named(held)
    instr = iss["instr"].tolist()
    return {
        "kind": ["issue"] * n_i + ["stall"] * n_s,
        "row": list(range(n_i)) + list(range(n_s)),
        "warp": iss["warp"].tolist() + st["warp"].tolist(),
        "block": iss["block"].tolist() + [None] * n_s,
        "instruction": [i + 1 for i in instr] + wait_ids,
        "name": [names[i] for i in instr] + wait_names,
        "subsystem": [subs[k] for k in iss["subsystem"].tolist()] + [None] * n_s,
        "start": np.round(iss["issue"], 1).tolist() + np.round(st["start"], 1).tolist(),
        "end": np.round(iss["complete"], 1).tolist() + np.round(st["end"], 1).tolist(),
        "cause": [None] * n_i + [STALL_CAUSES[c] for c in st["cause"].tolist()],
        "held_by": [None] * n_i + held_ids,
        "held_by_name": [None] * n_i + held_names,
    }


def _comment(line: str) -> str:
    """One header line as a CSV comment: on one line (a kernel name or an edit never breaks it)."""
    return " ".join(str(line).split())


def _tenths(values: np.ndarray) -> list[str]:
    """Cycles as text rounded to a tenth, without a trailing ``.0``."""
    out = []
    for v in np.round(np.asarray(values, dtype=np.float64), 1).tolist():
        text = f"{v:.1f}"
        out.append(text[:-2] if text.endswith(".0") else text)
    return out


def _csv_field(value: str) -> str:
    """A CSV field quoted the way csv.writer quotes it (only when it must)."""
    if any(ch in value for ch in ',"\r\n'):
        return '"' + value.replace('"', '""') + '"'
    return value
