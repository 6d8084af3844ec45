"""Warps bound to the SM's schedulers (mechanism scheduler_binding), as measured on the H100
(bench/micro/warp_schedulers.cu, results bench/micro/results/h100-2026-11-28-l2-kinds-schedulers)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from engine.pipeline.description import KernelDescription, Loop, Run, StaticInstruction
from engine.pipeline.simulator import simulate


def _busy_warp_zero(warps_per_block: int, resident: int, schedulers: int = 4) -> KernelDescription:
    """Warp 0 of every block runs 400 independent one-cycle instructions; the others exit."""
    work = StaticInstruction(name="ffma", unit=0, lam=Fraction(1, 4), Lam=Fraction(4), memory=False,
                             barrier=False, deps=())
    stop = StaticInstruction(name="exit", unit=1, lam=Fraction(1, 4), Lam=Fraction(0), memory=False,
                             barrier=False, deps=())
    busy = (Loop((Run((0,)),), 400), Run((1,)))
    idle = (Run((1,)),)
    return KernelDescription(
        instructions=(work, stop), subsystems=("alu", "control"), paths=(busy, idle),
        warps_per_block=warps_per_block, blocks=resident, resident_blocks=resident, issue_limit=4,
        warp_path=(0,) + (1,) * (warps_per_block - 1), schedulers=schedulers)


@pytest.mark.parametrize("warps, starts", [
    (1, [0, 1, 2, 3, 0]), (2, [0, 2, 0, 2, 0]), (3, [0, 3, 2, 1, 0]), (4, [0, 1, 2, 3, 0]),
    (6, [0, 2, 0, 2, 0]), (8, [0, 1, 2, 3, 0])])
def test_each_blocks_warp_zero_goes_where_the_h100_put_it(warps: int, starts: list[int]) -> None:
    d = _busy_warp_zero(warps, 8)
    assert [d.scheduler_of(k, 0) for k in range(5)] == starts
    # a block's warps take consecutive schedulers
    assert [d.scheduler_of(1, w) for w in range(warps)] == [(starts[1] + w) % 4 for w in range(warps)]


def test_one_busy_warp_per_64_thread_block_leaves_two_schedulers_idle() -> None:
    """Measured (8 blocks per SM, warp 0 busy): 168 k cycles with 2- and 6-warp blocks, 88 k with
    1-, 3-, 4-, 5-, 7- and 8-warp blocks: the busy warps share two schedulers, or all four."""
    cycles = {w: float(simulate(_busy_warp_zero(w, 8)).cycles) for w in (1, 2, 3, 4, 6, 8)}
    for w in (2, 6):
        assert cycles[w] == pytest.approx(2 * cycles[1], rel=0.05)
    for w in (3, 4, 8):
        assert cycles[w] == pytest.approx(cycles[1], rel=0.05)
    # without binding any scheduler issues any warp: the block shape does not matter
    free = {w: float(simulate(_busy_warp_zero(w, 8, schedulers=0)).cycles) for w in (1, 2)}
    assert free[2] == pytest.approx(free[1], rel=0.05)
