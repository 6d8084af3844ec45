"""One colour's worth of Gantt bars, drawn with a single ``QPainter.drawRects`` call.

A chart holds one :class:`BarsItem` per colour key, never one graphics item per bar. At each
view change the item keeps only the bars inside the visible x-range (binary search per lane on
bars sorted by start, with a running maximum of the ends so long bars are not missed) and
coalesces, per lane, bars that overlap or are less than a pixel apart into one rectangle at
least one pixel wide. A fully zoomed-out chart of a million bars thus paints at most a few
rectangles per pixel column, and a pan costs a few vectorised numpy passes.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt import internals
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPen

BAR_FILL = 0.8          # fraction of a lane's height a bar covers (the rest separates lanes)
_MARGIN_PX = 2.0        # bars are clipped this far outside the view (keeps coordinates small)


class BarsItem(pg.GraphicsObject):
    """Bars of one colour over several lanes.

    ``lane_y``/``lane_h``: top and height of every lane (layout units). ``lane``/``x0``/``x1``:
    per bar; the item sorts them by (lane, x0) itself.
    """

    def __init__(self, lane: np.ndarray, x0: np.ndarray, x1: np.ndarray, lane_y: np.ndarray,
                 lane_h: np.ndarray, color: QColor, outline: QColor | None = None,
                 name: str = "") -> None:
        super().__init__()
        order = np.lexsort((x0, lane))
        self._lane = np.ascontiguousarray(lane[order], dtype=np.int64)
        self._x0 = np.ascontiguousarray(x0[order], dtype=np.float64)
        self._x1 = np.ascontiguousarray(x1[order], dtype=np.float64)
        self._lanes, starts = np.unique(self._lane, return_index=True)
        self._bounds = np.append(starts, len(self._lane)).astype(np.int64)
        # running max of x1 restarted in every lane: monotonic inside a lane, so searchsorted works
        self._cummax = np.empty_like(self._x1)
        for k in range(len(self._lanes)):
            a, b = self._bounds[k], self._bounds[k + 1]
            np.maximum.accumulate(self._x1[a:b], out=self._cummax[a:b])
        pad = (1.0 - BAR_FILL) / 2.0
        self._bar_y = (lane_y[self._lanes] + pad * lane_h[self._lanes]).astype(np.float64)
        self._bar_h = (BAR_FILL * lane_h[self._lanes]).astype(np.float64)
        self.name = name
        self.color = QColor(color)
        self._brush = QBrush(self.color)
        self._pen = QPen(Qt.PenStyle.NoPen) if outline is None else pg.mkPen(outline, width=1, cosmetic=True)
        self._rects = internals.PrimitiveArray(QRectF, 4)
        self._cache_key: tuple[float, float, float] | None = None
        self.last_visible = 0     # bars inside the view at the last paint (before merging)
        self.last_drawn = 0       # rectangles handed to drawRects at the last paint
        if len(self._lane):
            y0 = float(self._bar_y.min())
            y1 = float((self._bar_y + self._bar_h).max())
            self._bounding = QRectF(float(self._x0.min()), y0,
                                    max(float(self._x1.max() - self._x0.min()), 1e-9), y1 - y0)
        else:
            self._bounding = QRectF()

    def __len__(self) -> int:
        return len(self._lane)

    # ---- QGraphicsItem ------------------------------------------------------------------------
    def boundingRect(self) -> QRectF:
        return QRectF(self._bounding)

    def viewTransformChanged(self) -> None:
        super().viewTransformChanged()
        self._cache_key = None

    def paint(self, p: QPainter, *args: object) -> None:
        if not len(self._lane):
            return
        view = self.getViewBox()
        rect = self.viewRect()
        if view is None or rect is None or view.width() <= 0:
            return
        x_min, x_max = rect.left(), rect.right()
        px = (x_max - x_min) / float(view.width())     # cycles per screen pixel
        if px <= 0:
            return
        key = (x_min, x_max, px)
        if key != self._cache_key:
            self._rebuild(x_min, x_max, px)
            self._cache_key = key
        if self.last_drawn:
            p.setPen(self._pen)
            p.setBrush(self._brush)
            p.drawRects(*self._rects.drawargs())

    # ---- culling and merging ------------------------------------------------------------------
    def visible_indices(self, x_min: float, x_max: float) -> np.ndarray:
        """Indices (sorted by lane, x0) of the bars that intersect [x_min, x_max]."""
        lo = np.empty(len(self._lanes), np.int64)
        hi = np.empty(len(self._lanes), np.int64)
        for k in range(len(self._lanes)):
            a, b = int(self._bounds[k]), int(self._bounds[k + 1])
            lo[k] = a + np.searchsorted(self._cummax[a:b], x_min, "left")
            hi[k] = a + np.searchsorted(self._x0[a:b], x_max, "right")
        hi = np.maximum(hi, lo)
        counts = hi - lo
        total = int(counts.sum())
        if total == 0:
            return np.zeros(0, np.int64)
        # concatenated aranges lo[k]..hi[k] without a Python loop over bars
        step = np.ones(total, np.int64)
        nz = counts > 0
        firsts = np.cumsum(counts[nz]) - counts[nz]
        step[firsts] = lo[nz] - np.concatenate(([0], hi[nz][:-1] - 1))
        return np.cumsum(step)

    def _rebuild(self, x_min: float, x_max: float, px: float) -> None:
        idx = self.visible_indices(x_min - _MARGIN_PX * px, x_max + _MARGIN_PX * px)
        self.last_visible = len(idx)
        if not len(idx):
            self.last_drawn = 0
            self._rects.resize(0)
            return
        lane = self._lane[idx]
        width_px = (x_max - x_min) / px
        span = width_px + 4 * _MARGIN_PX + 4.0      # lane stride in pixels: lanes never touch
        # pixel coordinates, clipped to just outside the view, offset per lane so one running
        # maximum over the whole array restarts at each lane
        base = np.searchsorted(self._lanes, lane) * span
        a = np.clip((self._x0[idx] - x_min) / px, -_MARGIN_PX, width_px + _MARGIN_PX) + base
        b = np.clip((self._x1[idx] - x_min) / px, -_MARGIN_PX, width_px + _MARGIN_PX) + base
        b = np.maximum(b, a + 1.0)                  # every bar at least one pixel wide
        reach = np.maximum.accumulate(b)
        # a new rectangle starts where a bar begins more than a pixel after all earlier ones end
        start = np.empty(len(a), bool)
        start[0] = True
        np.greater(a[1:], reach[:-1] + 1.0, out=start[1:])
        first = np.flatnonzero(start)
        last = np.append(first[1:] - 1, len(a) - 1)
        lane_rank = (base[first] / span).astype(np.int64)
        left = a[first] - base[first]
        right = reach[last] - base[first]
        n = len(first)
        self._rects.resize(n)
        out = self._rects.ndarray()
        out[:, 0] = x_min + left * px
        out[:, 1] = self._bar_y[lane_rank]
        out[:, 2] = (right - left) * px
        out[:, 3] = self._bar_h[lane_rank]
        self.last_drawn = n
