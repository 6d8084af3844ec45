"""Accesses whose lanes' addresses are hashed (not affine, not through loaded indices) are gathers
to the cache simulation and scatters to the memory model (AccessInfo.irregular): checked on an
l2_kinds microbenchmark launch measured on the H100 (bench/micro_model_check.py prints them all,
hashed RED and stores included)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import api
from engine.memory.access_report import AccessInfo
from engine.units import MemorySpace

ROOT = Path(__file__).resolve().parents[1]
PTX = ROOT / "bench" / "micro" / "ptx" / "l2_kinds.sm_90.ptx"
GRID = 1056                      # 8 blocks of 256 threads on each of the H100's 132 SMs
WORDS_64MB = (64 << 20) // 4


def _info(**fields) -> AccessInfo:
    return AccessInfo(0, 1, "ld.global.f32", MemorySpace.GLOBAL, 4, None, **fields)


def test_irregular_is_data_dependent_or_not_affine():
    assert not _info(method="affine").irregular
    assert not _info(method="").irregular                 # no pattern at all
    assert _info(method="lanes").irregular                # hashed / wrapped lanes
    assert _info(method="executed").irregular             # addresses only the run found
    assert _info(method="affine", data_dependent=True).irregular


def _evaluate(kernel: str, args: dict[int, int]):
    k = api.open(PTX, kernel, profile="h100", grid=GRID, block=256, args=args)
    return k.evaluate(models=["pipeline"])


def test_a_hashed_gather_over_64_mb_misses_l2_as_measured():
    """k_gather at 64 MB: measured 377 MB from DRAM and 22 % L2 hits; taken for a neighbour walk,
    the simulation kept every re-read in L2 (119 MB, 79 %)."""
    ev = _evaluate("_Z8k_gatherPKfjjPf", {1: WORDS_64MB, 2: 64001})
    dram = ev.traffic.dram_read_bytes + ev.traffic.dram_write_bytes
    assert dram == pytest.approx(377.1e6, rel=0.2)
    assert ev.traffic.l2_hit_rate < 0.5

