"""Reading a profile file: a regular file of at most :data:`MAX_PROFILE_BYTES` (checked before
reading, so ``/dev/zero`` or a FIFO is refused at once), UTF-8 text, valid TOML, then the schema
(:mod:`engine.profile_schema`) and the records of a :class:`engine.profiles.profile.Profile`.
Every failure is a one-line :class:`ProfileError` naming the file (and the line where known).
"""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path
from typing import Any

from engine.errors import ProfileError
from engine.profile_match import compile_pattern
from engine.profile_schema import validate_profile_data
from engine.profiles.profile import Profile
from engine.profiles.sections import (
    Device,
    InstructionRule,
    ManyBspParams,
    PipelineParams,
    Provenance,
    UnitSpec,
)
from engine.units import Unit

MAX_PROFILE_BYTES = 1 << 20  # shipped profiles are under 20 KB


def read_profile(path: Path) -> Profile:
    """The profile in the file at ``path`` (named by the file's stem)."""
    text = read_profile_text(path)
    return parse_profile(text, str(path), name=path.stem, path=path)


def read_profile_text(path: Path) -> str:
    """The text of a profile file: a regular file, at most MAX_PROFILE_BYTES, UTF-8."""
    where = str(path)
    try:
        # Non-blocking, so that opening a FIFO does not wait for a writer; fstat then refuses it.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb", buffering=0) as handle:
            st = os.fstat(handle.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise ProfileError("not a regular file (a profile is a .toml text file)", where)
            if st.st_size > MAX_PROFILE_BYTES:
                raise ProfileError(f"the file is {st.st_size} bytes; a profile may have at most "
                                   f"{MAX_PROFILE_BYTES}", where)
            data = handle.read(MAX_PROFILE_BYTES + 1)
    except OSError as exc:
        raise ProfileError(f"cannot read the profile: {exc.strerror or exc}", where) from exc
    except ValueError as exc:  # a path with a NUL byte
        raise ProfileError(f"cannot read the profile: {exc}", where) from exc
    if len(data) > MAX_PROFILE_BYTES:
        raise ProfileError(f"the file has more than {MAX_PROFILE_BYTES} bytes", where)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ProfileError(f"the file is not UTF-8 text (byte 0x{data[exc.start]:02x})", where,
                           None, line) from exc


def parse_profile(
    text: str, file: str = "<string>", *, name: str | None = None, path: Path | None = None
) -> Profile:
    """Validate and build a profile from TOML text."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = _decode_error_line(str(exc))
        raise ProfileError(f"not valid TOML: {exc}", file, None, line) from exc
    except RecursionError as exc:
        raise ProfileError("not valid TOML: arrays or tables nested too deeply", file) from exc
    except ValueError as exc:  # a number too long for Python's int conversion
        raise ProfileError("not valid TOML: a number has too many digits", file) from exc
    validate_profile_data(data, text, file)
    return _build(data, name or Path(file).stem, path)


def _decode_error_line(message: str) -> int | None:
    # tomllib reports "... (at line 12, column 5)".
    marker = "at line "
    if marker in message:
        digits = message.split(marker, 1)[1].split(",")[0].split(")")[0]
        return int(digits) if digits.isdigit() else None
    return None


def _curve(table: dict[str, Any] | None) -> tuple[tuple[float, float], ...]:
    """A ``[pipeline.dram_loaded*]`` table as (share, extra cycles) points; empty without one."""
    return tuple(zip(map(float, table["bandwidth_share"]), map(float, table["extra_Lam"]), strict=True)) \
        if table else ()


def _build(data: dict[str, Any], name: str, path: Path | None) -> Profile:
    dev = dict(data["device"])
    if "shared_memory_carveouts" in dev:
        dev["shared_memory_carveouts"] = tuple(sorted(dev["shared_memory_carveouts"]))
    device = Device(**dev)
    units = {
        Unit(unit_name): UnitSpec(unit=Unit(unit_name), **{k: v for k, v in table.items()})
        for unit_name, table in data["units"].items()
    }
    pipe = dict(data["pipeline"])
    memory = {k: float(v) for k, v in pipe.pop("memory", {}).items() if k != "source"}
    curve = _curve(pipe.pop("dram_loaded", None))
    scattered = _curve(pipe.pop("dram_loaded_scattered", None))
    mixed = tuple(sorted((float(t["write_share"]), _curve(t)) for t in pipe.pop("dram_loaded_mixed", [])))
    blocks = pipe.pop("blocks", None) or {}
    table = pipe.pop("line_latency", None)
    lines = tuple(zip(*(map(float, table[k]) for k in ("lines", "l1_extra", "l2_extra", "dram_extra")),
                      strict=True)) if table else ()
    stores = {str(t["operation"]): tuple(zip(*(map(float, t[k]) for k in ("footprint_mib", "read_bytes", "write_bytes",
                                                                          "sm_cycles")), strict=True))
              for t in pipe.pop("scattered_stores", [])}
    pipeline = PipelineParams(memory=memory, dram_loaded=curve, dram_loaded_scattered=scattered,
                              dram_loaded_mixed=mixed, block_turnaround=blocks.get("block_turnaround"),
                              line_latency=lines, scattered_stores=stores, **pipe)
    manybsp = None
    if "manybsp" in data:
        body = dict(data["manybsp"])
        barrier = tuple(sorted((int(k), float(v)) for k, v in body.pop("barrier_overhead").items()))
        manybsp = ManyBspParams(barrier_overhead=barrier, **body)
    rules = tuple(
        InstructionRule(
            pattern=compile_pattern(rule["pattern"]),
            index=i,
            unit=Unit(rule["unit"]) if "unit" in rule else None,
            special_registers=tuple(rule.get("special_registers", ())),
            **{k: v for k, v in rule.items() if k not in ("pattern", "unit", "special_registers")},
        )
        for i, rule in enumerate(data.get("instruction", []))
    )
    return Profile(
        name=name,
        path=path,
        description=data.get("description", ""),
        device=device,
        units=units,
        pipeline=pipeline,
        manybsp=manybsp,
        rules=rules,
        sources=dict(data.get("sources", {})),
        provenance=Provenance(**data["provenance"]) if "provenance" in data else None,
    )
