"""What the user chose for one kernel, as an immutable value, and the rules of editing it.

Every edit (a BLOCK-table cell, an iteration count, the launch, the occupancy) builds a new
:class:`WorkbenchState`, so undo/redo and session files only ever store snapshots and a background
evaluation never sees a half-edit. The evaluation core (:mod:`engine.evaluation`) turns a state
into figures; this module only knows what a valid state is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from engine.errors import WarplineError
from engine.launch import MAX_TRIP_COUNT, Launch
from engine.manybsp import Overrides
from engine.manybsp.prediction import override_number

POLICIES = ("lrr", "gto")

# Editable BLOCK-table columns and where an edit lands in engine.manybsp.Overrides.
LATENCY_COLUMNS = ("lat_comp", "lat_comm")
CELL_COLUMNS = ("issue", "fu1", "fu2", "fu3", "fu4", "comm", "ovh", "sync")
EDITABLE_COLUMNS = (*LATENCY_COLUMNS, "n_ma", *CELL_COLUMNS)


@dataclass(frozen=True)
class WorkbenchState:
    """What the user chose. ``occupancy`` None means "as many blocks as fit" (the launch's max).

    ``overrides`` is treated as immutable: the ``with_*`` helpers copy it before changing it.
    """

    kernel: str
    profile: str                       # shipped profile name or a .toml path
    launch: Launch
    overrides: Overrides = field(default_factory=Overrides)
    occupancy: int | None = None
    policy: str = "lrr"
    measured_cycles: float | None = None   # Nsight Compute's kernel cycles (launch cost included)
    launch_source: str = ""                # where the launch came from, in words

    def with_launch(self, **changes: Any) -> WorkbenchState:
        """A copy with launch settings changed. A changed shape (grid, block, shared memory,
        registers) makes the launch the user's own: its source says "(edited)", and a default
        launch is no longer a guess. Argument values, trip counts and data leave the source as
        it was."""
        launch = replace(self.launch, **changes)
        if not set(changes) - {"args", "trip_overrides", "data"}:
            return replace(self, launch=launch)
        source = self.launch_source
        # "(edited)": engine.inputs.EDITED_LAUNCH (a sibling layer: the words, not the import)
        if source and not source.endswith("(edited)"):
            source += " (edited)"
        return replace(self, launch=launch, launch_source=source or "edited")

    def with_overrides(self, edit: Callable[[Overrides], None]) -> WorkbenchState:
        """A copy whose overrides went through ``edit`` (applied to a deep copy)."""
        ov = copy_overrides(self.overrides)
        edit(ov)
        return replace(self, overrides=ov)


def copy_overrides(ov: Overrides) -> Overrides:
    return Overrides(
        block_cells=dict(ov.block_cells),
        latencies={k: dict(v) for k, v in ov.latencies.items()},
        n_ma=dict(ov.n_ma),
        iterations=dict(ov.iterations),
        params=dict(ov.params),
    )


def parse_cell_value(column: str, text: str) -> float | str | None:
    """Validate what the user typed into an editable cell; WarplineError says why it is refused.

    FU cells take ``16+1`` (exposed latency + occupancy) or a plain number; ``issue`` may be left
    blank (dual issue, costs 0); every other cell needs a non-negative number. Every number must
    be finite and at most MAX_CYCLES (10^9): ``1e308`` would make the predictions infinite.
    """
    if column not in EDITABLE_COLUMNS:
        raise WarplineError(f"column {column!r} cannot be edited")
    value = text.strip()
    if value == "":
        if column == "issue" or column.startswith("fu"):
            return None
        raise WarplineError(f"{column}: a value is required (a non-negative number)")
    if column.startswith("fu") and "+" in value:
        parts = value.split("+")
        if len(parts) != 2:
            raise WarplineError(f"{column}: {value!r} is not 'latency+occupancy' such as 16+1")
        for part in parts:
            _non_negative(column, part)
        return value.replace(" ", "")
    number = _non_negative(column, value)
    if column == "n_ma" and not float(number).is_integer():
        raise WarplineError(f"n_ma: {value!r} must be a whole number of transactions")
    return number


def _non_negative(column: str, text: str) -> float:
    # The one rule for a number a user sets (the engine's overrides apply it too): finite, not
    # negative, at most MAX_CYCLES; refused with a message naming the column.
    return override_number(text.strip(), column)


def with_cell_edit(state: WorkbenchState, row: int, column: str, value: float | str | None,
                   reset: bool = False) -> WorkbenchState:
    """The state with BLOCK-table cell (``row`` = 1-based instruction, ``column``) set or reset."""
    if column not in EDITABLE_COLUMNS:
        raise WarplineError(f"column {column!r} cannot be edited")
    if not reset and value is not None:
        # the rule of a typed cell, also for values that did not come through parse_cell_value
        value = parse_cell_value(column, value if isinstance(value, str) else repr(float(value)))

    def edit(ov: Overrides) -> None:
        if column in LATENCY_COLUMNS:
            lat = ov.latencies.setdefault(row, {})
            if reset:
                lat.pop(column, None)
            else:
                lat[column] = float(value)  # type: ignore[arg-type]
            if not lat:
                ov.latencies.pop(row, None)
        elif column == "n_ma":
            if reset:
                ov.n_ma.pop(row, None)
            else:
                ov.n_ma[row] = int(float(value))  # type: ignore[arg-type]
        elif reset:
            ov.block_cells.pop((row, column), None)
        else:
            ov.block_cells[(row, column)] = value

    return state.with_overrides(edit)


def parse_count(text: str, what: str) -> int:
    """A repeat count the user typed (a superstep's iterations, a loop's trip count): a whole
    number from 0 to 2^63 - 1, the launch's rule for trip counts; WarplineError names ``what``."""
    value = text.strip()
    try:
        count = int(value)
    except ValueError:
        try:
            number = float(value)
        except ValueError:
            raise WarplineError(f"{what}: {value!r} is not a number") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise WarplineError(f"{what}: {value!r} is not a finite number") from None
        if not number.is_integer():
            raise WarplineError(f"{what}: {value!r} is not a whole number") from None
        count = int(number)
    if count < 0:
        raise WarplineError(f"{what}: {value} is negative (a non-negative whole number is needed)")
    if count > MAX_TRIP_COUNT:
        raise WarplineError(f"{what}: {value} is too large (at most 2^63 - 1)")
    return count


def with_iterations(state: WorkbenchState, level1: int, value: int | None) -> WorkbenchState:
    """Level-1 superstep ``level1`` (1-based) runs ``value`` times; None drops the override."""
    if value is not None:
        parse_count(str(value), f"level-1 superstep {level1} iterations")

    def edit(ov: Overrides) -> None:
        if value is None:
            ov.iterations.pop(level1, None)
        else:
            ov.iterations[level1] = int(value)

    return state.with_overrides(edit)


def is_overridden(state: WorkbenchState, row: int, column: str) -> bool:
    ov = state.overrides
    if column in LATENCY_COLUMNS:
        return column in ov.latencies.get(row, {})
    if column == "n_ma":
        return row in ov.n_ma
    return (row, column) in ov.block_cells
