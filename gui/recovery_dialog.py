"""The recovery dialog: every window that did not close cleanly, in one list, each with its PTX
path, kernel, when it was last saved, what was edited, whether the PTX changed since and whether
another Warpline wrote it (:mod:`engine.recovery`); the user restores, keeps for later or discards
each, then applies all the choices at once. Closing the dialog keeps everything for later.
"""

from __future__ import annotations

import time
from enum import Enum

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from engine.recovery import PTX_CHANGED, PTX_MISSING, PTX_UNCHANGED, RecoveryEntry
from gui.elided import ElidedLabel

SHOWN_EDITS = 3          # edits listed in a card; the tooltip lists them all


class Choice(Enum):
    RESTORE = "restore"
    LATER = "later"
    DISCARD = "discard"


_LABELS = {Choice.RESTORE: "Restore", Choice.LATER: "Keep for later", Choice.DISCARD: "Discard"}


def default_choice(entry: RecoveryEntry) -> Choice:
    """Restore this Warpline's work on a PTX file that is there; anything else waits until the
    user says otherwise (nothing is ever discarded unless chosen)."""
    if not entry.restorable or entry.other_installation is not None:
        return Choice.LATER
    return Choice.RESTORE


def saved_text(saved: float, now: float | None = None) -> str:
    """``Tue 27 Nov 14:02 (3 hours ago)``."""
    if saved <= 0:
        return "unknown"
    now = time.time() if now is None else now
    ago = max(0.0, now - saved)
    if ago < 90:
        relative = "just now"
    elif ago < 90 * 60:
        relative = f"{round(ago / 60)} minutes ago"
    elif ago < 36 * 3600:
        relative = f"{round(ago / 3600)} hours ago"
    else:
        relative = f"{round(ago / 86400)} days ago"
    try:
        when = time.strftime("%a %d %b %Y %H:%M", time.localtime(saved))
    except (OverflowError, OSError, ValueError):     # a file time no calendar can show
        return "unknown"
    return f"{when} ({relative})"


def edits_text(entry: RecoveryEntry) -> tuple[str, str]:
    """The card's line about the edits and its tooltip (every edit)."""
    edits = entry.edits
    if not edits:
        return "Edits: none recorded (the kernel as it reads, with its launch)", ""
    source = "" if entry.edits_recorded else " (read from the saved state)"
    shown = "; ".join(edits[-SHOWN_EDITS:])
    more = f"{len(edits) - SHOWN_EDITS} earlier, then: " if len(edits) > SHOWN_EDITS else ""
    return f"Edits ({len(edits)}){source}: {more}{shown}", "\n".join(edits)


class RecoveryCard(QFrame):
    """One autosave: what it is, and the three choices."""

    def __init__(self, entry: RecoveryEntry, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.entry = entry
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        title = ElidedLabel(f"{entry.ptx_path.name}  —  {entry.kernel}")
        bold = QFont(title.font())
        bold.setBold(True)
        title.setFont(bold)
        top.addWidget(title, 1)
        self.group = QButtonGroup(self)
        self.buttons: dict[Choice, QRadioButton] = {}
        for choice in Choice:
            button = QRadioButton(_LABELS[choice])
            self.group.addButton(button)
            self.buttons[choice] = button
            top.addWidget(button)
        restore = self.buttons[Choice.RESTORE]
        if not entry.restorable:
            restore.setEnabled(False)
            restore.setToolTip(entry.ptx_note)
        self.buttons[Choice.DISCARD].setToolTip("Deletes this unsaved work for good")
        self.buttons[Choice.LATER].setToolTip("Leaves it where it is; offered again at the next start")
        self.buttons[default_choice(entry)].setChecked(True)
        layout.addLayout(top)

        path = ElidedLabel(f"PTX file: {entry.ptx_path}")
        path.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(path)
        self.saved = QLabel(f"Last saved: {saved_text(entry.saved)}")
        layout.addWidget(self.saved)
        edits, tip = edits_text(entry)
        self.edits = QLabel(edits)
        self.edits.setWordWrap(True)
        self.edits.setToolTip(tip)
        layout.addWidget(self.edits)
        self.ptx = QLabel(f"PTX since: {entry.ptx_note}")
        self.ptx.setWordWrap(True)
        layout.addWidget(self.ptx)
        self.origin = QLabel(f"Saved by: {entry.origin_note}")
        self.origin.setWordWrap(True)
        layout.addWidget(self.origin)
        # What deserves a second look is in bold: a changed or missing file, another Warpline.
        for label, flagged in ((self.ptx, entry.ptx_status in (PTX_CHANGED, PTX_MISSING)),
                               (self.origin, entry.other_installation is not None)):
            if flagged:
                font = QFont(label.font())
                font.setBold(True)
                label.setFont(font)
        self.ptx.setProperty("status", entry.ptx_status if entry.ptx_status != PTX_UNCHANGED else "")

    def choice(self) -> Choice:
        for choice, button in self.buttons.items():
            if button.isChecked():
                return choice
        return Choice.LATER

    def set_choice(self, choice: Choice) -> None:
        button = self.buttons[choice]
        if button.isEnabled():
            button.setChecked(True)


class RecoveryDialog(QDialog):
    """Every orphaned autosave, one card each; :meth:`choices` after ``exec()``."""

    def __init__(self, entries: list[RecoveryEntry], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Recover unsaved work")
        layout = QVBoxLayout(self)
        count = len(entries)
        heading = QLabel(f"{count} Warpline window{'s' if count != 1 else ''} did not close cleanly and "
                         f"left unsaved work. Choose what happens to each:")
        heading.setWordWrap(True)
        layout.addWidget(heading)
        explain = QLabel("Restore opens it in a window as unsaved work. Keep for later leaves it and asks "
                         "again at the next start. Discard deletes it.")
        explain.setWordWrap(True)
        layout.addWidget(explain)

        holder = QWidget()
        cards_layout = QVBoxLayout(holder)
        self.cards = [RecoveryCard(entry) for entry in entries]
        for card in self.cards:
            cards_layout.addWidget(card)
            card.group.buttonToggled.connect(self._update_summary)
        cards_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(holder)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        layout.addWidget(scroll, 1)

        bottom = QHBoxLayout()
        self.all_buttons: dict[Choice, QPushButton] = {}
        for choice, text in ((Choice.RESTORE, "Restore all"), (Choice.LATER, "Keep all for later"),
                             (Choice.DISCARD, "Discard all")):
            button = QPushButton(text)
            button.setAutoDefault(False)
            button.clicked.connect(lambda _checked=False, c=choice: self.set_all(c))
            bottom.addWidget(button)
            self.all_buttons[choice] = button
        self.summary = QLabel()
        bottom.addWidget(self.summary, 1)
        self.box = QDialogButtonBox()
        self.apply_button = self.box.addButton("Apply", QDialogButtonBox.ButtonRole.AcceptRole)
        self.apply_button.setDefault(True)
        later = self.box.addButton("Decide later", QDialogButtonBox.ButtonRole.RejectRole)
        later.setToolTip("Keeps every autosave; they are offered again at the next start")
        self.box.accepted.connect(self.accept)
        self.box.rejected.connect(self.reject)
        bottom.addWidget(self.box)
        layout.addLayout(bottom)
        self._update_summary()
        self._fit(holder, scroll)

    def _fit(self, holder: QWidget, scroll: QScrollArea) -> None:
        """As wide as the text wants (within the screen) and as tall as the cards need at that
        width, up to the screen's height (the list scrolls beyond)."""
        screen = self.screen().availableGeometry() if self.screen() is not None else None
        width = 980 if screen is None else min(980, screen.width() - 40)
        room = 900 if screen is None else screen.height() - 80
        cards = holder.layout().totalHeightForWidth(width - 60) + 2
        others = self.sizeHint().height() - scroll.sizeHint().height()
        scroll.setMinimumHeight(max(120, min(cards, room - others)))
        self.resize(width, min(room, others + scroll.minimumHeight()))

    def set_all(self, choice: Choice) -> None:
        for card in self.cards:
            card.set_choice(choice)

    def choices(self) -> list[Choice]:
        """One per entry, in order; every one LATER when the dialog was not applied."""
        if self.result() != QDialog.DialogCode.Accepted:
            return [Choice.LATER] * len(self.cards)
        return [card.choice() for card in self.cards]

    def _update_summary(self, *_args: object) -> None:
        counts = {choice: 0 for choice in Choice}
        for card in self.cards:
            counts[card.choice()] += 1
        self.summary.setText(f"{counts[Choice.RESTORE]} to restore, {counts[Choice.LATER]} kept for later, "
                             f"{counts[Choice.DISCARD]} to discard")
        discards = counts[Choice.DISCARD]
        self.apply_button.setText(f"Apply (discards {discards})" if discards else "Apply")
