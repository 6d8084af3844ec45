"""Application start: ``run_app(argv)`` first offers every autosave that a dead Warpline process
left behind (whatever the command line says), then opens the window on a PTX file, a session file
or (with no argument) the bundled hotspot sample, in the background (``MainWindow.open_file_async``).

Each restored autosave gets a window of its own unless the first window is still free (no file
was named); restored work is shown as unsaved. An autosave the user postpones stays on disk and is
offered again at the next start; one that cannot be read is skipped with a message.
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path

from PySide6.QtWidgets import QApplication, QMessageBox

from engine.errors import WarplineError
from engine.session_file import Orphan, discard_orphan, find_orphans
from gui import main_thread_gc
from gui.main_window import APP_NAME, SAMPLE, MainWindow

# The windows of this process: Qt does not keep a top-level window alive by itself.
_WINDOWS: list[MainWindow] = []


class Choice(Enum):
    RESTORE = "restore"
    DISCARD = "discard"
    LATER = "later"


def ask_recovery(parent: MainWindow, orphan: Orphan) -> Choice:
    """Restore, discard or keep for later one orphaned autosave."""
    data = orphan.data
    answer = QMessageBox.question(
        parent, APP_NAME,
        f"A Warpline window did not close cleanly and left unsaved work on {data.ptx_path.name} "
        f"[{data.state.kernel}]. Restore it? (Discard deletes it; Ignore keeps it for the next start.)",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Ignore,
        QMessageBox.StandardButton.Yes)
    if answer == QMessageBox.StandardButton.Yes:
        return Choice.RESTORE
    if answer == QMessageBox.StandardButton.Discard:
        return Choice.DISCARD
    return Choice.LATER


def restore_into(window: MainWindow, orphan: Orphan) -> bool:
    """Open ``orphan`` in ``window`` as its unsaved work; errors go to the window's banner."""
    try:
        notes = window.session.restore(orphan)
    except WarplineError as exc:
        window.show_error(f"Cannot restore the unsaved session of {orphan.data.ptx_path.name}: {exc}")
        return False
    window.banner.hide()
    if notes:
        window.show_error("Restored with changes: " + "\n".join(notes))
    window.show_message(f"Restored unsaved work on {orphan.data.ptx_path.name}")
    return True


def _alive(window: MainWindow) -> bool:
    try:
        return window.isVisible()
    except RuntimeError:     # its C++ side was deleted
        return False


def _new_window(settings_from: MainWindow | None = None) -> MainWindow:
    _WINDOWS[:] = [w for w in _WINDOWS if _alive(w)]   # closed windows are not kept
    window = MainWindow(settings_from.settings if settings_from is not None else None)
    window.show()
    _WINDOWS.append(window)
    return window


def _offer_recovery(window: MainWindow, free: bool = True) -> bool:
    """Offer every orphaned autosave; the first restored one goes into ``window`` when it is
    ``free``, the others into new windows. True when ``window`` received one."""
    orphans, problems = find_orphans(own_ids=[w.session.session_id for w in (*_WINDOWS, window)])
    used = False
    for orphan in orphans:
        choice = ask_recovery(window, orphan)
        if choice is Choice.DISCARD:
            discard_orphan(orphan)
        elif choice is Choice.RESTORE:
            if free and not used:
                used = restore_into(window, orphan)
            else:
                restore_into(_new_window(window), orphan)
    for problem in problems:
        print(f"warpline: {problem}", file=sys.stderr)
    if problems:
        window.show_error("\n".join(problems))
    return used


def start_windows(argv: list[str]) -> list[MainWindow]:
    """Open the windows for ``argv`` (recovery first) and return them."""
    window = _new_window()
    files = [a for a in argv if not a.startswith("-")]
    restored = _offer_recovery(window, free=not files)
    if not restored:
        pending = window.banner.label.text() if window.banner.isVisible() else ""
        target = Path(files[0]) if files else SAMPLE

        def opened(ok: bool) -> None:
            error = window.banner.label.text() if not window.banner.isHidden() else ""
            if not ok and files and error:
                # A broken file named on the command line: open the sample, keep the error in view
                # (a cancelled load leaves the window empty).
                window.open_file_async(SAMPLE, on_done=lambda _ok: window.show_error(error))
            elif pending:
                window.show_error(pending)   # unreadable recovery files: opening hid the banner

        # In the background, as File › Open: the window shows (and a large file's kernel list
        # comes) while the kernel is parsed.
        window.open_file_async(target, on_done=opened)
    return list(_WINDOWS)


def run_app(argv: list[str]) -> int:
    app = QApplication.instance() or QApplication([sys.argv[0], *argv])
    main_thread_gc.install(app)
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    start_windows(argv)
    return app.exec()
