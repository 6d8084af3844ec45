"""DRAM loaded by gathers (mechanism scattered_dram_load): the measured curve beside gathering
warps in the profiles, which bytes count as scattered, and the latency solve reading both curves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.errors import ProfileError
from engine.evaluation import Evaluator, state_for
from engine.inputs import resolve_inputs
from engine.mechanisms import without
from engine.pipeline.dram_under_load import extra_latency, queue_cycles
from engine.pipeline.simulator import simulate
from engine.profiles import SHIPPED_DIR, load_profile, parse_profile
from tests.micro_script import make_profile_module

ROOT = Path(__file__).resolve().parents[1]
V2 = ROOT / "samples" / "v2"


def _evaluate(family: str, config: str, profile: str = "h100", kernel: str | None = None):
    inputs = resolve_inputs(V2 / "ptx" / f"{family}.sm_90.ptx", profile=profile, kernel=kernel,
                            launch_file=V2 / f"{family}.launch.toml", config=config)
    return Evaluator().evaluate(inputs, state_for(inputs), trace=False)


@pytest.fixture(scope="module")
def gather_low():
    """A random gather at 16 warps per SM: latency-bound, DRAM at half its scattered limit."""
    return _evaluate("gather", "gather_f32/rand-b256-smem100k")


def test_profiles_carry_the_scattered_curve_derived_from_the_raw_runs() -> None:
    script = make_profile_module()
    GPUS, derive_scattered = script.GPUS, script.derive_scattered
    _ncu_dram_per_sector_byte = script._ncu_dram_per_sector_byte
    for key, saturated in (("h100", 0.61), ("h200", 0.54)):
        gpu = GPUS[key]
        curve = load_profile(key).pipeline.dram_loaded_scattered
        assert curve == derive_scattered(gpu.results("scattered"), gpu.results("loaded"))
        # ncu: a 64-byte DRAM read per isolated sector, less the few L2 holds
        assert 1.85 < _ncu_dram_per_sector_byte(gpu.results("scattered") / "ncu_run1.csv") < 2.0
        shares = [u for u, _ in curve]
        assert shares[0] == 0 and shares == sorted(shares)
        assert shares[-1] == pytest.approx(saturated, abs=0.01)
        # gathers wait longer than streams at the same bandwidth
        streaming = load_profile(key).pipeline.dram_loaded
        assert extra_latency(curve, 0.3) > extra_latency(streaming, 0.3) + 100


def _with_scattered(shares: str, extra: str) -> str:
    text = (SHIPPED_DIR / "h100.toml").read_text()
    section = re.search(r"(?ms)^\[pipeline\.dram_loaded_scattered\]\n.*?\n\n", text)
    assert section is not None
    body = re.sub(r"(?m)^bandwidth_share = .*$", f"bandwidth_share = {shares}", section.group(0))
    body = re.sub(r"(?m)^extra_Lam = .*$", f"extra_Lam = {extra}", body)
    return text.replace(section.group(0), body)


def test_a_scattered_curve_may_end_below_the_streaming_peak() -> None:
    profile = parse_profile(_with_scattered("[0, 0.3, 0.6]", "[0, 100, 900]"), "ok.toml")
    assert profile.pipeline.dram_loaded_scattered == ((0.0, 0.0), (0.3, 100.0), (0.6, 900.0))


@pytest.mark.parametrize(("shares", "extra", "key", "phrase"), [
    ("[0, 0.5, 1.2]", "[0, 1, 2]", "bandwidth_share", "<= 1"),
    ("[0.1, 0.5]", "[0, 5]", "bandwidth_share", "at most 1"),
    ("[0, 0.5]", "[0, 50, 20]", "extra_Lam", "3 values for 2"),
    ("[0, 0.4, 0.5]", "[0, 50, 20]", "extra_Lam", "must not fall"),
])
def test_a_bad_scattered_curve_is_refused_with_its_key(shares, extra, key, phrase) -> None:
    with pytest.raises(ProfileError) as info:
        parse_profile(_with_scattered(shares, extra), "bad.toml")
    assert info.value.key == f"pipeline.dram_loaded_scattered.{key}"
    assert phrase in info.value.message


def test_only_gathers_count_as_scattered_bytes(gather_low) -> None:
    traffic = gather_low.traffic
    # the gathered words are most of the reads; the index stream is not scattered
    assert 0.7 * traffic.dram_read_bytes < traffic.dram_scattered_bytes < traffic.dram_read_bytes
    assert _evaluate("gridstride", "gs_saxpy/g528-b256").traffic.dram_scattered_bytes == 0
    # a tile's halo columns fetch isolated sectors too, but in address order: not scattered
    tiled = _evaluate("stencil2d", "stencil2d_5pt_tiled/b32x8", kernel="stencil2d_5pt_tiled")
    assert tiled.traffic.dram_scattered_bytes == 0


def test_the_solve_reads_both_curves_by_the_scattered_share(gather_low) -> None:
    under_load = gather_low.dram_under_load
    pipeline = gather_low.profile.pipeline
    mix = gather_low.traffic.dram_scattered_bytes / (gather_low.traffic.dram_read_bytes
                                                     + gather_low.traffic.dram_write_bytes)
    assert under_load is not None and under_load.scattered_share == pytest.approx(mix)
    assert "scattered" in under_load.describe() and under_load.to_json()["scattered_share"] == pytest.approx(mix)
    sim = simulate(gather_low.description.with_dram_delay(under_load.extra_cycles), trace=False)
    measured = ((1 - mix) * extra_latency(pipeline.dram_loaded, under_load.bandwidth_share)
                + mix * extra_latency(pipeline.dram_loaded_scattered, under_load.bandwidth_share))
    gap = measured - queue_cycles(gather_low.description, sim) - under_load.extra_cycles
    assert abs(gap) <= 0.01 * (pipeline.memory["dram_Lam"] + under_load.extra_cycles)
    with without(["scattered_dram_load"]):
        streaming = _evaluate("gather", "gather_f32/rand-b256-smem100k")
    assert streaming.dram_under_load is not None and streaming.dram_under_load.scattered_share == 0
    assert under_load.extra_cycles > streaming.dram_under_load.extra_cycles + 200
    assert gather_low.models["pipeline"].sm_cycles > 1.2 * streaming.models["pipeline"].sm_cycles



def test_a_gathers_lone_sectors_move_no_faster_than_the_scattered_saturation() -> None:
    """gather_f32 at full occupancy is bound by DRAM's bandwidth: its lone-sector fetches (one
    random word per lane, 64 bytes read) keep DRAM busy 1 / 0.61 times as long as streamed bytes,
    where the scattered curve measured DRAM saturate; affine accesses and stores are charged as
    before."""
    from engine.memory.hierarchy import scattered_rate_factor

    profile = load_profile("h100")
    saturation = max(share for share, _ in profile.pipeline.dram_loaded_scattered)
    assert 0.55 < saturation < 0.65
    ev = _evaluate("gather", "gather_f32/rand-b256")
    gathered = [a for a in ev.memory.accesses if a.kind == "load" and a.method != "affine"]
    affine = [a for a in ev.memory.accesses if a.method == "affine"]
    assert gathered and affine
    assert scattered_rate_factor(gathered[0], 2.0, profile) == pytest.approx(1 / saturation)
    assert scattered_rate_factor(gathered[0], 1.5, profile) == pytest.approx(0.5 + 0.5 / saturation)
    assert scattered_rate_factor(gathered[0], 1.0, profile) == 1.0
    assert scattered_rate_factor(affine[0], 2.0, profile) == 1.0
    with without(["scattered_dram_load"]):
        assert scattered_rate_factor(gathered[0], 2.0, profile) == 1.0
        streaming = _evaluate("gather", "gather_f32/rand-b256")
    # DRAM-bound: the time follows the slower rate of the gathered bytes
    assert ev.models["pipeline"].sm_cycles > 1.3 * streaming.models["pipeline"].sm_cycles


def test_only_gathers_over_their_whole_buffer_move_at_the_scattered_rate() -> None:
    """seg_sum_thread (v2x): each thread walks its own segment, so a warp's lanes fetch lone
    sectors, but a block's segments lie together and DRAM streams their pages: with the caches
    simulated it is charged as streamed. gather_f32's random indices reach the whole table."""
    from engine.memory.hierarchy import scattered_rate_factor, simulated
    from engine.pipeline.adapter import sm_context

    v2x = ROOT / "samples" / "v2x"
    inputs = resolve_inputs(v2x / "ptx" / "segments.sm_90.ptx", profile="h100", kernel="seg_sum_thread",
                            launch_file=v2x / "segments.launch.toml", config="seg_sum_thread/b256")
    walk = Evaluator().evaluate(inputs, state_for(inputs), trace=False)
    gather = _evaluate("gather", "gather_f32/rand-b256")
    for ev, random, module in ((walk, False, inputs.module), (gather, True, None)):
        if module is None:
            module = resolve_inputs(V2 / "ptx" / "gather.sm_90.ptx", profile="h100",
                                    launch_file=V2 / "gather.launch.toml", config="gather_f32/rand-b256").module
        sm = sm_context(ev.analysis, ev.profile, ev.run_launch, module, ev.resident_blocks, ev.memory)
        loads = [a for a in ev.memory.accesses if a.kind == "load" and a.method != "affine" and a.executed]
        assert loads
        sim = simulated(loads[0], sm)
        assert sim is not None
        assert any(a.index in sim.caches.random_gathers for a in loads) == random
        factors = [scattered_rate_factor(a, 2.0, ev.profile, simulated(a, sm)) for a in loads]
        assert (max(factors) > 1.5) == random
