"""Read Nsight Compute's source page as CSV (``ncu --import R.ncu-rep --page source --csv
--print-source sass`` or ``cuda``, or the same while profiling): per line of the kernel's SASS (or
CUDA source), the warp-state samples and the samples of each stall reason.

Layout, as ncu prints it: a ``"Kernel Name","<signature>"`` row starts each kernel's table; the
header row follows, with ``Address`` and ``Source`` (SASS view) or ``#`` and ``Source`` (CUDA or
PTX view, ``#`` being the line number), ``Warp Stall Sampling (All Samples)`` and ``(Not-issued
Samples)`` (``… Cycles)`` in older versions), ``Instructions Executed``, and a column per stall
reason (``stall_long_sb``, ``stall_math``, …, and the same with `` (Not Issued)``). Numbers may carry
thousands separators; ``-`` or an empty cell is no value. Lines ncu writes around the tables
(``==PROF==``) are skipped. Every refusal is a :class:`~engine.errors.TableFormatError` naming the
file, the line and the column.

:data:`REASON_CAUSES` maps ncu's stall reasons onto the Pipeline model's causes (what the
simulation can say of a warp): the comparison of the two is only as fine as that mapping.
"""

from __future__ import annotations

import csv
import io
import math
import os
from dataclasses import dataclass, field

from engine.errors import TableFormatError
from engine.fileio import read_regular_file
from engine.names import base_name

SAMPLES_COLUMNS = ("Warp Stall Sampling (All Samples)", "Warp Stall Sampling (All Cycles)")
NOT_ISSUED_COLUMNS = ("Warp Stall Sampling (Not-issued Samples)", "Warp Stall Sampling (Not-issued Cycles)")
EXECUTED_COLUMN = "Instructions Executed"
REASON_PREFIX = "stall_"
MAX_SOURCE_BYTES = 256 << 20
VIEW_SASS, VIEW_SOURCE = "sass", "source"

# ncu stall reason -> the Pipeline model's cause (engine.pipeline.trace.STALL_CAUSES, or "issuing"
# for a warp the scheduler picked; "other" where the model has no counterpart)
REASON_CAUSES: dict[str, str] = {
    "selected": "issuing",
    "long_sb": "memory_dependency",        # waiting on L1TEX (global, local, texture) results
    "short_sb": "memory_dependency",       # waiting on MIO results (shared memory, special functions)
    "wait": "compute_dependency",          # a fixed-latency dependency
    "barrier": "barrier",
    "membar": "barrier",
    "lg": "subsystem_busy",                # the local/global queue is full
    "mio": "subsystem_busy",               # the MIO queue is full
    "math": "subsystem_busy",              # a math pipe is busy
    "tex": "subsystem_busy",
    "drain": "subsystem_busy",             # stores draining at exit
    "not_selected": "issue_limit",         # ready, another warp was picked
    "dispatch": "issue_limit",
    "branch_resolving": "other",
    "no_inst": "other",
    "misc": "other",
    "sleep": "other",
    "sleeping": "other",
    "imc": "other",                        # constant-cache miss
}


@dataclass
class SourceRow:
    """One line of the source page."""

    line_in_file: int            # the CSV line it came from
    address: int | None          # SASS view: the instruction's address
    number: int | None           # CUDA/PTX view: the source line number
    source: str
    samples: float               # warp-state samples at this line (all)
    not_issued: float | None
    executed: float | None       # warp-level instructions executed
    reasons: dict[str, float] = field(default_factory=dict)   # reason -> samples (all)

    def causes(self) -> dict[str, float]:
        """Samples per Pipeline-model cause (:data:`REASON_CAUSES`)."""
        out: dict[str, float] = {}
        for reason, count in self.reasons.items():
            cause = REASON_CAUSES.get(reason, "other")
            out[cause] = out.get(cause, 0.0) + count
        return out

    @property
    def opcode(self) -> str:
        """The SASS opcode of the line (without a predicate), '' for a source line."""
        words = self.source.split()
        if not words:
            return ""
        return (words[1] if words[0].startswith("@") and len(words) > 1 else words[0]).rstrip(";")


@dataclass
class SourceView:
    kernel: str                  # as ncu prints it (a demangled signature)
    view: str                    # VIEW_SASS or VIEW_SOURCE
    rows: list[SourceRow]
    file: str = ""               # the source file named above the table, if any

    @property
    def function_name(self) -> str:
        return base_name(self.kernel)

    @property
    def total_samples(self) -> float:
        return sum(r.samples for r in self.rows)


def _number(cell: str, filename: str, line: int, column: str) -> float | None:
    text = cell.strip().replace(",", "")
    if text in ("", "-", "n/a", "N/A"):
        return None
    try:
        value = float(text)
    except ValueError:
        raise TableFormatError(f"{cell!r} is not a number", filename, line, column) from None
    if not math.isfinite(value) or value < 0:
        raise TableFormatError(f"{cell!r}: a count is finite and not negative", filename, line, column)
    return value


def parse_source_csv(text: str, filename: str = "<source csv>") -> list[SourceView]:
    """Every kernel table of a source-page CSV, in file order."""
    kept = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip() and not line.startswith("==")]
    if not kept:
        raise TableFormatError("no Nsight Compute source table found", filename, 1, "")
    views: list[SourceView] = []
    kernel, source_file = "", ""
    header: list[str] | None = None
    columns: dict[str, int] = {}
    current: SourceView | None = None
    for number, line in kept:
        try:
            row = next(csv.reader(io.StringIO(line)))
        except (csv.Error, StopIteration) as exc:
            raise TableFormatError(f"not a readable CSV row ({exc})", filename, number, "") from None
        first = row[0].strip() if row else ""
        if first == "Kernel Name":
            kernel = row[1].strip() if len(row) > 1 else ""
            header, current = None, None
            continue
        if first in ("File Name", "File", "Source File") and len(row) > 1 and header is None:
            source_file = row[1].strip()
            continue
        if header is None and "Source" in [c.strip() for c in row]:
            header = [c.strip() for c in row]
            columns = {name: i for i, name in enumerate(header)}
            if not any(c in columns for c in SAMPLES_COLUMNS):
                raise TableFormatError("no 'Warp Stall Sampling (All Samples)' column: profile with the "
                                       "SourceCounters section (--section SourceCounters, or --set full)",
                                       filename, number, "Source")
            sass = "Address" in columns and "#" not in columns
            current = SourceView(kernel, VIEW_SASS if sass else VIEW_SOURCE, [], source_file)
            views.append(current)
            continue
        if header is None or current is None:
            continue        # ncu's notes before a table
        if len(row) != len(header):
            raise TableFormatError(f"{len(row)} cells, the header has {len(header)}", filename, number, "")
        current.rows.append(_row(row, columns, current.view, filename, number))
    if not views:
        raise TableFormatError("no source table (a row with 'Source' and 'Warp Stall Sampling' columns): is this "
                               "ncu --page source --csv?", filename, kept[0][0], "")
    for view in views:
        if not view.rows:
            raise TableFormatError(f"the table of {view.kernel or 'a kernel'} has no rows", filename, 1, "")
    return views


def _row(row: list[str], columns: dict[str, int], view: str, filename: str, number: int) -> SourceRow:
    def cell(names: tuple[str, ...] | str) -> tuple[str, str] | None:
        for name in (names,) if isinstance(names, str) else names:
            if name in columns:
                return name, row[columns[name]]
        return None

    address = line_no = None
    if view == VIEW_SASS:
        raw = row[columns["Address"]].strip()
        try:
            address = int(raw, 16) if raw.lower().startswith("0x") else int(raw)
        except ValueError:
            raise TableFormatError(f"address {raw!r} is not a number", filename, number, "Address") from None
    else:
        raw = row[columns["#"]].strip()
        if not raw.isdigit():
            raise TableFormatError(f"line number {raw!r} is not a whole number", filename, number, "#")
        line_no = int(raw)
    samples_cell = cell(SAMPLES_COLUMNS)
    assert samples_cell is not None
    samples = _number(samples_cell[1], filename, number, samples_cell[0]) or 0.0
    not_issued_cell = cell(NOT_ISSUED_COLUMNS)
    not_issued = _number(not_issued_cell[1], filename, number, not_issued_cell[0]) if not_issued_cell else None
    executed_cell = cell(EXECUTED_COLUMN)
    executed = _number(executed_cell[1], filename, number, executed_cell[0]) if executed_cell else None
    reasons: dict[str, float] = {}
    for name, k in columns.items():
        if name.startswith(REASON_PREFIX) and not name.endswith("(Not Issued)"):
            value = _number(row[k], filename, number, name)
            if value:
                reasons[name[len(REASON_PREFIX):]] = value
    return SourceRow(number, address, line_no, row[columns["Source"]], samples, not_issued, executed, reasons)


def load_source_csv(path: str | os.PathLike[str]) -> list[SourceView]:
    """The source-page tables of an ncu CSV file (a regular UTF-8 file of at most 256 MiB)."""
    name = os.fspath(path)
    data = read_regular_file(path, MAX_SOURCE_BYTES, "Nsight Compute source CSV")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise TableFormatError(f"not UTF-8 text (byte 0x{data[exc.start]:02x})", name, line, "") from None
    return parse_source_csv(text, name)
