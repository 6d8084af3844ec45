"""Warpline engine: PTX front end, analysis, profiles, models, simulator and exports.

Nothing in this package may import Qt; ``tests/test_engine_no_qt.py`` enforces it.
"""

__version__ = "0.1.0"

from pathlib import Path as _Path

from engine.compiled_cache import refresh as _refresh_compiled_cache

# compiled (numba) caches built from other sources than these are removed before anything loads them
_refresh_compiled_cache(_Path(__file__).resolve().parent)
