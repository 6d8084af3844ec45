"""Many-BSP* counts each row as often as the sampled warps ran it (ManyBspResult.executed_share):
warps that exit early or branch around a loop do not issue its rows."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from engine import api
from engine.evaluation.manybsp_at import manybsp_star_at
from engine.manybsp.from_ptx import executed_shares
from engine.manybsp.rows import Level1Spec

ROOT = Path(__file__).resolve().parents[1]
GEMM = ROOT / "samples" / "v3" / "ptx" / "gemm.sm_90.ptx"


def _execution(executed: list[int], warps: int, ok: bool = True) -> SimpleNamespace:
    return SimpleNamespace(executed=np.array(executed, dtype=np.int64), paths=[np.zeros(1)] * warps, ok=ok,
                           memo={})


def test_share_is_executions_per_warp_over_the_superstep_iterations():
    specs = [Level1Spec(1, 2, 1), Level1Spec(3, 4, 8)]
    # 4 sampled warps: rows 1-2 run by every warp once; the loop rows (8 passes) by half the warps
    shares = executed_shares(specs, _execution([4, 4, 16, 16], warps=4))
    assert shares == {1: 1.0, 2: 1.0, 3: 0.5, 4: 0.5}


def test_no_share_without_a_complete_run():
    specs = [Level1Spec(1, 2, 1)]
    assert executed_shares(specs, None) == {}
    assert executed_shares(specs, _execution([4, 4], warps=4, ok=False)) == {}
    assert executed_shares(specs, _execution([4, 4], warps=0)) == {}


def test_a_superstep_no_warp_runs_costs_its_rows_nothing():
    specs = [Level1Spec(1, 1, 1), Level1Spec(2, 3, 0), Level1Spec(4, 4, 2)]
    shares = executed_shares(specs, _execution([8, 0, 0, 0], warps=8))
    assert shares == {1: 1.0, 4: 0.0}       # iterations 0: skipped; never run: share 0


def test_syrk_lower_upper_triangle_warps_do_not_load():
    """syrk_lower: threads above the diagonal return at once, so about half the grid's warps run
    the k loop; Many-BSP*'s memory work per block is about half of every warp running it."""
    kernel = api.open(GEMM, "syrk_lower", profile="h100", grid=(16, 16, 1), block=(16, 16, 1),
                      args={2: 256, 3: 64, 4: 1.0, 5: 0.5})
    ev = kernel.evaluate(models=["manybsp_star"])
    result = ev.manybsp
    assert result is not None and result.executed_share
    most = max(s.iterations for s in result.level1)
    loop_rows = [s for s in result.level1 if s.iterations == most]
    assert most >= 16, "the k loop (64 passes, 4-fold unrolled in the PTX) is a level-1 superstep"
    shares = [result.executed_share[r] for s in loop_rows for r in range(s.start, s.end + 1)]
    assert 0.4 < float(np.median(shares)) < 0.7
    with_share = manybsp_star_at(result, ev.description, ev.resident_blocks, ev.issue_weights, ev.unroll,
                                 ev.sass_positions)
    every_warp = manybsp_star_at(replace(result, executed_share={}), ev.description, ev.resident_blocks,
                                 ev.issue_weights, ev.unroll, ev.sass_positions)
    ratio = with_share.quantities["memory_per_block"].value / every_warp.quantities["memory_per_block"].value
    assert 0.4 < ratio < 0.7
    assert ev.models["manybsp_star"].sm_cycles == pytest.approx(with_share.kernel_exec_cycle, rel=1e-9)
