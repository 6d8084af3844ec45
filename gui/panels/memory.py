"""Memory tab: where each global access is served (L1, L2, DRAM) and the launch's bytes per level.

A thin view over :func:`engine.memory.traffic.traffic_rows` and ``KernelTraffic.summary``, filled
only while the tab is on screen (:class:`gui.panels.when_shown.WhenShown`).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.evaluation import Evaluation
from engine.memory.traffic import traffic_rows
from gui.panels.when_shown import WhenShown

COLUMNS = ("#", "instruction", "space", "kind", "sectors/req", "lines/req", "L1 hit %", "L2 hit %",
           "DRAM MB", "limit", "note")
TIPS = {
    "#": "The access's instruction number (the BLOCK table's #).",
    "instruction": "The PTX instruction that accesses memory.",
    "space": "The state space it accesses: global, shared, local or constant memory.",
    "kind": "Load, store or atomic.",
    "note": "Why the address pattern is unknown (then assumed), or how it was worked out when it is not "
            "an affine function of the thread index.",
    "sectors/req": "mean 32-byte sectors one warp request touches",
    "lines/req": "mean 128-byte lines one warp request touches (L1 wavefronts)",
    "L1 hit %": "share of the access's sectors L1 serves: the block touched them just before and the "
                "working set fits beside shared memory",
    "L2 hit %": "share of the sectors that miss L1 which L2 serves (other blocks brought them in)",
    "DRAM MB": "bytes this access reads or writes in DRAM over the whole launch",
    "limit": "the level this access's requests keep busiest on their SM",
}


class MemoryPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = QLabel("No memory analysis yet.")
        self.summary.setObjectName("memorySummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("memoryTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        for column, name in enumerate(COLUMNS):
            if name in TIPS:
                self.table.horizontalHeaderItem(column).setToolTip(TIPS[name])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        self.rows: list[dict] = []
        self._when_shown = WhenShown(self, lambda result, _traffic: self.show_traffic(result))

    def set_result(self, result: Evaluation) -> None:
        self._when_shown.offer(result, result.traffic)

    def showEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        self._when_shown.run()

    def show_traffic(self, result: Evaluation) -> None:
        if result.traffic is None or result.memory is None:
            self.summary.setText("No memory analysis for this launch.")
            self.rows = []
        else:
            self.summary.setText(result.traffic.summary())
            self.rows = traffic_rows(result.memory, result.traffic)
        self.table.setRowCount(len(self.rows))
        for r, row in enumerate(self.rows):
            for c, name in enumerate(COLUMNS):
                value = row[name]
                text = "" if value is None else f"{value:,.1f}" if isinstance(value, float) else str(value)
                item = QTableWidgetItem(text)
                if isinstance(value, (int, float)):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, c, item)
