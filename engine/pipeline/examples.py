"""Kernel descriptions built by hand: 001's example kernels and a synthetic tiled matrix multiply.

They serve the reference tests, the benchmark and the GUI's "examples" menu; none needs PTX.
"""

from __future__ import annotations

from fractions import Fraction

from engine.pipeline.description import KernelDescription, Loop, Run, make_instruction


def example_kernel(occupancy_warps: int = 1, warps_total: int | None = None,
                   lam_comp: float = 1, Lam_comp: float = 4, lam_mem: float = 2, Lam_mem: float = 6,
                   issue_limit: int | None = None) -> KernelDescription:
    """001's example (Fig. 1, Table 2): four computational and two memory instructions.

    The figure's edges are not in the text; we use two periods of "two computations, then a
    memory access": C0 and C1 are independent and feed M2; C3 needs M2, C4 needs C3, M5 needs
    C4. This is the reading that gives the Λ_app = 25 the text derives (one computation
    overlaps: 2·6 + 3·4 + 1·1). Each warp is its own group (block of one warp).
    """
    ins = (
        make_instruction("C0", 0, lam_comp, Lam_comp),
        make_instruction("C1", 0, lam_comp, Lam_comp),
        make_instruction("M2", 1, lam_mem, Lam_mem, memory=True, deps=(0, 1)),
        make_instruction("C3", 0, lam_comp, Lam_comp, deps=(2,)),
        make_instruction("C4", 0, lam_comp, Lam_comp, deps=(3,)),
        make_instruction("M5", 1, lam_mem, Lam_mem, memory=True, deps=(4,)),
    )
    total = warps_total if warps_total is not None else occupancy_warps
    return KernelDescription(
        instructions=ins, subsystems=("comp", "mem"), paths=((Run(tuple(range(6))),),),
        warps_per_block=1, blocks=total, resident_blocks=occupancy_warps,
        issue_limit=issue_limit, name="001 example kernel")


def wfg_pair_kernel(comp_latency_total: float, Lam_mem: float, occupancy_warps: int,
                    lam_comp: float = Fraction(1, 8), lam_mem: float = Fraction(1, 8)) -> KernelDescription:
    """001 Fig. 6: one computation of latency α_comp·Λ_comp feeding one memory access (ILP 1).

    λ's are small so the computations stay occupancy-bound, as the figure assumes.
    """
    ins = (
        make_instruction("C", 0, lam_comp, comp_latency_total),
        make_instruction("M", 1, lam_mem, Lam_mem, memory=True, deps=(0,)),
    )
    return KernelDescription(
        instructions=ins, subsystems=("comp", "mem"), paths=((Run((0, 1)),),),
        warps_per_block=1, blocks=occupancy_warps, resident_blocks=occupancy_warps,
        name=f"WFG pair {comp_latency_total}/{Lam_mem}")


def instruction_mix_kernel(beta: int, lam_alu: float, lam_sfu: float, issue_limit: int | None,
                           Lam_alu: float = 6, Lam_sfu: float = 15, repetitions: int = 256,
                           warps: int = 64, warps_per_block: int = 8,
                           same_subsystem: bool = False) -> KernelDescription:
    """001 §4.2 / Fig. 11: β ALU instructions then one SFU instruction, repeated; one chain."""
    ins = [make_instruction(f"alu{k}", 0, lam_alu, Lam_alu, deps=((k - 1) if k else beta,))
           for k in range(beta)]
    ins.append(make_instruction("sfu", 0 if same_subsystem else 1, lam_sfu, Lam_sfu, deps=(beta - 1,)))
    blocks = warps // warps_per_block
    return KernelDescription(
        instructions=tuple(ins), subsystems=("alu", "sfu"),
        paths=((Loop((Run(tuple(range(beta + 1))),), repetitions),),),
        warps_per_block=warps_per_block, blocks=blocks, resident_blocks=blocks,
        issue_limit=issue_limit, name=f"instruction mix β={beta}")


def iterative_barrier_kernel(warps_per_block: int, occupancy_warps: int, total_warps: int,
                             iterations: int = 64, lam: float = 1, Lam: float = 18,
                             lam_bar: float = 2, Lam_bar: float = 40,
                             issue_limit: int | None = 1) -> KernelDescription:
    """001 §6.2 / Fig. 15: N dependent instructions, each followed by a barrier."""
    ins = (
        make_instruction("I", 0, lam, Lam, deps=(0,)),
        make_instruction("bar.sync", 1, lam_bar, Lam_bar, barrier=True),
    )
    if occupancy_warps % warps_per_block or total_warps % warps_per_block:
        raise ValueError("occupancy and total warps must be multiples of the block size")
    return KernelDescription(
        instructions=ins, subsystems=("alu", "barrier"),
        paths=((Loop((Run((0, 1)),), iterations),),),
        warps_per_block=warps_per_block, blocks=total_warps // warps_per_block,
        resident_blocks=occupancy_warps // warps_per_block, issue_limit=issue_limit,
        name=f"iterative barrier, {warps_per_block} warps per block")


def tiled_mm_kernel(tiles: int, blocks: int, resident_blocks: int = 8, warps_per_block: int = 8,
                    tile: int = 16) -> KernelDescription:
    """Synthetic stand-in for a 16×16 shared-memory tiled matrix multiply (Hopper-like figures).

    Per warp: address set-up, then ``tiles`` × (2 global loads, 2 shared stores, barrier,
    ``tile`` × (2 shared loads, 1 FMA on a running sum), barrier, 2 pointer increments), then one
    global store. Dependences that point forward in the loop body (the running sum, the pointer
    increments) are loop-carried: they read the previous iteration.
    """
    ALU, LDST, BAR = 0, 2, 3
    n_setup = 8
    idx_pa = n_setup
    idx_pb = n_setup + 1
    body_start = n_setup + 2
    last_fma = body_start + 5 + 3 * tile - 1
    inc_a = last_fma + 2
    inc_b = last_fma + 3
    ins = [make_instruction(f"setup{k}", ALU, 0.5, 4, deps=((k - 1,) if k else ())) for k in range(n_setup)]
    ins.append(make_instruction("mov.pa", ALU, 0.5, 4, deps=(n_setup - 1,)))
    ins.append(make_instruction("mov.pb", ALU, 0.5, 4, deps=(n_setup - 1,)))
    ins.append(make_instruction("ld.global.a", LDST, 4, 400, deps=(idx_pa, inc_a), memory=True))
    ins.append(make_instruction("ld.global.b", LDST, 4, 400, deps=(idx_pb, inc_b), memory=True))
    ins.append(make_instruction("st.shared.a", LDST, 1, 30, deps=(body_start,), memory=True))
    ins.append(make_instruction("st.shared.b", LDST, 1, 30, deps=(body_start + 1,), memory=True))
    ins.append(make_instruction("bar.sync.1", BAR, 1, 20, barrier=True))
    for k in range(tile):
        la = len(ins)
        ins.append(make_instruction(f"ld.shared.a{k}", LDST, 1, 30, memory=True))
        ins.append(make_instruction(f"ld.shared.b{k}", LDST, 1, 30, memory=True))
        acc = last_fma if k == 0 else la - 1
        ins.append(make_instruction(f"fma{k}", ALU, 0.5, 4, deps=(la, la + 1, acc)))
    assert len(ins) - 1 == last_fma
    ins.append(make_instruction("bar.sync.2", BAR, 1, 20, barrier=True))
    ins.append(make_instruction("add.inc.a", ALU, 0.5, 4, deps=(idx_pa, inc_a)))
    ins.append(make_instruction("add.inc.b", ALU, 0.5, 4, deps=(idx_pb, inc_b)))
    body_end = len(ins)
    ins.append(make_instruction("st.global.c", LDST, 4, 400, deps=(last_fma,), memory=True))
    paths = ((Run(tuple(range(body_start))), Loop((Run(tuple(range(body_start, body_end))),), tiles),
              Run((body_end,))),)
    return KernelDescription(
        instructions=tuple(ins), subsystems=("alu", "sfu", "ldst", "barrier"), paths=paths,
        warps_per_block=warps_per_block, blocks=blocks, resident_blocks=resident_blocks,
        issue_limit=4, name=f"synthetic tiled mm ({tiles} tiles)")
