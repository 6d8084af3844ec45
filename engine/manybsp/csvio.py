"""CSV export of the Many-BSP tables and import of an edited BLOCK table / level-1 table.

Numbers are written so that they read back identically (``repr`` of floats, integers bare), so an
export followed by an import without edits predicts the same cycles. A malformed file raises
``TableFormatError`` naming the file, the 1-based line and the column.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable
from pathlib import Path

from engine.errors import TableFormatError, WarplineError
from engine.fileio import csv_text, csv_unescape, read_regular_file
from engine.launch import MAX_TRIP_COUNT
from engine.manybsp.reference import parse_fu_cell
from engine.manybsp.rows import FU_NAMES, BlockRow, InstructionRow, Level1Spec
from engine.profile_schema import MAX_CYCLES

# An exported table of a 10^6-instruction kernel is about 60 MB; a file far larger is not one.
MAX_TABLE_BYTES = 1 << 28
BLOCK_HEADER = ["inst", "op", "issue", "fu1", "fu2", "fu3", "fu4", "warp_over_T", "comm", "ovh", "sync",
                "u", "d", "p"]
INSTRUCTION_HEADER = ["inst", "text", "opcode", "fu", "n_fu", "T", "n_ma", "lat_comp", "lat_comm",
                      "is_barrier", "is_global_access", "u", "d", "p", "producers", "default_cost", "source"]
SUPERSTEP_HEADER = ["level", "index", "start", "end", "comp", "comm", "ovh", "iterations",
                    "iterations_known", "parent", "reason"]
# written since the slowest warp's iterations existed; a file without it reads as "every warp alike"
SLOWEST_COLUMN = "slowest_iterations"


def _n(x: float | int | None) -> str:
    if x is None:
        return ""
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return repr(x) if isinstance(x, float) else str(x)


def _write(path: str | Path | None, header: list[str], rows: Iterable[list[str]]) -> str:
    return csv_text(header, rows, path)


def export_block_table(block: list[BlockRow], path: str | Path | None = None) -> str:
    """Write the BLOCK table; returns the CSV text (also written to ``path`` when given)."""
    def line(b: BlockRow) -> list[str]:
        cells = [b.fu[c].text() if c in b.fu else "" for c in (1, 2, 3, 4)]
        return [str(b.index), b.op, _n(b.issue), *cells, _n(b.warp_over_T), _n(b.comm), _n(b.ovh),
                _n(b.sync), str(b.u), str(b.d), str(b.p)]
    return _write(path, BLOCK_HEADER, (line(b) for b in block))


def export_instruction_table(rows: list[InstructionRow], path: str | Path | None = None) -> str:
    def line(r: InstructionRow) -> list[str]:
        return [str(r.index), r.text, r.opcode, FU_NAMES.get(r.fu, "MI") if r.fu else "MI", str(r.n_fu),
                _n(r.T), str(r.n_ma), _n(r.lat_comp), _n(r.lat_comm), str(int(r.is_barrier)),
                str(int(r.is_global_access)), str(r.u), str(r.d), str(r.p),
                " ".join(str(p) for p in r.producers), str(int(r.is_default_cost)), r.cost_source]
    return _write(path, INSTRUCTION_HEADER, (line(r) for r in rows))


def export_supersteps(level1: list, path: str | Path | None = None) -> str:
    """Level-1 supersteps followed by their level-2 children (``parent`` = level-1 index)."""
    out: list[list[str]] = []
    for s in level1:
        out.append(["1", str(s.index), str(s.start), str(s.end), _n(s.comp), _n(s.comm), _n(s.ovh),
                    str(s.iterations), str(int(s.iterations_known)), "", s.reason,
                    "" if s.slowest is None else str(s.slowest)])
    for s in level1:
        for c in s.children:
            out.append(["2", str(c.index), str(c.start), str(c.end), _n(c.comp), _n(c.comm), _n(c.ovh),
                        "", "", str(s.index), c.reason, ""])
    return _write(path, [*SUPERSTEP_HEADER, SLOWEST_COLUMN], out)


def _records(path: str | Path, required: list[str]) -> tuple[str, list[tuple[int, dict[str, str]]]]:
    name = str(path)
    try:
        # a regular file of a sane size: /dev/zero or a FIFO is refused before anything is read
        text = read_regular_file(path, MAX_TABLE_BYTES, "CSV table").decode("utf-8")
    except WarplineError as exc:
        raise TableFormatError(str(exc).removeprefix(f"{name}: "), name, 0, "") from None
    except UnicodeDecodeError as exc:
        raise TableFormatError(f"cannot read the file: {exc}", name, 0, "") from None
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except StopIteration:
        raise TableFormatError("empty file (no header)", name, 1, "") from None
    except csv.Error as exc:      # a stray carriage return or NUL: the csv module's own words
        raise TableFormatError(f"not a readable CSV row ({exc})", name, reader.line_num, "") from None
    header = [h.strip() for h in header]
    for column in required:
        if column not in header:
            raise TableFormatError(f"missing column {column!r}", name, 1, column)
    out = []
    while True:
        try:
            values = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise TableFormatError(f"not a readable CSV row ({exc})", name, reader.line_num, "") from None
        line_no = reader.line_num    # (a quoted cell may span lines: the row's last line)
        if not any(v.strip() for v in values):
            continue
        if len(values) != len(header):
            # Name the first missing column (too few cells) or the last one (too many).
            at = header[len(values)] if len(values) < len(header) else header[-1]
            raise TableFormatError(f"{len(values)} cells, the header has {len(header)}", name, line_no, at)
        out.append((line_no, dict(zip(header, (csv_unescape(v.strip()) for v in values), strict=True))))
    if not out:
        raise TableFormatError("no rows", name, 2, "")
    return name, out


def _num(rec: dict[str, str], column: str, name: str, line: int, blank: float | None = 0.0) -> float | None:
    text = rec.get(column, "")
    if text == "":
        return blank
    try:
        value = float(text)
    except ValueError:
        raise TableFormatError(f"not a number: {text!r}", name, line, column) from None
    if value != value or value in (float("inf"), float("-inf")):
        raise TableFormatError(f"not a finite number: {text!r}", name, line, column)
    return value


def _int(rec: dict[str, str], column: str, name: str, line: int) -> int:
    value = _num(rec, column, name, line)
    assert value is not None
    if not float(value).is_integer():
        raise TableFormatError(f"not an integer: {rec.get(column)!r}", name, line, column)
    return int(value)


def _cycles(value: float, name: str, line: int, column: str) -> float:
    """A cost in cycles read from a cell: not negative and at most MAX_CYCLES, the rule of a
    value typed into the window's table (``1e308`` would make every prediction infinite)."""
    if not math.isfinite(value):
        raise TableFormatError(f"not a finite number: {value!r}", name, line, column)
    if value < 0:
        raise TableFormatError("negative cycles", name, line, column)
    if value > MAX_CYCLES:
        raise TableFormatError(f"{value:g} cycles is too large (at most {MAX_CYCLES:.0e})", name, line, column)
    return value


def import_block_table(path: str | Path) -> list[BlockRow]:
    """Read a BLOCK-table CSV (as exported, possibly edited)."""
    name, records = _records(path, BLOCK_HEADER)
    out: list[BlockRow] = []
    seen: set[int] = set()
    for line, rec in records:
        index = _int(rec, "inst", name, line)
        if index in seen:
            raise TableFormatError(f"instruction {index} appears twice", name, line, "inst")
        if out and index < out[-1].index:
            raise TableFormatError(f"instruction {index} after {out[-1].index}: rows out of order",
                                   name, line, "inst")
        seen.add(index)
        cells = {}
        for c in (1, 2, 3, 4):
            cell = parse_fu_cell(rec[f"fu{c}"], name, line, f"fu{c}")
            if cell is not None:
                for part in (cell.latency, cell.occupancy):
                    _cycles(part, name, line, f"fu{c}")
                cells[c] = cell
        values = {}
        for column in ("comm", "ovh", "sync"):
            v = _num(rec, column, name, line)
            values[column] = _cycles(v, name, line, column) if v is not None else 0.0
        issue = _num(rec, "issue", name, line, blank=None)
        if issue is not None:
            _cycles(issue, name, line, "issue")
        warp_over_t = _num(rec, "warp_over_T", name, line, blank=None)
        if warp_over_t is not None:
            _cycles(warp_over_t, name, line, "warp_over_T")
        out.append(BlockRow(index=index, op=rec["op"], issue=issue, fu=cells,
                            warp_over_T=warp_over_t,
                            comm=values["comm"], ovh=values["ovh"], sync=values["sync"],
                            u=_int(rec, "u", name, line), d=_int(rec, "d", name, line),
                            p=_int(rec, "p", name, line)))
    return out


def import_level1_specs(path: str | Path) -> list[Level1Spec]:
    """Level-1 ranges and iteration counts from an exported (possibly edited) superstep CSV."""
    name, records = _records(path, SUPERSTEP_HEADER)
    specs = []
    for line, rec in records:
        if rec["level"] != "1":
            continue
        start, end = _int(rec, "start", name, line), _int(rec, "end", name, line)
        if end < start:
            raise TableFormatError(f"end {end} before start {start}", name, line, "end")
        iterations = _int(rec, "iterations", name, line)
        if iterations < 0:
            raise TableFormatError("negative iteration count", name, line, "iterations")
        if iterations > MAX_TRIP_COUNT:
            raise TableFormatError(f"{iterations} iterations is more than a 64-bit count", name, line, "iterations")
        known = rec.get("iterations_known", "1") not in ("0", "false", "False")
        slowest = _int(rec, SLOWEST_COLUMN, name, line) if rec.get(SLOWEST_COLUMN, "").strip() else None
        if slowest is not None and slowest < iterations:
            raise TableFormatError(f"slowest warp's iterations {slowest} below the mean {iterations} (leave the cell "
                                   "empty when every warp runs the iterations)", name, line,
                                   SLOWEST_COLUMN)
        specs.append(Level1Spec(start, end, iterations, known, rec.get("reason", ""), slowest=slowest))
    if not specs:
        raise TableFormatError("no level-1 rows (level = 1)", name, 2, "level")
    return specs
