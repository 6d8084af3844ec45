"""Construction of the BLOCK table (Table X-2) and of the level-2 split from an instruction table.

000 builds these tables by hand and states no algorithm. The rules below are the ones that
reproduce the nine printed tables best (agreement figures and every known miss are in
``docs/manybsp.md``; ``tests/test_manybsp_construction.py`` measures them). With
``wT = warp_size / T`` (the cycles one warp occupies a unit) and ``w`` warps per scheduler:

* issue: ``w × issue_cycle`` for SP rows and barriers (the dispatcher sends a warp per cycle
  whatever the SP width), ``w × wT × issue_cycle`` for DPU/SFU/LDST rows.
* dual issue: an SP row is issued in the shadow of an adjacent DPU/SFU/LDST row (blank issue,
  costing 0) when they do not depend on each other; it pairs with the previous row first, else with
  the next one (never a branch); each non-SP row pairs once.
* FU cell: plain ``w × wT`` (pipeline occupancy), or full ``lat + (w − 1) × wT`` (the latency of the
  first warp exposed plus the occupancy of the others). For non-global LDST accesses with n_ma > 1
  each transaction counts as a warp. No cell exceeds ``w × lat`` (warps run back to back instead of
  pipelined; this is what the T = 1 rows of the 940MX/GTX 1070 tables print: 12, not 64).
* global accesses have no FU cell; their comm is ``lat_comm × w × n_ma``. Barriers have none
  either; their ovh is the barrier overhead.
* level-2 split: a superstep ends at a barrier, a conditional branch, the end of a level-1
  superstep, a global access (or the SP row dual-issued with it), and at the last producer ``m``
  inside the superstep of the next row ``j`` that reads one, if ``m = j − 1`` or eq. (8)'s wait is
  positive. The rows between ``m`` and ``j`` start the next superstep. Two branch refinements: a
  conditional branch that waits for the head of its superstep does not split at the head (it ends
  the superstep itself, hotspot <102~104>), and a conditional branch issued behind other rows whose
  predicate was synchronised in an earlier superstep does not end its superstep (mm <12~18>).
* full latency: the first row of a superstep is full, except a global access or barrier; a
  register-free row (``bra.uni``) passes it to the next row; rows that start a superstep as
  fillers (between a producer and its waiting consumer) and producer-free rows right after a
  global access stay plain. After a conditional branch the SP head (or the row behind a
  ``bra.uni``) is *latent*: plain, unless a later row waits for it across rows in between (eq. 8),
  then full (hotspot 38 full with sync 15; 106, 124, 173, 183, 186 plain). The first row of each
  other non-SP column in the superstep is full too (the mm ``fma`` + ``ld.shared`` groups).
* sync (eq. 8): the cell of the producer when the consumer is the next row, eq. (8) when rows lie
  in between, 1 for a forced end (branch, barrier, global access, level-1 end, the final store),
  else 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.frozen_rows import built
from engine.manybsp.rows import BlockRow, FuCell, InstructionRow, ManyBspParams

# Why a level-2 superstep ends where it does (kept per superstep for the GUI and the docs).
END_REASONS = ("dependency", "filler", "barrier", "branch", "level1", "global", "last")


@dataclass
class BlockConstruction:
    """The BLOCK table plus the level-2 split the construction found (0-based row positions)."""

    block: list[BlockRow]
    level2: list[tuple[int, int]]            # (first, last) positions, inclusive
    end_reasons: list[str]
    full_rows: set[int] = field(default_factory=set)


def _wt(row: InstructionRow, warp_size: int) -> float:
    return warp_size / row.T if row.T > 0 else 0.0


def _issue(rows: list[InstructionRow], params: ManyBspParams) -> tuple[list[float], list[bool]]:
    """Issue cycles and the dual-issue (blank) flags."""
    w, ic, ws = params.w, params.issue_cycle, params.warp_size
    issue = [w * ic if (r.is_barrier or r.fu in (1, None)) else w * _wt(r, ws) * ic for r in rows]
    blank = [False] * len(rows)
    paired: set[int] = set()

    def pairable(k: int) -> bool:
        r = rows[k]
        return r.fu in (2, 3, 4) and not r.is_barrier and k not in paired

    for k, r in enumerate(rows):
        if r.fu != 1:
            continue
        if k > 0 and pairable(k - 1) and rows[k - 1].index not in r.producers:
            paired.add(k - 1)
            blank[k] = True
        elif (not r.is_branch and k + 1 < len(rows) and pairable(k + 1)
              and r.index not in rows[k + 1].producers):
            paired.add(k + 1)
            blank[k] = True
    return [0.0 if b else x for x, b in zip(issue, blank, strict=True)], blank


def fu_cell(row: InstructionRow, params: ManyBspParams, full: bool, w: int | None = None) -> FuCell | None:
    """The FU cell of one row (None for global accesses and barriers). ``w`` may be passed in to
    spare recomputing eq. 6 per row."""
    if row.is_barrier or row.is_global_access or row.fu is None:
        return None
    w = params.w if w is None else w
    wt = _wt(row, params.warp_size)
    warps = w * max(1, row.n_ma) if row.fu == 4 else w
    cap = w * row.lat_comp if row.lat_comp > 0 else None
    if full:
        if cap is not None and cap < row.lat_comp + (warps - 1) * wt:
            return FuCell(0.0, cap)
        return FuCell(row.lat_comp, (warps - 1) * wt)
    occupancy = warps * wt
    return FuCell(0.0, min(occupancy, cap) if cap is not None else occupancy)


def build_block_table(
    rows: list[InstructionRow], params: ManyBspParams, level1_ends: set[int] | None = None
) -> BlockConstruction:
    """BLOCK table and level-2 split of ``rows`` (static order). ``level1_ends`` are the instruction
    indices that close a level-1 superstep (a level-2 superstep never crosses one)."""
    if not rows:
        return BlockConstruction([], [], [])
    issue, blank = _issue(rows, params)
    w = params.w
    cells = _Cells(rows, issue, *_fu_cells(rows, params, w))
    split = _Split(cells, blank, level1_ends or set())
    split.run()
    block = []
    full_rows = split.full_rows
    for k, r in enumerate(rows):
        cell = cells.cell_of(k, k in full_rows)
        comm = r.lat_comm * w * max(1, r.n_ma) if r.is_global_access else 0.0
        block.append(
            built(BlockRow,
                index=r.index,
                op=r.opcode,
                issue=None if blank[k] else issue[k],
                fu={r.fu: cell} if cell is not None and r.fu is not None else {},
                warp_over_T=_wt(r, params.warp_size) or None,
                comm=comm,
                ovh=r.lat_comp if r.is_barrier else 0.0,
                sync=split.sync[k],
                u=r.u,
                d=r.d,
                p=r.p,
            )
        )
    return BlockConstruction(block, split.steps, split.reasons, split.full_rows)


def _fu_cells(rows: list[InstructionRow], params: ManyBspParams, w: int
              ) -> tuple[list[FuCell | None], list[FuCell | None]]:
    """Every row's FU cell, plain and at full latency. A cell depends only on the row's kind,
    column, T, n_ma and lat_comp, which a large kernel repeats over and over: each distinct one is
    computed once and its (immutable) cells shared. The types of T and lat_comp are part of the
    key, so an int latency never hands its cell to a float one."""
    known: dict[tuple[object, ...], tuple[FuCell | None, FuCell | None]] = {}
    plain: list[FuCell | None] = []
    full: list[FuCell | None] = []
    for r in rows:
        key = (r.is_barrier, r.is_global_access, r.fu, r.T, type(r.T), r.n_ma, r.lat_comp, type(r.lat_comp))
        cells = known.get(key)
        if cells is None:
            cells = known[key] = (fu_cell(r, params, False, w), fu_cell(r, params, True, w))
        plain.append(cells[0])
        full.append(cells[1])
    return plain, full


def _first_full(rows: list[InstructionRow], l: int, kind: str) -> tuple[int | None, int | None]:
    """(full, latent) rows of a superstep starting at ``l``; ``kind`` is why the previous
    superstep ended (see END_REASONS, "start" for the first). ``full`` carries the superstep's
    exposed latency outright. ``latent`` is plain unless a later row waits for it across rows
    in between (eq. 8), which is the only case where its latency shows."""
    n = len(rows)
    r = rows[l]
    if r.is_global_access or r.is_barrier:
        return None, None
    if kind == "branch":
        # After a conditional branch the pipeline was drained by the branch's own wait: the SP
        # head (or, behind a register-free bra.uni, the row after it) exposes its latency only
        # when a consumer must wait for it with rows in between (hotspot 38 full with sync 15;
        # 106, 124, 173, 183, 186 plain on all three GPUs).
        if r.is_branch and not r.producers:
            nxt = l + 1
            return None, (nxt if nxt < n and not rows[nxt].is_global_access else None)
        if r.fu == 1:
            return None, l
    if r.is_branch and not r.producers:
        # bra.uni reads and writes nothing: the next row carries the superstep's latency.
        return (l + 1 if l + 1 < n and not rows[l + 1].is_global_access else None), None
    if kind == "filler":
        return None, None
    if kind == "global" and not r.producers:
        return None, None
    return l, None


@dataclass
class _Cells:
    """The rows with their issue cycles and FU cells, plain and at full latency."""

    rows: list[InstructionRow]
    issue: list[float]
    plain: list[FuCell | None]
    full: list[FuCell | None]
    # What each row adds to its FU column's sum, plain and full (0 without a cell), worked out
    # once: a superstep split again re-adds its rows.
    plain_value: list[float] = field(init=False)
    full_value: list[float] = field(init=False)

    def __post_init__(self) -> None:
        self.plain_value = [0.0 if c is None else c.value for c in self.plain]
        self.full_value = [0.0 if c is None else c.value for c in self.full]

    def cell_of(self, k: int, is_full: bool) -> FuCell | None:
        return self.full[k] if is_full else self.plain[k]


class _Step:
    """Running state of the open superstep: full-latency flags and per-column prefix sums,
    extended one row at a time so the scan stays linear in the kernel size."""

    def __init__(self, cells: _Cells, l: int, head: tuple[int | None, int | None]) -> None:
        self.cells = cells
        self.l, (self.head, self.latent) = l, head
        self.head_fu = cells.rows[self.head].fu if self.head is not None else None
        self.seen: set[int | None] = set()
        self.flags: list[bool] = []
        # prefix[0]: the issue cycles, prefix[c]: FU column c (1..4), each from 0 at row l
        self.prefix: list[list[float]] = [[0.0], [0.0], [0.0], [0.0], [0.0]]

    def add(self, k: int) -> None:
        cells = self.cells
        r = cells.rows[k]
        fu = r.fu
        # Full latency: the head, and the first row of every other non-SP column (global
        # accesses do not occupy a column).
        flag = k == self.head or (
            self.head is not None and fu in (2, 3, 4) and fu != self.head_fu
            and not r.is_global_access and not r.is_barrier and fu not in self.seen)
        if not r.is_global_access:
            self.seen.add(fu)
        self.flags.append(flag)
        value = cells.full_value[k] if flag else cells.plain_value[k]
        prefix = self.prefix
        issued = prefix[0]
        issued.append(issued[-1] + cells.issue[k])
        # The row's value goes to its own column; the others carry their sum on (adding 0.0 to a
        # sum that starts at 0.0 would give the same float).
        for c in (1, 2, 3, 4):
            sums = prefix[c]
            sums.append(sums[-1] + value if c == fu else sums[-1])

    def column_sum(self, column: int, first: int, last: int) -> float:
        sums = self.prefix[column]
        return sums[last - self.l + 1] - sums[first - self.l]

    def wait(self, m: int, j: int) -> float:
        """Eq. (8): how long row j waits for producer m (rows l..j-1 are in the step)."""
        rows = self.cells.rows
        column = rows[m].fu
        if column is None or rows[m].is_global_access:
            return 1.0
        l = self.l
        produced = self.column_sum(column, l, m)
        issued = self.prefix[0][j - l] - self.prefix[0][1]
        others = max(self.column_sum(y, l, j - 2) for y in (1, 2, 3, 4) if y != column)
        return produced - issued - others


def _static_ends(rows: list[InstructionRow], blank: list[bool], level1_ends: set[int]) -> list[str | None]:
    """Ends that depend on the row alone (and on whether the next row dual-issues with it)."""
    n = len(rows)
    static_end: list[str | None] = []
    for k, q in enumerate(rows):
        if q.is_barrier:
            static_end.append("barrier")
        elif q.is_branch and q.producers:
            static_end.append("branch")
        elif q.index in level1_ends:
            static_end.append("level1")
        elif q.is_global_access and (k + 1 >= n or not blank[k + 1]):
            static_end.append("global")
        else:
            static_end.append(None)
    return static_end


class _Split:
    """The scan that cuts the rows into level-2 supersteps: per row its sync value, the rows at
    full latency, and each superstep's (first, last) row with the reason it ended."""

    def __init__(self, cells: _Cells, blank: list[bool], level1_ends: set[int]) -> None:
        rows = cells.rows
        self.cells = cells
        self.blank = blank
        self.n = n = len(rows)
        pos = {r.index: k for k, r in enumerate(rows)}
        # Positions of each row's producers (in no particular order: the scan asks for their
        # largest one and whether any lies in a range).
        self.producers = [[pos[p] for p in r.producers if p in pos] for r in rows]
        self.static_end = _static_ends(rows, blank, level1_ends)
        self.sync = [0.0] * n
        self.full_rows: set[int] = set()
        self.steps: list[tuple[int, int]] = []
        self.reasons: list[str] = []
        self.step = _Step(cells, 0, _first_full(rows, 0, "start"))
        self.step.add(0)
        self.j = 1

    def close(self, end: int, reason: str, next_kind: str) -> None:
        """End the open superstep at row ``end`` and open the next one."""
        step, n = self.step, self.n
        l = step.l
        for o, flag in enumerate(step.flags[: end - l + 1]):
            if flag:
                self.full_rows.add(l + o)
        self.steps.append((l, end))
        self.reasons.append(reason)
        nxt = end + 1
        self.step = _Step(self.cells, nxt, _first_full(self.cells.rows, nxt, next_kind) if nxt < n else (None, None))
        if nxt < n:
            self.step.add(nxt)
        self.j = nxt + 1

    def run(self) -> None:
        rows, n, sync, static_end, blank = self.cells.rows, self.n, self.sync, self.static_end, self.blank
        while self.step.l < n:
            step, j = self.step, self.j
            l = step.l
            if j >= n:
                if static_end[n - 1]:
                    sync[n - 1] = 1.0   # the final store still ends its superstep (sync 1 as printed)
                self.close(n - 1, "last", "start")
                break
            forced = static_end[j - 1]
            if forced == "branch" and j - 1 > l and not any(l <= p < j - 1 for p in self.producers[j - 1]):
                # A conditional branch issued behind other rows, whose predicate was synchronised in an
                # earlier superstep, has nothing to wait for and does not end the superstep (mm 13 in
                # <12~18>; every branch that ends one is its superstep's head or reads a row of it).
                forced = None
            if forced is None and j - 2 >= l and rows[j - 2].is_global_access and blank[j - 1]:
                forced = "global"
            if forced:
                sync[j - 1] = 1.0
                self.close(j - 1, forced, forced)
                continue
            inside = [p for p in self.producers[j] if l <= p < j]
            if inside and self.ends_at_producer(max(inside)):
                continue
            step.add(j)
            self.j = j + 1

    def ends_at_producer(self, m: int) -> bool:
        """Row j waits for row ``m`` of the open superstep: True when that ends the superstep
        (closed at ``m``), or when row j joined it already."""
        step, j, rows, sync = self.step, self.j, self.cells.rows, self.sync
        l = step.l
        if m == j - 1:
            cell = self.cells.cell_of(m, step.flags[m - l])
            sync[m] = cell.value if cell is not None else 1.0
            self.close(m, "dependency", "dependency")
            return True
        if m == l and rows[j].is_branch and rows[j].producers:
            # A conditional branch waiting for the head of its superstep does not split at the
            # head: the branch ends the superstep itself (sync 1) and its wait is inside the
            # head's full cell (hotspot <102~104> on all three GPUs).
            step.add(j)
            self.j = j + 1
            return True
        waited = step.wait(m, j)
        if m == step.latent and not step.flags[m - l]:
            latent_full, latent_plain = self.cells.full[m], self.cells.plain[m]
            if latent_full is not None and latent_plain is not None:
                exposed = waited + latent_full.value - latent_plain.value
                if exposed > 0:
                    # The latent row's latency is what the consumer waits for: charge it.
                    step.flags[m - l] = True
                    waited = exposed
        if waited > 0:
            sync[m] = waited
            self.close(m, "filler", "filler")
            return True
        return False
