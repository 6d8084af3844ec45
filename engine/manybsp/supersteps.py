"""Level-2 and level-1 supersteps over a BLOCK table (eq. 9 and the sums that feed eqs. 10-12).

A level-2 superstep is a run of BLOCK rows that issue without waiting; its comp is eq. (9):
``issue_i + max(sum of issue over rows i+1..j, max over FU columns of the column sum over i..j)``
with ``a+b`` cells summed and blank issue cells counted 0 (this reproduces 575 of the 578 level-2
comps 000 prints). A level-1 superstep is a run of level-2 supersteps between barriers / loop
boundaries with an iteration count; its comp, comm and ovh are plain sums.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.manybsp.rows import BlockRow, Level1Spec


@dataclass(frozen=True)
class Level2Superstep:
    index: int          # 1-based
    start: int          # instruction index of the first row
    end: int            # instruction index of the last row
    comp: float
    comm: float
    ovh: float
    reason: str = ""    # why it ends (see block.END_REASONS); "sync" for imported tables


@dataclass
class Level1Superstep:
    index: int
    start: int
    end: int
    comp: float
    comm: float
    ovh: float
    iterations: int
    iterations_known: bool = True
    reason: str = ""
    children: list[Level2Superstep] = field(default_factory=list)
    slowest: int | None = None   # the slowest warp's iterations (Level1Spec.slowest)


def eq9_comp(rows: list[BlockRow]) -> float:
    """Eq. (9) over consecutive BLOCK rows."""
    if not rows:
        return 0.0
    tail_issue = 0.0
    columns = {1: 0.0, 2: 0.0, 3: 0.0, 4: 0.0}
    for k, r in enumerate(rows):
        if k:
            tail_issue += r.issue_value
        for column, cell in r.fu.items():
            columns[column] = columns.get(column, 0.0) + cell.value
    return rows[0].issue_value + max(tail_issue, *columns.values())


def level2_supersteps(
    block: list[BlockRow], ranges: list[tuple[int, int]], reasons: list[str] | None = None
) -> list[Level2Superstep]:
    """Level-2 supersteps for the given (first, last) row positions."""
    out = []
    for k, (a, b) in enumerate(ranges):
        rows = block[a : b + 1]
        out.append(
            Level2Superstep(
                index=k + 1,
                start=rows[0].index,
                end=rows[-1].index,
                comp=eq9_comp(rows),
                comm=sum(r.comm for r in rows),
                ovh=sum(r.ovh for r in rows),
                reason=reasons[k] if reasons else "",
            )
        )
    return out


def split_by_sync(block: list[BlockRow], level1_ends: set[int] | None = None) -> list[tuple[int, int]]:
    """Level-2 ranges of an existing (e.g. edited and imported) BLOCK table: a non-zero sync ends a
    superstep (true of every printed hotspot and knn row), and so does a level-1 end."""
    level1_ends = level1_ends or set()
    ranges = []
    start = 0
    for k, row in enumerate(block):
        if row.sync != 0 or row.index in level1_ends or k == len(block) - 1:
            ranges.append((start, k))
            start = k + 1
    return ranges


def level1_supersteps(level2: list[Level2Superstep], specs: list[Level1Spec]) -> list[Level1Superstep]:
    """Group level-2 supersteps into the level-1 ranges ``specs`` (by the start instruction)."""
    out = []
    for k, spec in enumerate(specs):
        children = [s for s in level2 if spec.start <= s.start <= spec.end]
        out.append(
            Level1Superstep(
                index=k + 1,
                start=spec.start,
                end=spec.end,
                comp=sum(s.comp for s in children),
                comm=sum(s.comm for s in children),
                ovh=sum(s.ovh for s in children),
                iterations=spec.iterations,
                iterations_known=spec.iterations_known,
                reason=spec.reason,
                children=children,
                slowest=spec.slowest,
            )
        )
    return out
