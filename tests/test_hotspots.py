"""Source hot spots (engine.evaluation.hotspots): the simulated issue and stall warp-cycles charged
to every instruction, PTX line and CUDA line add up to the run's resident warp-cycles."""

from __future__ import annotations

import pytest

from engine.evaluation import Evaluator, state_for
from engine.evaluation.hotspots import NO_LOC, hotspots
from engine.evaluation.verdict import explain
from engine.inputs import resolve_inputs
from tests.test_gui_support import HOTSPOT, ROOT


@pytest.fixture(scope="module", params=["hotspot", "mm"])
def evaluation(request):
    path = HOTSPOT if request.param == "hotspot" else ROOT / "samples" / "ptx" / "mm.sm_90.ptx"
    inputs = resolve_inputs(path, profile="h100")
    return Evaluator().evaluate(inputs, state_for(inputs))


def test_attribution_sums_to_the_total(evaluation):
    h = hotspots(evaluation)
    sim = evaluation.simulation
    agg = sim.aggregates
    resident = sim.instructions_issued + sum(v for c, v in agg.stall_cycles.items()
                                             if c not in ("not_resident", "finished"))
    assert h.total == pytest.approx(resident, rel=1e-9)
    assert h.total == pytest.approx(explain(evaluation).resident_warp_cycles, rel=1e-9)
    assert h.issue_cycles.sum() == sim.instructions_issued
    for lines in (h.ptx_lines, h.cuda_lines):
        assert sum(x.total for x in lines) == pytest.approx(h.total, rel=1e-9)
        numbers = sorted(n for x in lines for n in x.instructions)
        assert numbers == list(range(1, len(h.issue_cycles) + 1)), "every instruction on exactly one line"
        assert [x.total for x in lines] == sorted((x.total for x in lines), reverse=True)
    # each PTX line is the line of its instructions
    function = evaluation.analysis.function
    for x in h.ptx_lines[:5]:
        assert {function.instructions[n - 1].location.line for n in x.instructions} == {x.line}
    assert sum(h.share(n) for n in range(1, len(h.issue_cycles) + 1)) == pytest.approx(1.0)


def test_cuda_lines_come_from_loc(evaluation):
    h = hotspots(evaluation)
    hottest = h.cuda_lines[0]
    assert hottest.file != NO_LOC and hottest.file.endswith(".cu") and hottest.line > 0
    assert hottest.stall_cycles > 0
