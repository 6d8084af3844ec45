"""L1 hits on a line still being filled (engine.caches.replay, mechanism ``inflight_hits``): a load
of a warp that hits sectors another warp of its block missed in the same segment waits for that
fill, as the miss does; Nsight Compute counts it as a hit, and so does the replay."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.caches import CacheConfig, simulate_caches
from engine.execution import Execution
from engine.execution.recorder import LOAD_CACHED, STORE
from engine.execution.sampling import choose_blocks
from engine.mechanisms import without

ROOT = Path(__file__).resolve().parents[1]
LINE = 1 << 40


def _log(lines: list[int], warps: list[int], segments: list[int], kinds: list[int] | None = None) -> Execution:
    """One block's requests of instruction 0, one line each, in this order."""
    n = len(lines)
    kinds = kinds or [LOAD_CACHED] * n
    log = {
        "request_instruction": np.zeros(n, dtype=np.int32), "request_block": np.zeros(n, dtype=np.int32),
        "request_kind": np.array(kinds, dtype=np.int8), "entry_request": np.arange(n, dtype=np.int64),
        "entry_line": np.array(lines, dtype=np.int64), "entry_sectors": np.full(n, 0xF, dtype=np.uint8),
        "entry_bytes": np.array([[0xFFFFFFFF if k == STORE else 0] * 4 for k in kinds], dtype=np.uint32),
        "request_warp": np.array(warps, dtype=np.int32), "request_segment": np.array(segments, dtype=np.int64),
    }
    return Execution("k", choose_blocks((1, 1, 1), 1), 1, paths=[np.zeros(1, dtype=np.int32)],
                     executed=np.ones(1), log=log, grid=(1, 1, 1))


CONFIG = CacheConfig(l1_bytes_per_block=64 << 10, l2_bytes=1 << 24)


def test_other_warps_of_the_segment_wait_for_the_first_ones_fill() -> None:
    """Four warps read one line in one segment: the first misses (DRAM: the line is new), the other
    three hit L1 on the line under way. In a later segment the line is there: real hits."""
    result = simulate_caches(_log([LINE] * 8, [0, 1, 2, 3] * 2, [1] * 4 + [2] * 4), CONFIG)
    assert result.l1_share[0] == pytest.approx(7 / 8)
    from_l2, from_dram = result.l1_waiting_share[0]
    assert from_l2 == 0.0 and from_dram == pytest.approx(3 / 8)


def test_a_fill_from_l2_is_waited_for_as_an_l2_hit() -> None:
    """An uncached load (``ld.global.cg``) brought the line into L2 in an earlier segment, not into
    L1: the first cached load misses L1 and hits L2, and the two hits behind it wait for L2."""
    from engine.execution.recorder import LOAD_UNCACHED
    result = simulate_caches(_log([LINE] * 4, [9, 0, 1, 2], [1, 2, 2, 2],
                                  kinds=[LOAD_UNCACHED] + [LOAD_CACHED] * 3), CONFIG)
    assert result.l1_waiting_share[0] == pytest.approx((2 / 4, 0.0))
    # a store keeps its sectors in L1: the loads after it hit data that is there
    stored = simulate_caches(_log([LINE] * 4, [9, 0, 1, 2], [1, 2, 2, 2], kinds=[STORE] + [LOAD_CACHED] * 3),
                             CONFIG)
    assert 0 not in stored.l1_waiting_share


def test_a_warps_own_second_load_of_the_line_does_not_wait() -> None:
    """The same warp loads the line twice in one segment (two fields of a struct): its consumers
    wait for the first load anyway, so the second counts as a plain hit."""
    result = simulate_caches(_log([LINE, LINE], [0, 0], [1, 1]), CONFIG)
    assert result.l1_share[0] == pytest.approx(0.5)
    assert 0 not in result.l1_waiting_share


def test_waiting_hits_take_the_fills_latency_in_the_simulator() -> None:
    """seg_lookup_bsearch (suite v2x): each warp's search load hits L1 on lines its block's
    other warps are fetching; with the waits, its latency is far above L1's."""
    import engine.api as api
    kernel = api.open(ROOT / "samples" / "v2x" / "ptx" / "segments.sm_90.ptx", profile="h100",
                      launch=ROOT / "samples" / "v2x" / "segments.launch.toml", config="seg_lookup_bsearch/b128")
    search = next(i for i in kernel.evaluate(models=["pipeline"]).description.instructions
                  if i.name.startswith("ld.global.nc.u32"))
    with without(["inflight_hits"]):
        plain = next(i for i in api.open(
            ROOT / "samples" / "v2x" / "ptx" / "segments.sm_90.ptx", profile="h100",
            launch=ROOT / "samples" / "v2x" / "segments.launch.toml",
            config="seg_lookup_bsearch/b128").evaluate(models=["pipeline"]).description.instructions
            if i.name.startswith("ld.global.nc.u32"))
    assert float(search.Lam) > 2.5 * float(plain.Lam)


def test_a_warp_that_misses_itself_in_the_segment_waits_for_its_own_miss() -> None:
    """Warp 1 hits the line warp 0 is filling and misses a line of its own in the same segment
    (a stencil's row below): it waits for its own miss, so its hit counts as a plain one."""
    result = simulate_caches(_log([LINE, LINE, LINE + 1], [0, 1, 1], [1, 1, 1]), CONFIG)
    assert result.l1_share[0] == pytest.approx(1 / 3)
    assert 0 not in result.l1_waiting_share
    alone = simulate_caches(_log([LINE, LINE, LINE + 1], [0, 1, 2], [1, 1, 1]), CONFIG)
    assert alone.l1_waiting_share[0] == pytest.approx((0.0, 1 / 3))


def test_a_fill_every_block_reads_is_waited_for_from_l2() -> None:
    """nbody_naive at 256 threads (suite v2): every block reads the whole position table, so over
    the grid its lines come from L2, though in the sample the first warp's request is a first
    touch. The unrolled loads that hit L1 on those fills wait for L2's latency, not DRAM's."""
    import engine.api as api
    kernel = api.open(ROOT / "samples" / "v2" / "ptx" / "nbody.sm_90.ptx", profile="h100",
                      launch=ROOT / "samples" / "v2" / "nbody.launch.toml", config="nbody_naive/b256")
    loads = [i for i in kernel.evaluate(models=["pipeline"]).description.instructions
             if i.name.startswith("ld.global.nc.v4.f32")][1:5]        # the table's unrolled reads
    assert len(loads) == 4
    assert all(i.dram_wait < 0.1 for i in loads)
    assert all(200 < float(i.Lam) < 400 for i in loads)
