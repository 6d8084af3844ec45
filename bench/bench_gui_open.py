"""Opening a large PTX library in the real window (offscreen Qt), as File › Open does it.

    python bench/bench_gui_open.py [--kernels 252] [--instructions 2800] [--ptx FILE] [--sync | --cold]

A window with the hotspot sample open opens a generated library (252 kernels x 2,800
instructions: about 27 MB) through ``MainWindow.open_file_async``. Printed, in seconds from the
call: the kernel list offered (the chooser), the chosen kernel's session adopted (title, inputs,
kernel box: the window shows the new file), its timeline drawn, its models, its whole evaluation;
and the longest stall of the event loop in that time (a 10 ms timer's largest gap), which says how
responsive the window stayed. ``--sync`` times ``open_file`` (the blocking variant) instead.

``--cold`` times what a user who opens the file from the desktop (``./run.sh FILE``) waits for:
from the start of this process (Python, NumPy, Qt and the engine imported, the window made, its
file opened as ``run_app`` does) to the same marks (Linux: the process's start time is read from
/proc). The load average it ran at is printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _process_age() -> float:
    """Seconds since this process started (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        return float(Path("/proc/uptime").read_text().split()[0]) - started
    except (OSError, ValueError, IndexError):
        return 0.0


PROCESS_START = time.perf_counter() - _process_age()


def _load() -> str:
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"


def cold(path: Path, work: Path) -> None:
    """From this process's start to the window showing ``path``'s kernel, as ``run_app`` opens it."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([sys.argv[0]])
    from gui import app as app_module

    os.environ["XDG_CONFIG_HOME"] = str(work / "config")     # the layout and recent files stay apart
    marks: dict[str, float] = {"imports done, QApplication made": time.perf_counter()}
    window = app_module.start_windows([str(path)])[0]
    window.confirm_discard = lambda: True
    marks["window shown (file loading in the background)"] = time.perf_counter()
    session = window.session
    session.fileChanged.connect(lambda: marks.setdefault("session adopted (window shows the kernel)",
                                                         time.perf_counter()))
    session.timelineChanged.connect(lambda _e: marks.setdefault("timeline drawn", time.perf_counter()))
    session.modelsChanged.connect(lambda _e: marks.setdefault("models shown", time.perf_counter()))
    session.evaluationFinished.connect(lambda _e: marks.setdefault("evaluation finished", time.perf_counter()))
    while "evaluation finished" not in marks and time.perf_counter() - PROCESS_START < 600:
        app.processEvents()
        time.sleep(0.002)
    print(f"{path.name}: cold start, seconds from the process's start ({_load()})")
    for name, at in marks.items():
        print(f"  {name:48s} {at - PROCESS_START:7.2f} s")
    if window.banner.isVisible():
        print("  banner:", window.banner.label.text()[:200])
    session.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ptx", type=Path, help="the file to open (default: a generated library)")
    ap.add_argument("--kernels", type=int, default=252)
    ap.add_argument("--instructions", type=int, default=2800)
    ap.add_argument("--sync", action="store_true", help="time open_file (blocking) instead")
    ap.add_argument("--cold", action="store_true",
                    help="time from this process's start, as a user opening the file from the desktop waits")
    args = ap.parse_args()
    if args.cold and args.sync:
        ap.error("--cold and --sync: choose one")

    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([sys.argv[0]])
    work = Path(tempfile.mkdtemp(prefix="warpline-bench-open-"))
    os.environ["XDG_DATA_HOME"] = str(work / "data")
    path = args.ptx
    if path is None:
        from tests import ptx_gen

        path = work / "library.ptx"
        path.write_text(ptx_gen.library(kernels=args.kernels, instructions=args.instructions))
    if args.cold:
        cold(path, work)
        return
    from gui.main_window import SAMPLE, MainWindow

    window = MainWindow(QSettings(str(work / "settings.ini"), QSettings.Format.IniFormat))
    window.confirm_discard = lambda: True
    window.show()
    assert window.open_file(SAMPLE)
    session = window.session
    while session.result is None or not session.result.finished:
        app.processEvents()
        time.sleep(0.005)

    marks: dict[str, float] = {}
    gaps: list[tuple[float, float]] = []   # (when, time since the previous tick)
    last = [0.0]

    def tick() -> None:
        now = time.perf_counter()
        if last[0]:
            gaps.append((now, now - last[0]))
        last[0] = now

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(tick)

    def choose(names: list[str]) -> str:
        marks.setdefault("kernel list shown", time.perf_counter())
        marks["kernels"] = len(names)
        return names[len(names) * 3 // 4]

    window.choose_kernel = choose
    session.fileChanged.connect(lambda: marks.setdefault("session adopted (window shows the kernel)",
                                                         time.perf_counter()))
    session.timelineChanged.connect(lambda _e: marks.setdefault("timeline drawn", time.perf_counter()))
    session.modelsChanged.connect(lambda _e: marks.setdefault("models shown", time.perf_counter()))
    session.evaluationFinished.connect(lambda _e: marks.setdefault("evaluation finished", time.perf_counter()))

    size_mb = path.stat().st_size / 1e6
    timer.start()
    start = time.perf_counter()
    last[0] = start
    if args.sync:
        window.open_file(path)
    else:
        window.open_file_async(path)
    returned = time.perf_counter() - start
    while "evaluation finished" not in marks and (session.loading or session.worker.busy
                                                  or "session adopted (window shows the kernel)" not in marks):
        app.processEvents()
        time.sleep(0.002)
        if time.perf_counter() - start > 600:
            break
    timer.stop()
    print(f"{path.name}: {size_mb:.1f} MB, {marks.get('kernels', '?')} kernels "
          f"({'open_file' if args.sync else 'open_file_async'}; returned after {returned:.3f} s; {_load()})")
    for name, at in marks.items():
        if name != "kernels":
            print(f"  {name:45s} {at - start:7.2f} s")
    if window.banner.isVisible():
        print("  banner:", window.banner.label.text()[:200])
    adopted = marks.get("session adopted (window shows the kernel)", float("inf"))
    loading = [g for when, g in gaps if when <= adopted]
    after = [g for when, g in gaps if when > adopted]
    print(f"  longest event-loop stall while loading        {1000 * max(loading, default=0):7.0f} ms "
          f"({len(loading)} ticks of the 10 ms timer)")
    print(f"  longest stall while the kernel is evaluated   {1000 * max(after, default=0):7.0f} ms "
          f"({len(after)} ticks)")
    session.shutdown()


if __name__ == "__main__":
    main()
