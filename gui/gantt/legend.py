"""Legend entries for :class:`~gui.gantt.bars_item.BarsItem`: a colour swatch that toggles its
item's visibility on click (pyqtgraph's stock sample only knows plot curves and bar graphs)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QPainter, QPen


class ColorSample(pg.GraphicsWidget):
    """Legend sample for any item with a ``color`` attribute (a ``QColor``)."""

    sigClicked = Signal(object)       # LegendItem relays it as sigSampleClicked

    def __init__(self, item: object) -> None:
        super().__init__()
        self.item = item
        self.setFixedWidth(16)
        self.setFixedHeight(16)

    def boundingRect(self) -> QRectF:
        return QRectF(0, 0, 16, 16)

    def paint(self, p: QPainter, *args: object) -> None:
        color = QColor(self.item.color)
        if color.alpha() == 0:
            return              # a padding entry: nothing to show
        visible = getattr(self.item, "isVisible", lambda: True)()
        if not visible:
            color.setAlpha(40)     # hidden entries stay listed, faded
        p.setPen(QPen(QColor("#606060"), 0))
        p.setBrush(QBrush(color))
        p.drawRect(QRectF(2, 2, 12, 12))

    def mouseClickEvent(self, event: object) -> None:
        if event.button() == Qt.MouseButton.LeftButton and hasattr(self.item, "setVisible"):
            self.item.setVisible(not self.item.isVisible())
            self.update()
            self.sigClicked.emit(self.item)
        event.accept()


class _Swatch:
    """A legend entry with no item behind it (a colour absent from the current view)."""

    def __init__(self, color: QColor) -> None:
        self.color = color


ENTRY_WIDTH = 190      # pixels a legend column needs (swatch + "stall: compute dependency")


def make_legend() -> pg.LegendItem:
    return pg.LegendItem(sampleType=ColorSample, labelTextSize="8pt", labelTextColor="#202020",
                         horSpacing=12, verSpacing=-6)


def fill_legend(legend: pg.LegendItem, groups: list[list[tuple[object, str]]], width: float) -> int:
    """Put (item, label) entries in a grid as wide as ``width`` allows, each group starting on
    a new row; returns the number of columns. (LegendItem's own column filling misplaces
    entries when its layout has not been activated yet.)"""
    legend.clear()
    columns = max(1, int(width // ENTRY_WIDTH))
    row = 0
    for entries in groups:
        for i, (item, name) in enumerate(entries):
            sample = ColorSample(item)
            label = pg.LabelItem(name, color=legend.opts["labelTextColor"], justify="left",
                                 size=legend.opts["labelTextSize"])
            sample.sigClicked.connect(legend.sigSampleClicked)
            legend.items.append((sample, label))
            r, c = divmod(i, columns)
            legend.layout.addItem(sample, row + r, 2 * c)
            legend.layout.addItem(label, row + r, 2 * c + 1)
        row += -(-len(entries) // columns)
    legend.updateSize()
    return columns


def swatch(color: QColor) -> _Swatch:
    return _Swatch(color)
