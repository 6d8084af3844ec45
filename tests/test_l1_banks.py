"""An L1-hit request's cost from its banks and tags (mechanism l1_banks), the figure behind it in
the profiles, the spread interior samples of a loop, and the affine evaluator's answers not
depending on what was asked first."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.analysis import LaunchValues, analyze_kernel
from engine.launch import load_launch_file
from engine.mechanisms import without
from engine.memory.access_report import AccessInfo
from engine.memory.affine import AddressEvaluator
from engine.memory.hierarchy import L1_MIN_WAVEFRONTS, l1_request_cycles
from engine.memory.patterns import global_stats, spread
from engine.profiles import load_profile
from engine.ptx import load_ptx
from engine.units import MemorySpace
from tests.micro_script import make_profile_module

ROOT = Path(__file__).resolve().parents[1]


def _request(lanes_line: np.ndarray, lanes_word: np.ndarray) -> AccessInfo:
    """A warp load of one float per lane at (line, word): its stats as the analysis makes them."""
    addresses = lanes_line * 128 + lanes_word * 4
    g = global_stats([addresses], 4)
    return AccessInfo(0, 1, "ld.global.f32", MemorySpace.GLOBAL, 4, None, kind="load",
                      sectors_per_request=g.sectors_mean,
                      lines_per_request=g.lines_mean, l1_bank_degree=g.bank_degree_mean)


LANES = np.arange(32)


@pytest.mark.parametrize("lines, one_bank, spread_banks", [(1, 1, 1), (2, 2, 2), (4, 4, 2), (8, 8, 2),
                                                           (16, 16, 4), (32, 32, 8)])
def test_request_cost_follows_the_busiest_bank_and_a_quarter_cycle_per_tag(lines, one_bank, spread_banks):
    # the linediag benchmark's two layouts: lane l at word l // lines of line l % lines (each line's
    # lanes in the same banks), and at word l of line l % lines (32 banks)
    memory = load_profile("h100").pipeline.memory
    floor = memory["l1_request_lam"]       # a load request's least L1 time (l1_hit_rate.cu)
    same = _request(LANES % lines, LANES // lines)
    diag = _request(LANES % lines, LANES)
    assert same.lines_per_request == diag.lines_per_request == lines
    assert l1_request_cycles(same, memory, 1.0) == max(one_bank, floor)
    assert l1_request_cycles(diag, memory, 1.0) == max(spread_banks, min(lines, L1_MIN_WAVEFRONTS), floor)
    with without(["l1_banks"]):
        assert l1_request_cycles(diag, memory, 1.0) == max(lines, floor)


def test_a_load_request_keeps_l1_at_least_the_measured_floor_and_a_store_does_not():
    memory = load_profile("h200").pipeline.memory
    one_line = _request(np.zeros(32, dtype=np.int64), LANES)
    two_lines = _request(LANES // 16, LANES % 16)
    assert l1_request_cycles(one_line, memory, 1.0) == memory["l1_request_lam"] > 1.0
    assert l1_request_cycles(two_lines, memory, 1.0) == 2.0          # its two wavefronts bind
    store = AccessInfo(0, 1, "st.global.f32", MemorySpace.GLOBAL, 4, None, kind="store",
                       sectors_per_request=4.0, lines_per_request=1.0, l1_bank_degree=1.0)
    assert l1_request_cycles(store, memory, 1.0) == 1.0


def test_a_load_whose_misses_mix_with_hits_pays_their_fills_in_l1_and_a_copy_does_not():
    from engine.memory.hierarchy import LevelShares, SmContext, level_times

    profile = load_profile("h200")
    memory = profile.pipeline.memory
    one_line = _request(np.zeros(32, dtype=np.int64), LANES)
    sm = SmContext()
    hits = LevelShares(1.0, 0.0, 0.0)
    quarter = LevelShares(0.75, 0.25, 0.0)                # a quarter of its sectors from L2
    assert level_times(one_line, hits, profile, sm, (10.0, 500.0))["L1"] == memory["l1_request_lam"]
    mixed = level_times(one_line, quarter, profile, sm, (10.0, 500.0))
    assert mixed["L1"] == pytest.approx(memory["l1_request_lam"] + memory["l1_fill_lam"] * 0.25)
    copy = level_times(one_line, quarter, profile, sm, (10.0, 500.0), fills=False)
    assert copy["L1"] == memory["l1_request_lam"] and copy["L2"] == mixed["L2"]


def test_profiles_carry_the_fill_cost_measured_by_l1_hit_rate_with_l2_resident_misses():
    # every 8th / 4th / 2nd request from an 8 MB table: 1.24 / 1.45 / 1.94 cycles a request, against
    # 1.08 with every request a hit: about 1.7 cycles more per 128 bytes from L2
    script = make_profile_module()
    fill = script.derive_l1_fill_lam()
    assert fill == pytest.approx(1.69, abs=0.05)
    for gpu in ("h100", "h200"):
        assert load_profile(gpu).pipeline.memory["l1_fill_lam"] == fill


def test_profiles_carry_the_request_floor_measured_by_l1_hit_rate():
    # one-line L1 hits at 64 warps per SM: 1.07-1.11 cycles a request on the H200 (two lines: 2.02)
    script = make_profile_module()
    floor = script.derive_l1_request_lam()
    assert floor == pytest.approx(1.09, abs=0.02)
    for gpu in ("h100", "h200"):
        assert load_profile(gpu).pipeline.memory["l1_request_lam"] == floor


def test_profiles_carry_the_tag_rate_measured_by_linediag():
    script = make_profile_module()
    for gpu in ("h100", "h200"):
        figure = script.derive_l1_line_lam(script.GPUS[gpu].results("linediag", "2026-11-25"))
        assert figure is not None and figure.value == pytest.approx(0.25, abs=0.005)
        assert load_profile(gpu).pipeline.memory["l1_line_lam"] == figure.value


def test_interior_samples_take_every_residue_spread_over_the_loop():
    samples = spread(1000, 8)
    interior = [v for v, _ in samples[:-2]]
    assert sorted(v % 8 for v in interior) == list(range(8))
    assert interior[0] == 1 and interior[-1] > 900 and interior == sorted(interior)
    assert sum(w for _, w in samples) == 1000
    assert [v for v, _ in spread(10, 8)] == [1, 2, 3, 4, 5, 6, 7, 8, 0, 9]   # short: every value


def test_affine_forms_do_not_depend_on_what_was_asked_first():
    # wmma_gemm_smem's k loop: k += 16 at its latch. Asking for the latch's own definition first
    # (as the lane-exit test does) used to leave a value of iteration i in the memo, and the
    # induction then no longer saw a constant step.
    launch = load_launch_file(ROOT / "samples/v2/tensorcore.launch.toml").get("wmma_gemm_smem/b128")
    module = load_ptx(ROOT / "samples/v2/ptx/tensorcore.sm_90.ptx")
    function = module.kernel(launch.kernel)
    analysis = analyze_kernel(function, launch, module)
    update = next(i for i in function.instructions if i.text.strip().startswith("add.s32") and "16;" in i.text
                  and analysis.cfg.loop_of(analysis.cfg.block_of(i.index)) is not None)
    register = update.dests[0]
    reader = next(i for i in function.instructions if i.index > update.index and register in i.text)
    fresh = AddressEvaluator(analysis, LaunchValues.from_launch(launch)).register(register, update.index - 1)
    asked = AddressEvaluator(analysis, LaunchValues.from_launch(launch))
    asked.definition(update.index, register)
    asked.register(register, reader.index)
    assert asked.register(register, update.index - 1) == fresh
    assert "i(" in str(fresh)     # an induction variable of the loop


def test_the_lane_evaluators_are_freed_when_the_analysis_ends():
    # they refer to the cache that holds them; left to the cyclic collector, a validation run
    # kept every per-lane array of every kernel (an ablation grew by gigabytes)
    import gc

    from engine.memory import analyze_memory
    from engine.memory.lane_addresses import LaneEvaluator

    launch = load_launch_file(ROOT / "samples/v2x/segments.launch.toml").get("seg_sum_thread/b256")
    module = load_ptx(ROOT / "samples/v2x/ptx/segments.sm_90.ptx")
    analysis = analyze_kernel(module.kernel(launch.kernel), launch, module)
    gc.collect()
    gc.disable()
    try:
        report = analyze_memory(analysis, launch, module)
        # type(), not isinstance(): isinstance asks a dead weak proxy (other tests' objects
        # in the heap) for its __class__, which raises ReferenceError
        alive = sum(1 for o in gc.get_objects() if type(o) is LaneEvaluator)
    finally:
        gc.enable()
    assert report.accesses and alive == 0
