"""Read Nsight Compute CSV exports (``ncu --csv --metrics ...``) into one record per kernel launch.

ncu prints either one row per (launch, metric) — the default "long" layout with ``Metric Name`` /
``Metric Value`` columns — or, with ``--page raw``, one row per launch with a column per metric
(and a units row under the header). Both are accepted. Numbers use thousands separators ("102,217").
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from engine.errors import TableFormatError, WarplineError
from engine.fileio import read_regular_file
from engine.names import base_name, display_name, same_kernel

CYCLES_METRIC = "gpc__cycles_elapsed.max"

OCCUPANCY_LIMITS = {
    "launch__occupancy_limit_blocks": "block_slots",
    "launch__occupancy_limit_registers": "registers",
    "launch__occupancy_limit_shared_mem": "shared_memory",
    "launch__occupancy_limit_warps": "warps",
}


@dataclass
class NcuLaunch:
    """One profiled kernel launch."""

    id: int
    kernel: str                  # as ncu prints it (demangled signature)
    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def cycles(self) -> float | None:
        return self.metrics.get(CYCLES_METRIC)

    @property
    def function_name(self) -> str:
        """``invasion_step_shared(const int *, ...)`` -> ``invasion_step_shared``."""
        return base_name(self.kernel)

    def occupancy_blocks(self) -> int | None:
        """Resident blocks per SM: the smallest of ncu's occupancy limits, if it reported them."""
        limits = [self.metrics[m] for m in OCCUPANCY_LIMITS if m in self.metrics]
        return int(min(limits)) if limits else None


def _number(text: str) -> float | None:
    text = text.strip().replace(",", "")
    if not text or text.lower() in ("n/a", "nan"):
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _dim(text: str) -> tuple[int, int, int]:
    x, y, z = ([int(p) for p in text.strip().strip("()").replace(" ", "").split(",") if p] + [1, 1, 1])[:3]
    return (x, y, z)


def _rows(reader: Any, filename: str, lines: list[int]) -> Iterator[tuple[int, list[str]]]:
    """The CSV rows with their line in the file (``lines``: the file's line number of each line
    the reader reads); a malformed row (a cell over the csv module's 128 KiB limit, a stray NUL)
    is a TableFormatError naming it, not a csv.Error."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise TableFormatError(f"not a readable CSV row ({exc})", filename,
                                   lines[min(max(reader.line_num, 1), len(lines)) - 1], "") from None
        yield lines[min(max(reader.line_num, 1), len(lines)) - 1], row


def _cycles(text: str, filename: str, row: int, column: str) -> float | None:
    """A cell of the cycles metric: None when ncu collected nothing (blank, ``n/a``); a number of
    cycles must be finite and positive, anything else is refused where it stands (0, a negative
    count, ``inf`` or ``nan`` would make every error percentage meaningless)."""
    cell = text.strip()
    if not cell or cell.lower() == "n/a":
        return None
    try:
        value = float(cell.replace(",", ""))
    except ValueError:
        value = None
    if value is None or not math.isfinite(value) or value <= 0:
        raise TableFormatError(f"{CYCLES_METRIC} = {cell!r} is not a positive number of cycles "
                               "(0, negative, infinite and NaN values are refused)", filename, row, column)
    return value


def parse_ncu_csv(text: str, filename: str = "<ncu csv>") -> list[NcuLaunch]:
    """Launches in ID order. Lines ncu writes around the table (``==PROF==`` ...) are skipped;
    errors name the line of the file (the row a spreadsheet shows) and the column. A cycles
    value (:data:`CYCLES_METRIC`) that is 0, negative, infinite, NaN or not a number is refused
    there (a blank or ``n/a`` cell is a launch without that metric)."""
    kept = [(number, line) for number, line in enumerate(text.splitlines(), 1)
            if line.strip() and not line.startswith("==")]
    if not kept:
        raise TableFormatError("no Nsight Compute table found", filename, 1, "")
    numbers = [number for number, _ in kept]
    reader = csv.reader(io.StringIO("\n".join(line for _, line in kept)))
    rows = _rows(reader, filename, numbers)
    header = next(rows)[1]
    columns = {name: i for i, name in enumerate(header)}
    for required in ("ID", "Kernel Name"):
        if required not in columns:
            raise TableFormatError(f"missing column {required!r} (is this an ncu --csv export?)",
                                   filename, 1, required)
    launches: dict[int, NcuLaunch] = {}
    long_layout = "Metric Name" in columns and "Metric Value" in columns
    metric_columns = [name for name in header if "__" in name]
    # Newer ncu versions end the long layout with rule columns ("Rule Name" ... "Estimated
    # Speedup") and leave them out of a row that no rule fired for: a short row is whole when it
    # reaches every column read here.
    used = [columns[name] for name in ("ID", "Kernel Name", "Block Size", "Grid Size", "Metric Name",
                                       "Metric Value", *metric_columns) if name in columns]
    needed = max(used) + 1
    for row_number, row in rows:
        if len(row) > len(header) or len(row) < needed:
            missing = f" (no {header[len(row)]!r} cell)" if len(row) < needed else ""
            raise TableFormatError(f"expected {len(header)} cells, found {len(row)}{missing}", filename,
                                   row_number, "")
        row = row + [""] * (len(header) - len(row))
        ident = _number(row[columns["ID"]])
        if ident is None:
            continue  # the units row of --page raw
        if not (ident.is_integer() and 0 <= ident < 2**63):   # (a NaN or an infinity is neither)
            raise TableFormatError(f"launch ID {row[columns['ID']]!r} is not a whole number", filename,
                                   row_number, "ID")
        launch = launches.get(int(ident))
        if launch is None:
            try:
                block = _dim(row[columns["Block Size"]]) if "Block Size" in columns else (0, 0, 0)
                grid = _dim(row[columns["Grid Size"]]) if "Grid Size" in columns else (0, 0, 0)
            except ValueError:
                raise TableFormatError("bad block or grid size", filename, row_number, "Block Size") from None
            launch = NcuLaunch(int(ident), row[columns["Kernel Name"]], block, grid)
            launches[launch.id] = launch
        if long_layout:
            name = row[columns["Metric Name"]]
            cell = row[columns["Metric Value"]]
            value = _cycles(cell, filename, row_number, "Metric Value") if name == CYCLES_METRIC \
                else _number(cell)
            if value is not None:
                launch.metrics[name] = value
        else:
            for name in metric_columns:
                cell = row[columns[name]]
                value = _cycles(cell, filename, row_number, name) if name == CYCLES_METRIC else _number(cell)
                if value is not None:
                    launch.metrics[name] = value
    return [launches[k] for k in sorted(launches)]


# ncu exports of whole applications reach tens of MB; /dev/zero or a FIFO is refused outright.
MAX_NCU_BYTES = 256 << 20


def load_ncu_csv(path: str | os.PathLike[str]) -> list[NcuLaunch]:
    name = os.fspath(path)
    try:
        data = read_regular_file(name, MAX_NCU_BYTES, "Nsight Compute CSV")
    except WarplineError as exc:
        raise TableFormatError(str(exc).removeprefix(f"{name}: "), name, 0, "") from None
    return parse_ncu_csv(data.decode("utf-8", errors="replace"), name)


def _signature(name: str) -> str:
    """A demangled signature with blanks and the return type dropped, so that ncu's
    ``void f<32>(float *, int)`` and the demangler's ``f<32>(float*, int)`` compare equal."""
    text = display_name(name) if name.startswith("_Z") else name
    if text.startswith("void "):
        text = text[5:]
    return "".join(text.split())


def measured_cycles(path: str | os.PathLike[str], kernel: str,
                    grid: tuple[int, int, int] | None = None,
                    block: tuple[int, int, int] | None = None) -> float:
    """Measured ``gpc__cycles_elapsed.max`` of ``kernel`` in an Nsight Compute CSV: the one rule
    the CLI (``predict --import-ncu``) and the window (Import Nsight Compute CSV) share.

    A launch counts when its kernel is this one (same signature; else the same bare name when no
    launch has the same signature, since ncu may print a kernel differently) and, when
    ``grid``/``block`` are given, it ran with them (when the file records launch dimensions).
    Repeats are reduced to their median; no matching launch is an error that lists what the file
    holds, never an average of others.
    """
    import statistics

    source = os.fspath(path)
    launches = [x for x in load_ncu_csv(path) if x.cycles is not None]
    if not launches:
        raise TableFormatError(f"no {CYCLES_METRIC} value in the file; profile with "
                               f"`ncu --csv --metrics {CYCLES_METRIC} ...`", source, 0, CYCLES_METRIC)
    for launch in launches:
        if not math.isfinite(launch.cycles) or launch.cycles <= 0:
            raise TableFormatError(f"launch {launch.id} of {launch.function_name}: {CYCLES_METRIC} = "
                                   f"{launch.cycles:g} is not a positive number of cycles", source, 0, CYCLES_METRIC)
    wanted = _signature(kernel)
    named = [x for x in launches if _signature(x.kernel) == wanted]
    if not named:
        named = [x for x in launches if same_kernel(x.kernel, kernel)]
    # A file without the Grid Size / Block Size columns (dimensions (0, 0, 0)) cannot be filtered by
    # the launch: its launches of this kernel all count.
    chosen = [x for x in named
              if (grid is None or x.grid in (tuple(grid), (0, 0, 0)))
              and (block is None or x.block in (tuple(block), (0, 0, 0)))]
    if not chosen:
        seen = sorted({f"{display_name(x.kernel)} grid {x.grid} block {x.block}" for x in launches})
        what = display_name(kernel) + (f" with grid {tuple(grid)}" if grid is not None else "") \
            + (f" and block {tuple(block)}" if block is not None else "")
        raise TableFormatError(f"no launch of {what} has {CYCLES_METRIC} (the file holds: "
                               f"{'; '.join(seen[:6]) or 'no launch with that metric'})", source, 0, "")
    return float(statistics.median(x.cycles for x in chosen))
