"""The memory report with what the run of the sampled warps measured.

The static analysis (affine forms, lane enumeration) describes each access from the code; the
run (:mod:`engine.execution`) executed it. Where the run computed an access's addresses, its
requests replace the static patterns: sectors and lines per request, active lanes, the share of
warp executions that issue a request, bank wavefronts and distinct constant addresses. The
static fields stay for what only they describe (the affine form shown in the Memory tab) and
for accesses the run could not follow.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from engine.analysis import KernelAnalysis, LaunchValues
from engine.analysis.tripcount import TripCount
from engine.execution import Execution, current_cancel, execute_launch
from engine.execution.trips import executed_trips
from engine.mechanisms import enabled
from engine.memory.access_report import AccessInfo, MemoryReport
from engine.ptx.parsed_module import Module
from engine.units import AccessKind, MemorySpace


def _executed(info: AccessInfo, execution: Execution) -> AccessInfo:
    stats = execution.access.get(info.index)
    if stats is not None and stats.requests <= 0 < stats.warp_executions and not stats.unknown_lanes:
        # every sampled warp reached it with no lane accessing memory (all predicated off, or a
        # cp.async whose src-size is 0): it moves nothing
        return replace(info, warps_sampled=0, active_lanes=0.0, issue_share=0.0, executed=True,
                       unknown_reason=None, method=info.method or "executed")
    if stats is None or stats.requests <= 0:
        return info
    if stats.unknown_lanes and stats.unknown_lanes >= stats.active_lanes:
        return info                      # mostly unknown addresses: the static view stays
    n = float(stats.requests)
    issue_share = stats.requests / stats.warp_executions if stats.warp_executions else 1.0
    common = dict(warps_sampled=stats.requests, active_lanes=stats.active_lanes / n,
                  issue_share=min(1.0, issue_share), executed=True,
                  unknown_reason=None, method=info.method or "executed")
    if info.space is MemorySpace.SHARED:
        return replace(info, bank_conflict_degree=stats.wavefronts_max, bank_conflict_mean=stats.wavefronts / n,
                       cas_passes=stats.cas_passes() if info.kind == AccessKind.ATOMIC else None, **common)
    if info.space is MemorySpace.CONST:
        return replace(info, distinct_addresses=stats.distinct / n, **common)
    sectors = stats.sectors / n
    useful = stats.active_lanes / n * max(1, stats.width)
    return replace(info, sectors_per_request=sectors, sectors_max=stats.sectors_max,
                   lines_per_request=stats.lines / n, lines_max=stats.lines_max,
                   efficiency=min(1.0, useful / (sectors * 32.0)) if sectors else None,
                   l1_bank_degree=stats.wavefronts / n,
                   dram_ratio=info.dram_ratio if info.dram_ratio is not None else 1.0,
                   block_miss=info.block_miss if info.block_miss is not None else 1.0,
                   l1_cached=info.l1_cached or (info.kind == AccessKind.LOAD and not any(
                       part in ("cg", "cv", "volatile") for part in info.text.split(None, 1)[0].split("."))),
                   **common)


def executed_memory(analysis: KernelAnalysis, launch: Any, module: Module | None = None) -> MemoryReport:
    """The static memory report (:func:`engine.memory.access_analysis.analyze_memory`) with the run of the
    sampled warps in it, when mechanism ``execution`` is on and the launch has a grid."""
    from engine.memory.access_analysis import analyze_memory

    report = analyze_memory(analysis, launch, module)
    values = LaunchValues.from_launch(launch)
    if not enabled("execution") or values.block is None or values.grid is None:
        return report
    return with_execution(report, execute_launch(analysis, launch, module, cancel=current_cancel()))


def with_execution(report: MemoryReport, execution: Execution) -> MemoryReport:
    """``report`` with the executed requests in place of the static patterns, and the run attached."""
    if not execution.ok:
        report.assumptions.append(f"the sampled warps were not executed ({execution.stopped}): access "
                                  "patterns, paths and hit levels come from the static analysis")
        return replace(report, execution=execution)
    accesses = [_executed(a, execution) for a in report.accesses]
    hashed = frozenset(a.index for a in accesses
                       if a.irregular and not a.data_dependent and a.space is MemorySpace.GLOBAL)
    if hashed:
        from engine.caches import randomly_placed

        scattered = randomly_placed(execution, hashed)
        accesses = [replace(a, random_lines=True) if a.index in scattered else a for a in accesses]
    assumptions = [a for a in report.assumptions if not a.startswith(("sampled:", "an address computed from",
                                                                       "active lanes follow"))]
    assumptions.insert(0, f"access patterns, paths and cache hits come from running the kernel: "
                          f"{execution.summary()}")
    assumptions.append("data the launch does not describe: floating-point values uniform in [0, 1), "
                       "integers unknown (an address or branch that needs one falls back to the static analysis)")
    return replace(report, accesses=accesses, assumptions=assumptions, execution=execution)


def with_executed_trips(analysis: KernelAnalysis, execution: Execution) -> KernelAnalysis:
    """``analysis`` with every loop the sampled warps entered counted as they ran it (source
    ``executed``); loops they never entered keep the static count. Kept on the execution, so that
    every stage of one launch reads the same object."""
    if not execution.ok:
        return analysis
    memo = execution.memo.get("analysis")
    if memo is not None and memo[0] is analysis:
        return memo[1]
    counts = dict(analysis.trip_counts)
    for key, run in executed_trips(execution.paths, analysis.cfg).items():
        static = counts.get(key)
        reason = (f"executed: {run.mean:.2f} passes per entry over {run.entries:,} entries of {run.warps:,} "
                  f"sampled warps")
        if static is not None and static.known and static.value != round(run.mean):
            reason += f" (the static analysis inferred {static.value})"
        counts[key] = TripCount(int(round(run.mean)), "executed", reason,
                                static.expression if static is not None else "",
                                int(round(run.slowest)) if round(run.slowest) != round(run.mean) else None)
    updated = replace(analysis, trip_counts=counts)
    execution.memo["analysis"] = (analysis, updated)
    return updated
