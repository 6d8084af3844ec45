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


def write_png(exporter, path: str | Path) -> None:
    """Render a pyqtgraph ImageExporter's picture and write it to ``path`` as PNG, atomically.
    (The exporter's own ``export(path)`` ignores a failed write: an unwritable path would be
    reported as written.) A path that cannot be written raises a WarplineError naming it."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    from engine.errors import WarplineError
    from engine.fileio import write_text_atomic

    image = exporter.export(toBytes=True)
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if image is None or not image.save(buffer, "PNG"):
        raise WarplineError(f"{path}: the picture could not be drawn")
    buffer.close()
    write_text_atomic(path, bytes(data.data()))


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
    try:
        write_png(exporter, path)
    finally:
        widget.close()
