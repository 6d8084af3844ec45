"""The progress bar of a batch: rows done, rate and time left, on stderr when it is a terminal."""

from __future__ import annotations

import sys
from typing import TextIO


class ProgressBar:
    """Callable with the number of rows just finished. Off (and silent) when ``enabled`` is False
    or the stream is not a terminal, so logs and pipes get no control characters."""

    def __init__(self, total: int, done: int = 0, *, enabled: bool = True, stream: TextIO | None = None) -> None:
        stream = stream or sys.stderr
        self._bar = None
        if enabled and total > done and stream.isatty():
            from tqdm import tqdm

            self._bar = tqdm(total=total, initial=done, unit="row", file=stream, dynamic_ncols=True,
                             smoothing=0.1, bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} rows "
                                                       "[{elapsed}<{remaining}, {rate_fmt}]")

    def __call__(self, rows: int) -> None:
        if self._bar is not None:
            self._bar.update(rows)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
