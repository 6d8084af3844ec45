"""The cache simulation (engine.caches): L1 capacity and reuse, 64-byte DRAM fetches, write-back,
and the grid extrapolation of a sampled run's DRAM traffic."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.analysis import analyze_kernel
from engine.caches import CacheConfig, cache_config, simulate_caches, simulated_levels
from engine.execution import Execution, execute_launch
from engine.execution.recorder import LOAD_CACHED, STORE
from engine.execution.sampling import choose_blocks
from engine.launch import Launch
from engine.profiles import load_profile
from engine.ptx import load_ptx

PTX = Path(__file__).parent / "execution" / "kernels.sm_90.ptx"


def _synthetic(lines_per_pass: list[np.ndarray], kind: int = LOAD_CACHED, sectors: int = 0xF) -> Execution:
    """One block's requests, one request per line, in the given order."""
    lines = np.concatenate(lines_per_pass).astype(np.int64)
    n = len(lines)
    sample = choose_blocks((1, 1, 1), 1)
    log = {
        "request_instruction": np.zeros(n, dtype=np.int32), "request_block": np.zeros(n, dtype=np.int32),
        "request_kind": np.full(n, kind, dtype=np.int8), "entry_request": np.arange(n, dtype=np.int64),
        "entry_line": lines, "entry_sectors": np.full(n, sectors, dtype=np.uint8),
        "entry_bytes": np.full((n, 4), 0xFFFFFFFF if kind == STORE else 0, dtype=np.uint32),
    }
    return Execution("k", sample, 1, paths=[np.zeros(1, dtype=np.int32)], executed=np.ones(1), log=log,
                     grid=(1, 1, 1))


def test_a_working_set_that_fits_l1_hits_on_its_second_pass() -> None:
    ring = np.arange(1 << 40, (1 << 40) + 512)            # 512 lines: 64 KB
    result = simulate_caches(_synthetic([ring, ring]), CacheConfig(l1_bytes_per_block=128 << 10, l2_bytes=1 << 24))
    assert result.l1_share[0] == pytest.approx(0.5)       # the first pass misses, the second hits
    # beyond the capacity the victims are pseudo-random: part of the second pass still hits
    big = np.arange(1 << 40, (1 << 40) + 1536)            # 192 KB through a 128 KB L1
    result = simulate_caches(_synthetic([big, big]), CacheConfig(l1_bytes_per_block=128 << 10, l2_bytes=1 << 24))
    assert 0.05 < result.l1_share[0] < 0.45


def _passes(passes: list[tuple[np.ndarray, int]]) -> Execution:
    """One block's requests, one per line, pass after pass, each pass of one kind."""
    execution = _synthetic([lines for lines, _ in passes])
    execution.log["request_kind"] = np.concatenate(
        [np.full(len(lines), kind, dtype=np.int8) for lines, kind in passes])
    execution.log["entry_bytes"][execution.log["request_kind"] == STORE] = 0xFFFFFFFF
    return execution


def test_a_store_keeps_its_sectors_in_l1() -> None:
    """Measured (bench/micro/l1_store_hits.cu under Nsight Compute): a load of what the block
    stored hits L1, and a store to a sector an earlier store wrote is a lookup hit, while the first
    store of a sector is a miss; every store still writes through to L2."""
    lines = np.arange(1 << 40, (1 << 40) + 64)
    stored_then_loaded = np.arange(128)
    result = simulate_caches(_passes([(lines, STORE), (lines, LOAD_CACHED)]),
                             CacheConfig(l1_bytes_per_block=64 << 10, l2_bytes=1 << 24))
    assert result.l1_sector_hits == 64 * 4 and result.l1_sector_accesses == 64 * 4   # the loads
    twice = simulate_caches(_passes([(lines, STORE), (lines, STORE)]),
                            CacheConfig(l1_bytes_per_block=64 << 10, l2_bytes=1 << 24))
    assert twice.l1_share[0] == pytest.approx(0.5)       # the second store of each sector
    assert twice.store_sector_bytes == len(stored_then_loaded) * 4 * 32   # both passes reach L2
    # without L1 (none left beside shared memory) nothing is kept
    none = simulate_caches(_passes([(lines, STORE), (lines, LOAD_CACHED)]), CacheConfig(0, 1 << 24))
    assert none.l1_sector_hits == 0


def test_dram_reads_64_bytes_per_missing_sector() -> None:
    lines = np.arange(1 << 40, (1 << 40) + 100)
    one_sector = simulate_caches(_synthetic([lines], sectors=0b0001), CacheConfig(0, 1 << 24))
    assert one_sector.dram_read_per_request[0] == 64     # the sector and its 64-byte neighbour
    assert one_sector.dram_share[0] == 1.0
    whole = simulate_caches(_synthetic([lines], sectors=0b1111), CacheConfig(0, 1 << 24))
    assert whole.dram_read_per_request[0] == 128
    assert whole.l2_share[0] == 0.0                      # a request's own fetch is no hit


def test_l1_share_follows_the_carveout_and_the_resident_blocks() -> None:
    profile = load_profile("h100")
    alone = cache_config(profile, 1, 0).l1_bytes_per_block
    assert alone == 216 * 1024               # measured: every load hits up to 216 KB without shared memory
    # 4 blocks of 40 KB shared memory: the driver carves 164 KB; L1 keeps the rest less 12 KB, shared by 4
    assert cache_config(profile, 4, 40 * 1024).l1_bytes_per_block == (256 - 164 - 12) * 1024 // 4
    # the largest carve-out (3 blocks of 72 KB) leaves 16 KB of L1, measured, not none
    assert cache_config(profile, 3, 72 * 1024).l1_bytes_per_block == 16 * 1024 // 3
    # the measured knees (bench/micro/results/h200-2026-11-28-l1-carveout): one block of 120, 140,
    # 160 and 180 KB keeps every load of a ring up to 112, 80, 80 and 48 KB in L1
    for kb, fits in ((120, 112), (140, 80), (160, 80), (180, 48)):
        assert cache_config(profile, 1, kb * 1024).l1_bytes_per_block == fits * 1024


@pytest.fixture(scope="module")
def module():
    return load_ptx(PTX)


def test_a_streaming_kernel_reads_its_inputs_once_over_the_grid(module) -> None:
    function = next(f for f in module.functions if f.name == "axpy")
    n = 1 << 22                                            # 16 MiB per array, 4096 blocks of 1024
    launch = Launch(grid=(n // 1024, 1, 1), block=(1024, 1, 1), args={"2": 2.0, "3": n})
    execution = execute_launch(analyze_kernel(function, launch, module), launch, module)
    assert execution.ok and not execution.sample.whole
    levels = simulated_levels(execution, load_profile("h100"), 2, 0)
    assert levels.traffic.dram_read_bytes == pytest.approx(2 * 4 * n, rel=0.02)
    # y (16 MiB) is written back beyond what L2 keeps dirty at the end
    assert 0 < levels.traffic.dram_write_bytes < 4 * n


def test_a_small_table_gathered_at_random_stays_in_l2(module) -> None:
    function = next(f for f in module.functions if f.name == "histogram")
    n = 1 << 20
    launch = Launch(grid=(n // 256, 1, 1), block=(256, 1, 1), args={"2": n},
                    data={"0": "constant:0", "1": "random:0:1000"})
    execution = execute_launch(analyze_kernel(function, launch, module), launch, module)
    levels = simulated_levels(execution, load_profile("h100"), 8, 0)
    # the 4 MiB of data stream once; the 16 counters are one sector that stays in L2
    assert levels.traffic.dram_read_bytes == pytest.approx(4 * n, rel=0.05)


def _two_blocks_reading(lines: np.ndarray) -> Execution:
    """Two blocks of one SM group, each reading ``lines`` once, their requests interleaved."""
    from engine.execution.sampling import sm_group

    n = len(lines)
    sample = sm_group((64, 1, 1), 4, 8, 2)
    log = {
        "request_instruction": np.zeros(2 * n, dtype=np.int32),
        "request_block": np.tile(np.array([0, 1], dtype=np.int32), n),
        "request_kind": np.full(2 * n, LOAD_CACHED, dtype=np.int8),
        "entry_request": np.arange(2 * n, dtype=np.int64), "entry_line": np.repeat(lines, 2).astype(np.int64),
        "entry_sectors": np.full(2 * n, 0xF, dtype=np.uint8), "entry_bytes": np.zeros((2 * n, 4), dtype=np.uint32),
    }
    return Execution("k", sample, 1, paths=[np.zeros(1, dtype=np.int32)] * 2, executed=np.ones(1), log=log,
                     grid=(64, 1, 1))


def test_blocks_of_one_sm_hit_on_each_others_lines_in_its_l1() -> None:
    from engine.caches.simulation import shared_l1_gain, with_shared_l1

    group = _two_blocks_reading(np.arange(1 << 40, (1 << 40) + 64))
    config = CacheConfig(l1_bytes_per_block=32 << 10, l2_bytes=1 << 24)
    # alone, each block misses on every line; sharing L1, the second reader of a line hits
    assert shared_l1_gain(group, config) == {0: pytest.approx(0.5)}
    # lines the blocks share only beyond the SM's L1 (far apart in time) gain nothing
    assert shared_l1_gain(group, CacheConfig(l1_bytes_per_block=0, l2_bytes=1 << 24)) == {}
    from engine.caches.simulation import CacheResult

    before = CacheResult(l1_share={0: 0.25}, l2_share={0: 0.5}, dram_share={0: 0.25},
                         dram_read_per_request={0: 64.0}, requests={0: 10}, sectors={0: 40}, measured_blocks=2,
                         dram_read_bytes=640.0, l1_sector_hits=10)
    after = with_shared_l1(before, {0: 0.6})
    # 0.6 more of the sectors from L1: all of L2's half first, then 0.1 of DRAM's quarter
    assert (after.l1_share[0], after.l2_share[0], after.dram_share[0]) == pytest.approx((0.85, 0.0, 0.15))
    assert after.dram_read_per_request[0] == pytest.approx(64.0 * 0.15 / 0.25)
    assert after.dram_read_bytes == pytest.approx(640.0 - 10 * (64.0 - 38.4))
    assert after.l1_sector_hits == 10 + 24


def test_an_sm_group_is_the_middle_block_and_others_of_its_wave() -> None:
    from engine.execution.sampling import sm_group

    group = sm_group((8192, 1, 1), 132, 16, 16)
    assert group.linear[0] == 4096 and len(set(group.linear)) == 16
    wave = 132 * 16
    assert all(abs(b - 4096) <= wave // 2 for b in group.linear)
    assert group == sm_group((8192, 1, 1), 132, 16, 16)          # the same draw every time
    assert "as one SM holds them at once" in group.describe()
    small = sm_group((10, 1, 1), 132, 16, 16)                     # a grid smaller than a wave
    assert sorted(small.linear) == list(range(10))


def test_an_sm_group_runs_the_naive_gemm_blocks_that_share_rows_of_b() -> None:
    """gemm_naive_1d (suite v3, tuning part): each block reads 128 columns of B for every k, and
    one SM's 16 blocks share their columns with others of them; Nsight Compute measured an L1
    sector hit rate of 52 % where each block's own reuse (A's broadcast element) gives 25 %."""
    from engine.evaluation import Evaluator, state_for
    from engine.inputs import resolve_inputs

    v3 = Path(__file__).resolve().parents[1] / "samples" / "v3"
    inputs = resolve_inputs(v3 / "ptx" / "gemm.sm_90.ptx", profile="h100", launch_file=v3 / "gemm.launch.toml",
                            config="gemm_naive_1d/b256")
    ev = Evaluator().evaluate(inputs, state_for(inputs), trace=False)
    assert 0.40 < ev.traffic.l1_hit_rate < 0.70


def test_the_l2_hit_rate_counts_writes_as_nsight_compute_does() -> None:
    """A write allocates its sector in L2 without reading it: a hit unless L2 must fill a partly
    written sector first; loads and atomics miss where DRAM serves them."""
    from engine.memory.traffic import KernelTraffic

    # 100 sectors read (40 from DRAM), 100 written whole: 40 misses of 200 accesses
    traffic = KernelTraffic(l2_bytes=60 * 32, dram_read_bytes=40 * 64, dram_write_bytes=100 * 32,
                            l2_accessed_bytes=200 * 32, l2_missed_bytes=40 * 32)
    assert traffic.l2_hit_rate == pytest.approx(0.8)
    # without the access counts (nothing analysed): bytes L2 served over bytes that reached it
    assert KernelTraffic(l2_bytes=30.0, dram_read_bytes=10.0).l2_hit_rate == pytest.approx(0.75)
    assert KernelTraffic().l2_hit_rate is None


def test_measured_blocks_owe_first_touches_as_their_footprints_are() -> None:
    """Blocks 0 and 1 (warming the caches) and 2 (measured) each read 10 lines of a buffer;
    block 3 (measured) exits at once, as a block above a triangular domain's diagonal does: the
    two measured blocks are worth 2 x 5 / 7.5 of the sample's average blocks in first touches."""
    from engine.caches.buffer_footprints import BufferFootprint
    from engine.caches.simulation import _measured_worth, _requests
    lines = np.concatenate([np.arange(1 << 40, (1 << 40) + 10) + 10 * b for b in range(3)]).astype(np.int64)
    n = len(lines)
    log = {
        "request_instruction": np.zeros(n, dtype=np.int32),
        "request_block": np.repeat(np.arange(3), 10).astype(np.int32),
        "request_kind": np.full(n, LOAD_CACHED, dtype=np.int8), "entry_request": np.arange(n, dtype=np.int64),
        "entry_line": lines, "entry_sectors": np.full(n, 0xF, dtype=np.uint8),
        "entry_bytes": np.zeros((n, 4), dtype=np.uint32),
    }
    req = _requests(log, CacheConfig(0, 1 << 24))
    buffer = int(req.buffers[0])
    footprints = {buffer: BufferFootprint(buffer, 40.0, (1.0, 1.0, 1.0), 120.0, 1.0, 120.0)}
    measured = np.array([False, False, True, True])
    assert _measured_worth(req, footprints, measured, 4)[buffer] == pytest.approx(2 * 5 / 7.5)
    everyone = np.array([True, True, True, True])
    assert _measured_worth(req, footprints, everyone, 4)[buffer] == pytest.approx(4.0)
