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
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHeaderView,
    QLabel,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.evaluation import Evaluation
from engine.evaluation.verdict import ISSUING, OUTSIDE, Verdict, explain
from gui.gantt.colors import STALL_PALETTE
from gui.glossary import set_header_tips
from gui.panels.when_shown import WhenShown
from gui.theme import changed_theme, current, style_chart

UNIT_COLOUR = "#4e79a7"
ISSUE_COLOUR = "#59a14f"
HEADERS = ("what", "cycles", "share", "meaning")
HEADER_HELP = ("A unit of the SM (how busy it was), a state of the warps (issuing or waiting on one cause), "
               "or a memory level.",
               "Busy cycles of a unit, or warp-cycles spent in a state (a warp waiting one cycle counts one).",
               "A unit's busy cycles over the run's cycles, or the state's share of the resident warp-cycles.",
               "How the figure is computed.")
UNIT_HELP = "busy cycles of this unit (Σ of its instructions' occupancy) / cycles of the run"
SHARE_HELP = ("warp-cycles in this state / resident warp-cycles (every warp, every cycle it is resident: "
              "issuing or waiting)")
BAR_GAP_PX = 3            # between two bars' labels
BAR_LABEL_PT = 8          # the bars' labels, as small as the legends' text
AXIS_PX = 44              # the chart's bottom axis and its title


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
        set_header_tips(self.table, HEADER_HELP)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        # one line a row: the meaning column is elided, whole in each row's tooltip
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.chart = pg.PlotWidget()
        self.chart.setObjectName("verdictChart")
        self.chart.setMenuEnabled(False)
        self.chart.setMouseEnabled(x=False, y=False)
        self.chart.hideButtons()
        self.chart.setLabel("bottom", "share (%)")
        self.chart.getViewBox().invertY(True)
        font = QFont(self.chart.getAxis("left").font())
        font.setPointSizeF(BAR_LABEL_PT)
        self.chart.getAxis("left").setStyle(tickFont=font)
        self.bars: pg.BarGraphItem | None = None
        self._theme = current(self.palette())
        self._apply_theme()
        # The bars first (the figures at a glance), the table with every figure below them: it
        # scrolls within what the bars leave. The chart keeps a line per bar for its labels (they
        # would print over each other in a short dock): when the dock is shorter, the tab scrolls.
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.chart)
        split.addWidget(self.table)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)
        self.split = split
        self.table.setMinimumHeight(90)
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.sentence)
        layout.addWidget(split, 1)
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll_area.setWidget(content)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.scroll_area)
        self.verdict: Verdict | None = None
        # the simulation is what the verdict reads: a new one, a new verdict
        self._when_shown = WhenShown(self, lambda result, _sim: self.show_verdict(
            explain(result), result.errors.get("simulation", "")))

    def _apply_theme(self) -> None:
        t = self._theme
        style_chart(self.chart, self.chart, t)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        theme = changed_theme(self, event)
        if theme is not None:
            self._theme = theme
            self._apply_theme()

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
        line = QFontMetricsF(axis.style["tickFont"] or axis.font()).height()
        needed = int(len(labels) * (line + BAR_GAP_PX) + AXIS_PX)
        if self.chart.minimumHeight() != needed:
            self.chart.setMinimumHeight(needed)
            total = sum(self.split.sizes())
            if total > needed:
                self.split.setSizes([needed, total - needed])
        self.chart.setXRange(0, 100, padding=0.02)
        self.chart.setYRange(-0.6, len(labels) - 0.4, padding=0)
