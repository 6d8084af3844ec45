"""The Roofline tab: the kernel's work per byte at L1, L2 and DRAM against the GPU profile's
ceilings (:mod:`engine.evaluation.roofline`), log-log, the bound named under the chart. One plot
widget for the tab and for exported figures (``File › Export › Roofline``, ``export
--roofline-png/-svg/-pdf``). Redrawn for every new result while the tab is on screen."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from engine.errors import WarplineError
from engine.evaluation.roofline import WORK_FLOP, WORK_INSTRUCTION, Roofline, format_rate, roofline
from gui.axes import LogAxis
from gui.panels.when_shown import WhenShown
from gui.theme import LIGHT, Theme, changed_theme, current, style_chart

LEVEL_COLORS = {"L1": "#2ca02c", "L2": "#1f77b4", "DRAM": "#d62728"}
WORK_CHOICES = (("automatic", None), ("FLOP", WORK_FLOP), ("warp instructions", WORK_INSTRUCTION))


class RooflinePlot(pg.GraphicsLayoutWidget):
    """Log-log plot: x = work per byte, y = work per second; a diagonal roof per memory level up to
    the peak compute, a flat roof per pipe, and the kernel's point at each level."""

    def __init__(self, parent: QWidget | None = None, theme: Theme | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("rooflinePlot")
        self.plot: pg.PlotItem = self.addPlot(row=0, col=0, axisItems={"left": LogAxis("left"),
                                                                       "bottom": LogAxis("bottom")})
        self.plot.setLogMode(x=True, y=True)
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        for side in ("left", "bottom"):
            self.plot.getAxis(side).enableAutoSIPrefix(False)    # the labels say "k", "M", "G" themselves
        # (no legend: the roofs are labelled on the chart, which must also fit a narrow dock)
        self._fixed_theme = theme
        self._theme = theme or current(self.palette())
        self.shown: Roofline | None = None
        self.labels: list[pg.TextItem] = []
        self._apply_theme()

    def _apply_theme(self) -> None:
        style_chart(self, self.plot, self._theme)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        theme = changed_theme(self, event)
        if theme is not None:
            self._theme = theme
            self._apply_theme()
            if self.shown is not None:
                self.show_roofline(self.shown)

    def show_roofline(self, r: Roofline) -> None:
        self.shown = r
        self.plot.clear()
        self.labels = []
        text_color = self._theme.chart_text
        per = "FLOP" if r.work == WORK_FLOP else "warp instr."
        self.plot.setLabel("bottom", f"operational intensity ({per} per byte)")
        self.plot.setLabel("left", f"{per} per second")
        peak = r.peak_compute()
        cap = peak.per_second if peak is not None else max(r.attained, 1.0)
        top = max(cap, r.attained, 1.0)
        # x from a decade below the lowest point or knee to a decade above the highest
        knees = [cap / c.per_second for c in r.memory if c.per_second > 0]
        xs = [p.intensity for p in r.points if p.intensity] + knees
        x_lo = max(min(xs, default=1e-2) / 10, 1e-6)
        x_hi = max(max(xs, default=1e2) * 10, x_lo * 100)
        for c in r.compute:
            if not c.used:      # the pipes the kernel leaves idle: named under the chart
                continue
            self.plot.plot([x_lo, x_hi], [c.per_second, c.per_second], pen=pg.mkPen(text_color, width=2))
            self._label(f"{c.name} {format_rate(c.per_second, c)}", x_hi, c.per_second, (1.02, 1.1))
        for c in r.memory:
            # the diagonal up to where it meets the peak compute: bandwidth × intensity = peak
            knee = cap / c.per_second
            self.plot.plot([x_lo, knee], [c.per_second * x_lo, cap],
                           pen=pg.mkPen(LEVEL_COLORS.get(c.name, "#888"), width=2, style=Qt.PenStyle.DashLine))
            # along its line, just above it and ending short of its knee (the knees lie apart, where
            # the lines' starts crowd together)
            at = knee / 1.5
            self._label(f"{c.name} {format_rate(c.per_second, c)}", at, c.per_second * at, (1.0, 1.0), along=True)
        y = r.attained
        for p in r.points:
            if p.intensity is None or y <= 0:
                continue
            color = LEVEL_COLORS.get(p.level, "#888")
            bound = p.level == r.bound
            self.plot.plot([p.intensity], [y], pen=None, symbol="o" if not bound else "star",
                           symbolSize=14 if bound else 11, symbolBrush=color, symbolPen=pg.mkPen(text_color, width=1))
            self._label(f"{p.level}{' (bound)' if bound else ''}", p.intensity, y, (0.5, 1.3))
        ys = [y] if y > 0 else []
        y_lo = min(ys + [c.per_second * x_lo for c in r.memory] + [top / 1e3]) / 2
        vb = self.plot.getViewBox()
        vb.enableAutoRange(enable=False)
        vb.setRange(xRange=(math.log10(x_lo), math.log10(x_hi)),
                    yRange=(math.log10(max(y_lo, top / 1e6)), math.log10(top * 2.5)), padding=0)

    def _label(self, text: str, x: float, y: float, anchor: tuple[float, float], along: bool = False) -> None:
        extra = {"angle": 0, "rotateAxis": (1, 1)} if along else {}
        label = pg.TextItem(text, color=self._theme.chart_text, anchor=anchor, **extra)
        font = label.textItem.font()
        font.setPointSizeF(8.0)
        label.setFont(font)
        label.setPos(math.log10(x), math.log10(y))
        self.plot.addItem(label)
        self.labels.append(label)

    def clear_roofline(self) -> None:
        self.shown = None
        self.plot.clear()


class RooflinePanel(QWidget):
    """The Roofline tab: the plot, the work it counts, and the bound in one sentence."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.work_box = QComboBox()
        self.work_box.setObjectName("rooflineWork")
        for title, _ in WORK_CHOICES:
            self.work_box.addItem(title)
        self.work_box.setToolTip("What counts as work: floating-point operations (the default when the kernel "
                                 "has any) or issued warp instructions (the instruction roofline)")
        self.plot_widget = RooflinePlot()
        self.caption = QLabel()
        self.caption.setObjectName("rooflineVerdict")
        self.caption.setWordWrap(True)
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row = QHBoxLayout()
        row.addWidget(QLabel("Work"))
        row.addWidget(self.work_box)
        row.addStretch(1)
        # the plot takes the room the tab gets and asks for none (the predictions table above the
        # tabs keeps its rows on a small screen); the details are in the caption's tooltip
        self.plot_widget.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Ignored)
        self.plot_widget.setMinimumHeight(120)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(row)
        layout.addWidget(self.plot_widget, 1)
        layout.addWidget(self.caption)
        self.result: Any = None
        self.roofline: Roofline | None = None
        self._when_shown = WhenShown(self, self._draw)
        self.work_box.currentIndexChanged.connect(lambda _i: self._when_shown.run(force=True))

    @property
    def work(self) -> str | None:
        return WORK_CHOICES[self.work_box.currentIndex()][1]

    def set_result(self, result: Any) -> None:
        """A result with the models part (the roofline is timed by the Pipeline simulation's figure)."""
        self.result = result
        self._when_shown.offer(result)

    def showEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        self._when_shown.run()

    def _draw(self, result: Any) -> None:
        try:
            r = roofline(result, self.work)
        except WarplineError as exc:
            self.roofline = None
            self.plot_widget.clear_roofline()
            self.caption.setText(str(exc))
            return
        self.roofline = r
        self.plot_widget.show_roofline(r)
        levels = ", ".join(f"{p.level} {p.intensity:.3g}" for p in r.points if p.intensity is not None)
        idle = [f"{c.name} {format_rate(c.per_second, c)}" for c in r.compute if not c.used]
        notes = list(r.notes) + ([f"Pipes the kernel does not use (not drawn): {', '.join(idle)}."] if idle else [])
        self.caption.setText(f"<b>{r.sentence()}</b> Attained {r.rate_text(r.attained)}; {r.unit} per byte: "
                             f"{levels or '—'}.")
        self.caption.setToolTip(f"Attained over the Pipeline simulation's {r.kernel_cycles:,.0f} kernel cycles."
                                + "".join(f"\n{n}" for n in notes))


class _Figure(QWidget):
    """A roofline plot as :mod:`gui.figure_file` lays out and paints a chart."""

    def __init__(self) -> None:
        super().__init__()
        self.graphics = RooflinePlot(theme=LIGHT)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.graphics)

    def drop_pixmap_caches(self) -> None:
        """(Nothing is cached as pixmaps here.)"""


def export_roofline(evaluation: Any, path: str | Path, width: int = 1200, height: int = 800,
                    title: str = "", work: str | None = None) -> Path:
    """The evaluation's roofline as PNG, SVG or PDF (by the path's suffix) under ``title``."""
    from gui.figure_file import application, write_figure

    r = roofline(evaluation, work)
    application()
    figure = _Figure()
    try:
        figure.graphics.show_roofline(r)
        return write_figure(figure, path, width, height, title)
    finally:
        figure.close()
        figure.deleteLater()
