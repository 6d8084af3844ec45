"""Tree model over the Many-BSP superstep hierarchy: level-1 -> level-2 -> instructions.

Nodes are rebuilt from each ``ManyBspResult`` (the engine's containers); a level-1 node's
iteration count is editable and becomes an override through ``on_iterations(level1, count)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QFont

from engine.errors import WarplineError
from engine.manybsp import ManyBspResult
from engine.state import WorkbenchState, parse_count
from gui.theme import brush

Index = QModelIndex | QPersistentModelIndex
_ROOT = QModelIndex()   # the invalid index: "no parent"
HEADERS = ("superstep", "range", "comp", "comm", "ovh", "iter.")


@dataclass(eq=False)
class Node:
    kind: str                      # "level1", "level2", "instruction"
    label: str
    start: int
    end: int
    values: tuple[str, str, str, str] = ("", "", "", "")   # comp, comm, ovh, iterations
    level1: int = 0                # 1-based level-1 index (level-1 nodes)
    known: bool = True
    tip: str = ""
    parent: Node | None = None
    children: list[Node] = field(default_factory=list)

    position: int = 0              # row under the parent (a search there is quadratic on big kernels)

    def row(self) -> int:
        return self.position

    def adopt(self, child: Node) -> Node:
        child.parent, child.position = self, len(self.children)
        self.children.append(child)
        return child

    @property
    def instructions(self) -> set[int]:
        return set(range(self.start, self.end + 1))


def _n(x: float) -> str:
    """Cycles as the tables print them: whole numbers bare, others to one decimal."""
    return str(int(x)) if float(x).is_integer() else f"{x:.1f}"


class SuperstepModel(QAbstractItemModel):
    editRejected = Signal(str)

    def __init__(self, on_iterations: Callable[[int, int | None], None], parent=None) -> None:
        super().__init__(parent)
        self.on_iterations = on_iterations
        self.root = Node("root", "", 0, 0)
        self.state: WorkbenchState | None = None
        self._shape: tuple = ()
        self.rejected: tuple[Node, int] | None = None
        self.reject_reason = ""
        self._flash = QTimer(self)
        self._flash.setSingleShot(True)
        self._flash.setInterval(900)
        self._flash.timeout.connect(self._clear_rejected)

    def set_result(self, mb: ManyBspResult | None, state: WorkbenchState) -> bool:
        """Show ``mb``; True when the tree was rebuilt (new shape), False when updated in place."""
        self.state = state
        level1 = mb.level1 if mb is not None else []
        shape = tuple((s.start, s.end, tuple((c.start, c.end) for c in s.children)) for s in level1)
        if shape == self._shape and self.root.children:
            # Same supersteps (an edit changed costs, not boundaries): update the numbers in
            # place, so expansion and selection survive and the instruction rows are not rebuilt.
            for l1, s in zip(self.root.children, level1, strict=True):
                l1.values, l1.known, l1.tip = self._level1_values(s, state)
                for l2, c in zip(l1.children, s.children, strict=True):
                    l2.values = (_n(c.comp), _n(c.comm), _n(c.ovh), "")
            # One signal over the level-1 rows. A tree view answers a multi-row dataChanged by
            # repainting its whole viewport, so the level-2 rows are redrawn with it; one more
            # signal per level-1 parent made QTreeView search its row list for each (~15 ms an edit).
            self.dataChanged.emit(self.index(0, 2), self.index(len(level1) - 1, len(HEADERS) - 1))
            return False
        root = Node("root", "", 0, 0)
        texts = {r.index: r.text for r in mb.rows} if mb is not None else {}
        for s in level1:
            values, known, tip = self._level1_values(s, state)
            l1 = root.adopt(Node("level1", f"L1 #{s.index}", s.start, s.end, values, s.index, known, tip))
            for c in s.children:
                l2 = l1.adopt(Node("level2", f"L2 #{c.index}", c.start, c.end,
                                   (_n(c.comp), _n(c.comm), _n(c.ovh), ""), tip=f"ends at: {c.reason}"))
                for i in range(c.start, c.end + 1):
                    l2.adopt(Node("instruction", f"{i}: {texts.get(i, '')}", i, i))
        self.beginResetModel()
        self.root, self._shape = root, shape
        self.endResetModel()
        return True

    def superstep_texts(self, column: int) -> list[str]:
        """The texts of ``column`` on every level-1 and level-2 row (instruction rows have none)."""
        nodes = [n for l1 in self.root.children for n in (l1, *l1.children)]
        texts = [n.label if column == 0 else f"{n.start}–{n.end}" if column == 1 else n.values[column - 2]
                 for n in nodes]
        return [t for t in texts if t]

    @staticmethod
    def _level1_values(s, state: WorkbenchState) -> tuple[tuple[str, str, str, str], bool, str]:  # noqa: ANN001
        known = s.iterations_known or s.index in state.overrides.iterations
        return (_n(s.comp), _n(s.comm), _n(s.ovh), str(s.iterations)), known, s.reason or ""

    def node(self, index: Index) -> Node:
        return index.internalPointer() if index.isValid() else self.root

    # ------------------------------------------------------------------ Qt API

    def index(self, row: int, column: int, parent: Index = _ROOT) -> QModelIndex:
        p = self.node(parent)
        if 0 <= row < len(p.children) and 0 <= column < len(HEADERS):
            return self.createIndex(row, column, p.children[row])
        return QModelIndex()

    def parent(self, index: Index = _ROOT) -> QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        p = self.node(index).parent
        if p is None or p is self.root:
            return QModelIndex()
        return self.createIndex(p.row(), 0, p)

    def rowCount(self, parent: Index = _ROOT) -> int:
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self.node(parent).children)

    def columnCount(self, parent: Index = _ROOT) -> int:
        return len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole:
            return ("level-1 / level-2 superstep or instruction", "instructions (1-based, inclusive)",
                    "computation cycles", "communication cycles", "barrier overhead cycles",
                    "iterations of a level-1 superstep (double-click to override)")[section]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.isValid() and index.column() == 5 and self.node(index).kind == "level1":
            return base | Qt.ItemFlag.ItemIsEditable
        return base

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        n = self.node(index)
        col = index.column()
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            if col == 0:
                return n.label
            if col == 1:
                return f"{n.start}–{n.end}" if n.kind != "instruction" else ""
            return n.values[col - 2]
        rejected = self.rejected is not None and self.rejected[0] is n and self.rejected[1] == col
        if rejected and role == Qt.ItemDataRole.BackgroundRole:
            return brush("rejected")
        if rejected and role == Qt.ItemDataRole.ToolTipRole:
            return self.reject_reason
        overridden = (n.kind == "level1" and self.state is not None
                      and n.level1 in self.state.overrides.iterations)
        if role == Qt.ItemDataRole.BackgroundRole and col == 5 and n.kind == "level1":
            if overridden:
                return brush("edited")
            if not n.known:
                return brush("unknown")
        if role == Qt.ItemDataRole.FontRole and col == 5 and overridden:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = n.tip
            if n.kind == "level1":
                if not n.known:
                    tip = "trip count unknown: 1 iteration assumed. " + tip
                tip += "\nDouble-click the iterations to override them."
            return tip or None
        return None

    def setData(self, index: Index, value, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or index.column() != 5:
            return False
        n = self.node(index)
        text = str(value).strip()
        if text == n.values[3]:
            return False
        try:
            count = parse_count(text, f"L1 #{n.level1} iterations")
        except WarplineError as exc:
            self.reject(index, str(exc))
            return False
        self.on_iterations(n.level1, count)
        return True

    # ------------------------------------------------------------------ rejection flash

    def reject(self, index: Index, reason: str) -> None:
        """Refused input: the cell keeps its value, flashes, and its tooltip says why (as the
        BLOCK table's cells do)."""
        self.rejected = (self.node(index), index.column())
        self.reject_reason = f"Refused: {reason}"
        self.dataChanged.emit(index, index)
        self.editRejected.emit(reason)
        self._flash.start()

    def _clear_rejected(self) -> None:
        if self.rejected is not None:
            node, column = self.rejected
            self.rejected = None
            if node.parent is not None:
                index = self.createIndex(node.position, column, node)
                self.dataChanged.emit(index, index)
