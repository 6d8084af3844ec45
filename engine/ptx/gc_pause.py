"""``paused_gc()``: the cyclic garbage collector off while a front-end pass builds objects.

Parsing and analysing a large kernel allocate millions of objects and no garbage cycles; the
collector's passes over them cost a quarter (parsing) to a half (analysis) of the time. The
collector is switched back on afterwards only by the outermost pause, and only if it was on.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
