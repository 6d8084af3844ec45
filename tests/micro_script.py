"""``bench/micro/make_profile.py`` as a module, for tests that hold the profiles against the raw
microbenchmark runs they were derived from (one module object, however many tests load it)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "micro" / "make_profile.py"


def make_profile_module() -> ModuleType:
    """The script's module, loaded once."""
    loaded = sys.modules.get("make_profile")
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location("make_profile", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_profile"] = module
    spec.loader.exec_module(module)
    return module
