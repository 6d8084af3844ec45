"""Checks made before a batch computes anything, so that a folder it cannot write or fill is
refused at once rather than after hours of work: the cache folder can be made and written, and
each file system to be written has room for the rows planned.

The room needed is an estimate from the sizes rows take (measured on the samples with every
model: about 760 bytes a cache line, 480 a CSV row, less in Parquet; rows with long messages take
more): :data:`CACHE_BYTES_PER_ROW` and :data:`OUTPUT_BYTES_PER_ROW` round them up, plus
:data:`MARGIN_BYTES`. A disk that fills anyway (another program writing) stops the batch with the
rows cached so far kept (engine.batch.runner), and outputs are written atomically, so an old
output is never half overwritten.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from engine.errors import WarplineError

CACHE_BYTES_PER_ROW = 1024
OUTPUT_BYTES_PER_ROW = 640
MARGIN_BYTES = 1 << 20


def check_cache_folder(folder: Path) -> None:
    """The cache folder exists (made if need be) and a file can be written in it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder, prefix=".probe-") as probe:
            probe.write(b"x")
            probe.flush()
    except OSError as exc:
        raise WarplineError(f"{folder}: cannot write the batch cache there: {exc.strerror or exc}") from None


def check_room(rows: int, cache_folder: Path, outputs: Sequence[str]) -> None:
    """WarplineError naming the first file system without room for ``rows`` new rows in the
    cache and in each output."""
    needed: dict[int, int] = {}
    folders: dict[int, Path] = {}
    for folder, size in [(cache_folder, rows * CACHE_BYTES_PER_ROW),
                         *((Path(out).absolute().parent, rows * OUTPUT_BYTES_PER_ROW) for out in outputs)]:
        try:
            device = os.stat(folder).st_dev
        except OSError:
            continue        # check_writable and check_cache_folder name a missing folder
        needed[device] = needed.get(device, MARGIN_BYTES) + size
        folders.setdefault(device, folder)
    for device, size in needed.items():
        folder = folders[device]
        try:
            info = os.statvfs(folder)
        except (OSError, AttributeError):
            continue        # no statvfs (not POSIX): the run itself will tell
        free = info.f_bavail * info.f_frsize
        if free < size:
            raise WarplineError(f"{folder}: {_size(free)} free, and this batch needs about {_size(size)} there "
                                f"({rows} rows for the cache and the outputs): free some space, or give "
                                "--out/--cache on another disk")


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    value = float(count)
    unit = "bytes"
    for unit in ("KB", "MB", "GB", "TB"):  # noqa: B007 - the unit reached is the one printed
        value /= 1024
        if value < 1024:
            break
    return f"{value:.1f} {unit}"
