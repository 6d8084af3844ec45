"""Suite-wide: garbage is collected on the main thread after every test.

The window turns Python's automatic cycle collection off (gui/main_thread_gc.py: a background
thread must never destroy Qt objects); the tests that run after a window was made would otherwise
keep their cyclic garbage until a Qt event loop runs the window's collector.
"""

from __future__ import annotations

import gc

import pytest


@pytest.fixture(autouse=True)
def _collect_garbage_on_the_main_thread():
    yield
    if not gc.isenabled():
        gc.collect()
