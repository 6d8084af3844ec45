"""Bottleneck tab: the verdict of :mod:`engine.evaluation.verdict` — one sentence naming what
limits the kernel, its evidence, a table of every unit's utilisation and the warp-cycles per
stall cause, and a bar chart of the same shares.

The verdict is read from the simulation's aggregates only when the tab is on screen: an edit
whose result nobody looks at costs the UI thread nothing here.
"""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.evaluation import Evaluation
from engine.evaluation.verdict import ISSUING, OUTSIDE, Verdict, explain
from gui.gantt.colors import STALL_PALETTE
from gui.panels.when_shown import WhenShown

UNIT_COLOUR = "#4e79a7"
ISSUE_COLOUR = "#59a14f"
HEADERS = ("what", "cycles", "share", "meaning")
UNIT_HELP = "busy cycles of this unit (Σ of its instructions' occupancy) / cycles of the run"
SHARE_HELP = ("warp-cycles in this state / resident warp-cycles (every warp, every cycle it is resident: "
              "issuing or waiting)")


class VerdictPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.sentence = QLabel("No simulation yet.")
        self.sentence.setObjectName("verdictSentence")
        self.sentence.setWordWrap(True)
        self.sentence.setTextFormat(Qt.TextFormat.RichText)
        self.sentence.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setObjectName("verdictTable")
        self.table.setHorizontalHeaderLabels(list(HEADERS))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.chart = pg.PlotWidget(background="w")
        self.chart.setObjectName("verdictChart")
        self.chart.setMenuEnabled(False)
        self.chart.setMouseEnabled(x=False, y=False)
        self.chart.hideButtons()
        self.chart.setLabel("bottom", "share (%)")
        self.chart.getViewBox().invertY(True)
        self.bars: pg.BarGraphItem | None = None
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.chart)
        split.setSizes([220, 180])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.sentence)
        layout.addWidget(split, 1)
        self.verdict: Verdict | None = None
        # the simulation is what the verdict reads: a new one, a new verdict
        self._when_shown = WhenShown(self, lambda result, _sim: self.show_verdict(
            explain(result), result.errors.get("simulation", "")))

    def set_result(self, result: Evaluation) -> None:
        """Keep the newest evaluation; read its verdict now only if the tab is on screen."""
        self._when_shown.offer(result, result.simulation)

    def showEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        self._when_shown.run()

    def show_verdict(self, verdict: Verdict | None, problem: str = "") -> None:
        self.verdict = verdict
        if verdict is None:
            self.sentence.setText(html.escape(f"No verdict: {problem or 'the simulation did not run'}"))
            self.table.setRowCount(0)
            if self.bars is not None:
                self.chart.removeItem(self.bars)
                self.bars = None
            return
        evidence = "".join(f"<li>{html.escape(e)}</li>" for e in verdict.evidence)
        self.sentence.setText(f"<b>{html.escape(verdict.sentence)}</b><ul style='margin:2px'>{evidence}</ul>")
        rows: list[tuple[str, str, str, str, str]] = []     # what, cycles, share, meaning, colour
        for u in verdict.units:
            rows.append((f"{u.title} busy", f"{u.busy_cycles:,.0f}", f"{u.utilisation:.1%}", UNIT_HELP,
                         UNIT_COLOUR))
        for c in verdict.causes:
            share = "—" if c.cause in OUTSIDE else f"{c.share:.1%}"
            colour = ISSUE_COLOUR if c.cause == ISSUING else STALL_PALETTE.get(c.cause, "#808080")
            meaning = (SHARE_HELP if c.cause not in OUTSIDE
                       else "warp-cycles outside residency (not part of the shares)")
            rows.append((c.title, f"{c.warp_cycles:,.0f}", share, meaning, colour))
        for m in verdict.memory:
            rows.append((f"{m.level} memory", f"{m.requests:,} requests", "", ", ".join(m.details()), ""))
        self.table.setRowCount(len(rows))
        for k, (what, cycles, share, meaning, colour) in enumerate(rows):
            for col, text in enumerate((what, cycles, share, meaning)):
                item = QTableWidgetItem(text)
                if col in (1, 2):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if col == 0 and colour:
                    item.setData(Qt.ItemDataRole.DecorationRole, QColor(colour))
                item.setToolTip(meaning)
                self.table.setItem(k, col, item)
        self._draw_chart(verdict)

    def _draw_chart(self, verdict: Verdict) -> None:
        """Horizontal bars: every unit's utilisation, then the resident warp-cycle shares."""
        labels = [f"{u.title} busy" for u in verdict.units]
        values = [u.utilisation * 100 for u in verdict.units]
        brushes = [pg.mkBrush(UNIT_COLOUR)] * len(labels)
        for c in verdict.causes:
            if c.cause in OUTSIDE:
                continue
            labels.append(c.title)
            values.append(c.share * 100)
            brushes.append(pg.mkBrush(ISSUE_COLOUR if c.cause == ISSUING else STALL_PALETTE.get(c.cause, "#808080")))
        y = np.arange(len(labels), dtype=float)
        if self.bars is not None:
            self.chart.removeItem(self.bars)
        self.bars = pg.BarGraphItem(x0=np.zeros(len(y)), y=y, width=np.asarray(values), height=0.7,
                                    brushes=brushes, pen=pg.mkPen(None))
        self.chart.addItem(self.bars)
        axis = self.chart.getAxis("left")
        axis.setTicks([[(float(k), text) for k, text in enumerate(labels)]])
        self.chart.setXRange(0, 100, padding=0.02)
        self.chart.setYRange(-0.6, len(labels) - 0.4, padding=0)
