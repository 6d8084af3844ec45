"""Report-ready timeline exports (issue 15 E): PNG, SVG and PDF with a title line, the whole run or
the visible range, from the window and from ``export``; the status bar names the file."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from PySide6.QtGui import QAction, QImage

from engine.evaluation import models
from gui.curves import curves_title
from gui.gantt.export_png import title_line
from tests.test_gui_support import HOTSPOT, ROOT, make_window

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture()
def window(qtbot, tmp_path, monkeypatch):
    return make_window(qtbot, tmp_path, monkeypatch)


def _svg_texts(path) -> tuple[ET.Element, list[str]]:
    root = ET.parse(path).getroot()         # raises on a malformed file
    return root, ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


def test_title_line_names_kernel_profile_launch_and_time(window):
    result = window.session.result
    text = title_line(result)
    sim = result.models["pipeline"]
    assert text.startswith("calculate_temp(…) · ")
    assert "h100" in text and "grid 43×43×1, block 16×16×1" in text
    assert f"{sim.sm_cycles:,.0f} SM cycles" in text and f"{sim.microseconds:.3f} µs" in text


def test_svg_pdf_png_from_the_window(window, tmp_path, qtbot):
    result = window.session.result
    svg = window.exports.timeline(tmp_path / "t.svg", 1200, 700)
    root, texts = _svg_texts(svg)
    assert root.tag == f"{SVG}svg" and root.get("viewBox") == "0 0 1200 700"
    assert any(title_line(result)[:40] in t for t in texts), "the title line is text in the drawing"
    assert any("LDST / memory" in t for t in texts)
    shapes = sum(1 for tag in ("path", "rect", "polyline", "image") for _ in root.iter(f"{SVG}{tag}"))
    assert shapes > 20
    pdf = window.exports.timeline(tmp_path / "t.pdf", 1200, 700)
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF") and data.rstrip().endswith(b"%%EOF") and len(data) > 5000
    png = window.exports.timeline(tmp_path / "t.png", 1000, 600)
    image = QImage(str(png))
    assert (image.width(), image.height()) == (1000, 600)
    # the whole run by default, the visible range when asked; the live view is left alone
    view = window.gantt.view
    view.plot.getViewBox().setXRange(1000, 2000, padding=0)
    whole = window.exports.timeline(tmp_path / "whole.svg", 1200, 700)
    part = window.exports.timeline(tmp_path / "part.svg", 1200, 700, visible=True)
    ticks_whole = {t for t in _svg_texts(whole)[1] if t.strip().isdigit()}
    ticks_part = {t for t in _svg_texts(part)[1] if t.strip().isdigit()}
    assert max(map(int, ticks_part)) <= 2000 and min(map(int, ticks_part)) >= 1000
    assert max(map(int, ticks_whole)) >= 0.5 * float(result.simulation.cycles)
    assert view.time_axis.x_range() == pytest.approx((1000, 2000))
    assert not (tmp_path / "t.svg.part").exists()


def test_status_bar_names_the_file(window, tmp_path, monkeypatch):
    import gui.window.export_actions as mw

    target = tmp_path / "report"
    monkeypatch.setattr(mw.SizeDialog, "exec", lambda self: mw.QDialog.DialogCode.Accepted)
    monkeypatch.setattr(mw.QFileDialog, "getSaveFileName",
                        lambda *a, **k: (str(target), "SVG drawing (*.svg)"))
    window.exports.ask_timeline()
    written = tmp_path / "report.svg"
    assert written.is_file()
    assert str(written) in window.statusBar().currentMessage()


def test_curves_export_png_svg_pdf_with_a_title(window, tmp_path, monkeypatch):
    """The occupancy curves export as the timeline does: PNG, SVG or PDF under a title line, with
    the Curves tab's legend and log-scale labels, light whatever the desktop; the status bar
    names the file."""
    import gui.window.export_actions as mw

    result = window.session.result
    svg = window.exports.curves(tmp_path / "curves.svg", 1000, 700)
    root, texts = _svg_texts(svg)
    assert root.get("viewBox") == "0 0 1000 700"
    title = curves_title(result)
    assert title.startswith("calculate_temp(…) · h100 · grid 43×43×1, block 16×16×1")
    assert any(title[:40] in t for t in texts)
    shown = {m.title for m in models() if m.id in result.sweep.figures}
    assert shown <= set(texts), shown - set(texts)
    assert {"10k", "100k"} <= set(texts) and "resident blocks per SM" in [t.strip() for t in texts]
    assert [t for t in texts if t.isdigit()] == [str(k) for k in range(1, 9)]
    png = QImage(str(window.exports.curves(tmp_path / "curves.png", 900, 600, title=False)))
    assert (png.width(), png.height()) == (900, 600)
    pdf = window.exports.curves(tmp_path / "curves.pdf", 900, 600)
    assert pdf.read_bytes().startswith(b"%PDF")
    target = tmp_path / "menu-curves"
    monkeypatch.setattr(mw.SizeDialog, "exec", lambda self: mw.QDialog.DialogCode.Accepted)
    monkeypatch.setattr(mw.QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), "PDF document (*.pdf)"))
    action = next(a for a in window.findChildren(QAction) if a.text() == "Occupancy curves as P&NG, SVG or PDF…")
    action.trigger()
    assert (tmp_path / "menu-curves.pdf").is_file()
    assert str(tmp_path / "menu-curves.pdf") in window.statusBar().currentMessage()


def test_cli_export_svg_pdf_and_range(tmp_path):
    svg, pdf, curves = tmp_path / "c.svg", tmp_path / "c.pdf", tmp_path / "curves.svg"
    args = [sys.executable, str(ROOT / "main.py"), "export", str(HOTSPOT), "--profile", "h100",
            "--svg", str(svg), "--pdf", str(pdf), "--curves-svg", str(curves),
            "--range", "0:3000", "--width", "900", "--height", "500"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    root, texts = _svg_texts(svg)
    assert root.get("viewBox") == "0 0 900 500"
    assert any(t.startswith("calculate_temp(") for t in texts)
    numbers = {float(t) for t in texts if t.strip().replace(".", "", 1).isdigit()}
    assert max(numbers) <= 3000
    assert pdf.read_bytes().startswith(b"%PDF")
    root, texts = _svg_texts(curves)
    assert root.get("viewBox") == "0 0 900 500"
    assert any(t.startswith("calculate_temp(") and "occupancy curves" in t for t in texts)
    assert {"Many-BSP", "Pipeline simulation"} <= set(texts)
    bad = subprocess.run(args[:-6] + ["--range", "5:1"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert bad.returncode == 2 and "START must be below END" in bad.stderr
