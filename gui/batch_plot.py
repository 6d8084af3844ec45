"""A batch's sweep as one PNG: a panel per kernel, kernel cycles against the swept parameter,
one line per GPU profile (drawn offscreen with pyqtgraph for ``batch --plot``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gui.plots import PALETTE, _application, write_png

PANEL_WIDTH = 440
PANEL_HEIGHT = 320
MAX_COLUMNS = 4


def plot_batch(series: Sequence[Any], path: str | Path, *, model_title: str) -> None:
    app = _application()
    import pyqtgraph as pg
    from pyqtgraph.exporters import ImageExporter

    pg.setConfigOptions(antialias=True, background="w", foreground="k")
    count = max(1, len(series))
    columns = min(MAX_COLUMNS, count)
    rows = math.ceil(count / columns)
    widget = pg.GraphicsLayoutWidget()
    widget.resize(columns * PANEL_WIDTH, rows * PANEL_HEIGHT + 40)
    widget.addLabel(f"kernel cycles ({model_title}) against the swept parameter, one line per GPU profile",
                    colspan=columns)
    profiles = list(dict.fromkeys(p for s in series for p in s.cycles))
    colours = {p: PALETTE[i % len(PALETTE)] for i, p in enumerate(profiles)}
    for index, one in enumerate(series):
        if index % columns == 0:
            widget.nextRow()
        plot = widget.addPlot(title=_short(one.title, 48))
        plot.setLabel("bottom", one.parameter or "one launch")
        plot.setLabel("left", "kernel cycles")
        plot.getAxis("left").setWidth(70)     # room for the tick labels before the first paint
        plot.showGrid(x=True, y=True, alpha=0.2)
        if index == 0:
            plot.addLegend(offset=(5, 5))
        xs = list(range(len(one.labels)))
        plot.setXRange(-0.4, len(xs) - 0.6, padding=0)
        plot.getAxis("bottom").setTicks([[(x, _short(label, 12)) for x, label in zip(xs, one.labels, strict=True)]])
        for profile, values in one.cycles.items():
            points = [(x, v) for x, v in zip(xs, values, strict=True) if v is not None]
            if not points:
                continue
            px, py = zip(*points, strict=True)
            colour = colours[profile]
            plot.plot(list(px), list(py), pen=pg.mkPen(colour, width=2), symbol="o", symbolSize=6,
                      symbolBrush=colour, symbolPen=None, name=profile if index == 0 else None)
    widget.show()
    for _ in range(3):      # layout settles over a few event-loop passes (axis sizes, then the plots)
        app.processEvents()
    exporter = ImageExporter(widget.scene())
    exporter.parameters()["width"] = columns * PANEL_WIDTH
    try:
        write_png(exporter, path)
    finally:
        widget.close()


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
