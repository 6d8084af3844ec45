"""engine.sass: caching, fallbacks without tools, the result's arithmetic, and the validation
report's SASS-weighted instruction count."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace

import pytest

from engine.sass import SassMap, SassTools, SassUnavailable, cache, find_tools, sass_map
from engine.sass import tools as tools_module
from engine.sass.mapping_result import LoopTail
from engine.validation import ValidationResult, ValidationRow, format_validation

TEXT = """.version 8.0
.target sm_90
.address_size 64

.visible .entry k(
	.param .u64 k_param_0
)
{
	.reg .f32 	%f<3>;
	.reg .b64 	%rd<3>;

	ld.param.u64 	%rd1, [k_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	ld.global.f32 	%f1, [%rd2];
	sin.approx.f32 	%f2, %f1;
	st.global.f32 	[%rd2], %f2;
	ret;
}
"""
FAKE = SassTools("/nonexistent/bin/ptxas", "/nonexistent/bin/nvdisasm")


def _map(weights: dict[int, float], overhead: float = 0.0) -> SassMap:
    return SassMap(kernel="k", arch="sm_90", tool="ptxas", weights=weights,
                   opcodes={i: ("FADD",) for i in weights}, classes={i: ("alu",) for i in weights},
                   class_weights={i: {"alu": w} for i, w in weights.items()}, overhead=overhead,
                   unroll={"2-4": 4}, notes=("a note",))


def _no_subprocess(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError(f"a tool was started: {args[0] if args else kwargs}")

    monkeypatch.setattr(subprocess, "run", refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache.clear_memory()
    yield tmp_path / "warpline" / "sass"
    cache.clear_memory()


def test_disk_cache_hit_starts_no_tool(cache_home, monkeypatch) -> None:
    stored = _map({0: 1.0, 1: 0.0, 2: 1.0, 3: 2.0, 4: 1.0, 5: 1.0})
    key = cache.cache_key(TEXT, "k", "sm_90", FAKE.fingerprint())
    cache.store(key, stored)
    assert (cache_home / f"{key}.json").is_file()
    cache.clear_memory()
    _no_subprocess(monkeypatch)
    assert sass_map(TEXT, "k", tools=FAKE) == stored
    assert sass_map(TEXT, "k", "sm_90", tools=FAKE) == stored     # the .target's arch, named


def test_other_keys_miss(cache_home, monkeypatch) -> None:
    key = cache.cache_key(TEXT, "k", "sm_90", FAKE.fingerprint())
    cache.store(key, _map({0: 1.0}))
    assert cache.lookup(cache.cache_key(TEXT, "k", "sm_100", FAKE.fingerprint())) is None
    assert cache.lookup(cache.cache_key(TEXT + "\n", "k", "sm_90", FAKE.fingerprint())) is None
    assert cache.lookup(cache.cache_key(TEXT, "k", "sm_90", "other tools")) is None


@pytest.mark.parametrize("content", ["{not json", json.dumps({"key": "wrong", "map": {}}), "[]",
                                     json.dumps({"key": "KEY", "map": {"format": 1, "kernel": "k"}})])
def test_corrupt_cache_files_are_ignored_and_rewritten(cache_home, content) -> None:
    key = cache.cache_key(TEXT, "k", "sm_90", FAKE.fingerprint())
    cache_home.mkdir(parents=True)
    path = cache_home / f"{key}.json"
    path.write_text(content.replace("KEY", key), encoding="utf-8")
    assert cache.lookup(key) is None
    fresh = _map({0: 0.5})
    cache.store(key, fresh)
    cache.clear_memory()
    assert cache.lookup(key) == fresh
    assert json.loads(path.read_text(encoding="utf-8"))["key"] == key


def test_unwritable_cache_folder_is_skipped(tmp_path, monkeypatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))     # a file where the folder should be
    cache.clear_memory()
    key = cache.cache_key(TEXT, "k", "sm_90", "t")
    cache.store(key, _map({0: 1.0}))
    assert cache.lookup(key) == _map({0: 1.0})              # still remembered in memory
    cache.clear_memory()


def test_missing_tools_give_a_reason(cache_home, monkeypatch) -> None:
    monkeypatch.setattr(tools_module, "_site_dirs", lambda: [])
    monkeypatch.setattr(tools_module.shutil, "which", lambda name: None)
    found = find_tools()
    assert isinstance(found, str) and "ptxas and nvdisasm not found" in found
    outcome = sass_map(TEXT, "k")
    assert isinstance(outcome, SassUnavailable) and "nvidia-cuda-nvcc" in outcome.reason


def test_tools_that_cannot_run_give_a_reason(cache_home) -> None:
    outcome = sass_map(TEXT, "k", tools=FAKE)
    assert isinstance(outcome, SassUnavailable) and outcome.reason.startswith("ptxas could not run")
    assert not cache_home.exists() or not any(cache_home.iterdir())   # failures stay in memory


def test_ptxas_rejecting_the_file_gives_its_error(cache_home) -> None:
    tools = find_tools()
    if isinstance(tools, str):
        pytest.skip(f"SASS tools missing: {tools}")
    broken = TEXT.replace("sin.approx.f32 \t%f2, %f1;", "sin.approx.f32 \t%f2, %f9;")
    outcome = sass_map(broken, "k", tools=tools)
    assert isinstance(outcome, SassUnavailable) and outcome.reason.startswith("ptxas failed")


def test_no_architecture_falls_back() -> None:
    outcome = sass_map(TEXT.replace(".target sm_90", ".target compute_90"), "k", tools=FAKE)
    assert isinstance(outcome, SassUnavailable) and "sm_XX" in outcome.reason


def test_suffixed_target_is_kept_for_the_profiles_architecture(cache_home, monkeypatch) -> None:
    text = TEXT.replace(".target sm_90", ".target sm_90a")
    stored = _map({0: 1.0})
    cache.store(cache.cache_key(text, "k", "sm_90a", FAKE.fingerprint()), stored)
    _no_subprocess(monkeypatch)
    assert sass_map(text, "k", 90, tools=FAKE) == stored


def test_executed_and_json_round_trip() -> None:
    m = _map({0: 1.0, 1: 0.25, 2: 2.0}, overhead=3.0)
    assert m.executed([4, 8, 1]) == pytest.approx(3 + 4 + 2 + 2)
    assert SassMap.from_json(json.loads(json.dumps(m.to_json()))) == m
    # a loop entered by instruction 0 whose latch is 1: 4 set-up instructions per entry, and 2
    # iterations left over on each of its 4 entries (8 iterations), which the tail runs at 3 per
    # iteration where the steady state charged 0.25
    tail = LoopTail(entry=(0,), latch=1, unroll=4, setup=4.0, tail=9.0, tail_iterations=3, home_per_iteration=0.25)
    with_tail = replace(m, loop_tails=(tail,))
    assert with_tail.executed([4, 8, 1]) == pytest.approx(3 + 4 + 2 + 2 + 4 * (4 + 2 * (3 - 0.25)))
    assert SassMap.from_json(json.loads(json.dumps(with_tail.to_json()))) == with_tail


def test_validation_reports_both_counts() -> None:
    rows = [ValidationRow("a/b/c", "k", 100.0, {"m": 110.0}, measured_instructions=1000.0,
                          predicted_instructions=1300.0, sass_instructions=1050.0),
            ValidationRow("a/b/d", "k", 100.0, {"m": 90.0}, measured_instructions=1000.0,
                          predicted_instructions=950.0, sass_reason="ptxas failed: x")]
    result = ValidationResult("h100", rows, ["m"])
    assert rows[0].sass_instruction_error_percent() == pytest.approx(5.0)
    assert rows[1].sass_instruction_error_percent() is None
    assert result.instructions_within(10.0) == (1, 2)
    assert result.sass_instructions_within(10.0) == (1, 1)
    text = format_validation(result)
    assert "weighted by SASS per PTX instruction vs ncu): 1/1 launches within 5 %" in text
    assert "no SASS weights: ptxas failed: x" in text


def test_validation_reports_hit_rates_within_ten_points() -> None:
    rows = [ValidationRow("a/b/c", "k", 100.0, {"m": 100.0}, measured_l2_hit_percent=80.0,
                          predicted_l2_hit_percent=91.0, measured_l1_hit_percent=50.0, predicted_l1_hit_percent=45.0),
            ValidationRow("a/b/d", "k", 100.0, {"m": 100.0}, measured_l2_hit_percent=30.0,
                          predicted_l2_hit_percent=35.0, measured_l1_hit_percent=None, predicted_l1_hit_percent=0.0)]
    result = ValidationResult("h100", rows, ["m"])
    assert result.hit_rates_within("l2", 10.0) == (1, 2)
    assert result.hit_rates_within("l1", 10.0) == (1, 1)
    text = format_validation(result)
    assert "L2 sector hit rate (cache simulation vs ncu lts__t_sector_hit_rate.pct): 1/2 launches within 10 " \
           "points" in text
    assert "L1 sector hit rate (cache simulation vs ncu l1tex__t_sector_hit_rate.pct): 1/1 launches within 10 " \
           "points" in text
    again = ValidationRow.from_dict(rows[0].as_dict())
    assert (again.measured_l1_hit_percent, again.predicted_l1_hit_percent) == (50.0, 45.0)
