"""Finding ``ptxas`` and ``nvdisasm``.

The PyPI wheels (``nvidia-cuda-nvcc``, ``nvidia-cuda-nvdisasm``) come first: they are a
dependency of Warpline, so every installation has the same release, and they read newer PTX than
the CUDA toolkit a machine may have on its PATH. A missing tool is not an error: the caller gets
the reason and falls back to PTX counts.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

# Where the wheels put their executables, newest CUDA line first (``nvidia/cu13/bin`` for 13.x,
# ``nvidia/cuda_nvcc/bin`` for the 12.x wheels).
_WHEEL_BIN_DIRS = ("nvidia/cu13/bin", "nvidia/cuda_nvcc/bin", "nvidia/cuda_nvdisasm/bin")


@dataclass(frozen=True)
class SassTools:
    """The assembler and disassembler to use, and a fingerprint of both for cache keys."""

    ptxas: str
    nvdisasm: str

    def fingerprint(self) -> str:
        """Changes when either executable is replaced (path, size and modification time): cheap,
        and it needs no subprocess, so a cache hit never starts a tool."""
        parts = []
        for exe in (self.ptxas, self.nvdisasm):
            try:
                st = os.stat(exe)
                parts.append(f"{exe}:{st.st_size}:{st.st_mtime_ns}")
            except OSError:
                parts.append(f"{exe}:missing")
        return "|".join(parts)


def _site_dirs() -> list[Path]:
    seen: list[Path] = []
    for entry in sys.path:
        if entry and entry.endswith("site-packages"):
            path = Path(entry)
            if path not in seen:
                seen.append(path)
    return seen


def _candidates(name: str) -> list[str]:
    found: list[str] = []
    for site in _site_dirs():
        for sub in _WHEEL_BIN_DIRS:
            exe = site / sub / name
            if exe.is_file() and os.access(exe, os.X_OK):
                found.append(str(exe))
    on_path = shutil.which(name)
    if on_path and on_path not in found:
        found.append(on_path)
    return found


def find_ptxas() -> str | None:
    """The ptxas to run: the nvidia-cuda-nvcc wheel's first (it reads the newest PTX, .version
    9.5 for 13.5), else the one on PATH; None when there is none."""
    found = _candidates("ptxas")
    return found[0] if found else None


def find_tools() -> SassTools | str:
    """The tools to use, or why there are none (a reason string, not an exception)."""
    ptxas = _candidates("ptxas")
    nvdisasm = _candidates("nvdisasm")
    missing = [name for name, where in (("ptxas", ptxas), ("nvdisasm", nvdisasm)) if not where]
    if missing:
        return (f"{' and '.join(missing)} not found (install the nvidia-cuda-nvcc and "
                "nvidia-cuda-nvdisasm packages)")
    # A ptxas and an nvdisasm from the same folder are one release; prefer such a pair.
    for exe in ptxas:
        sibling = str(Path(exe).with_name("nvdisasm"))
        if sibling in nvdisasm:
            return SassTools(exe, sibling)
    return SassTools(ptxas[0], nvdisasm[0])
