"""Many-BSP at a chosen occupancy.

Source 000's ρ (eq. 21) is min{⌊max_thread_per_sm / n_t⌋, the register and shared-memory terms}.
Capping ``max_thread_per_sm`` at k·n_t makes ρ = min(k, eq. 21) without touching the other terms,
so the same supersteps give the model's cycles at k resident blocks: the state's own figure (k =
the resident blocks the simulation runs at) and every point of the occupancy sweep come from one
rule, and the derivation shows the capped figure, so the user sees how the occupancy entered.
"""

from __future__ import annotations

from dataclasses import replace

from engine.errors import ModelError
from engine.launch import Launch
from engine.manybsp import Level1Input, ManyBspResult, Overrides, Prediction, evaluate
from engine.manybsp.corrected import AccessCost, CorrectedInputs, evaluate_corrected
from engine.manybsp.prediction import refusal
from engine.pipeline._core import ASYNC_COPY
from engine.pipeline.description import KernelDescription
from engine.state import copy_overrides


def occupancy_overrides(overrides: Overrides, resident_blocks: int, launch: Launch) -> Overrides:
    """The user's overrides plus ρ capped at ``resident_blocks`` (a user's own
    ``max_thread_per_sm`` override wins)."""
    ov = copy_overrides(overrides)
    ov.params.setdefault("max_thread_per_sm", resident_blocks * launch.threads_per_block)
    return ov


def manybsp_cycles_at(result: ManyBspResult, resident_blocks: int) -> float:
    """Eqs. 10-25 on ``result``'s supersteps with ρ capped at ``resident_blocks``; a result whose
    prediction was refused (a parameter the profile cannot give) raises its reason."""
    if result.refused:
        raise ModelError(result.refused)
    params = result.params
    if params.max_thread_per_sm == resident_blocks * params.n_t:
        return float(result.kernel_exec_cycle)    # the result was built at this occupancy
    steps = [Level1Input(s.comp, s.comm, s.ovh, s.iterations) for s in result.level1]
    last_comm = result.level2[-1].comm if result.level2 else 0.0
    capped = replace(params, max_thread_per_sm=max(1, resident_blocks) * params.n_t)
    return float(evaluate(capped, steps, last_comm).kernel_exec_cycle)


def access_costs(result: ManyBspResult, description: KernelDescription | None) -> dict[int, AccessCost]:
    """Many-BSP*'s cost of each memory row: λ, Λ and the pipeline of the same instruction in the
    Pipeline description (the memory-hierarchy model's figures for global accesses, bank
    conflicts, constant-cache serialisation and same-address atomics: one answer for both models),
    except where the user edited the row's latency or its BLOCK comm cell, which then set Λ."""
    out: dict[int, AccessCost] = {}
    if description is None:
        return out
    w = result.params.w
    comm = {b.index: b.comm for b in result.block}
    for row in result.rows:
        if row.index - 1 >= len(description.instructions):
            continue
        ins = description.instructions[row.index - 1]
        if not (ins.memory or row.is_global_access) or row.is_barrier:
            continue
        if not ins.memory:
            # a local access ptxas kept in registers: its SASS moves are the row's issue weight;
            # its result comes after an ALU latency, and no memory pipeline is busy
            out[row.index] = AccessCost(0.0, float(ins.Lam), True, description.subsystems[ins.unit], False)
            continue
        # Stores and reductions release the warp once the LSU takes them: nothing to wait for.
        waits = not row.opcode.startswith(("st.", "red."))
        # one memory pipe, busy for the slowest level's time (Many-BSP's view of the LSU)
        lam, Lam = ins.memory_pipe_lam, float(ins.Lam)
        if ins.async_op == ASYNC_COPY:
            # an asynchronous copy, in the one-pipe view: done when the pipe has taken it (the
            # simulator's copy groups and waits have no counterpart in Many-BSP's supersteps)
            Lam = lam
        if row.is_global_access and f"latency:{row.index}:lat_comm" in result.overridden:
            Lam = row.lat_comm
        elif row.is_global_access and f"cell:{row.index}:comm" in result.overridden:
            Lam = comm.get(row.index, 0.0) / max(1, w * max(1, row.n_ma))
        elif not row.is_global_access and f"latency:{row.index}:lat_comp" in result.overridden:
            Lam = row.lat_comp
        out[row.index] = AccessCost(lam, Lam, waits, description.subsystems[ins.unit], row.is_global_access)
    return out


def manybsp_star_at(result: ManyBspResult, description: KernelDescription | None, resident_blocks: int,
                    weights: dict[int, float] | None = None,
                    unroll: dict[str, int] | None = None,
                    sass_positions: dict[int, tuple[int, ...]] | None = None) -> Prediction:
    """Many-BSP* on ``result``'s BLOCK table and supersteps at ``resident_blocks`` blocks per SM.
    ``weights``: the factor the SASS puts on each PTX instruction's issue cost (0-based index;
    ``engine.pipeline.adapter.issue_scales``), as the Pipeline simulator issues them.
    ``sass_positions``: where ptxas put each instruction's SASS copies (0-based index), the order
    one warp issues an unrolled superstep in; read with the description's dependences.
    It reads the same profile parameters (launch overheads, barrier costs) as eqs. 10-25, so a
    parameter the profile cannot give refuses it too, instead of counting as 0."""
    if result.missing:
        raise ModelError(refusal(result.missing, "Many-BSP*"))
    barriers: dict[int, float] = {}
    if description is not None:
        # The SM's barrier unit takes λ cycles per warp arriving (the profile's bar.sync rule).
        barriers = {r.index: float(description.instructions[r.index - 1].lam)
                    for r in result.rows if r.is_barrier and r.index - 1 < len(description.instructions)}
    loops = {}
    for key, factor in (unroll or {}).items():
        first, _, last = key.partition("-")
        loops[(int(first) + 1, int(last) + 1)] = int(factor)
    order: dict[int, tuple[int, ...]] = {}
    deps: tuple[tuple[int, ...], ...] = ()
    if sass_positions and description is not None:
        # by row (1-based): row r's SASS copies and the rows it reads
        order = {i + 1: where for i, where in sass_positions.items()}
        # (list comprehensions: a generator per instruction costs a second on 10^5 instructions)
        deps = ((),) + tuple([tuple([p + 1 for p in ins.deps]) for ins in description.instructions])
    inputs = CorrectedInputs(resident_blocks, access_costs(result, description), barriers,
                             {i + 1: w for i, w in (weights or {}).items()}, loops, order, deps,
                             result.executed_share)
    return evaluate_corrected(result.params, result.level1, result.block, result.rows, inputs)
