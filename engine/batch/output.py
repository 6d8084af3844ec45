"""Writing the rows: CSV (spreadsheet-safe text cells) and Parquet (typed columns), atomically."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.batch.result_rows import COLUMN_TYPES, COLUMNS
from engine.errors import WarplineError
from engine.fileio import csv_safe, csv_text, write_text_atomic

FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def output_format(path: str) -> str:
    kind = FORMATS.get(Path(path).suffix.lower())
    if kind is None:
        raise WarplineError(f"--out {path}: give a .csv or .parquet file")
    return kind


def write_rows(rows: Sequence[dict[str, Any]], path: str, columns: Sequence[str] = COLUMNS,
               types: dict[str, str] = COLUMN_TYPES) -> Path:
    """``rows`` as CSV or Parquet (by the suffix); ``types``: str, int or float per column."""
    if output_format(path) == "csv":
        return write_text_atomic(path, rows_csv(rows, columns))
    return write_text_atomic(path, rows_parquet(rows, columns, types))


def rows_csv(rows: Sequence[dict[str, Any]], columns: Sequence[str] = COLUMNS) -> str:
    return csv_text(columns, ([_cell(row.get(name)) for name in columns] for row in rows))


def rows_parquet(rows: Sequence[dict[str, Any]], columns: Sequence[str] = COLUMNS,
                 types: dict[str, str] = COLUMN_TYPES) -> bytes:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise WarplineError("Parquet output needs pyarrow (pip install pyarrow)") from None
    kinds = {"str": pa.string(), "int": pa.int64(), "float": pa.float64()}
    schema = pa.schema([(name, kinds[types.get(name, "str")]) for name in columns])
    table = pa.Table.from_pylist([{name: row.get(name) for name in columns} for row in rows], schema=schema)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    return csv_safe(value)
