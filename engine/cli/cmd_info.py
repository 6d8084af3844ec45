"""``info``: kernels, instruction classes, loops with trip counts, resources, occupancy.

Each kernel's facts need it parsed and analysed (and ptxas run): a fraction of a second for a
kernel, minutes for a library of hundreds. A file of more than :data:`ANALYSED_KERNELS` kernels is
therefore listed from its kernel index (names, lines, parameters; no body parsed, seconds for
25 MB), and ``--kernel NAME`` gives one kernel's facts, ``--all`` every kernel's.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from typing import Any

from engine.cli.command_registry import Command
from engine.cli.options import ALL_KERNELS, add_input_options, emit, inputs_from_args
from engine.errors import WarplineError
from engine.evaluation.caveats import profile_statement
from engine.inputs import KernelInputs
from engine.names import display_name
from engine.ptx import index_kernels
from engine.ptx.index import KernelEntry, read_ptx_bytes

# Above this many kernels, info lists them from the index instead of analysing each.
ANALYSED_KERNELS = 16
_MODULE_DIRECTIVE = re.compile(rb"^[ \t]*\.(version|target)[ \t]+([^\n/;]*)", re.M)


def kernel_info(inputs: KernelInputs) -> dict[str, Any]:
    """The facts ``info`` prints about one kernel, as plain data: read with the launch the models
    run with (its missing arguments supplied, engine.conventions), and every assumption."""
    from engine.evaluation import Evaluator
    from engine.evaluation.caveats import figure_caveats
    from engine.evaluation.prediction_report import assumptions_payload, supplied_payload
    from engine.occupancy import occupancy

    prepared = Evaluator().prepare(inputs)
    analysis = prepared.analysis
    if analysis is None:
        raise WarplineError(prepared.errors.get("analysis", "the kernel could not be analysed"))
    by_unit = Counter(c.unit.value for c in analysis.classifications)
    launch = inputs.launch
    info: dict[str, Any] = {
        "name": inputs.function.name,
        "display_name": display_name(inputs.function.name),
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
        "launch": {
            "grid": list(launch.grid), "block": list(launch.block),
            "smem_dynamic": launch.smem_dynamic, "blocks": launch.n_blocks,
            "threads_per_block": launch.threads_per_block, "source": inputs.launch_source,
        },
        "frontend": prepared.completion.frontend if prepared.completion is not None else None,
        "caveats": figure_caveats(prepared).as_dict(),
        "assumptions": assumptions_payload(prepared),
        "supplied_arguments": supplied_payload(prepared),
        "_prepared": prepared,
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
    from engine.evaluation.prediction_report import assumptions_lines

    name = info["display_name"] if info["display_name"] == info["name"] else \
        f"{info['display_name']}  [{info['name']}]"
    lines = [f"kernel {name}"]
    if info["caveats"]["summary"]:
        lines.append("  " + info["caveats"]["summary"])
    if info.get("frontend"):
        lines.append(f"  written by: {info['frontend']}")
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
    la = info["launch"]
    lines.append(f"  launch: grid {tuple(la['grid'])} block {tuple(la['block'])} "
                 f"dynamic smem {la['smem_dynamic']} B ({la['blocks']} blocks) — {la['source']}")
    if "occupancy" in info:
        oc = info["occupancy"]
        limits = ", ".join(f"{k} {v}" for k, v in oc["limits"].items())
        lines.append(f"  occupancy on {oc['profile']}: {oc['blocks_per_sm']} blocks/SM "
                     f"({oc['active_warps']} warps, {oc['occupancy_fraction']:.0%}), "
                     f"limited by {oc['limiter']}  [{limits}]")
    if info["supplied_arguments"]:
        lines.append("  arguments the launch does not give (supplied before any model runs):")
        for v in info["supplied_arguments"]:
            lines.append(f"    {v['index']:>3} {v['parameter']} = {v['value']:,}  [{v['how']}] {v['rule']}")
    lines.extend(assumptions_lines(info["_prepared"], effects=False))
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_options(parser)
    parser.add_argument("--all", action="store_true",
                        help=f"analyse every kernel also of a file of more than {ANALYSED_KERNELS} kernels "
                             "(otherwise listed from the index)")


def kernel_listing(path: str) -> tuple[dict[str, Any], str] | None:
    """``info``'s payload and text for a file of many kernels, from its index; None when the
    file has few enough to analyse them all."""
    data = read_ptx_bytes(path)
    try:
        data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None      # the parse that follows names where the text stops being UTF-8
    entries = index_kernels(data, path)
    if len(entries) <= ANALYSED_KERNELS:
        return None
    # .version and .target are module directives before the first definition.
    head = data[: entries[0].start]
    found = {m.group(1).decode(): m.group(2).decode("utf-8", "replace").strip()
             for m in _MODULE_DIRECTIVE.finditer(head)}
    target = [t.strip() for t in found.get("target", "").split(",") if t.strip()]
    payload = {"file": path, "version": found.get("version", ""), "target": target, "analysed": False,
               "kernels": [_entry_info(e) for e in entries]}
    lines = [f"{path}: PTX {payload['version']}, target {', '.join(target)}, {len(entries)} kernels "
             f"(listed from the index: --kernel NAME for one kernel's analysis, --all for every one's)"]
    for e in entries:
        shown = display_name(e.name)
        name = shown if shown == e.name else f"{shown}  [{e.name}]"
        lines.append(f"kernel {name}  lines {e.line}-{e.end_line}, {e.param_count} parameters")
    return payload, "\n".join(lines)


def _entry_info(entry: KernelEntry) -> dict[str, Any]:
    return {"name": entry.name, "display_name": display_name(entry.name), "line": entry.line,
            "end_line": entry.end_line, "parameters": entry.param_count}


def run(ns: argparse.Namespace, renderer: Any = None) -> int:
    if not ns.kernel and not ns.all and not ns.config:
        listing = kernel_listing(ns.file)
        if listing is not None:
            emit(ns, *listing)
            return 0
    every = not ns.kernel or ns.kernel == ALL_KERNELS       # without --kernel: every kernel
    if ns.kernel == ALL_KERNELS:
        ns.kernel = None
    first = inputs_from_args(ns, whole_file=every)
    kernels = first.module.kernels if every else [first.function]
    infos = []
    for function in kernels:
        inputs = (first if function is first.function
                  else inputs_from_args(ns, kernel=function.name, module=first.module))
        infos.append(kernel_info(inputs))
    text = f"{first.path}: PTX {first.module.version}, target {', '.join(first.module.target)}, " \
           f"{len(infos)} kernel(s)\n" + "\n".join(format_kernel_info(i) for i in infos)
    for info in infos:
        info.pop("_prepared")
    payload = {"file": str(first.path), "version": first.module.version,
               "target": list(first.module.target), "profile": first.profile.name if first.profile else None,
               "profile_source": first.profile_source,
               "profile_provenance": profile_statement(first.profile) or None, "kernels": infos}
    emit(ns, payload, text)
    return 0


COMMAND = Command("info", "kernels, instruction classes, loops, resources, occupancy", add_arguments, run)
