"""The series under the Gantt chart (:mod:`engine.evaluation.timeseries`), on its time axis: bytes
per cycle at L1, L2 and DRAM against the profile's per-SM bandwidth, the active warps, and the
share of the active warps issuing or waiting for each stall cause (stacked, in the stall colours).

The three plots share one x axis, linked to the chart's: zooming or panning either moves both.
The series of a new result are computed in the background (a plain thread, as every long job of
the window) and only while the series are shown.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from engine.evaluation.timeseries import CAUSES, LEVELS, TimeSeries, time_series
from gui.background import BackgroundRunner
from gui.gantt import colors
from gui.gantt.widget import LEFT_AXIS_WIDTH
from gui.theme import LIGHT, Theme, changed_theme, current, style_chart

LEVEL_COLORS = {"L1": "#2ca02c", "L2": "#1f77b4", "DRAM": "#d62728"}
ROW_WEIGHTS = (3, 2, 3)          # throughput, active warps, stall mix
LEGEND_MIN_PX = 240              # below this height the legend gives its row to the plots


class TimeSeriesView(QWidget):
    """``graphics`` (what exports paint), ``plots`` (throughput, warps, mix), ``series`` shown."""

    def __init__(self, parent: QWidget | None = None, theme: Theme | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("timeSeries")
        self._fixed_theme = theme
        self._theme = theme or current(self.palette())
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.ci.setSpacing(2)
        self.throughput = self.graphics.addPlot(row=0, col=0)
        self.warps = self.graphics.addPlot(row=1, col=0)
        self.mix = self.graphics.addPlot(row=2, col=0)
        self.plots = (self.throughput, self.warps, self.mix)
        for k, (plot, label) in enumerate(zip(self.plots, ("B/cycle", "warps", "share"), strict=True)):
            plot.getViewBox().setMouseEnabled(x=True, y=False)
            plot.getViewBox().setMenuEnabled(False)
            plot.hideButtons()
            plot.setLabel("left", label)
            plot.getAxis("left").setWidth(LEFT_AXIS_WIDTH)      # lined up with the chart's lanes
            plot.showAxis("bottom", False)
            self.graphics.ci.layout.setRowStretchFactor(k, ROW_WEIGHTS[k])
            if plot is not self.throughput:
                plot.setXLink(self.throughput)
        self.legend = pg.LegendItem(labelTextSize="8pt", colCount=5, verSpacing=-8)
        self.graphics.addItem(self.legend, row=3, col=0)
        self.series: TimeSeries | None = None
        self._style()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.graphics)

    def _style(self) -> None:
        for plot in self.plots:
            style_chart(self.graphics, plot, self._theme)
        self.legend.opts["labelTextColor"] = self._theme.chart_text

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        theme = changed_theme(self, event)
        if theme is not None:
            self._theme = theme
            self._style()
            if self.series is not None:
                self.show_series(self.series)

    def resizeEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        show = self.height() >= LEGEND_MIN_PX
        if self.legend.isVisible() != show:
            self.legend.setVisible(show)
            self.legend.setMaximumHeight(10_000 if show else 0)

    def link_to(self, plot: pg.PlotItem) -> None:
        """Share the x axis (cycles) with ``plot`` (the Gantt chart's)."""
        self.throughput.setXLink(plot)

    def set_x_range(self, start: float, end: float) -> None:
        """Show cycles ``start`` to ``end`` (every plot: they share the axis)."""
        self.throughput.setXRange(start, end, padding=0.0)

    def drop_pixmap_caches(self) -> None:
        """(Nothing is cached as pixmaps here.)"""

    def clear_series(self) -> None:
        self.series = None
        for plot in self.plots:
            plot.clear()
        self.legend.clear()

    def show_series(self, series: TimeSeries) -> None:
        self.clear_series()
        self.series = series
        edges = series.edges
        # steps: each bucket's figure held over its width
        xs = np.repeat(edges, 2)[1:-1]

        def steps(values: np.ndarray) -> np.ndarray:
            return np.repeat(values, 2)

        top = 0.0
        for level in LEVELS:
            values = series.bytes_per_cycle[level]
            item = self.throughput.plot(xs, steps(values), pen=pg.mkPen(LEVEL_COLORS[level], width=1.5))
            self.legend.addItem(item, level)
            top = max(top, float(values.max(initial=0.0)))
            peak = series.peaks.get(level)
            if peak is not None:
                line = pg.InfiniteLine(peak, angle=0, pen=pg.mkPen(LEVEL_COLORS[level], width=1,
                                                                   style=Qt.PenStyle.DotLine))
                self.throughput.addItem(line, ignoreBounds=True)
        self.throughput.setYRange(0, max(top * 1.1, 1.0), padding=0)
        self.warps.plot(xs, steps(series.active_warps), pen=pg.mkPen(self._theme.chart_text, width=1.5),
                        fillLevel=0, brush=pg.mkBrush(128, 128, 128, 60))
        self.warps.setYRange(0, max(float(series.active_warps.max(initial=0.0)) * 1.1, 1.0), padding=0)
        # stacked areas: each cause filled from 0 to the running sum up to it, the highest sum
        # drawn first and each lower one over it
        tops = np.cumsum(series.shares, axis=1)
        layers = []
        for c, cause in enumerate(CAUSES):
            color = colors.heat_color(cause, self._theme)
            layers.append((c, color))
            swatch = pg.PlotDataItem([0], [0], pen=None, symbol="s", symbolBrush=color, symbolPen=None)
            self.legend.addItem(swatch, cause.replace("_", " "))
        for c, color in reversed(layers):
            self.mix.plot(xs, steps(tops[:, c]), pen=None, fillLevel=0, brush=pg.mkBrush(color))
        self.mix.setYRange(0, 1, padding=0)
        self.throughput.setXRange(float(edges[0]), float(edges[-1]), padding=0.01)


class TimeSeriesPanel(TimeSeriesView):
    """The window's series: a new result's series computed in the background while shown."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: Any = None
        self._pending: Any = None
        self._shown_sim: Any = None          # the simulation whose series are shown
        self.computed = 0                     # series computed (tests read it)
        self._runner = BackgroundRunner("warpline-series", self)
        self._runner.finished.connect(self._finished)
        self._runner.failed.connect(lambda _g, message: self.clear_series())

    def set_result(self, result: Any) -> None:
        self.result = result
        if self.isVisible():
            self._start()

    def showEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        self._start()

    def _start(self) -> None:
        result = self.result
        if result is None or result is self._pending:
            return
        sim = getattr(result, "simulation", None)
        if self.series is not None and self._shown_sim is sim:
            return
        self._pending = result
        self._runner.submit(lambda _cancel, _progress: (sim, time_series(result)))

    def _finished(self, _gen: int, payload: tuple) -> None:
        sim, series = payload
        self._pending = None
        self._shown_sim = sim
        self.computed += 1
        self.show_series(series)

    def wait(self, msecs: int = 30_000) -> bool:
        return self._runner.wait(msecs)

    def shutdown(self) -> None:
        self._runner.stop()


def export_copy(series: TimeSeries) -> TimeSeriesView:
    """A light-themed view of ``series`` for an exported figure (the caller closes it)."""
    view = TimeSeriesView(theme=LIGHT)
    view.show_series(series)
    return view
