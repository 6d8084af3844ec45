"""engine.timeline.activity.group_activity: the heat strip of a collapsed warp group (issue 15, item 2),
per time bucket the share of the group's warps issuing, waiting per stall cause, or idle. No Qt."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.pipeline.trace import ISSUE_DTYPE, STALL_CAUSES, STALL_DTYPE, Trace
from engine.timeline.activity import HEAT_CATEGORIES, group_activity

ROOT = Path(__file__).resolve().parents[1]
CAT = {c: k for k, c in enumerate(HEAT_CATEGORIES)}


def _trace() -> Trace:
    """Three warps over 8 cycles; each warp's issues (one cycle each) and stalls tile the run.

    warp 0 (block 0): issue 0, memory [1, 5), issue 5, finished [6, 8)
    warp 1 (block 0): not resident [0, 2), issue 2, barrier [3, 7), issue 7
    warp 2 (block 1): compute dependency [0, 3), issue 3, issue limit [4, 8)
    """
    issues = [(0, 0, 0, 0, 0.0, 4.0), (0, 0, 1, 0, 5.0, 6.0), (1, 0, 0, 0, 2.0, 3.0),
              (1, 0, 1, 0, 7.0, 8.0), (2, 1, 0, 0, 3.0, 4.0)]
    cause = STALL_CAUSES.index
    stalls = [(0, 1.0, 5.0, cause("memory_dependency")), (0, 6.0, 8.0, cause("finished")),
              (1, 0.0, 2.0, cause("not_resident")), (1, 3.0, 7.0, cause("barrier")),
              (2, 0.0, 3.0, cause("compute_dependency")), (2, 4.0, 8.0, cause("issue_limit"))]
    return Trace(np.array(issues, ISSUE_DTYPE), np.array(stalls, STALL_DTYPE))


def _expected(**shares: float) -> np.ndarray:
    row = np.zeros(len(HEAT_CATEGORIES))
    for name, value in shares.items():
        row[CAT[name]] = value
    return row


def test_shares_match_a_hand_computed_trace():
    activity = group_activity(_trace(), [0, 1])
    assert activity.lanes == 2
    shares = activity.shares(np.array([0.0, 4.0, 8.0]))
    # [0, 4): warp 0 issues 1 cycle and waits on memory 3; warp 1 idles 2, issues 1, barrier 1 (of 8)
    assert shares[0] == pytest.approx(_expected(issuing=2 / 8, memory_dependency=3 / 8, barrier=1 / 8, idle=2 / 8))
    # [4, 8): memory 1, issue 1, finished 2; barrier 3, issue 1
    assert shares[1] == pytest.approx(_expected(issuing=2 / 8, memory_dependency=1 / 8, barrier=3 / 8, idle=2 / 8))
    # buckets need not fall on event times: [0, 2.5) holds 5 warp-cycles
    part = activity.shares(np.array([0.0, 2.5]))[0]
    assert part == pytest.approx(_expected(issuing=1.5 / 5, memory_dependency=1.5 / 5, idle=2 / 5))
    # lane-cycles are exact too, and past the run's end everything is idle
    cycles = activity.lane_cycles(np.array([0.0, 8.0, 10.0]))
    assert cycles[0] == pytest.approx(_expected(issuing=4, memory_dependency=4, barrier=4, idle=4))
    assert activity.shares(np.array([8.0, 10.0]))[0] == pytest.approx(_expected(idle=1.0))


def test_a_group_counts_only_its_own_warps():
    shares = group_activity(_trace(), [2]).shares(np.array([0.0, 4.0, 8.0]))
    assert shares[0] == pytest.approx(_expected(compute_dependency=3 / 4, issuing=1 / 4))
    assert shares[1] == pytest.approx(_expected(issue_limit=1.0))
    # warp slots: the shares are of the group's lanes, so two warps in one slot lane...
    slot = group_activity(_trace(), [0, 2], lanes=1).shares(np.array([0.0, 8.0]))[0]
    assert slot.sum() == pytest.approx(1.0)
    # ...an empty group is idle throughout
    assert group_activity(_trace(), []).shares(np.array([0.0, 8.0]))[0] == pytest.approx(_expected(idle=1.0))


def test_real_trace_shares_sum_to_one_and_agree_with_the_trace():
    from engine.evaluation import evaluate
    from engine.inputs import resolve_inputs

    inputs = resolve_inputs(ROOT / "samples" / "ptx" / "hotspot.sm_90.ptx", use_ptxas=False)
    result = evaluate(inputs)
    trace, cycles = result.simulation.trace, float(result.simulation.cycles)
    warps = np.unique(trace.issues["warp"][trace.issues["block"] == trace.issues["block"][0]])
    activity = group_activity(trace, warps.tolist())
    edges = np.linspace(0.0, cycles, 301)
    shares = activity.shares(edges)
    assert shares.shape == (300, len(HEAT_CATEGORIES))
    assert np.all(shares >= -1e-12) and shares.sum(axis=1) == pytest.approx(np.ones(300))
    # over the whole run: issuing = the group's issues, memory waits = its memory stall cycles
    whole = activity.lane_cycles(np.array([0.0, cycles]))[0]
    mine = np.isin(trace.stalls["warp"], warps)
    memory = trace.stalls[mine & (trace.stalls["cause"] == STALL_CAUSES.index("memory_dependency"))]
    assert whole[CAT["issuing"]] == pytest.approx(np.isin(trace.issues["warp"], warps).sum())
    assert whole[CAT["memory_dependency"]] == pytest.approx(float((memory["end"] - memory["start"]).sum()))
    assert whole.sum() == pytest.approx(len(warps) * cycles)
