"""``paused_gc()``: the cyclic garbage collector off while a pass builds objects.

Parsing, analysing and evaluating a large kernel allocate millions of objects and few garbage
cycles. With the collector on, its full passes walk every tracked object: on a 10^5-label kernel
(about two million of them) each pass costs about 0.6 s, and the default thresholds start
eighteen of them during one ``predict``, 11 of its 37 s. Paused, the cycles made meanwhile are
collected afterwards instead.

Pauses nest and may overlap across threads (the window evaluates off the UI thread while it
parses another file): the collector is switched back on when the last pause ends, and only if
it was on when the first one began.

With ``promote``, what the pass built goes straight to the oldest generation when it ends: the
collector's next young-generation pass would otherwise scan every one of those objects (a
parsed 10^6-instruction kernel: over a second) only to find them all alive. ``gc.freeze()``
then ``gc.unfreeze()`` moves the young generations there in constant time; it is skipped when
something else has frozen objects, which ``unfreeze`` would release.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0                   # pauses in progress, in every thread
_restore = False             # whether the collector was on when the first of them began


@contextmanager
def paused_gc(promote: bool = False) -> Iterator[None]:
    global _depth, _restore
    with _lock:
        if _depth == 0:
            _restore = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
        if promote and gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _restore:
                gc.enable()


def pauses_in_progress() -> int:
    """How many pauses are running now (0: the collector is as its owner left it)."""
    return _depth
