"""The engine must import, every module of it, without pulling in Qt."""

import subprocess
import sys

CHECK = """
import importlib, pkgutil, sys
import engine
for m in pkgutil.walk_packages(engine.__path__, "engine."):
    importlib.import_module(m.name)
bad = sorted(k for k in sys.modules if k.split(".")[0] in ("PySide6", "pyqtgraph", "shiboken6"))
print(",".join(bad))
"""


def test_engine_imports_without_qt():
    # A fresh interpreter: pytest-qt has already imported Qt into this one.
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"engine imports Qt modules: {out.stdout.strip()}"
