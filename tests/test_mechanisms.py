"""Mechanism switches (engine/mechanisms.py): off only inside ``without``, unknown names refused,
and switching one off changes the figures it is responsible for."""

from __future__ import annotations

import pytest

from engine.errors import WarplineError
from engine.mechanisms import MECHANISMS, enabled, without
from tests.test_memory_hierarchy import _load_hit_share, _report


def test_switches_are_scoped_and_names_checked() -> None:
    assert all(enabled(name) for name in MECHANISMS)
    with without(["l1", "schedule"]):
        assert not enabled("l1") and not enabled("schedule") and enabled("grid_share")
    assert enabled("l1") and enabled("schedule")
    with pytest.raises(WarplineError, match="unknown mechanism nope; known: schedule"):
        with without(["nope"]):
            pass


def test_without_l1_row_walk_has_no_l1_hits() -> None:
    from engine.memory.hierarchy import SmContext

    report, profile = _report("strided", "row_sum/b128")
    assert _load_hit_share(report, profile, SmContext()) > 0.8
    with without(["l1"]):
        assert _load_hit_share(report, profile, SmContext()) == 0.0
