"""Launch settings, launch files, CUDA occupancy and Many-BSP's ρ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.errors import LaunchError
from engine.launch import Launch, load_launch_file, parse_dim, validate_launch
from engine.occupancy import UNLIMITED, manybsp_rho, manybsp_rho_for, occupancy
from engine.profiles import load_profile

CASES = Path(__file__).resolve().parents[2] / "shared" / "reference" / "manybsp" / "cases.json"
KB = 1024


# ---------------------------------------------------------------------- dimensions and Launch


@pytest.mark.parametrize(("text", "dims"), [
    ("16,16", (16, 16, 1)), ("16x16", (16, 16, 1)), ("(8, 4, 2)", (8, 4, 2)), ("256", (256, 1, 1)),
    (64, (64, 1, 1)), ([2, 3], (2, 3, 1)), ((1, 1, 4), (1, 1, 4)),
])
def test_parse_dim(text, dims):
    assert parse_dim(text) == dims


@pytest.mark.parametrize("bad", ["", "16,,16", "a,b", "1,2,3,4", "0,4", "-1", [], [1.5], True, None, 2.0])
def test_parse_dim_rejects(bad):
    with pytest.raises(LaunchError):
        parse_dim(bad, "grid")


def test_launch_shape_helpers():
    launch = Launch(grid="43,43", block=(16, 16, 1), smem_dynamic=0)
    assert launch.grid == (43, 43, 1)
    assert launch.threads_per_block == 256
    assert launch.n_blocks == 1849
    assert launch.n_threads == 1849 * 256
    assert Launch(grid=1, block=48).warps_per_block() == 2


@pytest.mark.parametrize(("kwargs", "phrase"), [
    (dict(grid=(0, 1, 1), block=(32, 1, 1)), "at least 1"),
    (dict(grid=(1, 1, 1), block=(0, 4, 1)), "at least 1"),
    (dict(grid=(1, 1, 1), block=(64, 32, 1)), "2048 threads"),
    (dict(grid=(1, 1, 1), block=(1, 1, 128)), "along z"),
    (dict(grid=(1, 70000, 1), block=(32, 1, 1)), "along y"),
    (dict(grid=1, block=32, smem_dynamic=-4), "smem_dynamic"),
    (dict(grid=1, block=32, regs_per_thread=0), "regs_per_thread"),
    (dict(grid=1, block=32, trip_overrides={"$L__BB0_1": -1}), "trip count"),
])
def test_impossible_launches(kwargs, phrase):
    with pytest.raises(LaunchError, match=phrase):
        Launch(**kwargs)


def test_validate_launch_against_a_profile():
    gtx760, h100 = load_profile("gtx760"), load_profile("h100")
    validate_launch(Launch(grid=10, block=256, regs_per_thread=63), gtx760)
    with pytest.raises(LaunchError, match="63"):
        validate_launch(Launch(grid=10, block=256, regs_per_thread=64), gtx760)
    with pytest.raises(LaunchError, match="65536 registers"):
        validate_launch(Launch(grid=10, block=1024, regs_per_thread=128), h100)
    with pytest.raises(LaunchError, match="shared memory"):
        validate_launch(Launch(grid=10, block=256, smem_dynamic=40 * KB), gtx760, static_smem=9 * KB)
    validate_launch(Launch(grid=10, block=256, smem_dynamic=200 * KB), h100)  # opt-in limit 227 KB
    with pytest.raises(LaunchError, match="exceed"):
        validate_launch(Launch(grid=10, block=1024), load_profile("r9_380"))  # 256 per workgroup


# ---------------------------------------------------------------------- launch files

LAUNCH_FILE = '''
description = "hotspot, as in 000 section 2"
source = "hotspot.cu"
ptx = "ptx/hotspot.sm_90.ptx"

[[launch]]
name = "paper"
kernel = "_Z14calculate_temp"
grid = "43,43"
block = [16, 16]
smem_dynamic = 0
reference_case = "hotspot/gtx760"
[launch.args]
"0" = 2
"6" = 0.5
[launch.trip]
"$L__BB0_2" = 2

[[launch]]
name = "small"
grid = 4
block = "128"
smem_dynamic = 1024
regs_per_thread = 32
'''


def test_load_launch_file(tmp_path):
    path = tmp_path / "hotspot.launch.toml"
    path.write_text(LAUNCH_FILE)
    parsed = load_launch_file(path)
    assert parsed.description.startswith("hotspot")
    assert parsed.source == tmp_path / "hotspot.cu"
    assert parsed.ptx == tmp_path / "ptx" / "hotspot.sm_90.ptx"
    paper = parsed.get("paper")
    assert paper.grid == (43, 43, 1) and paper.block == (16, 16, 1)
    assert paper.args == {0: 2, 6: 0.5}
    assert paper.trip_overrides == {"$L__BB0_2": 2}
    assert paper.kernel == "_Z14calculate_temp" and paper.reference_case == "hotspot/gtx760"
    assert parsed.get() is paper
    small = parsed.get("small")
    shape = (small.n_blocks, small.threads_per_block, small.smem_dynamic, small.regs_per_thread)
    assert shape == (4, 128, 1024, 32)
    with pytest.raises(LaunchError, match="no launch named 'big'"):
        parsed.get("big")


@pytest.mark.parametrize(("edit", "phrase"), [
    (lambda t: t.replace('grid = "43,43"', 'gird = "43,43"'), "unknown key"),
    (lambda t: t.replace('grid = "43,43"\n', ""), "'grid' is missing"),
    (lambda t: t.replace('"0" = 2', '"0" = "two"'), "must be a number"),
    (lambda t: t.replace('name = "small"', 'name = "paper"'), "used twice"),
    (lambda t: t.replace('block = "128"', 'block = "0"'), "at least 1"),
    (lambda t: t.replace('block = "128"', 'block = "32,64"'), "2048 threads"),
    (lambda t: t.replace("smem_dynamic = 1024", "smem_dynamic = 1.5"), "smem_dynamic"),
    (lambda t: "colour = 1\n" + t, "unknown top-level"),
    (lambda t: t.replace('grid = 4', 'grid = 4 4'), "not valid TOML"),
])
def test_launch_file_errors_name_the_file_and_launch(tmp_path, edit, phrase):
    path = tmp_path / "bad.launch.toml"
    path.write_text(edit(LAUNCH_FILE))
    with pytest.raises(LaunchError, match=phrase) as info:
        load_launch_file(path)
    assert str(path) in str(info.value)


def test_missing_launch_file(tmp_path):
    with pytest.raises(LaunchError, match="cannot read"):
        load_launch_file(tmp_path / "none.launch.toml")


# ---------------------------------------------------------------------- occupancy (CUDA rules)


@pytest.mark.parametrize(("threads", "regs", "smem", "blocks", "limiter"), [
    (256, 32, 0, 8, "threads"),               # 2048 threads / 256
    (256, 64, 0, 4, "registers"),             # 64 x 256 x 4 = 65536
    (128, 32, 48 * KB, 4, "shared_memory"),   # (48 KB + 1 KB reserved) into 228 KB
    (32, 32, 0, 32, "block_slots"),
    (256, 33, 0, 6, "registers"),             # 33 regs allocate as 40 (1280 per warp)
    (1024, 64, 0, 1, "registers"),
    (256, 255, 0, 1, "registers"),            # 8160 -> 8192 per warp: 2 warps per sub-partition
    (96, 16, 0, 21, "threads"),               # 3 warps: 64 // 3
    (64, 40, 0, 24, "registers"),             # 1280 per warp: 12 per 16K slice, not 65536 // 1280 = 51
    (256, 0, 0, 8, "threads"),                # no registers: no register limit
    (512, 16, 100 * KB, 2, "shared_memory"),  # 101 KB x 2 <= 228 KB
    (1024, 16, 228 * KB, 0, "shared_memory"), # more than the 227 KB opt-in
    (256, 256, 0, 0, "registers"),            # above 255 registers per thread
])
def test_occupancy_sm90(threads, regs, smem, blocks, limiter):
    result = occupancy(load_profile("h100"), threads, regs, smem)
    assert (result.blocks_per_sm, result.limiter) == (blocks, limiter)
    assert result.active_warps == blocks * -(-threads // 32)
    assert result.occupancy_fraction == pytest.approx(result.active_warps / 64)


def test_occupancy_details_sm90():
    result = occupancy(load_profile("h100"), 128, 32, 48 * KB)
    assert result.smem_per_block == 49 * KB
    assert result.smem_per_sm == 228 * KB
    assert result.registers_per_block == 32 * 32 * 4
    assert set(result.limits) == {"threads", "warps", "block_slots", "registers", "shared_memory"}
    # A preferred carve-out picks the smallest configuration that holds it.
    small = occupancy(load_profile("h100"), 128, 32, 48 * KB, carveout=90 * KB)
    assert small.smem_per_sm == 100 * KB and small.blocks_per_sm == 2


@pytest.mark.parametrize(("threads", "regs", "smem", "blocks", "limiter"), [
    (256, 32, 0, 4, "threads"),               # 1024 threads per SM on Turing
    (32, 16, 0, 16, "block_slots"),           # 16 blocks per SM
    (128, 32, 32 * KB, 2, "shared_memory"),   # 64 KB per SM
    (128, 32, 20 * KB, 3, "shared_memory"),
    (128, 128, 0, 4, "registers"),            # 16 KB-register slices hold 4 such warps each
])
def test_occupancy_sm75(threads, regs, smem, blocks, limiter):
    result = occupancy(load_profile("rtx2070"), threads, regs, smem)
    assert (result.blocks_per_sm, result.limiter) == (blocks, limiter)
    assert result.limits["shared_memory"] == (UNLIMITED if smem == 0 else result.limits["shared_memory"])


def test_occupancy_older_rules():
    # Fermi: registers in units of 64 per warp, warps per block rounded up to 2: 3 warps count as 4.
    fermi = occupancy(load_profile("c2050"), 96, 40, 0)
    assert (fermi.blocks_per_sm, fermi.limiter) == (6, "registers")
    # Kepler: 63 registers at most; 64 cannot launch.
    assert occupancy(load_profile("gtx760"), 256, 64, 0).blocks_per_sm == 0
    # Pascal GP104: 96 KB per SM, 256-byte granularity: 3000 B -> 3072 B, 32 blocks of 64 threads.
    pascal = occupancy(load_profile("gtx1070"), 64, 16, 3000)
    assert pascal.smem_per_block == 3072
    # Threads, warps and block slots all allow 32: the first in LIMITERS order is named.
    assert (pascal.blocks_per_sm, pascal.limiter) == (32, "threads")
    assert occupancy(load_profile("gtx1070"), 64, 16, 4000).limiter == "shared_memory"  # 4096 B: 24


def test_occupancy_rejects_nonsense():
    with pytest.raises(LaunchError):
        occupancy(load_profile("h100"), 0, 32, 0)
    with pytest.raises(LaunchError):
        occupancy(load_profile("h100"), 32, -1, 0)


# ---------------------------------------------------------------------- Many-BSP rho (000 eq. 21)


def _cases() -> list[dict]:
    if not CASES.is_file():
        pytest.skip(f"reference data {CASES} not present")
    return json.loads(CASES.read_text())["cases"]


def test_manybsp_rho_reproduces_all_nine_cases():
    cases = _cases()
    assert len(cases) == 9
    for case in cases:
        assert manybsp_rho(case["params"]) == case["worked"]["rho"], (case["kernel"], case["gpu"])


def test_manybsp_rho_from_profiles():
    for case in _cases():
        p = case["params"]
        profile = load_profile(case["gpu"])
        rho = manybsp_rho_for(profile, p["n_t"], p["reg_per_thread"], p["shmem_per_block"])
        assert rho == case["worked"]["rho"]


def test_manybsp_rho_rules():
    base = {"max_thread_per_sm": 2048, "n_t": 256, "n_reg": 65536, "reg_per_thread": 34,
            "shmem_size": 49152, "shmem_per_block": 0}
    assert manybsp_rho(base) == 7                                   # floor(7.53)
    assert manybsp_rho({**base, "reg_per_thread": 8}) == 8          # threads bind; no smem limit
    assert manybsp_rho({**base, "reg_per_thread": 8, "shmem_per_block": 16384}) == 3
    with pytest.raises(LaunchError, match="n_reg"):
        manybsp_rho({k: v for k, v in base.items() if k != "n_reg"})


@pytest.mark.parametrize("key", [2, "2", "_Z16reduce_warp_shflPKfPfi_param_2"])
def test_a_given_argument_replaces_the_launch_files_however_it_is_named(key):
    """The launch file names the count "2"; a caller's 2, "2" or parameter name replaces it (both
    kept, the lookup by index found the launch file's first and the caller's value was lost)."""
    from pathlib import Path

    from engine.analysis import LaunchValues
    from engine.inputs import resolve_inputs

    v2 = Path(__file__).resolve().parents[1] / "samples" / "v2"
    inputs = resolve_inputs(v2 / "ptx" / "reduction.sm_90.ptx", profile="h100", args={key: 81800},
                            launch_file=v2 / "reduction.launch.toml", config="reduce_warp_shfl/g528-b256")
    assert list(inputs.launch.args.values()) == [81800]
    params = inputs.function.params
    assert LaunchValues.from_launch(inputs.launch).argument(2, params[2].name) == 81800
