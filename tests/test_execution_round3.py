"""Issue 34, this round: long loops run, shared atomics' retry passes follow the measured bank rule,
synthetic random data is random, random re-reads of a table bigger than L2 miss over the launch,
and numba's caches follow the sources."""

from __future__ import annotations

import collections
from pathlib import Path

import numpy as np

from engine.analysis.loaded_data import scrambled
from engine.compiled_cache import STAMP, refresh
from engine.execution.image import _scrambled
from engine.execution.recorder import cas_contention


def _lanes(warps: int) -> tuple[np.ndarray, np.ndarray]:
    lanes = np.arange(32 * warps, dtype=np.int64)
    return lanes, np.zeros(32 * warps, dtype=np.int64)        # one block


def _passes(words: np.ndarray, warps: int) -> tuple[float, float]:
    lanes, block_row = _lanes(warps)
    mean_2x, last = cas_contention(lanes, (words * 4).astype(np.uint64), 4, block_row)
    return mean_2x / 2.0 / warps, last / warps


def test_a_pass_retires_one_lane_per_bank() -> None:
    # the patterns of bench/micro/shared_atomic_cas.cu with one warp: the measured passes
    l = np.arange(32)
    assert _passes(l, 1)[0] == 1.0                      # own word, 32 banks: 1 pass
    assert _passes(np.zeros(32, dtype=np.int64), 1)[0] == 32.0     # one word: 32
    assert _passes(l * 32, 1)[0] == 32.0                # 32 words of one bank: 32 (measured 32.00)
    assert _passes(l // 2, 1)[0] == 2.0                 # two lanes per word, 16 banks: 2 (measured 2.00)
    assert _passes((l // 2) * 32, 1)[0] == 32.0         # 16 words of one bank, two lanes each: 32


def test_warps_on_one_word_take_turns() -> None:
    # 8 warps of 32 lanes on one word: 32 × (8 + 1) / 2 = 144 passes per warp (measured 150),
    # the last warp after all 256 lanes
    mean, last = _passes(np.zeros(256, dtype=np.int64), 8)
    assert mean == 144.0 and last == 256.0
    # warps on words of different banks do not contend (pattern warp_word: 32 at any block size)
    words = np.repeat(np.arange(8), 32)
    assert _passes(words, 8)[0] == 32.0


def test_random_words_over_two_banks_take_about_eighteen_passes() -> None:
    rng = np.random.default_rng(7)
    words = rng.integers(0, 16, 32 * 64) * 16           # pattern rand16x16: 16 words in 2 banks
    lanes = np.arange(32 * 64, dtype=np.int64)
    block_row = lanes // 32                              # one warp per block
    mean_2x, _ = cas_contention(lanes, (words * 4).astype(np.uint64), 4, block_row)
    assert 16.0 < mean_2x / 2.0 / 64 < 21.0             # measured 18.26 on the H200


def test_random_data_covers_a_table_as_random_draws_do() -> None:
    # 200,000 consecutive 4-byte elements of a "random:0:4194304" buffer, as gather indices:
    # the distinct 128-byte lines of a float table they reach, against true random draws
    address = (2 << 40) + 4 * np.arange(200_000, dtype=np.int64)
    values = scrambled(address, 4_194_304)
    expected = 131_072 * (1 - np.exp(-200_000 / 131_072))
    assert abs(len(np.unique(values // 32)) - expected) < 0.01 * expected
    assert all(_scrambled(int(a), 4_194_304) == v for a, v in zip(address[:50], values[:50], strict=True))
    counts = collections.Counter(scrambled(np.arange(100_000), 5).tolist())
    assert set(counts) == {0, 1, 2, 3, 4} and min(counts.values()) > 19_000


def test_compiled_caches_are_removed_when_the_sources_change(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "__pycache__").mkdir(parents=True)
    (package / "a.py").write_text("x = 1\n")
    entry = package / "__pycache__" / "a.f-1.py311.nbi"
    entry.write_bytes(b"stale")
    assert refresh(package) is True and not entry.exists()
    assert (package / "__pycache__" / STAMP).exists()
    entry.write_bytes(b"fresh")
    assert refresh(package) is False and entry.exists()      # same sources: kept
    (package / "a.py").write_text("x = 2\n")
    assert refresh(package) is True and not entry.exists()


def test_a_long_data_dependent_loop_is_executed_not_guessed() -> None:
    # trsm_lower_rhs (suite v3): each thread runs n (n - 1) / 2 inner passes; with n = 256 that is
    # more interpreted steps than a run allowed before (60,000), and the fallback assumed 1 pass
    from engine.analysis import analyze_kernel
    from engine.execution import execute_launch
    from engine.execution.trips import executed_trips
    from engine.launch import Launch
    from engine.ptx import load_ptx

    module = load_ptx(Path(__file__).resolve().parents[1] / "samples" / "v3" / "ptx" / "trisolve.sm_90.ptx")
    function = next(f for f in module.functions if "trsm_lower_rhs" in f.name)
    launch = Launch(grid=(3, 1, 1), block=(64, 1, 1), args={"3": 256, "4": 192},
                    data={"0": "uniform:0.5:1.0", "1": "uniform:-1.0:1.0"})
    analysis = analyze_kernel(function, launch, module)
    execution = execute_launch(analysis, launch, module)
    assert execution.ok, execution.stopped
    trips = executed_trips(execution.paths, analysis.cfg)
    counts = sorted(round(t.mean) for t in trips.values())
    assert 256 in counts                                  # the outer loop: i < n
    # the triangle's inner passes (unrolled: a few instructions each) are all in the warps' counts
    from engine.execution import mean_per_warp
    assert mean_per_warp(execution) > 3 * 256 * 255 / 2


def test_a_retry_loop_costs_its_passes_and_bank_conflicts() -> None:
    from engine.memory.costs import _retry_loop_cost
    from engine.profiles import load_profile

    profile = load_profile("h200")
    per_pass = profile.pipeline.memory["shared_cas_pass_cycles"]
    lam1, Lam1 = _retry_loop_cost(profile, (144.0, 256.0), 1.0)
    assert Lam1 == 144.0 * per_pass                      # a warp waits for its own passes
    lam32, _ = _retry_loop_cost(profile, (32.0, 32.0), 32.0)
    lam_word, _ = _retry_loop_cost(profile, (32.0, 32.0), 1.0)
    assert lam32 / lam_word == (2 + 16.5) / (2 + 1)       # measured 18.5 against 3 wavefronts a pass


def test_a_listing_without_source_lines_is_refused_not_mapped_to_nothing() -> None:
    # nvdisasm 13.0's -json -g (schema 12.8) has no source lines: every PTX instruction would weigh 0
    import json

    import pytest

    from engine.sass.listing import SassListingError, parse_listing

    def listing(with_lines: bool) -> str:
        ins = [{"opcode": "IMAD", "operands": "R0,R0,UR4,R5"}, {"opcode": "EXIT", "operands": ""}]
        if with_lines:
            ins[0]["source-line"] = 38
        return json.dumps([{"Producer": "nvdisasm V13.0.85"},
                           [{"function-name": "k", "start": 0, "length": 32, "sass-instructions": ins}]])

    assert len(parse_listing(listing(True))["k"]) == 2
    with pytest.raises(SassListingError, match="no source lines.*V13.0.85"):
        parse_listing(listing(False))


def test_re_reads_of_another_blocks_lines_are_told_from_a_blocks_own() -> None:
    from types import SimpleNamespace

    from engine.caches.simulation import _cross_block_share

    # entries: (block, line) of buffer 3; a CSR row's re-reads stay in their block, a gathered
    # table's come from every block
    own = [(0, 1), (0, 1), (0, 2), (0, 2), (1, 5), (1, 5)]
    shared = [(0, 7), (1, 7), (2, 7), (0, 8), (1, 8), (2, 9)]
    for entries, expected in ((own, 0.0), (shared, 1.0)):
        blocks = np.array([b for b, _ in entries])
        lines = np.array([line for _, line in entries])
        req = SimpleNamespace(buffers=np.full(len(entries), 3), lines=lines, block=blocks,
                              owner=np.arange(len(entries)))
        assert _cross_block_share(req, 3) == expected


def test_a_user_numba_cache_folder_is_refreshed_too(tmp_path: Path, monkeypatch) -> None:
    from engine.compiled_cache import cache_roots

    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text("x = 1\n")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    mirror = cache_roots(package)[-1]
    mirror.mkdir(parents=True)
    entry = mirror / "a.f-1.py311.nbi"
    entry.write_bytes(b"stale")
    assert refresh(package) is True and not entry.exists()
    assert (mirror / STAMP).exists() and not (package / "__pycache__" / STAMP).exists()
    entry.write_bytes(b"fresh")
    assert refresh(package) is False and entry.exists()
