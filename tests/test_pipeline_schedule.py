"""Issue order inside a block (engine/pipeline/schedule.py): loads go first, no ordering the
program needs is broken, and the simulated time of a load-use chain shrinks accordingly."""

from __future__ import annotations

from collections.abc import Callable

from engine.analysis import analyze_kernel
from engine.launch import Launch
from engine.pipeline import describe_kernel, simulate
from engine.pipeline.adapter import PipelineOverrides
from engine.pipeline.description import Run
from engine.pipeline.schedule import block_issue_order
from engine.profiles import load_profile
from engine.ptx import parse_ptx

HEADER = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<8>;
	.reg .f32 	%f<16>;
	.reg .b64 	%rd<8>;
	ld.param.u64 	%rd1, [k_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
"""

UNROLLED_SUM = HEADER + """
	mov.f32 	%f1, 0f00000000;
	ld.global.nc.f32 	%f2, [%rd2];
	add.f32 	%f3, %f1, %f2;
	ld.global.nc.f32 	%f4, [%rd2+4096];
	add.f32 	%f5, %f3, %f4;
	ld.global.nc.f32 	%f6, [%rd2+8192];
	add.f32 	%f7, %f5, %f6;
	st.global.f32 	[%rd2+12288], %f7;
	ret;
}
"""


def _order(ptx: str) -> tuple[list[str], tuple[int, ...]]:
    module = parse_ptx(ptx)
    function = module.functions[0]
    analysis = analyze_kernel(function, None, module)
    n = len(function.instructions)
    order = block_issue_order(function.instructions, analysis.classifications,
                              [500.0 if "ld.global" in i.text else 4.0 for i in function.instructions], 0, n)
    return [" ".join(i.text.split()) for i in function.instructions], order


def _issue_position(ptx: str) -> Callable[[str], int]:
    """When (its place in the issue order) the instruction written as ``text`` issues."""
    texts, order = _order(ptx)
    position = {index: p for p, index in enumerate(order)}
    return lambda text: position[texts.index(text)]


def test_independent_loads_issue_before_their_uses() -> None:
    texts, order = _order(UNROLLED_SUM)
    assert sorted(order) == list(range(len(texts)))
    loads = [k for k, t in enumerate(texts) if t.startswith("ld.global")]
    adds = [k for k, t in enumerate(texts) if t.startswith("add.f32")]
    position = {index: p for p, index in enumerate(order)}
    assert max(position[k] for k in loads) < min(position[k] for k in adds)
    assert texts[order[-1]] == "ret;"                       # control flow stays last
    assert position[adds[0]] < position[adds[1]] < position[adds[2]]   # the chain keeps its order
    store = next(k for k, t in enumerate(texts) if t.startswith("st.global"))
    assert position[store] > position[adds[2]]


def test_loads_do_not_pass_stores_that_may_alias_nor_barriers() -> None:
    ptx = HEADER + """
	ld.global.f32 	%f2, [%rd2];
	add.f32 	%f3, %f2, %f2;
	st.global.f32 	[%rd2+4], %f3;
	ld.global.f32 	%f4, [%rd2+8];
	bar.sync 	0;
	ld.global.nc.f32 	%f5, [%rd2+12];
	add.f32 	%f6, %f4, %f5;
	st.global.f32 	[%rd2+16], %f6;
	ret;
}
"""
    when = _issue_position(ptx)
    first_store = when("st.global.f32 [%rd2+4], %f3;")
    second_load = when("ld.global.f32 %f4, [%rd2+8];")
    barrier = when("bar.sync 0;")
    nc_load = when("ld.global.nc.f32 %f5, [%rd2+12];")
    assert second_load > first_store   # a plain load may read what was stored
    assert barrier > second_load
    assert nc_load > barrier            # nothing crosses a barrier


def test_stores_order_only_the_state_spaces_they_may_touch() -> None:
    # a tile staged in shared memory (transpose, tiled GEMM): each thread's global loads are
    # free to pass the shared stores written between them, as ptxas hoists them above the STS;
    # a generic store may touch global memory, so the load after it stays after it
    ptx = HEADER + """
	.shared .align 4 .b8 tile[1024];
	mov.u32 	%r1, tile;
	ld.global.f32 	%f2, [%rd2];
	st.shared.f32 	[%r1], %f2;
	ld.global.f32 	%f3, [%rd2+128];
	st.shared.f32 	[%r1+128], %f3;
	ld.shared.f32 	%f4, [%r1+4];
	st.f32 	[%rd2+256], %f4;
	ld.global.f32 	%f5, [%rd2+384];
	st.global.f32 	[%rd2+512], %f5;
	ret;
}
"""
    when = _issue_position(ptx)
    assert when("ld.global.f32 %f3, [%rd2+128];") < when("st.shared.f32 [%r1], %f2;")   # the loads go first
    # a shared load after shared stores; a generic store may alias the global load after it
    assert when("ld.shared.f32 %f4, [%r1+4];") > when("st.shared.f32 [%r1+128], %f3;")
    assert when("ld.global.f32 %f5, [%rd2+384];") > when("st.f32 [%rd2+256], %f4;")


def test_write_after_read_is_kept() -> None:
    ptx = HEADER + """
	ld.global.f32 	%f2, [%rd2];
	add.f32 	%f3, %f1, 0f3F800000;
	ld.global.nc.f32 	%f1, [%rd2+4];
	add.f32 	%f4, %f3, %f1;
	st.global.f32 	[%rd2+8], %f4;
	ret;
}
"""
    when = _issue_position(ptx)
    # %f1 is read before it is overwritten
    assert when("ld.global.nc.f32 %f1, [%rd2+4];") > when("add.f32 %f3, %f1, 0f3F800000;")


def test_scheduled_path_hides_latency_that_the_written_order_exposes() -> None:
    module = parse_ptx(UNROLLED_SUM)
    profile = load_profile("h100")
    launch = Launch(grid=(1, 1, 1), block=(32, 1, 1))
    written = describe_kernel(module, "k", profile, launch, overrides=PipelineOverrides(schedule=False))
    scheduled = describe_kernel(module, "k", profile, launch)
    run_written = [n for n in written.paths[0] if isinstance(n, Run)]
    run_scheduled = [n for n in scheduled.paths[0] if isinstance(n, Run)]
    assert sorted(run_written[0].instructions) == sorted(run_scheduled[0].instructions)
    assert run_written[0].instructions != run_scheduled[0].instructions
    t_written = simulate(written, trace=False).cycles
    t_scheduled = simulate(scheduled, trace=False).cycles
    # three dependent load latencies (different lines: no cache hits) against about one
    assert t_scheduled < 0.6 * t_written
    assert simulate(written, trace=False).instructions_issued == simulate(scheduled, trace=False).instructions_issued


def test_ptxas_order_is_the_priority_among_instructions_free_to_go() -> None:
    module = parse_ptx(UNROLLED_SUM)
    function = module.functions[0]
    analysis = analyze_kernel(function, None, module)
    texts = [" ".join(i.text.split()) for i in function.instructions]
    n = len(texts)
    latencies = [500.0 if "ld.global" in t else 4.0 for t in texts]
    # ptxas put each load just before its add (SASS positions); the mov it folded has none
    where = {k: float(k) for k in range(n) if not texts[k].startswith("mov")}
    sass = [where.get(k) for k in range(n)]
    order = block_issue_order(function.instructions, analysis.classifications, latencies, 0, n, sass)
    assert list(order) == list(range(n))                  # the written order, as ptxas kept it
    # positions that put the last load first move it ahead of the others, and no further: every
    # ordering the program needs still holds (the store stays after the adds)
    last_load = max(k for k in range(n) if texts[k].startswith("ld.global"))
    sass[last_load] = -1.0
    order = block_issue_order(function.instructions, analysis.classifications, latencies, 0, n, sass)
    position = {index: p for p, index in enumerate(order)}
    assert position[last_load] < min(position[k] for k in range(n) if texts[k].startswith("ld.global")
                                     and k != last_load)
    store = next(k for k in range(n) if texts[k].startswith("st.global"))
    assert all(position[k] < position[store] for k in range(n) if texts[k].startswith("add.f32"))


def test_unrolled_copies_take_the_sass_position_of_their_own_copy() -> None:
    from engine.pipeline.adapter import _PathBuilder

    builder = _PathBuilder.__new__(_PathBuilder)
    builder.deps = None
    # PTX instructions unrolled 4 times: the first has one SASS copy per PTX iteration, the
    # second two SASS instructions in its second copy, the third none in its last copy
    builder.sass_positions = {1: (10, 20, 30, 40), 2: (11, 21, 22, 31, 41), 3: (12, 22, 32)}
    copies = [(c, i) for c in range(4) for i in (1, 2, 3)]
    order = builder._sass_order(copies)
    assert order[0::3] == [10, 20, 30, 40]
    assert order[1::3] == [11, 21, 31, 41]
    assert order[2::3] == [12, 22, 32, 42]                # copy 3 at its copy's place + offset 2
    # a loop ptxas rotated: the first copy of instruction 1 went to the previous pass, so its
    # three copies here are copies 1-3, each just before its consumer's (instruction 2 reads 1)
    builder.deps = [(), (), (1,)]
    builder.sass_positions = {1: (19, 29, 39), 2: (11, 21, 31, 41)}
    order = builder._sass_order([(c, i) for c in range(4) for i in (1, 2)])
    assert order[0::2] == [10.5, 19, 29, 39]
    builder.sass_positions = {}
    assert builder._sass_order(copies) is None
