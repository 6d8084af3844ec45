"""Collapsed warp groups drawn as heat strips: per time bucket, the share of the group's warps
issuing, waiting on each stall cause, or idle, stacked as thin bands in the stall colours.

The shares come from :class:`engine.timeline.activity.GroupActivity` (Qt-free, exact for any buckets);
here they are only cut into buckets of the current view (:data:`BUCKET_PX` screen pixels each, on
a grid fixed to cycle 0 so that a pan does not make the strips shimmer), rounded to whole pixel
rows and merged along runs of equal bands. :class:`HeatStrips` does that once per view for every
collapsed group; one :class:`HeatStripItem` per category draws its bands with a single
``QPainter.drawRects`` call, as the chart's bar items do.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt import internals
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPen

from engine.timeline.activity import HEAT_CATEGORIES, GroupActivity

BUCKET_PX = 2.0          # a bucket's width on screen
PAD_PX = 1.0             # empty rows above and below a strip (as the bars leave between lanes)


class HeatStrips:
    """The heat strips of the collapsed groups, cut for one view at a time.

    ``set_bands`` takes, per collapsed group, its activity and its band (top and height in view
    units, which are the plot's pixels); ``prepare`` computes every category's rectangles for a
    view range (cached per range)."""

    def __init__(self) -> None:
        self.bands: list[tuple[GroupActivity, float, float]] = []
        self.cycles = 0.0
        self._key: tuple[float, float, float] | None = None
        self._rects: list[np.ndarray] = [np.zeros((0, 4)) for _ in HEAT_CATEGORIES]
        self.bucket = 1.0                       # bucket width in cycles of the last prepare

    def set_bands(self, bands: list[tuple[GroupActivity, float, float]], cycles: float) -> None:
        self.bands = list(bands)
        self.cycles = float(cycles)
        self._key = None

    def bounding(self) -> QRectF:
        if not self.bands or self.cycles <= 0:
            return QRectF()
        top = min(t for _, t, _ in self.bands)
        bottom = max(t + h for _, t, h in self.bands)
        return QRectF(0.0, top, self.cycles, max(bottom - top, 1e-9))

    def edges(self, x_min: float, x_max: float, px: float) -> np.ndarray:
        """Bucket edges covering [x_min, x_max] ∩ [0, cycles]: multiples of the bucket width,
        the run's end as the last edge."""
        width = max(BUCKET_PX * px, 1e-9)
        lo, hi = max(x_min, 0.0), min(x_max, self.cycles)
        if hi <= lo:
            return np.zeros(0)
        first, last = math.floor(lo / width), math.ceil(hi / width)
        if last - first > 100_000:            # never more buckets than a screen can show
            last = first + 100_000
        edges = np.arange(first, last + 1, dtype=np.float64) * width
        edges = np.clip(edges, 0.0, self.cycles)
        return np.unique(edges)

    def prepare(self, x_min: float, x_max: float, px: float) -> None:
        key = (x_min, x_max, px)
        if key == self._key:
            return
        self._key = key
        self.bucket = BUCKET_PX * px
        parts: list[list[np.ndarray]] = [[] for _ in HEAT_CATEGORIES]
        edges = self.edges(x_min, x_max, px)
        if len(edges) >= 2:
            for activity, top, height in self.bands:
                for c, rects in enumerate(_band_rects(activity.shares(edges), edges, top, height)):
                    if len(rects):
                        parts[c].append(rects)
        self._rects = [np.concatenate(p) if p else np.zeros((0, 4)) for p in parts]

    def rects(self, category: int) -> np.ndarray:
        """(n, 4) x, y, width, height of the category's bands at the last ``prepare``."""
        return self._rects[category]

    def at(self, x: float, vy: float) -> tuple[int, float, float, np.ndarray] | None:
        """(band index, bucket start, bucket end, shares) of the strip under (x cycles, vy view
        units), with the bucket width of the last view; None off every strip."""
        for k, (activity, top, height) in enumerate(self.bands):
            if top <= vy < top + height and 0.0 <= x <= self.cycles:
                width = max(self.bucket, 1e-9)
                a = math.floor(x / width) * width
                b = min(a + width, self.cycles)
                if b <= a:
                    a, b = max(0.0, self.cycles - width), self.cycles
                return k, a, b, activity.shares(np.array([a, b]))[0]
        return None


def _band_rects(shares: np.ndarray, edges: np.ndarray, top: float, height: float) -> list[np.ndarray]:
    """Per category, the rectangles of one strip: each bucket's shares stacked top to bottom in
    category order, rounded to whole rows (the rounded boundaries keep the bands abutting), then
    runs of buckets with the same band merged into one rectangle."""
    inner = max(height - 2 * PAD_PX, 1.0)
    y_top = top + (height - inner) / 2
    bounds = np.zeros((len(shares), shares.shape[1] + 1))
    np.cumsum(shares, axis=1, out=bounds[:, 1:])
    rows = np.rint(bounds * inner)
    out = []
    n = len(shares)
    for c in range(shares.shape[1]):
        y0, y1 = rows[:, c], rows[:, c + 1]
        drawn = y1 > y0
        same = np.zeros(n, bool)
        same[1:] = drawn[1:] & drawn[:-1] & (y0[1:] == y0[:-1]) & (y1[1:] == y1[:-1])
        first = np.flatnonzero(drawn & ~same)
        if not len(first):
            out.append(np.zeros((0, 4)))
            continue
        breaks = np.flatnonzero(~same)          # where a run (drawn or not) starts
        nxt = np.searchsorted(breaks, first, "right")
        stop = np.where(nxt < len(breaks), breaks[np.minimum(nxt, len(breaks) - 1)], n)
        rects = np.empty((len(first), 4))
        rects[:, 0] = edges[first]
        rects[:, 1] = y_top + y0[first]
        rects[:, 2] = edges[stop] - edges[first]
        rects[:, 3] = y1[first] - y0[first]
        out.append(rects)
    return out


class HeatStripItem(pg.GraphicsObject):
    """The bands of one category over every collapsed group (one ``drawRects`` call)."""

    def __init__(self, strips: HeatStrips, category: int, color: QColor, name: str) -> None:
        super().__init__()
        self.strips = strips
        self.category = category
        self.name = name
        self.color = QColor(color)
        self._brush = QBrush(self.color)
        self._pen = QPen(Qt.PenStyle.NoPen)
        self._rects = internals.PrimitiveArray(QRectF, 4)
        self._bounding = QRectF()
        self.last_drawn = 0

    def set_color(self, color: QColor) -> None:
        self.color = QColor(color)
        self._brush = QBrush(self.color)
        self.update()

    def refresh(self) -> None:
        """The strips changed (groups collapsed or expanded, a new trace, lanes re-spaced)."""
        self.prepareGeometryChange()
        self._bounding = self.strips.bounding()
        self.update()

    def boundingRect(self) -> QRectF:
        return QRectF(self._bounding)

    def prepare(self) -> int:
        """Cut the strips for the current view; returns this category's rectangle count."""
        self.last_drawn = 0
        if not self.strips.bands:
            return 0
        view = self.getViewBox()
        rect = self.viewRect()
        if view is None or rect is None or view.width() <= 0:
            return 0
        px = (rect.right() - rect.left()) / float(view.width())
        if px <= 0:
            return 0
        self.strips.prepare(rect.left(), rect.right(), px)
        rects = self.strips.rects(self.category)
        self._rects.resize(len(rects))
        if len(rects):
            self._rects.ndarray()[:] = rects
        self.last_drawn = len(rects)
        return self.last_drawn

    def paint(self, p: QPainter, *args: object) -> None:
        if self.prepare():
            p.setPen(self._pen)
            p.setBrush(self._brush)
            p.drawRects(*self._rects.drawargs())
