"""The models against the cycles Nsight Compute measured on an H100 (samples/measured/h100*).

These run without a GPU: the measurements are stored in the repository.
"""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from engine.cli import main
from engine.validation import load_measurements, run_validation

# The launches the module's tests read: every copy and transpose variant (their ranking), and every
# third of the rest in key order, so that the MAPE check spans the suite's kernels. The whole
# suite's figures are bench/validation_report.py's (docs/validation.md); here a third keeps the
# module within a minute on two cores.
_RANKED = ("copy/", "transpose/")


def _sampled(keys: list[str]) -> set[str]:
    rest = sorted(k for k in keys if not k.startswith(_RANKED))
    return {k for k in keys if k.startswith(_RANKED)} | set(rest[::3])


@pytest.fixture(scope="module")
def validation():
    chosen = _sampled(list(load_measurements()))
    return run_validation("h100", only=chosen.__contains__)


def test_suite_has_twelve_kernels_at_three_or_more_configurations():
    kernels = defaultdict(set)
    for m in load_measurements().values():
        kernels[m.sample + "/" + m.config].add(m.key)
    assert sum(1 for keys in kernels.values() if len(keys) >= 3) >= 12
    assert all(len(m.cycles) >= 3 for m in load_measurements().values())


def test_mape_targets(validation, capsys):
    assert len(validation.rows) >= 30
    ranking = dict(validation.ranking())
    with capsys.disabled():
        print("\nMAPE %:", ", ".join(f"{m} {v:.1f}" for m, v in validation.ranking()))
    assert ranking["pipeline"] <= 25.0
    assert min(ranking.values()) <= 20.0
    assert all(validation.covered(m) == len(validation.rows) for m in ("pipeline", "manybsp", "volkov"))


@pytest.mark.parametrize("variants", [
    ("copy/offset0", "copy/offset1", "copy/stride2"),
    ("transpose/padded", "transpose/tiled", "transpose/naive"),
])
def test_memory_variants_rank_as_measured(validation, variants):
    rows = {r.key: r for r in validation.rows}
    measured = sorted(variants, key=lambda k: rows[k].measured)
    predicted = sorted(variants, key=lambda k: rows[k].predicted["pipeline"])
    assert measured == list(variants)
    assert predicted == measured


def test_memory_analysis_is_what_ranks_them():
    # Without the coalescing analysis every transpose variant would cost the same global λ:
    # the naive one (32 lines per store) would not stand out. Check the analysis is in play.
    from engine.inputs import resolve_inputs
    from engine.pipeline import describe_kernel

    inputs = resolve_inputs("samples/ptx/transpose.sm_90.ptx", profile="h100", config="naive")
    with_analysis = describe_kernel(inputs.module, inputs.kernel_name, inputs.profile, inputs.launch)
    without = describe_kernel(inputs.module, inputs.kernel_name, inputs.profile, inputs.launch, memory=None)
    stores = [i for i, x in enumerate(with_analysis.instructions) if x.name.startswith("st.global")]
    assert stores and all(with_analysis.instructions[i].lam > 4 * without.instructions[i].lam for i in stores)


def test_validate_command_json(capsys):
    assert main(["validate", "--only", "knn/case", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {r["configuration"] for r in out["rows"]} == {"knn/case", "knn/case@smem=46080", "knn/case@smem=77824"}
    assert "pipeline" in out["mape_percent"]


def test_predict_imports_ncu_csv(capsys):
    assert main(["predict", "samples/ptx/copy.sm_90.ptx", "--profile", "h100", "--config", "stride2",
                 "--model", "pipeline", "--import-ncu", "samples/measured/h100/ncu_cycles.csv", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["measured_kernel_cycles"] == pytest.approx(138_200, rel=0.05)
    pipeline = out["models"]["pipeline"]
    assert abs(pipeline["error_percent"]) < 25
    assert pipeline["error_percent"] == pytest.approx(
        100 * (pipeline["kernel_cycles"] - out["measured_kernel_cycles"]) / out["measured_kernel_cycles"])


def test_import_ncu_without_the_kernel_is_refused(capsys):
    assert main(["predict", "samples/ptx/copy.sm_90.ptx", "--profile", "h100", "--config", "stride2",
                 "--model", "pipeline", "--import-ncu", "samples/measured/h100-empty/ncu_empty.csv"]) == 2
    assert "no launch of stride_copy" in capsys.readouterr().err


def test_suite_v2_on_both_gpus_reports_the_held_out_part_apart(capsys):
    # every grid-stride launch on the H100, one of each kernel on the H200 (the same code path)
    for gpu, only in (("h100", ["gridstride/"]),
                      ("h200", ["gridstride/gs_saxpy/g1056-b128", "gridstride/gs_copy_float4/g1056-b128"])):
        assert main(["validate", "--suite", "v2", "--profile", gpu, "--only", *only, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        rows = out["rows"]
        assert len(rows) == (8 if gpu == "h100" else 2) and out["suite"] == "v2"
        # gs_copy_float4 is held out (samples/v2/SPLIT.toml), gs_saxpy is not
        assert {r["held_out"] for r in rows if "gs_copy_float4" in r["configuration"]} == {True}
        assert {r["held_out"] for r in rows if "gs_saxpy" in r["configuration"]} == {False}
        assert out["mape_percent_held_out"]["pipeline"] is not None
        for r in rows:
            assert r["measured_warp_instructions"] > 0 and r["predicted_warp_instructions"] > 0
            # grid-stride trip counts: the simulated PTX path is within a factor 2 of ncu's count
            assert 0.5 < r["predicted_warp_instructions"] / r["measured_warp_instructions"] < 2.0


def test_suite_v2_has_no_measurements_for_an_unmeasured_gpu(capsys):
    assert main(["validate", "--suite", "v2", "--profile", "gtx1070"]) == 2
    assert "measured on: h100, h200" in capsys.readouterr().err
