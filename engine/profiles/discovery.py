"""Where profiles are found: the search folders, the list of those that load, and loading by name.

The search order is ``$WARPLINE_PROFILE_PATH``'s folders, the user folder, then the shipped
``profiles/``. :func:`list_profiles` lists only the profiles that load: a broken file in a profile
folder is skipped, and the reason is kept for :func:`profile_problems` (and logged). A broken file
still shadows a shipped profile of the same name: ``load_profile(name)`` then raises that file's
error instead of loading another file. Each file's verdict is remembered by its identity (mtime,
size, inode, device), so listing again re-reads only what changed.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from engine.errors import ProfileError, WarplineError
from engine.profiles.parsing import read_profile
from engine.profiles.profile import Profile

SHIPPED_DIR = Path(__file__).resolve().parents[2] / "profiles"
_LOG = logging.getLogger(__name__)
USER_DIR = Path("~/.config/warpline/profiles")
PATH_ENV = "WARPLINE_PROFILE_PATH"


def profile_dirs() -> list[Path]:
    """Search order: ``$WARPLINE_PROFILE_PATH`` entries, the user directory, the shipped one."""
    dirs = [Path(p).expanduser() for p in os.environ.get(PATH_ENV, "").split(os.pathsep) if p]
    dirs.append(USER_DIR.expanduser())
    dirs.append(SHIPPED_DIR)
    return dirs


# path -> (the file's identity when checked, the ProfileError it gave or None)
_CHECKED: dict[Path, tuple[tuple[int, int, int, int], ProfileError | None]] = {}
_PROBLEMS: list[str] = []


def profile_problems() -> list[str]:
    """One line per profile file that the latest :func:`list_profiles` skipped, and why."""
    return list(_PROBLEMS)


def _candidates() -> list[tuple[str, Path]]:
    """(name, path) of every ``*.toml`` in the search directories, in search order; folders
    that cannot be listed are reported as problems."""
    out: list[tuple[str, Path]] = []
    for directory in profile_dirs():
        try:
            if not directory.is_dir():
                continue
            paths = sorted(directory.glob("*.toml"))
        except OSError as exc:
            _PROBLEMS.append(f"{directory}: cannot list the profile folder: {exc.strerror or exc}")
            continue
        out.extend((path.stem, path) for path in paths)
    return out


def _check(path: Path) -> ProfileError | None:
    """The error loading ``path`` gives (None when it loads), cached by the file's identity."""
    try:
        st = os.stat(path)
        identity = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev)
    except OSError as exc:
        return ProfileError(f"cannot read the profile: {exc.strerror or exc}", str(path))
    cached = _CHECKED.get(path)
    if cached is not None and cached[0] == identity:
        return cached[1]
    try:
        read_profile(path)
        problem = None
    except ProfileError as exc:
        problem = exc
    except WarplineError as exc:  # pragma: no cover - every refusal is a ProfileError
        problem = ProfileError(str(exc), str(path))
    if problem is not None and (cached is None or cached[1] is None or str(cached[1]) != str(problem)):
        _LOG.warning("skipping profile %s", problem)
    _CHECKED[path] = (identity, problem)
    return problem


def list_profiles() -> dict[str, Path]:
    """Every profile name that loads, mapped to its file. A user file shadows a shipped one of
    the same name, so a user can edit a copy without touching the installation; a broken file
    is left out (its reason goes to :func:`profile_problems`) and still shadows the others, as
    it does for :func:`load_profile`."""
    _PROBLEMS.clear()
    found: dict[str, Path] = {}
    claimed: set[str] = set()
    candidates = _candidates()
    for name, path in candidates:
        if name in claimed:
            continue
        claimed.add(name)
        problem = _check(path)
        if problem is None:
            found[name] = path
            continue
        hidden = [p for n, p in candidates if n == name and p != path]
        also = f" (it hides {hidden[0]})" if hidden else ""
        _PROBLEMS.append(f"{problem} [skipped{also}]")
    return dict(sorted(found.items()))


def _named(name: str) -> Path | None:
    """The file ``load_profile(name)`` reads: the first ``<name>.toml`` in search order,
    whether or not it is valid."""
    for directory in profile_dirs():
        path = directory / f"{name}.toml"
        try:
            if path.exists() or path.is_symlink():
                return path
        except OSError:
            return path
    return None


def load_profile(name_or_path: str | os.PathLike[str]) -> Profile:
    """Load by name (``gtx1070``) or by path to a ``.toml`` file. Any problem with the file is a
    ProfileError naming it, even when another directory has a valid file of that name."""
    text_name = os.fspath(name_or_path)
    path = Path(text_name).expanduser()
    if not (text_name.endswith(".toml") or os.sep in text_name or path.is_file()):
        found = _named(text_name) if text_name and "\0" not in text_name else None
        if found is None:
            names = ", ".join(list_profiles()) or "none"
            raise ProfileError(f"no profile named {text_name!r} (known: {names})", text_name)
        path = found
    return read_profile(path)
