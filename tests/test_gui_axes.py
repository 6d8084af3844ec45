"""Plot axes that choose their ticks from the pixels they have (gui/axes.py): labels that keep
apart on any range and size, whole numbers on a count axis, round log-scale values, and no
runaway tick lists when the user zooms far out."""

from __future__ import annotations

import math

import pytest

from gui.axes import MIN_GAP_PX, IntegerAxis, LogAxis, compact


def _gaps_ok(axis, values, lo, hi, size) -> bool:
    per = size / (hi - lo)
    texts = axis.tickStrings(values, 1.0, 0.0)
    pairs = list(zip(values, texts, strict=True))
    return all((b - a) * per >= (axis._extent(ta) + axis._extent(tb)) / 2 + MIN_GAP_PX - 1e-9
               for (a, ta), (b, tb) in zip(pairs, pairs[1:], strict=False))


@pytest.mark.parametrize(("lo", "hi", "size"), [(0.7, 8.3, 300), (0.7, 2.3, 300), (0.7, 32.3, 300),
                                                (0.7, 64.3, 120), (-1e7, 1e7, 300), (3.2, 3.8, 400)])
def test_integer_axis(qapp, lo, hi, size):
    axis = IntegerAxis("bottom")
    levels = axis.tickValues(lo, hi, size)
    labelled = levels[0][1] if levels else []
    assert bool(labelled) == (math.floor(hi) >= math.ceil(lo))     # (3.2 to 3.8 holds no whole number)
    assert all(float(v).is_integer() and lo <= v <= hi for v in labelled)
    assert labelled == sorted(labelled) and _gaps_ok(axis, labelled, lo, hi, size)
    assert sum(len(values) for _, values in levels) <= size      # never more ticks than pixels


def test_integer_axis_labels_every_block_when_there_is_room(qapp):
    axis = IntegerAxis("bottom")
    assert axis.tickStrings(axis.tickValues(0.7, 8.3, 300)[0][1], 1.0, 0.0) == [str(k) for k in range(1, 9)]
    assert axis.tickStrings(axis.tickValues(0.7, 2.3, 300)[0][1], 1.0, 0.0) == ["1", "2"]


@pytest.mark.parametrize(("lo", "hi", "size"), [(3.7, 5.5, 110), (3.7, 5.5, 400), (4.0, 4.1, 200),
                                                (3.95, 4.0, 100), (-300.0, 300.0, 300), (0.0, 12.0, 150)])
def test_log_axis(qapp, lo, hi, size):
    axis = LogAxis("left")
    levels = axis.tickValues(lo, hi, size)
    labelled = levels[0][1]
    texts = axis.tickStrings(labelled, 1.0, 0.0)
    assert labelled and labelled == sorted(labelled) and all(lo <= v <= hi for v in labelled)
    assert _gaps_ok(axis, labelled, lo, hi, size), texts
    assert len(set(texts)) == len(texts), texts
    assert sum(len(values) for _, values in levels) <= size


def test_log_axis_prefers_round_values(qapp):
    axis = LogAxis("left")
    texts = axis.tickStrings(axis.tickValues(3.7, 5.5, 400)[0][1], 1.0, 0.0)
    assert {"10k", "20k", "50k", "100k"} <= set(texts)
    texts = axis.tickStrings(axis.tickValues(3.7, 5.5, 110)[0][1], 1.0, 0.0)
    assert texts == ["10k", "30k", "100k"]
    # within a decade: a round linear step
    values = [10 ** v for v in axis.tickValues(4.0, 4.1, 200)[0][1]]
    steps = {round(b - a) for a, b in zip(values, values[1:], strict=False)}
    assert len(steps) == 1 and math.log10(steps.pop()) % 1 in (0.0, pytest.approx(math.log10(2)),
                                                                 pytest.approx(math.log10(5)))


def test_compact_labels():
    assert [compact(v) for v in (0, 0.05, 950, 9500, 20000, 1.5e6, 2e9, 1e15, 2.5e-7)] == \
        ["0", "0.05", "950", "9.5k", "20k", "1.5M", "2G", "1e15", "2.5e-7"]
