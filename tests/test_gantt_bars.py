"""BarsItem culling, sub-pixel merging and levels of detail; RasterLayer against drawRects."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtGui import QColor, QImage  # noqa: E402

from engine.pipeline.examples import tiled_mm_kernel  # noqa: E402
from engine.pipeline.simulator import simulate  # noqa: E402
from gui.gantt import GanttView, raster  # noqa: E402
from gui.gantt.bars_item import BarsItem  # noqa: E402

LANE_Y = np.array([0.0, 1.0, 2.0])
LANE_H = np.array([1.0, 1.0, 1.0])


def _random_bars(n: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    lane = rng.integers(0, 3, n)
    x0 = rng.uniform(0, 10_000, n)
    width = np.where(rng.random(n) < 0.01, rng.uniform(100, 3000, n), rng.exponential(2.0, n))
    return lane, x0, x0 + width


def test_culling_matches_brute_force(qapp):
    lane, x0, x1 = _random_bars(5000)
    item = BarsItem(lane, x0, x1, LANE_Y, LANE_H, QColor("red"))
    for a, b in [(0, 10_000), (2500.5, 2600), (9990, 20_000), (-50, -1), (4000, 4000)]:
        got = item.visible_indices(a, b)
        expected = np.flatnonzero((item._x1 >= a) & (item._x0 <= b))
        assert np.array_equal(got, expected), (a, b)


def _rects_at(item: BarsItem, x_min: float, x_max: float, px: float) -> np.ndarray:
    item._rebuild(x_min, x_max, px)
    return np.c_[item.rects().copy(), item.rect_lanes()]


@pytest.mark.parametrize("x_min, x_max, pixels", [(0, 10_000, 800), (3000, 3400, 800), (0, 10_000, 50)])
def test_merged_rects_cover_bars_and_stay_apart(qapp, x_min, x_max, pixels):
    lane, x0, x1 = _random_bars(20_000)
    item = BarsItem(lane, x0, x1, LANE_Y, LANE_H, QColor("red"))
    px = (x_max - x_min) / pixels
    rects = _rects_at(item, x_min, x_max, px)
    assert item.last_drawn == len(rects) <= item.last_visible <= len(x0)
    for k in range(3):
        mine = rects[rects[:, 4] == k]
        left, right = mine[:, 0], mine[:, 0] + mine[:, 2]
        assert np.all(mine[:, 2] >= px * (1 - 1e-9)), "every rect at least one pixel wide"
        assert np.all(left[1:] > right[:-1] + px * (1 - 1e-9)), "rects of a lane more than a pixel apart"
        sel = (lane == k) & (x1 >= x_min) & (x0 <= x_max)
        a, b = np.clip(x0[sel], x_min - 2 * px, None), np.clip(x1[sel], None, x_max + 2 * px)
        where = np.searchsorted(left, a + 1e-9, "right") - 1
        assert np.all(where >= 0) and np.all(right[where] >= b - 1e-6), "a bar outside every rect"
        assert np.allclose(mine[:, 1], LANE_Y[k] + 0.1) and np.allclose(mine[:, 3], 0.8)


def test_levels_of_detail_give_the_same_rects(qapp):
    lane, x0, x1 = _random_bars(200_000, seed=5)
    item = BarsItem(lane, x0, x1, LANE_Y, LANE_H, QColor("red"))
    assert len(item.levels) >= 2 and item.levels[-1] < item.levels[0] / 4
    for x_min, x_max, pixels in [(0, 10_000, 1500), (0, 10_000, 300), (1000, 6000, 900)]:
        px = (x_max - x_min) / pixels
        with_lod = _rects_at(item, x_min, x_max, px)
        levels = item._levels
        item._levels = levels[:1]                       # raw bars only
        raw = _rects_at(item, x_min, x_max, px)
        item._levels = levels
        assert with_lod.shape == raw.shape and np.allclose(with_lod, raw)


def _grab_array(view: GanttView) -> np.ndarray:
    image = view.graphics.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    buf = np.frombuffer(image.constBits(), np.uint8, count=image.sizeInBytes())
    return buf.reshape(image.height(), image.bytesPerLine() // 4, 4)[:, : image.width(), :3].copy()


def test_raster_layer_draws_what_drawrects_draws(qtbot, monkeypatch):
    d = tiled_mm_kernel(tiles=3, blocks=8)
    r = simulate(d)
    view = GanttView()
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    view.set_trace(r.trace, [i.name for i in d.instructions], None, float(r.cycles), d.subsystems)
    monkeypatch.setattr(raster, "RECT_LIMIT", 10**9)
    by_rects = _grab_array(view)
    assert not view.bars.raster.rasterised
    monkeypatch.setattr(raster, "RECT_LIMIT", 0)
    view.bars.raster._cache_key = None
    by_image = _grab_array(view)
    assert view.bars.raster.rasterised
    differ = np.any(by_rects != by_image, axis=2)
    # edges may round to the neighbouring pixel; anything more is a real difference
    assert differ.mean() < 0.03, f"{differ.mean():.1%} of the pixels differ"
    view.plot.getViewBox().setXRange(200, 2000, padding=0)
    shifted = _grab_array(view)
    assert np.any(shifted != by_image, axis=2).mean() > 0.1      # the comparison can tell views apart
