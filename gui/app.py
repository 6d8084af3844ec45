"""Application start: ``run_app(argv)`` first offers every autosave that a dead Warpline process
left behind (whatever the command line says), then opens the window on a PTX file, a session file
or (with no argument) the bundled hotspot sample, in the background (``MainWindow.open_file_async``).

The autosaves are offered in one dialog (gui/recovery_dialog.py) that lists each with its PTX
path, kernel, last save, edits, whether the PTX changed since and whether another Warpline wrote
it; the user restores, keeps for later or discards each. Each restored autosave gets a window of
its own unless the first window is still free (no file was named); restored work is shown as
unsaved. Restores load in the background as File › Open does (the session's kernel parsed off the
UI thread, with progress and Cancel); one that fails or is cancelled leaves its autosave in place,
offered again at the next start. An autosave the user keeps for later stays on disk and is offered
again at the next start; one that cannot be read is skipped with a message, as is a profile file
that does not load.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QApplication

from engine.errors import WarplineError
from engine.profiles import list_profiles, profile_problems
from engine.recovery import RecoveryEntry, describe_orphans
from engine.session_file import Orphan, discard_orphan, find_orphans
from gui import main_thread_gc
from gui.display import display_problem
from gui.loader import LoadRequest
from gui.main_window import SAMPLE, MainWindow
from gui.recovery_dialog import Choice, RecoveryDialog
from gui.window import APP_NAME

# The windows of this process: Qt does not keep a top-level window alive by itself.
_WINDOWS: list[MainWindow] = []


def choose_recovery(parent: MainWindow, entries: list[RecoveryEntry]) -> list[Choice]:
    """What to do with each orphaned autosave: the recovery dialog's choices (all kept for later
    when it is closed without applying)."""
    dialog = RecoveryDialog(entries, parent)
    dialog.exec()
    return dialog.choices()


def restore_into(window: MainWindow, orphan: Orphan,
                 on_done: Callable[[LoadRequest], None] | None = None) -> bool:
    """Start opening ``orphan`` in ``window`` as its unsaved work, in the background (the window
    shows the outcome, errors in its banner). False, with the error shown, when it could not be
    claimed (another window took it first); ``on_done`` follows the load otherwise."""
    try:
        window.session.restore_async(orphan, on_done=on_done)
    except WarplineError as exc:
        window.show_error(f"Cannot restore the unsaved session of {orphan.data.ptx_path.name}: {exc}")
        return False
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


def _offer_recovery(window: MainWindow, free: bool = True,
                    on_first: Callable[[LoadRequest], None] | None = None) -> bool:
    """Offer every orphaned autosave; the first restored one goes into ``window`` when it is
    ``free``, the others into new windows. True when ``window`` received one (it loads in the
    background; ``on_first`` follows that load)."""
    orphans, problems = find_orphans(own_ids=[w.session.session_id for w in (*_WINDOWS, window)])
    entries = describe_orphans(orphans)
    used = False
    for orphan, choice in zip(orphans, choose_recovery(window, entries) if entries else [], strict=True):
        if choice is Choice.DISCARD:
            discard_orphan(orphan)
        elif choice is Choice.RESTORE:
            if free and not used:
                used = restore_into(window, orphan, on_first)
            else:
                restore_into(_new_window(window), orphan)
    for problem in problems:
        print(f"warpline: {problem}", file=sys.stderr)
    # Profile files that do not load are skipped (and logged); the window says so too, since a
    # broken copy of a shipped profile hides it.
    list_profiles()
    shown = problems + [f"profile file skipped: {problem}" for problem in profile_problems()]
    if shown:
        window.show_error("\n".join(shown))
    return used


def start_windows(argv: list[str]) -> list[MainWindow]:
    """Open the windows for ``argv`` (recovery first) and return them."""
    window = _new_window()
    files = [a for a in argv if not a.startswith("-")]
    target = Path(files[0]) if files else SAMPLE

    def open_target() -> None:
        pending = window.banner.label.text() if window.banner.isVisible() else ""

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

    def restored(request: LoadRequest) -> None:
        # A restore that failed leaves the window empty: it opens what it would have opened (the
        # error stays in view). A cancelled one (Esc, or the window closing) leaves it as it is.
        if request.error is not None and window.session.inputs is None and _alive(window):
            open_target()

    if not _offer_recovery(window, free=not files, on_first=restored):
        open_target()
    return list(_WINDOWS)


def run_app(argv: list[str]) -> int:
    problem = display_problem() if QApplication.instance() is None else None
    if problem is not None:
        # Qt would abort the process with a misleading message; the commands need no display.
        print(f"warpline: {problem}. The window needs a display; the commands (main.py info, predict, "
              "export ... --png) work without one.", file=sys.stderr)
        return 2
    app = QApplication.instance() or QApplication([sys.argv[0], *argv])
    main_thread_gc.install(app)
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    start_windows(argv)
    return app.exec()
