"""Files dropped on the window open as File › Open does (the first local file of the drop)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QWidget


class FileDrop(QObject):
    """An event filter on the window: accepts drags of local files and opens a dropped one
    when ``may_open()`` (unsaved changes saved or discarded)."""

    def __init__(self, window: QWidget, may_open: Callable[[], bool], open_path: Callable[[str], object]) -> None:
        super().__init__(window)
        self._may_open = may_open
        self._open = open_path
        window.setAcceptDrops(True)
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.DragEnter and isinstance(event, QDragEnterEvent):
            if any(u.isLocalFile() for u in event.mimeData().urls()):
                event.acceptProposedAction()
            return True
        if event.type() == QEvent.Type.Drop and isinstance(event, QDropEvent):
            urls = [u for u in event.mimeData().urls() if u.isLocalFile()]
            if urls and self._may_open():
                event.acceptProposedAction()
                self._open(urls[0].toLocalFile())
            return True
        return False
