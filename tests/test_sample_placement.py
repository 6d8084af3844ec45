"""Where the sampled blocks sit in the grid (engine.execution.sampling) and what the spread blocks
stand for in the path mix (engine.pipeline.traced.grid_weights)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from engine.execution.sampling import _ctaid, _spread_blocks, choose_blocks
from engine.pipeline.traced import grid_weights


def test_the_window_sits_in_the_middle_of_every_dimension() -> None:
    # 16 rows: the linear middle is block (0, 8), the first of a row; the window is at x = 256
    sample = choose_blocks((512, 16, 1), 40)
    measured = [c for c, m in zip(sample.ctaid, sample.measured, strict=True) if m]
    assert measured and all(c[1] == 8 and 250 <= c[0] <= 275 for c in measured)
    # an odd number of rows, or a 1-D grid: the middle as before
    assert [c for c, m in zip(choose_blocks((100, 1, 1), 20).ctaid, choose_blocks((100, 1, 1), 20).measured,
                                strict=True) if m][0][0] == 50


def test_spread_blocks_cover_every_dimension_evenly() -> None:
    blocks = [_ctaid(b, (512, 16, 1)) for b in _spread_blocks((512, 16, 1), 8)]
    assert sorted(c[0] for c in blocks) == [32, 96, 160, 224, 288, 352, 416, 480]
    assert len({c[1] for c in blocks}) == 8                    # and 8 different rows
    cube = [_ctaid(b, (8, 8, 8)) for b in _spread_blocks((8, 8, 8), 8)]
    assert len({c[0] for c in cube}) == len({c[1] for c in cube}) == 8 and len({c[2] for c in cube}) >= 6


def _execution(roles: list[str], grid_blocks: int) -> SimpleNamespace:
    sample = SimpleNamespace(role=tuple(roles), whole=False, grid_blocks=grid_blocks)
    return SimpleNamespace(sample=sample)


def test_spread_blocks_stand_for_the_grid_where_work_follows_the_place() -> None:
    roles = ["window"] * 12 + ["spread"] * 4
    # a triangular loop over the blocks' x: the window (middle) does mid work, the spread
    # blocks span it; their mean differs from the window's only by the window's own scatter
    window = np.full(12, 100.0) + np.arange(12)
    even = grid_weights(_execution(roles, 4096), np.concatenate([window, [20.0, 80.0, 140.0, 200.0]]))
    assert (even == 1).all()
    # work that grows with the place (the window at the small end): the spread blocks carry the grid
    skewed = grid_weights(_execution(roles, 4096), np.concatenate([window, [300.0, 600.0, 900.0, 1200.0]]))
    assert (skewed[:12] == 1).all() and (skewed[12:] == (4096 - 12) / 4).all()
    # work that varies with the data alike everywhere: every block counts the same
    rng = np.random.default_rng(1)
    noisy = rng.normal(100.0, 20.0, 16)
    assert (grid_weights(_execution(roles, 4096), noisy) == 1).all()


def test_the_grids_first_and_last_blocks_do_not_tilt_the_mix() -> None:
    # a 1-D grid's last block is often partial: its little work is no sign of work by place
    roles = ["window"] * 12 + ["end"] * 2 + ["spread"] * 4
    totals = np.concatenate([np.full(12, 100.0), [100.0, 7.0], np.full(4, 100.0)])
    assert (grid_weights(_execution(roles, 4096), totals) == 1).all()
    sample = choose_blocks((4096, 1, 1), 64)
    assert [c[0] for c, r in zip(sample.ctaid, sample.role, strict=True) if r == "end"] == [0, 4095]
