"""The BLOCK table view and the superstep tree view, with their context menus.

Both views are plain Qt views over :mod:`gui.models`; edits go through the models to the session.
Selecting a superstep highlights its instructions in the table (and, through ``selectionChanged``,
in the timeline).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QByteArray, QEvent, QItemSelectionModel, QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHeaderView,
    QMenu,
    QStyle,
    QTableView,
    QTreeView,
    QWidget,
)

from engine.evaluation import Evaluation
from engine.evaluation.hotspots import instruction_heat
from engine.state import EDITABLE_COLUMNS, is_overridden, with_cell_edit, with_iterations
from gui.models.block_table import COLUMNS, FROZEN_KEYS, KEYS, BlockTableModel
from gui.models.supersteps import SuperstepModel
from gui.session import Session
from gui.theme import PALETTE_EVENTS

SIZE_SAMPLE_ROWS = 60
ROW_HEIGHT = 20
TEXT_COLUMN_MAX = 300


FROZEN_SHEET = "QTableView#blockTableFrozen { border-right: 1px solid #b0b0b0; }"


class BlockTableView(QTableView):
    """The BLOCK table. ``#`` and the instruction stay at the left while the other columns scroll
    (a second view over the same model and selection, laid over the first); the header's context
    menu shows and hides columns, and columns can be dragged into another order."""

    message = Signal(str)
    rowsSelected = Signal(object)      # list of the selected InstructionRows, in table order
    columnsChanged = Signal()          # a column shown, hidden or moved from the header menu

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.model_ = BlockTableModel(self._edit, self)
        self.setModel(self.model_)
        self.setObjectName("blockTable")
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                             | QAbstractItemView.EditTrigger.EditKeyPressed
                             | QAbstractItemView.EditTrigger.AnyKeyPressed)
        self.setAlternatingRowColors(True)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(ROW_HEIGHT)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.horizontalHeader().setSectionsMovable(True)
        self.horizontalHeader().setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.horizontalHeader().customContextMenuRequested.connect(self._header_menu)
        self.horizontalHeader().sectionMoved.connect(self._section_moved)
        # Column widths come from the visible rows and this many others: measuring every row of
        # a 2,500-instruction kernel took 5 s of the UI thread.
        self.horizontalHeader().setResizeContentsPrecision(SIZE_SAMPLE_ROWS)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        self.model_.editRejected.connect(self.message)
        self.selectionModel().selectionChanged.connect(self._selection_changed)
        self._sized = False
        self._shown = None
        self._number_rows = -1
        self.frozen = self._make_frozen()
        self.setSortingEnabled(True)
        self.horizontalHeader().setSortIndicator(KEYS.index("inst"), Qt.SortOrder.AscendingOrder)
        session.derivationChanged.connect(self.show_result)
        session.timelineChanged.connect(self.show_heat)

    # ------------------------------------------------------------------ frozen columns

    def _make_frozen(self) -> QTableView:
        frozen = QTableView(self)
        frozen.setObjectName("blockTableFrozen")
        frozen.setModel(self.model_)
        frozen.setSelectionModel(self.selectionModel())
        frozen.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        frozen.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        frozen.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        frozen.setAlternatingRowColors(True)
        frozen.verticalHeader().setVisible(False)
        frozen.verticalHeader().setDefaultSectionSize(ROW_HEIGHT)
        frozen.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        frozen.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        frozen.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        frozen.setVerticalScrollMode(self.verticalScrollMode())
        frozen.setFrameShape(QFrame.Shape.NoFrame)
        frozen.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        frozen.customContextMenuRequested.connect(
            lambda pos: self._menu(self.viewport().mapFromGlobal(frozen.viewport().mapToGlobal(pos))))
        frozen.setStyleSheet(FROZEN_SHEET)
        for column, key in enumerate(KEYS):
            frozen.setColumnHidden(column, key not in FROZEN_KEYS)
        self.viewport().stackUnder(frozen)
        # one vertical position for both views
        self.verticalScrollBar().valueChanged.connect(frozen.verticalScrollBar().setValue)
        frozen.verticalScrollBar().valueChanged.connect(self.verticalScrollBar().setValue)
        self.horizontalHeader().sectionResized.connect(self._section_resized)
        self.model_.modelReset.connect(self._place_frozen)
        frozen.show()
        return frozen

    def frozen_width(self) -> int:
        return sum(self.columnWidth(KEYS.index(k)) for k in FROZEN_KEYS)

    def _section_resized(self, logical: int, _old: int, new: int) -> None:
        if KEYS[logical] in FROZEN_KEYS:
            self.frozen.setColumnWidth(logical, new)
            self._place_frozen()

    def _place_frozen(self) -> None:
        frame = self.frameWidth()
        self.frozen.setGeometry(frame, frame, self.frozen_width(),
                                self.viewport().height() + self.horizontalHeader().height())
        self.frozen.horizontalHeader().setFixedHeight(self.horizontalHeader().height())
        self.frozen.verticalScrollBar().setValue(self.verticalScrollBar().value())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place_frozen()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        if event.type() in PALETTE_EVENTS and hasattr(self, "frozen"):
            # a widget with a style sheet keeps the palette it was polished with (the system's
            # turned dark or light): polish the overlay again
            self.frozen.setStyleSheet("")
            self.frozen.setStyleSheet(FROZEN_SHEET)

    def updateGeometries(self) -> None:
        super().updateGeometries()
        if hasattr(self, "frozen"):
            self._place_frozen()

    def scrollTo(self, index: QModelIndex,
                 hint: QAbstractItemView.ScrollHint = QAbstractItemView.ScrollHint.EnsureVisible) -> None:
        """As QTableView's, but a cell scrolled to is not left under the frozen columns."""
        super().scrollTo(index, hint)
        if index.isValid() and KEYS[index.column()] not in FROZEN_KEYS:
            left = self.visualRect(index).left()
            if left < self.frozen_width():
                bar = self.horizontalScrollBar()
                bar.setValue(bar.value() - (self.frozen_width() - left))

    def _section_moved(self, _logical: int, _old: int, _new: int) -> None:
        """Keep # and the instruction at the left whatever is dragged where."""
        header = self.horizontalHeader()
        header.blockSignals(True)
        for position, key in enumerate(FROZEN_KEYS):
            current = header.visualIndex(KEYS.index(key))
            if current != position:
                header.moveSection(current, position)
        header.blockSignals(False)
        self._place_frozen()
        self.columnsChanged.emit()

    def _header_menu(self, pos: QPoint) -> None:
        header = self.horizontalHeader()
        menu = QMenu(self)
        for visual in range(header.count()):
            logical = header.logicalIndex(visual)
            column = COLUMNS[logical]
            if column.key in FROZEN_KEYS:
                continue
            action = menu.addAction(column.title)
            action.setCheckable(True)
            action.setChecked(not header.isSectionHidden(logical))
            action.setToolTip(column.tip)
            action.toggled.connect(lambda on, c=logical: self.set_column_visible(KEYS[c], on))
        menu.addSeparator()
        menu.addAction("Show every column").triggered.connect(self._show_all_columns)
        menu.popup(header.mapToGlobal(pos))

    def set_column_visible(self, key: str, visible: bool) -> None:
        if key in FROZEN_KEYS:
            return
        self.setColumnHidden(KEYS.index(key), not visible)
        self.columnsChanged.emit()

    def _show_all_columns(self) -> None:
        for column in range(len(KEYS)):
            self.setColumnHidden(column, False)
        self.columnsChanged.emit()

    def visible_columns(self) -> list[str]:
        """Keys of the shown columns, left to right."""
        header = self.horizontalHeader()
        order = [header.logicalIndex(v) for v in range(header.count())]
        return [KEYS[c] for c in order if not header.isSectionHidden(c)]

    def restore_columns(self, state: object) -> bool:
        """Column order, widths and visibility saved by the header (QSettings value)."""
        if not isinstance(state, QByteArray | bytes) or not self.horizontalHeader().restoreState(state):
            return False
        self._sized = True          # the saved widths win over fitting to the contents
        self._section_moved(0, 0, 0)
        for key in FROZEN_KEYS:
            self.frozen.setColumnWidth(KEYS.index(key), self.columnWidth(KEYS.index(key)))
        self._place_frozen()
        return True

    def reset_columns(self, state: QByteArray) -> None:
        """The columns as a fresh window has them (order, all shown), fitted to the contents."""
        self.horizontalHeader().restoreState(state)
        for column in range(len(KEYS)):
            self.setColumnHidden(column, False)
        self._sized = False
        self._number_rows = -1
        if self.model_.rowCount():
            self._fit_columns()
        self._place_frozen()

    def _fit_columns(self) -> None:
        self.resizeColumnsToContents()
        self.setColumnWidth(KEYS.index("text"), min(self.columnWidth(KEYS.index("text")), TEXT_COLUMN_MAX))
        self._sized = True

    def _fit_number_column(self) -> None:
        """Wide enough for the largest instruction number, bold included: never "1…"."""
        rows = self.model_.rowCount()
        if rows == self._number_rows:
            return
        self._number_rows = rows
        bold = QFont(self.font())
        bold.setBold(True)
        digits = len(str(max((r.index for r in self.model_.rows), default=1)))
        padding = 2 * self.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 14
        needed = QFontMetrics(bold).horizontalAdvance("9" * max(digits, 2)) + padding
        column = KEYS.index("inst")
        needed = max(needed, QFontMetrics(self.horizontalHeader().font()).horizontalAdvance("#") + padding)
        if self.columnWidth(column) < needed:
            self.setColumnWidth(column, needed)

    # ------------------------------------------------------------------ content

    def show_heat(self, result: Evaluation) -> None:
        """The simulated warp-cycles of each instruction (two vector operations per edit)."""
        sim = result.simulation
        if sim is None:
            self.model_.set_heat(np.zeros(0), np.zeros(0))
            return
        self.model_.set_heat(*instruction_heat(sim.aggregates))

    def show_result(self, result: Evaluation) -> None:
        if result.manybsp is not None and result.manybsp is self._shown:
            return
        self._shown = result.manybsp
        self.model_.set_result(result.manybsp, result.state)
        # Lay out now what a model reset leaves to a zero timer: the paint it leads to is then
        # queued before the worker's next stage starts, not while it runs (see ComputeWorker).
        self.executeDelayedItemsLayout()
        if not self._sized and self.model_.rowCount():
            self._fit_columns()
        self._fit_number_column()

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
