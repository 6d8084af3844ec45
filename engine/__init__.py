"""Warpline engine: PTX front end, analysis, profiles, models, simulator and exports.

Nothing in this package may import Qt; ``tests/test_engine_no_qt.py`` enforces it.
"""

__version__ = "0.1.0"
