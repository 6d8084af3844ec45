"""Application start: ``run_app(argv)`` opens the window on a PTX file, a session file or (with
no argument) the bundled hotspot sample, and offers to restore an autosaved session first."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtWidgets import QApplication, QMessageBox

from engine.errors import WarplineError
from engine.session_file import load_session, recovery_path
from gui.main_window import APP_NAME, SAMPLE, MainWindow


def _offer_recovery(window: MainWindow) -> bool:
    """When the last run left an autosave behind (it did not close cleanly), offer to restore it."""
    path = recovery_path()
    if not path.is_file():
        return False
    try:
        data = load_session(path)
    except WarplineError:
        path.unlink(missing_ok=True)
        return False
    answer = QMessageBox.question(
        window, APP_NAME,
        f"Warpline did not close cleanly. Restore the unsaved session of {data.ptx_path.name} "
        f"[{data.state.kernel}]?",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes)
    if answer != QMessageBox.StandardButton.Yes:
        path.unlink(missing_ok=True)
        return False
    if not window.open_file(path):
        return False
    window.session.session_path = None   # "Save" must ask where, not overwrite the autosave
    return True


def run_app(argv: list[str]) -> int:
    app = QApplication.instance() or QApplication([sys.argv[0], *argv])
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    window = MainWindow()
    window.show()
    files = [a for a in argv if not a.startswith("-")]
    restored = not files and _offer_recovery(window)
    if not restored:
        target = Path(files[0]) if files else SAMPLE
        if not window.open_file(target) and files:
            # A broken file named on the command line: open the sample, keep the error in view.
            error = window.banner.label.text()
            window.open_file(SAMPLE)
            window.show_error(error)
    return app.exec()
