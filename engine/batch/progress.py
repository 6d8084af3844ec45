"""The progress of a batch: rows done, rate and time left, on stderr. A terminal gets a bar; a log
or a pipe (stderr not a terminal) gets a line every :data:`LINE_EVERY_S` seconds and one at the
end, without control characters, so that a long run is never silent."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

LINE_EVERY_S = 10.0


class ProgressBar:
    """Callable with the number of rows just finished. Silent when ``enabled`` is False."""

    def __init__(self, total: int, done: int = 0, *, enabled: bool = True, stream: TextIO | None = None,
                 every_s: float = LINE_EVERY_S, clock: Callable[[], float] = time.monotonic) -> None:
        stream = stream or sys.stderr
        self._bar = None
        self._lines: _ProgressLines | None = None
        if not enabled or total <= done:
            return
        if stream.isatty():
            from tqdm import tqdm

            self._bar = tqdm(total=total, initial=done, unit="row", file=stream, dynamic_ncols=True,
                             smoothing=0.1, bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} rows "
                                                       "[{elapsed}<{remaining}, {rate_fmt}]")
        else:
            self._lines = _ProgressLines(total, done, stream, every_s, clock)

    def __call__(self, rows: int) -> None:
        if self._bar is not None:
            self._bar.update(rows)
        elif self._lines is not None:
            self._lines.update(rows)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        if self._lines is not None:
            self._lines.finish()
            self._lines = None


class _ProgressLines:
    """``batch: 57/143 rows (40 %), 1.6 rows/s, about 54 s left`` every few seconds."""

    def __init__(self, total: int, done: int, stream: TextIO, every_s: float, clock: Callable[[], float]) -> None:
        self.total, self.start_done, self.done = total, done, done
        self.stream, self.every_s, self.clock = stream, every_s, clock
        self.started = self.last = clock()

    def update(self, rows: int) -> None:
        self.done += rows
        now = self.clock()
        if now - self.last >= self.every_s:
            self.last = now
            self._write(now)

    def finish(self) -> None:
        if self.done > self.start_done:
            self._write(self.clock(), final=True)

    def _write(self, now: float, final: bool = False) -> None:
        elapsed = max(now - self.started, 1e-9)
        rate = (self.done - self.start_done) / elapsed
        share = self.done / self.total if self.total else 1.0
        text = f"batch: {self.done:,}/{self.total:,} rows ({share:.0%}), {rate:.3g} rows/s"
        if final:
            text += f", {elapsed:.0f} s"
        elif rate > 0:
            text += f", about {(self.total - self.done) / rate:.0f} s left"
        try:
            self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError):     # a closed pipe: the batch goes on
            pass
