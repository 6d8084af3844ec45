"""One colour's worth of Gantt bars, drawn with a single ``QPainter.drawRects`` call.

A chart holds one :class:`BarsItem` per colour key, never one graphics item per bar. At each
view change the item keeps only the bars inside the visible x-range (binary search per lane on
bars sorted by start, with a running maximum of the ends so long bars are not missed) and
coalesces, per lane, bars that overlap or are less than a pixel apart into one rectangle at
least one pixel wide. A fully zoomed-out chart of a million bars thus paints at most a few
rectangles per pixel column, and a pan costs a few vectorised numpy passes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from numba import njit
from pyqtgraph.Qt import internals
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPen

if TYPE_CHECKING:
    from gui.gantt.raster import RasterLayer

BAR_FILL = 0.8          # fraction of a lane's height a bar covers (the rest separates lanes)
_LOD_STEPS = 9           # levels of detail tried: gaps span / 65536 up to span / 256
_LOD_MIN_BARS = 2048    # levels of detail stop once a level holds no more bars than this
_MARGIN_PX = 2.0        # bars are clipped this far outside the view (keeps coordinates small)


class BarsItem(pg.GraphicsObject):
    """Bars of one colour over several lanes.

    ``lane_y``/``lane_h``: top and height of every lane (layout units). ``lane``/``x0``/``x1``:
    per bar; the item sorts them by (lane, x0) itself, unless ``presorted`` says they come so
    (int64 lanes, float64 starts and ends).
    """

    def __init__(self, lane: np.ndarray, x0: np.ndarray, x1: np.ndarray, lane_y: np.ndarray,
                 lane_h: np.ndarray, color: QColor, outline: QColor | None = None,
                 name: str = "", presorted: bool = False) -> None:
        super().__init__()
        self.name = name
        self.color = QColor(color)
        self._brush = QBrush(self.color)
        self._pen = QPen(Qt.PenStyle.NoPen) if outline is None else pg.mkPen(outline, width=1, cosmetic=True)
        self._rects = internals.PrimitiveArray(QRectF, 4)
        self.layer: RasterLayer | None = None    # set when a RasterLayer may paint this item
        self._bounding = QRectF()
        self._store(lane, x0, x1, lane_y, lane_h, presorted)

    def set_data(self, lane: np.ndarray, x0: np.ndarray, x1: np.ndarray, lane_y: np.ndarray,
                 lane_h: np.ndarray, presorted: bool = False) -> None:
        """Replace the bars (same colour, name and pen): a new trace whose colours did not change
        reuses the items instead of rebuilding them, their legend and their scene entries."""
        self.prepareGeometryChange()
        self._store(lane, x0, x1, lane_y, lane_h, presorted)
        self.update()

    def set_lane_geometry(self, lane_y: np.ndarray, lane_h: np.ndarray) -> None:
        """Move the lanes (new tops and heights, same bars): the chart re-spaces its lanes when it
        is resized or a lane group is collapsed, without re-sorting or re-merging any bar."""
        self.prepareGeometryChange()
        self._place_lanes(lane_y, lane_h)
        self._cache_key = None
        self.update()

    def _place_lanes(self, lane_y: np.ndarray, lane_h: np.ndarray) -> None:
        pad = (1.0 - BAR_FILL) / 2.0
        self._bar_y = (lane_y[self._lanes] + pad * lane_h[self._lanes]).astype(np.float64)
        self._bar_h = (BAR_FILL * lane_h[self._lanes]).astype(np.float64)
        if len(self._lane):
            y0 = float(self._bar_y.min())
            y1 = float((self._bar_y + self._bar_h).max())
            self._bounding = QRectF(self._origin, y0, max(self._span, 1e-9), max(y1 - y0, 1e-9))
        else:
            self._bounding = QRectF()

    def _store(self, lane: np.ndarray, x0: np.ndarray, x1: np.ndarray, lane_y: np.ndarray,
               lane_h: np.ndarray, presorted: bool = False) -> None:
        if not presorted:
            lane, x0, x1 = _sort_bars(lane, x0, x1)
        starts = np.flatnonzero(lane[1:] != lane[:-1]) + 1
        self._lanes = lane[np.concatenate(([0], starts))] if len(lane) else lane
        # rank of each bar's lane among this item's lanes (lanes come sorted: a running count)
        rank = np.zeros(len(lane), np.int64)
        rank[starts] = 1
        np.cumsum(rank, out=rank)
        self._origin = float(x0.min()) if len(x0) else 0.0
        span = float(x1.max() - self._origin) if len(x1) else 0.0
        self._span = span
        self._stride = 2.0 * span + 4.0       # per-lane key offset, wider than the whole run
        raw = _Level(rank, x0, x1, 0.0, self._origin, self._stride, len(self._lanes))
        # Coarser copies with bars closer than `gap` cycles pre-merged: a zoomed-out view
        # (one pixel >= gap) merges the coarsest such level instead of every bar. Gaps double
        # from level to level (span / 65536 up to span / 256), so a view finds one within a
        # factor two of its pixel size; a level is kept only if it is markedly smaller, which
        # bounds the memory to a few times the raw bars. Which levels exist is decided from the
        # raw bars alone (see _plan_levels); each is built on first use, so a new trace pays
        # only for the levels its views need.
        self._levels = [raw]
        self._lod_plan: list[int] | None = None      # levels of detail k kept (gap as below)
        self._lod_pending: set[int] = set()          # of those, the ones not built yet
        # The first view of new bars (the redraw after an edit) culls and merges the raw bars,
        # one pass; planning and building levels pays off only for the views that follow.
        self._first_view = True
        self._lane, self._x0, self._x1 = lane, x0, x1
        self._place_lanes(lane_y, lane_h)
        self._cache_key: tuple[float, float, float] | None = None
        self.last_visible = 0     # bars inside the view at the last paint (before merging)
        self.last_drawn = 0       # rectangles handed to drawRects at the last paint
        self._rect_rank = np.zeros(0, np.int64)
        self._rects.resize(0)

    def _lod_gap(self, k: int) -> float:
        return self._span / 65536.0 * 2.0 ** k

    def _plan_levels(self) -> None:
        """The levels the eager chain (merge the last kept level at gaps span / 65536 doubling
        up to span / 256, keep a level only if <= 0.7 of the last kept one, stop once that is
        <= 2048 bars) would keep. Merging at gap g gives the same groups from the raw bars as
        from any level pre-merged at a smaller gap, so each level's size is one count over the
        raw bars' gaps, with no merge."""
        self._lod_plan = []
        raw = self._levels[0]
        if self._span <= 0 or len(raw) <= _LOD_MIN_BARS:
            return
        offset = raw.rank * self._stride
        reach = np.maximum.accumulate(raw.x1 + offset)[:-1]
        starts = raw.x0[1:] + offset[1:]
        last = len(raw)
        for k in range(_LOD_STEPS):
            if last <= _LOD_MIN_BARS:
                break
            n = 1 + int(np.count_nonzero(starts > reach + self._lod_gap(k)))
            if n <= 0.7 * last:
                self._lod_plan.append(k)
                last = n
        self._lod_pending = set(self._lod_plan)

    def _build_level(self, k: int) -> None:
        """Build kept level ``k`` by merging the coarsest level already built below its gap."""
        if k not in self._lod_pending:
            return
        self._lod_pending.discard(k)
        gap = self._lod_gap(k)
        below = [i for i, level in enumerate(self._levels) if level.gap <= gap]
        self._levels.insert(below[-1] + 1, self._levels[below[-1]].merged(gap))

    def __len__(self) -> int:
        return len(self._lane)

    @property
    def levels(self) -> list[int]:
        """Bars held at each level of detail (raw first)."""
        if self._lod_plan is None:
            self._plan_levels()
        for k in sorted(self._lod_pending):
            self._build_level(k)
        return [len(level) for level in self._levels]

    # ---- QGraphicsItem ------------------------------------------------------------------------
    def boundingRect(self) -> QRectF:
        return QRectF(self._bounding)

    def viewTransformChanged(self) -> None:
        super().viewTransformChanged()
        self._cache_key = None

    def prepare(self) -> int:
        """Cull and merge for the current view (cached per view range); returns the rect count."""
        if not len(self._lane):
            return 0
        view = self.getViewBox()
        rect = self.viewRect()
        if view is None or rect is None or view.width() <= 0:
            return 0
        x_min, x_max = rect.left(), rect.right()
        px = (x_max - x_min) / float(view.width())     # cycles per screen pixel
        if px <= 0:
            return 0
        key = (x_min, x_max, px)
        if key != self._cache_key:
            self._rebuild(x_min, x_max, px)
            self._cache_key = key
        return self.last_drawn

    def rects(self) -> np.ndarray:
        """The merged rectangles of the last ``prepare``: (n, 4) x, y, width, height (data units)."""
        return self._rects.ndarray()

    def paint(self, p: QPainter, *args: object) -> None:
        self.prepare()
        if self.layer is not None and self.layer.rasterised:
            return                      # the layer painted this item's rects into its image
        if self.last_drawn:
            p.setPen(self._pen)
            p.setBrush(self._brush)
            p.drawRects(*self._rects.drawargs())

    # ---- culling and merging ------------------------------------------------------------------
    def _level_for(self, px: float) -> _Level:
        """The coarsest level whose pre-merged gaps are below one pixel (the raw bars for the
        first view of new bars, while no level is planned)."""
        if self._lod_plan is None:
            if self._first_view:
                self._first_view = False
                return self._levels[0]
            self._plan_levels()
        if self._lod_pending and px > 0:
            usable = [k for k in self._lod_plan if self._lod_gap(k) <= px]
            if usable:
                self._build_level(usable[-1])
        chosen = self._levels[0]
        for level in self._levels[1:]:
            if level.gap <= px:
                chosen = level
        return chosen

    def visible_indices(self, x_min: float, x_max: float, px: float = 0.0) -> np.ndarray:
        """Indices into the level used at ``px`` cycles per pixel (raw bars for 0) of the bars
        that intersect [x_min, x_max], sorted by (lane, x0)."""
        return self._level_for(px).visible(x_min, x_max)

    def _rebuild(self, x_min: float, x_max: float, px: float) -> None:
        level = self._level_for(px)
        idx = level.visible(x_min - _MARGIN_PX * px, x_max + _MARGIN_PX * px)
        self.last_visible = len(idx)
        if not len(idx):
            self.last_drawn = 0
            self._rects.resize(0)
            return
        width_px = (x_max - x_min) / px
        # pixel coordinates: every bar at least a pixel wide, then clipped to just outside the
        # view (in this order, so pre-merged levels and raw bars give the same rectangles); a new
        # rectangle starts where a bar begins more than a pixel after the earlier ones end
        lane_rank, left, right = _merge_pixels(level.rank, level.x0, level.x1, idx, x_min, px, width_px,
                                               _MARGIN_PX)
        n = len(lane_rank)
        self._rects.resize(n)
        out = self._rects.ndarray()
        out[:, 0] = x_min + left * px
        out[:, 1] = self._bar_y[lane_rank]
        out[:, 2] = (right - left) * px
        out[:, 3] = self._bar_h[lane_rank]
        self._rect_rank = lane_rank
        self.last_drawn = n

    def rect_lanes(self) -> np.ndarray:
        """Lane rank (index into this item's lanes) of each rectangle of the last ``prepare``."""
        return self._rect_rank[: self.last_drawn]

    def lane_band(self, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Top and height (data units) of the bars of these lane ranks."""
        return self._bar_y[rank], self._bar_h[rank]


def split_by_key(key: np.ndarray, lane: np.ndarray, x0: np.ndarray, x1: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Bars of several colours sorted into (key, lane) order, stable (the bars of one lane come
    sorted by x0, so each key's bars are then in the (lane, x0) order a BarsItem keeps). Returns
    the keys present, each one's start and end in the sorted columns, and the sorted lane, x0,
    x1. Keys and lanes are small non-negative integers: a linear counting sort."""
    if not len(key):
        empty = np.zeros(0, np.int64)
        return empty, empty, empty, empty, np.zeros(0), np.zeros(0)
    n_rows = int(lane.max()) + 1
    n_keys = int(key.max()) + 1
    starts, lane_s, x0_s, x1_s = _counting_sort(np.ascontiguousarray(key, dtype=np.int64),
                                                np.ascontiguousarray(lane, dtype=np.int64), n_rows,
                                                n_keys * n_rows, x0, x1)
    by_key = starts[::n_rows]              # key k's bars: [by_key[k], by_key[k + 1])
    keys = np.flatnonzero(by_key[1:] > by_key[:-1])
    return keys, by_key[keys], by_key[keys + 1], lane_s, x0_s, x1_s


@njit(cache=True)
def _counting_sort(key: np.ndarray, lane: np.ndarray, n_rows: int, n_pairs: int, x0: np.ndarray,
                   x1: np.ndarray) -> tuple:  # pragma: no cover - compiled
    n = len(key)
    starts = np.zeros(n_pairs + 1, np.int64)
    for i in range(n):
        starts[key[i] * n_rows + lane[i] + 1] += 1
    for p in range(n_pairs):
        starts[p + 1] += starts[p]
    fill = starts[:-1].copy()
    lane_s = np.empty(n, np.int64)
    x0_s = np.empty(n, np.float64)
    x1_s = np.empty(n, np.float64)
    for i in range(n):
        p = key[i] * n_rows + lane[i]
        j = fill[p]
        fill[p] = j + 1
        lane_s[j] = lane[i]
        x0_s[j] = x0[i]
        x1_s[j] = x1[i]
    return starts, lane_s, x0_s, x1_s


def _sort_bars(lane: np.ndarray, x0: np.ndarray,
               x1: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bars sorted by (lane, x0), ties in the given order (what a stable lexsort gives). The
    Gantt hands over bars already sorted by x0 within each lane, so one stable sort by lane
    (or none) usually does."""
    lane = np.asarray(lane, dtype=np.int64)
    x0 = np.asarray(x0, dtype=np.float64)
    x1 = np.asarray(x1, dtype=np.float64)
    if len(lane) > 1 and not np.all(lane[1:] >= lane[:-1]):
        order = np.argsort(lane, kind="stable")
        lane, x0, x1 = lane[order], x0[order], x1[order]
    if len(lane) > 1 and not np.all((lane[1:] != lane[:-1]) | (x0[1:] >= x0[:-1])):
        order = np.lexsort((x0, lane))
        lane, x0, x1 = lane[order], x0[order], x1[order]
    return np.ascontiguousarray(lane), np.ascontiguousarray(x0), np.ascontiguousarray(x1)


@njit(cache=True)
def _merge_pixels(rank: np.ndarray, x0: np.ndarray, x1: np.ndarray, idx: np.ndarray, x_min: float,
                  px: float, width_px: float, margin: float) -> tuple:  # pragma: no cover - compiled
    """The rectangles of bars ``idx`` (sorted by lane rank, then x0) in pixels of a view starting
    at ``x_min`` with ``px`` cycles per pixel: each bar at least a pixel wide, clipped to
    ``margin`` pixels outside the view, and the bars of a lane that overlap or lie within a
    pixel merged. Returns each rectangle's lane rank, left and right (one pass, as ``_merge``
    on the same pixel coordinates)."""
    n = len(idx)
    out_rank = np.empty(n, np.int64)
    out_left = np.empty(n, np.float64)
    out_right = np.empty(n, np.float64)
    lo, hi = -margin, width_px + margin
    m = -1
    lane = -1
    reach = 0.0
    for j in range(n):
        i = idx[j]
        a = (x0[i] - x_min) / px
        b = (x1[i] - x_min) / px
        if b < a + 1.0:
            b = a + 1.0
        a = min(max(a, lo), hi)
        b = min(max(b, lo), hi)
        r = rank[i]
        if r != lane or a > reach + 1.0:
            m += 1
            out_rank[m] = r
            out_left[m] = a
            lane = r
            reach = b
        elif b > reach:
            reach = b
        out_right[m] = reach
    return out_rank[: m + 1], out_left[: m + 1], out_right[: m + 1]


def _merge(rank: np.ndarray, a: np.ndarray, b: np.ndarray, gap: float,
           stride: float) -> tuple[np.ndarray, np.ndarray]:
    """Group intervals (sorted by rank, then a) of one rank that overlap or lie within ``gap``:
    returns each group's first index and right end. Keys are offset by rank * stride (stride
    wider than any a..b span) so one running maximum over the array restarts at every rank."""
    offset = rank * stride
    reach = np.maximum.accumulate(b + offset)
    start = np.empty(len(a), bool)
    start[:1] = True
    np.greater(a[1:] + offset[1:], reach[:-1] + gap, out=start[1:])
    first = np.flatnonzero(start)
    last = np.append(first[1:] - 1, len(a) - 1)
    return first, reach[last] - offset[first]


class _Level:
    """Bars sorted by (lane rank, x0) with the search keys culling needs."""

    def __init__(self, rank: np.ndarray, x0: np.ndarray, x1: np.ndarray, gap: float, origin: float,
                 stride: float, n_lanes: int | None = None) -> None:
        self.rank = np.asarray(rank, dtype=np.int64)
        self.x0, self.x1, self.gap = x0, x1, gap
        self._origin, self._stride = origin, stride
        self._n_lanes = n_lanes if n_lanes is not None else (int(self.rank.max()) + 1 if len(self.rank) else 0)
        # every bar intersects a view from the earliest end to the latest start
        self._span = (float(x1.min()), float(x0.max())) if len(x0) else None
        self._keys: tuple[np.ndarray, np.ndarray] | None = None    # made by the first partial view

    def _search_keys(self) -> tuple[np.ndarray, np.ndarray]:
        """Start keys and the running max of end keys, offset per lane: the running max restarts
        per lane (via the offsets) and is monotonic, so a binary search finds the first bar
        reaching x even when one long bar starts far to the left. Made on first need (a view
        that holds every bar needs none)."""
        if self._keys is None:
            offset = self.rank * self._stride - self._origin
            cummax = np.maximum.accumulate(self.x1 + offset) if len(self.x1) else self.x1.copy()
            self._keys = (self.x0 + offset, cummax)
        return self._keys

    def __len__(self) -> int:
        return len(self.x0)

    def merged(self, gap: float) -> _Level:
        first, right = _merge(self.rank, self.x0, self.x1, gap, self._stride)
        return _Level(self.rank[first], self.x0[first], right, gap, self._origin, self._stride, self._n_lanes)

    def visible(self, x_min: float, x_max: float) -> np.ndarray:
        if self._span is not None and x_min <= self._span[0] and x_max >= self._span[1]:
            return np.arange(len(self.x0), dtype=np.int64)       # every bar is in the view
        x0_key, cummax_key = self._search_keys()
        offsets = np.arange(self._n_lanes, dtype=np.float64) * self._stride
        x_lo = min(max(x_min - self._origin, -1.0), self._stride / 2)
        x_hi = min(max(x_max - self._origin, -1.0), self._stride / 2)
        lo = np.searchsorted(cummax_key, offsets + x_lo, "left")
        hi = np.maximum(np.searchsorted(x0_key, offsets + x_hi, "right"), lo)
        counts = hi - lo
        total = int(counts.sum())
        if total == 0:
            return np.zeros(0, np.int64)
        # concatenated aranges lo[k]..hi[k] without a Python loop over lanes or bars
        step = np.ones(total, np.int64)
        nz = counts > 0
        firsts = np.cumsum(counts[nz]) - counts[nz]
        step[firsts] = lo[nz] - np.concatenate(([0], hi[nz][:-1] - 1))
        idx = np.cumsum(step)
        # the running maximum also lets in short bars that follow a long one: drop them
        return idx[self.x1[idx] >= x_min]
