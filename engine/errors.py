"""Error types that the engine raises on bad input.

Every error a user can cause derives from :class:`WarplineError`, so that front ends (CLI, GUI)
catch one type and show its message; anything else escaping is a bug.
"""

from __future__ import annotations


class WarplineError(Exception):
    """Base class of every user-facing engine error."""


class PtxSyntaxError(WarplineError):
    """Malformed PTX. Carries the file, 1-based line and column, and the offending text."""

    def __init__(self, message: str, file: str, line: int, column: int, text: str = "") -> None:
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.text = text
        where = f"{file}:{line}:{column}"
        shown = f": {text!r}" if text else ""
        super().__init__(f"{where}: {message}{shown}")


class ProfileError(WarplineError):
    """A GPU profile file that does not validate. Names the file, the key and the line."""

    def __init__(self, message: str, file: str, key: str | None = None, line: int | None = None) -> None:
        self.message = message
        self.file = file
        self.key = key
        self.line = line
        parts = [file if line is None else f"{file}:{line}"]
        if key:
            parts.append(f"key {key!r}")
        super().__init__(f"{': '.join(parts)}: {message}")


class LaunchError(WarplineError):
    """An impossible launch: zero-size grid or block, too many threads, unknown argument, ..."""


class ModelError(WarplineError):
    """A model cannot be evaluated on the given inputs (empty kernel, bad override, ...)."""


class TableFormatError(WarplineError):
    """A malformed table (CSV import). Names the row and the column at fault."""

    def __init__(self, message: str, file: str, row: int, column: str) -> None:
        self.message = message
        self.file = file
        self.row = row
        self.column = column
        super().__init__(f"{file}: row {row}, column {column!r}: {message}")


class SimulationError(WarplineError):
    """The simulator cannot run the given inputs (deadlock, lambda = 0, negative latency, ...)."""
