"""What a batch covers: :class:`BatchSpec` (parsed, typed) and the TOML spec file.

A spec file uses the command's own option names as keys, with the same value syntax, so that one
parser (the command line's) reads both; :func:`read_spec_file` only checks keys and value types and
turns the values into the strings the options would have carried.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.errors import WarplineError
from engine.launch import Dim3

MAX_SPEC_BYTES = 1 << 20

# key -> (argparse destination, kind). "list": a list of strings (a single value is a list of one),
# "text": one string, "flag": a boolean, "int": a whole number, "path"/"paths": resolved against
# the spec file's folder when relative.
SPEC_KEYS: dict[str, tuple[str, str]] = {
    "ptx": ("sources", "paths"),
    "kernel": ("kernel", "list"),
    "profile": ("profile", "list"),
    "model": ("model", "list"),
    "grid": ("grid", "list"),
    "block": ("block", "list"),
    "smem-dynamic": ("smem_dynamic", "list"),
    "regs": ("regs", "int"),
    "arg": ("arg", "list"),
    "trip": ("trip", "list"),
    "occupancy": ("occupancy", "list"),
    "launch": ("launch_file", "path"),
    "config": ("config", "list"),
    "no-launch-file": ("no_launch_file", "flag"),
    "policy": ("policy", "text"),
    "no-ptxas": ("no_ptxas", "flag"),
    "without": ("without", "list"),
    "workers": ("workers", "int"),
    "scheduler": ("scheduler", "text"),
    "worker-wait": ("worker_wait", "int"),
    "out": ("out", "paths"),
    "cache": ("cache", "path"),
}


@dataclass(frozen=True)
class BatchSpec:
    """Every input of a batch, parsed. Lists are crossed: each kernel of each file runs every
    launch variant (launch-file launches x grids x blocks x shared memory x argument sets x
    occupancies) on every profile, and each evaluation yields one row per model."""

    sources: tuple[str, ...]
    profiles: tuple[str, ...]                     # names or .toml paths
    models: tuple[str, ...]                       # registry ids
    kernels: tuple[str, ...] = ()                 # empty: every kernel of each file
    grids: tuple[Dim3, ...] = ()
    blocks: tuple[Dim3, ...] = ()
    smem: tuple[int, ...] = ()
    regs: int | None = None
    arg_sets: tuple[dict[str | int, int | float], ...] = ({},)
    trips: dict[str, int] = field(default_factory=dict)
    occupancies: tuple[int | None, ...] = (None,)  # None: as many blocks as fit
    launch_file: str | None = None
    configs: tuple[str, ...] = ()
    use_launch_files: bool = True                 # a sample's own launch file, found as the CLI does
    policy: str = "lrr"
    use_ptxas: bool = True
    without: tuple[str, ...] = ()                 # simulator mechanisms switched off (engine.mechanisms)


def read_spec_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The spec file's settings by option destination, as the command line would carry them."""
    where = Path(path)
    try:
        data = where.read_bytes()
    except OSError as exc:
        raise WarplineError(f"{where}: cannot read the batch spec: {exc.strerror or exc}") from None
    if len(data) > MAX_SPEC_BYTES:
        raise WarplineError(f"{where}: a batch spec may have at most {MAX_SPEC_BYTES} bytes")
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise WarplineError(f"{where}: the batch spec is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise WarplineError(f"{where}: not valid TOML: {exc}") from None
    folder = where.parent
    out: dict[str, Any] = {}
    for key, value in table.items():
        spelled = key.replace("_", "-")
        if spelled not in SPEC_KEYS:
            raise WarplineError(f"{where}: unknown key {key!r} (keys: {', '.join(SPEC_KEYS)})")
        dest, kind = SPEC_KEYS[spelled]
        out[dest] = _value(value, kind, f"{where}: key {key!r}", folder)
    return out


def _value(value: Any, kind: str, where: str, folder: Path) -> Any:
    if kind == "flag":
        if not isinstance(value, bool):
            raise WarplineError(f"{where}: expected true or false")
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise WarplineError(f"{where}: expected a whole number")
        return value
    items = value if isinstance(value, list) else [value]
    if kind in ("text", "path") and isinstance(value, list):
        raise WarplineError(f"{where}: expected one value, not a list")
    texts: list[str] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            raise WarplineError(f"{where}: expected strings or numbers, got {item!r}")
        text = str(item)
        if kind in ("path", "paths"):
            # Relative to the spec file, so that a spec runs the same from any folder.
            text = os.path.join(folder, text) if not os.path.isabs(text) else text
        texts.append(text)
    return texts[0] if kind in ("text", "path") else texts
