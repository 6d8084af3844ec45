"""The Many-BSP pipeline on plain data: instruction rows -> BLOCK table -> supersteps -> eqs. 10-25,
with user overrides applied to the inputs of each stage (never to computed results)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from engine.errors import ModelError
from engine.manybsp.block import build_block_table
from engine.manybsp.equations import Level1Input, Prediction, evaluate
from engine.manybsp.reference import parse_fu_cell
from engine.manybsp.rows import BlockRow, FuCell, InstructionRow, Level1Spec, ManyBspParams
from engine.manybsp.supersteps import (
    Level1Superstep,
    Level2Superstep,
    level1_supersteps,
    level2_supersteps,
    split_by_sync,
)
from engine.profile_schema import MAX_CYCLES

PARAM_NAMES = frozenset(f.name for f in dataclasses.fields(ManyBspParams))
BLOCK_COLUMNS = ("issue", "fu1", "fu2", "fu3", "fu4", "comm", "ovh", "sync")
LATENCY_KEYS = ("lat_comp", "lat_comm")


@dataclass
class Overrides:
    """User edits, keyed by instruction index (``row``), level-1 index (1-based) or parameter name.

    ``block_cells[(row, column)]``: column one of BLOCK_COLUMNS; FU values may be ``"16+1"``;
    ``None`` blanks a cell. Editing a ``sync`` cell moves level-2 boundaries (a non-zero sync ends a
    superstep). ``latencies[row] = {"lat_comp": .., "lat_comm": ..}`` and ``n_ma[row]`` change the
    instruction table before the BLOCK table is built; ``iterations[i]`` a level-1 trip count;
    ``params[name]`` any ManyBspParams field.
    """

    block_cells: dict[tuple[int, str], float | str | None] = field(default_factory=dict)
    latencies: dict[int, dict[str, float]] = field(default_factory=dict)
    n_ma: dict[int, int] = field(default_factory=dict)
    iterations: dict[int, int] = field(default_factory=dict)
    params: dict[str, float] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not (self.block_cells or self.latencies or self.n_ma or self.iterations or self.params)


@dataclass
class ManyBspResult:
    """Everything a front end shows: inputs as used, the tables, the derivation, the warnings."""

    params: ManyBspParams
    rows: list[InstructionRow]
    block: list[BlockRow]
    level2: list[Level2Superstep]
    level1: list[Level1Superstep]
    prediction: Prediction
    warnings: list[str] = field(default_factory=list)
    overridden: set[str] = field(default_factory=set)   # "param:n_b", "cell:42:fu4", "iterations:2"...
    kernel_name: str = ""
    # Why eqs. 10-25 were not evaluated ('' when they were): a parameter the profile cannot give
    # and no override supplies (``missing``: name -> why). The tables above are complete;
    # ``prediction`` is then empty, and a model on the same parameters must refuse too.
    refused: str = ""
    missing: dict[str, str] = field(default_factory=dict)
    # Per row (1-based), the share of the block's warp-passes through its level-1 superstep that
    # run it, as the sampled warps ran them (warp executions per sampled warp / the superstep's
    # iterations): warps that branch around a row, exit early or skip a loop do not issue it.
    # Empty without an execution of the sampled warps (every warp runs every row).
    executed_share: dict[int, float] = field(default_factory=dict)

    @property
    def kernel_exec_cycle(self) -> float:
        if self.refused:
            raise ModelError(self.refused)
        return self.prediction.kernel_exec_cycle


def apply_param_overrides(params: ManyBspParams, values: dict[str, float], marks: set[str]) -> ManyBspParams:
    names = {f.name: f for f in dataclasses.fields(ManyBspParams)}
    changes = {}
    for name, value in values.items():
        if name not in names:
            raise ModelError(f"Many-BSP override: unknown parameter {name!r} (known: {', '.join(names)})")
        changes[name] = int(value) if names[name].type == "int" else value
        marks.add(f"param:{name}")
    return dataclasses.replace(params, **changes) if changes else params


def _apply_row_overrides(rows: list[InstructionRow], ov: Overrides, marks: set[str]) -> list[InstructionRow]:
    if not ov.latencies and not ov.n_ma:
        return rows
    known = {r.index for r in rows}
    for row in list(ov.latencies) + list(ov.n_ma):
        if row not in known:
            raise ModelError(f"Many-BSP override: no instruction {row}")
    out = []
    for r in rows:
        changes: dict[str, float] = {}
        for key, value in ov.latencies.get(r.index, {}).items():
            if key not in LATENCY_KEYS:
                raise ModelError(f"Many-BSP override of row {r.index}: {key!r} is not one of {LATENCY_KEYS}")
            if isinstance(value, (int, float)) and value < 0:
                raise ModelError(f"Many-BSP override of row {r.index}: negative latency {value}")
            changes[key] = override_number(value, f"Many-BSP override of row {r.index}, {key}")
            marks.add(f"latency:{r.index}:{key}")
        if r.index in ov.n_ma:
            changes["n_ma"] = int(override_number(ov.n_ma[r.index], f"Many-BSP override of row {r.index}, n_ma"))
            marks.add(f"n_ma:{r.index}")
        out.append(dataclasses.replace(r, **changes) if changes else r)
    return out


def override_number(value: object, what: str) -> float:
    """A number a user override sets (a latency, n_ma, a BLOCK cell): finite, not negative and at
    most MAX_CYCLES; ``1e308`` or ``inf`` would make every prediction infinite or fail deep in a
    model. Anything else is a ModelError naming ``what``."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"{what}: {value!r} is not a number") from None
    if not math.isfinite(number):
        raise ModelError(f"{what}: {value!r} is not a finite number")
    if number < 0:
        raise ModelError(f"{what}: {number:g} is negative")
    if number > MAX_CYCLES:
        raise ModelError(f"{what}: {value!r} is too large; at most {MAX_CYCLES:.0e} cycles or transactions "
                         "are accepted")
    return number


def _cell_value(row: int, column: str, value: float | str | None) -> float | FuCell | None:
    if value is None or value == "":
        return None
    what = f"Many-BSP override of row {row}, {column}"
    if column.startswith("fu"):
        if isinstance(value, str):
            cell = parse_fu_cell(value, "<override>", row, column)
            if cell is not None:
                for part in (cell.latency, cell.occupancy):
                    override_number(part, what)
            return cell
        return FuCell(0.0, override_number(value, what))
    return override_number(value, what)


def apply_block_overrides(
    block: list[BlockRow], cells: dict[tuple[int, str], float | str | None], marks: set[str]
) -> list[BlockRow]:
    if not cells:
        return list(block)     # nothing edited: no index of the (large) table to build
    by_index = {b.index: k for k, b in enumerate(block)}
    out = list(block)
    for (row, column), value in cells.items():
        if column not in BLOCK_COLUMNS:
            raise ModelError(f"Many-BSP override: BLOCK column {column!r} is not one of {BLOCK_COLUMNS}")
        if row not in by_index:
            raise ModelError(f"Many-BSP override: the BLOCK table has no row {row}")
        k = by_index[row]
        cur = out[k]
        parsed = _cell_value(row, column, value)
        if column.startswith("fu"):
            fu = dict(cur.fu)
            if parsed is None:
                fu.pop(int(column[2]), None)
            else:
                fu[int(column[2])] = parsed  # type: ignore[assignment]
            out[k] = dataclasses.replace(cur, fu=fu)
        elif column == "issue":
            out[k] = dataclasses.replace(cur, issue=parsed)
        else:
            out[k] = dataclasses.replace(cur, **{column: parsed or 0.0})
        marks.add(f"cell:{row}:{column}")
    return out


def predict_from_block(
    block: list[BlockRow],
    params: ManyBspParams,
    specs: list[Level1Spec],
    overrides: Overrides | None = None,
    rows: list[InstructionRow] | None = None,
    warnings: list[str] | None = None,
    marks: set[str] | None = None,
    end_reasons: dict[int, str] | None = None,
    missing: Mapping[str, str] | None = None,
) -> ManyBspResult:
    """Supersteps and eqs. 10-25 from a BLOCK table (constructed, edited or imported).
    ``end_reasons`` (instruction index -> why a superstep ends there) labels the level-2 supersteps;
    without it a superstep is labelled by its sync cell. ``missing`` (parameter -> why the profile
    cannot give it): unless an override supplies each, the equations are not evaluated and the
    result says why (``refused``)."""
    ov = overrides or Overrides()
    marks = set() if marks is None else marks
    warnings = list(warnings or [])
    if not block:
        raise ModelError("Many-BSP: the kernel has no instructions")
    params = apply_param_overrides(params, ov.params, marks)
    block = apply_block_overrides(block, ov.block_cells, marks)
    specs = list(specs)
    for i, n in ov.iterations.items():
        if not 1 <= i <= len(specs):
            raise ModelError(f"Many-BSP override: no level-1 superstep {i} (there are {len(specs)})")
        if n < 0:
            raise ModelError(f"Many-BSP override: level-1 superstep {i} iterations {n} < 0")
        # the user's count is every warp's: the slowest warp's count goes with the inferred one
        specs[i - 1] = dataclasses.replace(specs[i - 1], iterations=int(n), iterations_known=True, slowest=None,
                                           reason=(specs[i - 1].reason + " (overridden)").strip())
        marks.add(f"iterations:{i}")
    ends = {s.end for s in specs}
    ranges = split_by_sync(block, ends)
    labels = end_reasons or {}
    level2 = level2_supersteps(block, ranges, [
        labels.get(block[b].index, "sync" if block[b].sync else "level1/last") for _, b in ranges])
    level1 = level1_supersteps(level2, specs)
    for step in level1:
        if not step.iterations_known:
            warnings.append(
                f"level-1 superstep {step.index} (instructions {step.start}-{step.end}): trip count "
                f"unknown, 1 iteration assumed{': ' + step.reason if step.reason else ''}"
            )
    left = unsupplied(missing or {}, marks)
    if left:
        # A stand-in number would look like a prediction: none is made (the tables still are).
        return ManyBspResult(params, rows or [], block, level2, level1, Prediction(), warnings, marks,
                             refused=refusal(left), missing=left)
    prediction = evaluate(
        params,
        [Level1Input(s.comp, s.comm, s.ovh, s.iterations) for s in level1],
        level2[-1].comm if level2 else 0.0,
    )
    warnings.extend(prediction.notes)
    return ManyBspResult(params, rows or [], block, level2, level1, prediction, warnings, marks)


def unsupplied(missing: Mapping[str, str], marks: set[str]) -> dict[str, str]:
    """The ``missing`` parameters (name -> why) that no ``param:`` override in ``marks`` supplies."""
    return {key: why for key, why in missing.items() if f"param:{key}" not in marks}


def refusal(missing: Mapping[str, str], model: str = "Many-BSP") -> str:
    """One line saying why ``model`` cannot predict without the ``missing`` parameters ('' when
    there are none)."""
    if not missing:
        return ""
    by_reason: dict[str, list[str]] = {}
    for key, why in missing.items():
        by_reason.setdefault(why, []).append(key)
    reasons = "; ".join(f"{', '.join(keys)} cannot be derived ({why})" for why, keys in by_reason.items())
    overridable = [key for key in missing if key in PARAM_NAMES]
    hint = f"; give {', '.join(overridable)} as parameter overrides to predict" if overridable else ""
    return f"{model} prediction refused: {reasons}; the BLOCK table and the supersteps are still built{hint}"


def run_manybsp(
    rows: list[InstructionRow],
    params: ManyBspParams,
    specs: list[Level1Spec],
    overrides: Overrides | None = None,
    warnings: list[str] | None = None,
    missing: Mapping[str, str] | None = None,
) -> ManyBspResult:
    """Instruction table -> BLOCK table -> supersteps -> prediction, with overrides applied.
    ``missing``: parameters the profile cannot give (see :func:`predict_from_block`)."""
    if not rows:
        raise ModelError("Many-BSP: the kernel has no instructions")
    ov = overrides or Overrides()
    marks: set[str] = set()
    params = apply_param_overrides(params, ov.params, marks)
    rows = _apply_row_overrides(rows, ov, marks)
    construction = build_block_table(rows, params, {s.end for s in specs})
    warnings = list(warnings or [])
    defaults = [r.index for r in rows if r.is_default_cost]
    if defaults:
        warnings.append(
            f"{len(defaults)} instruction(s) costed with the profile's default latency: "
            + ", ".join(str(i) for i in defaults[:20]) + (" ..." if len(defaults) > 20 else "")
        )
    param_free = dataclasses.replace(ov, params={})
    reasons = {construction.block[b].index: why
               for (_, b), why in zip(construction.level2, construction.end_reasons, strict=True)}
    return predict_from_block(construction.block, params, specs, param_free, rows, warnings, marks, reasons,
                              missing)
