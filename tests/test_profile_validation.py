"""GPU profiles refuse bad values and bad files with a one-line ProfileError, never a traceback.

Every numeric key of a complete profile gets NaN, infinities, zero, negative, huge and
wrong-typed values (hypothesis picks the combinations); damaged files, devices, FIFOs,
oversized and non-UTF-8 files are refused before they are read; a broken file in a profile
folder is skipped by the listing (with its reason kept) and never replaced by another GPU.
"""

from __future__ import annotations

import math
import os
import re
import time
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import profiles
from engine.errors import ProfileError, WarplineError
from engine.profile_schema import (
    DEVICE,
    INSTRUCTION,
    MANYBSP,
    PIPELINE,
    PIPELINE_BLOCKS,
    PIPELINE_DRAM_LOADED,
    PIPELINE_DRAM_LOADED_MIXED,
    PIPELINE_LINE_LATENCY,
    PIPELINE_MEMORY,
    PIPELINE_SCATTERED_STORES,
    UNIT,
    find_line,
)
from engine.profiles import SHIPPED_DIR, list_profiles, load_profile, parse_profile, profile_problems
from engine.units import MemorySpace, Unit

RULE = """
[[instruction]]
pattern = "fuzz.target.b32"
n_fu = 4
T = 4
lat_comp = 3
lat_comm = 2
n_ma = 1
lam = 1
Lam = 5
source = "test"
"""
BASE = (SHIPPED_DIR / "h100.toml").read_text() + RULE
SPECS = {"device": DEVICE, "manybsp": MANYBSP, "pipeline": PIPELINE, "pipeline.memory": PIPELINE_MEMORY,
         "pipeline.dram_loaded": PIPELINE_DRAM_LOADED, "pipeline.dram_loaded_scattered": PIPELINE_DRAM_LOADED,
         "pipeline.dram_loaded_mixed": PIPELINE_DRAM_LOADED_MIXED,
         "pipeline.line_latency": PIPELINE_LINE_LATENCY, "pipeline.blocks": PIPELINE_BLOCKS,
         "pipeline.scattered_stores": PIPELINE_SCATTERED_STORES, "instruction": INSTRUCTION}


def _numeric_keys() -> list[tuple[str, str, int]]:
    """(section, key, occurrence) of every number (and number list) in BASE."""
    data = tomllib.loads(BASE)
    out: list[tuple[str, str, int]] = []

    def walk(table: dict, section: str, occurrence: int = 0) -> None:
        for key, value in table.items():
            if isinstance(value, dict):
                walk(value, f"{section}.{key}" if section else key)
            elif isinstance(value, list) and value and isinstance(value[0], dict):
                for n, item in enumerate(value):
                    walk(item, f"{section}.{key}" if section else key, n)
            elif isinstance(value, (int, float, list)) and not isinstance(value, bool) and section:
                if not isinstance(value, list) or all(isinstance(v, int) for v in value):
                    out.append((section, key, occurrence))

    walk(data, "")
    return out


KEYS = _numeric_keys()


def _field(section: str, key: str):
    if section.startswith("units."):
        return UNIT[key]
    if section == "manybsp.barrier_overhead":
        return MANYBSP["mem_lat"]
    return SPECS[section][key]


def _replace(section: str, key: str, occurrence: int, literal: str) -> str:
    lines = BASE.splitlines()
    number = find_line(BASE, section, key, occurrence)
    assert number is not None, (section, key)
    line = lines[number - 1]
    m = re.match(r'^(\s*"?' + re.escape(key) + r'"?\s*=\s*)(\[[^\]]*\]|[^#]*?)(\s*#.*)?$', line)
    assert m is not None, line
    lines[number - 1] = m.group(1) + literal + (m.group(3) or "")
    return "\n".join(lines) + "\n"


def _refused(text: str) -> ProfileError:
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "bad.toml")
    message = str(info.value)
    assert "\n" not in message and message.startswith("bad.toml")
    return info.value


def test_the_base_profile_is_valid_and_has_every_kind_of_number():
    parse_profile(BASE, "base.toml")
    sections = {s.split(".")[0] for s, _, _ in KEYS}
    assert sections == {"device", "units", "manybsp", "pipeline", "instruction"}
    assert len(KEYS) > 60


ALWAYS_BAD = ["nan", "+nan", "-nan", "inf", "+inf", "-inf", "-1", "-0.5", "1e308", "1e400",
              "99999999999999999999", "0x7FFFFFFFFFFFFFFF", "true", "false", '"12"', "'x'", "[1, 2]",
              "[]", "{ a = 1 }", "{ a = { b = [1] } }", "1979-05-27", "07:32:00",
              "1979-05-27T07:32:00Z"]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(where=st.sampled_from(KEYS), literal=st.sampled_from(ALWAYS_BAD))
def test_bad_values_are_refused_with_file_key_and_line(where, literal):
    section, key, occurrence = where
    if _field(section, key).kind in ("int_list", "num_list") and literal in ("[1, 2]", "[]"):
        literal = "[1, -2]"  # a list is right for a list key; a negative element is not
    text = _replace(section, key, occurrence, literal)
    error = _refused(text)
    assert error.key is not None and error.key.endswith(key)
    assert error.line == find_line(text, section, key, occurrence)


@pytest.mark.parametrize("where", KEYS, ids=[f"{s}.{k}" for s, k, _ in KEYS])
def test_zero_is_refused_where_it_makes_no_sense(where):
    section, key, occurrence = where
    field = _field(section, key)
    text = _replace(section, key, occurrence, "[0]" if field.kind in ("int_list", "num_list") else "0")
    needs_positive = field.positive or (field.minimum or 0) >= 1
    if needs_positive:
        _refused(text)
    else:
        parse_profile(text, "ok.toml")


@pytest.mark.parametrize(("section", "key", "literal", "phrase"), [
    ("pipeline", "issue_limit", "nan", "finite"),
    ("manybsp", "mu", "0", "> 0"),
    ("manybsp", "mem_lat", "1e308", "<= 1000000000 (cycles)"),
    ("units.alu", "lat_comp", "1e308", "<= 1000000000 (cycles)"),
    ("device", "sm_count", "{ n = 132 }", "must be an integer"),
    ("pipeline.memory", "dram_lam", "1e-320", ">= 1e-09"),
])
def test_named_cases(section, key, literal, phrase):
    error = _refused(_replace(section, key, 0, literal))
    assert phrase in error.message


def _finite_costs(profile) -> None:
    for opcode, unit, space in [("fma.rn.f32", Unit.ALU, MemorySpace.NONE),
                                ("ld.global.f32", Unit.LDST, MemorySpace.GLOBAL),
                                ("fuzz.target.b32", Unit.ALU, MemorySpace.NONE)]:
        cost = profile.cost_for_opcode(opcode, unit, space=space, width_bytes=4)
        for value in (cost.T, cost.lat_comp, cost.lat_comm, cost.n_ma, cost.lam, cost.Lam):
            assert math.isfinite(value) and value >= 0


_NUMBER = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(2**70), 2**70).map(str),
)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(where=st.sampled_from(KEYS), literal=_NUMBER)
def test_any_number_is_accepted_within_bounds_or_refused(where, literal):
    section, key, occurrence = where
    try:
        profile = parse_profile(_replace(section, key, occurrence, literal), "any.toml")
    except ProfileError as exc:
        assert "\n" not in str(exc)
        return
    value = float(literal)
    field = _field(section, key)
    assert math.isfinite(value) and field.maximum is not None and value <= field.maximum
    _finite_costs(profile)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(at=st.integers(0, len(BASE)), cut=st.integers(0, 30),
       junk=st.text(st.sampled_from(list("[]{}=\"'#.,-+_ \n\t0123456789eEnaifxtrue\\\u00e9")), max_size=8))
def test_damaged_text_is_a_profile_error_or_a_valid_profile(at, cut, junk):
    text = BASE[:at] + junk + BASE[at + cut:]
    try:
        profile = parse_profile(text, "damaged.toml")
    except ProfileError as exc:
        assert "\n" not in str(exc)
        return
    _finite_costs(profile)


# ---------------------------------------------------------------------- files


def test_devices_fifos_and_folders_are_refused_without_reading(tmp_path):
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    start = time.perf_counter()
    for path in ("/dev/zero", "/dev/urandom", str(fifo), str(tmp_path)):
        with pytest.raises(ProfileError, match="not a regular file|cannot read"):
            load_profile(path)
    assert time.perf_counter() - start < 2


def test_oversized_and_non_utf8_files_are_refused(tmp_path):
    big = tmp_path / "big.toml"
    with open(big, "wb") as handle:
        handle.truncate(profiles.MAX_PROFILE_BYTES + 1)  # sparse: nothing is written
    with pytest.raises(ProfileError, match="at most"):
        load_profile(big)
    latin = tmp_path / "latin.toml"
    latin.write_bytes(BASE.encode().replace(b'name = "NVIDIA H100 SXM5"', b'name = "H100 \xe9"'))
    error = pytest.raises(ProfileError, load_profile, latin).value
    assert "not UTF-8" in error.message and error.line == find_line(BASE, "device", "name")
    nested = tmp_path / "nested.toml"
    nested.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ProfileError, match="nested too deeply"):
        load_profile(nested)


@pytest.fixture
def user_folder(monkeypatch, tmp_path):
    folder = tmp_path / "user"
    folder.mkdir()
    monkeypatch.setenv("WARPLINE_PROFILE_PATH", str(folder))
    monkeypatch.setattr(profiles.discovery, "USER_DIR", tmp_path / "none")
    return folder


def test_broken_user_files_are_skipped_with_a_visible_reason(user_folder):
    (user_folder / "mine.toml").write_text(BASE)
    (user_folder / "latin.toml").write_bytes(b"description = \"\xff\"\n")
    (user_folder / "typo.toml").write_text(BASE.replace("issue_limit = 3.91", "issue_limit = nan"))
    (user_folder / "folder.toml").mkdir()
    listed = list_profiles()
    assert "mine" in listed and "h100" in listed
    assert not {"latin", "typo", "folder"} & set(listed)
    problems = profile_problems()
    assert len(problems) == 3 and all("\n" not in p for p in problems)
    assert any("latin.toml:1" in p and "not UTF-8" in p for p in problems)
    assert any("typo.toml" in p and "issue_limit" in p and "finite" in p for p in problems)
    # Fixing a file is noticed (the check is cached by modification time and size).
    (user_folder / "typo.toml").write_text(BASE + "\n# fixed\n")
    assert "typo" in list_profiles()


def test_a_broken_override_of_a_shipped_name_is_an_error_not_another_gpu(user_folder):
    (user_folder / "h100.toml").write_text(BASE.replace("mu = ", "mu = 0 #", 1))
    with pytest.raises(ProfileError, match="mu") as info:
        load_profile("h100")
    assert info.value.file == str(user_folder / "h100.toml")
    assert "h100" not in list_profiles()
    assert any("h100.toml" in p and "hides" in p for p in profile_problems())
    (user_folder / "h100.toml").write_bytes(b"\xff\xfe")
    with pytest.raises(ProfileError, match="not UTF-8"):
        load_profile("h100")
    os.remove(user_folder / "h100.toml")
    assert load_profile("h100").path == SHIPPED_DIR / "h100.toml"


def test_unknown_names_still_list_the_known_ones(user_folder):
    with pytest.raises(ProfileError, match="no profile named 'nope'.*h100"):
        load_profile("nope")
    with pytest.raises(WarplineError):
        load_profile("bad\0name")
    assert isinstance(Path(SHIPPED_DIR / "h100.toml"), Path)
