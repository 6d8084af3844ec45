"""Screenshots of the analyst's views (issue 32) in the real window, grabbed from the X display:

    xvfb-run -a -s "-screen 0 1920x1080x24" env QT_QPA_PLATFORM=xcb \\
        .venv/bin/python tools/screenshot_bench.py docs/img/roofline.png --view roofline --size 1920x1080

Views: ``roofline`` (the Results dock's Roofline tab, the mm sample), ``sensitivity`` (its
Sensitivity tab, the hotspot sample), ``sass`` (the SASS tab beside the BLOCK table, hotspot),
``diff`` (mm's 32×32 tiled kernel compared with its 16×16 one: both timelines stacked, the Compare
and Diff tabs), ``series`` (the time series under the chart, hotspot). Nothing is written outside
a temporary folder but the picture.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

VIEWS = ("roofline", "sensitivity", "sass", "diff", "series")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--view", choices=VIEWS, required=True)
    parser.add_argument("--size", default="1920x1080", help="window size, WIDTHxHEIGHT")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    app = QApplication(sys.argv[:1])
    tmp = tempfile.mkdtemp(prefix="warpline-shot-")
    os.environ["XDG_DATA_HOME"] = tmp
    from gui.main_window import MainWindow

    window = MainWindow(QSettings(os.path.join(tmp, "settings.ini"), QSettings.Format.IniFormat))
    window.resize(width, height)
    window.move(0, 0)
    window.show()
    session = window.session

    def pump(seconds: float) -> None:
        end = time.time() + seconds
        while time.time() < end:
            app.processEvents()
            time.sleep(0.01)

    def until(done, limit: float = 120.0) -> None:  # noqa: ANN001
        end = time.time() + limit
        while not done() and time.time() < end:
            pump(0.05)

    def settle() -> None:
        until(lambda: session.result is not None and session.result.finished and not session.worker.busy
              and session.result.state == session.state)

    sample = "mm" if args.view in ("roofline", "diff") else "hotspot"
    mm_kernels = ["_Z14matrixMulTiledILi32EEvPfS0_S0_ii", "_Z14matrixMulTiledILi16EEvPfS0_S0_ii"]
    window.choose_kernel = lambda names, summaries=None: mm_kernels[0] if mm_kernels[0] in names else names[0]
    window.open_file(ROOT / "samples" / "ptx" / f"{sample}.sm_90.ptx")
    settle()
    results = window.results_panel
    window.results_dock.show()
    window.results_dock.raise_()
    if args.view == "roofline":
        results.tabs.setCurrentWidget(results.roofline)
        until(lambda: results.roofline.roofline is not None)
    elif args.view == "sensitivity":
        results.tabs.setCurrentWidget(results.sensitivity)
        until(lambda: results.sensitivity.result is not None)
    elif args.view == "sass":
        window.side_tabs.setCurrentWidget(window.sass_panel)
        until(lambda: window.sass_panel.model_.rowCount() > 0)
        hot = max(range(len(window.sass_panel.shown_lines)),
                  key=lambda k: window.sass_panel.shown_lines[k].predicted_share)
        window.sass_panel.select_line(hot)
    elif args.view == "diff":
        window.choose_kernel = lambda names, summaries=None: mm_kernels[1]
        window.compare_with(ROOT / "samples" / "ptx" / "mm.sm_90.ptx")
        until(lambda: window.baseline.result is not None and not window.baseline.comparing)
        window.side_tabs.setCurrentWidget(window.diff_panel)
        until(lambda: window.diff_panel.result is not None)
        results.tabs.setCurrentWidget(results.compare)
    elif args.view == "series":
        window.gantt.show_series(True)
        until(lambda: window.gantt.series.series is not None)
    pump(1.5)
    shot = app.primaryScreen().grabWindow(0)   # the X display: what a user would see
    shot.save(args.out)
    print(f"{args.out}: {shot.width()} x {shot.height()}, title {window.windowTitle()!r}")
    session.undo_stack.setClean()
    window.baseline.clear()
    session.undo_stack.setClean()
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
