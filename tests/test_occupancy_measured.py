"""The occupancy calculator against Nsight Compute's occupancy limits measured on an H100.

``samples/measured/h100`` holds what ``tools/device/measure.sh`` measured: ncu's CSV and the
order in which the sample launches ran (ncu numbers launches in that order).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from engine.ncu import load_ncu_csv
from engine.occupancy import occupancy
from engine.profiles import load_profile

MEASURED = Path(__file__).resolve().parents[1] / "samples" / "measured"
RUNS = ("h100", "h100-run2")  # run2 adds launches limited by dynamic shared memory


def measured_launches():
    pairs = []
    for run in RUNS:
        launches = load_ncu_csv(MEASURED / run / "ncu_cycles.csv")
        with open(MEASURED / run / "launch_order.csv", newline="") as handle:
            order = list(csv.DictReader(handle))
        assert len(order) == len(launches)
        pairs += zip(order, launches, strict=True)
    return pairs


def test_measurements_cover_enough_launches():
    pairs = measured_launches()
    keys = {row["key"] for row, _ in pairs}
    assert len(keys) >= 5
    assert any("@smem=" in key for key in keys)
    for row, launch in pairs:
        # The join by order is right: ncu's grid/block are the ones the runner launched.
        assert "x".join(map(str, launch.block)) == row["block"]
        assert "x".join(map(str, launch.grid)) == row["grid"]


@pytest.mark.parametrize("row, launch", measured_launches()[::3],
                         ids=lambda v: v["key"] if isinstance(v, dict) else "")
def test_resident_blocks_match_nsight_compute(row, launch):
    profile = load_profile("h100")
    threads = launch.block[0] * launch.block[1] * launch.block[2]
    regs = int(launch.metrics["launch__registers_per_thread"])
    smem = int(launch.metrics["launch__shared_mem_per_block_static"]
               + launch.metrics["launch__shared_mem_per_block_dynamic"])
    ours = occupancy(profile, threads, regs, smem)
    assert ours.blocks_per_sm == launch.occupancy_blocks(), (row["key"], ours.limits, launch.metrics)
    # The limits that do not depend on the driver's shared-memory carve-out match one by one.
    assert ours.limits["registers"] == launch.metrics["launch__occupancy_limit_registers"]
    assert ours.limits["warps"] == launch.metrics["launch__occupancy_limit_warps"]
    assert ours.limits["block_slots"] == launch.metrics["launch__occupancy_limit_blocks"]
    if "@smem=" in row["key"]:
        # Launches sized to be limited by shared memory: the driver's carve-out then is the
        # largest, so that limit must match too, and it must be the one that binds.
        assert ours.limiter == "shared_memory"
        assert ours.limits["shared_memory"] == launch.metrics["launch__occupancy_limit_shared_mem"]
