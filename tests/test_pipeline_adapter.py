"""PTX front end: a real kernel through analysis, profile costs and the simulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.analysis import analyze_kernel
from engine.errors import ModelError
from engine.launch import load_launch_file
from engine.pipeline import (
    PipelineOverrides,
    describe_kernel,
    predict_all,
    ratio_memory_cost,
    simulate_kernel,
)
from engine.pipeline.description import Loop
from engine.profiles import load_profile
from engine.ptx import load_ptx

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


@pytest.fixture(scope="module")
def mm() -> tuple[object, object, dict[str, object]]:
    module = load_ptx(SAMPLES / "ptx" / "mm.sm_90.ptx")
    launches = {launch.name: launch for launch in load_launch_file(SAMPLES / "mm.launch.toml").launches}
    return module, load_profile("h100"), launches


def test_tile_loop_becomes_one_loop_node_with_its_trip_count(mm) -> None:
    module, profile, launches = mm
    launch = launches["case"]
    d = describe_kernel(module, launch.kernel, profile, launch)
    loops = [node for node in d.paths[0] if isinstance(node, Loop)]
    assert [loop.count for loop in loops] == [10]            # wA / TILE = 320 / 32
    assert d.warps_per_block == 32
    assert d.blocks == -(-200 // profile.device.sm_count)    # the busiest SM's share
    assert any(x.barrier for x in d.instructions)
    assert any(x.memory and x.deps for x in d.instructions)
    assert not d.notes                                        # every trip count was inferred


def test_simulate_kernel_and_overrides(mm) -> None:
    module, profile, launches = mm
    launch = launches["tile16-1024"]
    base = simulate_kernel(module, launch.kernel, profile, launch, trace=False)
    assert base.instructions_issued == base.description.total_warp_instructions()
    # a slower global load makes the kernel slower; a trip-count override halves the work
    slow = simulate_kernel(module, launch.kernel, profile, launch, trace=False,
                           overrides=PipelineOverrides(costs={"ld.global": (None, 2000.0)}))
    assert slow.cycles > base.cycles
    function = next(f for f in module.functions if f.name == launch.kernel)
    trips = analyze_kernel(function, launch, module).trip_counts
    key = next(k for k, t in trips.items() if t.value == 64)   # the tile loop: 1024 / 16
    half = simulate_kernel(module, launch.kernel, profile, launch, trace=False,
                           overrides=PipelineOverrides(trip_counts={key: 32}))
    assert half.instructions_issued < base.instructions_issued
    one_block = simulate_kernel(module, launch.kernel, profile, launch, occupancy=1, trace=False)
    assert one_block.cycles > base.cycles


def test_predict_all_gives_every_model(mm) -> None:
    module, profile, launches = mm
    launch = launches["case"]
    out = predict_all(module, launch.kernel, profile, launch)
    assert {"pipeline", "roofline", "volkov", "mwp_cwp", "wfg_star", "gpumech_gto"} <= set(out)
    assert all(p.cycles > 0 for p in out.values())
    assert out["pipeline"].cycles >= out["roofline"].cycles * (1 - 1e-9)


def test_unknown_kernel_is_refused(mm) -> None:
    module, profile, launches = mm
    with pytest.raises(ModelError, match="no kernel"):
        describe_kernel(module, "nope", profile, launches["case"])


def test_memory_mapper_g_changes_memory_costs_only(mm) -> None:
    module, profile, launches = mm
    launch = launches["case"]
    base = describe_kernel(module, launch.kernel, profile, launch)
    conflicted = describe_kernel(module, launch.kernel, profile, launch, overrides=PipelineOverrides(
        memory_cost=ratio_memory_cost(profile, dram_ratio=2.0, conflict_degree=3.0)))
    changed = [i for i, (a, b) in enumerate(zip(base.instructions, conflicted.instructions, strict=True))
               if (a.lam, a.Lam) != (b.lam, b.Lam)]
    assert changed and all(base.instructions[i].memory for i in changed)
    shared = [i for i in changed if "shared" in base.instructions[i].name]
    assert shared and all(conflicted.instructions[i].lam > base.instructions[i].lam for i in shared)
