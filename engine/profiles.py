"""GPU profiles: device figures, functional units, model parameters and per-instruction costs.

A profile is one TOML file (``profiles/<name>.toml``, format in ``profiles/README.md``).
:func:`load_profile` validates it (:mod:`engine.profile_schema`) and returns a frozen
:class:`Profile`; :meth:`Profile.cost` turns an instruction into the numbers both models need.

Reading is defensive: a profile must be a regular file of at most :data:`MAX_PROFILE_BYTES`
(checked before reading, so ``/dev/zero`` or a FIFO is refused at once), UTF-8 text, and valid
TOML; every failure is a one-line :class:`ProfileError`. :func:`list_profiles` lists only the
profiles that load: a broken file in a profile folder is skipped, and the reason is kept for
:func:`profile_problems` (and logged). A broken file still shadows a shipped profile of the same
name: ``load_profile(name)`` then raises that file's error instead of loading another file.
"""

from __future__ import annotations

import logging
import math
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import tomllib

from engine.errors import ModelError, ProfileError, WarplineError
from engine.profile_match import OpcodePattern, compile_pattern
from engine.profile_schema import validate_profile_data
from engine.units import MemorySpace, Unit

SHIPPED_DIR = Path(__file__).resolve().parent.parent / "profiles"
MAX_PROFILE_BYTES = 1 << 20  # shipped profiles are under 20 KB
_LOG = logging.getLogger(__name__)
USER_DIR = Path("~/.config/warpline/profiles")
PATH_ENV = "WARPLINE_PROFILE_PATH"

# Spaces whose accesses leave the SM: they pay the global-memory latency (000's lat_comm).
OFF_CHIP_SPACES = frozenset({MemorySpace.GLOBAL, MemorySpace.LOCAL, MemorySpace.TEXTURE, MemorySpace.GENERIC})


class ClassificationLike(Protocol):
    """What :meth:`Profile.cost` reads from ``engine.analysis.classify.Classification``."""

    unit: Unit
    space: MemorySpace
    is_load: bool
    is_store: bool
    is_barrier: bool
    width_bytes: int | None


class InstructionLike(Protocol):
    @property
    def full_opcode(self) -> str: ...


@dataclass(frozen=True)
class Device:
    """The ``[device]`` section. Sizes in bytes, clock in MHz."""

    name: str
    architecture: str
    sm_count: int
    schedulers_per_sm: int
    dispatch_units_per_scheduler: int
    warp_size: int
    clock_mhz: float
    max_threads_per_sm: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    max_threads_per_block: int
    registers_per_sm: int
    max_registers_per_block: int
    max_registers_per_thread: int
    register_allocation_unit: int
    register_file_partitions: int
    shared_memory_per_sm: int
    max_shared_memory_per_block: int
    shared_memory_allocation_unit: int
    reserved_shared_memory_per_block: int
    warp_allocation_granularity: int = 1
    shared_memory_carveouts: tuple[int, ...] = ()
    max_shared_memory_per_block_optin: int | None = None
    shared_memory_banks: int = 32
    vendor: str = "nvidia"
    chip: str | None = None
    compute_capability: str | None = None
    l1_cache_bytes: int | None = None
    l2_cache_bytes: int | None = None
    global_memory_bytes: int | None = None
    global_memory_segment_bytes: int = 128
    memory_bandwidth_gbps: float | None = None
    kernel_launch_cycles: float = 0.0

    @property
    def sm_version(self) -> int | None:
        """``"8.6"`` -> 86 (what ptxas's ``-arch=sm_XX`` wants); None without a capability."""
        if not self.compute_capability:
            return None
        major, _, minor = self.compute_capability.partition(".")
        return int(major) * 10 + int(minor or 0) if major.isdigit() else None

    @property
    def max_smem_per_block_any(self) -> int:
        """The most shared memory one block can get (opt-in limit where there is one)."""
        return max(self.max_shared_memory_per_block, self.max_shared_memory_per_block_optin or 0)


@dataclass(frozen=True)
class UnitSpec:
    """One ``[units.<name>]`` section: unit counts and the class defaults of its instructions."""

    unit: Unit
    per_sm: int
    per_scheduler: int
    n_fu: int | None = None
    T: float | None = None
    lat_comp: float | None = None
    lat_comm: float | None = None
    lam: float | None = None
    Lam: float | None = None
    source: str = ""


@dataclass(frozen=True)
class ManyBspParams:
    """The ``[manybsp]`` section (000's device-level parameters)."""

    mem_lat: float
    mu: float
    block_lnch_ovh: float
    warp_lnch_ovh: float
    barrier_overhead: tuple[tuple[int, float], ...]  # (threads per block, cycles), sorted
    g0: float | None = None
    g1: float | None = None
    g2: float | None = None
    issue_cycle: float = 1.0
    source: str = ""


@dataclass(frozen=True)
class PipelineParams:
    """The ``[pipeline]`` section (001): issue limit and memory λ/Λ. λ is cycles per warp
    instruction for the whole SM (0.25 = four per cycle), as in 001's Tables 4 and 5."""

    issue_limit: float
    lambda_alu: float | None = None
    lambda_sfu: float | None = None
    memory: Mapping[str, float] = field(default_factory=dict)
    source: str = ""


@dataclass(frozen=True)
class InstructionRule:
    """One ``[[instruction]]`` table. ``None`` fields fall back to the unit defaults."""

    pattern: OpcodePattern
    index: int
    unit: Unit | None = None
    n_fu: int | None = None
    T: float | None = None
    lat_comp: float | None = None
    lat_comm: float | None = None
    n_ma: float | None = None
    lam: float | None = None
    Lam: float | None = None
    special_registers: tuple[str, ...] = ()
    source: str = ""
    note: str = ""

    @property
    def specificity(self) -> tuple[int, int, int, int]:
        # An operand condition makes a rule more specific than the same pattern without it.
        return (*self.pattern.specificity, 1 if self.special_registers else 0)

    def matches(self, full_opcode: str, specials: frozenset[str]) -> bool:
        if self.special_registers and not specials.intersection(self.special_registers):
            return False
        return self.pattern.matches(full_opcode)


@dataclass(frozen=True)
class InstructionCost:
    """Everything both models charge for one instruction on one GPU.

    ``T`` is results per clock per warp scheduler (000); ``lam``/``Lam`` are 001's CPI and
    latency. ``is_default`` is True when no ``[[instruction]]`` rule matched and the unit's
    class defaults were used; ``defaulted`` names the fields a matching rule left to them.
    """

    opcode: str
    unit: Unit
    n_fu: int
    T: float
    lat_comp: float
    lat_comm: float
    n_ma: float
    lam: float
    Lam: float
    is_default: bool
    source: str
    pattern: str | None = None
    defaulted: tuple[str, ...] = ()


@dataclass(frozen=True)
class Profile:
    """A validated GPU profile. ``name`` is the file stem (``gtx1070``)."""

    name: str
    path: Path | None
    description: str
    device: Device
    units: Mapping[Unit, UnitSpec]
    pipeline: PipelineParams
    manybsp: ManyBspParams | None
    rules: tuple[InstructionRule, ...]
    sources: Mapping[str, str]

    # ------------------------------------------------------------------ costs
    def rule_for(self, full_opcode: str, special_registers: Iterable[str] = ()) -> InstructionRule | None:
        """The most specific matching rule (ties: the earlier rule in the file).
        ``special_registers`` are the special registers the instruction reads (``tid``)."""
        specials = frozenset(special_registers)
        best: InstructionRule | None = None
        for rule in self.rules:
            if rule.matches(full_opcode, specials) and (best is None or rule.specificity > best.specificity):
                best = rule
        return best

    def cost(self, instruction: InstructionLike | str, classification: ClassificationLike) -> InstructionCost:
        """Cost of ``instruction`` (an ``Instruction`` or its full opcode) as classified."""
        opcode = instruction if isinstance(instruction, str) else instruction.full_opcode
        # Atomics and reductions move data like loads/stores (classify sets is_atomic for them).
        atomic = getattr(classification, "is_atomic", False)
        memory = classification.is_load or classification.is_store or atomic
        return self.cost_for_opcode(
            opcode,
            classification.unit,
            space=classification.space if memory else MemorySpace.NONE,
            width_bytes=classification.width_bytes,
            special_registers=_special_registers(instruction),
        )

    def cost_for_opcode(
        self,
        full_opcode: str,
        unit: Unit,
        *,
        space: MemorySpace = MemorySpace.NONE,
        width_bytes: int | None = None,
        special_registers: Iterable[str] = (),
    ) -> InstructionCost:
        """Cost for callers without an Instruction. ``space`` is the memory space of a load
        or store (NONE otherwise); ``width_bytes`` its per-thread access width;
        ``special_registers`` the special registers read (``tid``, ``ctaid``)."""
        rule = self.rule_for(full_opcode, special_registers)
        unit = rule.unit if rule is not None and rule.unit is not None else unit
        defaults = self._class_defaults(unit, space, width_bytes)
        values = dict(defaults)
        defaulted: list[str] = []
        if rule is not None:
            for name in values:
                given = getattr(rule, name)
                if given is None:
                    defaulted.append(name)
                else:
                    values[name] = given
            # A rule that sets T but not λ keeps λ consistent with its own T.
            if rule.lam is None and rule.T is not None and self._unit_spec(unit).lam is None:
                values["lam"] = self._lam_from_T(values["T"])
            if rule.Lam is None and (rule.lat_comp is not None or rule.lat_comm is not None):
                values["Lam"] = values["lat_comp"] + values["lat_comm"]
        source = rule.source if rule is not None and rule.source else self._unit_source(unit)
        return InstructionCost(
            opcode=full_opcode,
            unit=unit,
            n_fu=int(values["n_fu"]),
            T=float(values["T"]),
            lat_comp=float(values["lat_comp"]),
            lat_comm=float(values["lat_comm"]),
            n_ma=float(values["n_ma"]),
            lam=float(values["lam"]),
            Lam=float(values["Lam"]),
            is_default=rule is None,
            source=source,
            pattern=rule.pattern.text if rule is not None else None,
            defaulted=tuple(defaulted),
        )

    def _unit_spec(self, unit: Unit) -> UnitSpec:
        # Control, barrier and tensor instructions without their own section run on the
        # integer/FP32 pipeline's issue slots, which is how 000 charges branches (to FU1).
        return self.units.get(unit) or self.units[Unit.ALU]

    def _unit_source(self, unit: Unit) -> str:
        spec = self._unit_spec(unit)
        base = spec.source or self.sources.get(f"units.{spec.unit.value}", self.sources.get("units", ""))
        label = f"class default of unit {spec.unit.value}"
        return f"{label} ({base})" if base else label

    def _lam_from_T(self, T: float) -> float:
        # T results per clock per scheduler, all schedulers in parallel: one warp instruction
        # occupies the SM's pipeline for warp_size / (T * n_ws) cycles (001's λ convention).
        if T <= 0:
            return math.inf
        return self.device.warp_size / (T * self.device.schedulers_per_sm)

    def _class_defaults(self, unit: Unit, space: MemorySpace, width_bytes: int | None) -> dict[str, float]:
        spec = self._unit_spec(unit)
        T = spec.T if spec.T is not None else float(spec.per_scheduler)
        off_chip = space in OFF_CHIP_SPACES
        mem = self.pipeline.memory
        if off_chip:
            mem_lat = self.manybsp.mem_lat if self.manybsp else mem.get("global_Lam", 0.0)
            lat_comp, lat_comm = 0.0, spec.lat_comm if spec.lat_comm is not None else mem_lat
        else:
            lat_comp, lat_comm = (spec.lat_comp or 0.0), 0.0
        if space in (MemorySpace.NONE, MemorySpace.PARAM, MemorySpace.CONST):
            n_ma = 0.0  # 000 leaves n_ma blank for parameter loads: they never reach memory
        elif space == MemorySpace.SHARED:
            n_ma = 1.0  # one shared-memory access per warp; bank conflicts come from the analysis
        else:
            # Transactions per fully coalesced warp access: 4-byte words fill one 128-byte
            # segment, 8-byte ones two (000 charges n_ma = 2 there). The memory analysis
            # replaces this for uncoalesced patterns.
            width = width_bytes or 4
            segment = self.device.global_memory_segment_bytes
            n_ma = float(max(1, math.ceil(width * self.device.warp_size / segment)))
        lam = spec.lam if spec.lam is not None else self._lam_from_T(T)
        Lam = spec.Lam if spec.Lam is not None else lat_comp + lat_comm
        kind = {
            MemorySpace.GLOBAL: "global",
            MemorySpace.GENERIC: "global",
            MemorySpace.TEXTURE: "global",
            MemorySpace.LOCAL: "local",
            MemorySpace.SHARED: "shared",
        }.get(space)
        if kind is not None:
            lam = mem.get(f"{kind}_lam", lam)
            Lam = mem.get(f"{kind}_Lam", Lam)
        n_fu = spec.n_fu if spec.n_fu is not None else spec.per_scheduler
        return {
            "n_fu": n_fu,
            "T": T,
            "lat_comp": lat_comp,
            "lat_comm": lat_comm,
            "n_ma": n_ma,
            "lam": lam,
            "Lam": Lam,
        }

    # ------------------------------------------------------------------ 001's memory mapper
    def global_memory_lambdas(self, dram_ratio: float) -> tuple[float, float]:
        """(λ, Λ) of a global access for R = bytes_DRAM / bytes_global (001 section 6.3).

        R < 1: the other 1 - R of the bytes come from L2, so λ and Λ are the R-weighted mix of
        the DRAM and L2 figures. R > 1: the excess bytes queue behind each other, adding
        (R - 1) DRAM issue slots to the latency and multiplying λ by R. Missing L2 figures fall
        back to DRAM ones, missing DRAM figures to the cost of a plain ``ld.global``.
        """
        m = self.pipeline.memory
        # Without [pipeline.memory] figures, a plain global load's cost stands in for DRAM.
        load = self.cost_for_opcode("ld.global.b32", Unit.LDST, space=MemorySpace.GLOBAL, width_bytes=4)
        dram_lam = m.get("dram_lam", load.lam)
        dram_Lam = m.get("dram_Lam", load.Lam)
        if not dram_ratio >= 0:
            raise ModelError(f"the DRAM/global byte ratio R must be >= 0, got {dram_ratio}")
        l2_lam = m.get("l2_lam", dram_lam)
        l2_Lam = m.get("l2_Lam", dram_Lam)
        if dram_ratio <= 1:
            lam = dram_ratio * dram_lam + (1 - dram_ratio) * l2_lam
            Lam = dram_ratio * dram_Lam + (1 - dram_ratio) * l2_Lam
            return lam, Lam
        return dram_ratio * dram_lam, dram_Lam + (dram_ratio - 1) * dram_lam

    def shared_memory_lambdas(self, conflict_degree: float) -> tuple[float, float]:
        """(λ, Λ) of a shared-memory access with bank-conflict degree D (001 section 6.3:
        OpenCL "local" memory): each extra way of conflict costs one more λ."""
        if not conflict_degree >= 0:
            raise ModelError(f"the bank-conflict degree D must be >= 0, got {conflict_degree}")
        base = self.cost_for_opcode("ld.shared.b32", Unit.LDST, space=MemorySpace.SHARED, width_bytes=4)
        return (1 + conflict_degree) * base.lam, base.Lam + conflict_degree * base.lam

    # ------------------------------------------------------------------ other look-ups
    def kernel_cycles(self, execution_cycles: float) -> float:
        """A model's execution cycles as a measured kernel duration: plus the fixed cost of a
        launch (``device.kernel_launch_cycles``; 0 where the profile has not measured it)."""
        return execution_cycles + self.device.kernel_launch_cycles

    def barrier_overhead(self, threads_per_block: int) -> float:
        """000's barrier overhead for a block size: the table value, linear interpolation
        between table rows, and the nearest row's value outside the table (no extrapolation:
        the two measured points do not say how the cost grows beyond them)."""
        if self.manybsp is None:
            where = str(self.path or self.name)
            raise ProfileError("this profile has no [manybsp] section", where, "manybsp")
        table = self.manybsp.barrier_overhead
        if threads_per_block <= table[0][0]:
            return table[0][1]
        for (t0, c0), (t1, c1) in zip(table, table[1:], strict=False):
            if threads_per_block <= t1:
                return c0 + (c1 - c0) * (threads_per_block - t0) / (t1 - t0)
        return table[-1][1]

    def source_of(self, dotted_key: str) -> str:
        """Where a number came from: the most specific ``[sources]`` entry, else the
        ``source`` key of its section, else ``""``."""
        parts = dotted_key.split(".")
        for n in range(len(parts), 0, -1):
            key = ".".join(parts[:n])
            if key in self.sources:
                return self.sources[key]
        if parts[0] == "units" and len(parts) > 1:
            try:
                return self.units[Unit(parts[1])].source
            except (ValueError, KeyError):
                return ""
        if parts[0] == "manybsp" and self.manybsp is not None:
            return self.manybsp.source
        if parts[0] == "pipeline":
            return self.pipeline.source
        return ""


def _special_registers(instruction: InstructionLike | str) -> tuple[str, ...]:
    """``("tid", "ctaid")`` for ``mov.u32 %r1, %tid.x`` style operands (no ``%``, no ``.x``)."""
    operands = getattr(instruction, "operands", ())
    names = []
    for operand in operands:
        if getattr(operand, "kind", None) == "special" and operand.name:
            names.append(operand.name.lstrip("%").split(".")[0])
    return tuple(names)


# ---------------------------------------------------------------------- loading


def profile_dirs() -> list[Path]:
    """Search order: ``$WARPLINE_PROFILE_PATH`` entries, the user directory, the shipped one."""
    dirs = [Path(p).expanduser() for p in os.environ.get(PATH_ENV, "").split(os.pathsep) if p]
    dirs.append(USER_DIR.expanduser())
    dirs.append(SHIPPED_DIR)
    return dirs


# path -> (the file's identity when checked, the ProfileError it gave or None)
_CHECKED: dict[Path, tuple[tuple[int, int, int, int], ProfileError | None]] = {}
_PROBLEMS: list[str] = []


def profile_problems() -> list[str]:
    """One line per profile file that the latest :func:`list_profiles` skipped, and why."""
    return list(_PROBLEMS)


def _candidates() -> list[tuple[str, Path]]:
    """(name, path) of every ``*.toml`` in the search directories, in search order; folders
    that cannot be listed are reported as problems."""
    out: list[tuple[str, Path]] = []
    for directory in profile_dirs():
        try:
            if not directory.is_dir():
                continue
            paths = sorted(directory.glob("*.toml"))
        except OSError as exc:
            _PROBLEMS.append(f"{directory}: cannot list the profile folder: {exc.strerror or exc}")
            continue
        out.extend((path.stem, path) for path in paths)
    return out


def _check(path: Path) -> ProfileError | None:
    """The error loading ``path`` gives (None when it loads), cached by the file's identity."""
    try:
        st = os.stat(path)
        identity = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev)
    except OSError as exc:
        return ProfileError(f"cannot read the profile: {exc.strerror or exc}", str(path))
    cached = _CHECKED.get(path)
    if cached is not None and cached[0] == identity:
        return cached[1]
    try:
        _load_path(path)
        problem = None
    except ProfileError as exc:
        problem = exc
    except WarplineError as exc:  # pragma: no cover - every refusal is a ProfileError
        problem = ProfileError(str(exc), str(path))
    if problem is not None and (cached is None or cached[1] is None or str(cached[1]) != str(problem)):
        _LOG.warning("skipping profile %s", problem)
    _CHECKED[path] = (identity, problem)
    return problem


def list_profiles() -> dict[str, Path]:
    """Every profile name that loads, mapped to its file. A user file shadows a shipped one of
    the same name, so a user can edit a copy without touching the installation; a broken file
    is left out (its reason goes to :func:`profile_problems`) and still shadows the others, as
    it does for :func:`load_profile`."""
    _PROBLEMS.clear()
    found: dict[str, Path] = {}
    claimed: set[str] = set()
    candidates = _candidates()
    for name, path in candidates:
        if name in claimed:
            continue
        claimed.add(name)
        problem = _check(path)
        if problem is None:
            found[name] = path
            continue
        hidden = [p for n, p in candidates if n == name and p != path]
        also = f" (it hides {hidden[0]})" if hidden else ""
        _PROBLEMS.append(f"{problem} [skipped{also}]")
    return dict(sorted(found.items()))


def _named(name: str) -> Path | None:
    """The file ``load_profile(name)`` reads: the first ``<name>.toml`` in search order,
    whether or not it is valid."""
    for directory in profile_dirs():
        path = directory / f"{name}.toml"
        try:
            if path.exists() or path.is_symlink():
                return path
        except OSError:
            return path
    return None


def load_profile(name_or_path: str | os.PathLike[str]) -> Profile:
    """Load by name (``gtx1070``) or by path to a ``.toml`` file. Any problem with the file is a
    ProfileError naming it, even when another directory has a valid file of that name."""
    text_name = os.fspath(name_or_path)
    path = Path(text_name).expanduser()
    if not (text_name.endswith(".toml") or os.sep in text_name or path.is_file()):
        found = _named(text_name) if text_name and "\0" not in text_name else None
        if found is None:
            names = ", ".join(list_profiles()) or "none"
            raise ProfileError(f"no profile named {text_name!r} (known: {names})", text_name)
        path = found
    return _load_path(path)


def _load_path(path: Path) -> Profile:
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
    pipeline = PipelineParams(memory=memory, **pipe)
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
    )
