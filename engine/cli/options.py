"""Options every command shares, and how they become :class:`engine.inputs.KernelInputs`."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.analysis.loaded_data import parse_loaded_data
from engine.errors import WarplineError
from engine.fileio import read_regular_file
from engine.inputs import KernelInputs, resolve_inputs
from engine.launch import parse_dim
from engine.names import display_name, find_kernel
from engine.pipeline.simulator import DEFAULT_MAX_WARP_INSTRUCTIONS
from engine.ptx import index_kernels, parse_kernel
from engine.ptx.index import read_ptx_bytes
from engine.ptx.parsed_module import Module
from engine.state import POLICIES

MAX_LAUNCH_FILE_BYTES = 1 << 20
ALL_KERNELS = "all"        # --kernel all: every kernel of the file (the commands that allow it)
# The most values an A:B[:STEP] option may name (occupancies never exceed a few thousand warps).
MAX_RANGE_POINTS = 100_000


def _number(text: str) -> int | float:
    try:
        return int(text, 0)
    except ValueError:
        value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def _key_value(text: str, what: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip() or not value.strip():
        raise WarplineError(f"{what}: expected NAME=VALUE, got {text!r}")
    return key.strip(), value.strip()


def parse_args_option(items: Sequence[str]) -> dict[str | int, int | float]:
    """``--arg 0=2 --arg n=1024`` -> ``{0: 2, "n": 1024}`` (index or parameter name)."""
    out: dict[str | int, int | float] = {}
    for item in items:
        key, value = _key_value(item, "--arg")
        try:
            out[int(key) if key.isdigit() else key] = _number(value)
        except ValueError:
            raise WarplineError(f"--arg {item}: the value must be a finite number") from None
    return out


def parse_data_option(items: Sequence[str]) -> dict[str | int, str]:
    """``--data 1=linear:1 --data idx=random:0:1000`` -> ``{1: "linear:1", "idx": ...}``."""
    out: dict[str | int, str] = {}
    for item in items:
        key, value = _key_value(item, "--data")
        try:
            parse_loaded_data(value)
        except WarplineError as exc:
            raise WarplineError(f"--data {item}: {exc}") from None
        out[int(key) if key.isdigit() else key] = value
    return out


def parse_trip_option(items: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        key, value = _key_value(item, "--trip")
        try:
            count = int(value)
        except ValueError:
            raise WarplineError(f"--trip {item}: the trip count must be an integer") from None
        if count < 0:
            raise WarplineError(f"--trip {item}: the trip count cannot be negative")
        out[key] = count
    return out


def parse_range(text: str, option: str) -> list[int]:
    """``1:64`` -> 1..64, ``8:64:8`` -> 8, 16, ..., 64, ``4`` -> [4]."""
    parts = text.split(":")
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        raise WarplineError(f"{option} {text!r}: expected A:B[:STEP] or N (integers)") from None
    if len(numbers) == 1:
        numbers = [numbers[0], numbers[0]]
    bad_step = len(numbers) == 3 and numbers[2] < 1
    if len(numbers) not in (2, 3) or numbers[0] < 1 or numbers[1] < numbers[0] or bad_step:
        raise WarplineError(f"{option} {text!r}: expected A:B[:STEP] with 1 <= A <= B and STEP >= 1")
    step = numbers[2] if len(numbers) == 3 else 1
    points = range(numbers[0], numbers[1] + 1, step)
    if len(points) > MAX_RANGE_POINTS:
        # Refused before the list exists: 1:10^12 would exhaust memory. Within the limit, points
        # that cannot be reached are clipped later, with a note naming them.
        raise WarplineError(f"{option} {text!r}: {len(points):,} points; at most {MAX_RANGE_POINTS:,}")
    return list(points)


def _whole_number(text: str, minimum: int, rule: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{value} {rule}")
    return value


def positive_int(text: str) -> int:
    return _whole_number(text, 1, "must be at least 1")


def non_negative_int(text: str) -> int:
    return _whole_number(text, 0, "cannot be negative")


def add_input_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="PTX file")
    parser.add_argument("--kernel", help="kernel: mangled or demangled name, bare name or a unique part; "
                                         "default: the first (named on stderr when the file has several); "
                                         f"'{ALL_KERNELS}' runs every kernel (info, predict)")
    parser.add_argument("--profile", help="GPU profile name or .toml path (default: the one for the PTX's "
                                          "architecture, named on stderr)")
    parser.add_argument("--launch", dest="launch_file", help="launch-settings .toml (samples have one)")
    parser.add_argument("--config", help="named [[launch]] of the launch file")
    parser.add_argument("--grid", help="grid X[,Y,Z] (default: launch file, else one wave that fills the GPU)")
    parser.add_argument("--block", help="block X[,Y,Z] (default: launch file, else .reqntid/.maxntid, else 256)")
    parser.add_argument("--smem-dynamic", type=non_negative_int, help="dynamic shared memory per block, bytes")
    parser.add_argument("--regs", type=positive_int, help="registers per thread (default: ptxas -v, else estimate)")
    parser.add_argument("--arg", action="append", default=[], metavar="INDEX_OR_NAME=VALUE",
                        help="kernel argument value (repeatable)")
    parser.add_argument("--trip", action="append", default=[], metavar="LOOP=N",
                        help="loop trip count override by header label (repeatable)")
    parser.add_argument("--data", action="append", default=[], metavar="POINTER=PATTERN",
                        help="what the integers a pointer argument points to are, for gathers through "
                             "them: random:LO:HI, linear:SLOPE[:OFFSET], offsets:LO:HI (CSR row starts "
                             "with lengths in [LO, HI]) or constant:V (repeatable)")
    parser.add_argument("--no-ptxas", action="store_true", help="estimate registers instead of running ptxas")
    parser.add_argument("--max-warp-instructions", type=positive_int, default=DEFAULT_MAX_WARP_INSTRUCTIONS,
                        metavar="N", help="budget of one simulation: above it whole waves are sampled and "
                                          "scaled, or the simulation is refused (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def add_model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--occupancy", type=positive_int,
                        help="resident blocks per SM (default: as many as fit)")
    parser.add_argument("--policy", choices=POLICIES, default="lrr", help="warp scheduler of the simulation")


def load_chosen_kernel(path: str, wanted: str | None) -> tuple[Module, str]:
    """The module with only the kernel ``wanted`` names (and what it needs), and that kernel's
    name: the file is indexed without parsing bodies and only that kernel is parsed, so one
    kernel of a 250-kernel library costs a fraction of the whole file's parse. Without ``wanted``
    in a file of several kernels, stderr names the one chosen and the others."""
    data = read_ptx_bytes(path)
    entries = index_kernels(data, filename=path)
    if wanted == ALL_KERNELS and not any(e.name == ALL_KERNELS for e in entries):
        raise WarplineError(f"--kernel {ALL_KERNELS}: this command runs one kernel at a time; "
                            f"'info' and 'predict' run every kernel of {path}")
    entry = find_kernel(entries, wanted, path)
    if wanted is None and len(entries) > 1:
        print(chosen_kernel_note(path, entry.name, [e.name for e in entries]), file=sys.stderr)
    return parse_kernel(data, entry.name, filename=path), entry.name


def chosen_kernel_note(path: str, chosen: str, names: Sequence[str]) -> str:
    """What stderr says when a file of several kernels runs its first: which, and the others."""
    others = [display_name(n) for n in names if n != chosen]
    shown = ", ".join(others[:8]) + (f", and {len(others) - 8} more" if len(others) > 8 else "")
    return (f"warpline: {path} has {len(names)} kernels; running the first, {display_name(chosen)} "
            f"(others: {shown}); choose one with --kernel NAME, or --kernel {ALL_KERNELS}")


def kernel_names(path: str) -> list[str]:
    """Every kernel of the file, in file order (indexed, bodies not parsed)."""
    return [e.name for e in index_kernels(read_ptx_bytes(path), filename=path)]


def inputs_from_args(ns: argparse.Namespace, kernel: str | None = None,
                     module: Module | None = None, whole_file: bool = False) -> KernelInputs:
    """The inputs the options describe; what was chosen by default is named on stderr so that a
    log says which GPU and which launch the numbers are for. ``module``: the file already parsed;
    else only the chosen kernel is parsed (``whole_file``: every kernel, for listing them all)."""
    wanted = kernel if kernel is not None else ns.kernel
    if ns.launch_file:
        # Refused before the TOML reader sees it: it would read /dev/zero or a FIFO forever.
        read_regular_file(ns.launch_file, MAX_LAUNCH_FILE_BYTES, "launch file")
    # A named launch configuration says which kernel it launches: then the whole file is read
    # so that resolve_inputs can pick it (launch files come with small sample files).
    if module is None and not whole_file and (wanted is not None or not getattr(ns, "config", None)):
        module, wanted = load_chosen_kernel(ns.file, wanted)
    args, data = parse_args_option(ns.arg), parse_data_option(getattr(ns, "data", []))
    inputs = resolve_inputs(
        ns.file,
        module=module,
        kernel=wanted,
        profile=ns.profile,
        launch_file=ns.launch_file,
        config=ns.config,
        grid=parse_dim(ns.grid, "grid") if ns.grid else None,
        block=parse_dim(ns.block, "block") if ns.block else None,
        smem_dynamic=ns.smem_dynamic,
        regs=ns.regs,
        args=args,
        trips=parse_trip_option(ns.trip),
        data=data,
        use_ptxas=not ns.no_ptxas,
    )
    if ns.profile is None and inputs.profile is not None and not getattr(ns, "_told_profile", False):
        print(f"warpline: no --profile given, using {inputs.profile.name!r} ({inputs.profile_source})",
              file=sys.stderr)
        ns._told_profile = True
    return inputs


def emit(ns: argparse.Namespace, payload: dict[str, Any], text: str) -> None:
    if getattr(ns, "json", False):
        json.dump(payload, sys.stdout, indent=2, default=_json_default, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")

