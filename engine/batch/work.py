"""What a worker does with one unit: parse (once per worker), resolve, evaluate, make rows.

Runs in a local worker process, in a Dask worker or in the calling process alike, and returns
plain data: ``(row key, row, cacheable)`` records. Every failure becomes rows with status
``error``; a ``WarplineError`` is a property of the inputs (cacheable), anything else is not (a
fixed Warpline, or a retry, may do better).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from engine.batch.keys import content_hash
from engine.batch.plan import Job, ProfileRef, PtxRef, Unit
from engine.batch.result_rows import STATUS_ERROR, empty_row, evaluation_rows, launch_columns, one_line
from engine.errors import LaunchError, WarplineError
from engine.evaluation import Evaluator, state_for
from engine.inputs import KernelInputs, default_launch, resolve_inputs
from engine.launch import Launch
from engine.mechanisms import without
from engine.profiles import Profile, parse_profile
from engine.ptx import parse_ptx
from engine.ptx.index import read_ptx_bytes
from engine.ptx.parsed_module import Module

Record = tuple[str, dict[str, Any], bool]

# Parsed files and profiles of this worker process, by content hash: a unit per kernel still parses
# a file once per worker. Small, since a worker goes through a file's kernels one after the other.
MODULE_CACHE_SIZE = 4
_modules: OrderedDict[str, Module] = OrderedDict()
_profiles: dict[str, Profile] = {}
_lock = threading.Lock()           # a Dask worker may run units on several threads
_parses = 0                        # files parsed by this process (the benchmark reports it)


class ChangedFile(WarplineError):
    """The PTX file is not the one the batch planned (edited meanwhile)."""


def parse_count() -> int:
    return _parses


def run_unit(unit: Unit, data: bytes | None = None) -> list[Record]:
    """Rows of every job of ``unit``; ``data``: the file's bytes when the worker cannot read the path."""
    try:
        module = _module(unit.ptx, data)
    except WarplineError as exc:
        return [_error(unit, job, key, model, exc, cacheable=not isinstance(exc, ChangedFile))
                for job in unit.jobs for key, model in zip(job.keys, unit.models, strict=True)]
    evaluator = Evaluator()     # one per unit: its caches are keyed by objects of this unit's module
    records: list[Record] = []
    for job in unit.jobs:
        try:
            rows, cacheable = _job_rows(unit, module, job, evaluator), True
        except WarplineError as exc:
            rows, cacheable = [_error_row(unit, job, model, exc) for model in unit.models], True
        except Exception as exc:  # noqa: BLE001 - a bug must not stop the batch; the row names it
            error = WarplineError(f"internal error: {type(exc).__name__}: {exc}")
            rows, cacheable = [_error_row(unit, job, model, error) for model in unit.models], False
        records.extend((key, row, cacheable) for key, row in zip(job.keys, rows, strict=True))
    return records


def _job_rows(unit: Unit, module: Module, job: Job, evaluator: Evaluator) -> list[dict[str, Any]]:
    inputs = _inputs(unit, module, job)
    variant = job.variant
    state = state_for(inputs, occupancy=variant.occupancy, policy=unit.policy)
    with without(unit.without):
        ev = evaluator.evaluate(inputs, state, trace=False, only=list(unit.models))
    if ev.analysis is not None:
        loops = [loop.key for loop in ev.analysis.loop_info]
        for key, _ in variant.trips:
            if key not in loops:
                raise WarplineError(f"trip {key}: no loop with that header in {inputs.kernel_name} "
                                    f"(loops: {', '.join(loops) or 'none'})")
    base = _base_columns(unit, job)
    base.update(launch_columns(inputs.launch, variant.occupancy), registers=inputs.resources.registers)
    return evaluation_rows(base, ev, unit.models)


def _inputs(unit: Unit, module: Module, job: Job) -> KernelInputs:
    """The kernel's inputs for this job. The launch is always handed over (never looked up beside
    the file): the plan decided which launch file counts, and a worker elsewhere has no files."""
    variant = job.variant
    profile = _profile(job.profile)
    base = variant.base
    if base is None and (variant.grid is None) != (variant.block is None):
        raise LaunchError("give both --grid and --block (or a launch file)")
    if base is None and variant.grid is not None and variant.block is not None:
        base = Launch(grid=variant.grid, block=variant.block, kernel=unit.kernel)
    common: dict[str, Any] = {"module": module, "kernel": unit.kernel, "profile": profile, "regs": variant.regs,
                              "use_ptxas": unit.use_ptxas}
    if base is None:
        # The default launch needs the kernel's resources: resolve once with any launch to get them.
        probe = resolve_inputs(unit.ptx.path, launch=Launch(grid=(1, 1, 1), block=(1, 1, 1)), **common)
        base, _ = default_launch(probe.function, profile, probe.resources)
    args = dict(variant.args)
    inputs = resolve_inputs(unit.ptx.path, launch=base, smem_dynamic=variant.smem, args=args,
                            trips=dict(variant.trips), **common)
    _check_argument_names(inputs, args)
    return inputs


def _check_argument_names(inputs: KernelInputs, args: dict[str | int, int | float]) -> None:
    # The command line's own check lives in engine.cli, a layer above this one.
    params = [p.name for p in inputs.function.params]
    for key in args:
        if isinstance(key, int) and not 0 <= key < len(params):
            raise LaunchError(f"arg {key}: {inputs.kernel_name} has {len(params)} parameters")
        if isinstance(key, str) and key not in params:
            raise LaunchError(f"arg {key}: no such parameter (parameters: {', '.join(params) or 'none'})")


def _module(ptx: PtxRef, data: bytes | None) -> Module:
    global _parses
    with _lock:
        if ptx.sha in _modules:
            _modules.move_to_end(ptx.sha)
            return _modules[ptx.sha]
    raw = read_ptx_bytes(ptx.path) if data is None else data
    if content_hash(raw) != ptx.sha:
        raise ChangedFile(f"{ptx.path}: the file changed since the batch started")
    module = parse_ptx(raw.decode("utf-8-sig"), ptx.path)
    with _lock:
        _parses += 1
        _modules[ptx.sha] = module
        while len(_modules) > MODULE_CACHE_SIZE:
            _modules.popitem(last=False)
    return module


def _profile(ref: ProfileRef) -> Profile:
    with _lock:
        cached = _profiles.get(ref.sha)
    if cached is None:
        # No path: the evaluation then uses this object instead of looking the name up on disk.
        cached = parse_profile(ref.text, ref.file, name=ref.name)
        with _lock:
            _profiles[ref.sha] = cached
    return cached


def _base_columns(unit: Unit, job: Job) -> dict[str, Any]:
    return {"file": unit.ptx.path, "kernel": unit.kernel, "profile": job.profile.name, "policy": unit.policy}


def _error_row(unit: Unit, job: Job, model: str, exc: Exception) -> dict[str, Any]:
    variant = job.variant
    row = empty_row(**_base_columns(unit, job), model=model, status=STATUS_ERROR, message=one_line(str(exc)))
    row.update(launch_columns(variant.base, variant.occupancy))
    if variant.grid is not None:
        row["grid"] = ",".join(map(str, variant.grid))
    if variant.block is not None:
        row["block"] = ",".join(map(str, variant.block))
    return row


def _error(unit: Unit, job: Job, key: str, model: str, exc: Exception, cacheable: bool) -> Record:
    return key, _error_row(unit, job, model, exc), cacheable


def failure_records(unit: Unit, message: str) -> list[Record]:
    """Error rows (not cacheable) for every job of a unit whose worker never answered."""
    error = WarplineError(message)
    return [_error(unit, job, key, model, error, cacheable=False)
            for job in unit.jobs for key, model in zip(job.keys, unit.models, strict=True)]
