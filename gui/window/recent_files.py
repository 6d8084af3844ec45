"""File › Open recent: the last files opened or saved, newest first, kept in the settings."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMenu

MAX_RECENT = 8


class RecentFiles:
    """The list in the settings and the menu that shows it."""

    def __init__(self, settings: QSettings, menu: QMenu, open_path: Callable[[str], object]) -> None:
        """``open_path``: what choosing an entry does (ask to save, then open it)."""
        self.settings = settings
        self.menu = menu
        self._open = open_path
        self.fill()

    def entries(self) -> list[str]:
        value = self.settings.value("recentFiles", [])
        if isinstance(value, str):          # a list of one is read back as its entry
            return [value]
        if isinstance(value, list | tuple):
            return [str(v) for v in value]
        return []

    def add(self, path: Path) -> None:
        entry = str(path.resolve())
        recent = [entry] + [p for p in self.entries() if p != entry]
        self.settings.setValue("recentFiles", recent[:MAX_RECENT])
        self.fill()

    def fill(self) -> None:
        self.menu.clear()
        recent = self.entries()
        for entry in recent:
            action = self.menu.addAction(entry)
            action.triggered.connect(lambda _=False, p=entry: self._open(p))
        self.menu.setEnabled(bool(recent))
