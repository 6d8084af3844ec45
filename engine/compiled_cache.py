"""Numba's on-disk caches, kept in step with the package's sources.

Numba keys a compiled function's cache entry to its own source file (name, time and size). A
compiled function that calls a compiled function of another module holds that one's code too,
so when only the other module changes (a new hash of synthetic data, a fixed handler), the caller's
stale entry is loaded and the run silently computes with the old code. :func:`refresh` hashes
every source file of the package at import; when the hash differs from the one the cache files
were written with, they are all removed, and numba compiles afresh (once); beside the sources
and, with ``NUMBA_CACHE_DIR`` set, in that folder too.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

STAMP = "warpline-sources.sha256"


def sources_digest(package: Path) -> str:
    """SHA-256 over the package's ``.py`` files (relative path and bytes, in path order)."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def cache_roots(package: Path) -> list[Path]:
    """Where numba keeps the package's cache files: ``__pycache__`` folders beside the sources,
    and, when ``NUMBA_CACHE_DIR`` is set, one folder under it per source folder, named as numba
    names it (the folder's name, ``_``, the SHA-1 of its absolute path). The package's own
    folder comes last."""
    user = os.environ.get("NUMBA_CACHE_DIR")
    if not user:
        return [package]
    own = package.resolve()
    folders = sorted({path.parent.resolve() for path in package.rglob("*.py")} - {own}) + [own]
    return [package] + [Path(user) / f"{folder.name}_{hashlib.sha1(str(folder).encode()).hexdigest()}"
                        for folder in folders]


def refresh(package: Path) -> bool:
    """Remove numba's cache files of ``package`` (:func:`cache_roots`) when its sources changed
    since they were written; True when it removed them. The stamp is kept where numba writes
    (the user's cache folder when one is set); a folder that cannot be written is left as it is."""
    roots = cache_roots(package)
    stamp = (roots[-1] / STAMP) if len(roots) > 1 else package / "__pycache__" / STAMP
    try:
        digest = sources_digest(package)
        if stamp.exists() and stamp.read_text(encoding="ascii").strip() == digest:
            return False
        for root in roots:
            for pattern in ("*.nbi", "*.nbc"):
                for path in root.rglob(pattern):
                    try:
                        path.unlink()
                    except OSError:
                        pass
        stamp.parent.mkdir(parents=True, exist_ok=True)
        temporary = stamp.with_name(f"{STAMP}.{os.getpid()}.tmp")
        temporary.write_text(digest + "\n", encoding="ascii")
        os.replace(temporary, stamp)
        return True
    except OSError:
        return False
