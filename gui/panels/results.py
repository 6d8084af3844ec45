"""Results panel: predicted cycles (and µs) of every model with the error against measured cycles,
the occupancy curve of every model with the current occupancy marked, the Many-BSP derivation
(each intermediate with its formula) and the warnings of the run."""

from __future__ import annotations

import html
import math
from dataclasses import replace

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from engine.errors import WarplineError
from engine.evaluation import FIGURE_HELP, FIGURE_TITLES, Evaluation, ModelResult
from engine.evaluation.caveats import MARK, Caveats, figure_caveats
from engine.evaluation.registry import model as model_spec
from engine.manybsp.device_figures import manybsp_figures
from engine.ncu import measured_cycles
from engine.profiles import ASSUMED, DERIVED, MISSING, PLACEHOLDER
from gui.curves import CurvesPlot
from gui.glossary import explain_term, set_header_tips
from gui.panels.assumptions import AssumptionsPanel
from gui.panels.compare import ComparePanel
from gui.panels.memory import MemoryPanel
from gui.panels.roofline import RooflinePanel
from gui.panels.sensitivity import SensitivityPanel
from gui.panels.verdict import VerdictPanel
from gui.session import Session
from gui.theme import changed_theme, current

COLUMNS = ("model", "sm_cycles", "kernel_cycles", "microseconds", "error")
COLUMN_TITLES = ("model", FIGURE_TITLES["sm_cycles"], FIGURE_TITLES["kernel_cycles"], FIGURE_TITLES["microseconds"],
                 "vs measured")
COLUMN_HELP = ("the model (hover for what it is)", FIGURE_HELP["sm_cycles"], FIGURE_HELP["kernel_cycles"],
               FIGURE_HELP["microseconds"], "(kernel cycles − measured) / measured; measured cycles include the "
               "launch cost")


# Equation-column labels of the rows that are not equations: a Many-BSP figure the profile does
# not state (by how it was obtained) and the refused prediction, with the theme colour (a field
# of gui.theme.Theme) that marks them.
REFUSED = "refused"
MARK_COLORS = {f"profile: {DERIVED}": "derived_text", f"profile: {ASSUMED}": "assumed_text",
               f"profile: {PLACEHOLDER}": "assumed_text", f"profile: {MISSING}": "error_text",
               REFUSED: "error_text"}


def derived_parameter_rows(result: Evaluation) -> list[tuple[str, str, str, str]]:
    """(name, value, mark, provenance) of each Many-BSP figure the result's profile does not state
    (none for a profile with a [manybsp] section); the mark is a key of MARK_COLORS."""
    profile = result.profile
    if profile is None or profile.manybsp is not None:
        return []
    figures = manybsp_figures(profile)
    return [(d.key, figures.value_text(d.key), f"profile: {d.kind}", d.provenance) for d in figures.derivation]


def _fmt(x: float | None, digits: int = 0) -> str:
    if x is None or not math.isfinite(x):
        return "—"
    return f"{x:,.{digits}f}"


class ResultsPanel(QWidget):
    message = Signal(str)
    error = Signal(str)     # a refused import: shown in the window's error banner

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self._updating = False
        self.headline = QLabel()
        self.headline.setObjectName("headline")
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.headline.setWordWrap(True)
        self.table = self._predictions_table()
        row = self._measured_row()
        # the occupancy curves (gui/curves.py: also what File › Export › Occupancy curves draws)
        self.plot_widget = CurvesPlot()
        self.plot, self.legend, self.marker = self.plot_widget.plot, self.plot_widget.legend, self.plot_widget.marker
        self._theme = current(self.palette())
        self._models_shown: Evaluation | None = None
        self._caveats = Caveats((), "")        # of the figures shown (engine.evaluation.caveats)
        self.derivation = self._derivation_table()
        self._derivation_rows: list[tuple[str, str, str, str]] = []
        self.messages = QPlainTextEdit()
        self.messages.setObjectName("messages")
        self.messages.setReadOnly(True)
        self.tabs = self._build_tabs(session)

        layout = QVBoxLayout(self)
        layout.addWidget(self.headline)
        layout.addWidget(self.table, 2)
        layout.addLayout(row)
        layout.addWidget(self.tabs, 3)
        self._apply_theme()
        self._follow(session)

    # ------------------------------------------------------------------ building

    @staticmethod
    def _predictions_table() -> QTableWidget:
        """Every model's figures, one row each."""
        table = QTableWidget(0, len(COLUMNS))
        table.setObjectName("predictionsTable")
        table.setHorizontalHeaderLabels(list(COLUMN_TITLES))
        for col, tip in enumerate(COLUMN_HELP):
            table.horizontalHeaderItem(col).setToolTip(tip)
        table.verticalHeader().setVisible(False)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        return table

    def _measured_row(self) -> QHBoxLayout:
        """The measured cycles, typed or imported from Nsight Compute."""
        self.measured = QDoubleSpinBox()
        self.measured.setObjectName("measuredSpin")
        self.measured.setRange(0, 1e15)
        self.measured.setDecimals(0)
        self.measured.setSpecialValueText("none")
        self.measured.setSuffix(" cycles")
        self.measured.setKeyboardTracking(False)
        self.import_button = QPushButton("Import NCU CSV…")
        self.import_button.setToolTip("Read the measured cycles of this kernel and launch from an Nsight "
                                      "Compute CSV (gpc__cycles_elapsed.max, median of repeats)")
        self.measured.setMinimumWidth(90)
        self.measured.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        row = QHBoxLayout()
        row.addWidget(QLabel("Measured"))
        row.addWidget(self.measured, 1)
        row.addWidget(self.import_button)
        return row

    @staticmethod
    def _derivation_table() -> QTableWidget:
        """The Many-BSP derivation: quantity, value, equation, formula."""
        derivation = QTableWidget(0, 4)
        derivation.setObjectName("derivationTable")
        derivation.setHorizontalHeaderLabels(["quantity", "value", "equation", "formula"])
        set_header_tips(derivation, (
            "A quantity of the Many-BSP derivation (hover a row for what it means).",
            "Its value for this launch, in cycles unless it is a count.",
            "The equation of the Many-BSP model that defines it (docs/manybsp.md), or how a profile figure "
            "was obtained.",
            "The equation with this launch's numbers put in."))
        derivation.verticalHeader().setVisible(False)
        derivation.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = derivation.horizontalHeader()
        for col in range(3):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        derivation.setWordWrap(True)   # formulas are long; rows grow to show them whole
        return derivation

    def _build_tabs(self, session: Session) -> QTabWidget:
        """Curves, Derivation, Bottleneck, Memory, Roofline, Sensitivity, Compare, Assumptions and
        Messages, each with its tooltip."""
        tabs = QTabWidget()
        tabs.addTab(self.plot_widget, "Curves")
        tabs.setTabToolTip(0, "Every model's kernel cycles (log scale) against the resident blocks per SM")
        tabs.addTab(self.derivation, "Derivation")
        tabs.setTabToolTip(1, "The Many-BSP derivation: every intermediate with its equation")
        self.verdict = VerdictPanel()
        tabs.addTab(self.verdict, "Bottleneck")
        tabs.setTabToolTip(2, "What limits the kernel: unit utilisation and warp-cycles per stall cause")
        self.memory = MemoryPanel()
        tabs.addTab(self.memory, "Memory")
        tabs.setTabToolTip(3, "Where each global access is served (L1, L2, DRAM) and the launch's bytes "
                              "per level, with the limiting level")
        self.roofline = RooflinePanel()
        tabs.addTab(self.roofline, "Roofline")
        tabs.setTabToolTip(tabs.indexOf(self.roofline), "The kernel's work per byte at L1, L2 and DRAM "
                           "against the profile's compute and bandwidth ceilings, with the bound named")
        self.sensitivity = SensitivityPanel(session)
        tabs.addTab(self.sensitivity, "Sensitivity")
        tabs.setTabToolTip(tabs.indexOf(self.sensitivity), "What-if: how far each latency, bandwidth, "
                           "the clock and the occupancy move the kernel cycles at ±X %, ranked")
        self.sensitivity.message.connect(self.message)
        self.compare = ComparePanel()
        tabs.addTab(self.compare, "Compare")
        tabs.setTabToolTip(tabs.indexOf(self.compare),
                           "The current result against the pinned baseline (Edit › Pin as baseline)")
        # engine.evaluation.assumptions: the guessed inputs, their effects and where to give them
        self.assumptions = AssumptionsPanel(session)
        tabs.addTab(self.assumptions, "Assumptions")
        tabs.setTabToolTip(tabs.indexOf(self.assumptions),
                           "Every input the models guessed (argument values, trip counts, data, the "
                           "launch): the value taken, why, how far the prediction moves if it is off, "
                           "and a field to give the real value")
        self.assumptions.countChanged.connect(self._count_assumptions)
        self.assumptions.message.connect(self.message)
        self.headline.linkActivated.connect(lambda _link: tabs.setCurrentWidget(self.assumptions))
        tabs.addTab(self.messages, "Messages")
        return tabs

    def _follow(self, session: Session) -> None:
        """The panel's own inputs, and what it redraws on each of the session's signals."""
        self.measured.valueChanged.connect(self._measured_edited)
        self.import_button.clicked.connect(self._import_ncu)
        session.modelsChanged.connect(self.show_models)
        session.modelsChanged.connect(self.roofline.set_result)
        session.derivationChanged.connect(self._show_derivation)
        session.sweepChanged.connect(self._show_curves)
        session.timelineChanged.connect(lambda ev: self.plot_widget.set_marker(ev.resident_blocks))
        session.timelineChanged.connect(self.verdict.set_result)
        session.timelineChanged.connect(self.memory.set_result)
        session.evaluationFinished.connect(self._show_messages)
        session.evaluationFinished.connect(self.compare.set_current)
        session.stateChanged.connect(self._show_measured)

    # ------------------------------------------------------------------ colours

    def _apply_theme(self) -> None:
        """The marked cells' colours in the system palette's theme (gui.theme; the curves plot
        follows the palette by itself)."""
        t = self._theme
        if self._models_shown is not None:
            self.show_models(self._models_shown)
        for k, cells in enumerate(self._derivation_rows):
            mark = MARK_COLORS.get(cells[2])
            for col in range(self.derivation.columnCount()):
                item = self.derivation.item(k, col)
                if item is not None and mark is not None:
                    item.setForeground(t.qcolor(mark))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        theme = changed_theme(self, event)
        if theme is not None:
            self._theme = theme
            self._apply_theme()

    # ------------------------------------------------------------------ showing

    def _show_measured(self, state) -> None:
        self._updating = True
        self.measured.setValue(state.measured_cycles or 0)
        self._updating = False

    def show_models(self, result: Evaluation) -> None:
        """Every model's figures, in registry order; the primary models also in the headline."""
        self._models_shown = result
        self._caveats = figure_caveats(result)
        measured = result.state.measured_cycles
        rows = list(result.models.values())
        head = []
        caveats = self._caveats
        for r in rows:
            spec = model_spec(r.model)
            if not spec.primary:
                continue
            if r.figures is None:
                head.append(f"<b>{spec.title}</b>: — <small>({html.escape(r.error[:120])})</small>")
                continue
            f = r.figures
            us = f" = {_fmt(f.microseconds, 2)} µs" if f.microseconds is not None else ""
            head.append(f"<b>{spec.title}</b>: {caveats.mark(_fmt(f.kernel_cycles))} kernel cycles{us} "
                        f"<small>({_fmt(f.sm_cycles)} SM cycles + {_fmt(f.launch_cycles)} launch cost)</small>")
        profile = result.profile.name if result.profile else "?"
        head.append(f"<small>{profile} at {result.clock_mhz:g} MHz, {result.resident_blocks} blocks/SM</small>")
        color = f' style="color:{self._theme.assumed_text}"'
        if caveats.guessed:
            head.append(f'<small{color}>{MARK} {html.escape(caveats.short())}: see the '
                        f'<a href="#assumptions">Assumptions</a> tab</small>')
        if caveats.profile:
            head.append(f"<small{color}>profile {html.escape(caveats.profile)}</small>")
        self.headline.setText("<br>".join(head))
        if self.table.rowCount() != len(rows):
            self.table.setRowCount(len(rows))
        for k, r in enumerate(rows):
            self._fill_row(k, r, measured)

    def _fill_row(self, k: int, r: ModelResult, measured: float | None) -> None:
        spec = model_spec(r.model)
        err = r.error_percent(measured)
        caveats = self._caveats
        figures = [_fmt(r.sm_cycles), _fmt(r.kernel_cycles), _fmt(r.microseconds, 3)]
        if r.figures is not None:
            figures = [caveats.mark(text) for text in figures]
        cells = [spec.title, *figures, "" if err is None else f"{err:+.1f} %"]
        bold = QFont()
        bold.setBold(spec.primary)
        tip = spec.explanation + (f"\n\n{r.note}" if r.note else "") + (f"\n\nNo figure: {r.error}" if r.error else "")
        if caveats.guessed and r.figures is not None:
            tip += f"\n\n{MARK} {caveats.short()}: {', '.join(a.subject for a in caveats.assumptions)}"
        for col, text in enumerate(cells):
            item = self.table.item(k, col)
            if item is None:
                item = QTableWidgetItem()
                if col:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(k, col, item)
            item.setText(text)
            item.setFont(bold)
            item.setForeground(self._theme.qcolor("error_text") if r.figures is None
                               else self.palette().text().color())
            item.setToolTip(tip)

    def _count_assumptions(self, count: int) -> None:
        index = self.tabs.indexOf(self.assumptions)
        self.tabs.setTabText(index, f"Assumptions ({count})" if count else "Assumptions")

    def _show_messages(self, result: Evaluation) -> None:
        lines = [f"[{stage}] {msg}" for stage, msg in result.errors.items()]
        lines += result.warnings
        self.messages.setPlainText("\n".join(lines) if lines else "No warnings.")
        index = self.tabs.indexOf(self.messages)
        self.tabs.setTabText(index, f"Messages ({len(lines)})" if lines else "Messages")

    @property
    def curves(self) -> dict[str, pg.PlotDataItem]:
        return self.plot_widget.curves

    def _show_curves(self, result: Evaluation) -> None:
        """Kernel cycles of every model at each resident-blocks count (the sweep's one rule)."""
        self.plot_widget.set_marker(result.resident_blocks)
        if result.sweep is not None:
            self.plot_widget.show_sweep(result.sweep)

    def _show_derivation(self, result: Evaluation) -> None:
        mb = result.manybsp
        quantities = list(mb.prediction.quantities.values()) if mb is not None else []
        # A profile without a [manybsp] section: first the figures it did not state, each marked
        # with how it was obtained, then why the equations did not run if they did not.
        rows = derived_parameter_rows(result) if mb is not None else []
        if mb is not None and mb.refused:
            rows.append(("Many-BSP prediction", "—", REFUSED, mb.refused))
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
            meaning = explain_term(cells[0])
            color = MARK_COLORS.get(cells[2])
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(f"{meaning}\n\n{cells[3]}" if meaning else cells[3])
                if color is not None:
                    # Not read from the profile: shown apart from the computed quantities.
                    font = item.font()
                    font.setItalic(True)
                    item.setFont(font)
                    item.setForeground(self._theme.qcolor(color))
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
            # the one validated reader: 0, negative, inf or NaN cycles are refused with file, row, column
            cycles = measured_cycles(path, state.kernel, state.launch.grid, state.launch.block)
        except WarplineError as exc:
            self.error.emit(f"Cannot import the measured cycles: {exc}")
            return
        self.session.apply(replace(state, measured_cycles=cycles), "Import measured cycles")
        self.message.emit(f"measured {cycles:,.0f} cycles from {path}")
