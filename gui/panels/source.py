"""Source panel: the kernel's PTX file and the CUDA files its ``.loc`` lines name, read-only, with
line numbers; the selected instructions' lines are highlighted in each.

The files are found and read by :mod:`engine.sources`; a CUDA file that is not at hand gets a tab
that says where it was looked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from PySide6.QtCore import QEvent, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontDatabase, QPainter, QPaintEvent, QTextCursor, QTextFormat
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from engine.evaluation import Evaluation
from engine.evaluation.hotspots import Hotspots, LineHeat, hotspots
from engine.inputs import KernelInputs
from engine.manybsp.rows import InstructionRow
from engine.sources import SourceText, cuda_sources, location_files, read_source, visible_location
from gui.models.block_table import HEAT_RGB
from gui.panels.when_shown import WhenShown
from gui.theme import PALETTE_EVENTS, current

HEAT_STRIP = 6            # pixels of the gutter's left edge coloured by a line's heat
# A PTX file larger than this shows only the open kernel's lines: laying out a whole 25 MB library
# would hold the UI thread for seconds (and a few hundred MB) for lines nobody reads.
WHOLE_FILE_BYTES = 2 << 20


def heat_colour(level: float) -> QColor:
    return QColor(*HEAT_RGB, int(round(40 + 215 * min(max(level, 0.0), 1.0))))


class _Gutter(QWidget):
    def __init__(self, view: CodeView) -> None:
        super().__init__(view)
        self.view = view

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(self.view.gutter_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        self.view.paint_gutter(event)


class CodeView(QPlainTextEdit):
    """Read-only text with line numbers; :meth:`highlight_lines` marks whole lines."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.highlighted: list[int] = []     # 1-based lines
        self.first_line = 1                  # the file's line number of the first line shown
        self.heat: dict[int, float] = {}     # 1-based line -> share of the hottest line (0..1]
        self.heat_tips: dict[int, str] = {}
        self._centre_on: int | None = None   # line to centre once the view has its real size
        self._gutter = _Gutter(self)
        self.blockCountChanged.connect(self._fit_gutter)
        self.updateRequest.connect(self._scroll_gutter)
        self.verticalScrollBar().actionTriggered.connect(self._user_scrolled)
        self._fit_gutter()

    def set_lines(self, text: str, first_line: int = 1) -> None:
        """Show ``text`` as the file's lines from ``first_line`` on (numbers, highlights and heat
        use the file's line numbers)."""
        self.first_line = first_line
        self.setPlainText(text)
        self._fit_gutter()

    def gutter_width(self) -> int:
        digits = len(str(max(1, self.first_line + self.blockCount() - 1)))
        return 10 + HEAT_STRIP + self.fontMetrics().horizontalAdvance("9") * digits

    def set_heat(self, heat: dict[int, float], tips: dict[int, str] | None = None) -> None:
        """Colour the gutter of each line by its share of the simulated warp-cycles."""
        self.heat = dict(heat)
        self.heat_tips = dict(tips or {})
        self._gutter.update()

    def _fit_gutter(self) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _scroll_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())

    def resizeEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        self._centre()
        r = self.contentsRect()
        self._gutter.setGeometry(QRect(r.left(), r.top(), self.gutter_width(), r.height()))

    def paint_gutter(self, event: QPaintEvent) -> None:
        painter = QPainter(self._gutter)
        theme = current(self.palette())
        line_fill = theme.qcolor("line_fill")
        painter.fillRect(event.rect(), theme.qcolor("gutter_fill"))
        marked = set(self.highlighted)
        block = self.firstVisibleBlock()
        number = block.blockNumber()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        bottom = top + round(self.blockBoundingRect(block).height())
        height = self.fontMetrics().height()
        while block.isValid() and top <= event.rect().bottom():
            if block.isVisible() and bottom >= event.rect().top():
                line = number + self.first_line
                if line in marked:
                    painter.fillRect(0, top, self._gutter.width(), bottom - top, line_fill)
                level = self.heat.get(line)
                if level:
                    painter.fillRect(0, top, HEAT_STRIP, bottom - top, heat_colour(level))
                painter.setPen(theme.qcolor("gutter_text"))
                painter.drawText(0, top, self._gutter.width() - 5, height, Qt.AlignmentFlag.AlignRight,
                                 str(line))
            block = block.next()
            top = bottom
            bottom = top + round(self.blockBoundingRect(block).height())
            number += 1

    def highlight_lines(self, lines: Iterable[int], scroll: bool = True) -> None:
        """Mark these 1-based lines (and scroll the first into the middle of the view)."""
        first = self.first_line
        wanted = sorted({int(n) for n in lines if first <= int(n) < first + self.blockCount()})
        selections = []
        # one selection per run of consecutive lines: a superstep can span hundreds of them
        runs: list[tuple[int, int]] = []
        for n in wanted:
            if runs and n == runs[-1][1] + 1:
                runs[-1] = (runs[-1][0], n)
            else:
                runs.append((n, n))
        doc = self.document()
        line_fill = current(self.palette()).qcolor("line_fill")
        for start, last in runs:
            cursor = QTextCursor(doc.findBlockByNumber(start - first))
            end = doc.findBlockByNumber(last - first)
            cursor.setPosition(end.position(), QTextCursor.MoveMode.KeepAnchor)
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(line_fill)
            selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            selection.cursor = cursor
            selections.append(selection)
        self.setExtraSelections(selections)
        self.highlighted = wanted
        self._gutter.update()
        if scroll and wanted:
            self.centre_line(wanted[0])

    def centre_line(self, line: int) -> None:
        """Put 1-based ``line`` in the middle of the view. A hidden view (another tab is in front)
        has no real height yet: centring then would leave the line outside the view once it shows,
        so it is done again when the view is shown or resized."""
        self._centre_on = line
        self._centre()

    def _centre(self) -> None:
        if self._centre_on is None:
            return
        block = self.document().findBlockByNumber(max(0, self._centre_on - self.first_line))
        self.setTextCursor(QTextCursor(block))
        # centerCursor() scrolls by blocks and stops a few lines short on a fresh layout; set the
        # scroll position from the line count of the viewport instead.
        visible_lines = max(1, self.viewport().height() // max(1, self.fontMetrics().lineSpacing()))
        bar = self.verticalScrollBar()
        bar.setValue(max(0, min(bar.maximum(), block.blockNumber() - visible_lines // 2)))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        if event.type() in PALETTE_EVENTS and getattr(self, "highlighted", None):
            self.highlight_lines(self.highlighted, scroll=False)     # the marked lines' colour

    def _user_scrolled(self, _action: int) -> None:
        self._centre_on = None         # the reader moved: a later resize keeps their position

    def showEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        self._centre()


HOT_HEADERS = ("line", "share", "issue", "stall", "instructions")
HOT_HELP = ("PTX line, or CUDA file:line from .loc", "share of the run's resident warp-cycles",
            "warp-cycles issuing the line's instructions", "warp-cycles waiting to issue them",
            "the line's instructions (BLOCK table numbers)")


class _NumberItem(QTableWidgetItem):
    """Sorts by the number it was given, not by its text."""

    def __init__(self, text: str, value: float) -> None:
        super().__init__(text)
        self.value = value
        self.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        return self.value < getattr(other, "value", 0.0)


class SourcePanel(QWidget):
    """A tab for the PTX file, one per CUDA file of the kernel, and the hot spots: the simulated
    warp-cycles per PTX and CUDA line (a sortable table; the gutters show the same as colour)."""

    instructionsPicked = Signal(object)     # 1-based instruction numbers of a hot-spot row

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.ptx = CodeView()
        self.ptx.setObjectName("ptxSource")
        self.tabs.addTab(self.ptx, "PTX")
        self.hot_table = QTableWidget(0, len(HOT_HEADERS))
        self.hot_table.setObjectName("hotSpots")
        self.hot_table.setHorizontalHeaderLabels(list(HOT_HEADERS))
        for col, tip in enumerate(HOT_HELP):
            self.hot_table.horizontalHeaderItem(col).setToolTip(tip)
        self.hot_table.verticalHeader().setVisible(False)
        self.hot_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.hot_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.hot_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.hot_table.horizontalHeader().setStretchLastSection(True)
        self.hot_table.itemSelectionChanged.connect(self._hot_row_picked)
        self.tabs.addTab(self.hot_table, "Hot spots")
        self.hot: Hotspots | None = None
        self._when_shown = WhenShown(self, lambda result, _sim: self._show_heat(result))
        self.cuda: dict[str, CodeView] = {}          # .file name -> its view (found files only)
        self.missing: dict[str, str] = {}            # .file name -> why it is not shown
        self.caption = QLabel()
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # long paths must not widen the pane (the splitter would squeeze the BLOCK table)
        self.caption.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.caption)
        layout.addWidget(self.tabs, 1)
        self._ptx_path: tuple[Path, object] | None = None   # the file shown, and its span when partial
        self._sources: dict[str, SourceText] = {}

    def show_inputs(self, inputs: KernelInputs) -> None:
        """Load the PTX file (unless it is already shown) and the CUDA files this kernel names."""
        function = inputs.function
        span = (function.location.line if function.location else 1,
                function.end_location.line if function.end_location else 0)
        large = _size(inputs.path) > WHOLE_FILE_BYTES and span[1] >= span[0]
        if (inputs.path, large and span) != self._ptx_path:
            source = read_source(inputs.path.name, inputs.path)
            if source.path is None:
                self.ptx.set_lines(source.problem)
            elif large:
                self.ptx.set_lines("\n".join(source.lines[span[0] - 1 : span[1]]), span[0])
            else:
                self.ptx.set_lines(source.text)
            self._ptx_path = (inputs.path, large and span)
        names: set[str] = set()
        for ins in inputs.function.instructions:
            names |= location_files(ins.cuda_location)
        self._show_cuda(cuda_sources(inputs.path, names))
        start = inputs.function.location.line if inputs.function.location else 1
        self.ptx.highlight_lines([], scroll=False)
        self.ptx.setTextCursor(QTextCursor(self.ptx.document().findBlockByNumber(
            max(0, start - self.ptx.first_line))))
        self.ptx.centre_line(start)
        found = ", ".join(f"{n} → {v.path}" for n, v in self._sources.items() if v.path is not None)
        part = f" (lines {span[0]}–{span[1]}: this kernel of a large file)" if large else ""
        caption = (f"{inputs.path}{part}" + (f"  ·  CUDA: {found}" if found else "")
                   + ("  ·  " + "; ".join(self.missing.values()) if self.missing else ""))
        self.caption.setText(caption)
        self.caption.setToolTip(caption)

    def _show_cuda(self, sources: dict[str, SourceText]) -> None:
        for k in reversed(range(self.tabs.count())):
            widget = self.tabs.widget(k)
            if widget is not self.ptx and widget is not self.hot_table:
                self.tabs.removeTab(k)
                widget.deleteLater()
        self.cuda, self.missing, self._sources = {}, {}, sources
        for name, source in sources.items():
            if source.path is None:
                self.missing[name] = source.problem
                note = QLabel(source.problem)
                note.setWordWrap(True)
                note.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
                self.tabs.insertTab(self.tabs.count() - 1, note, f"{Path(name).name} (not found)")
                continue
            view = CodeView()
            view.setPlainText(source.text)
            self.cuda[name] = view
            self.tabs.insertTab(self.tabs.count() - 1, view, Path(name).name)

    def select(self, rows: Sequence[InstructionRow]) -> None:
        """Highlight the PTX lines of these instructions and the CUDA lines they came from."""
        self.ptx.highlight_lines([r.location.line for r in rows if r.location is not None])
        per_file: dict[str, list[int]] = {name: [] for name in self.cuda}
        found = set(self.cuda)
        for r in rows:
            loc = visible_location(r.cuda_location, found)
            if loc is not None:
                per_file[loc.file].append(loc.line)
        for name, view in self.cuda.items():
            view.highlight_lines(per_file[name])

    # ------------------------------------------------------------------ hot spots

    def set_result(self, result: Evaluation) -> None:
        """Keep the newest evaluation; attribute its warp-cycles to lines only while on screen."""
        self._when_shown.offer(result, result.simulation)

    def showEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        self._when_shown.run()

    def _show_heat(self, result: Evaluation) -> None:
        if result.simulation is None:
            self.show_hotspots(None)
            return
        try:
            self.show_hotspots(hotspots(result))
        except ValueError:
            self.show_hotspots(None)      # a simulation of other instructions than the file's

    def show_hotspots(self, hot: Hotspots | None) -> None:
        self.hot = hot
        if hot is None:
            self.ptx.set_heat({})
            for view in self.cuda.values():
                view.set_heat({})
            self.hot_table.setRowCount(0)
            return
        total = hot.total or 1.0

        def gutter(lines: list[LineHeat]) -> tuple[dict[int, float], dict[int, str]]:
            top = max((h.total for h in lines), default=0.0) or 1.0
            return ({h.line: h.total / top for h in lines if h.total > 0},
                    {h.line: f"{h.total / total:.1%} of the warp-cycles" for h in lines})

        self.ptx.set_heat(*gutter(hot.ptx_lines))
        found = set(self.cuda)
        for name, view in self.cuda.items():
            mine = [h for h in hot.cuda_lines if visible_location_file(h.file, found) == name]
            view.set_heat(*gutter(mine))
        rows = [(f"PTX {h.line}", h) for h in hot.ptx_lines] + \
               [(f"{Path(h.file).name}:{h.line}" if h.line else h.file, h) for h in hot.cuda_lines]
        table = self.hot_table
        table.setSortingEnabled(False)
        table.blockSignals(True)
        table.setRowCount(len(rows))
        for k, (label, h) in enumerate(rows):
            first = QTableWidgetItem(label)
            first.setData(Qt.ItemDataRole.UserRole, list(h.instructions))
            first.setToolTip(h.file)
            cells = [first, _NumberItem(f"{h.total / total:.1%}", h.total / total),
                     _NumberItem(f"{h.issue_cycles:,.0f}", h.issue_cycles),
                     _NumberItem(f"{h.stall_cycles:,.0f}", h.stall_cycles),
                     QTableWidgetItem(_ranges(h.instructions))]
            for col, item in enumerate(cells):
                table.setItem(k, col, item)
        table.blockSignals(False)
        table.setSortingEnabled(True)
        table.sortItems(1, Qt.SortOrder.DescendingOrder)

    def _hot_row_picked(self) -> None:
        rows = {i.row() for i in self.hot_table.selectedIndexes()}
        picked: list[int] = []
        for row in sorted(rows):
            item = self.hot_table.item(row, 0)
            if item is not None:
                picked.extend(item.data(Qt.ItemDataRole.UserRole) or [])
        if picked:
            self.instructionsPicked.emit(sorted(set(picked)))


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def visible_location_file(file: str, found: set[str]) -> str | None:
    """The shown CUDA tab a .loc file name belongs to (the names match as given or by base name)."""
    if file in found:
        return file
    base = Path(file).name
    return next((name for name in found if Path(name).name == base), None)


def _ranges(numbers: Sequence[int]) -> str:
    """1-3, 7, 9-10: a line's instruction numbers, short."""
    out: list[str] = []
    for n in sorted(numbers):
        if out and "-" in out[-1] and int(out[-1].split("-")[1]) == n - 1:
            out[-1] = f"{out[-1].split('-')[0]}-{n}"
        elif out and "-" not in out[-1] and int(out[-1]) == n - 1:
            out[-1] = f"{out[-1]}-{n}"
        else:
            out.append(str(n))
    return ", ".join(out)
