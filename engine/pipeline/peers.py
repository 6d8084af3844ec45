"""Analytical peers of the Pipeline model (001 section 2) and their corrections (section 5.1).

Every model reads the same :class:`KernelDescription` as the simulator: per-warp dynamic counts
of each static instruction, its subsystem, λ and Λ, the dependences and the occupancy
ω = resident blocks × warps per block. Each returns warps per cycle (WPC) for one SM and the cycles
of the SM's whole share (Ω warps) as Ω / WPC.

"Computational" means every instruction without the memory flag (barriers included, charged
their CPI); "memory" the flagged ones. Where a model speaks of a single λ_comp, Λ_comp, λ_mem,
Λ_mem we use the count-weighted means of the kernel's instructions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from engine.errors import ModelError
from engine.frozen_rows import built
from engine.pipeline.description import KernelDescription, Loop, PathNode, Run, StaticInstruction
from engine.pipeline.simulator import simulate, warp_instructions


@dataclass
class ModelPrediction:
    """One model's answer: warps per cycle and cycles for the SM's share of the grid."""

    model: str
    warps_per_cycle: float
    cycles: float
    details: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class KernelFigures:
    """The aggregate inputs the equation-based models use (per warp, path 0 / block average)."""

    alpha_comp: float
    alpha_mem: float
    lam_comp: float
    Lam_comp: float
    lam_mem: float
    Lam_mem: float
    busy_per_unit: dict[int, float]   # Σ count·λ per subsystem for one warp
    instructions: float               # warp instructions per warp
    Lambda_app: float                 # one warp alone, simulated (eq. 2's exact value)
    warps_total: int

    @property
    def CI(self) -> float:
        return self.alpha_comp / self.alpha_mem if self.alpha_mem else float("inf")


def _mean_counts(d: KernelDescription) -> np.ndarray:
    """Per static instruction, executions per warp averaged over the warps of a block."""
    return d.mean_counts()


def single_warp(d: KernelDescription, path: int = 0) -> KernelDescription:
    """The kernel reduced to one warp running alone (for Λ_app and GPUMech's interval profile)."""
    return d.with_changes(paths=(d.paths[path],), warp_path=None, block_kinds=None, counted_paths=None,
                          counted_kinds=None, warps_per_block=1, blocks=1,
                          resident_blocks=1, block_launch_overhead=Fraction(0),
                          warp_launch_overhead=Fraction(0), block_launch_interval=Fraction(0))


def kernel_figures(d: KernelDescription) -> KernelFigures:
    d.validate()
    counts = _mean_counts(d)
    # numerator / denominator is float(Fraction) without its generic method's dispatch
    # memory instructions as one pipe (the peers' model): busy for the slowest level's time
    lam = np.array([i.memory_pipe_lam if i.memory else i.lam.numerator / i.lam.denominator for i in d.instructions])
    Lam = np.array([i.Lam.numerator / i.Lam.denominator for i in d.instructions])
    mem = np.array([i.memory for i in d.instructions])
    a_mem = float(counts[mem].sum())
    a_comp = float(counts[~mem].sum())
    if a_mem + a_comp == 0:
        raise ModelError(f"kernel {d.name!r} executes no instruction")

    def mean(values: np.ndarray, mask: np.ndarray) -> float:
        total = counts[mask].sum()
        return float((counts[mask] * values[mask]).sum() / total) if total else 0.0

    busy: dict[int, float] = {}
    for i, ins in enumerate(d.instructions):
        busy[ins.unit] = busy.get(ins.unit, 0.0) + float(counts[i] * lam[i])
    Lambda_app = float(simulate(single_warp(d), trace=False).cycles)
    return KernelFigures(alpha_comp=a_comp, alpha_mem=a_mem, lam_comp=mean(lam, ~mem),
                         Lam_comp=mean(Lam, ~mem), lam_mem=mean(lam, mem), Lam_mem=mean(Lam, mem),
                         busy_per_unit=busy, instructions=float(counts.sum()), Lambda_app=Lambda_app,
                         warps_total=d.blocks * d.warps_per_block)


def _prediction(model: str, wpc: float, f: KernelFigures, **details: float) -> ModelPrediction:
    cycles = f.warps_total / wpc if wpc > 0 else float("inf")
    return ModelPrediction(model=model, warps_per_cycle=wpc, cycles=cycles, details=dict(details))


# ---- Roofline and Volkov ----------------------------------------------------------------------
def roofline(d: KernelDescription, f: KernelFigures | None = None) -> ModelPrediction:
    """Eq. (1) for any number of subsystems: the busiest subsystem bounds the warp throughput."""
    f = f or kernel_figures(d)
    worst = max(f.busy_per_unit.values())
    return _prediction("roofline", 1.0 / worst, f, cycles_per_warp_bound=worst)


def volkov(d: KernelDescription, f: KernelFigures | None = None) -> ModelPrediction:
    """Eq. (3): min(roof, issue limit, ω / Λ_app); Λ_app is one warp's simulated time alone."""
    f = f or kernel_figures(d)
    omega = d.occupancy_warps
    roof = roofline(d, f).warps_per_cycle
    issue = d.issue_limit / f.instructions if d.issue_limit else float("inf")
    wpc = min(roof, issue, omega / f.Lambda_app)
    return _prediction("volkov", wpc, f, Lambda_app=f.Lambda_app, roof=roof)


# ---- MWP-CWP ---------------------------------------------------------------------------------------
def _mwp_cwp_cases(f: KernelFigures, omega: int) -> tuple[float, float, float, float, float]:
    """Cycles per run of the three cases (eqs. 26–28 with Λ*_app) plus MWP and CWP."""
    if f.alpha_mem == 0:
        compute = f.alpha_comp * f.lam_comp * omega
        return compute, compute, compute, float("inf"), 1.0
    mwp = f.Lam_mem / f.lam_mem if f.lam_mem else float("inf")
    cwp = f.Lam_mem / (f.CI * f.lam_comp) + 1 if f.lam_comp else float("inf")
    mwp_n = min(mwp, omega)
    memory_bound = f.alpha_mem * omega * f.lam_mem + f.CI * f.lam_comp * mwp_n      # eq. 26
    compute_bound = f.alpha_comp * f.lam_comp * omega + f.Lam_mem                    # eq. 27
    lambda_star = f.alpha_mem * f.Lam_mem + f.alpha_comp * f.lam_comp
    occupancy_bound = lambda_star + f.CI * f.lam_comp * (omega - 1)                  # eq. 28
    return memory_bound, compute_bound, occupancy_bound, mwp, cwp


def mwp_cwp(d: KernelDescription, f: KernelFigures | None = None) -> ModelPrediction:
    """Hong and Kim's three cases, chosen by comparing MWP and CWP (both capped at ω)."""
    f = f or kernel_figures(d)
    omega = d.occupancy_warps
    mem_b, comp_b, occ_b, mwp, cwp = _mwp_cwp_cases(f, omega)
    if f.alpha_mem == 0:
        cpr, case = comp_b, 1.0
    elif mwp >= omega and cwp >= omega:
        cpr, case = occ_b, 2.0
    elif cwp >= mwp:
        cpr, case = mem_b, 0.0
    else:
        cpr, case = comp_b, 1.0
    return _prediction("mwp_cwp", omega / cpr, f, MWP=mwp, CWP=cwp, CPR=cpr,
                       case_memory0_compute1_occupancy2=case)


def mwp_cwp_star(d: KernelDescription, f: KernelFigures | None = None) -> ModelPrediction:
    """001's MWP-CWP*: Λ_app (with computational latencies) in eq. 28, and the largest CPR."""
    f = f or kernel_figures(d)
    omega = d.occupancy_warps
    mem_b, comp_b, _, mwp, cwp = _mwp_cwp_cases(f, omega)
    occ_b = f.Lambda_app + (f.CI * f.lam_comp * (omega - 1) if f.alpha_mem else 0.0)
    cpr = max(mem_b, comp_b, occ_b)
    return _prediction("mwp_cwp_star", omega / cpr, f, MWP=mwp, CWP=cwp, CPR=cpr)


# ---- WFG ---------------------------------------------------------------------------------------
def _sequences(nodes: tuple[PathNode, ...], times: int, out: list[tuple[list[int], int]]) -> None:
    """Straight-line instruction sequences with their execution counts (loops cut sequences)."""
    current: list[int] = []
    for node in nodes:
        if isinstance(node, Run):
            current.extend(node.instructions)
        else:
            assert isinstance(node, Loop)
            if current:
                out.append((current, times))
                current = []
            if node.count > 0:
                _sequences(node.body, times * node.count, out)
    if current:
        out.append((current, times))


def _ilp(block: list[int], ins: tuple[StaticInstruction, ...]) -> float:
    """α / length of the longest dependence chain inside a block of computations."""
    # depth of the latest occurrence of each instruction so far in the block (one pass: a
    # dictionary rebuilt per position made this quadratic, seconds on a 2,500-instruction kernel)
    latest: dict[int, int] = {}
    deepest = 0
    for i in block:
        depth = 1 + max((latest[p] for p in ins[i].deps if p in latest), default=0)
        latest[i] = depth
        deepest = max(deepest, depth)
    return len(block) / deepest


def wfg(d: KernelDescription, f: KernelFigures | None = None, corrected: bool = False,
        lam_mem_instr: float | None = None) -> ModelPrediction:
    """Baghsorkhi et al.'s work-flow graph, flattened to cycles per warp (CPW); WPC = 1 / CPW.

    Nodes: maximal runs of computations, single memory accesses, barriers. A memory node has a
    dependency arc when something reads its result or it ends the warp. ``corrected`` gives 001's
    WFG*: λ_mem^instr = 0 and eq. 42 in place of eq. 36.
    """
    f = f or kernel_figures(d)
    ins = d.instructions
    omega = d.occupancy_warps
    if lam_mem_instr is None:
        lam_mem_instr = 0.0 if corrected else f.lam_comp
    consumers = {p for x in ins for p in x.deps}
    seqs: list[tuple[list[int], int]] = []
    _sequences(d.paths[0], 1, seqs)
    last_instruction = seqs[-1][0][-1] if seqs else -1

    # nodes: (kind, instructions, times); kind 0 computations, 1 memory, 2 barrier
    nodes: list[tuple[int, list[int], int]] = []
    for seq, times in seqs:
        block: list[int] = []
        for i in seq:
            if ins[i].memory or ins[i].barrier:
                if block:
                    nodes.append((0, block, times))
                    block = []
                nodes.append((1 if ins[i].memory else 2, [i], times))
            else:
                block.append(i)
        if block:
            nodes.append((0, block, times))

    comp_trans: list[float] = []
    comp_hidden: list[float] = []  # α_i·Λ_comp/(ω·ILP_i): the latency the transition arc covers
    for kind, block, _ in nodes:
        if kind == 0:
            ilp = _ilp(block, ins)
            comp_trans.append(sum(max(float(ins[i].lam), float(ins[i].Lam) / (ilp * omega)) for i in block))
            comp_hidden.append(sum(float(ins[i].Lam) for i in block) / (omega * ilp))
        else:
            comp_trans.append(0.0)
            comp_hidden.append(0.0)
    comp_cycles = sum(tr * times for tr, (_, _, times) in zip(comp_trans, nodes, strict=False))
    alpha_sync = sum(times for kind, _, times in nodes if kind == 2)
    cyc_comp = comp_cycles + lam_mem_instr * f.alpha_mem                                  # eq. 31
    nbc_avg = cyc_comp / (f.alpha_mem + alpha_sync + 1)                                   # eq. 35
    comp_per_mem = comp_cycles / f.alpha_mem if f.alpha_mem else 0.0

    cpw = 0.0
    preceding_hidden = 0.0
    for k, (kind, block, times) in enumerate(nodes):
        if kind == 0:
            cpw += comp_trans[k] * times
            preceding_hidden = comp_hidden[k]
            continue
        i = block[0]
        if kind == 2:
            cpw += float(ins[i].lam) * times
            preceding_hidden = 0.0
            continue
        trans = max(lam_mem_instr, ins[i].memory_pipe_lam - comp_per_mem)                 # eq. 34
        value = trans
        if i in consumers or i == last_instruction:
            Lam = float(ins[i].Lam)
            if corrected:                                                                 # eq. 42
                exposed = Lam / omega - max(0.0, (omega - 1) / omega * nbc_avg - preceding_hidden)
            else:                                                                         # eq. 36
                exposed = Lam - (omega - 1) * nbc_avg
            value = max(trans, exposed)
        cpw += value * times
        preceding_hidden = 0.0
    name = "wfg_star" if corrected else "wfg"
    return _prediction(name, 1.0 / cpw if cpw > 0 else float("inf"), f, CPW=cpw, CPR=cpw * omega,
                       NBC_avg=nbc_avg)


def wfg_star(d: KernelDescription, f: KernelFigures | None = None) -> ModelPrediction:
    return wfg(d, f, corrected=True)


# ---- GPUMech ----------------------------------------------------------------------------------------
def interval_profile(d: KernelDescription) -> tuple[np.ndarray, np.ndarray]:
    """GPUMech's representative warp: issue cycles per interval and the stall that ends it.

    One warp runs alone with computational latencies ignored (Λ := λ, as 001 did); each wait for a
    memory result (or barrier) ends an interval; the drain after the last issue is the last stall.
    """
    base = single_warp(d)
    fast = tuple(x if x.memory else built(StaticInstruction, name=x.name, unit=x.unit, lam=x.lam, Lam=x.lam,
                                          memory=x.memory, barrier=x.barrier, deps=x.deps, dram_wait=0.0,
                                          slots=1.0) for x in base.instructions)
    base = base.with_changes(instructions=fast)
    r = simulate(base, trace=True, trace_limit=warp_instructions(base))
    assert r.trace is not None
    issue_times = r.trace.issues["issue"]
    # issue cycles: a computation costs its λ; a memory access costs nothing here (GPUMech's
    # MSHR/bandwidth contention part is not modelled, as in 001), so a separate memory
    # subsystem does not eat the compute issue rate
    weight = np.array([0.0 if x.memory else x.lam.numerator / x.lam.denominator for x in base.instructions])
    cumulative = np.concatenate([[0.0], np.cumsum(weight[r.trace.issues["instr"]])])
    st = r.trace.stalls
    waits = st[(st["cause"] == 0) | (st["cause"] == 2)]
    ends = np.searchsorted(issue_times, waits["start"], side="left")
    bounds = np.concatenate([[0], ends, [len(issue_times)]])
    counts = np.diff(cumulative[bounds])
    drain = float(r.cycles) - issue_times[-1] - float(d.warp_issue_interval)
    stalls = np.concatenate([waits["end"] - waits["start"], [drain]])
    keep = counts > 0
    return counts[keep].astype(float), np.maximum(stalls[keep], 0.0)


def gpumech(d: KernelDescription, f: KernelFigures | None = None, policy: str = "rr",
            corrected: bool = False,
            profile: tuple[np.ndarray, np.ndarray] | None = None) -> ModelPrediction:
    """Huang et al.'s interval model with Volkov's typo fixes, as 001 section 2.5 reads it.

    RR: other warps issue (W−1)·(n_i−1)·p instructions between the representative warp's ones
    (p = Σn/(Σn+Σs), eq. 9); this reproduces both facts 001 states about eq. 11 (2 non-overlapped
    instructions for n=3, s=6, W=4, and one overlapped instruction per other warp when p = 1).
    RR* (001's correction): overlapped = min(s_i, W−1), non-overlapped = (W−1)·n_i − overlapped.
    GTO: other warps fill the stall with probability q_i = min(1, n̄·s_i/(n̄+s̄)) per cycle
    (eq. 15 with min/max swapped), overlapping at most their (W−1)·n_i instructions.
    An interval takes n_i + non-overlapped + s_i cycles; W warps take the sum over intervals.
    """
    f = f or kernel_figures(d)
    n, s = profile if profile is not None else interval_profile(d)
    W = d.occupancy_warps
    if not len(n) or n.sum() + s.sum() <= 0:
        raise ModelError("GPUMech: the representative warp has no interval (no issued work before a stall), "
                         "so the interval model has nothing to count")
    p = n.sum() / (n.sum() + s.sum())
    if policy == "rr" and corrected:
        overl = np.minimum(s, W - 1)
        cycles = n + ((W - 1) * n - overl) + s
        name = "gpumech_rr_star"
    elif policy == "rr":
        # An interval of less than one instruction (SASS weights make them fractional) has no
        # other warp's instruction between its own: none non-overlapped, never a negative count.
        cycles = n + p * (W - 1) * np.maximum(n - 1, 0.0) + s
        name = "gpumech_rr"
    elif policy == "gto":
        q = np.minimum(1.0, n.mean() * s / (n.mean() + s.mean()))
        overl = np.minimum((W - 1) * n, q * s)
        cycles = n + s + (W - 1) * n - overl
        name = "gpumech_gto"
    else:
        raise ModelError(f"GPUMech has no policy {policy!r} (rr or gto)")
    total = float(cycles.sum())
    if not total > 0:
        raise ModelError(f"GPUMech: the intervals add up to {total:g} cycles")
    return _prediction(name, W / total, f, issue_probability=float(p), intervals=float(len(n)),
                       cycles_per_run=total)


def nonoverlapped_rr(interval_insts: float, stall_cycles: float, warps: int,
                     issue_probability: float, corrected: bool) -> float:
    """GPUMech RR non-overlapped instructions of one interval (the reconstruction used above)."""
    if corrected:
        return (warps - 1) * interval_insts - min(stall_cycles, warps - 1)
    return issue_probability * (warps - 1) * max(interval_insts - 1, 0.0)


# ---- all of them ------------------------------------------------------------------------------------
PEERS = ("roofline", "volkov", "mwp_cwp", "mwp_cwp_star", "wfg", "wfg_star", "gpumech_rr",
         "gpumech_rr_star", "gpumech_gto")


def all_peers(d: KernelDescription) -> dict[str, ModelPrediction]:
    f = kernel_figures(d)
    profile = interval_profile(d)
    return {
        "roofline": roofline(d, f),
        "volkov": volkov(d, f),
        "mwp_cwp": mwp_cwp(d, f),
        "mwp_cwp_star": mwp_cwp_star(d, f),
        "wfg": wfg(d, f),
        "wfg_star": wfg_star(d, f),
        "gpumech_rr": gpumech(d, f, "rr", profile=profile),
        "gpumech_rr_star": gpumech(d, f, "rr", corrected=True, profile=profile),
        "gpumech_gto": gpumech(d, f, "gto", profile=profile),
    }
