"""Accesses whose lanes' addresses are hashed (not affine, not through loaded indices) are gathers
to the cache simulation and scatters to the memory model (AccessInfo.irregular): checked on an
l2_kinds microbenchmark launch measured on the H100 (bench/micro_model_check.py prints them all,
hashed RED and stores included)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
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
    loads = [a for a in ev.memory.accesses if a.kind.name == "LOAD" and a.space is MemorySpace.GLOBAL]
    assert loads and all(a.random_lines and not a.data_dependent for a in loads)
    dram = ev.traffic.dram_read_bytes + ev.traffic.dram_write_bytes
    assert dram == pytest.approx(377.1e6, rel=0.2)
    assert ev.traffic.l2_hit_rate < 0.5



def _log(requests: list[list[int]], instruction: int = 5):
    """A run's request log: one request per list of lines, all of ``instruction``."""
    from types import SimpleNamespace

    owner = np.repeat(np.arange(len(requests)), [len(r) for r in requests])
    log = {"request_instruction": np.full(len(requests), instruction, dtype=np.int64),
           "entry_request": owner.astype(np.int64),
           "entry_line": np.array([line for r in requests for line in r], dtype=np.int64)}
    return SimpleNamespace(log=log)


def test_lines_at_a_stride_are_not_random_lines_drawn_at_random_are():
    from engine.caches import randomly_placed

    rng = np.random.default_rng(7)
    strided = [[base + 32 * k for k in range(32)] for base in range(0, 6400, 64)]     # a column read
    drawn = [sorted(rng.choice(1 << 20, size=32, replace=False).tolist()) for _ in range(100)]
    assert randomly_placed(_log(strided), frozenset({5})) == frozenset()
    assert randomly_placed(_log(drawn), frozenset({5})) == frozenset({5})
    # requests of fewer lines than it takes to tell say nothing; an instruction not asked about neither
    assert randomly_placed(_log([r[:4] for r in drawn]), frozenset({5})) == frozenset()
    assert randomly_placed(_log(drawn), frozenset({6})) == frozenset()
