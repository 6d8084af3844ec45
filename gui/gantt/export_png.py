"""PNG export of a Gantt chart, from a live view or straight from a trace (CLI ``--png``).

Rendering always happens in a fresh off-screen :class:`GanttView` sized to the requested
pixels, so the picture is laid out for that size (axis labels, legend wrap) and the live
widget is never resized under the user.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pyqtgraph.exporters import ImageExporter
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from engine.pipeline.trace import Trace
from gui.gantt import colors
from gui.gantt.widget import GanttView


def _application() -> QApplication:
    app = QApplication.instance()
    return app if isinstance(app, QApplication) else QApplication([])


def _render(view: GanttView, path: str | Path, width: int, height: int) -> Path:
    """Lay ``view`` out so its chart area is exactly width × height, then export it."""
    view.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    view.show()
    app = _application()
    for _ in range(3):       # the toolbar's height is only known after the first layout pass
        app.processEvents()
        extra_w = view.width() - view.graphics.width()
        extra_h = view.height() - view.graphics.height()
        view.resize(width + extra_w, height + extra_h)
        app.processEvents()
        if (view.graphics.width(), view.graphics.height()) == (width, height):
            break
    view.refresh_lane_ticks()
    app.processEvents()
    exporter = ImageExporter(view.graphics.scene())
    params = exporter.parameters()
    params["background"] = colors.BACKGROUND
    params["antialias"] = False
    image: QImage = exporter.export(toBytes=True)
    if (image.width(), image.height()) != (width, height):
        # a rounding difference of a pixel: scale rather than hand back another size
        image = image.scaled(width, height, Qt.AspectRatioMode.IgnoreAspectRatio,
                             Qt.TransformationMode.SmoothTransformation)
    out = Path(path)
    if not image.save(str(out), "PNG"):
        raise OSError(f"could not write the PNG file {out}")
    return out


def export_png(view: GanttView, path: str | Path, width: int = 1600, height: int = 900) -> Path:
    """Save what ``view`` shows (same trace, x-range, colour mode, highlights) as a PNG."""
    layout = view.layout_data
    if layout is None or view.trace is None:
        raise ValueError("the Gantt view shows no trace; nothing to export")
    copy = GanttView()
    try:
        copy.set_layout(view.trace, view.instruction_names, layout)
        copy.set_color_mode(view.color_mode())
        copy.highlight_instructions(view.highlighted_instructions)
        region = view.highlighted_range()
        if region is not None:
            copy.highlight_range(*region)
        x0, x1 = view.x_range()
        copy.plot.getViewBox().setXRange(x0, x1, padding=0.0)
        return _render(copy, path, width, height)
    finally:
        copy.close()
        copy.deleteLater()


def render_trace_png(trace: Trace, names: Sequence[str], units: Sequence[str] | None, cycles: float | None,
                     path: str | Path, width: int = 1600, height: int = 900,
                     subsystems: Sequence[str] | None = None, color_mode: str = "warp") -> Path:
    """Draw ``trace`` into a PNG without a window (creates the QApplication when needed)."""
    _application()
    view = GanttView()
    try:
        view.set_trace(trace, names, units, cycles, subsystems)
        view.set_color_mode(color_mode)
        return _render(view, path, width, height)
    finally:
        view.close()
        view.deleteLater()
