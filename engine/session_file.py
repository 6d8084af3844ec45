"""Session files: what the user opened and changed, as JSON, so a session can be closed and resumed.

A session stores the PTX path, the kernel, the profile, the launch, the overrides, the occupancy,
the scheduler policy and the measured cycles; never the results of that state (they are recomputed
on load, so a session stays valid when the models improve; only a pinned baseline keeps the figures
it showed, see below). Saving is atomic (temporary file in the
same folder, flushed, then ``os.replace``) so a crash mid-save never leaves a torn file. Loading
validates every field and raises :class:`WarplineError` naming the file and the key at fault.

Fingerprints: a session records the SHA-256 of the PTX it was made on and, for every row with an
override, that row's instruction text. When the file changed since, :func:`check_fingerprint`
keeps only the overrides whose row still holds the same instruction and says which it dropped, so
an edit is never applied to a different instruction.

Baselines (version 2): every baseline pinned for comparison is stored with what it was computed
from (its PTX file and that file's SHA-256, kernel, profile, launch, overrides, occupancy, policy)
and the figures the comparison showed (:class:`engine.evaluation.compare.BaselineFigures`). A
reopened session compares with those figures at once and recomputes the baseline only while its
PTX still has the same hash; otherwise the stored figures stay, marked as not recomputed. A
session without baselines is written as version 1, which every earlier Warpline reads.

Recovery: every window autosaves to its own file, ``<recovery_dir>/<session id>.warpline``, that
records the owning process (PID and, on Linux, its start time, so a recycled PID does not count
as the owner). :func:`find_orphans` lists the autosaves whose owner is dead (a crash, a kill -9);
a new window claims one by renaming it to its own name (atomic: two windows cannot both restore
it) and becomes its owner. Only the owner deletes an autosave, after a save or an explicit
discard.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from engine.analysis.loaded_data import parse_loaded_data
from engine.errors import WarplineError
from engine.evaluation.compare import BaselineFigures
from engine.fileio import open_regular_file, read_regular_file, replace_atomically
from engine.inputs import KernelInputs
from engine.launch import Launch, check_arguments
from engine.manybsp import Overrides
from engine.state import CELL_COLUMNS, POLICIES, WorkbenchState, copy_overrides

FORMAT = "warpline-session"
VERSION = 2                    # 2: baselines; files without any are written as version 1
SUFFIX = ".warpline"
# A session is a few KB; anything far larger is not one (and /dev/zero is refused outright).
MAX_SESSION_BYTES = 16 << 20


@dataclass(frozen=True)
class Fingerprint:
    """What the session's overrides were made on: the PTX's SHA-256 and, per overridden row
    (1-based BLOCK-table row = instruction), that instruction's text."""

    ptx_sha256: str
    rows: dict[int, str]


# The Warpline that writes an autosave: the folder holding ``engine/`` (a checkout, or where the
# package is installed). The recovery dialog names autosaves written by another one.
INSTALLATION = Path(__file__).resolve().parent.parent
MAX_RECORDED_EDITS = 50
MAX_PID = 2**31 - 1            # a pid_t; Linux's own limit is 2^22
# The latest save time a session may record: the end of year 9999, the last that every
# platform's time functions format (a larger one made the recovery dialog's clock overflow).
MAX_SAVED = 253402300799.0


@dataclass(frozen=True)
class RecoveryOwner:
    """The process that owns an autosave: its PID and start time (None where unknown), and what
    the recovery dialog shows of it: the Warpline installation it ran from, when it saved (seconds
    since the epoch) and its edits as the undo history names them, oldest first (the last
    :data:`MAX_RECORDED_EDITS`). Autosaves of older versions have none of these three."""

    session_id: str
    pid: int
    started: int | None = None
    installation: str | None = None
    saved: float | None = None
    edits: tuple[str, ...] = ()


@dataclass(frozen=True)
class StoredBaseline:
    """A pinned baseline as a session keeps it: what it was computed from, enough to compute it
    again (the PTX file, its SHA-256 when pinned, the state), its label and the figures shown."""

    label: str
    ptx_path: Path
    ptx_sha256: str
    state: WorkbenchState
    figures: BaselineFigures


@dataclass(frozen=True)
class SessionData:
    ptx_path: Path
    state: WorkbenchState
    fingerprint: Fingerprint | None = None
    owner: RecoveryOwner | None = None
    baselines: tuple[StoredBaseline, ...] = ()
    # where the session said the PTX was when it is not there and was found elsewhere (relative to
    # the session, or beside it: locate_ptx); None when found where it said
    moved_from: Path | None = None
    ptx_relative: str | None = None      # the PTX's path relative to the session's folder, as stored


class MissingPtxError(WarplineError):
    """A session's PTX file is neither where the session says nor beside the session: the window
    offers to locate it."""

    def __init__(self, message: str, session_path: Path, ptx_path: Path) -> None:
        super().__init__(message)
        self.session_path = session_path
        self.ptx_path = ptx_path


def locate_ptx(stored: Path, relative: str | None, session_path: str | os.PathLike[str]) -> Path:
    """Where a session's PTX file is: the absolute path it stored when that file exists, else the
    relative path from the session's folder, else a file of the same name beside the session;
    the stored path when none exists (the loader then says it is missing)."""
    if _is_file(stored):
        return stored
    folder = Path(session_path).resolve().parent
    candidates = ([folder / relative] if relative else []) + [folder / stored.name]
    return next((c.resolve() for c in candidates if _is_file(c)), stored)


def _is_file(path: Path) -> bool:
    """``path.is_file()``, False for a path the system cannot look up (a component over 255
    bytes, a NUL byte): a session file may hold any string as its PTX path."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _relative(ptx: Path, session_path: str | os.PathLike[str] | None) -> str | None:
    if session_path is None:
        return None
    try:
        return os.path.relpath(Path(ptx).resolve(), Path(session_path).resolve().parent)
    except ValueError:        # another drive (Windows): only the absolute path is kept
        return None


def _data_home() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "warpline"


def recovery_path() -> Path:
    """Where versions before per-window autosaves kept their single autosave; still offered as
    an orphan when found."""
    return _data_home() / f"recovery{SUFFIX}"


def recovery_dir() -> Path:
    """The folder of the per-window autosaves ($XDG_DATA_HOME/warpline/recovery)."""
    return _data_home() / "recovery"


def new_session_id() -> str:
    return uuid.uuid4().hex


def autosave_path(session_id: str) -> Path:
    """The autosave file of the window with ``session_id``."""
    return recovery_dir() / f"{session_id}{SUFFIX}"


def process_start_time(pid: int) -> int | None:
    """The start time of process ``pid`` in clock ticks since boot (Linux /proc), None where
    unknown. With the PID it names one process: PIDs are recycled, start times are not."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat_line = handle.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
    fields = stat_line[stat_line.rfind(b")") + 2 :].split()
    try:
        return int(fields[19])     # field 22 of proc(5), counted from field 3
    except (IndexError, ValueError):
        return None


def current_owner(session_id: str, edits: Iterable[str] = ()) -> RecoveryOwner:
    """This process as the owner of ``session_id``'s autosave, saving now with ``edits``."""
    pid = os.getpid()
    recorded = tuple(edits)[-MAX_RECORDED_EDITS:]
    return RecoveryOwner(session_id, pid, process_start_time(pid), str(INSTALLATION), time.time(), recorded)


def owner_alive(owner: RecoveryOwner) -> bool:
    """True while the process that wrote the autosave still runs."""
    if not 0 < owner.pid <= MAX_PID:
        return False    # no process has that PID (and os.kill would signal a group, or overflow)
    try:
        os.kill(owner.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass            # exists, another user's
    except OSError:
        return False
    if owner.started is not None:
        started = process_start_time(owner.pid)
        if started is not None and started != owner.started:
            return False   # the PID was recycled by another process
    return True


def ptx_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a PTX file's bytes (read in chunks). Only a regular file is read: a path
    naming a device or a FIFO (a session's baseline on ``/dev/zero``) raises OSError at once
    instead of reading forever or waiting for a writer."""
    digest = hashlib.sha256()
    fd, _ = open_regular_file(path)
    with os.fdopen(fd, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def overridden_rows(state: WorkbenchState) -> set[int]:
    """The BLOCK-table rows (1-based instructions) that carry an override."""
    ov = state.overrides
    return set(ov.latencies) | set(ov.n_ma) | {row for row, _column in ov.block_cells}


def fingerprint_for(inputs: KernelInputs, state: WorkbenchState, sha256: str) -> Fingerprint:
    body = inputs.function.instructions
    rows = {row: body[row - 1].text for row in sorted(overridden_rows(state)) if 1 <= row <= len(body)}
    return Fingerprint(sha256, rows)


def check_fingerprint(data: SessionData, inputs: KernelInputs, sha256: str
                      ) -> tuple[WorkbenchState, list[str]]:
    """The session's state for the PTX as it is now, and what changed: when the file's hash
    differs, every override whose row no longer holds the instruction it was made on is dropped
    (and named); the others are kept. Sessions without fingerprints load unchanged."""
    fp = data.fingerprint
    if fp is None or fp.ptx_sha256 == sha256:
        return data.state, []
    notes = [f"{inputs.path.name} changed since the session was saved"]
    body = inputs.function.instructions
    stale: list[int] = []
    for row in sorted(overridden_rows(data.state)):
        was = fp.rows.get(row)
        now = body[row - 1].text if 1 <= row <= len(body) else None
        if was is None or now != was:
            stale.append(row)
            now_text = "no instruction" if now is None else repr(_short(now))
            was_text = "an unrecorded instruction" if was is None else repr(_short(was))
            notes.append(f"row {row}: the override was made on {was_text}, the row now holds "
                         f"{now_text}; not applied")
    if not stale:
        return data.state, notes
    drop = set(stale)
    ov = copy_overrides(data.state.overrides)
    for row in drop:
        ov.latencies.pop(row, None)
        ov.n_ma.pop(row, None)
    for key in [k for k in ov.block_cells if k[0] in drop]:
        del ov.block_cells[key]
    return replace(data.state, overrides=ov), notes


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------------------- to JSON


def session_to_dict(ptx_path: str | os.PathLike[str], state: WorkbenchState, *,
                    fingerprint: Fingerprint | None = None,
                    owner: RecoveryOwner | None = None,
                    baselines: Iterable[StoredBaseline] = (),
                    session_path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The session as JSON data. ``session_path``: where it is written; the PTX files are then
    also stored relative to its folder (``file_relative``), so that a session sent with its PTX
    opens on another machine (:func:`locate_ptx`)."""
    stored = [_baseline_to_dict(b, session_path) for b in baselines]
    data: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION if stored else 1,
        "file": str(Path(ptx_path).resolve()),
        **_state_to_dict(state),
    }
    relative = _relative(Path(ptx_path), session_path)
    if relative is not None:
        data["file_relative"] = relative
    if fingerprint is not None:
        data["fingerprint"] = {"ptx_sha256": fingerprint.ptx_sha256,
                               "rows": {str(r): t for r, t in sorted(fingerprint.rows.items())}}
    if owner is not None:
        data["recovery"] = {"session_id": owner.session_id, "pid": owner.pid, "started": owner.started}
        if owner.installation is not None:
            data["recovery"]["installation"] = owner.installation
        if owner.saved is not None:
            data["recovery"]["saved"] = owner.saved
        if owner.edits:
            data["recovery"]["edits"] = list(owner.edits)
    if stored:
        data["baselines"] = stored
    return data


def _baseline_to_dict(baseline: StoredBaseline, session_path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    fig = baseline.figures
    relative = _relative(Path(baseline.ptx_path), session_path)
    return {
        "label": baseline.label,
        "file": str(Path(baseline.ptx_path).resolve()),
        **({"file_relative": relative} if relative is not None else {}),
        "ptx_sha256": baseline.ptx_sha256,
        "state": _state_to_dict(baseline.state),
        "figures": {"models": dict(fig.models), "shares": dict(fig.shares), "verdict": fig.verdict,
                    "cycles": fig.cycles},
    }


def _state_to_dict(state: WorkbenchState) -> dict[str, Any]:
    launch, ov = state.launch, state.overrides
    return {
        "kernel": state.kernel,
        "profile": state.profile,
        "launch": {
            "name": launch.name,
            "reference_case": launch.reference_case,
            "grid": list(launch.grid),
            "block": list(launch.block),
            "smem_dynamic": launch.smem_dynamic,
            "regs_per_thread": launch.regs_per_thread,
            # [key, value] pairs keep the difference between parameter index 0 and name "0".
            "args": [[k, v] for k, v in launch.args.items()],
            "trip_overrides": dict(launch.trip_overrides),
            "data": [[k, v] for k, v in launch.data.items()],
        },
        "overrides": {
            "latencies": {str(r): dict(v) for r, v in ov.latencies.items()},
            "n_ma": {str(r): v for r, v in ov.n_ma.items()},
            "block_cells": [[r, c, v] for (r, c), v in ov.block_cells.items()],
            "iterations": {str(i): n for i, n in ov.iterations.items()},
            "params": dict(ov.params),
        },
        "occupancy": state.occupancy,
        "policy": state.policy,
        "measured_cycles": state.measured_cycles,
        "launch_source": state.launch_source,
    }


def save_session(path: str | os.PathLike[str], ptx_path: str | os.PathLike[str],
                 state: WorkbenchState, *, fingerprint: Fingerprint | None = None,
                 owner: RecoveryOwner | None = None, baselines: Iterable[StoredBaseline] = ()) -> Path:
    """Write the session atomically; returns the path written. ``owner`` marks an autosave."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    data = session_to_dict(ptx_path, state, fingerprint=fingerprint, owner=owner, baselines=baselines,
                           session_path=target)
    text = json.dumps(data, indent=2, sort_keys=False) + "\n"
    return replace_atomically(target, text, fsync=True)


# ---------------------------------------------------------------------------- from JSON


class _Reader:
    """Typed access to the JSON object that names the file and the key in every error."""

    def __init__(self, source: str, prefix: str = "") -> None:
        self.source = source
        self.prefix = prefix          # where a nested object sits ("baselines[0].state.")

    def fail(self, key: str, message: str) -> WarplineError:
        return WarplineError(f"{self.source}: session key {self.prefix + key!r}: {message}")

    def within(self, prefix: str) -> _Reader:
        """A reader for the object at ``prefix`` (keys in its errors start there)."""
        return _Reader(self.source, self.prefix + prefix)

    def get(self, data: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str = "",
            optional: bool = False) -> Any:
        name = f"{where}.{key}" if where else key
        if key not in data:
            if optional:
                return None
            raise self.fail(name, "missing")
        value = data[key]
        if value is None and optional:
            return None
        if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
            raise self.fail(name, f"expected {_kind_name(kind)}, got {value!r}")
        if not isinstance(value, kind):
            raise self.fail(name, f"expected {_kind_name(kind)}, got {value!r}")
        return value

    def number(self, value: Any, name: str, minimum: float | None = 0) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(name, f"expected a number, got {value!r}")
        if isinstance(value, float) and not math.isfinite(value):   # JSON's Infinity / NaN
            raise self.fail(name, f"expected a finite number, got {value!r}")
        if minimum is not None and value < minimum:
            raise self.fail(name, f"{value!r} is below {minimum}")
        return value

    def index(self, text: str, name: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise self.fail(name, f"{text!r} is not an instruction/superstep number") from None
        if value < 1:
            raise self.fail(name, f"{value} must be at least 1")
        return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {int: "an integer", float: "a number", str: "a string", list: "a list", dict: "an object"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def session_from_dict(data: Any, source: str = "<session>") -> SessionData:
    rd = _Reader(source)
    if not isinstance(data, dict):
        raise WarplineError(f"{source}: a session file holds one JSON object")
    if data.get("format") != FORMAT:
        raise rd.fail("format", f"expected {FORMAT!r}: this is not a Warpline session")
    version = rd.get(data, "version", int)
    if version > VERSION:
        raise rd.fail("version", f"version {version} is newer than this Warpline reads ({VERSION})")
    ptx = Path(rd.get(data, "file", str))
    relative = rd.get(data, "file_relative", str, optional=True)
    state = _state(rd, data)
    return SessionData(ptx, state, _fingerprint(rd, data), _owner(rd, data), _baselines(rd, data),
                       ptx_relative=relative)


def _state(rd: _Reader, data: dict[str, Any]) -> WorkbenchState:
    """The state stored in ``data`` (a session's top level or a baseline's "state")."""
    kernel = rd.get(data, "kernel", str)
    profile = rd.get(data, "profile", str)
    launch = _launch(rd, rd.get(data, "launch", dict), kernel)
    overrides = _overrides(rd, rd.get(data, "overrides", dict, optional=True) or {})
    occ = rd.get(data, "occupancy", int, optional=True)
    if occ is not None and occ < 1:
        raise rd.fail("occupancy", f"{occ} resident blocks: at least 1 (or null for the maximum)")
    policy = rd.get(data, "policy", str, optional=True) or "lrr"
    if policy not in POLICIES:
        raise rd.fail("policy", f"{policy!r} is not one of {', '.join(POLICIES)}")
    measured = rd.get(data, "measured_cycles", (int, float), optional=True)
    if measured is not None and rd.number(measured, "measured_cycles", minimum=0) == 0:
        raise rd.fail("measured_cycles", "0 cycles: a measured kernel takes at least one cycle")
    launch_source = rd.get(data, "launch_source", str, optional=True) or "session file"
    return WorkbenchState(kernel=kernel, profile=profile, launch=launch, overrides=overrides,
                          occupancy=occ, policy=policy,
                          measured_cycles=float(measured) if measured is not None else None,
                          launch_source=launch_source)


def _baselines(rd: _Reader, data: dict[str, Any]) -> tuple[StoredBaseline, ...]:
    out = []
    for k, item in enumerate(rd.get(data, "baselines", list, optional=True) or []):
        where = f"baselines[{k}]"
        if not isinstance(item, dict):
            raise rd.fail(where, f"expected an object (label, file, ptx_sha256, state, figures), got {item!r}")
        b = rd.within(where + ".")
        sha = b.get(item, "ptx_sha256", str)
        if len(sha) != 64 or any(ch not in "0123456789abcdef" for ch in sha):
            raise b.fail("ptx_sha256", f"expected a SHA-256 as 64 lowercase hex digits, got {sha!r}")
        state = _state(rd.within(where + ".state."), b.get(item, "state", dict))
        path = Path(b.get(item, "file", str))
        relative = b.get(item, "file_relative", str, optional=True)
        if not path.is_file() and relative and rd.source not in ("", "<session>"):
            path = locate_ptx(path, relative, rd.source)
        out.append(StoredBaseline(b.get(item, "label", str), path, sha, state,
                                  _figures(b.within("figures."), b.get(item, "figures", dict))))
    return tuple(out)


def _figures(rd: _Reader, d: dict[str, Any]) -> BaselineFigures:
    models: dict[str, float | None] = {}
    for model_id, value in rd.get(d, "models", dict).items():
        models[model_id] = None if value is None else float(rd.number(value, f"models.{model_id}"))
    shares: dict[str, float] = {}
    for cause, value in rd.get(d, "shares", dict).items():
        share = float(rd.number(value, f"shares.{cause}"))
        if share > 1:
            raise rd.fail(f"shares.{cause}", f"{value!r} is above 1: a share of the warp-cycles")
        shares[cause] = share
    cycles = rd.get(d, "cycles", (int, float), optional=True)
    return BaselineFigures(models, shares, rd.get(d, "verdict", str),
                           None if cycles is None else float(rd.number(cycles, "cycles")))


def _fingerprint(rd: _Reader, data: dict[str, Any]) -> Fingerprint | None:
    d = rd.get(data, "fingerprint", dict, optional=True)
    if d is None:
        return None
    sha = rd.get(d, "ptx_sha256", str, "fingerprint")
    rows = {}
    for row, text in (rd.get(d, "rows", dict, "fingerprint", optional=True) or {}).items():
        name = f"fingerprint.rows.{row}"
        if not isinstance(text, str):
            raise rd.fail(name, f"expected the instruction's text, got {text!r}")
        rows[rd.index(row, name)] = text
    return Fingerprint(sha, rows)


def _owner(rd: _Reader, data: dict[str, Any]) -> RecoveryOwner | None:
    d = rd.get(data, "recovery", dict, optional=True)
    if d is None:
        return None
    pid = rd.get(d, "pid", int, "recovery")
    if not 0 < pid <= MAX_PID:
        raise rd.fail("recovery.pid", f"{pid} is not a process ID (1 to {MAX_PID})")
    started = rd.get(d, "started", int, "recovery", optional=True)
    if started is not None and not 0 <= started < 2**63:
        raise rd.fail("recovery.started", f"{started} is not a process start time (clock ticks since boot)")
    installation = rd.get(d, "installation", str, "recovery", optional=True)
    saved = rd.get(d, "saved", (int, float), "recovery", optional=True)
    if saved is not None:
        saved = float(rd.number(saved, "recovery.saved"))
        if saved > MAX_SAVED:
            raise rd.fail("recovery.saved", f"{saved!r} is not a time (seconds since 1970, up to year 9999)")
    edits = rd.get(d, "edits", list, "recovery", optional=True) or []
    for k, text in enumerate(edits):
        if not isinstance(text, str):
            raise rd.fail(f"recovery.edits[{k}]", f"expected the text of an edit, got {text!r}")
    return RecoveryOwner(rd.get(d, "session_id", str, "recovery"), pid, started, installation, saved, tuple(edits))


def _launch(rd: _Reader, d: dict[str, Any], kernel: str) -> Launch:
    args: dict[str | int, int | float] = {}
    for k, pair in enumerate(rd.get(d, "args", list, "launch", optional=True) or []):
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], (int, str))
                and not isinstance(pair[0], bool)):
            raise rd.fail(f"launch.args[{k}]", f"expected [index or name, value], got {pair!r}")
        args[pair[0]] = rd.number(pair[1], f"launch.args[{k}]", minimum=None)
    trips = {}
    for label, count in (rd.get(d, "trip_overrides", dict, "launch", optional=True) or {}).items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise rd.fail(f"launch.trip_overrides.{label}", f"expected a non-negative integer, got {count!r}")
        trips[str(label)] = count
    data: dict[str | int, str] = {}
    for k, pair in enumerate(rd.get(d, "data", list, "launch", optional=True) or []):
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], (int, str))
                and not isinstance(pair[0], bool) and isinstance(pair[1], str)):
            raise rd.fail(f"launch.data[{k}]", f"expected [index or name, pattern text], got {pair!r}")
        try:
            parse_loaded_data(pair[1])
        except WarplineError as exc:
            raise rd.fail(f"launch.data[{k}]", str(exc)) from None
        data[pair[0]] = pair[1]
    # the keys' own errors are located already; Launch's checks are of the launch as a whole
    grid, block = rd.get(d, "grid", list, "launch"), rd.get(d, "block", list, "launch")
    smem = rd.get(d, "smem_dynamic", int, "launch", optional=True) or 0
    regs = rd.get(d, "regs_per_thread", int, "launch", optional=True)
    name = rd.get(d, "name", str, "launch", optional=True) or ""
    case = rd.get(d, "reference_case", str, "launch", optional=True)
    try:
        return Launch(grid=grid, block=block, smem_dynamic=smem, regs_per_thread=regs, args=args,
                      trip_overrides=trips, name=name, kernel=kernel, reference_case=case, data=data)
    except WarplineError as exc:
        raise rd.fail("launch", str(exc)) from None


def _overrides(rd: _Reader, d: dict[str, Any]) -> Overrides:
    ov = Overrides()
    for row, cells in (rd.get(d, "latencies", dict, "overrides", optional=True) or {}).items():
        name = f"overrides.latencies.{row}"
        if not isinstance(cells, dict):
            raise rd.fail(name, f"expected an object of latencies, got {cells!r}")
        for key, value in cells.items():
            if key not in ("lat_comp", "lat_comm"):
                raise rd.fail(f"{name}.{key}", "expected lat_comp or lat_comm")
            ov.latencies.setdefault(rd.index(row, name), {})[key] = float(rd.number(value, f"{name}.{key}"))
    for row, value in (rd.get(d, "n_ma", dict, "overrides", optional=True) or {}).items():
        name = f"overrides.n_ma.{row}"
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise rd.fail(name, f"expected a non-negative integer, got {value!r}")
        ov.n_ma[rd.index(row, name)] = value
    for k, item in enumerate(rd.get(d, "block_cells", list, "overrides", optional=True) or []):
        name = f"overrides.block_cells[{k}]"
        if not (isinstance(item, list) and len(item) == 3 and isinstance(item[0], int)
                and item[1] in CELL_COLUMNS):
            raise rd.fail(name, f"expected [row, one of {', '.join(CELL_COLUMNS)}, value], got {item!r}")
        value = item[2]
        if value is not None and not isinstance(value, str):
            value = rd.number(value, name)
        ov.block_cells[(item[0], item[1])] = value
    for index, count in (rd.get(d, "iterations", dict, "overrides", optional=True) or {}).items():
        name = f"overrides.iterations.{index}"
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise rd.fail(name, f"expected a non-negative integer, got {count!r}")
        ov.iterations[rd.index(index, name)] = count
    for key, value in (rd.get(d, "params", dict, "overrides", optional=True) or {}).items():
        ov.params[str(key)] = rd.number(value, f"overrides.params.{key}", minimum=None)
    return ov


def load_session(path: str | os.PathLike[str]) -> SessionData:
    """Read and validate a session file; WarplineError names the file and what is wrong."""
    source = os.fspath(path)
    data_bytes = read_regular_file(path, MAX_SESSION_BYTES, "session")
    try:
        text = data_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data_bytes.count(b"\n", 0, exc.start) + 1
        raise WarplineError(f"{source}:{line}: the session is not UTF-8 text "
                            f"(byte 0x{data_bytes[exc.start]:02x})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise WarplineError(f"{source}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise WarplineError(f"{source}: the JSON is nested too deeply to be a session") from None
    session = session_from_dict(data, source)
    found = locate_ptx(session.ptx_path, session.ptx_relative, path)
    if found != session.ptx_path:
        session = replace(session, ptx_path=found, moved_from=session.ptx_path)
    return session


# ---------------------------------------------------------------------------- recovery


@dataclass(frozen=True)
class Orphan:
    """An autosave whose owning process is gone: work that was never saved."""

    path: Path
    data: SessionData


def find_orphans(own_ids: Iterable[str] = ()) -> tuple[list[Orphan], list[str]]:
    """The autosaves left by dead processes (oldest first), and one message per autosave that
    cannot be read (skipped, left in place). Files of live owners and of ``own_ids`` are not
    orphans."""
    own = set(own_ids)
    candidates = sorted(recovery_dir().glob(f"*{SUFFIX}")) if recovery_dir().is_dir() else []
    legacy = recovery_path()
    if legacy.is_file():
        candidates.append(legacy)
    found: list[tuple[float, Orphan]] = []
    problems: list[str] = []
    for path in candidates:
        if path.stem in own:
            continue
        try:
            data = load_session(path)
            mtime = path.stat().st_mtime
        except FileNotFoundError:
            continue      # claimed or deleted by another window meanwhile
        except (WarplineError, OSError) as exc:
            problems.append(f"unreadable recovery file skipped: {exc}")
            continue
        if data.owner is not None and (data.owner.session_id in own or owner_alive(data.owner)):
            continue
        found.append((mtime, Orphan(path, data)))
    found.sort(key=lambda item: item[0])
    return [orphan for _mtime, orphan in found], problems


def claim_orphan(orphan: Orphan, session_id: str) -> Path:
    """Make ``orphan`` the autosave of ``session_id`` (renamed; the caller rewrites it with its
    own owner at once). Raises WarplineError when another window claimed it first."""
    target = autosave_path(session_id)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(orphan.path, target)
    except FileNotFoundError:
        raise WarplineError(f"{orphan.path}: already restored by another window") from None
    except OSError as exc:
        raise WarplineError(f"{orphan.path}: cannot take over the recovery file: {exc.strerror or exc}") from None
    return target


def discard_orphan(orphan: Orphan) -> None:
    """Delete an orphan the user chose to discard."""
    try:
        orphan.path.unlink()
    except FileNotFoundError:
        pass


def unclaim_orphan(orphan: Orphan, claimed: Path) -> bool:
    """Undo :func:`claim_orphan` when the restore did not finish: the autosave goes back to its
    old name, to be offered again once its owner is gone. False when it could not be put back
    (it then stays at ``claimed``, which its window must no longer use as its own autosave)."""
    try:
        if orphan.path.exists():
            return False       # a newer autosave took the old name meanwhile: never overwritten
        os.rename(claimed, orphan.path)
    except FileNotFoundError:
        return True            # nothing left to put back
    except OSError:
        return False
    return True


def check_launch(state: WorkbenchState, inputs: KernelInputs) -> tuple[WorkbenchState, list[str]]:
    """The session's state for the kernel as it is now: argument values that name no parameter
    of the kernel or do not fit the parameter's type, and trip counts of labels the kernel does
    not have, are dropped and named (as an edit made for another version of the PTX); integral
    values of integer parameters become integers. The rest of the session is kept."""
    function = inputs.function
    launch = state.launch
    notes: list[str] = []
    args: dict[str | int, int | float] = {}
    for key, value in launch.args.items():
        try:
            args.update(check_arguments({key: value}, function.params, function.name, "session argument"))
        except WarplineError as exc:
            notes.append(f"{exc}; not applied")
    trips = {}
    for label, count in launch.trip_overrides.items():
        if label in function.labels:
            trips[label] = count
        else:
            notes.append(f"session trip count of {label}: {function.name} has no such label; not applied")
    same_args = len(args) == len(launch.args) and all(
        type(args[k]) is type(v) and args[k] == v for k, v in launch.args.items() if k in args)
    if same_args and trips == launch.trip_overrides:
        return state, notes
    return replace(state, launch=replace(launch, args=args, trip_overrides=trips)), notes
