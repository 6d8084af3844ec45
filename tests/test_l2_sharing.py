"""L2 as the GPU shares it (engine.caches): a block's own re-reads against the blocks running
beside it, the room a line takes by who reads or updates it, and the faster rate of lines every
SM reads (bench/micro/l2_kinds.cu and l2_share_rate.cu, results h100-2026-11-28-l2-kinds-schedulers)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.caches import CacheConfig, simulate_caches
from engine.caches.simulation import L2_ROOM_PRIVATE
from engine.execution import Execution
from engine.execution.recorder import ATOMIC, LOAD_CACHED
from engine.execution.sampling import choose_blocks

BASE = 1 << 40


def _blocks(lines_of: list[np.ndarray], kinds: list[np.ndarray] | None = None, grid: int | None = None) -> Execution:
    """Blocks run one after the other, block b issuing one request per line of ``lines_of[b]``."""
    n_blocks = len(lines_of)
    sample = choose_blocks((n_blocks, 1, 1), n_blocks)
    lines = np.concatenate(lines_of).astype(np.int64)
    blocks = np.concatenate([np.full(len(x), b, dtype=np.int32) for b, x in enumerate(lines_of)])
    kind = (np.concatenate(kinds) if kinds else np.full(len(lines), LOAD_CACHED)).astype(np.int8)
    n = len(lines)
    log = {
        "request_instruction": np.zeros(n, dtype=np.int32), "request_block": blocks, "request_kind": kind,
        "entry_request": np.arange(n, dtype=np.int64), "entry_line": lines,
        "entry_sectors": np.full(n, 0xF, dtype=np.uint8), "entry_bytes": np.zeros((n, 4), dtype=np.uint32),
    }
    return Execution("k", sample, 1, paths=[np.zeros(1, dtype=np.int32)] * n_blocks, executed=np.ones(1),
                     log=log, grid=(grid or n_blocks, 1, 1))


def _rows_read_twice(n_blocks: int, lines_per_block: int) -> Execution:
    """Each block reads its own rows, then reads them again (a row softmax's two passes)."""
    rows = [np.arange(BASE + b * lines_per_block, BASE + (b + 1) * lines_per_block) for b in range(n_blocks)]
    return _blocks([np.concatenate([r, r]) for r in rows])


def test_a_blocks_own_reread_misses_when_the_blocks_beside_it_fill_l2_meanwhile() -> None:
    execution = _rows_read_twice(64, 256)                  # 32 KB per block, read twice
    l2 = 1 << 20                                           # 8192 lines
    alone = simulate_caches(execution, CacheConfig(l1_bytes_per_block=0, l2_bytes=l2, wave_blocks=1))
    crowded = simulate_caches(execution, CacheConfig(l1_bytes_per_block=0, l2_bytes=l2, wave_blocks=64))
    # alone the second pass hits L2 (each block's rows fit, bar a few random victims). With the
    # 64 blocks at once,
    # between the two reads of its line i a block allocates its 255 - i lines after it, which
    # stand for 64 blocks' private lines (0.67 of a room each): with a random victim the line
    # survives exp(-that / 8192)
    assert alone.l2_share[0] == pytest.approx(0.5, abs=0.02)
    gaps = np.arange(255, -1, -1) * 64 * L2_ROOM_PRIVATE / 8192
    lost = 0.5 * float(np.mean(1.0 - np.exp(-gaps)))
    assert lost > 0.15
    assert crowded.dram_share[0] == pytest.approx(alone.dram_share[0] + lost, abs=0.02)
    # the same blocks beside a large L2: the re-reads still hit
    roomy = simulate_caches(execution, CacheConfig(l1_bytes_per_block=0, l2_bytes=64 << 20, wave_blocks=16))
    assert roomy.l2_share[0] > 0.49


def test_lines_other_blocks_read_are_not_taken_for_a_blocks_own() -> None:
    # every block reads one shared panel twice: the grid's footprint is one block's, so the
    # blocks beside it add nothing new to L2 and the re-reads keep hitting
    panel = np.arange(BASE, BASE + 256)
    execution = _blocks([np.concatenate([panel, panel])] * 16)
    crowded = simulate_caches(execution, CacheConfig(l1_bytes_per_block=0, l2_bytes=1 << 20, wave_blocks=256))
    assert crowded.l2_share[0] > 0.9
    assert crowded.shared_share[0] == pytest.approx(1.0 - 1.0 / 16, abs=0.01)


def test_private_rows_are_not_shared_and_a_panel_every_block_reads_is() -> None:
    private = simulate_caches(_rows_read_twice(16, 64), CacheConfig(0, 1 << 24, wave_blocks=16))
    assert private.shared_share[0] == pytest.approx(0.0, abs=0.01)


def test_data_other_blocks_read_takes_a_whole_room_and_private_data_less() -> None:
    from engine.caches.simulation import _l2_rooms, _private_share, _requests

    def rooms_of(execution: Execution, footprints: dict) -> dict[int, float]:
        return _l2_rooms(_requests(execution.log, config), {b: _private_share(fp, 4) for b, fp in footprints.items()})

    shared = _blocks([np.arange(BASE, BASE + 64)] * 4)       # every block reads the same 64 lines
    config = CacheConfig(0, 1 << 24)
    result = simulate_caches(shared, config)
    # a quarter of each block's share is its own (the grid's footprint over the summed sets)
    rooms = rooms_of(shared, result.footprints)
    assert list(rooms.values()) == [pytest.approx(0.25 * L2_ROOM_PRIVATE + 0.75)]
    private_run = _rows_read_twice(4, 64)
    private = simulate_caches(private_run, config)
    rooms = rooms_of(private_run, private.footprints)
    assert list(rooms.values()) == [pytest.approx(L2_ROOM_PRIVATE)]
    # atomics keep a whole room too (their write-backs are not all counted yet)
    scatter = _blocks([np.arange(BASE + 64 * b, BASE + 64 * b + 64) for b in range(4)],
                      kinds=[np.full(64, ATOMIC)] * 4)
    atomics = simulate_caches(scatter, config)
    assert list(rooms_of(scatter, atomics.footprints).values()) == [1.0]


def test_lines_every_sm_reads_reach_it_faster() -> None:
    from engine.caches.simulation import CacheResult, LaunchTraffic, SimulatedLevels
    from engine.memory.access_report import AccessInfo
    from engine.memory.hierarchy import LevelShares, SmContext, level_times
    from engine.profiles import load_profile
    from engine.units import AccessKind, MemorySpace

    def levels(shared: float) -> SimulatedLevels:
        caches = CacheResult(l1_share={0: 0.0}, l2_share={0: 1.0}, dram_share={0: 0.0},
                             dram_read_per_request={0: 0.0}, requests={0: 1}, sectors={0: 16},
                             shared_share={0: shared})
        return SimulatedLevels(caches, LaunchTraffic(0.0, 0.0, 1.0, 0.0, 1.0))

    profile = load_profile("h100")
    gain = profile.pipeline.memory["l2_shared_read_gain"]
    assert 1.1 < gain < 1.35                             # measured: 33.5 against 27.5 B/clk/SM
    access = AccessInfo(index=0, line=1, text="ld.global.v4.f32", space=MemorySpace.GLOBAL, width_bytes=16,
                        affine=None, kind=AccessKind.LOAD, sectors_per_request=16.0, lines_per_request=4.0,
                        executed=True, active_lanes=32.0)
    times = [level_times(access, LevelShares(0.0, 1.0, 0.0), profile, SmContext(simulated=levels(s)), (1.0, 1.0))["L2"]
             for s in (0.0, 1.0)]
    assert times[0] / times[1] == pytest.approx(gain)
