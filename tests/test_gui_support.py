"""Shared set-up of the window tests (no tests here): an isolated window on the hotspot sample (own
settings file, own recovery folder) and waiting for the background worker's results."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path  # noqa: E402

from PySide6.QtCore import QSettings  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HOTSPOT = ROOT / "samples" / "ptx" / "hotspot.sm_90.ptx"
# How long a window may take to reach its complete result. Generous: the first evaluation in a test
# worker compiles the simulator core with numba when its cache is cold (about 17 s of CPU since
# the core became inlined stages), and on a loaded 2-core machine both workers may compile at once.
TIMEOUT_MS = 180_000


def restore_all(_parent, entries):
    """A stand-in for the recovery dialog (gui.app.choose_recovery) that restores every autosave."""
    from gui.recovery_dialog import Choice

    return [Choice.RESTORE] * len(entries)


def make_window(qtbot, tmp_path, monkeypatch, open_sample: bool = True):
    from gui.main_window import MainWindow

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings)
    qtbot.addWidget(window)
    # Closing at teardown must not wait on a "save changes?" dialog.
    monkeypatch.setattr(window, "confirm_discard", lambda: True)
    window.show()
    if open_sample:
        assert window.open_file(HOTSPOT)
        wait_complete(qtbot, window)
    return window


def wait_complete(qtbot, window, timeout: int = TIMEOUT_MS):
    """Until no file is being opened and the session's current state has its complete result
    (sweep included)."""
    session = window.session

    def done() -> bool:
        r = session.result
        return (not session.loading and r is not None and r.finished and r.state == session.state
                and not session.worker.busy)

    qtbot.waitUntil(done, timeout=timeout)
    return session.result


def cycles(window) -> tuple[float, float]:
    models = window.session.result.models
    return models["manybsp"].kernel_cycles, models["pipeline"].kernel_cycles


def axis_labels(axis) -> list[tuple[object, str]]:
    """(rectangle, text) of every label a pyqtgraph axis draws now: its own layout of them
    (``generateDrawSpecs``), as painted."""
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QImage, QPainter

    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [] if specs is None else [(QRectF(rect), text) for rect, _flags, text in specs[2]]


def overlapping_labels(labels) -> list[tuple[str, str]]:
    """Pairs of labels whose rectangles share more than half a pixel each way."""
    out = []
    for k, (a, ta) in enumerate(labels):
        for b, tb in labels[k + 1:]:
            common = a.intersected(b)
            if common.width() > 0.5 and common.height() > 0.5:
                out.append((ta, tb))
    return out


def drop_file(window, path) -> bool:
    """Drag ``path`` over the window and drop it, as a file manager does (Qt delivers a drop only
    to a widget that accepted the drag); returns whether the drop was accepted."""
    from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
    from PySide6.QtGui import QDragEnterEvent, QDropEvent
    from PySide6.QtWidgets import QApplication

    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    buttons, modifiers = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(QPoint(10, 10), Qt.DropAction.CopyAction, mime, buttons, modifiers)
    QApplication.sendEvent(window, enter)
    if not enter.isAccepted():
        return False
    drop = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, buttons, modifiers)
    QApplication.sendEvent(window, drop)
    return drop.isAccepted()
