"""``info``: kernels, instruction classes, loops with trip counts, resources, occupancy."""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from engine.cli.options import add_input_options, emit, inputs_from_args
from engine.cli.registry import Command
from engine.inputs import KernelInputs
from engine.names import display_name


def kernel_info(inputs: KernelInputs) -> dict[str, Any]:
    """The facts ``info`` prints about one kernel, as plain data."""
    from engine.analysis import analyze_kernel
    from engine.occupancy import occupancy

    analysis = analyze_kernel(inputs.function, inputs.launch, inputs.module)
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
    name = info["display_name"] if info["display_name"] == info["name"] else \
        f"{info['display_name']}  [{info['name']}]"
    lines = [f"kernel {name}"]
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
    return "\n".join(lines)


def run(ns: argparse.Namespace, renderer: Any = None) -> int:
    first = inputs_from_args(ns, whole_file=not ns.kernel)   # without --kernel: every kernel
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


COMMAND = Command("info", "kernels, instruction classes, loops, resources, occupancy", add_input_options, run)
