"""Benchmark: the Gantt view (real widget, offscreen) on a simulator trace of ~500,000 bars.

Measures ``set_trace`` and the frame time of pans: ``setXRange`` shifted, ``processEvents`` and
a forced repaint (``grab()``), at three zoom levels. Target: 95th percentile < 50 ms.
Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_gantt.py [--large]``
(``--large``: ~1.5 million bars).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

from engine.pipeline.examples import tiled_mm_kernel  # noqa: E402
from engine.pipeline.simulator import simulate  # noqa: E402
from gui.gantt import GanttView  # noqa: E402

FRAMES = 40
TARGET_MS = 50.0


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def pan_frames(app: QApplication, view: GanttView, width: float,
               cycles: float) -> tuple[list[float], list[float]]:
    """Pan a window of ``width`` cycles across the run, 3% of the window per frame.
    Returns wall-clock and process CPU milliseconds per frame (CPU time stays meaningful on a
    machine shared with other jobs, where wall time also counts the waits for a core)."""
    vb = view.plot.getViewBox()
    wall, cpu = [], []
    x = 0.0
    for _ in range(FRAMES):
        x = (x + 0.03 * width) % max(cycles - width, 1.0)
        t, c = time.perf_counter(), time.process_time()
        vb.setXRange(x, x + width, padding=0.0)
        app.processEvents()
        view.grab()
        wall.append((time.perf_counter() - t) * 1000.0)
        cpu.append((time.process_time() - c) * 1000.0)
    return wall, cpu


def main() -> int:
    app = QApplication.instance() or QApplication([])
    tiles = 17 if "--large" in sys.argv else 6
    d = tiled_mm_kernel(tiles=tiles, blocks=64)
    result = simulate(d)
    trace, cycles = result.trace, float(result.cycles)
    names = [i.name for i in d.instructions]
    view = GanttView()
    view.resize(1600, 900)
    view.show()
    app.processEvents()
    t = time.perf_counter()
    view.set_trace(trace, names, None, cycles, d.subsystems)
    set_ms = (time.perf_counter() - t) * 1000.0
    t = time.perf_counter()
    app.processEvents()
    view.grab()
    first_ms = (time.perf_counter() - t) * 1000.0
    bars = sum(len(item) for item in view.bar_items())
    print(f"trace: {len(trace.issues):,} instructions, {len(trace.stalls):,} stalls, {cycles:,.0f} cycles "
          f"-> {bars:,} bars in {len(view.bar_items())} colour items")
    print(f"set_trace: {set_ms:.0f} ms   first full paint: {first_ms:.0f} ms "
          f"({view.bars.drawn_rect_count():,} rects after merging)")
    worst = 0.0
    for label, fraction in (("whole run", 1.0), ("10% of run", 0.1), ("0.5% of run", 0.005)):
        wall, cpu = pan_frames(app, view, fraction * cycles * (0.97 if fraction == 1.0 else 1.0), cycles)
        p95 = _percentile(wall, 0.95)
        worst = max(worst, p95)
        print(f"pan, window = {label:>11}: wall median {statistics.median(wall):6.1f} ms  p95 {p95:6.1f} ms"
              f" | CPU median {statistics.median(cpu):6.1f} ms  p95 {_percentile(cpu, 0.95):6.1f} ms"
              f"  ({view.bars.drawn_rect_count():,} rects, {'image' if view.bars.raster.rasterised else 'drawRects'})")
    print(f"target wall p95 < {TARGET_MS:.0f} ms: {'met' if worst < TARGET_MS else 'NOT met'} "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    view.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
