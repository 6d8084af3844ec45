"""The Pipeline model and its analytical peers against the figures 001 derives in its text.

Numbers are those of shared/reference/pipeline/example_kernel.json and gpus.json (Tables 2, 4,
5); they are repeated here so the tests run without the shared folder.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from engine.pipeline.description import KernelDescription
from engine.pipeline.examples import (
    example_kernel,
    instruction_mix_kernel,
    iterative_barrier_kernel,
    wfg_pair_kernel,
)
from engine.pipeline.peers import (
    PEERS,
    all_peers,
    kernel_figures,
    mwp_cwp,
    nonoverlapped_rr,
    roofline,
    volkov,
    wfg,
    wfg_star,
)
from engine.pipeline.simulator import simulate

# Table 4 (λ_ALU, λ_SFU, IL) with Table 5's Λ of mul.f32 and cos.approx.f32 for each GPU.
TABLE_4 = {
    "Fermi": (1, 8, 1, 18, 40),
    "Kepler": (0.25, 1, 4, 9, 18),
    "Maxwell": (0.25, 1, 4, 6, 15),
    "Pascal": (0.25, 1, 4, 6, 15),
    "Turing": (0.5, 2, 2, 4, 21),
    "Tonga": (1, 5, 1, 5.25, 24),
}


def test_example_kernel_single_warp_takes_lambda_app() -> None:
    result = simulate(example_kernel(1))
    assert result.cycles == 25                       # Λ_app = 25 (Section 2.2)
    assert kernel_figures(example_kernel(1)).Lambda_app == 25
    # one computation overlaps (λ instead of Λ), as eq. 2 reads: 2·6 + 3·4 + 1·1
    issues = result.trace.issues
    assert list(issues["issue"]) == [0, 1, 5, 11, 15, 19]


def test_volkov_occupancy_roofline_of_the_example() -> None:
    assert roofline(example_kernel(1)).warps_per_cycle == pytest.approx(0.25)
    assert volkov(example_kernel(1)).warps_per_cycle == pytest.approx(1 / 25)
    reaching_peak = [w for w in range(1, 20) if volkov(example_kernel(w)).warps_per_cycle >= 0.25 - 1e-12]
    assert reaching_peak[0] == 7


def test_mwp_cwp_of_the_example_is_memory_bound() -> None:
    details = mwp_cwp(example_kernel(8)).details
    assert details["MWP"] == pytest.approx(3)
    assert details["CWP"] == pytest.approx(4)        # printed as 6/2 + 1
    assert details["MWP"] < details["CWP"]
    assert details["case_memory0_compute1_occupancy2"] == 0  # memory-bound case (eq. 26)
    # eq. 26: CPR = α_mem·ω·λ_mem + CI·λ_comp·MWP = 2·8·2 + 2·1·3
    assert details["CPR"] == pytest.approx(38)


@pytest.mark.parametrize(("comp", "mem"), [(8, 6), (11, 3), (3, 11)])
def test_wfg_figure_6_pairs_and_the_correction(comp: float, mem: float) -> None:
    cpr = [wfg(wfg_pair_kernel(comp, mem, w)).details["CPR"] for w in range(1, 7)]
    cpr_star = [wfg_star(wfg_pair_kernel(comp, mem, w)).details["CPR"] for w in range(1, 7)]
    volkov_cpr = [w / volkov(wfg_pair_kernel(comp, mem, w)).warps_per_cycle for w in range(1, 7)]
    assert volkov_cpr == pytest.approx([14] * 6, rel=1e-9)  # Volkov: 14 for every pair and ω
    assert cpr[0] == pytest.approx(14)
    if (comp, mem) == (11, 3):
        assert cpr[1] < cpr[0]              # the impossible drop 001 points out
    if (comp, mem) == (3, 11):
        assert cpr[5] > 3 * cpr[0]          # "CPR rises fast"
    # WFG*: never faster for more warps, and for these occupancy-bound pairs exactly Volkov's 14
    assert all(b >= a - 1e-9 for a, b in zip(cpr_star, cpr_star[1:], strict=False))
    assert cpr_star == pytest.approx([14] * 6, rel=1e-9)


@pytest.mark.parametrize("gpu", sorted(TABLE_4))
@pytest.mark.parametrize("beta", [1, 4, 8])
def test_instruction_mix_converges_to_eq_45(gpu: str, beta: int) -> None:
    lam_alu, lam_sfu, il, Lam_alu, Lam_sfu = TABLE_4[gpu]
    d = instruction_mix_kernel(beta, lam_alu, lam_sfu, il, Lam_alu=Lam_alu, Lam_sfu=Lam_sfu, warps=64)
    result = simulate(d, trace=False)
    ipc_type1 = beta * 256 * 64 / float(result.cycles)
    # eq. 45 per mix of β + 1 instructions: ALU busy β·λ1, SFU busy λ2, issue (β + 1)/IL cycles
    bound = min(1 / lam_alu, beta / lam_sfu, beta / (beta + 1) * il)
    assert ipc_type1 <= bound * (1 + 1e-9)
    # Fermi (λ_SFU = 8 with IL = 1) loses the SFU's free cycle to an ALU issue that LRR visits
    # first a few percent of the time; every other GPU is within 2 %
    tolerance = 0.06 if gpu == "Fermi" else 0.02
    assert ipc_type1 >= bound * (1 - tolerance)


def test_instruction_mix_on_one_subsystem_follows_eq_43() -> None:
    beta, lam1, lam2 = 4, 1, 4
    d = instruction_mix_kernel(beta, lam1, lam2, None, Lam_alu=4, Lam_sfu=8, same_subsystem=True)
    ipc_type1 = beta * 256 * 64 / float(simulate(d, trace=False).cycles)
    assert ipc_type1 == pytest.approx(beta / (beta * lam1 + lam2), rel=0.01)


@pytest.mark.parametrize(("lam", "Lam", "lam_bar", "Lam_bar", "il"),
                         [(1, 18, 2, 40, 1), (0.25, 6, 2.25, 70, 4)])   # Fermi, Pascal (Table 5)
def test_iterative_barrier_kernel_slows_with_group_size(lam: float, Lam: float, lam_bar: float,
                                                        Lam_bar: float, il: int) -> None:
    cycles = [simulate(iterative_barrier_kernel(wpb, 32, 256, lam=lam, Lam=Lam, lam_bar=lam_bar,
                                                Lam_bar=Lam_bar, issue_limit=il), trace=False).cycles
              for wpb in (1, 2, 4, 8, 16, 32)]
    assert all(b >= a for a, b in zip(cycles, cycles[1:], strict=False))
    assert cycles[-1] > Fraction(3, 2) * cycles[0]


def at_occupancies(d: KernelDescription, occupancies: list[int]) -> dict[str, np.ndarray]:
    """Warps per cycle of the simulation (``pipeline``) and of every peer of a description at each
    occupancy in warps (whole blocks, at least one), the work unchanged: 001's Figs. 2 and 14 for
    its example kernel, which has no PTX. (A PTX kernel's occupancy sweep is the evaluator's,
    ``engine.evaluation.occupancy_sweep``.)"""
    out: dict[str, list[float]] = {name: [] for name in (*PEERS, "pipeline", "occupancy")}
    for warps in occupancies:
        at = d.with_changes(resident_blocks=max(1, warps // d.warps_per_block))
        out["occupancy"].append(at.resident_blocks * at.warps_per_block)
        peers = all_peers(at)
        for name in PEERS:
            out[name].append(peers[name].warps_per_cycle)
        out["pipeline"].append(simulate(at, trace=False).warps_per_cycle)
    return {name: np.asarray(values, dtype=float) for name, values in out.items()}


def test_occupancy_sweep_of_the_example_has_every_model() -> None:
    sweep = at_occupancies(example_kernel(1, warps_total=120), [1, 2, 4, 7, 10])
    assert set(sweep) >= {"roofline", "volkov", "mwp_cwp", "mwp_cwp_star", "wfg", "wfg_star",
                          "gpumech_rr", "gpumech_rr_star", "gpumech_gto", "pipeline", "occupancy"}
    # Volkov is the upper bound of the simulation (001 §5.1) and the simulation rises with ω
    assert all(sweep["pipeline"] <= sweep["volkov"] + 1e-9)
    assert all(b > a for a, b in zip(sweep["pipeline"], sweep["pipeline"][1:], strict=False))
    # GPUMech RR goes "through the roof", GTO converges to it (001 §2.5)
    assert sweep["gpumech_rr"][-1] > sweep["roofline"][-1]
    assert sweep["gpumech_gto"][-1] == pytest.approx(sweep["roofline"][-1])


def test_gpumech_round_robin_example_of_section_2_5_1() -> None:
    # interval of 3 instructions and 6 stall cycles, 4 warps, issue probability 3 / (3 + 6)
    p = 3 / (3 + 6)
    assert nonoverlapped_rr(3, 6, 4, p, corrected=False) == pytest.approx(2)   # eq. 11
    assert nonoverlapped_rr(3, 6, 4, 1.0, corrected=True) == pytest.approx(6)  # Fig. 8 / 001's fix
