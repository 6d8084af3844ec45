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


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file in the same folder, so that a
    crash never leaves half a file; an unwritable path is a ``WarplineError`` naming it."""
    target = Path(path)
    try:
        if target.is_dir():
            raise WarplineError(f"{target}: is a folder, not a file to write")
        folder = target.parent if str(target.parent) else Path(".")
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise WarplineError(f"{target}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except OSError as exc:
        _remove(tmp)
        raise WarplineError(f"{target}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        _remove(tmp)
        raise
    return target


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
