"""Compare tab: the current result against the pinned baseline (``engine.evaluation.compare``):
every model's kernel cycles, the warp-cycle shares per stall cause and both verdicts, with the
differences. Filled only while the tab is on screen."""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, Qt
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
from engine.evaluation.compare import BaselineFigures, CompareRow, compare
from gui.axes import compact
from gui.glossary import set_header_tips
from gui.panels.when_shown import WhenShown
from gui.theme import PALETTE_EVENTS
from gui.theme import current as current_theme

HEADERS = ("", "baseline", "current", "Δ", "Δ %")
HEADER_HELP = ("A model (its kernel cycles) or a state of the warps (its share of the resident warp-cycles).",
               "The pinned baseline's figure (Edit › Pin as baseline).",
               "The figure of what the window shows now.",
               "Current minus baseline: cycles, or percentage points of a share (red: more cycles).",
               "The difference relative to the baseline's cycles, in %.")


def _cells(row: CompareRow, short: bool = False) -> list[str]:
    """The row's cells; ``short``: cycles with three significant digits (44.1k) for a narrow
    table (the exact figures are in the tooltips)."""
    if row.section == "bottleneck":
        return ["bottleneck", row.baseline_text, row.current_text, "", ""]
    if row.section == "model":
        def num(x: float | None, sign: bool = False) -> str:
            if x is None:
                return "—"
            if short:
                return ("+" if sign and x > 0 else "") + compact(x)
            return f"{x:+,.0f}" if sign else f"{x:,.0f}"
        diff = row.difference
        rel = row.relative
        return [row.title, num(row.baseline), num(row.current), "" if diff is None else num(diff, True),
                "" if rel is None else f"{100 * rel:+.1f} %"]

    def pct(x: float | None) -> str:
        return "—" if x is None else f"{100 * x:.1f} %"
    diff = row.difference
    return [row.title, pct(row.baseline), pct(row.current),
            "" if diff is None else f"{100 * diff:+.1f} points", ""]


class ComparePanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.caption = QLabel("No baseline: Edit › Pin as baseline keeps the current result to compare with.")
        self.caption.setWordWrap(True)
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setObjectName("compareTable")
        self.table.setHorizontalHeaderLabels(list(HEADERS))
        set_header_tips(self.table, HEADER_HELP)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.table.horizontalHeader()
        # the figures keep their width; the titles take what is left (elided, whole on hover), so
        # the Δ columns are never cut off however narrow the dock (1366 x 768 included)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setStretchLastSection(False)
        self.short = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.verdicts = QLabel()
        self.verdicts.setObjectName("compareVerdicts")
        self.verdicts.setWordWrap(True)
        self.verdicts.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(self.caption)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.verdicts)
        self.rows: list[CompareRow] = []
        self.baseline: Evaluation | BaselineFigures | None = None
        self.label = ""
        self.current: Evaluation | None = None
        self._when_shown = WhenShown(self, self._draw)

    def set_baseline(self, baseline: Evaluation | BaselineFigures | None, label: str = "") -> None:
        self.baseline, self.label = baseline, label
        self._when_shown.offer(self.baseline, self.current, self.label)
        self._when_shown.run()       # pinning or clearing shows at once, on screen or not

    def set_current(self, current: Evaluation) -> None:
        self.current = current
        self._when_shown.offer(self.baseline, self.current, self.label)

    def showEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        self._when_shown.run()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        if event.type() in PALETTE_EVENTS and getattr(self, "rows", None):
            self._draw(self.baseline, self.current, self.label)     # the differences' colours

    def _draw(self, baseline: Evaluation | BaselineFigures | None, current: Evaluation | None,
              label: str) -> None:
        if baseline is None or current is None:
            self.rows = []
            self.table.setRowCount(0)
            self.verdicts.setText("")
            self.caption.setText("No baseline: Edit › Pin as baseline keeps the current result to compare with.")
            return
        self.caption.setText(f"Baseline: {label}. Kernel cycles per model; warp-cycles as shares of the "
                             "resident warp-cycles.")
        self.rows = compare(baseline, current)
        # the verdicts are sentences: below the table, where they do not widen its columns
        verdict = next(r for r in self.rows if r.section == "bottleneck")
        self.verdicts.setText(f"<b>Bottleneck, baseline:</b> {html.escape(verdict.baseline_text)}<br>"
                              f"<b>Bottleneck, current:</b> {html.escape(verdict.current_text)}")
        self._fill()

    def _fits(self, short: bool) -> bool:
        """Whether the figure columns and a legible title column fit the table's width."""
        metrics = self.table.fontMetrics()
        shown = [r for r in self.rows if r.section != "bottleneck"]
        widths = [max([metrics.horizontalAdvance(h) for h in HEADERS[c:c + 1]]
                      + [metrics.horizontalAdvance(_cells(r, short)[c]) for r in shown]) + 14
                  for c in range(1, len(HEADERS))]
        return sum(widths) + 90 <= self.table.viewport().width()

    def resizeEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        if self.rows and self._fits(False) == self.short:
            self._fill()

    def _fill(self) -> None:
        self.short = not self._fits(False)
        shown = [r for r in self.rows if r.section != "bottleneck"]
        self.table.setRowCount(len(shown))
        for k, row in enumerate(shown):
            full = _cells(row)
            for col, text in enumerate(_cells(row, self.short)):
                item = QTableWidgetItem(text)
                item.setToolTip(full[col] if col else row.title)
                if col and row.section != "bottleneck":
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                diff = row.difference
                if col >= 3 and row.section == "model" and diff:
                    # more cycles is worse
                    item.setForeground(current_theme(self.palette()).qcolor("worse" if diff > 0 else "better"))
                self.table.setItem(k, col, item)
