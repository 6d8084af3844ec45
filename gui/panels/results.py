"""Results panel: predicted cycles (and µs) of every model with the error against measured cycles,
the occupancy curve of every model with the current occupancy marked, the Many-BSP derivation
(each intermediate with its formula) and the warnings of the run."""

from __future__ import annotations

import math
from dataclasses import replace

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from engine.errors import WarplineError
from engine.workbench import MANYBSP_STAGE, WorkbenchResult, read_ncu_cycles
from gui.session import Session

PRIMARY = ("Many-BSP", "Pipeline simulation")
PEN_COLORS = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
              "#17becf", "#ff7f0e", "#393b79", "#637939")


def _fmt(x: float | None, digits: int = 0) -> str:
    if x is None:
        return "—"
    return f"{x:,.{digits}f}"


class ResultsPanel(QWidget):
    message = Signal(str)

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self._updating = False
        self.headline = QLabel()
        self.headline.setObjectName("headline")
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.headline.setWordWrap(True)

        self.table = QTableWidget(0, 4)
        self.table.setObjectName("predictionsTable")
        self.table.setHorizontalHeaderLabels(["model", "cycles", "µs", "error vs measured"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)

        self.measured = QDoubleSpinBox()
        self.measured.setObjectName("measuredSpin")
        self.measured.setRange(0, 1e15)
        self.measured.setDecimals(0)
        self.measured.setSpecialValueText("none")
        self.measured.setSuffix(" cycles")
        self.measured.setKeyboardTracking(False)
        self.import_button = QPushButton("Import Nsight Compute CSV…")
        row = QHBoxLayout()
        row.addWidget(QLabel("Measured"))
        row.addWidget(self.measured, 1)
        row.addWidget(self.import_button)

        self.plot = pg.PlotWidget(background="w")
        self.plot.setObjectName("occupancyPlot")
        self.plot.setLabel("bottom", "resident blocks per SM")
        self.plot.setLabel("left", "predicted cycles (log scale)")
        # Log scale: the models differ by orders of magnitude (WFG vs Roofline) and still need to be
        # told apart where they crowd together.
        self.plot.setLogMode(x=False, y=True)
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        # Two columns on a translucent panel: short enough to stay above the crowded low curves.
        self.legend = self.plot.addLegend(offset=(-10, 10), labelTextSize="8pt", colCount=2,
                                          brush=pg.mkBrush(255, 255, 255, 210))
        self.marker = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#444", width=2,
                                                                             style=Qt.PenStyle.DashLine))
        self.plot.addItem(self.marker)
        self.curves: dict[str, pg.PlotDataItem] = {}
        self._shown_sweep: dict = {}

        self.derivation = QTableWidget(0, 4)
        self._derivation_rows: list[tuple[str, str, str, str]] = []
        self._headline_lines: dict[str, str] = {}       # model -> its line in the headline
        self.derivation.setObjectName("derivationTable")
        self.derivation.setHorizontalHeaderLabels(["quantity", "value", "equation", "formula"])
        self.derivation.verticalHeader().setVisible(False)
        self.derivation.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.derivation.horizontalHeader()
        for col in range(3):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.derivation.setWordWrap(True)   # formulas are long; rows grow to show them whole

        self.messages = QPlainTextEdit()
        self.messages.setObjectName("messages")
        self.messages.setReadOnly(True)

        self.tabs = QTabWidget()
        self.tabs.addTab(self.plot, "Occupancy curves")
        self.tabs.addTab(self.derivation, "Many-BSP derivation")
        self.tabs.addTab(self.messages, "Messages")

        layout = QVBoxLayout(self)
        layout.addWidget(self.headline)
        layout.addWidget(self.table, 2)
        layout.addLayout(row)
        layout.addWidget(self.tabs, 3)

        self.measured.valueChanged.connect(self._measured_edited)
        self.import_button.clicked.connect(self._import_ncu)
        session.resultChanged.connect(self.show_result)
        session.stateChanged.connect(self._show_measured)
        session.fileChanged.connect(self._headline_lines.clear)   # no line of another kernel stays

    # ------------------------------------------------------------------ showing

    def _show_measured(self, state) -> None:
        self._updating = True
        self.measured.setValue(state.measured_cycles or 0)
        self._updating = False

    def show_result(self, result: WorkbenchResult) -> None:
        measured = result.state.measured_cycles
        preds = result.predictions
        clock = result.profile.device.clock_mhz if result.profile else 0
        manybsp_pending = MANYBSP_STAGE in result.pending
        for p in preds:
            if p.model in PRIMARY:
                self._headline_lines[p.model] = (
                    f"<b>{p.model}</b>: {_fmt(p.cycles)} cycles"
                    + (f" ({_fmt(p.microseconds, 2)} µs)" if p.microseconds is not None else ""))
        if not manybsp_pending and "Many-BSP" not in {p.model for p in preds}:
            self._headline_lines.pop("Many-BSP", None)
        # While Many-BSP is still to come, its line from the previous state stays.
        head = [self._headline_lines[m] for m in PRIMARY if m in self._headline_lines]
        profile = result.profile.name if result.profile else "?"
        took = f", computed in {result.elapsed_s * 1000:.0f} ms" if result.complete else ", updating…"
        head.append(f"<small>{profile} at {clock:g} MHz, {result.resident_blocks} blocks/SM{took}</small>")
        self.headline.setText("<br>".join(head))

        shown = [self.table.item(k, 0).text() for k in range(self.table.rowCount()) if self.table.item(k, 0)]
        if not result.complete and all(p.model in shown for p in preds):
            # An early result (no peers or no sweep yet): refresh its rows, keep the others until
            # the later results arrive, so the table does not shrink and grow on every edit.
            for p in preds:
                self._fill_row(shown.index(p.model), p, measured)
        else:
            self.table.setRowCount(len(preds))
            for k, p in enumerate(preds):
                self._fill_row(k, p, measured)
        self._show_curves(result)
        if manybsp_pending:
            return    # the derivation and the messages come with the Many-BSP stage
        self._show_derivation(result)
        lines = [f"[{stage}] {msg}" for stage, msg in result.errors.items()]
        lines += result.warnings
        self.messages.setPlainText("\n".join(lines) if lines else "No warnings.")
        self.tabs.setTabText(2, f"Messages ({len(lines)})" if lines else "Messages")

    def _fill_row(self, k: int, p, measured: float | None) -> None:  # noqa: ANN001 - ModelPrediction
        err = p.error_percent(measured)
        cells = [p.model, _fmt(p.cycles), _fmt(p.microseconds, 2), "" if err is None else f"{err:+.1f} %"]
        bold = QFont()
        bold.setBold(True)
        for col, text in enumerate(cells):
            item = QTableWidgetItem(text)
            if col:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if p.model in PRIMARY:
                item.setFont(bold)
            if p.cycles is None and p.note:
                item.setForeground(QColor("#a00"))
            if p.note:
                item.setToolTip(p.note)
            self.table.setItem(k, col, item)

    def _show_curves(self, result: WorkbenchResult) -> None:
        self.marker.setValue(result.resident_blocks)
        if not result.complete and not result.sweep:
            return   # the sweep follows; keep the previous curves until then
        if result.sweep == self._shown_sweep:
            return
        self._shown_sweep = dict(result.sweep)
        names = list(result.sweep)
        if set(names) != set(self.curves):
            self.plot.clear()
            self.legend.clear()
            self.plot.addItem(self.marker)
            self.curves = {}
            for k, name in enumerate(names):
                color = PEN_COLORS[k % len(PEN_COLORS)]
                # Markers only on the two models of this app: scatter items are costly to repaint.
                marks = {"symbol": "o", "symbolSize": 6, "symbolBrush": color} if name in PRIMARY else {}
                pen = pg.mkPen(color, width=3 if name in PRIMARY else 1.5)
                self.curves[name] = self.plot.plot([], [], pen=pen, name=name, **marks)
        finite = [(x, y) for pts in result.sweep.values() for x, y in pts if 0 < y < float("inf")]
        for name, points in result.sweep.items():
            good = [(x, y) for x, y in points if 0 < y < float("inf")]
            self.curves[name].setData([x for x, _ in good], [y for _, y in good])
        if finite:
            # Explicit ranges instead of auto-range: pyqtgraph's auto-range walks every item on
            # each repaint, which made the plot the slowest part of a refresh.
            xs = [x for x, _ in finite]
            ys = [math.log10(y) for _, y in finite]
            vb = self.plot.getViewBox()
            vb.enableAutoRange(enable=False)
            vb.setRange(xRange=(min(xs) - 0.3, max(xs) + 0.3),
                        yRange=(min(ys) - 0.05, max(ys) + 0.05), padding=0)

    def _show_derivation(self, result: WorkbenchResult) -> None:
        mb = result.manybsp
        quantities = list(mb.prediction.quantities.values()) if mb is not None else []
        rows = []
        for q in quantities:
            value = q.value if not isinstance(q.value, float) or not q.value.is_integer() else int(q.value)
            rows.append((q.name, f"{value:g}" if isinstance(value, float) else str(value), q.equation, q.formula))
        if [(r[0], r[2], r[3]) for r in rows] == [(r[0], r[2], r[3]) for r in self._derivation_rows]:
            # Same quantities (an edit changed values, not the derivation): refresh the values in
            # place; rebuilding the items and re-measuring every row took ~10 ms an edit.
            for k, (old, new) in enumerate(zip(self._derivation_rows, rows, strict=True)):
                if old[1] != new[1]:
                    self.derivation.item(k, 1).setText(new[1])
            self._derivation_rows = rows
            return
        self._derivation_rows = rows
        self.derivation.setRowCount(len(rows))
        for k, cells in enumerate(rows):
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(cells[3])
                self.derivation.setItem(k, col, item)
        self.derivation.resizeRowsToContents()

    # ------------------------------------------------------------------ editing

    def _measured_edited(self, value: float) -> None:
        state = self.session.state
        if state is None or self._updating:
            return
        self.session.apply(replace(state, measured_cycles=value or None), f"Measured {value:g} cycles")

    def _import_ncu(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import Nsight Compute CSV", "", "CSV (*.csv);;All (*)")
        if path:
            self.import_ncu(path)

    def import_ncu(self, path: str) -> None:
        state = self.session.state
        if state is None:
            return
        try:
            cycles = read_ncu_cycles(path, state.kernel)
        except WarplineError as exc:
            self.message.emit(str(exc))
            return
        self.session.apply(replace(state, measured_cycles=cycles), "Import measured cycles")
        self.message.emit(f"measured {cycles:,.0f} cycles from {path}")
