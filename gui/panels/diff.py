"""The Diff tab: the current kernel against the comparison (a pinned baseline, or a second kernel
or file opened with Edit › Compare with…), instructions aligned by text
(:mod:`engine.evaluation.diff`), changed rows and BLOCK cells marked, each row's share of the
simulated warp-cycles before and after. Computed in the background while the tab is shown; a row
with an instruction of the current kernel selects it in the BLOCK table."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.evaluation import Evaluation
from engine.evaluation.diff import ADDED, CHANGED, REMOVED, RENAMED, DiffRow, KernelDiff, diff
from gui.background import BackgroundRunner
from gui.glossary import set_header_tips
from gui.panels.when_shown import WhenShown
from gui.theme import PALETTE_EVENTS, current

HEADERS = ("", "#", "# now", "share", "share now", "changed cells", "instruction")
HELP = ("How the row differs: same, renamed (other registers or labels), changed, added or removed.",
        "The instruction's number in the comparison (the baseline).", "Its number in the current kernel.",
        "Its share of the comparison's simulated warp-cycles.",
        "Its share of the current run's simulated warp-cycles.", "The BLOCK-table cells that differ.",
        "The instruction (comparison → current where they differ).")
# row tints (translucent: they read on light and dark tables alike) and the theme colour of the mark
TINTS = {ADDED: QColor(40, 160, 40, 60), REMOVED: QColor(200, 40, 40, 60), CHANGED: QColor(230, 160, 0, 60),
         RENAMED: QColor(128, 128, 128, 40)}


class DiffPanel(QWidget):
    instructionPicked = Signal(int)     # 1-based instruction of the current kernel

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.caption = QLabel("No comparison: Edit › Compare with another kernel or file…, or Edit › Pin as "
                              "baseline and edit.")
        self.caption.setObjectName("diffCaption")
        self.caption.setWordWrap(True)
        self.only_changes = QCheckBox("only rows that differ")
        self.only_changes.setChecked(True)
        self.only_changes.toggled.connect(lambda _on: self._fill())
        controls = QWidget()                       # (asks for no width: see gui/panels/sass.py)
        controls.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        top = QHBoxLayout(controls)
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.only_changes)
        top.addStretch(1)
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setObjectName("diffTable")
        self.table.setHorizontalHeaderLabels(list(HEADERS))
        set_header_tips(self.table, HELP)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        # widths measured once per fill (a column sized to its contents on every item set
        # re-measures every row: quadratic in the rows of a large kernel)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        self.table.itemSelectionChanged.connect(self._picked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.caption)
        layout.addWidget(controls)
        layout.addWidget(self.table, 1)
        self.baseline: Any = None
        self.label = ""
        self.current: Evaluation | None = None
        self.result: KernelDiff | None = None
        self.shown_rows: list[DiffRow] = []
        self._runner = BackgroundRunner("warpline-diff", self)
        self._runner.finished.connect(self._finished)
        self._runner.failed.connect(lambda _g, message: self.caption.setText(f"No diff: {message}"))
        self._when_shown = WhenShown(self, self._compute)

    def set_baseline(self, baseline: Any, label: str = "") -> None:
        self.baseline, self.label = baseline, label
        self._when_shown.offer(self.baseline, self.current)

    def set_current(self, current: Evaluation) -> None:
        self.current = current
        self._when_shown.offer(self.baseline, self.current)

    def showEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        self._when_shown.run()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        if event.type() in PALETTE_EVENTS and getattr(self, "result", None) is not None:
            self._fill()

    def wait(self, msecs: int = 30_000) -> bool:
        return self._runner.wait(msecs)

    def _compute(self, baseline: Any, current: Evaluation | None) -> None:
        if baseline is None or current is None:
            self._runner.cancel()
            self.result = None
            self.table.setRowCount(0)
            self.shown_rows = []
            self.caption.setText("No comparison: Edit › Compare with another kernel or file…, or Edit › Pin as "
                                 "baseline and edit.")
            return
        label = self.label or "baseline"
        now = f"{current.state.kernel}"
        self.caption.setText("Aligning the instructions…")
        self._runner.submit(lambda _cancel, _progress: diff(baseline, current, label, now))

    def _finished(self, _gen: int, result: KernelDiff) -> None:
        self.result = result
        c = result.counts()
        self.caption.setText(
            f"Comparison: {result.before_label}. {c['same']} instructions the same ({c['cells_changed']} with "
            f"changed BLOCK cells), {c['renamed']} renamed, {c['changed']} changed, {c['added']} added, "
            f"{c['removed']} removed." + "".join(f" {n}." for n in result.notes))
        self._fill()

    def _fill(self) -> None:
        result = self.result
        rows = [] if result is None else [r for r in result.rows if r.marked or not self.only_changes.isChecked()]
        self.shown_rows = rows
        self.table.setRowCount(len(rows))
        text_color = self.palette().text().color()
        marked = current(self.palette()).qcolor("edited")
        for k, r in enumerate(rows):
            text = r.after_text or r.before_text
            if r.status in (CHANGED, RENAMED):
                text = f"{r.before_text}  →  {r.after_text}"
            cells = [r.status, "" if r.before is None else str(r.before), "" if r.after is None else str(r.after),
                     "" if r.before_share is None else f"{100 * r.before_share:.1f} %",
                     "" if r.after_share is None else f"{100 * r.after_share:.1f} %",
                     ", ".join(r.changed_cells), text]
            tint = TINTS.get(r.status)
            for col, value in enumerate(cells):
                item = QTableWidgetItem(value)
                if col in (1, 2, 3, 4):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if tint is not None:
                    item.setBackground(tint)
                elif col == 5 and r.changed_cells:
                    item.setBackground(marked)       # the edited-cell tint of the BLOCK table
                item.setForeground(text_color)
                if col == 6:
                    item.setToolTip(text)
                self.table.setItem(k, col, item)
        self.table.resizeColumnsToContents()

    def _picked(self) -> None:
        rows = {i.row() for i in self.table.selectedItems()}
        if len(rows) == 1:
            r = self.shown_rows[rows.pop()]
            if r.after is not None:
                self.instructionPicked.emit(r.after)

    def shutdown(self) -> None:
        self._runner.stop()
