"""From a :class:`~engine.batch.spec.BatchSpec` to work units.

A unit is one kernel of one file with every (launch variant, profile) pair it runs, its *jobs*;
a job is one evaluation and gives one row per model. Grouping by kernel means a worker parses a
file once for all of the kernel's rows (and, through its module cache, once for the file's other
kernels), while units stay small enough to spread over workers.

The plan is made where the batch starts: files are read and hashed and their kernels indexed
(without parsing bodies), profiles and launch files are read, so a unit carries everything a worker
on another machine needs except the PTX text, which travels once per file (see the executors).
"""

from __future__ import annotations

import itertools
from collections.abc import Container, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from engine.batch.keys import canonical_args, canonical_launch, content_hash, row_key
from engine.batch.ptx_files import expand_sources
from engine.batch.spec import BatchSpec
from engine.errors import WarplineError
from engine.inputs import find_launch_file
from engine.launch import Dim3, Launch, LaunchFile, load_launch_file
from engine.names import find_kernel
from engine.profiles import list_profiles, load_profile, read_profile_text
from engine.ptx import index_kernels, load_ptx
from engine.ptx.index import read_ptx_bytes


@dataclass(frozen=True)
class PtxRef:
    path: str          # as the batch names it (the rows' ``file``)
    sha: str           # of the bytes planned; a worker refuses a file that changed since


@dataclass(frozen=True)
class ProfileRef:
    name: str
    sha: str
    text: str          # the TOML itself: a remote worker may not have the file
    file: str          # where it was read, for messages


@dataclass(frozen=True)
class Variant:
    """One launch to evaluate: a launch-file launch (or none: the given grid/block, else the
    default launch) with the batch's changes applied, and the occupancy to run at."""

    base: Launch | None
    grid: Dim3 | None = None
    block: Dim3 | None = None
    smem: int | None = None
    regs: int | None = None
    args: tuple[tuple[str | int, int | float], ...] = ()
    trips: tuple[tuple[str, int], ...] = ()
    occupancy: int | None = None

    def canonical(self) -> Any:
        return {"base": canonical_launch(self.base), "grid": self.grid, "block": self.block, "smem": self.smem,
                "regs": self.regs, "args": canonical_args(dict(self.args)), "trips": sorted(self.trips),
                "occupancy": self.occupancy}


@dataclass(frozen=True)
class Job:
    variant: Variant
    profile: ProfileRef
    keys: tuple[str, ...]      # one row key per model of the unit, in the unit's model order


@dataclass(frozen=True)
class Unit:
    ptx: PtxRef
    kernel: str
    models: tuple[str, ...]
    policy: str
    use_ptxas: bool
    jobs: tuple[Job, ...] = ()
    problem: str = ""                # the file could not be planned: one error row says why
    without: tuple[str, ...] = ()    # simulator mechanisms switched off

    @property
    def rows(self) -> int:
        return 1 if self.problem else len(self.jobs) * len(self.models)

    def keys(self) -> Iterator[str]:
        for job in self.jobs:
            yield from job.keys

    def missing(self, done: Container[str]) -> Unit | None:
        """This unit with only the jobs that still lack a row (None: nothing left to do)."""
        jobs = tuple(job for job in self.jobs if not all(key in done for key in job.keys))
        return replace(self, jobs=jobs) if jobs else None


@dataclass
class Plan:
    units: list[Unit]
    notes: list[str]

    @property
    def rows(self) -> int:
        return sum(unit.rows for unit in self.units)


def load_profiles(names: tuple[str, ...]) -> list[ProfileRef]:
    """Each profile once (``all``: every loadable profile), with its text and hash."""
    wanted: list[str] = []
    for name in names:
        wanted.extend(list_profiles() if name == "all" else [name])
    out: dict[str, ProfileRef] = {}
    for name in dict.fromkeys(wanted):
        profile = load_profile(name)       # validates: a broken profile stops the batch before it starts
        if profile.path is None:
            raise WarplineError(f"profile {name!r}: not read from a file")
        text = read_profile_text(profile.path)
        ref = ProfileRef(profile.name, content_hash(text), text, str(profile.path))
        out.setdefault(ref.sha, ref)
    return list(out.values())


def plan_batch(spec: BatchSpec) -> Plan:
    if not spec.profiles:
        raise WarplineError("batch: give --profile NAME (repeatable, or 'all')")
    if not spec.models:
        raise WarplineError("batch: no model to run")
    profiles = load_profiles(spec.profiles)
    given_file = load_launch_file(spec.launch_file) if spec.launch_file else None
    units: list[Unit] = []
    notes: list[str] = []
    matched: set[str] = set()
    for path in expand_sources(spec.sources):
        try:
            ptx, kernels = _index(path, spec.kernels, matched)
            launch_file = given_file or _own_launch_file(path, spec.use_launch_files)
        except WarplineError as exc:
            units.append(Unit(PtxRef(path, ""), "", spec.models, spec.policy, spec.use_ptxas, problem=str(exc)))
            continue
        for kernel in kernels:
            try:
                variants = list(_variants(spec, _bases(launch_file, kernel, spec.configs)))
            except WarplineError as exc:
                units.append(Unit(ptx, kernel, spec.models, spec.policy, spec.use_ptxas, problem=str(exc)))
                continue
            jobs = tuple(_job(ptx, kernel, variant, profile, spec) for variant in variants for profile in profiles)
            units.append(Unit(ptx, kernel, spec.models, spec.policy, spec.use_ptxas, _unique(jobs),
                              without=spec.without))
    for name in spec.kernels:
        if name not in matched:
            notes.append(f"--kernel {name}: no file has a kernel of that name")
    if spec.kernels and not matched:
        raise WarplineError(f"batch: no kernel named {', '.join(spec.kernels)} in any file")
    return Plan(units, notes)


def _index(path: str, names: tuple[str, ...], matched: set[str]) -> tuple[PtxRef, list[str]]:
    data = read_ptx_bytes(path)
    try:
        data.decode("utf-8-sig")
    except UnicodeDecodeError:
        load_ptx(path)     # raises the located error ("not UTF-8 text" at line:column)
        raise WarplineError(f"{path}: the file is not UTF-8 text") from None
    entries = index_kernels(data, path)
    if not entries:
        raise WarplineError(f"{path}: the file defines no kernel (.entry with a body)")
    if not names:
        return PtxRef(path, content_hash(data)), [e.name for e in entries]
    chosen: list[str] = []
    for name in names:
        try:
            entry = find_kernel(entries, name, path)
        except WarplineError as exc:
            if "several kernels" in str(exc):
                raise
            continue       # a batch over many files: a name picks kernels in the files that have them
        matched.add(name)
        if entry.name not in chosen:
            chosen.append(entry.name)
    return PtxRef(path, content_hash(data)), chosen


def _own_launch_file(path: str, allowed: bool) -> LaunchFile | None:
    found = find_launch_file(Path(path)) if allowed else None
    return load_launch_file(found) if found is not None else None


def _bases(launch_file: LaunchFile | None, kernel: str, configs: tuple[str, ...]) -> list[Launch | None]:
    """The launch-file launches written for this kernel (or for any kernel), narrowed to the
    ``--config`` names; none: one variant without a base."""
    if launch_file is None:
        return [None]
    launches = [launch for launch in launch_file.launches if launch.kernel in (None, kernel)]
    if configs:
        launches = [launch for launch in launches if launch.name in configs]
    return list(launches) or [None]


def _variants(spec: BatchSpec, bases: list[Launch | None]) -> Iterator[Variant]:
    for base, grid, block, smem, args, occupancy in itertools.product(
            bases, spec.grids or [None], spec.blocks or [None], spec.smem or [None], spec.arg_sets,
            spec.occupancies):
        yield Variant(base, grid, block, smem, spec.regs, tuple(args.items()), tuple(spec.trips.items()), occupancy)


def _job(ptx: PtxRef, kernel: str, variant: Variant, profile: ProfileRef, spec: BatchSpec) -> Job:
    canonical = variant.canonical()
    keys = tuple(row_key(ptx_sha=ptx.sha, kernel=kernel, variant=canonical, profile_sha=profile.sha, model=model,
                         policy=spec.policy, use_ptxas=spec.use_ptxas, without=spec.without)
                 for model in spec.models)
    return Job(variant, profile, keys)


def _unique(jobs: tuple[Job, ...]) -> tuple[Job, ...]:
    """Jobs once each: a value listed twice (or a launch-file launch equal to a given one) would
    otherwise make the same row twice."""
    seen: set[str] = set()
    out = []
    for job in jobs:
        if job.keys[0] not in seen:
            seen.add(job.keys[0])
            out.append(job)
    return tuple(out)
