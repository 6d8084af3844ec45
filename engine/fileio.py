"""Writing output files: atomically, with a one-line error instead of a traceback, and with CSV
cells that a spreadsheet would not evaluate.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from engine.errors import WarplineError

# A cell starting with one of these is a formula in Excel/LibreOffice/Sheets (OWASP's CSV-injection
# list); a leading apostrophe makes it text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def replace_atomically(path: str | os.PathLike[str], text: str, fsync: bool = False) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file in the same folder, so that a
    crash never leaves half a file and a failed write leaves the old one; ``fsync`` also flushes
    it to disk before the rename. Failures raise ``OSError`` (no temporary file is left)."""
    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(21, "is a folder, not a file to write", str(target))
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        _remove(tmp)
        raise
    return target


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """:func:`replace_atomically` for exports: an unwritable path is a ``WarplineError`` naming it."""
    try:
        return replace_atomically(path, text)
    except OSError as exc:
        raise WarplineError(f"{Path(path)}: cannot write: {exc.strerror or exc}") from None


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def csv_safe(value: object) -> object:
    """``value`` as a CSV cell a spreadsheet shows as text: strings starting like a formula get a
    leading apostrophe (numbers are left alone, so ``-3`` stays a number)."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value
