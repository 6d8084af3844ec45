"""The Gantt chart draws a collapsed warp group as a heat strip (issue 15, item 2): the engine's
shares per time bucket stacked as bands in the stall colours, one drawRects item per colour."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from engine.timeline.activity import HEAT_CATEGORIES  # noqa: E402
from gui.gantt import GanttView  # noqa: E402
from gui.gantt.heat_item import PAD_PX  # noqa: E402
from tests.test_timeline_heat import _trace  # noqa: E402

CAT = {c: k for k, c in enumerate(HEAT_CATEGORIES)}


@pytest.fixture
def view(qtbot):
    v = GanttView()
    qtbot.addWidget(v)
    v.resize(1000, 600)
    v.show()
    qtbot.waitExposed(v)
    v.set_trace(_trace(), ["ld.global.f32 %f1, [%rd1];", "bar.sync 0;"], None, 8.0, ["alu"])
    return v


def _bands_at(view: GanttView, x: float) -> dict[str, tuple[float, float]]:
    """Top and height of every category's band drawn at cycle ``x`` (at the last paint)."""
    out = {}
    for item in view.heat.items:
        rects = view.heat.strips.rects(item.category)
        hit = rects[(rects[:, 0] <= x) & (x < rects[:, 0] + rects[:, 2])]
        if len(hit):
            assert len(hit) == 1
            out[item.name] = (float(hit[0, 1]), float(hit[0, 3]))
    return out


def test_a_collapsed_group_is_drawn_as_its_heat_strip(view, qtbot):
    groups = dict(view.groups.warp_groups())
    assert set(groups) == {"block 0", "block 1"}
    view.groups.set_group_collapsed("block 0", True)
    view.plot.getViewBox().setXRange(0.0, 8.0, padding=0.0)
    view.grab()
    strips = view.heat.strips
    assert len(strips.bands) == 1
    activity, top, height = strips.bands[0]
    assert (top, height) == view.lane_geometry.lane_band_px(groups["block 0"][0])
    assert activity.lanes == 2
    inner = height - 2 * PAD_PX
    # every bucket of the view: shares sum to 1 and the bands fill the strip
    edges = strips.edges(0.0, 8.0, (8.0 / view.plot.getViewBox().width()))
    assert np.allclose(activity.shares(edges).sum(axis=1), 1.0)
    # cycle 3.5: warp 0 waits on memory, warp 1 at the barrier -> half and half, stacked in order
    bands = _bands_at(view, 3.5)
    assert set(bands) == {"memory_dependency", "barrier"}
    assert bands["memory_dependency"] == pytest.approx((top + PAD_PX, inner / 2))
    assert bands["barrier"] == pytest.approx((top + PAD_PX + inner / 2, inner / 2))
    # cycle 7.5: warp 0 finished (idle), warp 1 issues
    bands = _bands_at(view, 7.5)
    assert bands == {"issuing": pytest.approx((top + PAD_PX, inner / 2)),
                     "idle": pytest.approx((top + PAD_PX + inner / 2, inner / 2))}
    # the group's own stall bars are not drawn over the strip
    for item in view.bar_items():
        rects = item.rects()
        inside = (rects[:, 1] >= top) & (rects[:, 1] < top + height)
        assert np.all(rects[inside, 3] == 0)
    # hovering the strip names the shares of the bucket under the pointer
    text = view.heat.text_at(3.5, top + height / 2)
    assert text.startswith("block 0 (collapsed, 2 warps)")
    assert "50 % waiting for memory" in text and "50 % at a barrier" in text
    # expanded again: no strip, the bars are back
    view.groups.set_group_collapsed("block 0", False)
    view.grab()
    assert not view.heat.strips.bands and all(item.last_drawn == 0 for item in view.heat.items)
    assert any(len(item.rects()) and np.all(item.rects()[:, 3] > 0) for item in view.bar_items())


def test_collapse_all_survives_a_new_trace(view):
    view.groups.set_all_collapsed(True)
    view.set_trace(_trace(), ["a", "b"], None, 8.0, ["alu"])
    view.grab()
    assert len(view.heat.strips.bands) == 2
    assert sum(item.last_drawn for item in view.heat.items) > 0
