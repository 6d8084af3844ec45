"""The BLOCK table view and the superstep tree view, with their context menus.

Both views are plain Qt views over :mod:`gui.models`; edits go through the models to the session.
Selecting a superstep highlights its instructions in the table (and, through ``selectionChanged``,
in the timeline).
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, QPoint, Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QMenu, QStyle, QTableView, QTreeView, QWidget

from engine.evaluation import Evaluation
from engine.state import EDITABLE_COLUMNS, is_overridden, with_cell_edit, with_iterations
from gui.models.block_table import KEYS, BlockTableModel
from gui.models.supersteps import SuperstepModel
from gui.session import Session

SIZE_SAMPLE_ROWS = 60


class BlockTableView(QTableView):
    message = Signal(str)
    rowsSelected = Signal(object)      # list of the selected InstructionRows, in table order

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.model_ = BlockTableModel(self._edit, self)
        self.setModel(self.model_)
        self.setObjectName("blockTable")
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                             | QAbstractItemView.EditTrigger.EditKeyPressed
                             | QAbstractItemView.EditTrigger.AnyKeyPressed)
        self.setAlternatingRowColors(True)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(20)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        # Column widths come from the visible rows and this many others: measuring every row of
        # a 2,500-instruction kernel took 5 s of the UI thread.
        self.horizontalHeader().setResizeContentsPrecision(SIZE_SAMPLE_ROWS)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        self.model_.editRejected.connect(self.message)
        self.selectionModel().selectionChanged.connect(self._selection_changed)
        self._sized = False
        self._shown = None
        session.derivationChanged.connect(self.show_result)

    def show_result(self, result: Evaluation) -> None:
        if result.manybsp is not None and result.manybsp is self._shown:
            return
        self._shown = result.manybsp
        self.model_.set_result(result.manybsp, result.state)
        # Lay out now what a model reset leaves to a zero timer: the paint it leads to is then
        # queued before the worker's next stage starts, not while it runs (see ComputeWorker).
        self.executeDelayedItemsLayout()
        if not self._sized and self.model_.rowCount():
            self.resizeColumnsToContents()
            self.setColumnWidth(KEYS.index("text"), min(self.columnWidth(KEYS.index("text")), 300))
            self._sized = True

    def _selection_changed(self, *_args: object) -> None:
        rows = sorted({index.row() for index in self.selectionModel().selectedRows()})
        self.rowsSelected.emit([self.model_.rows[k] for k in rows if k < len(self.model_.rows)])

    def _edit(self, row: int, column: str, value: object) -> None:
        state = self.session.state
        if state is not None:
            self.session.apply(with_cell_edit(state, row, column, value), f"Set {column} of #{row} to {value}")

    def select_instruction(self, index: int) -> None:
        """Select (and scroll to) the row of 1-based instruction ``index``."""
        row = self.model_.row_of_instruction(index)
        if row is None:
            return
        target = self.model_.index(row, 0)
        self.selectionModel().select(target, QItemSelectionModel.SelectionFlag.ClearAndSelect
                                     | QItemSelectionModel.SelectionFlag.Rows)
        self.scrollTo(target, QAbstractItemView.ScrollHint.PositionAtCenter)

    def _menu(self, pos: QPoint) -> None:
        index = self.indexAt(pos)
        state = self.session.state
        if not index.isValid() or state is None:
            return
        key = KEYS[index.column()]
        row = self.model_.rows[index.row()].index
        menu = QMenu(self)
        reset = menu.addAction(f"Reset {key} of #{row} to the computed value")
        reset.setEnabled(key in EDITABLE_COLUMNS and is_overridden(state, row, key))
        reset.triggered.connect(lambda: self.session.apply(
            with_cell_edit(state, row, key, None, reset=True), f"Reset {key} of #{row}"))
        menu.exec(self.viewport().mapToGlobal(pos))


class SuperstepView(QTreeView):
    message = Signal(str)
    instructionsSelected = Signal(object)   # set of 1-based instruction numbers

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.model_ = SuperstepModel(self._edit_iterations, self)
        self.setModel(self.model_)
        self.setObjectName("superstepTree")
        self.setAlternatingRowColors(True)
        self.setUniformRowHeights(True)
        self.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                             | QAbstractItemView.EditTrigger.EditKeyPressed)
        # Interactive, sized by fit_columns: a ResizeToContents header re-measures up to 1,000 rows
        # on every dataChanged, which made each latency edit spend ~130 ms laying out this header.
        self.header().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        self.model_.editRejected.connect(self.message)
        self.selectionModel().currentChanged.connect(self._current_changed)
        self._shown = None
        session.derivationChanged.connect(self.show_result)

    def show_result(self, result: Evaluation) -> None:
        if result.manybsp is not None and result.manybsp is self._shown:
            return
        self._shown = result.manybsp
        rebuilt = self.model_.set_result(result.manybsp, result.state)
        self.executeDelayedItemsLayout()     # as in BlockTableView.show_result
        self.fit_columns(all_columns=rebuilt)

    def fit_columns(self, all_columns: bool) -> None:
        """Widen columns to their contents: all of them after a rebuild; after an in-place update
        only the number columns, measured on the superstep rows (a few dozen, not the instructions)."""
        if all_columns:
            for column in range(self.model_.columnCount()):
                self.resizeColumnToContents(column)
            return
        bold = QFont(self.font())
        bold.setBold(True)              # an overridden iteration count is drawn bold
        metrics = QFontMetrics(bold)
        padding = 2 * self.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 12
        for column in range(2, self.model_.columnCount()):
            texts = self.model_.superstep_texts(column)
            if texts:
                needed = max(metrics.horizontalAdvance(t) for t in texts) + padding
                if needed > self.columnWidth(column):
                    self.setColumnWidth(column, needed)

    def _edit_iterations(self, level1: int, count: int | None) -> None:
        state = self.session.state
        if state is not None:
            self.session.apply(with_iterations(state, level1, count),
                               f"L1 #{level1} iterations = {count if count is not None else 'computed'}")

    def _current_changed(self, current, _previous) -> None:  # noqa: ANN001 - Qt indexes
        if current.isValid():
            self.instructionsSelected.emit(self.model_.node(current).instructions)

    def _menu(self, pos: QPoint) -> None:
        index = self.indexAt(pos)
        state = self.session.state
        if not index.isValid() or state is None:
            return
        node = self.model_.node(index)
        if node.kind != "level1":
            return
        menu = QMenu(self)
        reset = menu.addAction(f"Reset the iterations of L1 #{node.level1}")
        reset.setEnabled(node.level1 in state.overrides.iterations)
        reset.triggered.connect(lambda: self._edit_iterations(node.level1, None))
        menu.exec(self.viewport().mapToGlobal(pos))
