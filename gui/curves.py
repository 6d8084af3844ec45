"""The occupancy curves: every model's kernel cycles against the resident blocks per SM (log
scale), the current occupancy marked, the legend below the plot. One widget for the Results
panel's Curves tab and for exported figures (PNG, SVG, PDF with a title line)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from engine.evaluation import models
from gui.axes import IntegerAxis, LogAxis
from gui.theme import LIGHT, Theme, changed_theme, current, style_chart

EMPTY_BLOCKS = (0.7, 8.3)        # the axes before any curve: 1 to 8 blocks ...
EMPTY_LOG_CYCLES = (3.0, 5.0)    # ... and 1,000 to 100,000 cycles


class CurvesPlot(pg.GraphicsLayoutWidget):
    """``plot`` (log-scale cycles over whole blocks), ``legend`` (its own cell below the plot:
    inside, it covered the crowded low curves whatever corner it was put in), ``marker`` (the
    current occupancy) and ``curves`` (model id → curve)."""

    def __init__(self, parent: QWidget | None = None, theme: Theme | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("occupancyPlot")
        # Ticks chosen from the pixels the axes have: whole blocks only (a tick at 2.5 blocks per
        # SM means nothing), and log-scale cycle labels that never pile up (gui/axes.py).
        self.plot: pg.PlotItem = self.addPlot(row=0, col=0, axisItems={"left": LogAxis("left"),
                                                                       "bottom": IntegerAxis("bottom")})
        self.plot.setLabel("bottom", "resident blocks per SM")
        self.plot.setLabel("left", "kernel cycles")     # (log scale: the ticks and the tab's tooltip say so)
        # Log scale: the models differ by orders of magnitude (WFG vs Roofline) and still need to be
        # told apart where they crowd together.
        self.plot.setLogMode(x=False, y=True)
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.legend = pg.LegendItem(labelTextSize="8pt", colCount=2, verSpacing=-6)
        self.addItem(self.legend, row=1, col=0)
        self.marker = pg.InfiniteLine(angle=90, movable=False)
        self.plot.addItem(self.marker)
        self.curves: dict[str, pg.PlotDataItem] = {}
        self._shown: dict = {}
        self._fixed_theme = theme
        self._theme = theme or current(self.palette())
        self.show_empty_ranges()
        self._apply_theme()

    # ---- colours ------------------------------------------------------------------------------
    def theme(self) -> Theme:
        return self._theme

    def _apply_theme(self) -> None:
        t = self._theme
        style_chart(self, self.plot, t)
        self.marker.setPen(pg.mkPen(t.marker, width=2, style=Qt.PenStyle.DashLine))
        self.legend.opts["labelTextColor"] = t.chart_text
        for _sample, label in self.legend.items:
            label.setText(label.text, color=t.chart_text)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        theme = changed_theme(self, event)
        if theme is not None:
            self._theme = theme
            self._apply_theme()

    # ---- data ---------------------------------------------------------------------------------
    def set_marker(self, resident_blocks: float) -> None:
        self.marker.setValue(resident_blocks)

    def show_sweep(self, sweep: Any) -> None:
        """Kernel cycles of every model at each resident-blocks count (the sweep's one rule)."""
        points = {m.id: sweep.kernel_cycles(m.id) for m in models() if m.id in sweep.figures}
        if points == self._shown:
            return
        self._shown = points
        if set(points) != set(self.curves):
            self.plot.clear()
            self.legend.clear()
            self.plot.addItem(self.marker)
            self.curves = {}
            added = []
            for spec in models():
                if spec.id not in points:
                    continue
                style = spec.curve
                marks = {"symbol": "o", "symbolSize": 6, "symbolBrush": style.color} if style.markers else {}
                pen = pg.mkPen(style.color, width=style.width,
                               style=Qt.PenStyle.DashLine if style.dashed else Qt.PenStyle.SolidLine)
                self.curves[spec.id] = self.plot.plot([], [], pen=pen, **marks)
                added.append((self.curves[spec.id], spec.title))
            for curve, title in added:
                self.legend.addItem(curve, title)
        finite = [(x, y) for pts in points.values() for x, y in pts if 0 < y < float("inf")]
        for model_id, pts in points.items():
            good = [(x, y) for x, y in pts if 0 < y < float("inf")]
            self.curves[model_id].setData([x for x, _ in good], [y for _, y in good])
        if not finite:
            self.show_empty_ranges()
            return
        # Explicit ranges instead of auto-range: pyqtgraph's auto-range walks every item on
        # each repaint, which made the plot the slowest part of a refresh.
        xs = [x for x, _ in finite]
        ys = [math.log10(y) for _, y in finite]
        vb = self.plot.getViewBox()
        vb.enableAutoRange(enable=False)
        vb.setRange(xRange=(min(xs) - 0.3, max(xs) + 0.3), yRange=(min(ys) - 0.05, max(ys) + 0.05), padding=0)

    def show_empty_ranges(self) -> None:
        """Before any curve: a blocks axis from 1 to 8 and a cycles axis of a few decades (the
        view's own default, -400 to 400 × 0.001, means nothing here)."""
        vb = self.plot.getViewBox()
        vb.enableAutoRange(enable=False)
        vb.setRange(xRange=EMPTY_BLOCKS, yRange=EMPTY_LOG_CYCLES, padding=0)


class _Figure(QWidget):
    """A curves plot as :mod:`gui.figure_file` lays out and paints a chart: the widget that
    holds it and the graphics view (``graphics``) that is drawn."""

    def __init__(self) -> None:
        super().__init__()
        self.graphics = CurvesPlot(theme=LIGHT)     # figures for reports: light whatever the desktop
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.graphics)

    def drop_pixmap_caches(self) -> None:
        """(Nothing is cached as pixmaps here: vector exports hold the text as text.)"""


def curves_title(evaluation: Any) -> str:
    """Kernel, GPU profile, launch and what the figure shows, for its title line."""
    from engine.evaluation.caveats import figure_caveats
    from engine.evaluation.provenance import edits
    from engine.names import display_name

    state = evaluation.state
    launch = state.launch
    grid, block = ("×".join(str(x) for x in dims) for dims in (launch.grid, launch.block))
    profile = evaluation.profile.name if evaluation.profile is not None else state.profile
    kernel = display_name(state.kernel)
    if len(kernel) > 48 and "(" in kernel:
        kernel = kernel.split("(", 1)[0] + "(…)"
    made = edits(state)
    return (f"{kernel} · {profile} · grid {grid}, block {block} · occupancy curves "
            f"(now {evaluation.resident_blocks} blocks/SM)"
            + (f" · edited: {', '.join(made[:4])}{' …' if len(made) > 4 else ''}" if made else " · as computed")
            + figure_caveats(evaluation).title_suffix())


def export_curves(evaluation: Any, path: str | Path, width: int = 1200, height: int = 800,
                  title: bool = True) -> Path:
    """The evaluation's occupancy curves as PNG, SVG or PDF (by the path's suffix), under a title
    line naming the kernel, profile and launch, as the window shows them."""
    from gui.figure_file import application, write_figure

    if evaluation.sweep is None:
        raise ValueError("the occupancy curves are not computed yet; nothing to export")
    application()
    figure = _Figure()
    try:
        figure.graphics.show_sweep(evaluation.sweep)
        figure.graphics.set_marker(evaluation.resident_blocks)
        return write_figure(figure, path, width, height, curves_title(evaluation) if title else "")
    finally:
        figure.close()
        figure.deleteLater()
