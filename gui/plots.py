"""Static figures rendered offscreen with pyqtgraph (used by the CLI as well as the app)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#393b79"]


def _application():
    from PySide6.QtWidgets import QApplication

    return QApplication.instance() or QApplication([])


def plot_validation(result, path: str | Path, width: int = 1200, height: int = 900,
                    models: list[str] | None = None) -> None:
    """Predicted against measured cycles (log-log), one colour per model, with the y = x line."""
    app = _application()
    import pyqtgraph as pg
    from pyqtgraph.exporters import ImageExporter

    models = models or [m for m, _ in result.ranking()][:6]
    pg.setConfigOptions(antialias=True, background="w", foreground="k")
    widget = pg.PlotWidget()
    widget.resize(width, height)
    plot = widget.getPlotItem()
    plot.setLogMode(x=True, y=True)
    plot.setLabel("bottom", "measured cycles (Nsight Compute)")
    plot.setLabel("left", "predicted cycles")
    plot.setTitle(f"Warpline models on {result.profile}: predicted vs measured ({len(result.rows)} launches)")
    plot.addLegend(offset=(10, 10))
    measured = np.array([r.measured for r in result.rows], dtype=float)
    low, high = measured.min() / 2, measured.max() * 2
    plot.plot([low, high], [low, high], pen=pg.mkPen("#999999", width=1, style=pg.QtCore.Qt.DashLine))
    for colour, model in zip(PALETTE, models, strict=False):
        points = [(r.measured, r.predicted[model]) for r in result.rows
                  if r.predicted.get(model) and math.isfinite(r.predicted[model]) and r.predicted[model] > 0]
        if not points:
            continue
        xs, ys = np.array(points, dtype=float).T
        mape = result.mape(model)
        plot.plot(xs, ys, pen=None, symbol="o", symbolSize=7, symbolBrush=colour, symbolPen=None,
                  name=f"{model} (MAPE {mape:.1f} %)")
    widget.show()
    app.processEvents()
    exporter = ImageExporter(plot)
    exporter.parameters()["width"] = width
    exporter.export(str(path))
    widget.close()
