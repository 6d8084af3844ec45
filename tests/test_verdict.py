"""The bottleneck verdict (engine.evaluation.verdict): its figures are the simulator's aggregates,
its shares add up, its sentence follows the evidence, and ``predict --explain`` prints the same."""

from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from engine.evaluation import Evaluator, state_for
from engine.evaluation.verdict import ISSUING, OUTSIDE, explain, verdict_from
from engine.inputs import resolve_inputs
from engine.pipeline.trace import STALL_CAUSES
from tests.test_gui_support import HOTSPOT, ROOT


@pytest.fixture(scope="module")
def evaluation():
    inputs = resolve_inputs(HOTSPOT, profile="h100")
    return Evaluator().evaluate(inputs, state_for(inputs))


def test_figures_are_the_simulators_aggregates(evaluation):
    sim = evaluation.simulation
    agg = sim.aggregates
    v = explain(evaluation)
    assert v.cycles == float(sim.cycles)
    assert {u.name: u.utilisation for u in v.units} == pytest.approx(dict(agg.utilisation))
    assert {u.name: u.busy_cycles for u in v.units} == pytest.approx(dict(agg.unit_busy_cycles))
    by_cause = {c.cause: c.warp_cycles for c in v.causes}
    assert by_cause[ISSUING] == sim.instructions_issued
    for cause in STALL_CAUSES:
        assert by_cause[cause] == pytest.approx(float(agg.stall_cycles[cause]))
    # every warp is accounted for in every cycle
    d = evaluation.description
    assert sum(by_cause.values()) == pytest.approx(d.blocks * d.warps_per_block * float(sim.cycles))
    assert v.warps == d.blocks * d.warps_per_block
    resident = [c for c in v.causes if c.cause not in OUTSIDE]
    assert sum(c.share for c in resident) == pytest.approx(1.0)
    assert v.resident_warp_cycles == pytest.approx(sum(c.warp_cycles for c in resident))
    # memory levels: the requests the simulation issued to the report's accesses of that space
    glob = next(m for m in v.memory if m.level == "global")
    loads = [a.index for a in evaluation.memory.accesses if str(a.space.value).lower() == "global"]
    assert glob.requests == int(np.sum(agg.issue_count[loads])) > 0
    assert v.sentence and v.limiter and v.evidence


def _sim(utilisation: dict[str, float], stalls: dict[str, float], issued: int, cycles: float):
    agg = SimpleNamespace(utilisation=utilisation, unit_busy_cycles={k: u * cycles for k, u in utilisation.items()},
                          stall_cycles={c: stalls.get(c, 0.0) for c in STALL_CAUSES},
                          issue_count=np.zeros(1), average_wait=np.zeros(1))
    return SimpleNamespace(aggregates=agg, cycles=cycles, instructions_issued=issued)


def test_sentence_names_the_limit():
    saturated = verdict_from(_sim({"alu": 0.93, "ldst": 0.2}, {"subsystem_busy": 500.0}, 100, 1000.0))
    assert saturated.limiter == "unit:alu" and "ALU (int/FP32)" in saturated.sentence
    assert "93%" in saturated.sentence
    memory = verdict_from(_sim({"alu": 0.3, "ldst": 0.4}, {"memory_dependency": 800.0, "barrier": 100.0,
                                                          "not_resident": 5000.0}, 100, 1000.0))
    assert memory.limiter == "memory_dependency" and "memory latency" in memory.sentence.lower()
    assert "80%" in memory.sentence        # 800 of 1,000 resident warp-cycles; not-resident time left out
    issue = verdict_from(_sim({"alu": 0.3}, {"barrier": 10.0}, 900, 1000.0))
    assert issue.limiter == "issue"


def test_predict_explain_text_and_json(evaluation):
    args = [sys.executable, str(ROOT / "main.py"), "predict", str(HOTSPOT), "--profile", "h100", "--explain"]
    text = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert text.returncode == 0, text.stderr
    v = explain(evaluation)
    assert f"Bottleneck: {v.sentence}" in text.stdout
    out = subprocess.run(args + ["--json", "--model", "manybsp"], capture_output=True, text=True, timeout=300,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)["explain"]
    assert data["verdict"] == v.sentence and data["limiter"] == v.limiter
    assert {u["name"]: u["utilisation"] for u in data["subsystems"]} == pytest.approx(
        {u.name: u.utilisation for u in v.units})


def test_sectors_per_request_weigh_each_access_by_its_requests():
    """A loop's one-sector loads issued 20 times beside one coalesced load (4 sectors) and one
    store (4): 1.33 sectors per request, not the accesses' plain mean of 3."""
    from engine.units import MemorySpace
    agg = SimpleNamespace(utilisation={"ldst": 0.5}, unit_busy_cycles={"ldst": 50.0},
                          stall_cycles={c: 0.0 for c in STALL_CAUSES},
                          issue_count=np.array([20, 1, 1]), average_wait=np.zeros(3))
    sim = SimpleNamespace(aggregates=agg, cycles=100.0, instructions_issued=22)
    accesses = [SimpleNamespace(index=i, space=MemorySpace.GLOBAL, sectors_per_request=s, efficiency=1.0)
                for i, s in enumerate((1.0, 4.0, 4.0))]
    glob = next(m for m in verdict_from(sim, SimpleNamespace(accesses=accesses)).memory if m.level == "global")
    assert glob.requests == 22
    assert glob.sectors_per_request == pytest.approx(28 / 22)
