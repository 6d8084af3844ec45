"""The SASS tab: the kernel's SASS as ptxas assembles it for the profile's GPU, each line with its
PTX instruction (the BLOCK table's row) and its predicted share of the run's warp-cycles split by
stall cause (:mod:`engine.evaluation.source_counters`). Importing an Nsight Compute source page
(``ncu --page source --csv``, SASS or CUDA view) adds the measured samples and stall reasons per
line, the disagreement in percentage points, and ranks the lines by it.

The listing takes a ptxas run (a second or two): it is made in the background the first time the
tab is shown for a kernel, and the predictions follow every new result while the tab is shown.
Picking a line selects its PTX instruction in the BLOCK table; selecting BLOCK-table rows marks
their SASS lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from engine.errors import WarplineError
from engine.evaluation.source_counters import (
    CAUSES,
    FOLDED,
    LineComparison,
    SourceComparison,
    compare_sass,
    compare_source,
    predicted_sass,
    views_for,
)
from engine.ncu_source import VIEW_SASS, SourceView, load_source_csv
from engine.sass import SassUnavailable, sass_listing, sass_map
from gui.background import BackgroundRunner
from gui.panels.when_shown import WhenShown
from gui.theme import PALETTE_EVENTS, current

HEADERS = ("address", "#", "predicted", "top cause", "measured", "Δ points", "SASS")
HELP = ("The instruction's byte offset in the kernel (as Nsight Compute shows it, less the kernel's base).",
        "The PTX instruction (BLOCK-table row) it belongs to; blank for code of no instruction (slow paths).",
        "Its share of the run's predicted warp-cycles (issuing it and waiting to issue it).",
        "The cause most of its predicted warp-cycles go to (hover for every cause).",
        "Its share of the warp-state samples Nsight Compute measured (imported source counters).",
        "Measured minus predicted share, in percentage points: the largest either way are the "
        "model's worst lines.",
        "The SASS instruction ptxas makes of the PTX for the profile's GPU (or the CUDA source line).")
CAUSE_WORDS = {"issuing": "issuing", "memory_dependency": "memory", "compute_dependency": "arithmetic",
               "barrier": "barrier", "subsystem_busy": "busy unit", "issue_limit": "issue slot", "other": "other"}


def _causes_text(causes: dict[str, float]) -> str:
    return ", ".join(f"{CAUSE_WORDS.get(c, c)} {100 * v:.0f} %" for c, v in
                     sorted(causes.items(), key=lambda item: -item[1]) if v >= 0.005) or "—"


class LinesModel(QAbstractTableModel):
    """The table's rows: one per line (SASS or source), computed by the engine; only what is on
    screen is formatted, so an edit's refresh costs nothing per row."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lines: list[LineComparison] = []
        self.measured = False
        self.sass = True
        self.marked: set[int] = set()
        self.theme: Any = None
        self.text_color = QColor()
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.mono = mono

    def set_lines(self, lines: list[LineComparison], measured: bool, sass: bool, theme: Any,
                  text_color: QColor) -> None:
        self.beginResetModel()
        self.lines, self.measured, self.sass, self.theme, self.text_color = lines, measured, sass, theme, text_color
        self.endResetModel()

    def set_marked(self, marked: set[int]) -> None:
        self.marked = set(marked)
        if self.lines:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self.lines) - 1, len(HEADERS) - 1))

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(self.lines)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            if not self.sass and section in (0, 6):
                return "line" if section == 0 else "source"
            return HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return HELP[section]
        return None

    def text(self, row: int, column: int) -> str:
        line = self.lines[row]
        if column == 0:
            return f"{line.address:#06x}" if line.address is not None else "" if line.key == FOLDED else str(line.key)
        if column == 1:
            return " ".join(str(i) for i in line.instructions[:3]) + (" …" if len(line.instructions) > 3 else "")
        if column == 2:
            return f"{100 * line.predicted_share:.2f} %" if line.predicted else ""
        if column == 3:
            top = max(line.predicted_causes, key=line.predicted_causes.get, default="")
            return CAUSE_WORDS.get(top, top)
        if column == 4:
            return "" if line.measured_share is None else f"{100 * line.measured_share:.2f} %"
        if column == 5:
            return "" if line.disagreement is None else f"{line.disagreement:+.2f}"
        return line.text

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, column = index.row(), index.column()
        line = self.lines[row]
        if role == Qt.ItemDataRole.DisplayRole:
            return self.text(row, column)
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (1, 2, 4, 5):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.FontRole and column in (0, 6):
            return self.mono
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 3:
                return ("predicted: " + _causes_text(line.predicted_causes)
                        + ("\nmeasured: " + _causes_text(line.measured_causes) if self.measured else ""))
            if column == 6:
                return line.text
        if role == Qt.ItemDataRole.ForegroundRole:
            if column == 5 and line.disagreement and self.theme is not None:
                return self.theme.qcolor("worse" if line.disagreement > 0 else "better")
            return self.text_color
        if role == Qt.ItemDataRole.BackgroundRole and any(i in self.marked for i in line.instructions):
            return QColor(255, 200, 0, 70)
        return None


class SassPanel(QWidget):
    instructionPicked = Signal(int)     # 1-based PTX instruction
    message = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.caption = QLabel("The SASS is assembled when this tab is first shown.")
        self.caption.setObjectName("sassCaption")
        self.caption.setWordWrap(True)
        self.view_box = QComboBox()
        self.view_box.setObjectName("sassView")
        self.view_box.addItem("SASS")
        self.view_box.setToolTip("The listing: the SASS, or the CUDA lines of an imported source page")
        self.view_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.view_box.setMinimumContentsLength(6)
        self.ranked_box = QCheckBox("ranked")
        self.ranked_box.setObjectName("sassRanked")
        self.ranked_box.setEnabled(False)
        self.ranked_box.setToolTip("The largest disagreements first: lines ordered by |measured − predicted| "
                                   "share (after an import)")
        self.import_button = QPushButton("Import ncu…")
        self.import_button.setToolTip("Import source counters: an Nsight Compute source page as CSV (ncu --import "
                                      "R.ncu-rep --page source --csv --print-source sass, or cuda): measured "
                                      "samples and stall reasons per line")
        self.import_button.clicked.connect(self._import_dialog)
        # the controls ask for no width: the tab shares a splitter with the BLOCK table, whose
        # share the user (and a small screen) decides; squeezed, they are clipped, not the table
        controls = QWidget()
        controls.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        row = QHBoxLayout(controls)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.view_box)
        row.addWidget(self.ranked_box, 1)
        row.addWidget(self.import_button)
        self.model_ = LinesModel(self)
        self.table = QTableView()
        self.table.setObjectName("sassTable")
        self.table.setModel(self.model_)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._picked())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.caption)
        layout.addWidget(controls)
        layout.addWidget(self.table, 1)

        self.inputs: Any = None
        self.result: Any = None
        self.listing: Any = None            # engine.sass.SassListing of the open kernel
        self.positions: dict[int, tuple[int, ...]] = {}
        self.measured: list[SourceView] = []
        self.measured_path: Path | None = None
        self.lines: list[LineComparison] = []
        self.comparison: SourceComparison | None = None
        self.shown_lines: list[LineComparison] = []
        self._listing_key: Any = None
        self._marked: set[int] = set()
        self._shape: tuple = ()
        self._runner = BackgroundRunner("warpline-sass", self)
        self._runner.finished.connect(self._finished)
        self._runner.failed.connect(lambda _g, message: self.caption.setText(message.splitlines()[0]))
        self._when_shown = WhenShown(self, self._draw)
        self.view_box.currentIndexChanged.connect(lambda _i: self._when_shown.run(force=True))
        self.ranked_box.toggled.connect(lambda _on: self._fill())

    # ---- inputs ----------------------------------------------------------------------------------
    def set_inputs(self, inputs: Any) -> None:
        """A kernel was opened: its listing is made again when shown; imported counters of another
        kernel no longer apply."""
        if inputs is not self.inputs:
            self.inputs = inputs
            self.listing, self.positions, self._listing_key = None, {}, None
            self.lines, self.comparison = [], None
            if self.measured and inputs is not None:
                try:
                    views_for(self.measured, inputs.kernel_name)
                except WarplineError:
                    self._forget_measured()

    def set_result(self, result: Any) -> None:
        self.result = result
        self._when_shown.offer(result)

    def showEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        self._when_shown.run()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        if event.type() in PALETTE_EVENTS and getattr(self, "shown_lines", None):
            self._fill()

    def wait(self, msecs: int = 60_000) -> bool:
        return self._runner.wait(msecs)

    # ---- the listing (background) ------------------------------------------------------------
    def _arch(self, result: Any) -> int | None:
        profile = getattr(result, "profile", None)
        return profile.device.sm_version if profile is not None else None

    def _draw(self, result: Any) -> None:
        inputs = self.inputs
        if inputs is None or result is None or result.simulation is None:
            return
        key = (id(inputs), self._arch(result))
        if self.listing is None or self._listing_key != key:
            if self._listing_key != ("pending", key):
                self._listing_key = ("pending", key)
                self.caption.setText("Assembling the kernel with ptxas…")
                arch = self._arch(result)
                self._runner.submit(lambda _cancel, _progress: ("listing", key, sass_listing(
                    inputs.path, inputs.kernel_name, arch, module=inputs.module), sass_map(
                    inputs.path, inputs.kernel_name, arch, module=inputs.module)))
            return
        self._compute()

    def _finished(self, _gen: int, payload: tuple) -> None:
        if payload[0] == "listing":
            self._listed(*payload[1:])
        else:
            self._computed(*payload[1:])

    def _listed(self, key: Any, listing: Any, smap: Any) -> None:
        if isinstance(listing, SassUnavailable) or isinstance(smap, SassUnavailable):
            why = listing.reason if isinstance(listing, SassUnavailable) else smap.reason
            self._listing_key = key
            self.caption.setText(f"No SASS for this kernel: {why}")
            return
        self.listing, self.positions, self._listing_key = listing, dict(smap.positions), key
        self._compute()

    # ---- predictions and measurements -------------------------------------------------------------
    def _compute(self) -> None:
        """The prediction per line (and the measured page's match) of the newest result, in the
        background: a large trace's stalls take a while to attribute."""
        result, listing, positions = self.result, self.listing, self.positions
        if result is None or listing is None:
            return
        view = self._measured_view()

        def work(_cancel: Any, _progress: Any) -> tuple:
            if view is None:
                return "lines", result, None, predicted_sass(result, listing, positions)
            comparison = (compare_sass(result, listing, positions, view) if view.view == VIEW_SASS
                          else compare_source(result, view))
            return "lines", result, comparison, comparison.lines

        self._runner.submit(work)

    def _computed(self, result: Any, comparison: SourceComparison | None, lines: list[LineComparison]) -> None:
        if result is not self.result:
            return                  # a newer result's job follows
        self.comparison, self.lines = comparison, lines
        self._caption()
        self._fill()

    def _measured_view(self) -> SourceView | None:
        """The imported table the view box shows (entry 0 is the prediction alone)."""
        index = self.view_box.currentIndex()
        return self.measured[index - 1] if self.measured and 1 <= index <= len(self.measured) else None

    def _caption(self) -> None:
        listing = self.listing
        text = f"{len(listing.lines)} SASS instructions for {listing.arch} (ptxas)"
        c = self.comparison
        if c is not None:
            text += (f"; {self.measured_path.name if self.measured_path else 'measured'}: {c.total_samples:,.0f} "
                     f"samples, matched by {c.matched_by}")
            ranked = c.ranked(1)
            if ranked:
                worst = ranked[0]
                where = f"{worst.address:#06x}" if worst.address is not None else f"line {worst.key}"
                text += (f". Largest disagreement: {where} ({worst.text[:40]}), measured "
                         f"{100 * (worst.measured_share or 0):.1f} % against {100 * worst.predicted_share:.1f} % "
                         "predicted")
            text += "".join(f". {n}" for n in c.notes)
        self.caption.setText(text + ".")

    def _fill(self) -> None:
        lines = list(self.lines)
        measured = self.comparison is not None
        self.ranked_box.setEnabled(measured)
        if measured and self.ranked_box.isChecked():
            lines.sort(key=lambda line: -abs(line.disagreement or 0.0))
        self.shown_lines = lines
        sass = self.comparison is None or self.comparison.view == VIEW_SASS
        shape = (len(lines), measured, sass, id(self.listing))
        self.model_.set_lines(lines, measured, sass, current(self.palette()), self.palette().text().color())
        self.table.setColumnHidden(4, not measured)
        self.table.setColumnHidden(5, not measured)
        if shape != self._shape:
            # widths once per listing (or view), not per edit: measuring every row is what costs
            self._shape = shape
            self.table.resizeColumnsToContents()

    def _paint_marks(self) -> None:
        """Tint the lines of the instructions selected in the BLOCK table."""
        self.model_.set_marked(self._marked)

    # ---- import ---------------------------------------------------------------------------------
    def import_counters(self, path: str | Path) -> None:
        """Read an ncu source page (WarplineError when it is not one, or has no table of this kernel)."""
        views = load_source_csv(path)
        if self.inputs is not None:
            views = views_for(views, self.inputs.kernel_name)
        self.measured, self.measured_path = views, Path(path)
        self.view_box.blockSignals(True)
        self.view_box.clear()
        self.view_box.addItem("SASS (predicted only)")
        for view in views:
            self.view_box.addItem("measured SASS" if view.view == VIEW_SASS else
                                  f"measured CUDA lines{' of ' + view.file if view.file else ''}")
        self.view_box.setCurrentIndex(1)
        self.view_box.blockSignals(False)
        self.ranked_box.setChecked(True)
        self._when_shown.run(force=True)

    def _forget_measured(self) -> None:
        self.measured, self.measured_path = [], None
        self.view_box.blockSignals(True)
        self.view_box.clear()
        self.view_box.addItem("SASS")
        self.view_box.blockSignals(False)

    def _import_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import an Nsight Compute source page", "",
                                              "CSV (*.csv);;All files (*)")
        if not path:
            return
        try:
            self.import_counters(path)
        except WarplineError as exc:
            self.message.emit(f"Not imported: {exc}")
            self.caption.setText(f"Not imported: {exc}")

    # ---- selection ------------------------------------------------------------------------------
    def select_line(self, row: int) -> None:
        """Select (and scroll to) a row of the table as shown."""
        self.table.selectRow(row)
        self.table.scrollTo(self.model_.index(row, 0), QAbstractItemView.ScrollHint.PositionAtCenter)

    def _picked(self) -> None:
        rows = {i.row() for i in self.table.selectionModel().selectedRows()}
        if len(rows) == 1:
            line = self.shown_lines[rows.pop()]
            if line.instructions:
                self.instructionPicked.emit(line.instructions[0])

    def mark_instructions(self, rows: Any) -> None:
        """Mark the SASS lines of the BLOCK-table rows selected (InstructionRow objects)."""
        marked = {r.index for r in rows}
        if marked != self._marked:
            self._marked = marked
            self._paint_marks()

    def shutdown(self) -> None:
        self._runner.stop()


__all__ = ["CAUSES", "SassPanel"]
