"""Read Nsight Compute CSV exports (``ncu --csv --metrics ...``) into one record per kernel launch.

ncu prints either one row per (launch, metric) — the default "long" layout with ``Metric Name`` /
``Metric Value`` columns — or, with ``--page raw``, one row per launch with a column per metric
(and a units row under the header). Both are accepted. Numbers use thousands separators ("102,217").
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field

from engine.errors import TableFormatError

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
        name = self.kernel.split("(", 1)[0].strip()
        return name.split("<", 1)[0].split("::")[-1].split()[-1] if name else name

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
    parts = [int(p) for p in text.strip().strip("()").replace(" ", "").split(",") if p]
    return tuple((parts + [1, 1, 1])[:3])  # type: ignore[return-value]


def parse_ncu_csv(text: str, filename: str = "<ncu csv>") -> list[NcuLaunch]:
    """Launches in ID order. Lines ncu writes around the table (``==PROF==`` ...) are skipped."""
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("==")]
    if not lines:
        raise TableFormatError("no Nsight Compute table found", filename, 1, "")
    reader = csv.reader(io.StringIO("\n".join(lines)))
    header = next(reader)
    columns = {name: i for i, name in enumerate(header)}
    for required in ("ID", "Kernel Name"):
        if required not in columns:
            raise TableFormatError(f"missing column {required!r} (is this an ncu --csv export?)",
                                   filename, 1, required)
    launches: dict[int, NcuLaunch] = {}
    long_layout = "Metric Name" in columns and "Metric Value" in columns
    metric_columns = [name for name in header if "__" in name]
    for row_number, row in enumerate(reader, start=2):
        if len(row) != len(header):
            raise TableFormatError(f"expected {len(header)} cells, found {len(row)}", filename, row_number, "")
        ident = _number(row[columns["ID"]])
        if ident is None:
            continue  # the units row of --page raw
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
            value = _number(row[columns["Metric Value"]])
            if value is not None:
                launch.metrics[row[columns["Metric Name"]]] = value
        else:
            for name in metric_columns:
                value = _number(row[columns[name]])
                if value is not None:
                    launch.metrics[name] = value
    return [launches[k] for k in sorted(launches)]


def load_ncu_csv(path: str | os.PathLike[str]) -> list[NcuLaunch]:
    name = os.fspath(path)
    try:
        with open(name, encoding="utf-8", errors="replace") as handle:
            return parse_ncu_csv(handle.read(), name)
    except OSError as exc:
        raise TableFormatError(f"cannot read: {exc.strerror or exc}", name, 0, "") from exc


def _plain_name(name: str) -> str:
    """Mangled ``_Z11offset_copyPfPKfii`` or demangled ``offset_copy(float*, ...)``: the bare name."""
    if name.startswith("_Z"):
        digits = ""
        for ch in name[2:]:
            if ch.isdigit():
                digits += ch
            elif digits:
                break
        start = 2 + len(digits)
        return name[start:start + int(digits)] if digits else name
    return name.split("(", 1)[0].split("<", 1)[0].split("::")[-1].split()[-1]


def matching_cycles(path: str | os.PathLike[str], kernel: str,
                    grid: tuple[int, int, int], block: tuple[int, int, int]) -> float:
    """Median ``gpc__cycles_elapsed.max`` of the launches of ``kernel`` with this grid and block."""
    import statistics

    launches = load_ncu_csv(path)
    wanted = _plain_name(kernel)
    cycles = [launch.cycles for launch in launches
              if _plain_name(launch.kernel) == wanted and launch.grid == tuple(grid)
              and launch.block == tuple(block) and launch.cycles is not None]
    if not cycles:
        seen = sorted({f"{_plain_name(x.kernel)} grid {x.grid} block {x.block}" for x in launches})
        raise TableFormatError(f"no launch of {wanted} with grid {tuple(grid)} and block {tuple(block)} "
                               f"has {CYCLES_METRIC} (found: {'; '.join(seen[:6])})", os.fspath(path), 0, "")
    return statistics.median(cycles)
