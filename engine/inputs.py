"""Everything one prediction needs, resolved once: the PTX module, the kernel, the GPU profile,
the launch, and the kernel's resources. The CLI and the GUI both build a :class:`KernelInputs`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from engine.errors import LaunchError, WarplineError
from engine.launch import Launch, LaunchFile, load_launch_file
from engine.profiles import Profile, load_profile
from engine.ptx import load_ptx
from engine.ptx.model import Function, Module
from engine.resources import Resources, kernel_resources

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

    @property
    def kernel_name(self) -> str:
        return self.function.name


def analyse_launch(inputs: KernelInputs, launch: Launch | None = None) -> tuple:
    """(KernelAnalysis, MemoryReport) of the kernel for a launch: what both models start from,
    computed once when a caller runs both."""
    from engine.analysis import analyze_kernel
    from engine.memory import analyze_memory

    launch = launch or inputs.launch
    analysis = analyze_kernel(inputs.function, launch, inputs.module)
    return analysis, analyze_memory(analysis, launch, inputs.module)


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
    """The kernel called ``name`` (exact, else a unique substring, so demangled-ish names work)."""
    kernels = module.kernels
    if not kernels:
        raise WarplineError(f"{module.filename}: the file defines no kernel (.entry with a body)")
    if name is None:
        return kernels[0]
    exact = [k for k in kernels if k.name == name]
    if exact:
        return exact[0]
    partial = [k for k in kernels if name in k.name]
    if len(partial) == 1:
        return partial[0]
    names = ", ".join(k.name for k in kernels)
    if not partial:
        raise WarplineError(f"{module.filename}: no kernel named {name!r} (kernels: {names})")
    raise WarplineError(f"{module.filename}: {name!r} matches several kernels: "
                        + ", ".join(k.name for k in partial))


def launch_for_kernel(launch_file: LaunchFile, kernel: str, config: str | None) -> Launch | None:
    """The named configuration, else the first one written for this kernel (or for any kernel)."""
    if config is not None:
        return launch_file.get(config)
    for launch in launch_file.launches:
        if launch.kernel is None or launch.kernel == kernel:
            return launch
    return None


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
    use_ptxas: bool = True,
    module: Module | None = None,
) -> KernelInputs:
    """Parse ``path`` and build the inputs of one kernel.

    The launch comes from, in increasing priority: the sample's launch file (found next to the
    PTX, or given), ``launch``, then the individual settings (grid, block, ...). ``module`` is
    ``path`` already parsed (switching kernels, or after asking which one): it is not read again.
    """
    path = Path(path)
    if module is None:
        module = load_ptx(path)
    base: Launch | None = launch
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
    if base is None and (grid is None or block is None):
        if grid is not None or block is not None:
            raise LaunchError("give both --grid and --block (or a launch file)")
    else:
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
        merged_args = dict(base.args)
        merged_args.update(args or {})
        merged_trips = dict(base.trip_overrides)
        merged_trips.update(trips or {})
        base = replace(base, args=merged_args, trip_overrides=merged_trips, **changes)
    prof = load_profile(profile) if isinstance(profile, str) else profile
    arch = prof.device.sm_version if prof is not None else None
    resources = kernel_resources(module, function.name, arch=_ptxas_arch(module, arch), use_ptxas=use_ptxas)
    if base is not None and base.regs_per_thread is not None:
        resources = replace(resources, registers=base.regs_per_thread, source="override")
    return KernelInputs(path=path, module=module, function=function, profile=prof, launch=base,
                        resources=resources)


def _ptxas_arch(module: Module, profile_sm: int | None) -> str | None:
    """Assemble for the module's own target: ptxas refuses to go below it, and the registers
    of a different architecture would not be those of this PTX anyway."""
    target = module.sm_version
    if target is not None:
        return f"sm_{target}"
    return f"sm_{profile_sm}" if profile_sm else None
