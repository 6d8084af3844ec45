"""Kernel launch settings and ``samples/<name>.launch.toml`` files.

A :class:`Launch` is plain data: grid and block shape, dynamic shared memory, an optional
register count override, kernel argument values and loop trip-count overrides. Shape checks
that need no GPU happen on construction; :func:`validate_launch` adds the profile's limits.

Launch file format::

    description = "..."
    source = "hotspot.cu"                 # CUDA source, relative to the launch file
    ptx = "ptx/hotspot.sm_90.ptx"         # PTX file, relative to the launch file

    [[launch]]
    name = "paper"                        # unique within the file
    kernel = "_Z14calculate_tempiPfS_S_iiiiffffff"   # optional: the module's only kernel
    grid = "43,43"                        # or [43, 43] or 43
    block = "16,16"
    smem_dynamic = 0                      # bytes, optional
    regs_per_thread = 34                  # optional: else from ptxas / the estimate
    reference_case = "hotspot/gtx760"     # optional: a worked case of 000
    [launch.args]                         # kernel parameter values by index ("0", "1", ...)
    "0" = 2
    [launch.trip]                         # trip counts by loop header label
    "$L__BB0_2" = 2
    [launch.data]                         # integers a pointer argument points to (by index or name)
    "1" = "random:0:1048576"              # random:LO:HI, linear:SLOPE[:OFFSET], offsets:LO:HI, constant:V
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.analysis.loaded_data import parse_loaded_data
from engine.errors import LaunchError, WarplineError
from engine.fileio import read_regular_file
from engine.ptx.parsed_module import Param

if TYPE_CHECKING:
    from engine.profiles import Profile

Dim3 = tuple[int, int, int]


def parse_dim(value: str | int | list[int] | tuple[int, ...], what: str = "dimension") -> Dim3:
    """``"16,16"`` / ``"16x16"`` / ``16`` / ``[16, 16]`` -> ``(16, 16, 1)``; LaunchError otherwise."""
    if isinstance(value, bool):
        raise LaunchError(f"{what}: expected 1 to 3 positive integers, got {value!r}")
    if isinstance(value, int):
        parts: list[Any] = [value]
    elif isinstance(value, str):
        text = value.strip().strip("()[]")
        pieces = [p.strip() for p in text.replace("x", ",").replace("X", ",").split(",")]
        try:
            parts = [int(p) for p in pieces]
        except ValueError:
            raise LaunchError(
                f"{what}: expected 1 to 3 positive integers such as '16,16', got {value!r}"
            ) from None
    elif isinstance(value, (list, tuple)):
        parts = list(value)
    else:
        raise LaunchError(f"{what}: expected 1 to 3 positive integers, got {value!r}")
    if not 1 <= len(parts) <= 3 or not all(isinstance(p, int) and not isinstance(p, bool) for p in parts):
        raise LaunchError(f"{what}: expected 1 to 3 positive integers, got {value!r}")
    if any(p <= 0 for p in parts):
        raise LaunchError(f"{what}: every extent must be at least 1, got {value!r}")
    padded = (parts + [1, 1])[:3]
    return (padded[0], padded[1], padded[2])


# The CUDA limits that hold on every GPU since compute capability 3.0; a profile may be stricter.
MAX_GRID: Dim3 = (2**31 - 1, 65535, 65535)
# A launch file is a few hundred bytes: anything far larger is not one.
MAX_LAUNCH_FILE_BYTES = 1 << 20
# The largest trip count one loop may be given: a 64-bit count (10^18 is accepted and bounded by
# the simulation budget; larger numbers cannot be an iteration count of real code).
MAX_TRIP_COUNT = 2**63 - 1
MAX_BLOCK: Dim3 = (1024, 1024, 64)
MAX_THREADS_PER_BLOCK = 1024


@dataclass(frozen=True)
class Launch:
    """One kernel launch. ``args`` maps parameter index (int) or name (str) to its value;
    ``trip_overrides`` maps a loop header label to its trip count."""

    grid: Dim3
    block: Dim3
    smem_dynamic: int = 0
    regs_per_thread: int | None = None
    args: dict[str | int, int | float] = field(default_factory=dict)
    trip_overrides: dict[str, int] = field(default_factory=dict)
    name: str = ""
    kernel: str | None = None
    reference_case: str | None = None
    # What the integers behind a pointer argument (index or name) are: a data pattern's text,
    # see :mod:`engine.analysis.loaded_data`. Gathers through them use it.
    data: dict[str | int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Normalise shapes given as strings/lists and reject impossible launches early.
        object.__setattr__(self, "grid", parse_dim(self.grid, "grid"))
        object.__setattr__(self, "block", parse_dim(self.block, "block"))
        for axis, (size, limit) in enumerate(zip(self.grid, MAX_GRID, strict=True)):
            if size > limit:
                raise LaunchError(f"grid: extent {size} along {'xyz'[axis]} exceeds the CUDA limit {limit}")
        for axis, (size, limit) in enumerate(zip(self.block, MAX_BLOCK, strict=True)):
            if size > limit:
                raise LaunchError(f"block: extent {size} along {'xyz'[axis]} exceeds the CUDA limit {limit}")
        if self.threads_per_block > MAX_THREADS_PER_BLOCK:
            raise LaunchError(
                f"block {self.block} has {self.threads_per_block} threads; "
                f"at most {MAX_THREADS_PER_BLOCK} are allowed"
            )
        if not isinstance(self.smem_dynamic, int) or self.smem_dynamic < 0:
            raise LaunchError(
                f"smem_dynamic must be a non-negative integer (bytes), got {self.smem_dynamic!r}"
            )
        if self.regs_per_thread is not None and (
            not isinstance(self.regs_per_thread, int) or not 0 < self.regs_per_thread <= 255
        ):
            raise LaunchError(
                f"regs_per_thread must be an integer from 1 to 255, got {self.regs_per_thread!r}"
            )
        for key, text in self.data.items():
            try:
                parse_loaded_data(text)
            except LaunchError as exc:
                raise LaunchError(f"data of argument {key!r}: {exc}") from None
        for label, count in self.trip_overrides.items():
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise LaunchError(
                    f"trip count of loop {label!r} must be a non-negative integer, got {count!r}"
                )
            if count > MAX_TRIP_COUNT:
                raise LaunchError(f"trip count of loop {label!r}: {count} is too large (at most 2^63 - 1)")
        for key, value in self.args.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise LaunchError(f"argument {key!r} must be a number, got {value!r}")
            if isinstance(value, float) and not math.isfinite(value):
                raise LaunchError(f"argument {key!r} must be a finite number, got {value!r}")

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def n_blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def n_threads(self) -> int:
        return self.threads_per_block * self.n_blocks

    def warps_per_block(self, warp_size: int = 32) -> int:
        return -(-self.threads_per_block // warp_size)


def validate_launch(launch: Launch, profile: Profile, static_smem: int = 0) -> None:
    """Check ``launch`` against a GPU's limits (threads, registers, shared memory per block).
    ``static_smem`` is the kernel's static shared memory, which adds to ``smem_dynamic``."""
    dev = profile.device
    name = dev.name
    if launch.threads_per_block > dev.max_threads_per_block:
        raise LaunchError(
            f"{launch.threads_per_block} threads per block exceed the {dev.max_threads_per_block} of {name}"
        )
    if launch.regs_per_thread is not None:
        if launch.regs_per_thread > dev.max_registers_per_thread:
            raise LaunchError(
                f"{launch.regs_per_thread} registers per thread exceed the "
                f"{dev.max_registers_per_thread} of {name}"
            )
        if launch.regs_per_thread * launch.threads_per_block > dev.max_registers_per_block:
            raise LaunchError(
                f"{launch.regs_per_thread} registers x {launch.threads_per_block} threads exceed the "
                f"{dev.max_registers_per_block} registers a block may use on {name}"
            )
    smem = static_smem + launch.smem_dynamic
    if smem > dev.max_smem_per_block_any:
        raise LaunchError(
            f"{smem} bytes of shared memory per block exceed the {dev.max_smem_per_block_any} of {name}"
        )


# Bits of the integer parameter types, and the largest magnitude of the floating-point ones.
_INT_BITS = {f"{kind}{bits}": bits for kind in "usb" for bits in (8, 16, 32, 64)}
_FLOAT_MAX = {"f16": 65504.0, "bf16": 3.3895313892515355e38, "f32": 3.4028234663852886e38,
              "f64": 1.7976931348623157e308}


def argument_value(param: Param, value: int | float) -> int | float:
    """``value`` as kernel parameter ``param`` receives it: an integer parameter takes an integer
    (``2.0`` becomes ``2``) of its width, signed or not (``-1`` for a ``.u32`` is ``int`` -1);
    a floating-point one a finite number within its range. Array parameters (structs passed by
    value) and other types are taken as given. LaunchError says why a value does not fit."""
    kind = param.type
    if param.array_size is not None:
        return value
    if isinstance(value, float) and not math.isfinite(value):
        raise LaunchError(f"{value!r} is not a finite number")
    if kind in _INT_BITS:
        given = value
        if isinstance(value, float):
            if not value.is_integer():
                raise LaunchError(f".{kind} takes an integer, got {value!r}")
            value = int(value)
        bits = _INT_BITS[kind]
        low, high = -(1 << (bits - 1)), (1 << bits) - 1
        if not low <= value <= high:
            raise LaunchError(f"{_shown(given)} does not fit a .{kind} ({low} to {high})")
    elif kind in _FLOAT_MAX and abs(value) > _FLOAT_MAX[kind]:
        raise LaunchError(f"{_shown(value)} does not fit a .{kind} (at most {_FLOAT_MAX[kind]:.7g} in magnitude)")
    return value


def _shown(value: int | float) -> str:
    """A value for a message: an integer of hundreds of digits by its length."""
    if isinstance(value, float) or abs(value) < 10**30:
        return repr(value)
    return f"an integer of {len(str(abs(value)))} digits"


def argument_index(key: str | int, params: Sequence[Param]) -> int | None:
    """The parameter ``key`` names (an index, its digits, or the parameter's name), else None."""
    if isinstance(key, str) and key.isdigit():
        key = int(key)
    if isinstance(key, int):
        return key if 0 <= key < len(params) else None
    return next((i for i, p in enumerate(params) if p.name == key), None)


def check_arguments(args: Mapping[str | int, int | float], params: Sequence[Param], kernel: str,
                    option: str = "argument") -> dict[str | int, int | float]:
    """``args`` (by parameter index or name) checked against a kernel's parameters: each key
    names one of them and each value fits its type (:func:`argument_value`; integral floats
    for integer parameters become integers). LaunchError, starting with ``option`` and the key,
    names the first problem and lists the parameters."""
    out: dict[str | int, int | float] = {}
    for key, value in args.items():
        param = params[parameter_index(key, params, kernel, option)]
        try:
            out[key] = argument_value(param, value)
        except LaunchError as exc:
            raise LaunchError(f"{option} {key}: {exc}") from None
    return out


def parameter_index(key: str | int, params: Sequence[Param], kernel: str, option: str = "argument") -> int:
    """The index of the parameter ``key`` names (:func:`argument_index`); LaunchError, starting
    with ``option`` and the key and listing the parameters, when it names none."""
    index = argument_index(key, params)
    if index is None:
        indices = f"indices 0..{len(params) - 1}; " if params else ""
        names = ", ".join(p.name for p in params) or "none"
        raise LaunchError(f"{option} {key}: no such parameter of {kernel} ({indices}parameters: {names})")
    return index


# ---------------------------------------------------------------------- launch files


@dataclass(frozen=True)
class LaunchFile:
    """A parsed ``.launch.toml``: paths are resolved relative to the file."""

    path: Path
    description: str
    source: Path | None
    ptx: Path | None
    launches: tuple[Launch, ...]

    def get(self, name: str | None = None) -> Launch:
        """The named launch, or the first when ``name`` is None."""
        if name is None:
            if not self.launches:
                raise LaunchError(f"{self.path}: the file defines no [[launch]]")
            return self.launches[0]
        for launch in self.launches:
            if launch.name == name:
                return launch
        names = ", ".join(launch.name for launch in self.launches)
        raise LaunchError(f"{self.path}: no launch named {name!r} (defined: {names})")


_TOP_KEYS = {"description", "source", "ptx", "launch"}
_LAUNCH_KEYS = {
    "name",
    "kernel",
    "grid",
    "block",
    "smem_dynamic",
    "regs_per_thread",
    "reference_case",
    "args",
    "trip",
    "data",
}


def load_launch_file(path: str | os.PathLike[str]) -> LaunchFile:
    """Read and validate a launch file; LaunchError names the file and the launch at fault.
    Only a regular UTF-8 file of at most :data:`MAX_LAUNCH_FILE_BYTES` is read."""
    path = Path(path)
    try:
        raw = read_regular_file(path, MAX_LAUNCH_FILE_BYTES, "launch file")
    except WarplineError as exc:
        raise LaunchError(str(exc)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise LaunchError(f"{path}:{line}: the launch file is not UTF-8 text (byte 0x{raw[exc.start]:02x})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LaunchError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise LaunchError(f"{path}: not valid TOML: arrays or tables nested too deeply") from None
    except ValueError:    # an integer with more digits than Python converts
        raise LaunchError(f"{path}: not valid TOML: a number has too many digits") from None
    return parse_launch_data(data, path)


def parse_launch_data(data: dict[str, Any], path: Path) -> LaunchFile:
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise LaunchError(
            f"{path}: unknown top-level key(s) {sorted(unknown)} (accepted: {sorted(_TOP_KEYS)})"
        )
    for key in ("description", "source", "ptx"):
        if key in data and not isinstance(data[key], str):
            raise LaunchError(f"{path}: {key!r} must be a string")
    tables = data.get("launch", [])
    if not isinstance(tables, list):
        raise LaunchError(f"{path}: write each launch as a [[launch]] table")
    launches: list[Launch] = []
    seen: set[str] = set()
    for i, table in enumerate(tables):
        where = (
            f"{path}: launch {table.get('name', i)!r}" if isinstance(table, dict) else f"{path}: launch {i}"
        )
        try:
            launch = _launch_from_table(table, i)
        except LaunchError as exc:
            raise LaunchError(f"{where}: {exc}") from None
        if launch.name in seen:
            raise LaunchError(f"{where}: the name is used twice")
        seen.add(launch.name)
        launches.append(launch)
    base = path.parent
    return LaunchFile(
        path=path,
        description=data.get("description", ""),
        source=base / data["source"] if "source" in data else None,
        ptx=base / data["ptx"] if "ptx" in data else None,
        launches=tuple(launches),
    )


def _launch_from_table(table: Any, index: int) -> Launch:
    if not isinstance(table, dict):
        raise LaunchError("must be a table")
    unknown = set(table) - _LAUNCH_KEYS
    if unknown:
        raise LaunchError(f"unknown key(s) {sorted(unknown)} (accepted: {sorted(_LAUNCH_KEYS)})")
    for key in ("grid", "block"):
        if key not in table:
            raise LaunchError(f"required key {key!r} is missing")
    for key in ("name", "kernel", "reference_case"):
        if key in table and not isinstance(table[key], str):
            raise LaunchError(f"{key!r} must be a string")
    args_table = table.get("args", {})
    trip_table = table.get("trip", {})
    data_table = table.get("data", {})
    if not all(isinstance(t, dict) for t in (args_table, trip_table, data_table)):
        raise LaunchError("[launch.args], [launch.trip] and [launch.data] must be tables")
    args: dict[str | int, int | float] = {}
    for key, value in args_table.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise LaunchError(f"argument {key!r} must be a number, got {value!r}")
        # Parameter indices are written as strings ("0") because TOML keys are strings.
        args[int(key) if key.isdigit() else key] = value
    smem = table.get("smem_dynamic", 0)
    if isinstance(smem, bool) or not isinstance(smem, int):
        raise LaunchError(f"smem_dynamic must be an integer (bytes), got {smem!r}")
    regs = table.get("regs_per_thread")
    if regs is not None and (isinstance(regs, bool) or not isinstance(regs, int)):
        raise LaunchError(f"regs_per_thread must be an integer, got {regs!r}")
    return Launch(
        grid=parse_dim(table["grid"], "grid"),
        block=parse_dim(table["block"], "block"),
        smem_dynamic=smem,
        regs_per_thread=regs,
        args=args,
        trip_overrides=dict(trip_table),
        data={int(k) if k.isdigit() else k: v for k, v in data_table.items()},
        name=table.get("name", f"launch{index}"),
        kernel=table.get("kernel"),
        reference_case=table.get("reference_case"),
    )
