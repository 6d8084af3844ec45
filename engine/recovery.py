"""What the recovery dialog says about each autosave a Warpline window left when it did not close
cleanly (:func:`engine.session_file.find_orphans`): which PTX file and kernel, when it was last
saved, what was edited, whether the PTX changed since, and whether another Warpline (another
checkout or installation) wrote it.

Everything here is read from the autosave and the PTX file's bytes (hashed, never parsed), so
describing a dozen autosaves at start takes milliseconds per file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from engine.names import display_name
from engine.session_file import INSTALLATION, Orphan, SessionData, ptx_sha256

# How the PTX file compares with what the autosave was made on.
PTX_UNCHANGED = "unchanged"
PTX_CHANGED = "changed"
PTX_MISSING = "missing"
PTX_UNKNOWN = "unknown"      # an older autosave without the file's hash


@dataclass(frozen=True)
class RecoveryEntry:
    """One autosave as the recovery dialog lists it."""

    orphan: Orphan
    ptx_path: Path
    kernel: str                  # as shown (demangled)
    saved: float                 # when it was last saved, seconds since the epoch
    edits: tuple[str, ...]       # what was edited, oldest first
    edits_recorded: bool         # True: the window's own undo history; False: read off the state
    ptx_status: str              # one of the PTX_* values
    ptx_note: str                # that status in a sentence
    other_installation: str | None   # the other Warpline that wrote it (None: this one, or unknown)
    origin_note: str             # where it came from in a sentence

    @property
    def restorable(self) -> bool:
        """False when the PTX file is not there to open (the autosave can only wait or go)."""
        return self.ptx_status != PTX_MISSING


def describe_orphans(orphans: list[Orphan], here: Path = INSTALLATION) -> list[RecoveryEntry]:
    return [describe_orphan(orphan, here) for orphan in orphans]


def describe_orphan(orphan: Orphan, here: Path = INSTALLATION) -> RecoveryEntry:
    data = orphan.data
    owner = data.owner
    saved = owner.saved if owner is not None and owner.saved is not None else _mtime(orphan.path)
    recorded = owner.edits if owner is not None else ()
    status, note = _ptx_status(data, saved)
    other, origin = _origin(data, here)
    return RecoveryEntry(orphan, data.ptx_path, display_name(data.state.kernel), saved,
                         recorded or tuple(state_edits(data)), bool(recorded), status, note, other, origin)


def state_edits(data: SessionData) -> list[str]:
    """What the stored state holds beyond the kernel as it reads (for autosaves without an
    edit history): every override, the occupancy, the policy, the measured cycles, the launch
    when it was changed, the pinned baselines."""
    state = data.state
    ov = state.overrides
    rows = data.fingerprint.rows if data.fingerprint is not None else {}

    def row(index: int) -> str:
        text = rows.get(index)
        return f"#{index}" + (f" ({' '.join(text.split())[:40]})" if text else "")

    out = []
    for index, cells in sorted(ov.latencies.items()):
        out += [f"{column} of {row(index)} set to {value:g}" for column, value in sorted(cells.items())]
    out += [f"n_ma of {row(index)} set to {value}" for index, value in sorted(ov.n_ma.items())]
    out += [f"{column} of {row(index)} set to {'blank' if value is None else value}"
            for (index, column), value in sorted(ov.block_cells.items(), key=lambda item: item[0])]
    out += [f"level-1 superstep {index} set to {count} iterations" for index, count in sorted(ov.iterations.items())]
    out += [f"Many-BSP parameter {name} set to {value:g}" for name, value in sorted(ov.params.items())]
    if state.launch_source == "edited" or state.launch_source.endswith("(edited)"):   # WorkbenchState.with_launch
        launch = state.launch
        out.append(f"launch set to grid {'x'.join(map(str, launch.grid))}, block {'x'.join(map(str, launch.block))}")
    if state.occupancy is not None:
        out.append(f"resident blocks per SM set to {state.occupancy}")
    if state.policy != "lrr":
        out.append(f"scheduler policy set to {state.policy}")
    if state.measured_cycles is not None:
        out.append(f"measured cycles set to {state.measured_cycles:g}")
    if data.baselines:
        out.append(f"{len(data.baselines)} pinned baseline{'s' if len(data.baselines) > 1 else ''}")
    return out


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _ptx_status(data: SessionData, saved: float) -> tuple[str, str]:
    path = data.ptx_path
    try:
        digest = ptx_sha256(path)
        modified = path.stat().st_mtime
    except FileNotFoundError:
        return PTX_MISSING, "the PTX file is not there any more: it cannot be restored until it is back"
    except OSError as exc:
        return PTX_MISSING, f"the PTX file cannot be read ({exc.strerror or exc}): it cannot be restored"
    fp = data.fingerprint
    if fp is None:
        when = "was modified after" if modified > saved else "was not modified since"
        return PTX_UNKNOWN, f"not recorded by the Warpline that saved it; the file {when} the autosave"
    if fp.ptx_sha256 == digest:
        return PTX_UNCHANGED, "the PTX file is as it was when the work was saved"
    return PTX_CHANGED, ("the PTX file changed since the work was saved: edits of rows whose instruction "
                         "changed will not be applied (the window names them)")


def _exists(path: Path, kind: str) -> bool:
    """``path.is_file()`` or ``is_dir()`` for any path a session may hold: False, not an error,
    for a name too long for the system or one with a NUL byte."""
    try:
        return path.is_file() if kind == "file" else path.is_dir()
    except (OSError, ValueError):
        return False


def _checkout_of(path: Path) -> Path | None:
    """The Warpline checkout a file lies in (a folder with engine/session_file.py and main.py)."""
    for folder in path.parents:
        if _exists(folder / "engine" / "session_file.py", "file") and _exists(folder / "main.py", "file"):
            return folder
    return None


def _same(a: str | os.PathLike[str], b: Path) -> bool:
    try:
        return Path(a).resolve() == b.resolve()
    except (OSError, ValueError, RuntimeError):    # (RuntimeError: a symbolic link loop, before 3.13)
        return False


def _origin(data: SessionData, here: Path) -> tuple[str | None, str]:
    owner = data.owner
    if owner is not None and owner.installation is not None:
        if _same(owner.installation, here):
            return None, "this Warpline"
        gone = "" if _exists(Path(owner.installation), "dir") else " (no longer there)"
        return owner.installation, f"another Warpline: {owner.installation}{gone}"
    # Older autosaves do not say; a PTX file inside another checkout tells where it came from.
    checkout = _checkout_of(data.ptx_path)
    if checkout is not None and not _same(checkout, here):
        return str(checkout), f"probably another Warpline checkout: {checkout} (its PTX file lies there)"
    return None, "not recorded (an older Warpline saved it)"
