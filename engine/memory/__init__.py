"""Automatic memory-access analysis: coalescing of global accesses, shared-memory bank conflicts.

``analyze_memory(analysis, launch, module)`` (:mod:`engine.memory.access_analysis`) derives every
global/shared access's address as an affine form (:mod:`engine.memory.affine`), enumerates the lanes
of one block's warps for it (:mod:`engine.memory.patterns`) and reports sectors and lines per
request, efficiency and the bank-conflict degree (:mod:`engine.memory.access_report`).
``n_ma_by_instruction`` and ``memory_cost_overrides`` (:mod:`engine.memory.costs`) turn that into
the inputs of Many-BSP (``n_ma``) and of the Pipeline simulator (λ, Λ via 001 §6.3).
Assumptions are listed in ``MemoryReport.assumptions`` and in ``docs/memory_access.md``.

This package re-exports the names below from the modules that define them.
"""

from engine.memory.access_analysis import analyze_memory
from engine.memory.access_report import AccessInfo, MemoryReport, memory_table
from engine.memory.costs import (
    executions_per_warp,
    kernel_memory_summary,
    memory_cost_overrides,
    n_ma_by_instruction,
    retry_passes,
)
from engine.memory.naming import format_affine, shared_layout

__all__ = [
    "AccessInfo", "MemoryReport", "analyze_memory", "executions_per_warp",
    "format_affine", "kernel_memory_summary", "memory_cost_overrides", "memory_table", "retry_passes",
    "n_ma_by_instruction", "shared_layout",
]
