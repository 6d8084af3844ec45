"""Source panel: the kernel's PTX file and the CUDA files its ``.loc`` lines name, read-only, with
line numbers; the selected instructions' lines are highlighted in each.

The files are found and read by :mod:`engine.sources`; a CUDA file that is not at hand gets a tab
that says where it was looked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QFontDatabase, QPainter, QPaintEvent, QTextCursor, QTextFormat
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QSizePolicy, QTabWidget, QTextEdit, QVBoxLayout, QWidget

from engine.inputs import KernelInputs
from engine.manybsp.rows import InstructionRow
from engine.sources import SourceText, cuda_sources, location_files, read_source, visible_location

LINE_FILL = QColor(255, 236, 150)
GUTTER_FILL = QColor(240, 240, 240)
GUTTER_TEXT = QColor(130, 130, 130)


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
        self._gutter = _Gutter(self)
        self.blockCountChanged.connect(self._fit_gutter)
        self.updateRequest.connect(self._scroll_gutter)
        self._fit_gutter()

    def gutter_width(self) -> int:
        digits = len(str(max(1, self.blockCount())))
        return 10 + self.fontMetrics().horizontalAdvance("9") * digits

    def _fit_gutter(self) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _scroll_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())

    def resizeEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        r = self.contentsRect()
        self._gutter.setGeometry(QRect(r.left(), r.top(), self.gutter_width(), r.height()))

    def paint_gutter(self, event: QPaintEvent) -> None:
        painter = QPainter(self._gutter)
        painter.fillRect(event.rect(), GUTTER_FILL)
        marked = set(self.highlighted)
        block = self.firstVisibleBlock()
        number = block.blockNumber()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        bottom = top + round(self.blockBoundingRect(block).height())
        height = self.fontMetrics().height()
        while block.isValid() and top <= event.rect().bottom():
            if block.isVisible() and bottom >= event.rect().top():
                if number + 1 in marked:
                    painter.fillRect(0, top, self._gutter.width(), bottom - top, LINE_FILL)
                painter.setPen(GUTTER_TEXT)
                painter.drawText(0, top, self._gutter.width() - 5, height, Qt.AlignmentFlag.AlignRight,
                                 str(number + 1))
            block = block.next()
            top = bottom
            bottom = top + round(self.blockBoundingRect(block).height())
            number += 1

    def highlight_lines(self, lines: Iterable[int], scroll: bool = True) -> None:
        """Mark these 1-based lines (and scroll the first into the middle of the view)."""
        wanted = sorted({int(n) for n in lines if 1 <= int(n) <= self.blockCount()})
        selections = []
        # one selection per run of consecutive lines: a superstep can span hundreds of them
        runs: list[tuple[int, int]] = []
        for n in wanted:
            if runs and n == runs[-1][1] + 1:
                runs[-1] = (runs[-1][0], n)
            else:
                runs.append((n, n))
        doc = self.document()
        for first, last in runs:
            cursor = QTextCursor(doc.findBlockByNumber(first - 1))
            end = doc.findBlockByNumber(last - 1)
            cursor.setPosition(end.position(), QTextCursor.MoveMode.KeepAnchor)
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(LINE_FILL)
            selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            selection.cursor = cursor
            selections.append(selection)
        self.setExtraSelections(selections)
        self.highlighted = wanted
        self._gutter.update()
        if scroll and wanted:
            cursor = QTextCursor(doc.findBlockByNumber(wanted[0] - 1))
            self.setTextCursor(cursor)
            self.centerCursor()


class SourcePanel(QWidget):
    """A tab for the PTX file and one per CUDA file of the kernel."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.ptx = CodeView()
        self.ptx.setObjectName("ptxSource")
        self.tabs.addTab(self.ptx, "PTX")
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
        self._ptx_path: Path | None = None
        self._sources: dict[str, SourceText] = {}

    def show_inputs(self, inputs: KernelInputs) -> None:
        """Load the PTX file (unless it is already shown) and the CUDA files this kernel names."""
        if inputs.path != self._ptx_path:
            source = read_source(inputs.path.name, inputs.path)
            self.ptx.setPlainText(source.text if source.path is not None else source.problem)
            self._ptx_path = inputs.path
        names: set[str] = set()
        for ins in inputs.function.instructions:
            names |= location_files(ins.cuda_location)
        self._show_cuda(cuda_sources(inputs.path, names))
        start = inputs.function.location.line if inputs.function.location else 1
        self.ptx.highlight_lines([], scroll=False)
        self.ptx.setTextCursor(QTextCursor(self.ptx.document().findBlockByNumber(start - 1)))
        self.ptx.centerCursor()
        found = ", ".join(f"{n} → {v.path}" for n, v in self._sources.items() if v.path is not None)
        caption = (f"{inputs.path}" + (f"  ·  CUDA: {found}" if found else "")
                   + ("  ·  " + "; ".join(self.missing.values()) if self.missing else ""))
        self.caption.setText(caption)
        self.caption.setToolTip(caption)

    def _show_cuda(self, sources: dict[str, SourceText]) -> None:
        while self.tabs.count() > 1:
            widget = self.tabs.widget(1)
            self.tabs.removeTab(1)
            widget.deleteLater()
        self.cuda, self.missing, self._sources = {}, {}, sources
        for name, source in sources.items():
            if source.path is None:
                self.missing[name] = source.problem
                note = QLabel(source.problem)
                note.setWordWrap(True)
                note.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
                self.tabs.addTab(note, f"{Path(name).name} (not found)")
                continue
            view = CodeView()
            view.setPlainText(source.text)
            self.cuda[name] = view
            self.tabs.addTab(view, Path(name).name)

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
