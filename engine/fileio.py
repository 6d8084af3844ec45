"""Writing output files: atomically, with a one-line error instead of a traceback, and with CSV
cells that a spreadsheet would not evaluate (every CSV goes through :func:`csv_text`, which
escapes each text cell with :func:`csv_safe`; :func:`csv_unescape` reads one back).
"""

from __future__ import annotations

import csv
import errno
import io
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from engine.errors import WarplineError

# A cell starting with one of these is a formula in Excel/LibreOffice/Sheets (OWASP's CSV-injection
# list); a leading apostrophe makes it text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# A plain decimal number written as text ("-3", "+1.5e3"): a spreadsheet reads it as a number.
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def replace_atomically(path: str | os.PathLike[str], text: str | bytes, fsync: bool = False) -> Path:
    """Write ``text`` (UTF-8; bytes as they are) to ``path`` through a temporary file in the same folder, so that a
    crash never leaves half a file and a failed write leaves the old one; ``fsync`` also flushes
    it to disk before the rename. Failures raise ``OSError`` (no temporary file is left)."""
    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(21, "is a folder, not a file to write", str(target))
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp makes the file private (0600); the result gets the mode a plain open() would
        # give it (or the one it had), so exports on a shared folder stay readable by the group.
        if os.chmod in os.supports_fd:
            os.chmod(fd, _mode_for(target))
        binary = isinstance(text, bytes)
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="")) as handle:
            handle.write(text)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        _remove(tmp)
        raise
    return target


def current_umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux's
    /proc/self/status); elsewhere set and restored at once."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode_for(target: Path) -> int:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        return 0o666 & ~current_umask()


def write_text_atomic(path: str | os.PathLike[str], text: str | bytes) -> Path:
    """:func:`replace_atomically` for exports: an unwritable path is a ``WarplineError`` naming it."""
    try:
        return replace_atomically(path, text)
    except OSError as exc:
        raise WarplineError(f"{Path(path)}: cannot write: {exc.strerror or exc}") from None


def check_writable(*paths: str | os.PathLike[str] | None) -> None:
    """WarplineError naming the first of ``paths`` (None skipped) that cannot be written: a
    folder, or one whose folder is missing or not writable. Commands check their outputs
    before computing, so that a typo in ``--plot`` does not cost the whole run first."""
    for path in paths:
        if path is None or path == "":
            continue
        target = Path(path)
        if target.is_dir():
            raise WarplineError(f"{target}: cannot write: is a folder, not a file")
        folder = target.parent
        if not folder.is_dir():
            raise WarplineError(f"{target}: cannot write: the folder {folder} does not exist")
        if not os.access(folder, os.W_OK | os.X_OK) or (target.exists() and not os.access(target, os.W_OK)):
            raise WarplineError(f"{target}: cannot write: permission denied")


def csv_text(header: Sequence[object], rows: Iterable[Sequence[object]],
             path: str | os.PathLike[str] | None = None, comments: Sequence[str] = ()) -> str:
    """A header and rows as CSV text (``\\n`` line ends), also written atomically to ``path``
    when one is given: every CSV export goes through here. ``comments``: lines written first,
    each after ``# `` (what the table was computed from; ``pandas.read_csv(comment="#")`` and
    spreadsheets that skip comments read the table as before)."""
    buffer = io.StringIO()
    for line in comments:
        buffer.write("# " + " ".join(str(line).split()) + "\n")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([csv_safe(cell) for cell in header])
    # every text cell escaped against formulas: PTX text (guarded "@%p1 bra"), names, notes
    writer.writerows([csv_safe(cell) for cell in row] for row in rows)
    text = buffer.getvalue()
    if path is not None:
        write_text_atomic(path, text)
    return text



def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def csv_safe(value: object) -> object:
    """``value`` as a CSV cell a spreadsheet shows as text: strings starting like a formula get a
    leading apostrophe (numbers are left alone, also written as text, so ``-3`` stays a number)."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_unescape(text: str) -> str:
    """A cell as it was before :func:`csv_safe` (for readers of the CSVs Warpline writes)."""
    if text.startswith("'") and text[1:].startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(text[1:]):
        return text[1:]
    return text


class NotARegularFile(OSError):
    """A path that names a folder, a device or a FIFO where a file was wanted."""


def open_regular_file(path: str | os.PathLike[str]) -> tuple[int, os.stat_result]:
    """A read-only descriptor of ``path`` and its status, once ``fstat`` says it is a regular
    file. Opened without blocking, so a FIFO without a writer does not hang; checked on the
    descriptor, before a file object is made of it (Python refuses to make one of a folder),
    so that what is refused is never read. NotARegularFile otherwise (its ``strerror`` says
    what the path is), OSError when it cannot be opened."""
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except ValueError as exc:      # a NUL byte in the path (a session may name any path)
        raise OSError(errno.EINVAL, str(exc), name) from None
    try:
        st = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        kind = "a folder, not a file" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise NotARegularFile(errno.EINVAL, kind, name)
    return fd, st


def read_regular_file(path: str | os.PathLike[str], limit: int, what: str) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``limit`` bytes.

    Devices (``/dev/zero``), FIFOs and folders are refused before anything is read: opened
    without blocking, so a FIFO without a writer does not hang, and checked with ``fstat``.
    Failures raise a ``WarplineError`` naming the file and ``what`` it was meant to be."""
    name = os.fspath(path)
    try:
        fd, st = open_regular_file(name)
    except NotARegularFile as exc:
        raise WarplineError(f"{name}: {exc.strerror} (a {what} is a text file)") from None
    except (OSError, ValueError) as exc:   # ValueError: a NUL byte in the path
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise WarplineError(f"{name}: cannot read the {what}: {reason}") from None
    if st.st_size > limit:
        os.close(fd)
        raise WarplineError(f"{name}: the {what} is {st.st_size:,} bytes; at most {limit:,} are read")
    # Buffered: a raw read may return less than asked for.
    with os.fdopen(fd, "rb") as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise WarplineError(f"{name}: cannot read the {what}: {exc.strerror or exc}") from None
    if len(data) > limit:   # grew while being read
        raise WarplineError(f"{name}: the {what} has more than {limit:,} bytes")
    return data
