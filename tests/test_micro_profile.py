"""The measured H100 profile against the raw microbenchmark results it was made from.

``bench/micro/results/h100-2026-11-22`` holds two independent runs of ``bench/micro/micro.cu``
on the lent H100 (``run1.csv``, ``run2.csv``). Every figure ``profiles/h100.toml`` uses must
agree within 5% between the runs (known exceptions listed with their reason), and the profile
must be exactly what ``bench/micro/make_profile.py`` writes from those files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.profiles import load_profile
from tests.micro_script import make_profile_module

ROOT = Path(__file__).resolve().parents[1]
TOLERANCE_PCT = 5.0

# Figures whose two runs differ by more than 5%, with the reason. Strict xfail: when a new
# measurement agrees, the test fails until the entry is removed.
KNOWN_VARIABLE = {
    "launch.warp_lnch_ovh": (
        "a slope of 2.4-2.7 cycles per warp fitted through per-block wave costs of 153-178 cycles: "
        "the 1024-thread point alone moves by 1.1% between runs (event timing of empty kernels), "
        "which moves the slope by 12%; block_lnch_ovh, the intercept, agrees within 1%"
    ),
}


MP = make_profile_module()
FIGURES = MP.derive(MP.DEFAULT_RESULTS) | MP.derive_half(MP.GPUS["h100"].results("half"))  # packed half: a later run
USED = MP.used_figures(FIGURES, MP.DEFAULT_RESULTS)


def test_two_runs_of_the_h100_are_stored():
    results = MP.DEFAULT_RESULTS
    for name in ("run1.csv", "run2.csv", "env.txt", "sass_summary.txt"):
        assert (results / name).is_file(), name
    env = (results / "env.txt").read_text()
    assert "H100" in env and "Driver" in env
    run1 = MP.load_run(results / "run1.csv")
    run2 = MP.load_run(results / "run2.csv")
    assert run1.keys() == run2.keys()
    assert len(FIGURES) > 60
    assert len(USED) > 60 and USED <= FIGURES.keys()
    assert "launch.block_lnch_ovh" in USED and "issue_limit" in USED


def _agreement_params():
    for key in sorted(USED):
        fig = FIGURES[key]
        marks = []
        if key in KNOWN_VARIABLE:
            marks = [pytest.mark.xfail(strict=True, reason=KNOWN_VARIABLE[key])]
        yield pytest.param(fig, id=key, marks=marks)


@pytest.mark.parametrize("fig", list(_agreement_params()))
def test_runs_agree_within_five_percent(fig):
    assert abs(fig.diff_pct) <= TOLERANCE_PCT, f"{fig.key}: {fig.run1} vs {fig.run2} ({fig.diff_pct:+.2f}%)"


def test_profile_is_what_make_profile_writes(tmp_path):
    out = tmp_path / "h100.toml"
    assert MP.main([str(MP.DEFAULT_RESULTS), "-o", str(out)]) == 0
    shipped = (ROOT / "profiles" / "h100.toml").read_text(encoding="utf-8")
    assert out.read_text(encoding="utf-8") == shipped, "regenerate: .venv/bin/python bench/micro/make_profile.py"
    load_profile(out)  # and it validates


def test_h200_profile_is_what_make_profile_writes(tmp_path):
    results = ROOT / "bench" / "micro" / "results" / "h200-2026-11-23"
    out = tmp_path / "h200.toml"
    assert MP.main([str(results), "--gpu", "h200", "-o", str(out)]) == 0
    shipped = (ROOT / "profiles" / "h200.toml").read_text(encoding="utf-8")
    assert out.read_text(encoding="utf-8") == shipped, \
        "regenerate: .venv/bin/python bench/micro/make_profile.py bench/micro/results/h200-2026-11-23 --gpu h200"
    h200 = load_profile(out)
    assert h200.device.memory_bandwidth_gbps == 4800 and "H100" not in h200.device.name
    assert h200.device.kernel_launch_cycles > 0       # measured: samples/measured/h200-empty


def test_profile_numbers_are_the_measured_means():
    h100 = load_profile("h100")
    value = {k: f.value for k, f in FIGURES.items()}
    m = h100.pipeline.memory
    assert h100.pipeline.issue_limit == value["issue_limit"]
    assert h100.pipeline.lambda_alu == value["fma_f32.lam"]
    assert h100.pipeline.lambda_sfu == value["ex2_approx_ftz.lam"]
    assert (m["dram_lam"], m["dram_Lam"]) == (value["dram_read.lam"], value["dram.Lam"])
    assert (m["l2_lam"], m["l2_Lam"]) == (value["l2_read.lam"], value["l2.Lam"])
    assert (m["shared_lam"], m["shared_Lam"]) == (value["ld_shared.lam"], value["ld_shared.Lam"])
    assert (m["local_lam"], m["local_Lam"]) == (value["ld_local.lam"], value["ld_local.Lam"])
    assert h100.manybsp.mem_lat == value["dram.Lam"]
    assert h100.manybsp.block_lnch_ovh == value["launch.block_lnch_ovh"]
    assert dict(h100.manybsp.barrier_overhead) == {nt: value[f"bar.{nt}"] for nt in MP.BAR_SIZES}
    checks = {
        "fma.rn.f32": "fma_f32", "add.f32": "add_f32", "mul.rn.f32": "mul_f32", "fma.rn.f64": "fma_f64",
        "add.s32": "add_s32", "mul.lo.u32": "mul_s32", "mad.lo.s32": "mad_s32",
        "cvt.rn.f32.s32": "cvt_f32_s32", "cvt.rzi.s32.f32": "cvt_s32_f32", "cvt.f64.f32": "cvt_f64_f32",
        "sin.approx.f32": "sin_approx", "ex2.approx.ftz.f32": "ex2_approx_ftz",
        "rcp.approx.ftz.f32": "rcp_approx_ftz", "rsqrt.approx.f32": "rsqrt_approx",
        "div.rn.f32": "div_rn_f32", "div.full.f32": "div_full_f32", "div.rn.f64": "div_rn_f64",
        "ld.shared.u32": "ld_shared",
    }
    from engine.units import Unit

    for opcode, key in checks.items():
        cost = h100.cost_for_opcode(opcode, Unit.ALU)
        assert not cost.is_default, opcode
        assert (cost.lam, cost.Lam, cost.lat_comp) == (value[f"{key}.lam"], value[f"{key}.Lam"], value[f"{key}.Lam"])
        assert cost.T == pytest.approx(32 / (cost.lam * 4), abs=0.051)  # T = warp_size / (λ · n_ws)
        assert "bench/micro/results/h100-2026-11-22" in cost.source


def test_costs_name_their_measurement_or_say_they_are_not_measured():
    h100 = load_profile("h100")
    for spec in h100.units.values():
        assert "measured: bench/micro/results/" in spec.source or "not measured" in spec.source
    for rule in h100.rules:
        assert "measured: bench/micro/results/" in rule.source, rule.pattern.text
    assert "measured: bench/micro/results/" in h100.pipeline.source
    assert "NOT measured" in h100.manybsp.source  # mu


@pytest.mark.parametrize("gpu", ["h100", "h200"])
def test_local_memory_rates_are_the_measured_means(gpu):
    local = MP.derive_local(MP.GPUS[gpu].results("local"))
    assert set(local) == {*MP.LOCAL_RATES, "l2_bytes"}
    for fig in local.values():
        assert abs(fig.diff_pct) <= TOLERANCE_PCT, fig.key
    profile = load_profile(gpu)
    for key in MP.LOCAL_RATES:
        assert profile.pipeline.memory[key] == local[key].value
    # a store writes through to L2: several times an L1 load, more with half the lanes
    m = profile.pipeline.memory
    assert m["local_store_partial_lam"] > m["local_store_lam"] > 5 * m["local_l1_lam"]
    assert profile.device.l2_cache_bytes == local["l2_bytes"].value == {"h100": 50, "h200": 60}[gpu] * 2**20
