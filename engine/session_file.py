"""Session files: what the user opened and changed, as JSON, so a session can be closed and resumed.

A session stores the PTX path, the kernel, the profile, the launch, the overrides, the occupancy,
the scheduler policy and the measured cycles; never computed results (they are recomputed on
load, so a session stays valid when the models improve). Saving is atomic (temporary file in the
same folder, flushed, then ``os.replace``) so a crash mid-save never leaves a torn file. Loading
validates every field and raises :class:`WarplineError` naming the file and the key at fault.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import WarplineError
from engine.fileio import replace_atomically
from engine.launch import Launch
from engine.manybsp import Overrides
from engine.state import CELL_COLUMNS, POLICIES, WorkbenchState

FORMAT = "warpline-session"
VERSION = 1
SUFFIX = ".warpline"


@dataclass(frozen=True)
class SessionData:
    ptx_path: Path
    state: WorkbenchState


def recovery_path() -> Path:
    """The autosave file under the user's data folder ($XDG_DATA_HOME/warpline)."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "warpline" / f"recovery{SUFFIX}"


# ---------------------------------------------------------------------------- to JSON


def session_to_dict(ptx_path: str | os.PathLike[str], state: WorkbenchState) -> dict[str, Any]:
    launch, ov = state.launch, state.overrides
    return {
        "format": FORMAT,
        "version": VERSION,
        "file": str(Path(ptx_path).resolve()),
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
                 state: WorkbenchState) -> Path:
    """Write the session atomically; returns the path written."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(session_to_dict(ptx_path, state), indent=2, sort_keys=False) + "\n"
    return replace_atomically(target, text, fsync=True)


# ---------------------------------------------------------------------------- from JSON


class _Reader:
    """Typed access to the JSON object that names the file and the key in every error."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, key: str, message: str) -> WarplineError:
        return WarplineError(f"{self.source}: session key {key!r}: {message}")

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
    if measured is not None:
        rd.number(measured, "measured_cycles", minimum=0)
    launch_source = rd.get(data, "launch_source", str, optional=True) or "session file"
    state = WorkbenchState(kernel=kernel, profile=profile, launch=launch, overrides=overrides,
                           occupancy=occ, policy=policy,
                           measured_cycles=float(measured) if measured is not None else None,
                           launch_source=launch_source)
    return SessionData(ptx, state)


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
    try:
        return Launch(
            grid=rd.get(d, "grid", list, "launch"),
            block=rd.get(d, "block", list, "launch"),
            smem_dynamic=rd.get(d, "smem_dynamic", int, "launch", optional=True) or 0,
            regs_per_thread=rd.get(d, "regs_per_thread", int, "launch", optional=True),
            args=args,
            trip_overrides=trips,
            name=rd.get(d, "name", str, "launch", optional=True) or "",
            kernel=kernel,
            reference_case=rd.get(d, "reference_case", str, "launch", optional=True),
        )
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
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise WarplineError(f"{source}: cannot read the session: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise WarplineError(f"{source}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    return session_from_dict(data, source)
