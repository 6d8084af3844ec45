"""The schema of GPU profile files (``profiles/*.toml``) and its validation.

Kept apart from :mod:`engine.profiles` so that the list of accepted keys reads as one table.
Every problem becomes a :class:`ProfileError` naming the file, the dotted key and the line;
unknown keys are errors because a typo (``lat_comn``) must never fall back to a default silently.

Every number must be finite and lie within its key's bounds. Lower bounds: counts, sizes of
allocation units, clocks, throughputs (``T``, λ, ``issue_limit``, ``mu``, ``issue_cycle``) must be
positive (rates at least :data:`MIN_POSITIVE`); latencies, overheads and byte sizes may be 0.
Upper bounds are far beyond any real GPU and only keep absurd values (``1e308``, a stray
exponent) out of the models:

=============================  =====================================================
:data:`MAX_CYCLES` (10^9)      every latency, overhead, λ/Λ and cycle count
:data:`MAX_UNITS` (2^16)       functional units per SM/scheduler, ``n_fu``, ``T``
:data:`MAX_BYTES` (2^50)       memory and cache sizes in bytes
per key (below)                threads, warps, blocks, registers, clocks, ratios
=============================  =====================================================
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from engine.errors import ProfileError
from engine.profile_match import PatternSyntaxError, compile_pattern
from engine.units import Unit

MAX_CYCLES = 1e9        # a second at 1 GHz: no instruction, launch or barrier costs that much
MAX_UNITS = 1 << 16     # lanes of one unit class per SM or per scheduler
MAX_BYTES = 1 << 50     # a petabyte
MIN_POSITIVE = 1e-9     # the smallest value of a key that must be positive (rates, ratios)
MAX_SHOWN = 60          # characters of an offending value quoted in a message
_CAPABILITY = re.compile(r"\d{1,3}(?:\.\d{1,3})?")
_THREADS = re.compile(r"[1-9][0-9]{0,8}")


@dataclass(frozen=True)
class Field:
    """One accepted key: its kind (``int``, ``num``, ``str``, ``bool``, ``int_list``,
    ``num_list``, ``str_list``), whether it is required, and the bounds of a number (``minimum`` is
    exclusive when ``positive``; ``maximum`` inclusive)."""

    kind: str
    required: bool = False
    minimum: float | None = 0
    maximum: float | None = None
    positive: bool = False


def _f(kind: str, required: bool = False, minimum: float | None = 0,
       maximum: float | None = None, positive: bool = False) -> Field:
    return Field(kind, required, minimum, maximum, positive)


def _count(maximum: float, required: bool = True) -> Field:
    """An integer count of at least 1."""
    return _f("int", required, 1, maximum)


def _cycles(required: bool = False, positive: bool = False) -> Field:
    return _f("num", required, 0, MAX_CYCLES, positive)


def _bytes(required: bool = False) -> Field:
    return _f("int", required, 0, MAX_BYTES)


OPT_STR = _f("str", minimum=None)
REQ_NUM = _cycles(True)  # a cycle count (kept under its old name)
CYCLES = _cycles()
RATE = _cycles(positive=True)  # λ: cycles per warp instruction, never 0

TOP_LEVEL: dict[str, Field] = {"description": OPT_STR}

# [provenance]: how the profile's figures were obtained, said in the window and the CLI beside
# every figure computed with it. A profile without the section states nothing (a user's own).
PROVENANCE: dict[str, Field] = {
    "basis": _f("str", True, None),          # "public specifications and published microbenchmarks"
    "measured_here": _f("bool", True),       # were its costs measured on that GPU by bench/micro?
}

DEVICE: dict[str, Field] = {
    "name": _f("str", True, None),
    "architecture": _f("str", True, None),
    "vendor": OPT_STR,  # "nvidia" (default) or "amd"
    "chip": OPT_STR,
    "compute_capability": OPT_STR,  # "6.1"; absent for non-NVIDIA devices
    "sm_count": _count(1 << 20),
    "schedulers_per_sm": _count(1024),
    "dispatch_units_per_scheduler": _count(1024),
    "warp_size": _count(1024),
    "clock_mhz": _f("num", True, 1, 1e6),
    "max_threads_per_sm": _count(1 << 24),
    "max_warps_per_sm": _count(1 << 20),
    "max_blocks_per_sm": _count(1 << 20),
    "max_threads_per_block": _count(1 << 24),
    "registers_per_sm": _count(1 << 30),
    "max_registers_per_block": _count(1 << 30),
    "max_registers_per_thread": _count(1 << 20),
    "register_allocation_unit": _count(1 << 20),  # registers, per warp
    "register_file_partitions": _count(1024),  # sub-partitions that each own a slice of the file
    "warp_allocation_granularity": _count(1024, False),
    "shared_memory_per_sm": _bytes(True),  # the largest carve-out
    "shared_memory_carveouts": _f("int_list", False, 0, MAX_BYTES),
    "max_shared_memory_per_block": _bytes(True),
    "max_shared_memory_per_block_optin": _bytes(),
    "shared_memory_allocation_unit": _count(1 << 30),
    "reserved_shared_memory_per_block": _bytes(True),
    "shared_memory_banks": _count(1 << 16, False),
    "l1_cache_bytes": _bytes(),
    "l2_cache_bytes": _bytes(),
    "global_memory_bytes": _bytes(),
    "global_memory_segment_bytes": _count(1 << 30, False),
    "memory_bandwidth_gbps": _f("num", False, 0, 1e9, True),
    # Cycles an empty kernel takes (Nsight Compute's gpc__cycles_elapsed.max for one block): what
    # every launch pays on top of the models' execution time.
    "kernel_launch_cycles": CYCLES,
    # The profile PTX of its architecture (compute_capability) gets when no --profile is given and
    # several profiles share the architecture (h100 and h200 are both 9.0).
    "default_for_target": _f("bool"),
}

UNIT: dict[str, Field] = {
    "per_sm": _count(MAX_UNITS),
    "per_scheduler": _count(MAX_UNITS),
    "n_fu": _count(MAX_UNITS, False),  # 000's n_fu for this class (default per_scheduler)
    "T": _f("num", False, 0, MAX_UNITS, True),  # results per clock per scheduler (000's T_i)
    "lat_comp": CYCLES,
    "lat_comm": CYCLES,
    "lam": RATE,
    "Lam": CYCLES,
    "source": OPT_STR,
}
REQUIRED_UNITS = ("alu", "fp64", "sfu", "ldst")

MANYBSP: dict[str, Field] = {
    "mem_lat": REQ_NUM,
    "g0": CYCLES,  # printed in 000's parameter blocks, unused by eqs.
    "g1": CYCLES,
    "g2": CYCLES,
    "mu": _f("num", True, 0, 1e6, True),
    "block_lnch_ovh": REQ_NUM,
    "warp_lnch_ovh": REQ_NUM,
    "issue_cycle": _cycles(positive=True),
    "source": OPT_STR,
}

PIPELINE: dict[str, Field] = {
    "issue_limit": _f("num", True, 0, 1024, True),  # warp instructions per cycle per SM
    "lambda_alu": RATE,
    "lambda_sfu": RATE,
    "source": OPT_STR,
}

PIPELINE_MEMORY: dict[str, Field] = {
    "global_lam": RATE,
    "global_Lam": CYCLES,
    "dram_lam": RATE,                       # 001 section 6.3: λ/Λ of DRAM and of L2, mixed by
    "dram_Lam": CYCLES,                     # R = bytes_DRAM / bytes_global of a kernel
    "l2_lam": RATE,
    "l2_Lam": CYCLES,
    "l1_lam": RATE,                         # one 128-byte L1-hit wavefront per SM
    "l1_request_lam": RATE,                 # SM cycles L1 takes at least per global load request
    "l1_fill_lam": RATE,                    # SM cycles more per 128 bytes a load brings from beyond L1
    "l1_line_lam": RATE,                    # per line of an L1-hit request whose lanes use 32 banks (tag rate)
    "l1_Lam": CYCLES,                       # L1 hit latency
    "shared_lam": RATE,
    "shared_Lam": CYCLES,
    "local_lam": RATE,                      # a local load beyond L1 (512 KB of local data per SM)
    "local_Lam": CYCLES,
    "local_l1_lam": RATE,                   # a local load request whose data is in L1, per 128-byte line
    "local_store_lam": RATE,                # a local store request (written through to L2), every lane
    "local_store_partial_lam": RATE,        # ... only some lanes: its sectors partly written
    "atomic_same_address_cycles": RATE,     # GPU cycles per atomic on one global address (serial)
    "atomic_same_address_request_cycles": RATE,  # ... for a warp request with one active lane
    "atomic_distinct_lane_lam": RATE,       # SM cycles per atomic lane on spread addresses, all SMs issuing
    "shared_cas_pass_cycles": RATE,         # SM cycles of one pass of a shared-memory compare-and-swap retry loop
    "constant_divergent_cycles": RATE,      # SM cycles per distinct constant address of a warp request
    "constant_uniform_lam": RATE,           # SM cycles per LDC warp request on one address, all SMs issuing
    "texture_fetch_lam": RATE,              # SM cycles of the texture pipe per 1-D fetch warp request (L1 hits)
    # L2 read rate of lines every SM reads over that of lines one SM reads alone
    "l2_shared_read_gain": _f("num", False, 1, 16),
    "l2_dirty_bytes": _f("num", False, 0, MAX_BYTES),  # stores L2 still holds dirty when a kernel ends
    "l2_dirty_bytes_streaming": _f("num", False, 0, MAX_BYTES),  # ... beside as many other bytes read
    "source": OPT_STR,
}

# DRAM latency under load (``k_loaded``): at each share of the peak DRAM bandwidth the rest of the
# GPU draws, a load waits this many cycles more than dram_Lam. Shares rise from 0 to 1.
PIPELINE_DRAM_LOADED: dict[str, Field] = {
    "bandwidth_share": _f("num_list", True, 0, 1),
    "extra_Lam": _f("num_list", True, 0, MAX_CYCLES),
    "source": OPT_STR,
}

# One [[pipeline.dram_loaded_mixed]] table: the curve beside streams that write this share of
# their DRAM bytes (``run_micro.sh mixed``); shares of the reading streams' peak, ending below it.
PIPELINE_DRAM_LOADED_MIXED: dict[str, Field] = {**PIPELINE_DRAM_LOADED,
                                                "write_share": _f("num", True, 0, 1, positive=True)}

# A block slot's turnaround (``run_micro.sh turn``): cycles from a block's last result to the next
# block's first warp on the same slot.
PIPELINE_BLOCKS: dict[str, Field] = {
    "block_turnaround": CYCLES,
    "source": OPT_STR,
}

# Multi-line load latency (``run_micro.sh lanes``): cycles a warp load waits beyond its one-line
# latency when its lanes touch ``lines`` different lines, per level.
PIPELINE_LINE_LATENCY: dict[str, Field] = {
    "lines": _f("num_list", True, 1, 32),
    "l1_extra": _f("num_list", True, 0, MAX_CYCLES),
    "l2_extra": _f("num_list", True, 0, MAX_CYCLES),
    "dram_extra": _f("num_list", True, 0, MAX_CYCLES),
    "source": OPT_STR,
}

# Stores / atomic adds at random 4-byte slots (``store_scatter.cu``): per footprint, DRAM bytes
# read and written per store and SM cycles per store with every SM issuing.
SCATTERED_OPERATIONS = ("store", "red")
PIPELINE_SCATTERED_STORES: dict[str, Field] = {
    "operation": _f("str", True, None),
    "footprint_mib": _f("num_list", True, 0, 1e9, True),
    "read_bytes": _f("num_list", True, 0, 1e4),
    "write_bytes": _f("num_list", True, 0, 1e4),
    "sm_cycles": _f("num_list", True, 0, MAX_CYCLES),
    "source": OPT_STR,
}

INSTRUCTION: dict[str, Field] = {
    "pattern": _f("str", True, None),
    "unit": OPT_STR,
    "n_fu": _count(MAX_UNITS, False),
    "T": _f("num", False, 0, MAX_UNITS, True),
    "lat_comp": CYCLES,
    "lat_comm": CYCLES,
    "n_ma": _f("num", False, 0, 1e6),  # memory transactions per warp access
    "lam": RATE,
    "Lam": CYCLES,
    "special_registers": _f("str_list"),  # rule applies only when one of these is read
    "source": OPT_STR,
    "note": OPT_STR,
}

SECTIONS = ("description", "provenance", "device", "units", "manybsp", "pipeline", "instruction", "sources")


# --------------------------------------------------------------------------- line lookup

# A table header; the name is stripped afterwards (no overlapping quantifiers: a long line of
# spaces must not make the match quadratic).
_HEADER_RE = re.compile(r"^[ \t]*(\[\[?)([^\]#]*)(\]\]?)[ \t]*(#.*)?$")


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
            current = header.group(2).strip()
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
            self.fail(f"{what}, got {shown(value)}", section, key, occurrence)

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
            for v in value:
                self.check_bounds(v, field, bad)
        elif field.kind == "num_list":
            if not isinstance(value, list) or not value or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in value
            ):
                bad("must be a non-empty list of numbers")
            for v in value:
                self.check_bounds(v, field, bad)
        if field.kind in ("int", "num"):
            self.check_bounds(value, field, bad)

    @staticmethod
    def check_bounds(value: int | float, field: Field, bad: Any) -> None:
        if isinstance(value, float) and not math.isfinite(value):
            bad("must be a finite number")
        if field.minimum is not None:
            if field.positive and not value > field.minimum:
                bad(f"must be > {_number(field.minimum)}")
            if field.positive and not value >= MIN_POSITIVE:
                bad(f"must be >= {_number(MIN_POSITIVE)} (a rate this small is a typo)")
            if not value >= field.minimum:
                bad(f"must be >= {_number(field.minimum)}")
        if field.maximum is not None and not value <= field.maximum:
            bad(f"must be <= {_number(field.maximum)}{_unit_of(field)}")

    def validate(self) -> None:
        data = self.data
        for key in data:
            if key not in SECTIONS:
                self.fail(f"unknown top-level key (accepted: {', '.join(SECTIONS)})", None, key)
        if "description" in data:
            self.check_value(data["description"], OPT_STR, None, "description", 0)
        if "provenance" in data:
            self.check_table(data["provenance"], PROVENANCE, "provenance")
        if "device" not in data:
            self.fail("the [device] section is missing", None, None)
        self.check_table(data["device"], DEVICE, "device")
        self._validate_device_strings(data["device"])
        self._validate_units(data.get("units"))
        if "manybsp" in data:
            self._validate_manybsp(data["manybsp"])
        if "pipeline" not in data:
            self.fail("the [pipeline] section is missing", None, None)
        pipeline = dict(data["pipeline"]) if isinstance(data["pipeline"], dict) else data["pipeline"]
        # the [pipeline.*] sub-tables, each with its own check, after [pipeline]'s own keys
        subtables = {
            "memory": lambda t: self.check_table(t, PIPELINE_MEMORY, "pipeline.memory"),
            "dram_loaded": self._validate_dram_loaded,
            "dram_loaded_scattered": lambda t: self._validate_dram_loaded(
                t, "pipeline.dram_loaded_scattered", ends_at_peak=False),
            "dram_loaded_mixed": self._validate_dram_loaded_mixed,
            "blocks": lambda t: self.check_table(t, PIPELINE_BLOCKS, "pipeline.blocks"),
            "line_latency": self._validate_line_latency,
            "scattered_stores": self._validate_scattered_stores,
        }
        found = {key: pipeline.pop(key) for key in subtables if isinstance(pipeline, dict) and key in pipeline}
        self.check_table(pipeline, PIPELINE, "pipeline")
        for key, table in found.items():
            subtables[key](table)
        self._validate_instructions(data.get("instruction", []))
        self._validate_sources(data.get("sources", {}))

    def _validate_dram_loaded_mixed(self, tables: Any) -> None:
        """Curves beside writing streams: each a curve that ends at most at the peak, with the
        share of the bytes written in (0, 1], no share twice."""
        section = "pipeline.dram_loaded_mixed"
        if not isinstance(tables, list):
            self.fail("must be an array of tables: write [[pipeline.dram_loaded_mixed]]", None, section)
        seen: set[float] = set()
        for i, table in enumerate(tables):
            self._validate_dram_loaded(table, section, ends_at_peak=False, occurrence=i,
                                       spec=PIPELINE_DRAM_LOADED_MIXED)
            share = table["write_share"]     # > 0: a curve of reads alone is [pipeline.dram_loaded]
            if share in seen:
                self.fail(f"write_share {shown(share)} appears twice", section, "write_share", i)
            seen.add(share)

    def _validate_dram_loaded(self, table: Any, section: str = "pipeline.dram_loaded",
                              ends_at_peak: bool = True, occurrence: int = 0,
                              spec: dict[str, Field] = PIPELINE_DRAM_LOADED) -> None:
        """A curve: as many extra latencies as shares, the shares rising from 0 and ending at 1
        (the model reads it between its points), the latencies never falling. A curve that does
        not end at the peak (scattered fetches saturate DRAM below it) ends at most at 1."""
        self.check_table(table, spec, section, occurrence)
        shares, extra = table["bandwidth_share"], table["extra_Lam"]
        if len(shares) != len(extra):
            self.fail(f"has {len(extra)} values for {len(shares)} bandwidth shares", section, "extra_Lam", occurrence)
        end_ok = shares[-1] == 1 if ends_at_peak else 0 < shares[-1] <= 1
        if shares[0] != 0 or not end_ok or any(b <= a for a, b in zip(shares, shares[1:], strict=False)):
            ending = "1" if ends_at_peak else "at most 1"
            self.fail(f"must rise strictly from 0 to {ending}, got " + shown(shares), section, "bandwidth_share",
                      occurrence)
        if any(b < a for a, b in zip(extra, extra[1:], strict=False)):
            self.fail("must not fall as the share rises, got " + shown(extra), section, "extra_Lam", occurrence)

    def _validate_scattered_stores(self, tables: Any) -> None:
        """One table per operation (store, red): as many figures as footprints, the footprints
        rising strictly from above 0."""
        section = "pipeline.scattered_stores"
        if not isinstance(tables, list):
            self.fail("must be an array of tables: write [[pipeline.scattered_stores]]", None, section)
        seen: set[str] = set()
        for i, table in enumerate(tables):
            self.check_table(table, PIPELINE_SCATTERED_STORES, section, i)
            operation = table["operation"]
            if operation not in SCATTERED_OPERATIONS or operation in seen:
                why = "appears twice" if operation in seen else f"must be one of {', '.join(SCATTERED_OPERATIONS)}"
                self.fail(f"{shown(operation)} {why}", section, "operation", i)
            seen.add(operation)
            footprints = table["footprint_mib"]
            if not footprints or footprints[0] <= 0 or any(b <= a for a, b in zip(footprints, footprints[1:],
                                                                                 strict=False)):
                self.fail("must rise strictly from above 0, got " + shown(footprints), section, "footprint_mib", i)
            for key in ("read_bytes", "write_bytes", "sm_cycles"):
                if len(table[key]) != len(footprints):
                    self.fail(f"has {len(table[key])} values for {len(footprints)} footprints", section, key, i)

    def _validate_line_latency(self, table: Any) -> None:
        """As many extra latencies per level as line counts; the counts rise from 1."""
        section = "pipeline.line_latency"
        self.check_table(table, PIPELINE_LINE_LATENCY, section)
        lines = table["lines"]
        if lines[0] != 1 or any(b <= a for a, b in zip(lines, lines[1:], strict=False)):
            self.fail("must rise strictly from 1, got " + shown(lines), section, "lines")
        for key in ("l1_extra", "l2_extra", "dram_extra"):
            if len(table[key]) != len(lines):
                self.fail(f"has {len(table[key])} values for {len(lines)} line counts", section, key)

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

    def _validate_device_strings(self, device: dict[str, Any]) -> None:
        capability = device.get("compute_capability")
        if capability is not None and not _CAPABILITY.fullmatch(capability):
            self.fail(f'must be "major.minor" such as "8.6", got {shown(capability)}', "device",
                      "compute_capability")

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
        seen: set[int] = set()
        section = "manybsp.barrier_overhead"
        for threads, cycles in barrier.items():
            if not _THREADS.fullmatch(threads) or int(threads) > 1 << 24:
                self.fail("keys are threads per block (positive integers up to 16777216, "
                          "no leading zeros)", section, threads)
            if int(threads) in seen:
                self.fail("threads per block given twice", section, threads)
            seen.add(int(threads))
            self.check_value(cycles, REQ_NUM, section, threads, 0)

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


def shown(value: Any) -> str:
    """``repr`` of a value for a one-line message, shortened."""
    text = repr(value)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 3] + "..."


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


def _unit_of(field: Field) -> str:
    if field.maximum == MAX_CYCLES:
        return " (cycles)"
    if field.maximum == MAX_BYTES:
        return " (bytes)"
    return ""


def validate_profile_data(data: dict[str, Any], text: str, file: str) -> None:
    """Raise :class:`ProfileError` unless ``data`` (parsed from ``text``) follows the schema."""
    Validator(data, text, file).validate()
