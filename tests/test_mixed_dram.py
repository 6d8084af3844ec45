"""DRAM loaded by traffic that writes (mechanism mixed_dram_load): the curves measured beside
streams that write a third and a half of their bytes, their place in the profiles and the schema,
and the latency solve reading them at the launch's share of bytes written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.errors import ProfileError
from engine.evaluation import Evaluator, state_for
from engine.inputs import resolve_inputs
from engine.mechanisms import without
from engine.pipeline.dram_under_load import curve_for_writes, extra_latency
from engine.profiles import SHIPPED_DIR, load_profile, parse_profile
from tests.micro_script import make_profile_module

ROOT = Path(__file__).resolve().parents[1]
V2 = ROOT / "samples" / "v2"


def _evaluate(family: str, config: str, profile: str = "h100"):
    inputs = resolve_inputs(V2 / "ptx" / f"{family}.sm_90.ptx", profile=profile,
                            launch_file=V2 / f"{family}.launch.toml", config=config)
    return Evaluator().evaluate(inputs, state_for(inputs), trace=False)


@pytest.fixture(scope="module")
def saxpy():
    """y = a x + y: two loads and a store per element, DRAM-bound."""
    return _evaluate("gridstride", "gs_saxpy/g528-b256")


# ---- the profiles ---------------------------------------------------------------------------------

@pytest.mark.parametrize("key", ["h100", "h200"])
def test_profiles_carry_the_mixed_curves_derived_from_the_raw_runs(key) -> None:
    script = make_profile_module()
    pipeline = load_profile(key).pipeline
    assert pipeline.dram_loaded_mixed == tuple(
        (round(share, 4), curve) for share, curve in script.derive_mixed(script.GPUS[key].results("mixed")))
    assert [share for share, _ in pipeline.dram_loaded_mixed] == [0.3333, 0.5]
    for _, curve in pipeline.dram_loaded_mixed:
        shares = [u for u, _ in curve]
        # traffic that writes saturates DRAM below the reading streams' peak
        assert shares[0] == 0 and shares == sorted(shares) and 0.75 < shares[-1] < 0.9
        # ... and at 40 % of it a read already waits longer than beside reads alone
        assert extra_latency(curve, 0.4) > extra_latency(pipeline.dram_loaded, 0.4) + 90


def test_the_raw_runs_show_reads_waiting_longer_beside_writes() -> None:
    """The H100 run itself: at about 2.2 TB/s the chase waits +130 cycles beside reads (read
    between the runs' points), +330 beside a third written, +510 beside half written."""
    script = make_profile_module()
    runs = [script.load_run(script.GPUS["h100"].results("mixed") / f"run{k}.csv") for k in (1, 2)]

    def extra_at(prefix: str, gbps: float) -> float:
        points = script._loaded_points(runs, prefix)
        idle = points[0][1]
        for (g0, l0), (g1, l1) in zip(points, points[1:], strict=False):
            if g0 <= gbps <= g1:
                return l0 + (l1 - l0) * (gbps - g0) / (g1 - g0) - idle
        raise AssertionError(f"{gbps} GB/s outside the {prefix or 'read'} run")

    read, rrw, copy = (extra_at(p, 2200) for p in ("", "rrw_", "copy_"))
    assert read < 200 < rrw < copy
    assert 300 < rrw < 380 and 450 < copy < 560


# ---- the curve for a share written ----------------------------------------------------------------

READING = ((0.0, 0.0), (0.5, 100.0), (1.0, 1000.0))
THIRD = ((0.0, 0.0), (0.5, 300.0), (0.8, 2000.0))
HALF = ((0.0, 0.0), (0.5, 500.0), (0.7, 2500.0))
MIXED = ((1 / 3, THIRD), (0.5, HALF))


def test_the_curve_at_a_measured_share_is_that_curve() -> None:
    for written, curve in ((0.0, READING), (1 / 3, THIRD), (0.5, HALF)):
        at = curve_for_writes(READING, MIXED, written)
        for share in (0.0, 0.25, 0.5, 0.6, 0.75, 0.9, 1.0):
            assert at(share) == pytest.approx(extra_latency(curve, share))


def test_between_two_measured_shares_the_curve_is_straight_and_beyond_the_last_it_is_the_last() -> None:
    # a sixth written: halfway between the reading curve and a third written
    at = curve_for_writes(READING, MIXED, 1 / 6)
    assert at(0.5) == pytest.approx((100.0 + 300.0) / 2)
    # 5/12 written: halfway between a third and a half
    assert curve_for_writes(READING, MIXED, 5 / 12)(0.5) == pytest.approx((300.0 + 500.0) / 2)
    # writes only: nothing measured there (one writing warp per block saturates DRAM), so half
    assert curve_for_writes(READING, MIXED, 1.0)(0.6) == pytest.approx(extra_latency(HALF, 0.6))
    # no mixed curve: the reading one at every share written
    assert curve_for_writes(READING, (), 0.4)(0.5) == pytest.approx(100.0)


def test_more_writes_never_shorten_the_wait_in_the_shipped_profiles() -> None:
    for key in ("h100", "h200"):
        pipeline = load_profile(key).pipeline
        for share in (0.2, 0.4, 0.6):
            waits = [curve_for_writes(pipeline.dram_loaded, pipeline.dram_loaded_mixed, w)(share)
                     for w in (0.0, 0.1, 0.25, 1 / 3, 0.45, 0.5)]
            assert waits == sorted(waits), (key, share, waits)


# ---- the schema -----------------------------------------------------------------------------------

def _mixed_tables(text: str) -> list[str]:
    return re.findall(r"(?ms)^\[\[pipeline\.dram_loaded_mixed\]\]\n.*?\n\n", text)


def _with_second_table(key: str, literal: str) -> str:
    text = (SHIPPED_DIR / "h100.toml").read_text()
    second = _mixed_tables(text)[1]
    return text.replace(second, re.sub(rf"(?m)^{key} = .*$", f"{key} = {literal}", second))


@pytest.mark.parametrize(("key", "literal", "phrase"), [
    ("write_share", "0", "> 0"),
    ("write_share", "1.5", "<= 1"),
    ("write_share", "0.3333", "appears twice"),
    ("write_share", '"half"', "must be a number"),
    ("bandwidth_share", "[0, 0.1, 0.2, 0.5, 0.4, 0.7, 0.8]", "must rise strictly"),
    ("extra_Lam", "[0, 1, 2]", "3 values for 7"),
    ("extra_Lam", "[0, 50, 40, 60, 70, 80, 90]", "must not fall"),
])
def test_a_bad_mixed_table_is_refused_at_its_own_key_and_line(key, literal, phrase) -> None:
    text = _with_second_table(key, literal)
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "bad.toml")
    assert info.value.key == f"pipeline.dram_loaded_mixed.{key}"
    assert phrase in info.value.message
    # the line of the second table's key, not the first's
    lines = text.splitlines()
    assert lines[info.value.line - 1].startswith(f"{key} = {literal}")


def test_the_mixed_tables_are_optional_and_must_be_an_array_of_tables() -> None:
    text = (SHIPPED_DIR / "h100.toml").read_text()
    plain = text
    for table in _mixed_tables(text):
        plain = plain.replace(table, "")
    assert parse_profile(plain, "plain.toml").pipeline.dram_loaded_mixed == ()
    single = plain.replace("[pipeline.blocks]\n", "[pipeline.dram_loaded_mixed]\nwrite_share = 0.5\n"
                           "bandwidth_share = [0, 0.5]\nextra_Lam = [0, 100]\n\n[pipeline.blocks]\n")
    with pytest.raises(ProfileError) as info:
        parse_profile(single, "single.toml")
    assert "array of tables" in info.value.message


# ---- the solve ------------------------------------------------------------------------------------

def test_the_solve_reads_the_curve_for_the_share_the_launch_writes(saxpy) -> None:
    under_load = saxpy.dram_under_load
    traffic = saxpy.traffic
    written = traffic.dram_write_bytes / (traffic.dram_read_bytes + traffic.dram_write_bytes)
    # a third of saxpy's bytes are stores, less those L2 still holds dirty when it ends
    assert 0.2 < written < 1 / 3
    assert under_load is not None and under_load.written_share == pytest.approx(written)
    assert f"{100 * written:.0f} % written" in under_load.describe()
    assert under_load.to_json()["written_share"] == pytest.approx(written)
    with without(["mixed_dram_load"]):
        reading = _evaluate("gridstride", "gs_saxpy/g528-b256")
    assert reading.dram_under_load is not None and reading.dram_under_load.written_share == 0
    # beside its own writes a load waits longer, and the launch takes longer
    assert under_load.extra_cycles > reading.dram_under_load.extra_cycles + 100
    assert saxpy.models["pipeline"].sm_cycles > 1.1 * reading.models["pipeline"].sm_cycles


def test_a_launch_that_only_reads_is_unchanged() -> None:
    ev = _evaluate("reduction", "reduce_warp_shfl/g528-b256")
    assert ev.traffic.dram_write_bytes < 0.01 * ev.traffic.dram_read_bytes
    with without(["mixed_dram_load"]):
        off = _evaluate("reduction", "reduce_warp_shfl/g528-b256")
    assert ev.models["pipeline"].sm_cycles == pytest.approx(off.models["pipeline"].sm_cycles, rel=0.01)
