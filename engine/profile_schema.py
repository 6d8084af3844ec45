"""The schema of GPU profile files (``profiles/*.toml``) and its validation.

Kept apart from :mod:`engine.profiles` so that the list of accepted keys reads as one table.
Every problem becomes a :class:`ProfileError` naming the file, the dotted key and the line;
unknown keys are errors because a typo (``lat_comn``) must never fall back to a default silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from engine.errors import ProfileError
from engine.profile_match import PatternSyntaxError, compile_pattern
from engine.units import Unit


@dataclass(frozen=True)
class Field:
    """One accepted key: its kind (``int``, ``num``, ``str``, ``bool``, ``int_list``),
    whether it is required, and the smallest value allowed (numbers)."""

    kind: str
    required: bool = False
    minimum: float | None = 0


def _f(kind: str, required: bool = False, minimum: float | None = 0) -> Field:
    return Field(kind, required, minimum)


REQ_INT = _f("int", True)
REQ_POS = _f("int", True, 1)
REQ_NUM = _f("num", True)
OPT_INT = _f("int")
OPT_NUM = _f("num")
OPT_STR = _f("str", minimum=None)

TOP_LEVEL: dict[str, Field] = {"description": OPT_STR}

DEVICE: dict[str, Field] = {
    "name": _f("str", True, None),
    "architecture": _f("str", True, None),
    "vendor": OPT_STR,  # "nvidia" (default) or "amd"
    "chip": OPT_STR,
    "compute_capability": OPT_STR,  # "6.1"; absent for non-NVIDIA devices
    "sm_count": REQ_POS,
    "schedulers_per_sm": REQ_POS,
    "dispatch_units_per_scheduler": REQ_POS,
    "warp_size": REQ_POS,
    "clock_mhz": _f("num", True, 1),
    "max_threads_per_sm": REQ_POS,
    "max_warps_per_sm": REQ_POS,
    "max_blocks_per_sm": REQ_POS,
    "max_threads_per_block": REQ_POS,
    "registers_per_sm": REQ_POS,
    "max_registers_per_block": REQ_POS,
    "max_registers_per_thread": REQ_POS,
    "register_allocation_unit": REQ_POS,  # registers, per warp
    "register_file_partitions": REQ_POS,  # sub-partitions that each own a slice of the file
    "warp_allocation_granularity": _f("int", False, 1),
    "shared_memory_per_sm": REQ_INT,  # the largest carve-out
    "shared_memory_carveouts": _f("int_list"),
    "max_shared_memory_per_block": REQ_INT,
    "max_shared_memory_per_block_optin": OPT_INT,
    "shared_memory_allocation_unit": REQ_POS,
    "reserved_shared_memory_per_block": REQ_INT,
    "shared_memory_banks": _f("int", False, 1),
    "l1_cache_bytes": OPT_INT,
    "l2_cache_bytes": OPT_INT,
    "global_memory_bytes": OPT_INT,
    "global_memory_segment_bytes": _f("int", False, 1),
    "memory_bandwidth_gbps": OPT_NUM,
    # Cycles an empty kernel takes (Nsight Compute's gpc__cycles_elapsed.max for one block): what
    # every launch pays on top of the models' execution time.
    "kernel_launch_cycles": OPT_NUM,
}

UNIT: dict[str, Field] = {
    "per_sm": REQ_INT,
    "per_scheduler": REQ_INT,
    "n_fu": OPT_INT,  # 000's n_fu for this class (default per_scheduler)
    "T": _f("num", False, 0),  # results per clock per scheduler (000's T_i)
    "lat_comp": OPT_NUM,
    "lat_comm": OPT_NUM,
    "lam": OPT_NUM,
    "Lam": OPT_NUM,
    "source": OPT_STR,
}
REQUIRED_UNITS = ("alu", "fp64", "sfu", "ldst")

MANYBSP: dict[str, Field] = {
    "mem_lat": REQ_NUM,
    "g0": OPT_NUM,  # printed in 000's parameter blocks, unused by eqs.
    "g1": OPT_NUM,
    "g2": OPT_NUM,
    "mu": _f("num", True, 0),
    "block_lnch_ovh": REQ_NUM,
    "warp_lnch_ovh": REQ_NUM,
    "issue_cycle": OPT_NUM,
    "source": OPT_STR,
}

PIPELINE: dict[str, Field] = {
    "issue_limit": _f("num", True, 0),
    "lambda_alu": OPT_NUM,
    "lambda_sfu": OPT_NUM,
    "source": OPT_STR,
}

PIPELINE_MEMORY: dict[str, Field] = {
    "global_lam": OPT_NUM,
    "global_Lam": OPT_NUM,
    "dram_lam": OPT_NUM,                    # 001 section 6.3: λ/Λ of DRAM and of L2, mixed by
    "dram_Lam": OPT_NUM,                    # R = bytes_DRAM / bytes_global of a kernel
    "l2_lam": OPT_NUM,
    "l2_Lam": OPT_NUM,
    "shared_lam": OPT_NUM,
    "shared_Lam": OPT_NUM,
    "local_lam": OPT_NUM,
    "local_Lam": OPT_NUM,
    "atomic_same_address_cycles": OPT_NUM,  # GPU cycles per atomic on one global address (serial)
    "source": OPT_STR,
}

INSTRUCTION: dict[str, Field] = {
    "pattern": _f("str", True, None),
    "unit": OPT_STR,
    "n_fu": OPT_INT,
    "T": OPT_NUM,
    "lat_comp": OPT_NUM,
    "lat_comm": OPT_NUM,
    "n_ma": OPT_NUM,
    "lam": OPT_NUM,
    "Lam": OPT_NUM,
    "special_registers": _f("str_list"),  # rule applies only when one of these is read
    "source": OPT_STR,
    "note": OPT_STR,
}

SECTIONS = ("description", "device", "units", "manybsp", "pipeline", "instruction", "sources")


# --------------------------------------------------------------------------- line lookup

_HEADER_RE = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*(\]\]?)\s*(#.*)?$")


def find_line(text: str, section: str | None, key: str | None, occurrence: int = 0) -> int | None:
    """1-based line of ``key`` inside ``[section]`` (the ``occurrence``-th ``[[section]]``
    for arrays of tables); the header line when ``key`` is None; None when not found.

    A plain text scan is enough because profiles are flat: it only needs to point the
    user at the right spot, not to re-parse TOML.
    """
    lines = text.splitlines()
    current: str | None = None
    seen = -1
    in_target = section is None
    for number, line in enumerate(lines, start=1):
        header = _HEADER_RE.match(line)
        if header:
            current = header.group(2)
            if current == section:
                if header.group(1) == "[[":
                    seen += 1
                    in_target = seen == occurrence
                else:
                    in_target = True
                if in_target and key is None:
                    return number
            else:
                in_target = False
            continue
        if in_target and key is not None:
            stripped = line.strip()
            for candidate in (key, f'"{key}"'):
                if re.match(re.escape(candidate) + r"\s*=", stripped):
                    return number
    return None


# --------------------------------------------------------------------------- validation


class Validator:
    """Checks one parsed profile against the schema; ``fail`` raises the located error."""

    def __init__(self, data: dict[str, Any], text: str, file: str) -> None:
        self.data = data
        self.text = text
        self.file = file

    def fail(self, message: str, section: str | None, key: str | None, occurrence: int = 0) -> None:
        """Raise the error, located at ``key`` inside ``section`` (or at the section header)."""
        line = find_line(self.text, section, key, occurrence)
        if line is None and section is None and key is not None:
            line = find_line(self.text, key, None)  # a whole table: point at its header
        if line is None and key is not None:
            line = find_line(self.text, section, None, occurrence)
        dotted = ".".join(p for p in (section, key) if p)
        if section == "instruction" and key:
            dotted = f"instruction[{occurrence}].{key}"
        raise ProfileError(message, self.file, dotted or None, line)

    def check_table(self, table: Any, spec: dict[str, Field], section: str, occurrence: int = 0) -> None:
        if not isinstance(table, dict):
            self.fail("must be a table", None, section)
        for key in table:
            if key not in spec:
                known = ", ".join(sorted(spec))
                self.fail(f"unknown key (accepted: {known})", section, key, occurrence)
        for key, field in spec.items():
            if key not in table:
                if field.required:
                    self.fail(f"required key {key!r} is missing", section, None, occurrence)
                continue
            self.check_value(table[key], field, section, key, occurrence)

    def check_value(self, value: Any, field: Field, section: str | None, key: str, occurrence: int) -> None:
        def bad(what: str) -> None:
            self.fail(f"{what}, got {value!r}", section, key, occurrence)

        is_int = isinstance(value, int) and not isinstance(value, bool)
        is_num = is_int or isinstance(value, float)
        if field.kind == "str" and not isinstance(value, str):
            bad("must be a string")
        elif field.kind == "bool" and not isinstance(value, bool):
            bad("must be true or false")
        elif field.kind == "int" and not is_int:
            bad("must be an integer")
        elif field.kind == "num" and not is_num:
            bad("must be a number")
        elif field.kind == "str_list":
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                bad("must be a list of non-empty strings")
        elif field.kind == "int_list":
            if not isinstance(value, list) or not all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value
            ):
                bad("must be a list of non-negative integers")
        if field.kind in ("int", "num") and field.minimum is not None and value < field.minimum:
            bad(f"must be >= {field.minimum:g}")

    def validate(self) -> None:
        data = self.data
        for key in data:
            if key not in SECTIONS:
                self.fail(f"unknown top-level key (accepted: {', '.join(SECTIONS)})", None, key)
        if "description" in data:
            self.check_value(data["description"], OPT_STR, None, "description", 0)
        if "device" not in data:
            self.fail("the [device] section is missing", None, None)
        self.check_table(data["device"], DEVICE, "device")
        self._validate_units(data.get("units"))
        if "manybsp" in data:
            self._validate_manybsp(data["manybsp"])
        if "pipeline" not in data:
            self.fail("the [pipeline] section is missing", None, None)
        pipeline = dict(data["pipeline"]) if isinstance(data["pipeline"], dict) else data["pipeline"]
        memory = pipeline.pop("memory", None) if isinstance(pipeline, dict) else None
        self.check_table(pipeline, PIPELINE, "pipeline")
        if memory is not None:
            self.check_table(memory, PIPELINE_MEMORY, "pipeline.memory")
        self._validate_instructions(data.get("instruction", []))
        self._validate_sources(data.get("sources", {}))

    def _validate_units(self, units: Any) -> None:
        if units is None:
            self.fail("the [units.*] sections are missing", None, None)
        if not isinstance(units, dict):
            self.fail("must be a table of [units.<name>] tables", None, "units")
        valid = {u.value for u in Unit}
        for name, table in units.items():
            if name not in valid:
                self.fail(f"unknown unit (accepted: {', '.join(sorted(valid))})", f"units.{name}", None)
            self.check_table(table, UNIT, f"units.{name}")
        for name in REQUIRED_UNITS:
            if name not in units:
                self.fail(f"the [units.{name}] section is missing", None, None)

    def _validate_manybsp(self, table: Any) -> None:
        if not isinstance(table, dict):
            self.fail("must be a table", None, "manybsp")
        body = dict(table)
        barrier = body.pop("barrier_overhead", None)
        self.check_table(body, MANYBSP, "manybsp")
        if barrier is None:
            self.fail("required table [manybsp.barrier_overhead] is missing", "manybsp", None)
        if not isinstance(barrier, dict) or not barrier:
            self.fail("must map threads per block to cycles", "manybsp", "barrier_overhead")
        for threads, cycles in barrier.items():
            if not threads.isdigit() or int(threads) <= 0:
                section = "manybsp.barrier_overhead"
                self.fail("keys are threads per block (positive integers)", section, threads)
            self.check_value(cycles, REQ_NUM, "manybsp.barrier_overhead", threads, 0)

    def _validate_instructions(self, rules: Any) -> None:
        if not isinstance(rules, list):
            self.fail("must be an array of tables: write [[instruction]]", None, "instruction")
        seen: dict[tuple[str, tuple[str, ...]], int] = {}
        valid_units = {u.value for u in Unit}
        for i, rule in enumerate(rules):
            self.check_table(rule, INSTRUCTION, "instruction", i)
            pattern = rule["pattern"]
            try:
                compile_pattern(pattern)
            except PatternSyntaxError as exc:
                self.fail(str(exc), "instruction", "pattern", i)
            key = (pattern, tuple(rule.get("special_registers", ())))
            if key in seen:
                message = f"pattern {pattern!r} already defined by rule {seen[key]} (rules count from 0)"
                self.fail(message, "instruction", "pattern", i)
            seen[key] = i
            if "unit" in rule and rule["unit"] not in valid_units:
                accepted = ", ".join(sorted(valid_units))
                self.fail(f"unknown unit (accepted: {accepted})", "instruction", "unit", i)

    def _validate_sources(self, sources: Any) -> None:
        if not isinstance(sources, dict):
            self.fail("must be a table of 'key = \"source\"' lines", None, "sources")
        for key, value in sources.items():
            if not isinstance(value, str):
                self.fail(
                    f'must be a string, got {value!r} (quote dotted keys: "device.clock_mhz" = ...)',
                    "sources",
                    key,
                )
            if not self._names_existing_key(key):
                self.fail("names no section or key of this profile", "sources", key)

    def _names_existing_key(self, dotted: str) -> bool:
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
        return True


def validate_profile_data(data: dict[str, Any], text: str, file: str) -> None:
    """Raise :class:`ProfileError` unless ``data`` (parsed from ``text``) follows the schema."""
    Validator(data, text, file).validate()
