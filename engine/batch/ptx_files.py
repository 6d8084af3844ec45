"""Which PTX files a batch reads: files, folders (every ``*.ptx`` below them) and glob patterns."""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from pathlib import Path

from engine.errors import WarplineError

_GLOB_CHARS = set("*?[")


def expand_sources(sources: Sequence[str]) -> list[str]:
    """The PTX files ``sources`` names, each once, in a stable order: a folder's files and a
    pattern's matches sorted, the sources themselves in the order given. A source that names
    nothing is an error (a typo would otherwise shrink the batch silently)."""
    out: list[str] = []
    seen: set[str] = set()
    for source in sources:
        found = _expand_one(source)
        if not found:
            raise WarplineError(f"{source}: no PTX file (not a file, a folder with .ptx files or a matching pattern)")
        for path in found:
            # The same file through two spellings (a folder and a pattern) counts once.
            key = os.path.realpath(path)
            if key not in seen:
                seen.add(key)
                out.append(path)
    return out


def _expand_one(source: str) -> list[str]:
    path = Path(source).expanduser()
    if any(c in source for c in _GLOB_CHARS) and not path.exists():
        matches = glob.glob(os.path.expanduser(source), recursive=True)
        return sorted(m for m in matches if os.path.isfile(m))
    if path.is_dir():
        return sorted(str(p) for p in path.rglob("*.ptx") if p.is_file())
    if path.is_file():
        return [str(path)]
    return []
