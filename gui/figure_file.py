"""Writing a figure to a file: lay a widget with a ``graphics`` view out at the asked pixels off
screen, paint it (and further charts stacked under it, each with a caption line) under a title
line, and write PNG, SVG or PDF by the file's suffix, through a temporary file renamed over the
target. The chart's, the curves' and the roofline's exports all write through here."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyqtgraph.exporters import ImageExporter
from PySide6.QtCore import QMarginsF, QRectF, QSize, QSizeF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QImage, QPainter
from PySide6.QtWidgets import QApplication

from gui.theme import LIGHT


def application() -> QApplication:
    app = QApplication.instance()
    return app if isinstance(app, QApplication) else QApplication([])


def render_png(view: Any, path: str | Path, width: int, height: int) -> Path:
    """Export ``view``, laid out by :func:`lay_out` at width × height, as a PNG without a title."""
    exporter = ImageExporter(view.graphics.scene())
    params = exporter.parameters()
    params["background"] = LIGHT.chart_background
    params["antialias"] = False
    image: QImage = exporter.export(toBytes=True)
    if (image.width(), image.height()) != (width, height):
        # a rounding difference of a pixel: scale rather than hand back another size
        image = image.scaled(width, height, Qt.AspectRatioMode.IgnoreAspectRatio,
                             Qt.TransformationMode.SmoothTransformation)
    out = Path(path)
    target = out.with_name(out.name + ".part")
    if not image.save(str(target), "PNG"):
        target.unlink(missing_ok=True)
        raise OSError(f"could not write the PNG file {out}")
    os.replace(target, out)
    return out


FORMATS = (".png", ".svg", ".pdf")
TITLE_PX = 30                 # height of the title line above the chart


CAPTION_PX = 22               # a caption line above a piece of a stacked figure


@dataclass(frozen=True)
class Piece:
    """One chart of a stacked figure: a widget with a ``graphics`` view, its height in pixels
    (caption included) and a caption line above it ('' for none)."""

    view: Any
    height: int
    caption: str = ""

    @property
    def chart_height(self) -> int:
        return self.height - (CAPTION_PX if self.caption else 0)


def _text_line(painter: QPainter, rect: QRectF, text: str, px: int, bold: bool) -> None:
    font = QFont(painter.font())
    font.setPixelSize(px)
    font.setBold(bold)
    painter.setFont(font)
    painter.setPen(QColor(LIGHT.chart_text))
    metrics = QFontMetrics(font)
    painter.drawText(rect, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                     metrics.elidedText(text, Qt.TextElideMode.ElideRight, int(rect.width())))


def paint_stack(painter: QPainter, width: int, height: int, title: str, pieces: Sequence[Piece]) -> None:
    """The title line, then each piece (its caption, its chart) below the one before."""
    painter.fillRect(QRectF(0, 0, width, height), QColor(LIGHT.chart_background))
    top = 0.0
    if title:
        _text_line(painter, QRectF(8, 0, width - 16, TITLE_PX), title, 15, True)
        top = TITLE_PX
    for piece in pieces:
        if piece.caption:
            _text_line(painter, QRectF(8, top, width - 16, CAPTION_PX), piece.caption, 13, False)
            top += CAPTION_PX
        piece.view.graphics.render(painter, QRectF(0, top, width, piece.chart_height),
                                   piece.view.graphics.viewport().rect())
        top += piece.chart_height


def lay_out(view: Any, width: int, height: int) -> None:
    """Size ``view`` (a :class:`GanttView`, or any widget with a ``graphics`` view to draw) so
    its chart area is exactly width × height."""
    view.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    view.show()
    app = application()
    for _ in range(3):       # the toolbar's height is only known after the first layout pass
        app.processEvents()
        extra_w = view.width() - view.graphics.width()
        extra_h = view.height() - view.graphics.height()
        view.resize(width + extra_w, height + extra_h)
        app.processEvents()
        if (view.graphics.width(), view.graphics.height()) == (width, height):
            break
    labels = getattr(view, "lane_labels", None)      # (a chart with lanes: labels for this size)
    if labels is not None:
        labels.refresh()
    app.processEvents()


def check_writable(target: Path) -> None:
    """OSError at once when ``target`` cannot be created: QSvgGenerator, QPdfWriter and
    QImage.save would only print a Qt warning, after the whole chart was laid out and painted."""
    try:
        with open(target, "wb"):
            pass
    except OSError as exc:
        raise OSError(exc.strerror or str(exc)) from None
    target.unlink(missing_ok=True)


def write_figure(view: Any, path: str | Path, width: int, height: int, title: str) -> Path:
    """Write the chart (and title) as PNG, SVG or PDF, by the file's suffix (``view`` as for
    :func:`lay_out`, with a ``drop_pixmap_caches`` method)."""
    out = Path(path)
    check_format(out)
    check_writable(out.with_name(out.name + ".part"))
    chart_h = height - (TITLE_PX if title else 0)
    lay_out(view, width, chart_h)
    if out.suffix.lower() == ".png" and not title:
        return render_png(view, out, width, height)
    return write_pieces(out, width, height, title, [Piece(view, chart_h)])


def check_format(out: Path) -> None:
    if out.suffix.lower() not in FORMATS:
        raise ValueError(f"{out}: write the figure as {', '.join(FORMATS)}")


def write_stack(path: str | Path, width: int, height: int, title: str, pieces: Sequence[Piece]) -> Path:
    """Lay each piece out at width × its chart height and write them stacked under ``title`` as
    PNG, SVG or PDF (by suffix)."""
    out = Path(path)
    check_format(out)
    check_writable(out.with_name(out.name + ".part"))
    for piece in pieces:
        lay_out(piece.view, width, piece.chart_height)
    return write_pieces(out, width, height, title, pieces)


def write_pieces(out: Path, width: int, height: int, title: str, pieces: Sequence[Piece]) -> Path:
    """Paint laid-out pieces into ``out`` (PNG, SVG or PDF by suffix), through a temporary file
    renamed over it: a reader never sees half a file, and the file gets the user's umask."""
    suffix = out.suffix.lower()
    if suffix != ".png":
        for piece in pieces:
            piece.view.drop_pixmap_caches()
    target = out.with_name(out.name + ".part")
    if suffix == ".png":
        image = QImage(width, height, QImage.Format.Format_ARGB32)
        if title:
            image.setText("Title", title)     # the title line, also as the PNG's text (readable by tools)
        image.setText("Software", "Warpline")
        painter = QPainter(image)
        try:
            paint_stack(painter, width, height, title, pieces)
        finally:
            painter.end()
        if not image.save(str(target), "PNG"):
            target.unlink(missing_ok=True)
            raise OSError(f"could not write the PNG file {out}")
    elif suffix == ".svg":
        from PySide6.QtSvg import QSvgGenerator

        generator = QSvgGenerator()
        generator.setFileName(str(target))
        generator.setSize(QSize(width, height))
        generator.setViewBox(QRectF(0, 0, width, height))
        generator.setTitle(title or "Warpline timeline")
        generator.setDescription("Pipeline simulation of one SM (Warpline)")
        painter = QPainter(generator)
        try:
            paint_stack(painter, width, height, title, pieces)
        finally:
            painter.end()
    else:
        from PySide6.QtGui import QPageLayout, QPageSize, QPdfWriter

        writer = QPdfWriter(str(target))
        writer.setResolution(96)
        writer.setTitle(title or "Warpline timeline")
        page = QPageSize(QSizeF(width, height), QPageSize.Unit.Point, name="timeline",
                         matchPolicy=QPageSize.SizeMatchPolicy.ExactMatch)
        writer.setPageLayout(QPageLayout(page, QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0)))
        painter = QPainter(writer)
        try:
            # the page is width × height points; paint in pixels at 96 dpi scaled onto it
            scale = writer.width() / width
            painter.scale(scale, scale)
            paint_stack(painter, width, height, title, pieces)
        finally:
            painter.end()
    if not target.is_file() or target.stat().st_size == 0:
        raise OSError(f"could not write {out}")
    os.replace(target, out)          # atomic: a reader never sees half a file
    return out
