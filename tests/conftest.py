"""Suite-wide: after a test that made a window, its garbage is collected on the main thread.

A window turns Python's automatic cycle collection off (gui/main_thread_gc.py: a background
thread must never destroy Qt objects). Once the test is over its windows' workers are gone, so
the leftovers are collected here, on the main thread, and automatic collection comes back on for
the tests that make no window (the next window turns it off again).
"""

from __future__ import annotations

import gc

import pytest


@pytest.fixture(autouse=True)
def _collect_garbage_on_the_main_thread():
    yield
    if not gc.isenabled():
        gc.collect()
        gc.enable()
