"""The compiled simulator against the plain reference in tests/sim_oracle.py on random kernels."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import SimulationError
from engine.pipeline.description import KernelDescription, Loop, Run, StaticInstruction
from engine.pipeline.simulator import simulate
from tests.sim_oracle import run_oracle

LAMBDAS = [Fraction(1, 4), Fraction(1, 2), Fraction(1), Fraction(3, 2), Fraction(2), Fraction(3)]
# ptxas's stall counts (whole cycles): mostly none beyond the issue interval
ISSUE_GAPS = [0.0, 0.0, 0.0, 2.0, 5.0]
# L2 and DRAM busy time of a memory instruction (whole cycles: on every tick grid)
LEVEL_LAMS = [(0.0, 0.0), (0.0, 0.0), (2.0, 0.0), (0.0, 3.0), (5.0, 1.0)]
# what an instruction does to its warp's asynchronous copy groups (mostly nothing): (op, pending)
ASYNC_OPS = [(0, 0), (0, 0), (0, 0), (1, 0), (1, 0), (2, 0), (3, 0), (3, 1), (3, 2), (4, 0)]
LATENCIES = [Fraction(0), Fraction(1, 2), Fraction(1), Fraction(2), Fraction(4), Fraction(7), Fraction(13)]


@st.composite
def kernels(draw: st.DrawFn) -> tuple[KernelDescription, str]:
    n = draw(st.integers(1, 6))
    n_units = draw(st.integers(1, 3))
    with_barrier = draw(st.booleans())
    instructions = []
    for i in range(n):
        deps = tuple(sorted(set(draw(st.lists(st.integers(0, n - 1), max_size=3)))))
        barrier = with_barrier and draw(st.integers(0, 3)) == 0
        memory = draw(st.booleans())
        async_op, async_n = draw(st.sampled_from(ASYNC_OPS))
        instructions.append(StaticInstruction(
            name=f"i{i}", unit=draw(st.integers(0, n_units - 1)), lam=draw(st.sampled_from(LAMBDAS)),
            Lam=draw(st.sampled_from(LATENCIES)), memory=memory, barrier=barrier,
            deps=deps, issue_gap=draw(st.sampled_from(ISSUE_GAPS)),
            level_lam=draw(st.sampled_from(LEVEL_LAMS)) if memory else (0.0, 0.0),
            async_op=async_op, async_n=async_n))
    extra = draw(st.integers(0, 3))    # completion slots n..n+extra-1 for renamed runs

    def run() -> Run:
        body = tuple(draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4)))
        if extra == 0 or not draw(st.booleans()):
            return Run(body)
        slot = st.integers(0, n + extra - 1)
        renamed = tuple((draw(slot), tuple(draw(st.lists(slot, max_size=3)))) for _ in body)
        return Run(body, renamed)
    path = (run(), Loop((run(), run()), draw(st.integers(0, 3))), run())
    paths = [path]
    warps_per_block = draw(st.integers(1, 3))
    warp_path = None
    if not with_barrier and draw(st.booleans()):
        paths.append((run(), Loop((run(),), draw(st.integers(1, 3)))))
        warp_path = tuple(draw(st.integers(0, 1)) for _ in range(warps_per_block))
    issue_limit = draw(st.sampled_from([None, 1, 2, 3, 4]))
    # schedulers that share the issue limit evenly (a warp slot issues through one of them)
    schedulers = draw(st.sampled_from([k for k in (1, 2, 4) if issue_limit is not None and issue_limit % k == 0]
                                      or [1]))
    d = KernelDescription(
        instructions=tuple(instructions), subsystems=tuple(f"u{k}" for k in range(n_units)),
        paths=tuple(paths), warps_per_block=warps_per_block, blocks=draw(st.integers(1, 5)),
        resident_blocks=draw(st.integers(1, 4)), issue_limit=issue_limit, schedulers=schedulers,
        warp_path=warp_path,
        warp_issue_interval=draw(st.sampled_from([Fraction(1), Fraction(1, 2), Fraction(2)])),
        block_launch_overhead=draw(st.sampled_from([Fraction(0), Fraction(1), Fraction(5, 2)])),
        warp_launch_overhead=draw(st.sampled_from([Fraction(0), Fraction(1, 2)])),
        block_launch_interval=draw(st.sampled_from([Fraction(0), Fraction(0), Fraction(3), Fraction(7, 2)])),
        extra_slots=extra)
    return d, draw(st.sampled_from(["lrr", "gto"]))


@settings(max_examples=300, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(kernels())
def test_simulator_matches_oracle(case: tuple[KernelDescription, str]) -> None:
    d, policy = case
    try:
        expected = run_oracle(d, policy)
    except SimulationError:
        with pytest.raises(SimulationError):
            simulate(d, policy=policy)
        return
    result = simulate(d, policy=policy)
    assert result.cycles == expected.cycles
    trace = result.trace
    assert trace is not None
    assert result.instructions_issued == sum(len(v) for v in expected.issues.values())
    for warp, rows in expected.issues.items():
        mine = trace.issues[trace.issues["warp"] == warp]
        assert [int(i) for i in mine["instr"]] == [i for i, _ in rows], f"warp {warp} order"
        assert [Fraction(x).limit_denominator(1000) for x in mine["issue"]] == [t for _, t in rows]


@st.composite
def kernels_with_schedulers(draw: st.DrawFn) -> tuple[KernelDescription, str]:
    """The kernels above on an SM of 2 or 4 schedulers, each issuing for its own warp slots."""
    d, policy = draw(kernels())
    schedulers = draw(st.sampled_from([2, 4]))
    # and some subsystems each scheduler has its own copy of
    own = frozenset(name for name in d.subsystems if draw(st.booleans()))
    return d.with_changes(issue_limit=schedulers * draw(st.sampled_from([1, 1, 2])), schedulers=schedulers,
                          scheduler_subsystems=own), policy


@settings(max_examples=200, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(kernels_with_schedulers())
def test_simulator_matches_oracle_with_schedulers(case: tuple[KernelDescription, str]) -> None:
    test_simulator_matches_oracle.hypothesis.inner_test(case)


def test_a_scheduler_issues_for_its_own_warps_only() -> None:
    """Blocks where warp 0 does the work, on an SM of 4 schedulers (bench/micro/warp_schedulers.cu,
    docs/pipeline.md "Schedulers"). Blocks of 2 warps: every block's warp 0 is on an even slot, so 2 schedulers of 4
    issue and the SM runs at half the rate of one shared pool. Blocks of 4 warps: each block
    started is rotated by one scheduler, so the busy warps spread over all four."""
    from engine.pipeline.description import Loop, Run, StaticInstruction

    work = StaticInstruction(name="fma", unit=0, lam=Fraction(1, 4), Lam=Fraction(1))

    def kernel(warps: int) -> KernelDescription:
        idle = (1,) * (warps - 1)
        return KernelDescription(instructions=(work,), subsystems=("alu",),
                                 paths=((Loop((Run((0,)),), 400),), (Run((0,)),)), warp_path=(0, *idle),
                                 warps_per_block=warps, blocks=8, resident_blocks=8, issue_limit=4)

    for warps, slowdown in ((2, 2.0), (4, 1.0)):
        d = kernel(warps)
        pooled = simulate(d).cycles
        split = simulate(d.with_changes(schedulers=4)).cycles
        assert pooled == pytest.approx(8 * 400 / 4, rel=0.02)
        assert split == pytest.approx(slowdown * 8 * 400 / 4, rel=0.02)
        assert run_oracle(d.with_changes(schedulers=4)).cycles == split


def test_a_scheduler_feeds_only_its_own_pipe() -> None:
    """Blocks of 2 warps where warp 0 runs independent MUFU operations (λ 2 on the SM: 16 lanes;
    bench/micro/pipe_schedulers.cu). One SM-wide pipe is fed in full by the two busy schedulers;
    a pipe per scheduler (4 lanes each) leaves two of four idle: twice the time, as measured
    (1.99 on the H200). With 4-warp blocks the rotation spreads warp 0 over all four."""
    from engine.pipeline.description import Loop, Run, StaticInstruction

    mufu = StaticInstruction(name="rsqrt", unit=0, lam=Fraction(2), Lam=Fraction(17))

    def kernel(warps: int, own: frozenset[str]) -> KernelDescription:
        idle = (1,) * (warps - 1)
        return KernelDescription(instructions=(mufu,), subsystems=("sfu",), schedulers=4,
                                 scheduler_subsystems=own,
                                 paths=((Loop((Run((0,)),), 200),), (Run((0,)),)), warp_path=(0, *idle),
                                 warps_per_block=warps, blocks=8, resident_blocks=8, issue_limit=4)

    shared = simulate(kernel(2, frozenset())).cycles
    own = simulate(kernel(2, frozenset({"sfu"}))).cycles
    assert shared == pytest.approx(8 * 200 * 2, rel=0.02)
    assert own == pytest.approx(2 * 8 * 200 * 2, rel=0.02)
    assert run_oracle(kernel(2, frozenset({"sfu"}))).cycles == own
    assert simulate(kernel(4, frozenset({"sfu"}))).cycles == pytest.approx(8 * 200 * 2, rel=0.02)
    # the trace and the busy time name the subsystem, not the scheduler's copy
    result = simulate(kernel(2, frozenset({"sfu"})))
    assert result.trace is not None and set(result.trace.issues["subsystem"].tolist()) == {0}
    assert result.aggregates.unit_busy_cycles["sfu"] == pytest.approx((8 * 200 + 8) * 2)  # + the idle warps' one


def test_oracle_counts_enough_cases() -> None:
    """The property above really runs ≥ 200 distinct kernels (guards against a vacuous strategy)."""
    seen: set[str] = set()

    @settings(max_examples=300, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(kernels())
    def collect(case: tuple[KernelDescription, str]) -> None:
        seen.add(repr(case))

    collect()
    assert len(seen) >= 200


def test_a_request_waits_for_the_level_behind_it() -> None:
    """Two warps issue one load each on an idle LSU (at 0 and 1: its λ is 1): each keeps DRAM busy
    100 cycles, so the second waits there until 100 and its result comes at 1 + 500 + 99, 100
    cycles after the first's. Loads that need 1 cycle of L2 each do not wait."""
    def kernel(levels: tuple[float, float]) -> KernelDescription:
        load = StaticInstruction(name="ld", unit=0, lam=Fraction(1), Lam=Fraction(500), memory=True,
                                 level_lam=levels)
        return KernelDescription(instructions=(load,), subsystems=("ldst",), paths=((Run((0,)),),),
                                 warps_per_block=2, blocks=1, resident_blocks=1, issue_limit=None,
                                 block_launch_overhead=Fraction(0), warp_launch_overhead=Fraction(0))
    assert simulate(kernel((0.0, 100.0))).cycles == 1 + 500 + 99
    assert simulate(kernel((0.0, 100.0))).cycles == run_oracle(kernel((0.0, 100.0))).cycles
    assert simulate(kernel((1.0, 0.0))).cycles == 501


def test_a_wait_leaves_the_newest_groups_pending() -> None:
    """One warp copies, commits, copies again (at 2), commits, then waits (at 4). Each copy keeps
    DRAM busy 100 cycles and takes 300 more: the first completes at 300, the second, queued at
    DRAM until 100, at 400. ``wait_group 1`` waits for the older group only, so the instruction
    that reads the wait issues at 300; ``wait_group 0`` waits for both: 400, and the kernel ends
    a cycle later."""
    def kernel(pending: int) -> KernelDescription:
        copy = StaticInstruction(name="cp.async", unit=0, lam=Fraction(1), Lam=Fraction(300), memory=True,
                                 level_lam=(0.0, 100.0), async_op=1)
        commit = StaticInstruction(name="commit", unit=0, lam=Fraction(1), Lam=Fraction(1), async_op=2)
        wait = StaticInstruction(name="wait", unit=0, lam=Fraction(1), Lam=Fraction(1), memory=True,
                                 async_op=3, async_n=pending)
        use = StaticInstruction(name="use", unit=1, lam=Fraction(1), Lam=Fraction(1), deps=(3,))
        return KernelDescription(instructions=(copy, commit, copy, wait, use), subsystems=("ldst", "alu"),
                                 paths=((Run((0, 1, 2, 1, 3, 4)),),), warps_per_block=1, blocks=1,
                                 resident_blocks=1, issue_limit=None, block_launch_overhead=Fraction(0),
                                 warp_launch_overhead=Fraction(0))
    older, both = kernel(1), kernel(0)
    assert run_oracle(older).issues[0][-1] == (4, 300)
    assert run_oracle(both).issues[0][-1] == (4, 400)
    assert simulate(older).cycles == run_oracle(older).cycles == 400
    assert simulate(both).cycles == run_oracle(both).cycles == 401
