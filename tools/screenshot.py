"""Screenshot of the real window for the README: the hotspot sample, one latency edit (a global
load three times slower) and a level-1 superstep selected, grabbed from the X display.

    xvfb-run -a -s "-screen 0 1920x1080x24" env QT_QPA_PLATFORM=xcb \
        .venv/bin/python tools/screenshot.py docs/img/window.png --size 1920x1080

The README's others: ``window-1366x768.png`` (a 1366x768 screen, ``--size 1366x768``),
``window-collapsed.png`` (``--collapse 4``), ``window-baseline.png`` (``--baseline``) and
``window-dark.png`` (``--dark``), at 1920x1080; ``assumptions-*.png``: the Triton matmul's
Assumptions tab once its effects are in (``--assumptions tests/corpus/triton/matmul.cc90.ptx``);
``recovery-1920x1080.png`` and
``recovery-1366x768.png`` (``--recovery``: the recovery dialog at start, over three autosaves of
crashed windows: this checkout's, another checkout's whose PTX changed since, and an older
version's whose PTX is gone).
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--size", default="1600x960", help="window size, WIDTHxHEIGHT")
    parser.add_argument("--source", action="store_true", help="show the Source tab beside the table")
    parser.add_argument("--collapse", metavar="N|all", default="",
                        help="collapse the chart's first N warp groups (or all of them) into heat strips")
    parser.add_argument("--baseline", action="store_true",
                        help="pin the opened result as baseline before the edit and show the Compare tab")
    parser.add_argument("--dark", action="store_true",
                        help="a dark system palette (as a dark desktop theme gives it to Qt)")
    parser.add_argument("--assumptions", metavar="PTX",
                        help="open this file instead and show its Assumptions tab with the effects computed")
    parser.add_argument("--recovery", action="store_true",
                        help="the recovery dialog at start, over three made-up autosaves of crashed windows")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    app = QApplication(sys.argv[:1])
    if args.dark:
        from gui.theme import dark_palette

        app.setStyle("Fusion")
        app.setPalette(dark_palette())
    tmp = tempfile.mkdtemp(prefix="warpline-shot-")
    os.environ["XDG_DATA_HOME"] = tmp          # the autosave stays out of the user's folder
    from gui.main_window import MainWindow
    from gui.models.block_table import KEYS

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

    def settle() -> None:
        while not (session.result is not None and session.result.finished and not session.worker.busy
                   and session.result.state == session.state):
            pump(0.05)

    if args.assumptions:
        window.open_file(Path(args.assumptions))
        settle()
        while "assumptions" not in session.result.parts:
            pump(0.1)
        results = window.results_panel
        results.tabs.setCurrentWidget(results.assumptions)
        window.results_dock.raise_()
        pump(1.0)
        shot = app.primaryScreen().grabWindow(0)
        shot.save(args.out)
        print(f"{args.out}: {shot.width()} x {shot.height()}, title {window.windowTitle()!r}")
        session.undo_stack.setClean()
        window.close()
        return 0
    if args.recovery:
        return recovery_scene(app, window, Path(tmp), args.out, pump)
    window.open_file(ROOT / "samples" / "ptx" / "hotspot.sm_90.ptx")
    settle()
    if args.baseline:
        window.pin_baseline()
        pump(0.2)
    model = window.block_view.model_
    row = next(k for k, r in enumerate(model.rows) if r.is_global_access and r.lat_comm > 0)
    model.setData(model.index(row, KEYS.index("lat_comm")), f"{float(model.rows[row].lat_comm) * 3:g}")
    pump(0.1)
    settle()
    tree = window.superstep_view
    tree.setCurrentIndex(tree.model_.index(1, 0))
    if args.source:
        window.side_tabs.setCurrentWidget(window.source_panel)
        window.block_view.select_instruction(50)
    if args.collapse:
        chart = window.gantt.view
        if args.collapse == "all":
            chart.groups.set_all_collapsed(True)
        else:
            for label, _lanes in chart.groups.warp_groups()[: int(args.collapse)]:
                chart.groups.set_group_collapsed(label, True)
    if args.baseline:
        results = window.results_panel
        results.tabs.setCurrentWidget(results.compare)
    pump(1.0)
    shot = app.primaryScreen().grabWindow(0)   # the X display: what a user would see
    shot.save(args.out)
    print(f"{args.out}: {shot.width()} x {shot.height()}, title {window.windowTitle()!r}")
    session.undo_stack.setClean()
    window.close()
    return 0


def recovery_scene(app: QApplication, window: object, tmp: Path, out: str, pump: object) -> int:
    """The dialog as a start after three crashes shows it (the window behind it still empty)."""
    import shutil
    import subprocess

    from engine.evaluation import state_for
    from engine.inputs import resolve_inputs
    from engine.recovery import describe_orphans
    from engine.session_file import (
        RecoveryOwner,
        autosave_path,
        find_orphans,
        fingerprint_for,
        ptx_sha256,
        save_session,
    )
    from engine.state import with_cell_edit
    from gui.recovery_dialog import RecoveryDialog

    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True).stdout)
    now = time.time()
    other = tmp / "warpline-release-0.1" / "samples" / "ptx"
    other.mkdir(parents=True)
    samples = ROOT / "samples" / "ptx"
    for number, (ptx, installation, saved, edits) in enumerate((
        (samples / "hotspot.sm_90.ptx", str(ROOT), now - 2 * 3600,
         ("Set lat_comm of #47 to 1500", "Grid 64 x 64 x 1", "Set fu3 of #59 to 339+2")),
        (other / "mm.sm_90.ptx", str(other.parent.parent), now - 26 * 3600, ("Set lat_comm of #38 to 900",)),
        (tmp / "scratch" / "knn.sm_80.ptx", None, now - 5 * 86400, ()),
    )):
        if not ptx.exists():
            ptx.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(samples / ptx.name, ptx)
        inputs = resolve_inputs(ptx, use_ptxas=False)
        state = with_cell_edit(state_for(inputs), 12, "lat_comp", 55.0)
        fingerprint = fingerprint_for(inputs, state, ptx_sha256(ptx)) if installation else None
        owner = RecoveryOwner(f"crashed{number}", dead, None, installation, saved if installation else None, edits)
        path = save_session(autosave_path(f"crashed{number}"), ptx, state, fingerprint=fingerprint, owner=owner)
        os.utime(path, (saved, saved))
    with (other / "mm.sm_90.ptx").open("a") as handle:
        handle.write("// rebuilt after the crash\n")
    (tmp / "scratch" / "knn.sm_80.ptx").unlink()
    dialog = RecoveryDialog(describe_orphans(find_orphans()[0]), window)
    dialog.show()
    pump(1.0)
    shot = app.primaryScreen().grabWindow(0)
    shot.save(out)
    print(f"{out}: {shot.width()} x {shot.height()}, dialog {dialog.width()} x {dialog.height()}")
    dialog.reject()
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
