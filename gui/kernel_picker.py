"""The kernel picker of a file with several kernels: demangled names with each kernel's size in
PTX instructions, its loops, parameters and launch bounds (:mod:`engine.ptx.summary`), a filter
box that matches any part of the name (case-insensitive; several words must all match), and the
first matching kernel selected, so that typing and Enter opens it."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.names import display_name
from engine.ptx.summary import KernelSummary

HEADERS = ("kernel", "instructions", "loops", "params", "launch bounds")


class KernelPicker(QDialog):
    def __init__(self, names: Sequence[str], summaries: Sequence[KernelSummary] = (),
                 parent: QWidget | None = None, title: str = "Choose a kernel") -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.names = list(names)
        by_name = {s.name: s for s in summaries}
        self.summaries = [by_name.get(n) for n in self.names]
        shown = [display_name(n) for n in self.names]
        if len(set(shown)) != len(shown):       # two instantiations demangle alike: show them mangled
            shown = list(self.names)
        self.shown = shown
        self.label = QLabel(f"This file has {len(self.names)} kernels:")
        self.filter = QLineEdit()
        self.filter.setObjectName("kernelFilter")
        self.filter.setPlaceholderText("Filter by name (any part, several words)")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._filter)
        self.table = QTableWidget(len(self.names), len(HEADERS))
        self.table.setObjectName("kernelTable")
        self.table.setHorizontalHeaderLabels(list(HEADERS))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setSortingEnabled(False)
        for row, (name, text, summary) in enumerate(zip(self.names, shown, self.summaries, strict=True)):
            cells = [text, "", "", "", ""]
            if summary is not None:
                cells[1:] = [str(summary.instructions), str(summary.loops), str(summary.params),
                             summary.launch_bounds or "—"]
            for col, value in enumerate(cells):
                item = QTableWidgetItem(value)
                if col == 0:
                    item.setToolTip(name)
                    item.setData(Qt.ItemDataRole.UserRole, name)
                elif col < 4:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, col, item)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.doubleClicked.connect(lambda _index: self.accept())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.open_button = buttons.button(QDialogButtonBox.StandardButton.Open)
        layout = QVBoxLayout(self)
        layout.addWidget(self.label)
        layout.addWidget(self.filter)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.resize(760, 460)
        self.table.selectRow(0)
        self.filter.setFocus()

    def visible_names(self) -> list[str]:
        return [n for row, n in enumerate(self.names) if not self.table.isRowHidden(row)]

    def _filter(self, text: str) -> None:
        words = text.lower().split()
        first = None
        for row, (name, shown) in enumerate(zip(self.names, self.shown, strict=True)):
            hay = f"{shown} {name}".lower()
            hidden = not all(word in hay for word in words)
            self.table.setRowHidden(row, hidden)
            if not hidden and first is None:
                first = row
        if first is not None:
            self.table.selectRow(first)
        else:
            self.table.clearSelection()
        self.open_button.setEnabled(first is not None)
        shown = len(self.visible_names())
        self.label.setText(f"This file has {len(self.names)} kernels" + ("" if not words else f"; {shown} match:"))

    def chosen(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        visible = [i.row() for i in rows if not self.table.isRowHidden(i.row())]
        return self.names[visible[0]] if visible else None
