"""Paints many :class:`BarsItem` at once into one image when they hold too many rectangles.

``QPainter.drawRects`` costs about a microsecond per rectangle on the raster engine; zoomed out
on a big trace the merged bars still number tens of thousands (warp lanes alternate stall
causes every few pixels). Past :data:`RECT_LIMIT` rectangles this layer, painted just below
the bars, fills a numpy ARGB image of the plot area from the items' merged rectangles (in item
order, so later colours cover earlier ones like drawRects would) and draws it with one
``drawImage``; the items then skip their own painting for that frame. Below the limit the items
draw themselves, with sub-pixel placement. Either way the cost of a frame is bounded by the
plot's pixels, not by the number of bars.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from numba import njit
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QImage, QPainter

from gui.gantt.bars_item import BarsItem

RECT_LIMIT = 5000


class RasterLayer(pg.GraphicsObject):
    """Owns no data: it rasterises the items registered with :meth:`set_items`."""

    def __init__(self) -> None:
        super().__init__()
        self._items: list[BarsItem] = []
        self._bounding = QRectF()
        self.rasterised = False
        self._image: QImage | None = None
        self._buffer: np.ndarray | None = None      # keeps the QImage's pixels alive
        self._origin = QPointF()
        self._cache_key: tuple | None = None
        self.setZValue(-1)                           # painted before the bars (z 0)

    def set_items(self, items: list[BarsItem]) -> None:
        for item in items:
            item.layer = self
        self._items = list(items)
        self.refresh_bounds()

    def refresh_bounds(self) -> None:
        """The items' bars changed (refilled in place): drop the cached image, re-read bounds."""
        items = self._items
        self._cache_key = None
        self.prepareGeometryChange()
        rect = QRectF()
        for item in items:
            if len(item):
                rect = rect.united(item.boundingRect())
        self._bounding = rect
        self.update()

    def boundingRect(self) -> QRectF:
        return QRectF(self._bounding)

    def paint(self, p: QPainter, *args: object) -> None:
        visible = [item for item in self._items if item.isVisible()]
        total = sum(item.prepare() for item in visible)
        self.rasterised = total > RECT_LIMIT
        if not self.rasterised:
            return
        t = p.transform()
        key = (tuple(id(item) for item in visible), tuple(item._cache_key for item in visible),
               t.m11(), t.m22(), t.dx(), t.dy())
        if key != self._cache_key:
            self._rasterise(visible, p)
            self._cache_key = key
        if self._image is not None:
            p.save()
            p.resetTransform()
            p.drawImage(self._origin, self._image)
            p.restore()

    def _rasterise(self, items: list[BarsItem], p: QPainter) -> None:
        t = p.transform()
        view = self.viewRect()
        if view is None:
            self._image = None
            return
        # device rectangle of the visible plot area
        corners = t.mapRect(view)
        x_off, y_off = int(np.floor(corners.left())), int(np.floor(corners.top()))
        width = int(np.ceil(corners.right())) - x_off
        height = int(np.ceil(corners.bottom())) - y_off
        if width <= 0 or height <= 0:
            self._image = None
            return
        # Bars of one lane share their pixel rows: paint lanes as one scan line each (a
        # "band"), then expand the bands to the image rows with a single fancy index.
        runs = []          # per item: each lane run's pixel rows (y0, y1), its rects' run, x0, x1, colour
        sx, dx, sy, dy = t.m11(), t.dx() - x_off, t.m22(), t.dy() - y_off
        for item in items:
            r = item.rects()
            if not len(r):
                continue
            # data -> device pixels; the view's transform is scale + translate (no rotation)
            x0 = np.clip(np.rint(sx * r[:, 0] + dx), 0, width).astype(np.int64)
            x1 = np.clip(np.rint(sx * (r[:, 0] + r[:, 2]) + dx), 0, width).astype(np.int64)
            x1 = np.minimum(np.maximum(x1, x0 + 1), width)
            # rects come sorted by lane: one band (pixel rows) per lane run
            rank = item.rect_lanes()
            cuts = np.flatnonzero(np.diff(rank)) + 1
            lane_ranks = rank[np.concatenate(([0], cuts))]
            top, h = item.lane_band(lane_ranks)
            ya, yb = sy * top + dy, sy * (top + h) + dy
            y0 = np.clip(np.rint(np.minimum(ya, yb)), 0, height).astype(np.int64)
            y1 = np.clip(np.rint(np.maximum(ya, yb)), 0, height).astype(np.int64)
            local = np.repeat(np.arange(len(y0)), np.diff(np.concatenate(([0], cuts, [len(rank)]))))
            runs.append((y0, y1, local, x0, x1, np.uint32(item.color.rgba() | 0xFF000000)))
        # One band per distinct pair of pixel rows, numbered in the order first met (a later band
        # covers an earlier one where they overlap, as before).
        bands: list[tuple[int, int]] = []
        per_item = []
        if runs:
            y0s = np.concatenate([r[0] for r in runs])
            y1s = np.concatenate([r[1] for r in runs])
            unique, first, inverse = np.unique(y0s * (height + 1) + y1s, return_index=True, return_inverse=True)
            by_first = np.argsort(first)
            number = np.empty(len(unique), np.int64)
            number[by_first] = np.arange(len(unique))
            ids_all = number[inverse.reshape(-1)]
            bands = list(zip(y0s[first[by_first]].tolist(), y1s[first[by_first]].tolist(), strict=True))
            at = 0
            for y0, _, local, x0, x1, color in runs:
                per_item.append((ids_all[at:at + len(y0)], local, x0, x1, color))
                at += len(y0)
        # Fill every run of every lane, items in paint order, so later colours cover earlier ones
        # as drawRects would.
        lanes = np.zeros((len(bands) + 1, width), dtype=np.uint32)     # last row: transparent
        if per_item:
            start = np.concatenate([ids[local] * width + x0 for ids, local, x0, _, _ in per_item])
            length = np.concatenate([x1 - x0 for _, _, x0, x1, _ in per_item])
            color = np.concatenate([np.full(len(x0), c, np.uint32) for _, _, x0, _, c in per_item])
            _fill_runs(lanes.reshape(-1), start, length, color)
        row_band = np.full(height, len(bands), dtype=np.int64)
        for k, (a, b) in enumerate(bands):
            row_band[a:b] = k
        image = np.ascontiguousarray(lanes[row_band])
        self._buffer = image
        self._image = QImage(image.data, width, height, width * 4, QImage.Format.Format_ARGB32_Premultiplied)
        self._origin = QPointF(x_off, y_off)



@njit(cache=True)
def _fill_runs(flat: np.ndarray, start: np.ndarray, length: np.ndarray,
               color: np.ndarray) -> None:  # pragma: no cover - compiled
    """flat[start[i] : start[i] + length[i]] = color[i], in order (one pass, no temporaries)."""
    for i in range(len(start)):
        s = start[i]
        c = color[i]
        for j in range(s, s + length[i]):
            flat[j] = c
