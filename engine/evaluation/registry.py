"""The model registry: one entry per model, and everything that lists models reads it.

An entry names the model (``id`` in JSON/CSV and on the command line, ``title`` for people), its
family, a paragraph that explains it (tooltips, ``--help``, docs), how it is drawn in the
occupancy curves, and its predict function: ``predict(ctx: ModelContext) -> float``, the cycles
one SM needs for its share of the grid (launch overheads it models included; the fixed kernel
launch cost is added by the evaluation core, see :mod:`engine.evaluation.figures`). A predict
function raises :class:`engine.errors.WarplineError` when the model cannot run on the inputs.

Adding an analytical model is one module with its predict function plus one :func:`register`
line below (or a call from a plug-in module); the results panel, the curves, ``predict``,
``sweep``, ``validate`` and the exports pick it up from here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.errors import ModelError, WarplineError
from engine.evaluation.context import ModelContext

# The largest count an int64 per-instruction count holds (KernelDescription.dynamic_counts): a warp
# issuing more instructions than this is refused as "bounded" before anything counts them.
MAX_COUNT = 2**63 - 1


def uncountable_instructions(d: Any) -> int | None:
    """One warp's instructions in description ``d`` when they are more than 64-bit counts hold
    (nested trip counts of 10^10 x 10^10), else None."""
    from engine.pipeline.simulator import path_instructions

    per_warp = max(path_instructions(d), default=0)
    return per_warp if per_warp > MAX_COUNT else None


FAMILY_MANYBSP = "Many-BSP"
FAMILY_SIMULATION = "simulation"
FAMILY_ANALYTICAL = "analytical"

STAGE_TIMELINE = "timeline"     # computed with the simulation, before anything else
STAGE_MODELS = "models"         # computed after the timeline is shown


@dataclass(frozen=True)
class CurveStyle:
    color: str
    width: float = 1.5
    dashed: bool = False
    markers: bool = False


@dataclass(frozen=True)
class ModelSpec:
    id: str
    title: str
    family: str
    explanation: str
    predict: Callable[[ModelContext], float]
    curve: CurveStyle
    primary: bool = False            # shown in bold and in the window's headline
    stage: str = STAGE_MODELS


_REGISTRY: dict[str, ModelSpec] = {}


def register(spec: ModelSpec) -> ModelSpec:
    """Add a model (its id must be new); returns it."""
    if spec.id in _REGISTRY:
        raise ValueError(f"model id {spec.id!r} is registered already")
    if not spec.id.replace("_", "").isalnum():
        raise ValueError(f"model id {spec.id!r}: letters, digits and '_' only")
    _REGISTRY[spec.id] = spec
    return spec


def unregister(model_id: str) -> None:
    """Remove a model (tests that register a throw-away one)."""
    _REGISTRY.pop(model_id, None)


def models() -> list[ModelSpec]:
    """Every model in registration order: the primary ones first."""
    return list(_REGISTRY.values())


def model(model_id: str) -> ModelSpec:
    try:
        return _REGISTRY[model_id]
    except KeyError:
        raise WarplineError(f"unknown model {model_id!r} (models: {', '.join(_REGISTRY)})") from None


def model_ids() -> list[str]:
    return list(_REGISTRY)


def title(model_id: str) -> str:
    spec = _REGISTRY.get(model_id)
    return spec.title if spec is not None else model_id


# ---- the built-in models -------------------------------------------------------------------------

def _manybsp(ctx: ModelContext) -> float:
    from engine.evaluation.manybsp_at import manybsp_cycles_at

    if ctx.manybsp is None:
        raise ModelError("Many-BSP could not be built for these inputs")
    return manybsp_cycles_at(ctx.manybsp, ctx.resident_blocks)


def _manybsp_star(ctx: ModelContext) -> float:
    from engine.evaluation.manybsp_at import manybsp_star_at

    if ctx.manybsp is None:
        raise ModelError("Many-BSP* needs the Many-BSP BLOCK table, which could not be built for these inputs")
    prediction = ctx.shared("manybsp_star", lambda: manybsp_star_at(
        ctx.manybsp, ctx.description, ctx.resident_blocks, ctx.issue_weights, ctx.unroll, ctx.sass_positions))
    return float(prediction.kernel_exec_cycle)


def _simulation(ctx: ModelContext) -> float:
    from engine.pipeline.dram_under_load import simulate_with_traffic

    if ctx.simulation is not None:
        return float(ctx.simulation.cycles)
    sim, _ = simulate_with_traffic(ctx.require_description(), ctx.traffic, ctx.profile, policy=ctx.policy)
    return float(sim.cycles)


def _peer(name: str) -> Callable[[ModelContext], float]:
    def predict(ctx: ModelContext) -> float:
        from engine.pipeline import peers

        d = ctx.require_description()
        per_warp = ctx.shared("uncountable", lambda: uncountable_instructions(d))
        if per_warp is not None:
            # the peers weigh each instruction by an int64 count: nested trip counts whose
            # product leaves 64 bits (10^10 x 10^10) have none
            raise ModelError(f"bounded: one warp would issue {per_warp:,} instructions, more than 64-bit "
                             "counts hold; lower the trip counts")
        figures = ctx.shared("kernel_figures", lambda: peers.kernel_figures(d))
        if name.startswith("gpumech"):
            profile = ctx.shared("interval_profile", lambda: peers.interval_profile(d))
            policy = "gto" if name == "gpumech_gto" else "rr"
            cycles = float(peers.gpumech(d, figures, policy, corrected=name == "gpumech_rr_star",
                                         profile=profile).cycles)
        else:
            func = {"roofline": peers.roofline, "volkov": peers.volkov, "mwp_cwp": peers.mwp_cwp,
                    "mwp_cwp_star": peers.mwp_cwp_star, "wfg": peers.wfg, "wfg_star": peers.wfg_star}[name]
            cycles = float(func(d, figures).cycles)
        if not math.isfinite(cycles) or cycles <= 0:
            # a throughput of zero or less: the model's equations left their domain for this kernel
            raise ModelError(f"no figure: the model's warp throughput is not positive ({cycles} cycles)")
        return cycles

    predict.__name__ = f"predict_{name}"
    return predict


register(ModelSpec(
    "manybsp", "Many-BSP", FAMILY_MANYBSP,
    "Source 000's Many-BSP model: the kernel's instructions become a BLOCK table (one row per "
    "instruction, one column per functional unit), grouped into supersteps between barriers and "
    "global accesses; equations 10-25 combine their computation, communication and overhead "
    "cycles with the occupancy (ρ blocks per SM, τ per scheduler) into the kernel's cycles.",
    _manybsp, CurveStyle("#d62728", 3.0, markers=True), primary=True))
register(ModelSpec(
    "manybsp_star", "Many-BSP*", FAMILY_MANYBSP,
    "Many-BSP corrected for modern GPUs (docs/manybsp.md): the same BLOCK table and supersteps, but "
    "a warp pays each superstep's head latency and each global access's latency at the cache level "
    "it hits, the warps and the resident blocks overlap instead of moving in lock step, memory "
    "traffic is bounded by the SM's share of bandwidth, and every block pays the launch interval; "
    "the SM's time is the largest of its issue, memory, latency and launch bounds.",
    _manybsp_star, CurveStyle("#ff7f0e", 2.5, markers=True), primary=True))
register(ModelSpec(
    "pipeline", "Pipeline simulation", FAMILY_SIMULATION,
    "Source 001's Pipeline model, simulated: every resident warp issues its instructions in order "
    "onto per-subsystem pipelines (each with an issue interval λ and a latency Λ), waiting for its "
    "operands, its barriers and the scheduler (LRR or GTO); the cycles of one SM running its share "
    "of the grid. The timeline is this simulation's trace.",
    _simulation, CurveStyle("#1f77b4", 3.0, markers=True), primary=True, stage=STAGE_TIMELINE))
register(ModelSpec(
    "roofline", "Roofline", FAMILY_ANALYTICAL,
    "The busiest subsystem bounds the throughput: warps per cycle = 1 / max over subsystems of the "
    "issue cycles one warp needs there. Ignores latency, so it is a lower bound on time.",
    _peer("roofline"), CurveStyle("#2ca02c")))
register(ModelSpec(
    "volkov", "Volkov", FAMILY_ANALYTICAL,
    "Volkov's bound: the smallest of the Roofline throughput, the issue limit and Little's law "
    "(resident warps divided by one warp's latency-bound time Λ_app).",
    _peer("volkov"), CurveStyle("#9467bd")))
register(ModelSpec(
    "mwp_cwp", "MWP-CWP", FAMILY_ANALYTICAL,
    "Hong and Kim's model: memory warp parallelism (MWP, how many warps' memory requests overlap) "
    "against computation warp parallelism (CWP); one of three cases (memory-, compute- or "
    "occupancy-bound) gives the cycles per round of warps.",
    _peer("mwp_cwp"), CurveStyle("#8c564b")))
register(ModelSpec(
    "mwp_cwp_star", "MWP-CWP*", FAMILY_ANALYTICAL,
    "Source 001's correction of MWP-CWP: the occupancy case uses the simulated Λ_app (with "
    "computational latencies), and the largest of the three cases is taken.",
    _peer("mwp_cwp_star"), CurveStyle("#8c564b", dashed=True)))
register(ModelSpec(
    "wfg", "WFG", FAMILY_ANALYTICAL,
    "Baghsorkhi et al.'s work-flow graph, flattened to cycles per warp: computation blocks charged "
    "by their instruction-level parallelism, memory waits by the bank-conflict-free latency.",
    _peer("wfg"), CurveStyle("#e377c2")))
register(ModelSpec(
    "wfg_star", "WFG*", FAMILY_ANALYTICAL,
    "Source 001's correction of WFG: the cycles per round are not dropped when memory latency is "
    "hidden by the preceding computation.",
    _peer("wfg_star"), CurveStyle("#e377c2", dashed=True)))
register(ModelSpec(
    "gpumech_rr", "GPUMech (RR)", FAMILY_ANALYTICAL,
    "Huang et al.'s interval model with a round-robin scheduler: one representative warp's "
    "intervals (issue, then a stall), with the other warps' instructions overlapping the stalls.",
    _peer("gpumech_rr"), CurveStyle("#7f7f7f")))
register(ModelSpec(
    "gpumech_rr_star", "GPUMech* (RR)", FAMILY_ANALYTICAL,
    "Source 001's correction of GPUMech RR: at most W−1 instructions of other warps overlap a stall.",
    _peer("gpumech_rr_star"), CurveStyle("#7f7f7f", dashed=True)))
register(ModelSpec(
    "gpumech_gto", "GPUMech (GTO)", FAMILY_ANALYTICAL,
    "GPUMech with a greedy-then-oldest scheduler: other warps fill a stall with a probability that "
    "grows with its length.",
    _peer("gpumech_gto"), CurveStyle("#bcbd22")))
