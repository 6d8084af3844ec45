"""Stores and atomics at data-dependent slots (mechanism scattered_stores): the measured table in
the profiles, which accesses it applies to, and the DRAM bytes it gives a random scatter."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from engine.analysis import analyze_kernel
from engine.errors import ProfileError
from engine.launch import load_launch_file
from engine.memory import analyze_memory
from engine.memory.access_report import pattern_note
from engine.memory.hierarchy import SmContext, scattered_store
from engine.memory.traffic import kernel_traffic
from engine.profiles import SHIPPED_DIR, load_profile, parse_profile
from engine.ptx import load_ptx
from engine.validation import SUITES, load_measurements
from tests.micro_script import make_profile_module

V2X = Path(__file__).resolve().parents[1] / "samples" / "v2x"


def test_profiles_carry_the_tables_derived_from_the_raw_ncu_runs():
    script = make_profile_module()
    for gpu in ("h100", "h200"):
        derived = dict(script.derive_scattered_stores(script.GPUS[gpu].results("storescatter", "2026-11-25")))
        assert load_profile(gpu).pipeline.scattered_stores == derived
        footprints, read, written, cycles = zip(*derived["store"], strict=True)
        # past L2 (50 / 60 MB) nearly every store fills a sector and writes it back
        assert read[-1] > 29 and written[-1] > 30 and cycles[-1] > 2.5 * cycles[0]
        assert read[0] < 5 and footprints == tuple(sorted(footprints))


def _store(kernel: str, config: str, kind: str):
    launch = load_launch_file(V2X / "scatterx.launch.toml").get(f"{kernel}/{config}")
    module = load_ptx(V2X / "ptx" / "scatterx.sm_90.ptx")
    analysis = analyze_kernel(module.kernel(launch.kernel), launch, module)
    report = analyze_memory(analysis, launch, module)
    return launch, report, next(a for a in report.accesses if a.kind == kind)


def test_it_applies_to_scattered_stores_and_atomics_only_at_their_footprint():
    profile = load_profile("h100")
    _, _, store = _store("scatter_random", "b256", "store")
    cost = scattered_store(store, profile)
    row = {r[0]: r[1:] for r in profile.pipeline.scattered_stores["store"]}[64.0]
    assert cost is not None and (cost.read_bytes, cost.write_bytes) == pytest.approx(row[:2], rel=0.02)
    _, _, red = _store("scatter_add_random", "b256", "atomic")
    assert scattered_store(red, profile) is not None
    assert "data-dependent slots" in pattern_note(store) and "data-dependent" in pattern_note(red)
    _, _, coalesced = _store("transpose_tiled", "b32x8", "store")      # affine: not scattered
    assert scattered_store(coalesced, profile) is None


def test_a_random_scatter_moves_the_dram_bytes_measured():
    profile = load_profile("h100")
    launch, report, _ = _store("scatter_random", "b256", "store")
    measured = load_measurements(SUITES["v2x"].runs["h100"])["scatterx/scatter_random/b256"]
    dram = measured.metric("dram__bytes_read.sum") + measured.metric("dram__bytes_write.sum")
    warps = 8 * launch.grid[0]

    def total() -> float:
        traffic = kernel_traffic(report, profile, SmContext(), {a.index: 1.0 for a in report.accesses}, warps, 132)
        return traffic.dram_read_bytes + traffic.dram_write_bytes

    assert total() == pytest.approx(dram, rel=0.1)


def test_many_stores_per_slot_share_the_compulsory_bytes():
    profile = load_profile("h100")
    launch, report, store = _store("scatter_random", "b256", "store")
    small = dataclasses.replace(store, buffer_footprint_bytes=store.buffer_footprint_bytes / 16)
    one = kernel_traffic(dataclasses.replace(report, accesses=[store]), profile, SmContext(), {store.index: 1.0},
                         8 * launch.grid[0], 132)
    many = kernel_traffic(dataclasses.replace(report, accesses=[small]), profile, SmContext(), {store.index: 1.0},
                          8 * launch.grid[0], 132)
    # 16 stores per slot in a 4 MiB buffer: its table row, shared by 16 stores each
    row = profile.pipeline.scattered_stores["store"][0]
    stores = 8 * launch.grid[0] * store.active_lanes
    assert many.dram_read_bytes == pytest.approx(stores * row[1] / 16, rel=0.05)
    assert one.dram_read_bytes > 10 * many.dram_read_bytes


@pytest.mark.parametrize("change, phrase", [
    ('operation = "store"', "must be one of store, red"),
    ("footprint_mib = [4, 8, 16, 24, 32, 40, 48, 64, 96, 128, 256]", "must rise strictly"),
    ("sm_cycles = [", "values for 11 footprints"),
])
def test_bad_tables_are_refused(change, phrase):
    text = (SHIPPED_DIR / "h100.toml").read_text()
    bad = {
        'operation = "store"': text.replace('operation = "red"', 'operation = "write"'),
        "footprint_mib = [4, 8, 16, 24, 32, 40, 48, 64, 96, 128, 256]": text.replace(
            "footprint_mib = [4, 8, 16, 24, 32, 40, 48, 64, 96, 128, 256]",
            "footprint_mib = [4, 8, 16, 24, 32, 40, 48, 64, 64, 128, 256]", 1),
        "sm_cycles = [": text.replace("sm_cycles = [", "sm_cycles = [1, ", 1),
    }[change]
    with pytest.raises(ProfileError, match=phrase):
        parse_profile(bad, "bad.toml")


def _evaluated(config: str):
    from dataclasses import replace

    from engine.evaluation import Evaluator, state_for
    from engine.inputs import resolve_inputs

    inputs = resolve_inputs(V2X / "ptx" / "scatterx.sm_90.ptx", profile="h100",
                            launch_file=V2X / "scatterx.launch.toml", config=config)
    inputs = replace(inputs, launch=replace(inputs.launch, smem_dynamic=0))
    return Evaluator().evaluate(inputs, state_for(inputs), trace=False)


def test_a_simulated_scatter_writes_sectors_back_each_time_l2_loses_them():
    """16M stores at random slots of a 64 MiB buffer, with the sampled warps run and the caches
    simulated: the buffer's 2M sectors are written 8 times each on average and L2 keeps about a
    third of them, so they reach DRAM (filled first, 4 of 32 bytes written) many times over,
    not once: the DRAM bytes are the microbenchmark's per store at this footprint."""
    profile = load_profile("h100")
    ev = _evaluated("scatter_random/b256")
    assert ev.memory.execution is not None and ev.memory.execution.ok
    stores = 1 << 24
    row = {r[0]: r[1:] for r in profile.pipeline.scattered_stores["store"]}[64.0]
    reads = 2 * 4 * stores                               # src and idx, streamed once
    moved = ev.traffic.dram_read_bytes + ev.traffic.dram_write_bytes - reads
    assert moved == pytest.approx(stores * (row[0] + row[1]), rel=0.15)
    assert ev.traffic.dram_write_bytes > 3 * 4 * stores  # far more than the 64 MiB buffer once


def test_an_in_order_store_reaches_dram_once_per_sector():
    ev = _evaluated("transpose_naive/b32x8")
    assert ev.memory.execution is not None and ev.memory.execution.ok
    assert ev.traffic.dram_write_bytes <= 4 * 4096 * 4096 * 1.01


def test_a_simulated_scatter_moves_dram_at_the_random_sector_rate():
    """The DRAM time of the simulated scatter's fills and write-backs: the bytes at the rate the
    microbenchmark measured past L2 (its largest footprint), not at the streaming rate."""
    from engine.memory.hierarchy import random_sector_cycles_per_byte

    profile = load_profile("h100")
    ev = _evaluated("scatter_random/b256")
    store = next(a for a in ev.memory.accesses if a.kind == "store")
    per_byte = random_sector_cycles_per_byte(store, profile)
    footprint, read, written, cycles = profile.pipeline.scattered_stores["store"][-1]
    assert per_byte == pytest.approx(cycles / (read + written))
    streaming = float(profile.pipeline.memory["dram_lam"]) / 128
    assert per_byte > 2 * streaming
    busy = ev.traffic.busy_cycles["DRAM"]
    stored = ev.traffic.dram_read_bytes + ev.traffic.dram_write_bytes - 2 * 4 * (1 << 24)
    assert busy >= 0.9 * stored * per_byte / 132
    _, _, coalesced = _store("transpose_tiled", "b32x8", "store")
    assert random_sector_cycles_per_byte(coalesced, profile) is None


def test_a_simulated_scatter_takes_at_least_the_measured_time_per_lane():
    """With the caches simulated, the scatter's DRAM time per request is at least its lanes at the
    table's SM cycles per store for its footprint (64 MiB here), as without the simulation."""
    profile = load_profile("h100")
    ev = _evaluated("scatter_random/b256")
    store = next(a for a in ev.memory.accesses if a.kind == "store")
    lane = scattered_store(store, profile)
    assert lane is not None and store.buffer_footprint_bytes == pytest.approx(64 << 20, rel=0.01)
    lam = float(ev.description.instructions[store.index].lam)
    assert lam == pytest.approx(32 * lane.sm_cycles, rel=0.02)


def test_a_scatter_beside_other_data_keeps_the_misses_the_replay_finds():
    """l2_kinds' mixed kernel: a gather of one 32 MiB buffer beside RED at random slots of another.
    Alone, 32 MiB of atomics mostly stay in L2 (the table); with the gather's lines competing, the
    replay finds more misses, and the traffic keeps the larger figure."""
    from engine import api

    ptx = Path(__file__).resolve().parents[1] / "bench" / "micro" / "ptx" / "l2_kinds.sm_90.ptx"
    n = (64 << 20) // 4
    ev = api.open(ptx, "_Z7k_mixedPKfPfjj", profile="h100", grid=1056, block=256,
                  args={2: n // 2, 3: 5000 * 64 + 1}).evaluate(models=["pipeline"])
    red = next(a for a in ev.memory.accesses if a.kind == "atomic")
    lane = scattered_store(red, load_profile("h100"))
    assert lane is not None
    requests = ev.traffic.accesses[red.index].requests
    alone = requests * (red.active_lanes or 0.0) * (lane.read_bytes + lane.write_bytes)
    assert ev.traffic.accesses[red.index].dram_bytes > 1.2 * alone
