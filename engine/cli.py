"""Headless command line: ``python main.py <command> FILE.ptx [options]``.

Every command resolves its inputs with :func:`engine.inputs.resolve_inputs`, so the CLI and the
GUI agree on what a file, a kernel, a profile and a launch mean. A ``WarplineError`` becomes a
one-line message and exit status 2; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from engine.errors import WarplineError
from engine.inputs import KernelInputs, resolve_inputs
from engine.launch import parse_dim
from engine.ptx import load_ptx
from engine.ptx.model import Module

COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {}


def command(name: str) -> Callable[[Callable[[argparse.Namespace], int]], Callable[[argparse.Namespace], int]]:
    def register(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        COMMANDS[name] = func
        return func
    return register


# ---------------------------------------------------------------- shared options


def _number(text: str) -> int | float:
    try:
        return int(text, 0)
    except ValueError:
        return float(text)


def _key_value(text: str, what: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key or not value:
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
            raise WarplineError(f"--arg {item}: the value must be a number") from None
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


def add_input_options(parser: argparse.ArgumentParser, profile_required: bool = False) -> None:
    parser.add_argument("file", help="PTX file")
    parser.add_argument("--kernel", help="kernel name (exact or a unique part); default: the first")
    parser.add_argument("--profile", required=profile_required,
                        help="GPU profile name or .toml path (default: the one the app picks for "
                             "the PTX's architecture, named on stderr)")
    parser.add_argument("--launch", dest="launch_file", help="launch-settings .toml (samples have one)")
    parser.add_argument("--config", help="named [[launch]] of the launch file")
    parser.add_argument("--grid", help="grid X[,Y,Z]")
    parser.add_argument("--block", help="block X[,Y,Z]")
    parser.add_argument("--smem-dynamic", type=int, help="dynamic shared memory per block, bytes")
    parser.add_argument("--regs", type=int, help="registers per thread (default: ptxas -v, else estimate)")
    parser.add_argument("--arg", action="append", default=[], metavar="INDEX_OR_NAME=VALUE",
                        help="kernel argument value (repeatable)")
    parser.add_argument("--trip", action="append", default=[], metavar="LOOP=N",
                        help="loop trip count override by header label (repeatable)")
    parser.add_argument("--no-ptxas", action="store_true", help="estimate registers instead of running ptxas")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def inputs_from_args(ns: argparse.Namespace, kernel: str | None = None,
                     needs_profile: bool = False, module: Module | None = None) -> KernelInputs:
    """The inputs the options describe. A command that ``needs_profile`` and got no --profile
    gets the profile the app would open the file with (the PTX's architecture, else gtx1070),
    named on stderr so that a batch log says which GPU the numbers are for. ``module`` is
    the file already parsed."""
    profile = ns.profile
    if profile is None and needs_profile:
        from engine.workbench import default_profile_for

        module = module or load_ptx(ns.file)
        profile = default_profile_for(module)
        print(f"warpline: no --profile given, using {profile!r} (the default for "
              f"{module.target[0] if module.target else 'this PTX'}; see profiles/)", file=sys.stderr)
    return resolve_inputs(
        ns.file,
        module=module,
        kernel=kernel if kernel is not None else ns.kernel,
        profile=profile,
        launch_file=ns.launch_file,
        config=ns.config,
        grid=parse_dim(ns.grid, "grid") if ns.grid else None,
        block=parse_dim(ns.block, "block") if ns.block else None,
        smem_dynamic=ns.smem_dynamic,
        regs=ns.regs,
        args=parse_args_option(ns.arg),
        trips=parse_trip_option(ns.trip),
        use_ptxas=not ns.no_ptxas,
    )


def emit(ns: argparse.Namespace, payload: dict[str, Any], text: str) -> None:
    if ns.json:
        json.dump(payload, sys.stdout, indent=2, default=_json_default)
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


# ---------------------------------------------------------------- info


def kernel_info(inputs: KernelInputs) -> dict[str, Any]:
    """The facts ``info`` prints about one kernel, as plain data."""
    from engine.analysis import analyze_kernel
    from engine.occupancy import occupancy

    analysis = analyze_kernel(inputs.function, inputs.launch, inputs.module)
    by_unit = Counter(c.unit.value for c in analysis.classifications)
    info: dict[str, Any] = {
        "name": inputs.function.name,
        "instructions": {"total": len(inputs.function.instructions), **dict(sorted(by_unit.items()))},
        "loops": [
            {
                "header": loop.key,
                "depth": loop.depth,
                "parent": loop.parent,
                "trip_count": loop.trip_count.value,
                "trip_source": loop.trip_count.source,
                "trip_reason": loop.trip_count.reason,
            }
            for loop in analysis.loop_info
        ],
        "registers": inputs.resources.registers,
        "registers_source": inputs.resources.source,
        "static_shared_bytes": inputs.resources.static_shared_bytes,
        "barriers": sum(1 for c in analysis.classifications if c.is_barrier),
    }
    if inputs.launch is not None:
        launch = inputs.launch
        info["launch"] = {
            "grid": list(launch.grid), "block": list(launch.block),
            "smem_dynamic": launch.smem_dynamic, "blocks": launch.n_blocks,
            "threads_per_block": launch.threads_per_block,
        }
        if inputs.profile is not None:
            occ = occupancy(inputs.profile, launch.threads_per_block, inputs.resources.registers,
                            inputs.resources.static_shared_bytes + launch.smem_dynamic)
            info["occupancy"] = {
                "profile": inputs.profile.name,
                "blocks_per_sm": occ.blocks_per_sm,
                "limiter": occ.limiter,
                "active_warps": occ.active_warps,
                "occupancy_fraction": round(occ.occupancy_fraction, 4),
                "limits": {k: v for k, v in occ.limits.items() if v < 2**31 - 1},
            }
    return info


def format_kernel_info(info: dict[str, Any]) -> str:
    lines = [f"kernel {info['name']}"]
    counts = ", ".join(f"{k} {v}" for k, v in info["instructions"].items() if k != "total")
    lines.append(f"  instructions: {info['instructions']['total']} ({counts})")
    lines.append(f"  registers/thread: {info['registers']} ({info['registers_source']}), "
                 f"static shared memory: {info['static_shared_bytes']} B, barriers: {info['barriers']}")
    if info["loops"]:
        lines.append("  loops:")
        for loop in info["loops"]:
            trip = loop["trip_count"] if loop["trip_count"] is not None else "unknown"
            why = f"  ({loop['trip_reason']})" if loop["trip_reason"] else ""
            lines.append(f"    {'  ' * (loop['depth'] - 1)}{loop['header']}  depth {loop['depth']}  "
                         f"trip count {trip} [{loop['trip_source']}]{why}")
    else:
        lines.append("  loops: none")
    if "launch" in info:
        la = info["launch"]
        lines.append(f"  launch: grid {tuple(la['grid'])} block {tuple(la['block'])} "
                     f"dynamic smem {la['smem_dynamic']} B ({la['blocks']} blocks)")
    if "occupancy" in info:
        oc = info["occupancy"]
        limits = ", ".join(f"{k} {v}" for k, v in oc["limits"].items())
        lines.append(f"  occupancy on {oc['profile']}: {oc['blocks_per_sm']} blocks/SM "
                     f"({oc['active_warps']} warps, {oc['occupancy_fraction']:.0%}), "
                     f"limited by {oc['limiter']}  [{limits}]")
    return "\n".join(lines)


@command("info")
def cmd_info(ns: argparse.Namespace) -> int:
    first = inputs_from_args(ns)
    kernels = [first.function] if ns.kernel else first.module.kernels
    infos = []
    for function in kernels:
        inputs = (first if function is first.function
                  else inputs_from_args(ns, kernel=function.name, module=first.module))
        infos.append(kernel_info(inputs))
    payload = {"file": str(first.path), "version": first.module.version,
               "target": list(first.module.target), "kernels": infos}
    text = f"{first.path}: PTX {first.module.version}, target {', '.join(first.module.target)}, " \
           f"{len(infos)} kernel(s)\n" + "\n".join(format_kernel_info(i) for i in infos)
    emit(ns, payload, text)
    return 0


# ---------------------------------------------------------------- entry


def build_parser() -> argparse.ArgumentParser:
    # Sub-command modules register themselves on import; they import this module, hence here.
    import engine.cli_models  # noqa: F401
    import engine.cli_sim  # noqa: F401

    parser = argparse.ArgumentParser(prog="main.py", description="Warpline: GPU kernel performance models")
    sub = parser.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="kernels, instruction classes, loops, resources, occupancy")
    add_input_options(info)
    for extend in _EXTENSIONS:
        extend(sub)
    return parser


# Modules that add sub-commands register a function here (keeps this file about plumbing).
_EXTENSIONS: list[Callable[[Any], None]] = []


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    ns = parser.parse_args(argv)
    try:
        return COMMANDS[ns.command](ns)
    except WarplineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
