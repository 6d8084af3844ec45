"""``batch`` progress when stderr is no terminal (issue 32): periodic plain lines with rows, rate and
time left, one at the end; nothing when quiet; no control characters."""

from __future__ import annotations

import io

from engine.batch.progress import ProgressBar


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_lines_every_period_and_at_the_end():
    stream, clock = io.StringIO(), _Clock()
    bar = ProgressBar(143, 3, stream=stream, every_s=10.0, clock=clock)
    for _ in range(14):
        clock.now += 5.0         # a row every 5 s
        bar(10 if clock.now < 160 else 0)
    bar.close()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "batch: 23/143 rows (16%), 2 rows/s, about 60 s left"
    assert len(lines) == 7 + 1 and lines[-1].endswith(", 70 s")
    assert "\r" not in stream.getvalue() and "\x1b" not in stream.getvalue()


def test_quiet_and_nothing_to_do_are_silent():
    stream = io.StringIO()
    bar = ProgressBar(10, 0, enabled=False, stream=stream)
    bar(5)
    bar.close()
    done = ProgressBar(10, 10, stream=stream)
    done.close()
    assert stream.getvalue() == ""
