"""Simulator behaviour: exact time, trace tables and aggregates, policies, budgets, bad input."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from engine.errors import SimulationError
from engine.pipeline.description import KernelDescription, Loop, Run, make_instruction
from engine.pipeline.examples import example_kernel, instruction_mix_kernel, tiled_mm_kernel
from engine.pipeline.simulator import simulate
from engine.pipeline.trace import STALL_CAUSES


def chain(n: int, lam: float = 1, Lam: float = 4, **kw: object) -> KernelDescription:
    ins = (make_instruction("a", 0, lam, Lam, deps=(0,)),)
    base = dict(instructions=ins, subsystems=("alu",), paths=((Loop((Run((0,)),), n),),),
                warps_per_block=1, blocks=1, resident_blocks=1)
    base.update(kw)
    return KernelDescription(**base)  # type: ignore[arg-type]


def test_fractional_lambda_keeps_time_exact() -> None:
    d = chain(3, lam=Fraction(1, 3), Lam=Fraction(7, 3))
    r = simulate(d)
    # a chain: each issue waits for the previous result; ends at 3 · 7/3
    assert r.cycles == 7
    assert r.ticks_per_cycle == 3


def test_a_latency_table_too_fine_for_exact_ticks_runs_on_a_grid_and_says_so() -> None:
    # Latencies with unrelated denominators (as averaged memory costs give): keeping all exact
    # would need 9973 * 9967 * 9949 ticks per cycle.
    lams = [Fraction(13, 9973), Fraction(1, 9967), Fraction(2, 3), Fraction(5, 8)]
    Lams = [Fraction(40000, 9949), Fraction(9, 2), Fraction(7, 9973), Fraction(1, 7)]
    ins = tuple(make_instruction(f"i{k}", 0, lam, Lam, deps=((k - 1,) if k else ()))
                for k, (lam, Lam) in enumerate(zip(lams, Lams, strict=True)))
    d = KernelDescription(instructions=ins, subsystems=("alu",), paths=((Loop((Run((0, 1, 2, 3)),), 50),),),
                          warps_per_block=4, blocks=3, resident_blocks=2)
    assert d.exact_ticks_per_cycle() > 10**6 and d.ticks_per_cycle() == 2520
    r = simulate(d)
    assert r.ticks_per_cycle == 2520
    assert r.note.startswith("timed on a grid of 1/2520 cycle: keeping every λ/Λ exact would need ")
    # 1/9967 goes up to one step, 1/2520, the least a positive λ may take: a move of 0.0003 cycles
    assert r.note.endswith("so durations were rounded, each by at most 0.0003 cycles")
    # Fractions that fit the grid are kept: 2/3, 5/8, 9/2 and 1/7 exactly, the rest within 1/5040.
    snapped, _ = d.on_time_grid()
    assert [i.lam for i in snapped.instructions][2:] == lams[2:] and snapped.instructions[3].Lam == Fraction(1, 7)
    assert all(abs(a.Lam - b.Lam) <= Fraction(1, 5040) and 0 < a.lam and abs(a.lam - b.lam) < Fraction(1, 2520)
               for a, b in zip(snapped.instructions, ins, strict=True))
    # The grid's time is the exact time of the rounded table, close to the unrounded one.
    assert r.cycles == simulate(snapped).cycles
    # and close to the time of the table put on a finer grid that is still exact (1/100000)
    fine = d.with_changes(instructions=tuple(
        replace(i, lam=Fraction(round(i.lam * 10**5), 10**5), Lam=Fraction(round(i.Lam * 10**5), 10**5)) for i in ins))
    assert fine.exact_ticks_per_cycle() <= 10**6
    assert abs(r.cycles - simulate(fine).cycles) < Fraction(1, 1000) * r.cycles


def test_loop_carried_dependence_reads_previous_iteration() -> None:
    # b reads c, which comes later in the body: iteration k's b waits for iteration k-1's c
    ins = (make_instruction("a", 0, 1, 1), make_instruction("b", 0, 1, 1, deps=(2,)),
           make_instruction("c", 0, 1, 10))
    d = KernelDescription(instructions=ins, subsystems=("alu",), paths=((Loop((Run((0, 1, 2)),), 2),),),
                          warps_per_block=1, blocks=1, resident_blocks=1)
    issue = simulate(d).trace.issues["issue"]
    # first iteration: 0, 1, 2 (c done at 12); second: a at 3, b at 12, c at 13 → end 23
    assert list(issue) == [0, 1, 2, 3, 12, 13]
    assert simulate(d).cycles == 23


def test_trace_rows_and_aggregates_agree() -> None:
    d = tiled_mm_kernel(4, blocks=6, resident_blocks=2, warps_per_block=4)
    r = simulate(d)
    issues, stalls = r.trace.issues, r.trace.stalls
    assert len(issues) == r.instructions_issued == d.total_warp_instructions()
    assert np.all(issues["complete"] >= issues["issue"])
    assert np.all(stalls["end"] > stalls["start"])
    # per warp, issue slots + stalls cover [0, end] exactly (issue interval 1 cycle)
    for w in range(d.blocks * d.warps_per_block):
        busy = (issues["warp"] == w).sum() * 1.0
        idle = (stalls["end"] - stalls["start"])[stalls["warp"] == w].sum()
        assert busy + idle == pytest.approx(float(r.cycles))
    for c, name in enumerate(STALL_CAUSES):
        rows = stalls[stalls["cause"] == c]
        assert r.aggregates.stall_cycles[name] == pytest.approx((rows["end"] - rows["start"]).sum())
    assert r.aggregates.stall_cycles["barrier"] > 0
    assert r.aggregates.stall_cycles["memory_dependency"] > 0
    assert np.array_equal(r.aggregates.issue_count, np.bincount(issues["instr"], minlength=len(d.instructions)))
    util = r.aggregates.utilisation
    assert 0 < util["ldst"] <= 1 and util["sfu"] == 0


def test_trace_free_mode_gives_the_same_figures() -> None:
    d = tiled_mm_kernel(3, blocks=5, resident_blocks=2)
    a, b = simulate(d, trace=True), simulate(d, trace=False)
    assert b.trace is None
    assert a.cycles == b.cycles and a.instructions_issued == b.instructions_issued
    assert a.aggregates.stall_cycles == b.aggregates.stall_cycles


def test_policies_differ_but_do_the_same_work() -> None:
    d = example_kernel(4, warps_total=16)
    lrr, gto = simulate(d, policy="lrr"), simulate(d, policy="gto")
    assert lrr.instructions_issued == gto.instructions_issued == 96
    orders = [r.trace.issues["warp"][:8].tolist() for r in (lrr, gto)]
    assert orders[0] != orders[1]


def test_issue_limit_caps_ipc() -> None:
    ins = tuple(make_instruction(f"x{k}", k % 2, Fraction(1, 4), 1) for k in range(2))
    d = KernelDescription(instructions=ins, subsystems=("a", "b"), paths=((Loop((Run((0, 1)),), 200),),),
                          warps_per_block=8, blocks=4, resident_blocks=4, issue_limit=2)
    r = simulate(d, trace=False)
    assert r.ipc <= 2 + 1e-9 and r.ipc > 1.9


@pytest.mark.parametrize(("slots", "ipc"), [(1.0, 2.0), (2.0, 1.0), (1.5, 4 / 3), (0.25, 8.0)])
def test_an_instruction_takes_the_issue_slots_of_its_sass(slots, ipc) -> None:
    # issue limit 2 SASS instructions per cycle; each PTX instruction is `slots` SASS ones (two
    # subsystems of λ 1/8, never the limit themselves)
    ins = tuple(replace(make_instruction(f"x{k}", k % 2, Fraction(1, 8), 1), slots=slots) for k in range(2))
    d = KernelDescription(instructions=ins, subsystems=("a", "b"), paths=((Loop((Run((0, 1)),), 400),),),
                          warps_per_block=16, blocks=4, resident_blocks=4, issue_limit=2)
    r = simulate(d, trace=False)
    assert r.ipc == pytest.approx(ipc, rel=0.03)


def test_launch_overheads_delay_blocks() -> None:
    d = chain(2, blocks=3, resident_blocks=1)
    base = simulate(d).cycles
    slow = simulate(d.with_changes(block_launch_overhead=Fraction(10))).cycles
    assert slow == base + 30
    r = simulate(d.with_changes(block_launch_overhead=Fraction(10)))
    assert r.aggregates.stall_cycles["not_resident"] > 0


def test_the_sm_starts_one_block_at_a_time() -> None:
    # blocks of one 4-cycle instruction, 8 slots: alone each slot restarts its next block at
    # once (one issue per cycle); the launcher starts one every 10 cycles: 39 intervals + 4
    d = chain(1, blocks=40, resident_blocks=8)
    assert simulate(d).cycles == 39 + 4
    queued = d.with_changes(block_launch_interval=Fraction(10))
    r = simulate(queued)
    assert r.cycles == 39 * 10 + 4
    starts = np.sort(r.trace.issues["issue"])
    assert np.all(np.diff(starts) == 10)
    # longer blocks than slots x interval: the queue costs only the staggered first wave
    slow = chain(50, lam=Fraction(1, 8), blocks=16, resident_blocks=8, block_launch_interval=Fraction(10))
    # (7 x 10 cycles, less the 7/8 cycle the unqueued wave's warps spent queueing at the ALU)
    extra = simulate(slow).cycles - simulate(slow.with_changes(block_launch_interval=Fraction(0))).cycles
    assert 69 <= extra <= 70


def test_cycle_budget_stops_early_and_says_so() -> None:
    d = instruction_mix_kernel(4, 0.25, 1, 4, repetitions=1000)
    r = simulate(d, trace=False, cycle_budget=500)
    assert r.stopped_early and r.cycles == 500
    assert 0 < r.instructions_issued < d.total_warp_instructions()


def test_trace_limit_truncates_but_runs_on() -> None:
    d = instruction_mix_kernel(4, 0.25, 1, 4, repetitions=50)
    r = simulate(d, trace_limit=100)
    assert r.trace.truncated and len(r.trace.issues) == 100
    assert r.instructions_issued == d.total_warp_instructions()


def test_large_loop_is_not_materialised() -> None:
    r = simulate(chain(2_000_000, Lam=1), trace=False)
    assert r.instructions_issued == 2_000_000 and r.cycles == 2_000_000


# ---- bad input ------------------------------------------------------------------------------------
def test_zero_lambda_is_refused() -> None:
    with pytest.raises(SimulationError, match="λ"):
        simulate(chain(2, lam=0))


def test_negative_latency_is_refused() -> None:
    with pytest.raises(SimulationError, match="negative"):
        simulate(chain(2, Lam=-1))


def test_impossible_occupancy_is_refused() -> None:
    with pytest.raises(SimulationError, match="occupancy"):
        simulate(chain(2, resident_blocks=0))


def test_barrier_reached_by_some_warps_only_is_a_deadlock() -> None:
    ins = (make_instruction("a", 0, 1, 1), make_instruction("bar", 1, 1, 1, barrier=True))
    d = KernelDescription(instructions=ins, subsystems=("alu", "bar"),
                          paths=((Run((0, 1, 0)),), (Run((0, 0)),)), warp_path=(0, 1),
                          warps_per_block=2, blocks=2, resident_blocks=1)
    with pytest.raises(SimulationError, match="deadlock in block 0"):
        simulate(d)


def test_unknown_policy_and_empty_path_are_refused() -> None:
    with pytest.raises(SimulationError, match="policy"):
        simulate(chain(2), policy="fifo")
    with pytest.raises(SimulationError, match="executes no instruction"):
        simulate(chain(0))
    with pytest.raises(SimulationError, match="does not exist"):
        simulate(chain(2).with_changes(paths=((Run((5,)),),)))


def test_gpumech_without_an_interval_is_refused_not_divided_by_zero() -> None:
    """An interval profile with no interval (or none with work) cannot give GPUMech a time: a
    ModelError the evaluator shows as that model's error, never a ZeroDivisionError."""
    from engine.errors import ModelError
    from engine.pipeline.peers import gpumech

    d = chain(4)
    for profile in ((np.zeros(0), np.zeros(0)), (np.zeros(2), np.zeros(2))):
        for policy, corrected in (("rr", False), ("rr", True), ("gto", False)):
            with pytest.raises(ModelError, match="GPUMech"):
                gpumech(d, policy=policy, corrected=corrected, profile=profile)
    assert gpumech(d, policy="rr", profile=(np.array([3.0]), np.array([4.0]))).cycles > 0
