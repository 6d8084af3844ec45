"""Plot axes whose tick labels never run into each other, whatever the plot's size.

pyqtgraph always draws every label of its first tick level: on a log axis that is one label per
1…9 × 10^k as soon as the range spans less than a few decades (so "4·10⁴ 5·10⁴ 6·10⁴ …" piled on
top of each other in a 250-pixel plot), and a fixed spacing of 1 on a count axis prints 32
labels into 300 pixels. These axes choose the ticks from the pixels they have:

* :class:`LogAxis` (for ``setLogMode(..., True)``): every n-th decade, decades, then 1-3, 1-2-5,
  1-2-3-5 or finer mantissas, or a round linear step within about a decade — the densest set whose
  labels keep :data:`MIN_GAP_PX` apart — labelled compactly ("20k", "1.5M").
* :class:`IntegerAxis`: whole numbers only, every 1, 2, 5, 10, … as the labels' widths allow.

A set with more ticks than the axis has pixels for is never built (the user may zoom far out).
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtGui import QFontMetricsF

MIN_GAP_PX = 6.0          # free pixels between two labels
MIN_TICK_PX = 4.0         # no tick set, labelled or not, is denser than this
# Mantissa sets of a log axis, densest last; each is tried from the sparsest up.
MANTISSAS = ((1,), (1, 3), (1, 2, 5), (1, 2, 3, 5), (1, 1.5, 2, 3, 4, 5, 7))
NICE_STEPS = (1, 2, 5)


def compact(value: float) -> str:
    """A short tick label: 0.05, 950, 9.5k, 20k, 300k, 1.5M, 2G; 1e15 and 1e-5 beyond."""
    a = abs(value)
    if a and (a >= 1e12 or a < 1e-2):
        mantissa, exponent = f"{value:.2g}".split("e") if "e" in f"{value:.2g}" else (f"{value:.2g}", "0")
        return f"{mantissa}e{int(exponent)}"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            return f"{value / div:.3g}{suffix}"
    return f"{value:.3g}"


def _nice_steps(smallest: float):
    """1, 2, 5 × 10^k from the first that is at least ``smallest``, increasing."""
    k = math.floor(math.log10(smallest)) if smallest > 0 else 0
    while True:
        for m in NICE_STEPS:
            step = m * 10.0 ** k
            if step >= smallest * (1 - 1e-12):
                yield step
        k += 1


class _SpacedAxis(pg.AxisItem):
    """An axis that lays out its own ticks: subclasses give :meth:`candidates`, and the densest
    whose labels do not collide is labelled; :meth:`minor` ticks (grid lines) carry no text."""

    def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
        super().__init__(*args, **kwargs)
        self.setStyle(maxTextLevel=0)      # text on the labelled level only

    def _metrics(self) -> QFontMetricsF:
        return QFontMetricsF(self.style["tickFont"] or self.font())

    def _extent(self, text: str) -> float:
        """Pixels a label takes along the axis."""
        metrics = self._metrics()
        if self.orientation in ("left", "right"):
            return metrics.height()
        return metrics.horizontalAdvance(text)

    def fits(self, values: list[float], minVal: float, maxVal: float, size: float) -> bool:
        """Whether labels at ``values`` (axis coordinates) keep MIN_GAP_PX apart on ``size`` pixels."""
        if len(values) < 2 or maxVal <= minVal:
            return True
        per = size / (maxVal - minVal)
        texts = self.tickStrings(values, 1.0, 0.0)
        pos = sorted(zip(values, texts, strict=True))
        for (a, ta), (b, tb) in zip(pos, pos[1:], strict=False):
            if (b - a) * per < (self._extent(ta) + self._extent(tb)) / 2 + MIN_GAP_PX:
                return False
        return True

    def candidates(self, lo: float, hi: float, most: int) -> list[list[float]]:
        """Tick sets for the range of at most ``most`` ticks, sparsest first."""
        raise NotImplementedError

    def minor(self, lo: float, hi: float, most: int) -> list[float]:
        """Unlabelled ticks (grid lines) for the range: at most ``most`` of them, else none."""
        return []

    def labelled(self, minVal: float, maxVal: float, size: float) -> list[float]:
        """The ticks that get a label: the densest candidate set that fits (the sparsest set
        when none does: a single label always fits)."""
        lo, hi = min(minVal, maxVal), max(minVal, maxVal)
        if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo or size <= 0:
            return []
        per = size / (hi - lo)
        # a label must fit inside the axis, or pyqtgraph leaves it out
        sets = [[v for v, t in zip(values, self.tickStrings(values, 1.0, 0.0), strict=True)
                 if min(v - lo, hi - v) * per >= self._extent(t) / 2]
                for values in self.candidates(lo, hi, self._most(size))]
        sets = [v for v in sets if v]
        fitting = [v for v in sets if self.fits(v, lo, hi, size)]
        if not fitting:
            return sets[0][:1] if sets else []
        return max(fitting, key=len)       # max keeps the first (sparsest kind) of equal lengths

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, list[float]]]:
        chosen = self.labelled(minVal, maxVal, size)
        if not chosen:
            return []
        lo, hi = min(minVal, maxVal), max(minVal, maxVal)
        taken = {round(v, 9) for v in chosen}
        minor = [v for v in self.minor(lo, hi, self._most(size)) if round(v, 9) not in taken]
        return [(0.0, chosen), (0.0, minor)]

    @staticmethod
    def _most(size: float) -> int:
        return max(2, int(size / MIN_TICK_PX))


class LogAxis(_SpacedAxis):
    """Ticks of a log10 axis (the plot in log mode: axis coordinates are log10 of the data)."""

    def candidates(self, lo: float, hi: float, most: int) -> list[list[float]]:
        first, last = math.floor(lo), math.ceil(hi)
        out: list[list[float]] = []
        # every n-th decade, sparsest first
        span = max(last - first, 1)
        for every in sorted({max(1, span // d) for d in range(1, min(span, most) + 1)}, reverse=True):
            if span // every <= most:
                out.append([float(k) for k in range(first, last + 1) if k % every == 0 and lo <= k <= hi])
        for mantissas in MANTISSAS[1:]:
            if span * len(mantissas) <= most:
                out.append([k + math.log10(m) for k in range(first, last + 1) for m in mantissas
                            if lo <= k + math.log10(m) <= hi])
        if hi - lo < 1.0:
            # about one decade or less: a round linear step on the data itself
            a, b = 10.0 ** lo, 10.0 ** hi
            for step in _nice_steps((b - a) / min(12, most)):
                values = [math.log10(n * step) for n in range(math.ceil(a / step), math.floor(b / step) + 1)
                          if n > 0]
                out.append(values)
                if len(values) <= 2:
                    break
        out = [v for v in out if v]
        out.sort(key=len)
        return out

    def minor(self, lo: float, hi: float, most: int) -> list[float]:
        if (math.ceil(hi) - math.floor(lo)) * 9 > most:
            return []
        return [k + math.log10(m) for k in range(math.floor(lo), math.ceil(hi) + 1) for m in range(1, 10)
                if lo <= k + math.log10(m) <= hi]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        return [compact(float(f"{10.0 ** v:.6g}")) for v in values]


class IntegerAxis(_SpacedAxis):
    """Whole-number ticks (a count: resident blocks per SM)."""

    def candidates(self, lo: float, hi: float, most: int) -> list[list[float]]:
        out = []
        for step in _nice_steps(max(1.0, (hi - lo) / most)):
            step = float(round(step))
            first, last = math.ceil(lo / step), math.floor(hi / step)
            values = [n * step for n in range(first, last + 1)]
            out.append(values)
            if len(values) <= 2:
                break
        out.sort(key=len)
        return out

    def minor(self, lo: float, hi: float, most: int) -> list[float]:
        if hi - lo > most:
            return []
        return [float(n) for n in range(math.ceil(lo), math.floor(hi) + 1)]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        return [str(int(round(v))) for v in values]
