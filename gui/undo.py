"""Undo/redo: every user edit is a :class:`StateCommand` that swaps immutable state snapshots.

Commands change the session (the model), never a view: the views follow the session's signals.
A command with a ``merge_key`` merges with the command right before it when both carry the same
key, so one slider drag (many value changes, one key per drag) is one undo step.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtGui import QUndoCommand

from engine.state import WorkbenchState

MERGE_ID = 4242   # QUndoCommand.id(): any value != -1 enables mergeWith


class StateHolder(Protocol):
    def set_state(self, state: WorkbenchState) -> None: ...


class StateCommand(QUndoCommand):
    def __init__(self, holder: StateHolder, before: WorkbenchState, after: WorkbenchState, text: str,
                 merge_key: str | None = None) -> None:
        super().__init__(text)
        self.holder = holder
        self.before = before
        self.after = after
        self.merge_key = merge_key

    def redo(self) -> None:
        self.holder.set_state(self.after)

    def undo(self) -> None:
        self.holder.set_state(self.before)

    def id(self) -> int:
        return MERGE_ID if self.merge_key is not None else -1

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, StateCommand) or other.merge_key != self.merge_key:
            return False
        self.after = other.after
        self.setText(other.text())
        # A drag that returns to where it started leaves nothing to undo.
        if self.after == self.before:
            self.setObsolete(True)
        return True
