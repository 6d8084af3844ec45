"""``paused_gc()``: the cyclic garbage collector off while a front-end pass builds objects.

Parsing and analysing a large kernel allocate millions of objects and no garbage cycles; the
collector's passes over them cost a quarter (parsing) to a half (analysis) of the time. The
collector is switched back on afterwards only by the outermost pause, and only if it was on.

With ``promote``, what the pass built goes straight to the oldest generation when it ends: the
collector's next young-generation pass would otherwise scan every one of those objects (a
parsed 10^6-instruction kernel: over a second) only to find them all alive. ``gc.freeze()``
then ``gc.unfreeze()`` moves the young generations there in constant time; it is skipped when
something else has frozen objects, which ``unfreeze`` would release.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc(promote: bool = False) -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        if promote and gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
    finally:
        if was_enabled:
            gc.enable()
