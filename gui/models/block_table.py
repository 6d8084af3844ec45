"""Table model over the Many-BSP instruction rows and BLOCK-table rows of one result.

A thin adapter: it reads ``ManyBspResult`` and the session state, and turns an accepted edit into
a call of ``on_edit(row_index, column, value)`` (which pushes an undoable state change); it never
stores an edit itself. Refused input sets ``rejected`` (cell flashes red) and emits
``editRejected`` with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont

from engine.errors import WarplineError
from engine.manybsp import BlockRow, InstructionRow, ManyBspResult
from engine.manybsp.rows import FU_NAMES
from engine.state import EDITABLE_COLUMNS, WorkbenchState, is_overridden, parse_cell_value
from gui.theme import brush

Index = QModelIndex | QPersistentModelIndex
_ROOT = QModelIndex()   # the invalid index: "no parent"


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    tip: str


# Order: the frozen pair (# and instruction), then the cells one edits, then what is derived.
COLUMNS: tuple[Column, ...] = (
    Column("inst", "#", "instruction number (1-based, as u/p and superstep ranges use it)"),
    Column("text", "instruction", "PTX instruction text"),
    Column("lat_comp", "lat_comp", "computational latency, cycles (editable)"),
    Column("lat_comm", "lat_comm", "global-memory latency, cycles (editable)"),
    Column("n_ma", "n_ma", "memory transactions per warp access (editable): 1 when the warp's 32 lanes "
           "fall in one transaction, up to 32 when each touches its own"),
    Column("issue", "issue", "issue cycles of the w warps; blank = dual issue (editable)"),
    Column("fu1", "fu1", "SPs cell: 'a+b' = exposed latency a + occupancy b (editable)"),
    Column("fu2", "fu2", "DPU cell (editable)"),
    Column("fu3", "fu3", "SFU cell (editable)"),
    Column("fu4", "fu4", "LDST cell (editable)"),
    Column("comm", "comm", "communication cycles: mem_lat · w · n_ma (editable)"),
    Column("ovh", "ovh", "barrier overhead (editable)"),
    Column("sync", "sync", "eq. 8 wait; non-zero ends a level-2 superstep (editable)"),
    Column("heat", "sim. share", "share of the simulated run's resident warp-cycles spent issuing this "
           "instruction or waiting to issue it (Pipeline simulation; the column sums to 100 %)"),
    Column("fu", "FU", "functional unit: 1 SPs, 2 DPU, 3 SFU, 4 LDST, MI barrier"),
    Column("n_fu", "n_fu", "units of that kind per warp scheduler"),
    Column("T", "T", "results per clock per warp scheduler"),
    Column("warp_over_T", "warp/T", "warp_size / T"),
    Column("u", "u", "first instruction that uses this result (0: none)"),
    Column("d", "d", "1 when that user is the next instruction"),
    Column("p", "p", "printed by 000, unused by the equations"),
    Column("ptx_line", "PTX line", "line of the instruction in the PTX file"),
    Column("cuda_line", "CUDA line", "CUDA source location from .loc (file:line)"),
)
FROZEN_KEYS = ("inst", "text")      # stay at the left while the other columns scroll
KEYS = tuple(c.key for c in COLUMNS)
HEAT_RGB = (230, 85, 13)          # the heat column's hue; its alpha grows with the share


def heat_brush(fraction: float) -> QBrush:
    """Background of a heat cell: transparent at 0, full hue at the hottest instruction."""
    return QBrush(QColor(*HEAT_RGB, int(round(200 * min(max(fraction, 0.0), 1.0)))))


def _num(x: float | int | None) -> str:
    if x is None:
        return ""
    x = float(x)
    return str(int(x)) if x.is_integer() else f"{x:g}"


class BlockTableModel(QAbstractTableModel):
    editRejected = Signal(str)

    def __init__(self, on_edit: Callable[[int, str, object], None], parent=None) -> None:
        super().__init__(parent)
        self.on_edit = on_edit
        self.rows: list[InstructionRow] = []
        self.block: list[BlockRow] = []
        self.state: WorkbenchState | None = None
        self.highlighted: set[int] = set()
        self.kernel = ""
        self.rejected: tuple[int, int] | None = None
        self.reject_reason = ""
        # Hot spots (engine.evaluation.hotspots), per 0-based simulator instruction.
        self.heat_issue = np.zeros(0)
        self.heat_stall = np.zeros(0)
        self._heat_total = 0.0
        self._heat_max = 0.0
        self.sort_key: tuple[str, Qt.SortOrder] | None = None   # None: in program order
        self._flash = QTimer(self)
        self._flash.setSingleShot(True)
        self._flash.setInterval(900)
        self._flash.timeout.connect(self._clear_rejected)

    # ------------------------------------------------------------------ content

    def set_result(self, mb: ManyBspResult | None, state: WorkbenchState) -> None:
        rows = list(mb.rows) if mb is not None else []
        block = list(mb.block) if mb is not None else []
        same_shape = len(rows) == len(self.rows)
        if not same_shape:
            self.beginResetModel()
        self.rows, self.block, self.state = rows, block, state
        self.kernel = mb.kernel_name if mb is not None else ""
        if self.sort_key is not None:
            self._apply_sort()
        if same_shape:
            # Keep selection and scroll position: the rows are the same instructions.
            if rows:
                self.dataChanged.emit(self.index(0, 0), self.index(len(rows) - 1, len(COLUMNS) - 1))
        else:
            self.endResetModel()

    def set_heat(self, issue: np.ndarray, stall: np.ndarray) -> None:
        """Issue and stall warp-cycles per instruction (0-based): the heat column."""
        self.heat_issue, self.heat_stall = issue, stall
        total = issue + stall
        self._heat_total = float(total.sum()) if len(total) else 0.0
        self._heat_max = float(total.max()) if len(total) else 0.0
        if self.sort_key is not None and self.sort_key[0] == "heat" and self.rows:
            self.sort(KEYS.index("heat"), self.sort_key[1])
        elif self.rows:
            column = KEYS.index("heat")
            self.dataChanged.emit(self.index(0, column), self.index(len(self.rows) - 1, column))

    def heat_of(self, number: int) -> tuple[float, float]:
        """(issue, stall) warp-cycles of 1-based instruction ``number`` (0, 0 when unknown)."""
        i = number - 1
        if 0 <= i < len(self.heat_issue):
            return float(self.heat_issue[i]), float(self.heat_stall[i])
        return 0.0, 0.0

    def heat_share(self, number: int) -> float | None:
        if self._heat_total <= 0 or not 0 < number <= len(self.heat_issue):
            return None
        return sum(self.heat_of(number)) / self._heat_total

    # ------------------------------------------------------------------ sorting

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Rows by a column's value (numbers as numbers); "#" ascending is program order. The rows
        keep their instruction, so edits, selection and highlights follow them."""
        self.sort_key = None if (KEYS[column] == "inst" and order == Qt.SortOrder.AscendingOrder) \
            else (KEYS[column], order)
        self.layoutAboutToBeChanged.emit()
        before = [r.index for r in self.rows]
        persistent = self.persistentIndexList()
        self._apply_sort(default=self.sort_key is None)
        where = {r.index: k for k, r in enumerate(self.rows)}
        self.changePersistentIndexList(
            persistent, [self.index(where[before[p.row()]], p.column()) if p.row() < len(before) else p
                         for p in persistent])
        self.layoutChanged.emit()

    def _apply_sort(self, default: bool = False) -> None:
        pairs = list(zip(self.rows, self.block if len(self.block) == len(self.rows) else [None] * len(self.rows),
                         strict=True))
        if default or self.sort_key is None:
            pairs.sort(key=lambda p: p[0].index)
        else:
            key, order = self.sort_key
            values = {r.index: self._sort_value(k, key) for k, (r, _) in enumerate(pairs)}
            pairs.sort(key=lambda p: (values[p[0].index], p[0].index),
                       reverse=order == Qt.SortOrder.DescendingOrder)
        self.rows = [r for r, _ in pairs]
        if len(self.block) == len(self.rows):
            self.block = [b for _, b in pairs]

    def _sort_value(self, row: int, key: str) -> tuple[int, float, str]:
        if key == "heat":
            share = self.heat_share(self.rows[row].index)
            return (0, share, "") if share is not None else (1, 0.0, "")
        text = self.text(row, key)
        try:
            return 0, float(text.split("+")[0]) if text else float("-inf"), text
        except ValueError:
            return 0, 0.0, text

    def set_highlight(self, instructions: set[int]) -> None:
        self.highlighted = set(instructions)
        if self.rows:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self.rows) - 1, len(COLUMNS) - 1),
                                  [Qt.ItemDataRole.BackgroundRole])

    def row_of_instruction(self, index: int) -> int | None:
        """Table row of 1-based instruction ``index``."""
        for k, r in enumerate(self.rows):
            if r.index == index:
                return k
        return None

    # ------------------------------------------------------------------ Qt API

    def rowCount(self, parent: Index = _ROOT) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = _ROOT) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal:
            if role == Qt.ItemDataRole.DisplayRole:
                return COLUMNS[section].title
            if role == Qt.ItemDataRole.ToolTipRole:
                return COLUMNS[section].tip
        elif role == Qt.ItemDataRole.DisplayRole:
            return None
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.isValid() and KEYS[index.column()] in EDITABLE_COLUMNS and self.block:
            return base | Qt.ItemFlag.ItemIsEditable
        return base

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        r = self.rows[index.row()]
        key = KEYS[index.column()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return self.text(index.row(), key)
        overridden = self.state is not None and key in EDITABLE_COLUMNS and is_overridden(
            self.state, r.index, key)
        if role == Qt.ItemDataRole.FontRole and overridden:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.BackgroundRole:
            if self.rejected == (index.row(), index.column()):
                return brush("rejected")
            if key == "heat" and self._heat_max > 0:
                return heat_brush(sum(self.heat_of(r.index)) / self._heat_max)
            if overridden:
                return brush("edited")
            if r.index in self.highlighted:
                return brush("selected_rows")
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            if self.rejected == (index.row(), index.column()):
                return self.reject_reason
            tip = r.text if key == "text" else COLUMNS[index.column()].tip
            if key == "heat":
                issue, stall = self.heat_of(r.index)
                tip = (f"{issue:,.0f} warp-cycles issuing + {stall:,.0f} waiting to issue\n"
                       + COLUMNS[index.column()].tip)
            if overridden:
                tip += "\nOverridden: right-click › Reset to the computed value"
            if key in ("lat_comp", "lat_comm", "T", "n_fu") and r.cost_source:
                tip += f"\nsource: {r.cost_source}" + (" (profile default)" if r.is_default_cost else "")
            return tip
        if role == Qt.ItemDataRole.TextAlignmentRole and key not in ("text", "cuda_line"):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def text(self, row: int, key: str) -> str:
        r = self.rows[row]
        b = self.block[row] if row < len(self.block) else None
        if key == "inst":
            return str(r.index)
        if key == "heat":
            share = self.heat_share(r.index)
            return "" if share is None else f"{100 * share:.1f} %"
        if key == "text":
            # Parameter symbols repeat the (mangled) kernel name: show them as param_N.
            return r.text.replace(f"{self.kernel}_param_", "param_") if self.kernel else r.text
        if key == "fu":
            return "MI" if r.fu is None else f"{r.fu} {FU_NAMES.get(r.fu, '')}"
        if key in ("n_fu", "T", "n_ma", "lat_comp", "lat_comm", "u", "d", "p"):
            return _num(getattr(r, key))
        if key == "ptx_line":
            return str(r.location.line) if r.location else ""
        if key == "cuda_line":
            loc = r.cuda_location
            return f"{loc.file.rsplit('/', 1)[-1]}:{loc.line}" if loc else ""
        if b is None:
            return ""
        if key == "issue":
            return _num(b.issue)
        if key.startswith("fu"):
            cell = b.fu.get(int(key[2]))
            return cell.text() if cell is not None else ""
        if key == "warp_over_T":
            return _num(b.warp_over_T)
        return _num(getattr(b, key))

    def setData(self, index: Index, value, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        key = KEYS[index.column()]
        text = "" if value is None else str(value)
        if text.strip() == self.text(index.row(), key):
            return False   # unchanged: no override, no undo step
        try:
            parsed = parse_cell_value(key, text)
        except WarplineError as exc:
            self.reject(index.row(), index.column(), str(exc))
            return False
        self.on_edit(self.rows[index.row()].index, key, parsed)
        return True

    # ------------------------------------------------------------------ rejection flash

    def reject(self, row: int, column: int, reason: str) -> None:
        self.rejected = (row, column)
        self.reject_reason = f"Refused: {reason}"
        idx = self.index(row, column)
        self.dataChanged.emit(idx, idx)
        self.editRejected.emit(f"Row {self.rows[row].index}: {reason}")
        self._flash.start()

    def _clear_rejected(self) -> None:
        if self.rejected is not None:
            idx = self.index(*self.rejected)
            self.rejected = None
            self.dataChanged.emit(idx, idx)
