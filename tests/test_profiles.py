"""GPU profiles: shipped files, the numbers of 000/001 they carry, validation, cost look-up."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.errors import ProfileError, WarplineError
from engine.manybsp.device_figures import barrier_overhead
from engine.profile_match import PatternSyntaxError, compile_pattern
from engine.profiles import SHIPPED_DIR, list_profiles, load_profile, parse_profile
from engine.units import MemorySpace, Unit

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference"
SHIPPED = ["940mx", "a100", "b200", "c2050", "gtx1060", "gtx1070", "gtx650ti", "gtx760", "h100", "h200", "k620",
           "l4", "l40s", "r9_380", "rtx2070", "rtx4090", "rtx5090"]


def _reference(name: str) -> dict:
    path = REFERENCE / name
    if not path.is_file():
        pytest.skip(f"reference data {path} not present")
    return json.loads(path.read_text())


@dataclass
class FakeClassification:
    unit: Unit
    space: MemorySpace = MemorySpace.NONE
    is_load: bool = False
    is_store: bool = False
    is_barrier: bool = False
    width_bytes: int | None = None


@dataclass
class FakeOperand:
    kind: str
    name: str | None = None


@dataclass
class FakeInstruction:
    full_opcode: str
    operands: tuple = ()


# ---------------------------------------------------------------------- shipped files


def test_every_shipped_profile_is_listed_and_loads(monkeypatch, tmp_path):
    monkeypatch.setenv("WARPLINE_PROFILE_PATH", "")
    monkeypatch.setattr("engine.profiles.discovery.USER_DIR", tmp_path / "none")
    listed = list_profiles()
    assert sorted(listed) == SHIPPED
    for name in SHIPPED:
        profile = load_profile(name)
        assert profile.name == name
        assert profile.device.sm_count > 0
        assert profile.pipeline.issue_limit > 0


@pytest.mark.parametrize("name", SHIPPED)
def test_every_number_has_a_source(name):
    profile = load_profile(name)
    assert profile.source_of("device.sm_count")
    assert profile.source_of("device.clock_mhz")
    for unit, spec in profile.units.items():
        assert spec.source, f"{name}: units.{unit.value} has no source"
    for rule in profile.rules:
        assert rule.source, f"{name}: rule {rule.pattern.text} has no source"
    assert profile.pipeline.source
    if profile.manybsp is not None:
        assert profile.manybsp.source


def test_h100_device_figures():
    # Costs are measured (tests/test_micro_profile.py checks their provenance); the device figures
    # are the public ones that ncu's occupancy limits confirmed (tests/test_occupancy_measured.py).
    h100 = load_profile("h100")
    assert h100.device.compute_capability == "9.0"
    assert (h100.device.sm_count, h100.device.schedulers_per_sm) == (132, 4)
    assert h100.device.shared_memory_per_sm == 228 * 1024
    assert h100.device.max_shared_memory_per_block_optin == 227 * 1024
    assert h100.device.reserved_shared_memory_per_block == 1024
    assert h100.device.clock_mhz == 1980
    for rule in h100.rules:
        assert "bench/micro/results" in rule.source or "not measured" in rule.source.lower(), rule


# ---------------------------------------------------------------------- 000 figures


def _opcode_of(printed: str) -> tuple[str, tuple[str, ...]]:
    """The full opcode of a printed 000 table row, and the special registers it reads."""
    words = printed.split()
    opcode = words[1] if words[0].startswith("@") else words[0]
    opcode = opcode.replace("/wide", "").replace("gt/ge/lt/le/eq", "gt").replace("gt/ge/le/lt/eq", "gt")
    specials = tuple(s for s in ("tid", "ctaid", "nctaid") if f"%{s}" in printed)
    return opcode, specials


@pytest.mark.parametrize("gpu", ["gtx760", "940mx", "gtx1070"])
def test_manybsp_profiles_reproduce_000_tables(gpu):
    ref = _reference("devices.json")["gpus"][gpu]
    profile = load_profile(gpu)
    parsed = ref["table_1_1_parsed"]
    assert profile.device.sm_count == parsed["n_sm"]
    assert profile.device.schedulers_per_sm == parsed["warp_schedulers_per_sm"]
    assert profile.device.compute_capability == parsed["compute_capability"]
    mb = profile.manybsp
    assert (mb.mem_lat, mb.mu, mb.block_lnch_ovh, mb.warp_lnch_ovh) == (
        ref["mem_lat"], ref["mu"], ref["block_lnch_ovh"], ref["warp_lnch_ovh"])
    assert (mb.g0, mb.g1, mb.g2) == (ref["g0"], ref["g1"], ref["g2"])
    checked = 0
    for row in ref["instruction_latency"]:
        text = row["instruction"]
        if text.startswith("bar.sync"):
            threads = int(re.search(r"nt=(\d+)", text).group(1))
            assert barrier_overhead(profile, threads) == row["overhead"]
            continue
        opcode, specials = _opcode_of(text)
        unit = {"SPs": Unit.ALU, "DPU": Unit.FP64, "SFU": Unit.SFU, "LDST": Unit.LDST}[row["fu"]]
        space = MemorySpace.GLOBAL if opcode.startswith(("ld.global", "st.global")) else MemorySpace.NONE
        cost = profile.cost_for_opcode(opcode, unit, space=space, special_registers=specials)
        assert not cost.is_default, text
        assert cost.unit == unit, text
        assert (cost.n_fu, cost.T) == (row["n_fu"], row["T"]), text
        if space == MemorySpace.GLOBAL:
            assert cost.lat_comm == (row["lat_comm"] or row["overhead"]) == mb.mem_lat, text
        else:
            assert cost.lat_comp == row["lat_comp"], text
            # Derived pipeline figures: λ = warp_size/(T·n_ws), Λ = latency.
            assert cost.lam == pytest.approx(32 / (row["T"] * profile.device.schedulers_per_sm))
            assert cost.Lam == row["lat_comp"]
        checked += 1
    assert checked >= 38


def test_barrier_overhead_interpolates_and_clamps():
    gtx760 = load_profile("gtx760")
    assert barrier_overhead(gtx760, 256) == 173
    assert barrier_overhead(gtx760, 640) == pytest.approx(173 + (297 - 173) * (640 - 256) / (1024 - 256))
    assert barrier_overhead(gtx760, 64) == 173
    assert barrier_overhead(gtx760, 2048) == 297
    # Without a [manybsp] section: the line derived from the bar.sync rule (λ 1.5, Λ 17), Λ + 7·λ
    # for 8 warps (tests/test_manybsp_derived.py covers every such profile).
    assert barrier_overhead(load_profile("rtx2070"), 256) == 17 + 7 * 1.5


# ---------------------------------------------------------------------- 001 figures

T5_OPCODES = {
    "cos.apx.f32": ("cos.approx.f32", Unit.SFU, MemorySpace.NONE),
    "mul.f32": ("mul.rn.f32", Unit.ALU, MemorySpace.NONE),
    "mul.f64": ("mul.f64", Unit.FP64, MemorySpace.NONE),
    "mul.s32": ("mul.lo.s32", Unit.ALU, MemorySpace.NONE),
    "div.f32": ("div.rn.f32", Unit.SFU, MemorySpace.NONE),
    "div.f64": ("div.rn.f64", Unit.FP64, MemorySpace.NONE),
    "div.s32": ("div.s32", Unit.ALU, MemorySpace.NONE),
    "bar.sync": ("bar.sync", Unit.BARRIER, MemorySpace.NONE),
    "ld.global.s32": ("ld.global.s32", Unit.LDST, MemorySpace.GLOBAL),
    # 001 ran OpenCL kernels: its "local" memory is CUDA's shared memory.
    "ld.local.s32": ("ld.shared.s32", Unit.LDST, MemorySpace.SHARED),
}
ARCH_FILES = {"Fermi": "c2050", "Kepler": "gtx650ti", "Maxwell": "k620", "Pascal": "gtx1060",
              "Turing": "rtx2070", "Tonga": "r9_380"}


@pytest.mark.parametrize("arch", sorted(ARCH_FILES))
def test_pipeline_profiles_reproduce_001_tables(arch):
    ref = _reference("pipeline/gpus.json")["by_architecture"][arch]
    profile = load_profile(ARCH_FILES[arch])
    assert profile.device.architecture == arch
    assert profile.pipeline.issue_limit == ref["IL"]
    assert profile.pipeline.lambda_alu == ref["lambda_ALU"]
    assert profile.pipeline.lambda_sfu == ref["lambda_SFU"]
    assert profile.units[Unit.ALU].lam == ref["lambda_ALU"]
    for name, (opcode, unit, space) in T5_OPCODES.items():
        expected = ref["instructions"][name]
        cost = profile.cost_for_opcode(opcode, unit, space=space)
        if expected["lambda"] is None:
            assert cost.is_default, f"{arch} {name} is '-' in 001 and must use the class default"
            continue
        assert not cost.is_default, name
        assert (cost.lam, cost.Lam) == (expected["lambda"], expected["Lambda"]), f"{arch} {name}"
    assert profile.manybsp is None
    local = ref["instructions"]["ld.local.s32"]
    assert profile.shared_memory_lambdas(0) == (local["lambda"], local["Lambda"])
    shared_default = profile.cost_for_opcode("st.shared.u8", Unit.LDST, space=MemorySpace.SHARED)
    assert (shared_default.lam, shared_default.Lam) == (local["lambda"], local["Lambda"])


def test_memory_mapper_of_001():
    k620 = load_profile("k620")                    # DRAM λ/Λ = 18/440, no L2 figures
    assert k620.global_memory_lambdas(1.0) == (18, 440)
    assert k620.global_memory_lambdas(0.5) == (18, 440)        # L2 falls back to DRAM
    assert k620.global_memory_lambdas(2.0) == (36, 440 + 18)
    h100 = load_profile("h100")
    m = h100.pipeline.memory
    lam, Lam = h100.global_memory_lambdas(0.25)
    assert lam == pytest.approx(0.25 * m["dram_lam"] + 0.75 * m["l2_lam"])
    assert Lam == pytest.approx(0.25 * m["dram_Lam"] + 0.75 * m["l2_Lam"])
    assert k620.shared_memory_lambdas(3) == (4 * 1, 28 + 3 * 1)
    # 000 GPUs: the ld.global rule (λ = 32/(T·n_ws) = 1, Λ = mem_lat) stands in for DRAM.
    assert load_profile("gtx1070").global_memory_lambdas(1.0) == (1, 394)
    with pytest.raises(WarplineError):
        k620.global_memory_lambdas(-1)
    with pytest.raises(WarplineError):
        k620.shared_memory_lambdas(float("nan"))


# ---------------------------------------------------------------------- cost look-up


def test_cost_with_instruction_and_classification_objects():
    gtx760 = load_profile("gtx760")
    ins = FakeInstruction("mov.u32", (FakeOperand("register", "%r1"), FakeOperand("special", "%tid.x")))
    cost = gtx760.cost(ins, FakeClassification(Unit.ALU))
    assert cost.lat_comp == 32 and cost.pattern == "mov.{u32,b32,s32}"
    move = FakeInstruction("mov.u32", (FakeOperand("register", "%r2"),))
    plain = gtx760.cost(move, FakeClassification(Unit.ALU))
    assert plain.lat_comp == 16
    load = gtx760.cost("ld.global.v2.f32", FakeClassification(Unit.LDST, MemorySpace.GLOBAL, is_load=True,
                                                              width_bytes=8))
    assert load.lat_comm == 191 and load.n_ma == 2 and load.lat_comp == 0
    assert gtx760.cost("add.s32", FakeClassification(Unit.ALU)).n_ma == 0
    param = FakeClassification(Unit.ALU, MemorySpace.PARAM, is_load=True, width_bytes=8)
    assert gtx760.cost("ld.param.u64", param).n_ma == 0
    shared = FakeClassification(Unit.LDST, MemorySpace.SHARED, is_store=True, width_bytes=8)
    assert gtx760.cost("st.shared.f64", shared).n_ma == 1


def test_unmatched_opcode_uses_unit_defaults_and_is_marked():
    gtx1070 = load_profile("gtx1070")
    cost = gtx1070.cost_for_opcode("popc.b32", Unit.ALU)
    assert cost.is_default and cost.pattern is None
    assert "class default" in cost.source
    assert (cost.T, cost.lat_comp, cost.n_fu) == (32, 6, 32)
    store = gtx1070.cost_for_opcode("st.local.f32", Unit.LDST, space=MemorySpace.LOCAL, width_bytes=4)
    assert store.is_default and store.lat_comm == 394 and store.n_ma == 1
    # A control instruction without its own unit section is charged like the ALU (000's FU1).
    assert gtx1070.cost_for_opcode("ret", Unit.CONTROL).T == 32


PROFILE_TEXT = (SHIPPED_DIR / "gtx1070.toml").read_text()


def _with_rules(rules: str) -> str:
    return PROFILE_TEXT.split("[[instruction]]", 1)[0] + rules + "\n[sources]\ndevice = \"test\"\n"


def test_most_specific_rule_wins_and_partial_rules_fill_from_defaults():
    profile = parse_profile(_with_rules('''
[[instruction]]
pattern = "ld.*"
lat_comp = 1
source = "general"

[[instruction]]
pattern = "ld.global.*"
lat_comp = 2
source = "global"

[[instruction]]
pattern = "ld.{global,shared}.f32"
lat_comp = 3
source = "braces"

[[instruction]]
pattern = "ld.global.f32"
lat_comp = 4
source = "exact"

[[instruction]]
pattern = "ld.*.f32"
lat_comp = 5
source = "tie with ld.{global,shared}.f32? no: fewer alternatives"
'''), "t.toml")
    pick = lambda op: profile.cost_for_opcode(op, Unit.LDST).source  # noqa: E731
    assert pick("ld.global.f32") == "exact"
    assert pick("ld.shared.f32") == "braces"
    assert pick("ld.global.nc.v4.f32") == "global"
    assert pick("ld.local.f32") == "tie with ld.{global,shared}.f32? no: fewer alternatives"
    assert pick("ld.param.u64") == "general"
    cost = profile.cost_for_opcode("ld.param.u64", Unit.LDST)
    assert "T" in cost.defaulted and "lat_comp" not in cost.defaulted and not cost.is_default


def test_equal_specificity_first_rule_wins():
    profile = parse_profile(_with_rules('''
[[instruction]]
pattern = "add.*.f32"
source = "first"

[[instruction]]
pattern = "add.rn.*"
source = "second"
'''), "t.toml")
    assert profile.cost_for_opcode("add.rn.f32", Unit.ALU).source == "first"


@pytest.mark.parametrize(("pattern", "opcode", "matches"), [
    ("add.f32", "add.f32", True),
    ("add.f32", "add.rn.f32", False),
    ("rcp.*.f32", "rcp.f32", True),
    ("rcp.*.f32", "rcp.approx.ftz.f32", True),
    ("rcp.*.f32", "rcp.approx.f64", False),
    ("ld.global.*", "ld.global.nc.v4.f32", True),
    ("ld.global.*", "ld.shared.f32", False),
    ("setp.{lt,gt}.s32", "setp.gt.s32", True),
    ("setp.{lt,gt}.s32", "setp.ge.s32", False),
    ("ld.shared::cta.*", "ld.shared::cta.u32", True),
])
def test_pattern_matching(pattern, opcode, matches):
    assert compile_pattern(pattern).matches(opcode) is matches


@pytest.mark.parametrize("bad", ["", "*.f32", "ld..f32", "ld.glo bal", "ld.{a,}.f32", " ld"])
def test_bad_patterns_are_rejected(bad):
    with pytest.raises(PatternSyntaxError):
        compile_pattern(bad)


# ---------------------------------------------------------------------- validation


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith(needle))


def _error(text: str) -> ProfileError:
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "bad.toml")
    assert isinstance(info.value, WarplineError)
    assert info.value.file == "bad.toml"
    return info.value


def test_misspelt_key_is_an_error_with_its_line():
    text = PROFILE_TEXT.replace('pattern = "fma.*.f32"\nunit = "alu"', 'pattern = "fma.*.f32"\nunti = "alu"')
    err = _error(text)
    assert err.key.endswith(".unti") and err.key.startswith("instruction[")
    assert err.line == _line_of(text, "unti =")
    assert "unknown key" in err.message


@pytest.mark.parametrize(("old", "new", "key", "phrase"), [
    ("sm_count = 15", 'sm_count = "15"', "device.sm_count", "integer"),
    ("warp_size = 32", "warp_size = 32.5", "device.warp_size", "integer"),
    ("clock_mhz = 1683", "clock_mhz = -1683", "device.clock_mhz", ">="),
    ("mem_lat = 394", "mem_lat = -394", "manybsp.mem_lat", ">="),
    ("issue_limit = 4", "issue_limit = true", "pipeline.issue_limit", "number"),
    ("per_scheduler = 32\n", "per_scheduler = [32]\n", "units.alu.per_scheduler", "integer"),
])
def test_wrong_type_or_negative_value_is_located(old, new, key, phrase):
    text = PROFILE_TEXT.replace(old, new, 1)
    assert text != PROFILE_TEXT
    err = _error(text)
    assert err.key == key
    assert phrase in err.message
    assert err.line == _line_of(text, new.split("\n")[0])


def test_missing_required_key_points_at_its_section():
    text = PROFILE_TEXT.replace("warp_size = 32\n", "", 1)
    err = _error(text)
    assert "warp_size" in err.message and err.line == _line_of(text, "[device]")


@pytest.mark.parametrize(("edit", "phrase"), [
    (lambda t: t.replace('unit = "alu"', 'unit = "gpu"', 1), "unknown unit"),
    (lambda t: t.replace('pattern = "fma.*.f32"', 'pattern = "add.*.f32"', 1), "already defined"),
    (lambda t: t.replace('pattern = "fma.*.f32"', 'pattern = "fma.*.f32."', 1), "bad part"),
    (lambda t: t.replace("[units.sfu]", "[units.sfuu]", 1), "unknown unit"),
    (lambda t: t.replace("256 = 118", "many = 118", 1), "threads per block"),
    (lambda t: t + '\n[extra]\nx = 1\n', "unknown top-level key"),
    (lambda t: t.replace("\n[sources]\n", '\n[sources]\n"device.clok" = "typo"\n', 1), "names no section"),
    (lambda t: t.replace("\n[sources]\n", '\n[sources]\nunits.alu = "unquoted"\n', 1), "quote dotted keys"),
    (lambda t: t.replace("mem_lat = 394", "mem_lat = ", 1), "not valid TOML"),
])
def test_other_validation_errors(edit, phrase):
    err = _error(edit(PROFILE_TEXT))
    assert phrase in err.message
    assert err.line is not None


def test_profiles_from_user_directories(monkeypatch, tmp_path):
    user = tmp_path / "mine"
    user.mkdir()
    (user / "gtx1070.toml").write_text(PROFILE_TEXT.replace('name = "GeForce GTX 1070"', 'name = "My 1070"'))
    (user / "custom.toml").write_text(PROFILE_TEXT)
    monkeypatch.setenv("WARPLINE_PROFILE_PATH", str(user))
    listed = list_profiles()
    assert listed["custom"] == user / "custom.toml"
    assert listed["gtx1070"] == user / "gtx1070.toml"        # the user copy shadows the shipped one
    assert load_profile("gtx1070").device.name == "My 1070"
    assert load_profile(str(user / "custom.toml")).name == "custom"
    with pytest.raises(ProfileError, match="no profile named 'nope'"):
        load_profile("nope")
    with pytest.raises(ProfileError, match="cannot read"):
        load_profile(str(tmp_path / "missing.toml"))
