"""The model registry drives every listing: a model added with one register() call shows up in
predict, sweep, the predictions CSV, the ``models`` command and the window's results table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli import main
from engine.evaluation import ModelSpec, evaluate, model_ids, register, unregister
from engine.evaluation.prediction_report import predictions_csv
from engine.evaluation.registry import FAMILY_ANALYTICAL, CurveStyle
from engine.inputs import resolve_inputs

ROOT = Path(__file__).resolve().parents[1]
HOTSPOT = ROOT / "samples" / "ptx" / "hotspot.sm_90.ptx"


def _issue_bound(ctx) -> float:  # noqa: ANN001 - ModelContext
    """A toy model: every warp instruction of the SM's share issued back to back (issue limit)."""
    d = ctx.require_description()
    return d.total_warp_instructions() / d.issue_limit


@pytest.fixture()
def toy_model():
    spec = register(ModelSpec("issue_bound", "Issue bound", FAMILY_ANALYTICAL,
                              "Every warp instruction issued back to back at the issue limit.",
                              _issue_bound, CurveStyle("#000000")))
    yield spec
    unregister(spec.id)


def test_a_registered_model_appears_everywhere(toy_model, capsys, tmp_path):
    assert "issue_bound" in model_ids()
    assert main(["predict", str(HOTSPOT), "--profile", "h100", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    entry = out["models"]["issue_bound"]
    assert entry["title"] == "Issue bound" and entry["sm_cycles"] > 0
    assert entry["kernel_cycles"] == pytest.approx(entry["sm_cycles"] + out["launch_cycles"])
    assert main(["sweep", str(HOTSPOT), "--profile", "h100", "--blocks", "1:2", "--json"]) == 0
    sweep = json.loads(capsys.readouterr().out)
    assert "issue_bound_kernel_cycles" in sweep["columns"]
    ev = evaluate(resolve_inputs(HOTSPOT, profile="h100"), trace=False)
    assert "issue_bound" in predictions_csv(ev).splitlines()[-1]
    assert main(["models"]) == 0
    assert "issue_bound — Issue bound (analytical)" in capsys.readouterr().out


def test_the_window_lists_a_registered_model(toy_model, qtbot, tmp_path, monkeypatch):
    from tests.test_gui_support import make_window

    window = make_window(qtbot, tmp_path, monkeypatch)
    table = window.results_panel.table
    titles = [table.item(k, 0).text() for k in range(table.rowCount())]
    assert "Issue bound" in titles
    assert "issue_bound" in window.results_panel.curves
    row = titles.index("Issue bound")
    assert "back to back" in table.item(row, 0).toolTip()


def test_ids_are_unique_and_unknown_models_are_refused():
    with pytest.raises(ValueError, match="registered already"):
        register(ModelSpec("pipeline", "x", FAMILY_ANALYTICAL, "x", _issue_bound, CurveStyle("#000")))
    with pytest.raises(SystemExit) as stop:      # argparse: usage and the valid model ids
        main(["predict", str(HOTSPOT), "--model", "nope"])
    assert stop.value.code == 2
