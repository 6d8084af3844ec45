"""Remembering SASS maps: in memory and on disk, so that an edit in the window, or a second run
of ``validate``, never starts ptxas for a kernel it has already mapped.

The key is the PTX text's SHA-256, the kernel, the architecture, the tools' fingerprint and the
map format. Files live in ``$XDG_CACHE_HOME/warpline/sass/`` (``~/.cache/warpline/sass/``), one JSON
file per key, written atomically; a file that does not read back as a map of that key is ignored
and replaced by the next computation.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import OrderedDict
from pathlib import Path

from engine.errors import WarplineError
from engine.fileio import write_text_atomic
from engine.sass.mapping_result import FORMAT, SassMap, SassUnavailable

MEMORY_ENTRIES = 256
_memory: OrderedDict[str, SassMap | SassUnavailable] = OrderedDict()


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "warpline" / "sass"


def cache_key(text: str, kernel: str, arch: str, fingerprint: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return hashlib.sha256("\0".join((digest, kernel, arch, fingerprint, str(FORMAT))).encode()).hexdigest()


def lookup(key: str) -> SassMap | SassUnavailable | None:
    """The remembered outcome for ``key``: memory first, then disk (maps only)."""
    if key in _memory:
        _memory.move_to_end(key)
        return _memory[key]
    path = cache_dir() / f"{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("key") != key:
            return None
        found = SassMap.from_json(data["map"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None           # absent, unreadable or corrupt: computed again and rewritten
    _remember(key, found)
    return found


def store(key: str, outcome: SassMap | SassUnavailable) -> None:
    """Remember ``outcome``; maps also go to disk (failures stay in memory: installing a tool
    changes the fingerprint anyway). A cache folder that cannot be written is skipped."""
    _remember(key, outcome)
    if not isinstance(outcome, SassMap):
        return
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_text_atomic(folder / f"{key}.json", json.dumps({"key": key, "map": outcome.to_json()}))
    except (OSError, WarplineError):
        pass


def clear_memory() -> None:
    _memory.clear()


def _remember(key: str, outcome: SassMap | SassUnavailable) -> None:
    _memory[key] = outcome
    _memory.move_to_end(key)
    while len(_memory) > MEMORY_ENTRIES:
        _memory.popitem(last=False)
