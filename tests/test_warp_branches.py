"""Branches whose guard depends on the thread index (mechanism warp_branches): each warp goes the
way all its lanes go, so the warps of a block may run different paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.analysis.values import LaunchValues
from engine.analysis.warp_branches import WarpBranches
from engine.evaluation import Evaluator, state_for
from engine.inputs import resolve_inputs
from engine.mechanisms import without

V2 = Path(__file__).resolve().parents[1] / "samples" / "v2"


def _inputs(family: str, config: str, kernel: str | None = None):
    return resolve_inputs(V2 / "ptx" / f"{family}.sm_90.ptx", profile="h100", kernel=kernel,
                          launch_file=V2 / f"{family}.launch.toml", config=config)


def _evaluate(family: str, config: str, kernel: str | None = None):
    # the static path walk (the fallback when the sampled warps cannot run) is what these test
    inputs = _inputs(family, config, kernel)
    with without(["execution"]):
        return Evaluator().evaluate(inputs, state_for(inputs), trace=False)


@pytest.fixture(scope="module")
def tiled():
    """A 32 x 8 tile with a one-point halo: warp 0 (threadIdx.y == 0) loads the top row, warp 7
    the bottom one, every warp's lanes 0 and 31 the side columns."""
    return _evaluate("stencil2d", "stencil2d_5pt_tiled/b32x8", "stencil2d_5pt_tiled")


def _guarded_branches(inputs) -> dict[int, tuple[bool | None, ...]]:
    from engine.analysis import analyze_kernel

    analysis = analyze_kernel(inputs.function)
    branches = WarpBranches(analysis.function, analysis.defuse, LaunchValues.from_launch(inputs.launch))
    return {i: branches.outcomes(i) for i, ins in enumerate(inputs.function.instructions)
            if ins.opcode == "bra" and ins.guard}


def test_each_warp_goes_the_way_of_its_lanes() -> None:
    ways = list(_guarded_branches(_inputs("stencil2d", "stencil2d_5pt_tiled/b32x8", "stencil2d_5pt_tiled"))
                .values())
    assert all(len(w) == 8 for w in ways)
    # the top halo's branch: warp 0 alone runs the body (skips the branch), the others all skip it
    assert (False, True, True, True, True, True, True, True) in ways
    assert (True, True, True, True, True, True, True, False) in ways
    # the side columns: lane 0 (or 31) of every warp, the others not: divergent in every warp
    assert sum(all(x is None for x in w) for w in ways) >= 2


def test_a_guard_on_the_block_index_is_undecided_for_every_warp() -> None:
    # stencil2d_5pt's bounds test reads blockIdx: no warp can be decided from its thread index
    ways = _guarded_branches(_inputs("stencil2d", "stencil2d_5pt/b32x8", "stencil2d_5pt"))
    assert ways and all(all(x is None for x in w) for w in ways.values())


def test_warps_with_different_ways_run_different_paths(tiled) -> None:
    d = tiled.description
    assert d.warp_path == (0, 1, 1, 1, 1, 1, 1, 2)
    counts = [d.instructions_per_warp(p) for p in range(len(d.paths))]
    # the inner rows load no top or bottom halo
    assert counts[1] < counts[0] and counts[1] < counts[2]


def test_a_one_dimensional_block_decides_warp_zero_alone() -> None:
    """``if (warp == 0)`` (threadIdx.x >> 5): only the first warp reduces the warps' totals."""
    d = _evaluate("reduction", "reduce_warp_shfl/g528-b256").description
    assert d.warp_path is not None and d.warp_path[0] == 0 and set(d.warp_path[1:]) == {1}
    assert d.instructions_per_warp(0) > d.instructions_per_warp(1)


def test_the_outcomes_are_bounded_and_cached() -> None:
    inputs = _inputs("stencil2d", "stencil2d_5pt_tiled/b32x8", "stencil2d_5pt_tiled")
    from engine.analysis import analyze_kernel

    analysis = analyze_kernel(inputs.function)
    branches = WarpBranches(analysis.function, analysis.defuse, LaunchValues.from_launch(inputs.launch))
    index = next(i for i, ins in enumerate(inputs.function.instructions) if ins.opcode == "bra" and ins.guard)
    first = branches.outcomes(index)
    assert branches.outcomes(index) is first
    # no block size: nothing to decide
    none = WarpBranches(analysis.function, analysis.defuse, LaunchValues())
    assert none.outcomes(index) == ()
    # a block beyond CUDA's 1,024 threads is not evaluated thread by thread
    big = WarpBranches(analysis.function, analysis.defuse, LaunchValues(block=(2048, 1, 1), grid=(1, 1, 1)))
    assert big.outcomes(index) == ()


def test_a_rebuild_of_the_same_launch_reuses_the_outcomes() -> None:
    """A live edit rebuilds the description: the per-thread evaluation is not run again."""
    from engine.analysis import analyze_kernel
    from engine.analysis.warp_branches import warp_branches_for

    inputs = _inputs("stencil2d", "stencil2d_5pt_tiled/b32x8", "stencil2d_5pt_tiled")
    analysis = analyze_kernel(inputs.function)
    values = LaunchValues.from_launch(inputs.launch)
    first = warp_branches_for(analysis, values)
    assert warp_branches_for(analysis, LaunchValues.from_launch(inputs.launch)) is first
    # another block size is another launch
    other = LaunchValues(args=values.args, block=(32, 4, 1), grid=values.grid)
    assert warp_branches_for(analysis, other) is not first
    # another analysis of the same kernel (a reopened file) is not mistaken for this one
    assert warp_branches_for(analyze_kernel(inputs.function), values) is not first


def test_a_single_wave_launch_counts_every_path_at_the_mean() -> None:
    """One block per SM: the simulated paths take the slowest warp's per-thread trip counts, and
    a counted (mean) path is walked for each warp path, so both tuples line up."""
    # 100 blocks of 256 threads over 3 x 25,600 + 5,000 elements: the first 5,000 threads go round
    # the grid-stride loop 4 times, the others 3
    inputs = resolve_inputs(V2 / "ptx" / "reduction.sm_90.ptx", profile="h100", grid=(100, 1, 1),
                            launch_file=V2 / "reduction.launch.toml", config="reduce_warp_shfl/g528-b256",
                            args={2: 3 * 25600 + 5000})
    executed = Evaluator().evaluate(inputs, state_for(inputs), trace=False).description
    # executed: the largest sampled block's warps, each its own path (warp 0 also runs the
    # block's second shuffle tree)
    assert executed.traced and executed.block_kinds == (tuple(range(8)),) and len(executed.paths) == 8
    assert executed.instructions_per_warp(0) > executed.instructions_per_warp(1)
    with without(["execution"]):     # the per-thread trip counts of the static walk
        d = Evaluator().evaluate(inputs, state_for(inputs), trace=False).description
    assert d.warp_path is not None and len(d.paths) == len(set(d.warp_path)) >= 2
    assert d.counted_paths is not None and len(d.counted_paths) == len(d.paths)
    # the simulated paths run the slowest warp's 4 passes, the counted ones the mean's 3 (ptxas
    # unrolls the loop, so the two may issue as many instructions)
    counted = d.with_changes(paths=d.counted_paths, counted_paths=None)
    for path in range(len(d.paths)):
        assert d.instructions_per_warp(path) >= counted.instructions_per_warp(path)
    assert d.instructions_per_warp(0) > d.instructions_per_warp(1)    # warp 0's second shuffle tree
    d.validate()


def test_a_single_wave_of_unequal_blocks_counts_the_grids_mix() -> None:
    """A triangular loop in one wave (64 blocks of 64 threads, thread i runs i + 1 trips): the
    simulated SM runs the largest block (it sets the time), the launch's totals count the sampled
    blocks' mix of work, about half of the largest block per block."""
    inputs = resolve_inputs(V2 / "ptx" / "triangular.sm_90.ptx", profile="h100",
                            launch_file=V2 / "triangular.launch.toml", config="tri_matvec/b64")
    ev = Evaluator().evaluate(inputs, state_for(inputs), trace=False)
    d = ev.description
    assert d.traced and d.counted_kinds is not None and len(d.counted_kinds) > 1
    d.validate()
    simulated = sum(d.instructions_per_warp(p) * w for p, w in d.block_composition())
    counted = d.total_warp_instructions() / d.blocks
    # the blocks' mean trip count is (n + 1) / 2 of the largest's n: within the sample's steps
    assert 0.4 * simulated < counted < 0.6 * simulated
    # the traffic is weighted with the same mix: far below the largest block's bytes
    mix = d.mean_counts()
    largest = sum(d.dynamic_counts(p) * w for p, w in d.block_composition()) / d.warps_per_block
    loads = [i for i, ins in enumerate(d.instructions) if ins.memory]
    assert all(mix[i] <= largest[i] for i in loads)
    assert sum(mix[i] for i in loads) < 0.6 * sum(largest[i] for i in loads)
    broken = d.with_changes(counted_kinds=((len(d.counted_paths),) * d.warps_per_block,))
    with pytest.raises(Exception, match="counted path"):
        broken.validate()
