"""Everything one prediction needs, resolved once: the PTX module, the kernel, the GPU profile,
the launch, and the kernel's resources. The CLI, the window, ``validate`` and sessions all build a
:class:`KernelInputs` here, so a file, a kernel name, a profile and a launch mean the same
everywhere.

Defaults, the same in every front end:

* profile: a profile of the PTX's own architecture, else of the nearest newer one (named as such);
  :attr:`KernelInputs.profile_source` says which rule chose it (:func:`default_profile_for`);
* launch: the sample's launch file; else ``.reqntid``/``.maxntid`` of the kernel for the block
  (256 threads without them) and a grid that fills the GPU once (one wave at full occupancy),
  either of them replaced by ``--block``/``--grid`` when only one is given;
  :attr:`KernelInputs.launch_source` says where it came from, starting with
  :data:`ASSUMED_LAUNCH` where the grid or the block is a guess;
* registers: ``ptxas -v`` for the PTX's own target when allowed and installed, else an estimate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from engine.errors import WarplineError
from engine.launch import Launch, LaunchFile, check_arguments, load_launch_file, parameter_index
from engine.names import find_kernel
from engine.profiles import Profile, list_profiles, load_profile
from engine.ptx import load_ptx
from engine.ptx.parsed_module import Function, Module
from engine.resources import Resources, kernel_resources

FALLBACK_PROFILE = "gtx1070"   # source 000's worked cases (hotspot, knn, mm) run on it
DEFAULT_BLOCK_THREADS = 256    # block size of the default launch when the PTX names none
# The words a launch's source starts with when the grid or the block is the default's guess (not
# the PTX's .reqntid/.maxntid, a launch file or the user's): engine.evaluation.assumptions lists it.
ASSUMED_LAUNCH = "assumed: "
EDITED_LAUNCH = "(edited)"       # what WorkbenchState.with_launch appends once the user sets the shape


def launch_is_assumed(source: str) -> bool:
    """Whether a launch with this source is (still) the default's guess."""
    return source.startswith(ASSUMED_LAUNCH) and not source.endswith(EDITED_LAUNCH)

# samples/ptx/hotspot.sm_90.ptx -> samples/hotspot.launch.toml
_SAMPLE_PTX = re.compile(r"^(?P<stem>.+?)\.sm_\d+a?\.ptx$")


@dataclass(frozen=True)
class KernelInputs:
    path: Path
    module: Module
    function: Function
    profile: Profile | None
    launch: Launch | None
    resources: Resources
    launch_source: str = ""      # where the launch came from, in words
    profile_source: str = ""     # why this profile, in words

    @property
    def kernel_name(self) -> str:
        return self.function.name


def find_launch_file(ptx_path: Path) -> Path | None:
    """The launch file of a bundled sample (``samples/<name>.launch.toml``), if there is one."""
    match = _SAMPLE_PTX.match(ptx_path.name)
    stem = match.group("stem") if match else ptx_path.stem
    for folder in (ptx_path.parent, ptx_path.parent.parent):
        candidate = folder / f"{stem}.launch.toml"
        if candidate.is_file():
            return candidate
    return None


def pick_kernel(module: Module, name: str | None) -> Function:
    """The kernel ``name`` designates (see :func:`engine.names.find_kernel`)."""
    return find_kernel(module.kernels, name, module.filename)


def launch_for_kernel(launch_file: LaunchFile, kernel: str, config: str | None) -> Launch | None:
    """The named configuration, else the first one written for this kernel (or for any kernel)."""
    if config is not None:
        return launch_file.get(config)
    for launch in launch_file.launches:
        if launch.kernel is None or launch.kernel == kernel:
            return launch
    return None


def default_profile_for(module: Module) -> tuple[str, str]:
    """(profile name, why) for PTX of the module's target: a profile of that architecture (the one
    marked ``default_for_target`` where several share it); else the nearest newer architecture's
    (code for an older GPU runs on newer ones), else the nearest older one's, each named as such;
    :data:`FALLBACK_PROFILE` when the PTX names no target. Profiles that fail to load are passed
    over."""
    target = module.sm_version
    names = list_profiles()
    if target is None:
        fallback = FALLBACK_PROFILE if FALLBACK_PROFILE in names else next(iter(names), FALLBACK_PROFILE)
        return fallback, f"the PTX names no sm_XX target; {fallback} is the fallback"
    by_version: dict[int, list[tuple[bool, str]]] = {}
    for name in names:
        try:
            prof = load_profile(name)
        except WarplineError:
            continue
        version = prof.device.sm_version
        if version is not None and prof.device.vendor == "nvidia":
            by_version.setdefault(version, []).append((not prof.device.default_for_target, name))
    if not by_version:
        return FALLBACK_PROFILE, f"no profile of an NVIDIA architecture loads; {FALLBACK_PROFILE} is the fallback"
    if target in by_version:
        return min(by_version[target])[1], f"the default for sm_{target}"
    newer = [v for v in by_version if v > target]
    version = min(newer) if newer else max(by_version)
    name = min(by_version[version])[1]
    which = "the nearest newer architecture" if newer else "the newest older architecture (none is newer)"
    return name, f"no profile for sm_{target}; {name} (sm_{version}) is used, {which}"


def default_block(function: Function) -> tuple[tuple[int, int, int], str, bool]:
    """(block, where it came from, whether it is a guess): the kernel's ``.reqntid`` (which the
    kernel requires) or ``.maxntid`` (its upper bound), else :data:`DEFAULT_BLOCK_THREADS`."""
    for directive in ("reqntid", "maxntid"):
        dims = function.directives.get(directive)
        if dims:
            full = tuple((list(dims) + [1, 1, 1])[:3])
            return full, f"block {full[0]}x{full[1]}x{full[2]} from the kernel's .{directive}", False  # type: ignore[return-value]
    return ((DEFAULT_BLOCK_THREADS, 1, 1),
            f"{DEFAULT_BLOCK_THREADS} threads per block (the PTX declares no .reqntid/.maxntid)", True)


def default_launch(function: Function, profile: Profile | None, resources: Resources,
                   block: tuple[int, int, int] | None = None,
                   grid: tuple[int, int, int] | None = None) -> tuple[Launch, str]:
    """(launch, where it came from) for a kernel without a launch file or with only one of
    --grid/--block: the block given, else :func:`default_block`; the grid given, else one that
    fills the GPU once (every SM holds as many blocks as the occupancy rules allow: one wave at
    full occupancy). The source starts with :data:`ASSUMED_LAUNCH` when either is a guess."""
    from engine.occupancy import occupancy

    if block is not None:
        why_block, block_guessed = f"block {block[0]}x{block[1]}x{block[2]} from the command line", False
    else:
        block, why_block, block_guessed = default_block(function)
    threads = block[0] * block[1] * block[2]
    if grid is not None:
        text = f"grid {grid[0]}x{grid[1]}x{grid[2]} from the command line; {why_block}"
        return (Launch(grid=grid, block=block, kernel=function.name),
                (ASSUMED_LAUNCH if block_guessed else "") + text)
    if profile is None:
        return (Launch(grid=(1, 1, 1), block=block, kernel=function.name),
                f"{ASSUMED_LAUNCH}{why_block}; one block (no profile)")
    occ = occupancy(profile, threads, resources.registers, resources.static_shared_bytes)
    per_sm = max(1, occ.blocks_per_sm)
    blocks = profile.device.sm_count * per_sm
    launch = Launch(grid=(blocks, 1, 1), block=block, kernel=function.name)
    return launch, (f"{ASSUMED_LAUNCH}{why_block}; grid {blocks} = one wave on {profile.name} "
                    f"({profile.device.sm_count} SMs x {per_sm} resident blocks)")


def resolve_inputs(
    path: str | Path,
    *,
    kernel: str | None = None,
    profile: str | Profile | None = None,
    launch: Launch | None = None,
    launch_file: str | Path | None = None,
    config: str | None = None,
    grid: tuple[int, int, int] | None = None,
    block: tuple[int, int, int] | None = None,
    smem_dynamic: int | None = None,
    regs: int | None = None,
    args: dict[str | int, int | float] | None = None,
    trips: dict[str, int] | None = None,
    data: dict[str | int, str] | None = None,
    use_ptxas: bool = True,
    module: Module | None = None,
) -> KernelInputs:
    """Parse ``path`` and build the inputs of one kernel.

    The launch comes from, in increasing priority: the sample's launch file (found next to the
    PTX, or given), ``launch``, then the individual settings (grid, block, ...); with none of
    them, :func:`default_launch`. ``profile`` None takes :func:`default_profile_for`. ``module``
    is ``path`` already parsed (switching kernels, or after asking which one): it is not read
    again.
    """
    path = Path(path)
    if module is None:
        module = load_ptx(path)
    base: Launch | None = launch
    launch_source = "given by the caller" if launch is not None else ""
    lf_path = Path(launch_file) if launch_file else (None if launch else find_launch_file(path))
    if base is None and lf_path is not None:
        lf = load_launch_file(lf_path)
        if kernel is None and config is not None:
            kernel = lf.get(config).kernel
        if kernel is None and lf.launches and lf.launches[0].kernel:
            kernel = lf.launches[0].kernel
    function = pick_kernel(module, kernel)
    if base is None and lf_path is not None:
        base = launch_for_kernel(load_launch_file(lf_path), function.name, config)
        if base is not None:
            launch_source = f"launch file {lf_path.name}" + (f" [{base.name}]" if base.name else "")
    if profile is None:
        profile_name, profile_source = default_profile_for(module)
        prof: Profile | None = load_profile(profile_name)
    else:
        prof = load_profile(profile) if isinstance(profile, str) else profile
        profile_source = "chosen"
    resources = kernel_resources(module, function.name, arch=_ptxas_arch(module, prof.device.sm_version if prof
                                                                            else None), use_ptxas=use_ptxas)
    if regs is not None:
        resources = replace(resources, registers=regs, source="override")
    if base is None and (grid is None or block is None):
        # one of them alone: the other as the default launch has it (.reqntid's block, one wave)
        base, launch_source = default_launch(function, prof, resources, block=block, grid=grid)
        grid = block = None
    elif base is None:
        launch_source = "command line"
    elif grid is not None or block is not None or smem_dynamic is not None:
        launch_source += ", changed on the command line"
    changes: dict = {}
    if grid is not None:
        changes["grid"] = grid
    if block is not None:
        changes["block"] = block
    if smem_dynamic is not None:
        changes["smem_dynamic"] = smem_dynamic
    if regs is not None:
        changes["regs_per_thread"] = regs
    if base is None:
        base = Launch(grid=changes.pop("grid"), block=changes.pop("block"), kernel=function.name)
    # Every argument names a parameter of this kernel and fits its type (a float for an integer
    # parameter, or a name the kernel does not have, would otherwise be ignored without a word).
    where = launch_source if launch_source and launch_source != "command line" else "launch"
    merged_args = check_arguments(base.args, function.params, function.name, f"{where}: argument")
    given = check_arguments(args or {}, function.params, function.name, "--arg")
    # a given argument replaces the launch's for the same parameter, however each names it
    # (index 2, "2" or the parameter's name): both kept, the lookup would find the launch's first
    replaced = {parameter_index(key, function.params, function.name) for key in given}
    merged_args = {key: value for key, value in merged_args.items()
                   if parameter_index(key, function.params, function.name) not in replaced}
    merged_args.update(given)
    merged_trips = dict(base.trip_overrides)
    merged_trips.update(trips or {})
    for key in data or {}:
        parameter_index(key, function.params, function.name, "--data")
    merged_data = dict(base.data)
    merged_data.update(data or {})
    base = replace(base, args=merged_args, trip_overrides=merged_trips, data=merged_data, **changes)
    if base.regs_per_thread is not None:
        resources = replace(resources, registers=base.regs_per_thread, source="override")
    return KernelInputs(path=path, module=module, function=function, profile=prof, launch=base,
                        resources=resources, launch_source=launch_source, profile_source=profile_source)


def _ptxas_arch(module: Module, profile_sm: int | None) -> str | None:
    """Assemble for the module's own target: ptxas refuses to go below it, and the registers
    of a different architecture would not be those of this PTX anyway."""
    # the target as written: sm_90a code (wgmma, setmaxnreg) must be assembled as sm_90a
    target = next((t for t in module.target if t.startswith("sm_")), None)
    if target is not None and module.sm_version is not None:
        return target
    return f"sm_{profile_sm}" if profile_sm else None
