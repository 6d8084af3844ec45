"""The tables an evaluation is written as (CSV): the same code for the window's File › Export and
for ``main.py export``, so that a file of either names the same figures, caveats and provenance.

Each writer expects the part it writes to be there (the caller says what is missing in its own
words: the CLI names the model's error, the window says the models are still running)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.evaluation.caveats import figure_caveats
from engine.evaluation.occupancy_sweep import sweep_csv
from engine.evaluation.prediction_report import predictions_csv
from engine.evaluation.provenance import comment_lines
from engine.manybsp import export_block_table, export_supersteps
from engine.timeline.csv_export import export_trace_csv


def write_trace_csv(evaluation: Any, path: str | Path, source: Path | None) -> int:
    """The simulation's timeline events and stalls, under comment lines naming what it was computed
    from (``source``: the PTX file); returns the number of rows."""
    return export_trace_csv(evaluation.simulation.trace, path, evaluation.trace_names, evaluation.trace_units,
                            figure_caveats(evaluation).csv_header, header=comment_lines(evaluation, source))


def write_time_series_csv(evaluation: Any, path: str | Path, source: Path | None, buckets: int) -> None:
    """The simulated SM's time series over ``buckets`` buckets of cycles."""
    from engine.evaluation.timeseries import time_series

    time_series(evaluation, buckets).csv(path, comment_lines(evaluation, source))


def write_predictions_csv(evaluation: Any, path: str | Path, source: Path | None) -> None:
    """Every model's figures."""
    predictions_csv(evaluation, str(path), comments=comment_lines(evaluation, source))


def write_block_csv(evaluation: Any, path: str | Path) -> None:
    """The Many-BSP BLOCK table."""
    export_block_table(evaluation.manybsp.block, path)


def write_supersteps_csv(evaluation: Any, path: str | Path) -> None:
    """The Many-BSP supersteps."""
    export_supersteps(evaluation.manybsp.level1, path)


def write_curves_csv(evaluation: Any, path: str | Path) -> None:
    """The occupancy curves of every model."""
    sweep_csv(evaluation.sweep, str(path), figure_caveats(evaluation).csv_header)
