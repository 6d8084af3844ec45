"""PNG export of the Gantt chart: requested size, not blank, from a live view and from a trace."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtGui import QImage  # noqa: E402

from engine.pipeline.examples import tiled_mm_kernel  # noqa: E402
from engine.pipeline.simulator import simulate  # noqa: E402
from gui.gantt import GanttView, export_png, render_trace_png  # noqa: E402


@pytest.fixture(scope="module")
def run():
    d = tiled_mm_kernel(tiles=2, blocks=4)
    r = simulate(d)
    return d, r.trace, [i.name for i in d.instructions], float(r.cycles)


def _pixels(path) -> np.ndarray:
    image = QImage(str(path)).convertToFormat(QImage.Format.Format_RGB32)
    assert not image.isNull(), f"{path} is not a readable image"
    buf = np.frombuffer(image.constBits(), dtype=np.uint8, count=image.sizeInBytes())
    # copy: the buffer belongs to the QImage, which is freed when this function returns
    return buf.reshape(image.height(), image.bytesPerLine() // 4, 4)[:, : image.width(), :3].copy()


def _check_picture(path, width: int, height: int) -> np.ndarray:
    px = _pixels(path)
    assert px.shape[:2] == (height, width)
    assert px.std() > 30, "the picture is (nearly) blank"
    rgb = px.astype(np.uint32)
    colours = np.unique((rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2])
    assert len(colours) >= 12, "bars of several colours should be visible"
    return px


def test_render_trace_png_without_a_window(qapp, run, tmp_path):
    d, trace, names, cycles = run
    path = render_trace_png(trace, names, None, cycles, tmp_path / "g.png", width=900, height=520,
                            subsystems=d.subsystems)
    _check_picture(path, 900, 520)


def test_export_png_of_live_view_keeps_its_state(qtbot, run, tmp_path):
    d, trace, names, cycles = run
    view = GanttView()
    qtbot.addWidget(view)
    view.resize(700, 400)
    view.show()
    view.set_trace(trace, names, None, cycles, d.subsystems)
    view.set_color_mode("class")
    view.plot.getViewBox().setXRange(500, 1500, padding=0)
    view.highlight_range(800, 900)
    before = view.time_axis.x_range()
    a = _check_picture(export_png(view, tmp_path / "live.png", 1280, 720), 1280, 720)
    assert view.time_axis.x_range() == pytest.approx(before) and view.width() == 700   # live view untouched
    # the region shading (light orange) is in the zoomed export; a full-range export differs
    view.fit()
    b = _check_picture(export_png(view, tmp_path / "fit.png", 1280, 720), 1280, 720)
    assert np.abs(a.astype(int) - b.astype(int)).mean() > 5
    view.clear()
    with pytest.raises(ValueError, match="no trace"):
        export_png(view, tmp_path / "empty.png")


def test_render_trace_png_creates_its_own_application(tmp_path):
    """The CLI calls render_trace_png with no QApplication around: it must make one."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    out = tmp_path / "cli.png"
    code = (
        "from engine.pipeline.examples import example_kernel\n"
        "from engine.pipeline.simulator import simulate\n"
        "from PySide6.QtWidgets import QApplication\n"
        "from gui.gantt import render_trace_png\n"
        "assert QApplication.instance() is None\n"
        "d = example_kernel(occupancy_warps=4, warps_total=8)\n"
        "r = simulate(d)\n"
        f"render_trace_png(r.trace, [i.name for i in d.instructions], None, float(r.cycles), {str(out)!r},"
        " 640, 360, d.subsystems)\n"
    )
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(root))
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root, env=env, timeout=120)
    _check_picture(out, 640, 360)
