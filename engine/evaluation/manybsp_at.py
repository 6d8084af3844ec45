"""Many-BSP at a chosen occupancy.

Source 000's ρ (eq. 21) is min{⌊max_thread_per_sm / n_t⌋, the register and shared-memory terms}.
Capping ``max_thread_per_sm`` at k·n_t makes ρ = min(k, eq. 21) without touching the other terms,
so the same supersteps give the model's cycles at k resident blocks: the state's own figure (k =
the resident blocks the simulation runs at) and every point of the occupancy sweep come from one
rule, and the derivation shows the capped figure, so the user sees how the occupancy entered.
"""

from __future__ import annotations

from dataclasses import replace

from engine.launch import Launch
from engine.manybsp import Level1Input, ManyBspResult, Overrides, evaluate
from engine.state import copy_overrides


def occupancy_overrides(overrides: Overrides, resident_blocks: int, launch: Launch) -> Overrides:
    """The user's overrides plus ρ capped at ``resident_blocks`` (a user's own
    ``max_thread_per_sm`` override wins)."""
    ov = copy_overrides(overrides)
    ov.params.setdefault("max_thread_per_sm", resident_blocks * launch.threads_per_block)
    return ov


def manybsp_cycles_at(result: ManyBspResult, resident_blocks: int) -> float:
    """Eqs. 10-25 on ``result``'s supersteps with ρ capped at ``resident_blocks``."""
    params = result.params
    if params.max_thread_per_sm == resident_blocks * params.n_t:
        return float(result.kernel_exec_cycle)    # the result was built at this occupancy
    steps = [Level1Input(s.comp, s.comm, s.ovh, s.iterations) for s in result.level1]
    last_comm = result.level2[-1].comm if result.level2 else 0.0
    capped = replace(params, max_thread_per_sm=max(1, resident_blocks) * params.n_t)
    return float(evaluate(capped, steps, last_comm).kernel_exec_cycle)
