"""Texture fetches on the SM's texture pipe at its measured rate (profile texture_fetch_lam, from
bench/micro/l2_async_tex.cu): where L1 serves a 1-D fetch faster than that rate, the fetch holds
the texture pipe, not the memory pipe that loads and stores share; a fetch that waits on L2 or
DRAM keeps the memory pipe, whose λ carries the bandwidth it shares with them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from engine.launch import load_launch_file
from engine.pipeline import describe_kernel
from engine.pipeline.adapter import TEXTURE_SUBSYSTEM
from engine.profiles import load_profile
from engine.ptx import load_ptx

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


def _launch(suite: str, family: str, name: str):
    return next(x for x in load_launch_file(SAMPLES / suite / f"{family}.launch.toml").launches if x.name == name)


def _tex_units(d) -> list[str]:
    return [d.subsystems[ins.unit] for ins in d.instructions if ins.name.startswith("tex.")]


@pytest.fixture(scope="module")
def h100():
    return load_profile("h100")


def test_the_profiles_rate_is_the_measured_one(h100) -> None:
    assert h100.pipeline.memory["texture_fetch_lam"] == pytest.approx(4.86, abs=0.01)
    assert load_profile("h200").pipeline.memory["texture_fetch_lam"] == pytest.approx(4.86, abs=0.01)


def test_fetches_from_l1_hold_the_texture_pipe(h100) -> None:
    module = load_ptx(SAMPLES / "v3" / "ptx" / "kmeans.sm_90.ptx")
    # a small grid: the launch's features (16 per point) stay in L1 across the cluster loop
    launch = replace(_launch("v3", "kmeans", "kmeans_assign_tex/k16-d16-b256"), grid=(264, 1, 1))
    d = describe_kernel(module, "kmeans_assign_tex", h100, launch)
    units = _tex_units(d)
    # most copies of the unrolled feature loop's fetch find their sectors in L1 (those that
    # bring them in wait on DRAM and stay on the memory pipe)
    assert units.count(TEXTURE_SUBSYSTEM) > len(units) // 2
    on_pipe = [ins for ins in d.instructions
               if ins.name.startswith("tex.") and d.subsystems[ins.unit] == TEXTURE_SUBSYSTEM]
    assert all(float(ins.lam) == pytest.approx(4.86, abs=0.01) for ins in on_pipe)
    # the constant loads beside them stay on the memory pipe
    assert any(d.subsystems[ins.unit] == "ldst" for ins in d.instructions if ins.name.startswith("ld.const"))


def test_fetches_that_wait_on_dram_keep_the_memory_pipe(h100) -> None:
    module = load_ptx(SAMPLES / "v2x" / "ptx" / "texfetch.sm_90.ptx")
    launch = _launch("v2x", "texfetch", "tex1d_stencil3/b256")
    d = describe_kernel(module, "tex1d_stencil3", h100, launch)
    # a warp issues its three fetches back to back (none waits for another's value), the left
    # neighbours first: they bring the warp's line from DRAM (the memory pipe), the centres then
    # find it in L1 (the texture pipe), and the right neighbours reach the first sector of the
    # next warp's line before that warp fetches it, so they wait on DRAM too
    units = _tex_units(d)
    assert units == ["ldst", TEXTURE_SUBSYSTEM, "ldst"]
    memory = next(ins for ins in d.instructions if ins.name.startswith("tex.") and d.subsystems[ins.unit] == "ldst")
    assert float(memory.lam) > 4.86
