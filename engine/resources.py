"""Registers and static shared memory of a kernel: ``ptxas -v`` when it can, else an estimate.

``ptxas`` (the CUDA assembler) reports what the hardware will really allocate; it is used when
it is on PATH and supports the file's ``.version``. Its reports are cached per (PTX text hash,
arch, executable), in memory (the GUI asks again on every edit of the launch) and on disk in
``$XDG_CACHE_HOME/warpline/ptxas`` (so that a command run again on the same file, or a 25 MB
library opened again, never re-runs ptxas).

The estimate, used otherwise (and named so in :attr:`Resources.source`):

* **registers**: PTX registers are virtual and far outnumber the real ones, so counting the
  ``.reg`` declarations overshoots (a kernel declaring 48 32-bit registers may use 14). Instead
  the estimate is the peak register pressure: each virtual register lives from its first to its
  last appearance in program order, stretched over any loop (backward branch) it is live into;
  the peak sum of live widths (a 64-bit register counts two, predicates none) plus
  :data:`REGISTER_OVERHEAD` for the thread index and addressing temporaries ptxas keeps,
  rounded up to an even count and capped by the architecture's per-thread maximum. Without
  instructions (a declaration-only function) the declared widths are summed instead.
* **static shared memory**: the sizes of the kernel's ``.shared`` declarations plus the
  module-scope ones it names, each aligned to its ``.align``. ``extern`` arrays are dynamic
  shared memory (a launch setting) and count zero here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from engine.errors import WarplineError
from engine.ptx.parsed_module import Function, Module
from engine.ptx.symbols import symbols_named
from engine.sass.tools import find_ptxas

REGISTER_OVERHEAD = 4
MAX_REGISTERS = 255

# Width of a register type in 32-bit register slots.
_REG_SLOTS = {
    "pred": 0,
    "b8": 1,
    "s8": 1,
    "u8": 1,
    "b16": 1,
    "s16": 1,
    "u16": 1,
    "f16": 1,
    "bf16": 1,
    "f16x2": 1,
    "bf16x2": 1,
    "b32": 1,
    "s32": 1,
    "u32": 1,
    "f32": 1,
    "tf32": 1,
    "b64": 2,
    "s64": 2,
    "u64": 2,
    "f64": 2,
    "b128": 4,
}


@dataclass(frozen=True)
class Resources:
    """Per-thread registers and per-block static shared memory of one kernel."""

    kernel: str
    registers: int
    static_shared_bytes: int
    source: str  # "ptxas" or "estimate"
    arch: str | None = None  # "sm_90"
    stack_frame_bytes: int = 0
    spill_store_bytes: int = 0
    spill_load_bytes: int = 0
    barriers: int | None = None
    reason: str = ""  # why the estimate was used, or the ptxas command
    report: str = ""  # the ptxas lines about this kernel

    @property
    def spills(self) -> bool:
        return self.spill_store_bytes > 0 or self.spill_load_bytes > 0


class ResourceError(WarplineError):
    """The kernel cannot be found, or the PTX cannot be read."""


_CACHE: dict[tuple[str, str, str, str], dict[str, Resources] | str] = {}
# Above this size a file is assembled one kernel at a time (``ptxas -e``): all 252 kernels of a
# 25 MB library take ptxas 30 s, the one asked for 3 s.
ONE_KERNEL_BYTES = 1 << 20


def kernel_resources(
    ptx: str | os.PathLike[str] | Module,
    kernel_name: str | None = None,
    arch: str | int | None = None,
    *,
    use_ptxas: bool = True,
    ptxas: str | None = None,
) -> Resources:
    """Resources of ``kernel_name`` (None: the first kernel) in ``ptx`` (a path, PTX text or a
    parsed Module). ``arch`` (``"sm_90"`` or 90) defaults to the module's ``.target``.

    A Module is assembled from its file on disk (``Module.filename``); pass the text instead
    when it was edited since. ``use_ptxas=False`` forces the estimate; ``ptxas`` names the
    executable (default: the one on PATH)."""
    module, text = _load(ptx)
    function = _find_kernel(module, kernel_name)
    arch_name = _arch_name(arch, module)
    reason = ""
    if use_ptxas:
        exe = ptxas or find_ptxas()
        if exe is None:
            reason = "ptxas is not installed (neither the nvidia-cuda-nvcc package nor on PATH)"
        elif text is None:
            reason = "no PTX text to assemble (a Module without its file)"
        elif arch_name is None:
            reason = "the module's .target names no sm_XX architecture"
        else:
            entry = function.name if len(text) > ONE_KERNEL_BYTES else ""
            outcome = _run_ptxas_cached(exe, text, arch_name, entry)
            if isinstance(outcome, str):
                reason = outcome
            elif function.name in outcome:
                return outcome[function.name]
            else:
                reason = f"ptxas reported nothing for {function.name}"
    else:
        reason = "ptxas not requested"
    return estimate_resources(module, function, arch_name, reason)


# ---------------------------------------------------------------------- ptxas


def _run_ptxas_cached(exe: str, text: str, arch: str, entry: str = "") -> dict[str, Resources] | str:
    """ptxas once per (text, arch, executable, entry): remembered in this process and on disk, so
    that neither an edit in the window nor the next command runs it again for the same file. A
    failure of ptxas itself (it rejected the file) is remembered too; one where it could not
    run (a timeout) is not. ``entry`` (not empty) assembles that kernel only."""
    digest = hashlib.sha256(text.encode()).hexdigest()
    key = (digest, arch, exe, entry)
    if key in _CACHE:
        return _CACHE[key]
    disk = _disk_key(exe, digest, arch, entry)
    outcome = _read_disk(disk) if disk is not None else None
    if outcome is None:
        outcome = run_ptxas(exe, _entry_source(text, entry) if entry else text, arch, entry)
        if (not isinstance(outcome, str) or outcome.startswith(_REJECTED)) and disk is not None:
            _write_disk(disk, outcome)
    if not isinstance(outcome, str) or outcome.startswith(_REJECTED):
        _CACHE[key] = outcome
    return outcome


def _entry_source(text: str, entry: str) -> str:
    """``text`` with only ``entry``'s body and the ``.func`` bodies (ptxas refuses declared
    functions without one): ptxas reads 25 MB of library in 3 s, this in 0.2 s."""
    from engine.ptx.index import kernel_source  # late: the PTX front end imports nothing from here

    try:
        return kernel_source(text, entry, all_functions=True)[0]
    except WarplineError:
        return text        # let ptxas itself say what is wrong with it


def ptxas_cache_dir() -> Path:
    """Where ptxas reports are remembered: ``$XDG_CACHE_HOME/warpline/ptxas``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "warpline" / "ptxas"


_REJECTED = "ptxas failed:"        # how run_ptxas words a file that ptxas refused
_DISK_FORMAT = 1


def _disk_key(exe: str, digest: str, arch: str, entry: str = "") -> str | None:
    """The file name of a report: the text's hash, the arch, and the executable as it is on disk
    (path, size, modification time: replacing ptxas changes the key). None for an executable
    that does not exist (nothing it says can be worth keeping)."""
    try:
        st = os.stat(exe)
    except OSError:
        return None
    parts = (digest, arch, os.path.abspath(exe), str(st.st_size), str(st.st_mtime_ns), str(_DISK_FORMAT), entry)
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _read_disk(key: str) -> dict[str, Resources] | str | None:
    """A remembered outcome, or None (absent or unreadable: computed again and rewritten)."""
    try:
        data = json.loads((ptxas_cache_dir() / f"{key}.json").read_text(encoding="utf-8"))
        if data.get("key") != key:
            return None
        if "failure" in data:
            failure = data["failure"]
            return failure if isinstance(failure, str) and failure.startswith(_REJECTED) else None
        found = {name: Resources(**fields) for name, fields in data["kernels"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    for name, res in found.items():
        if res.kernel != name or not isinstance(res.registers, int) or not isinstance(res.static_shared_bytes, int):
            return None
    return found


def _write_disk(key: str, outcome: dict[str, Resources] | str) -> None:
    """Remember ``outcome`` on disk; a cache folder that cannot be written is passed over."""
    from engine.fileio import write_text_atomic

    if isinstance(outcome, str):
        record: dict = {"key": key, "failure": outcome}
    else:
        record = {"key": key, "kernels": {name: dataclasses.asdict(res) for name, res in outcome.items()}}
    folder = ptxas_cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_text_atomic(folder / f"{key}.json", json.dumps(record))
    except (OSError, WarplineError):
        pass


def run_ptxas(exe: str, text: str, arch: str, entry: str = "") -> dict[str, Resources] | str:
    """Assemble ``text`` for ``arch`` (only the kernel ``entry`` when one is named); the
    per-kernel reports, or the reason it failed."""
    version = _ptx_version(text)
    supported = ptxas_max_ptx_version(exe)
    if version and supported and _version_tuple(version) > _version_tuple(supported):
        return f"PTX .version {version} is newer than this ptxas supports ({supported})"
    with tempfile.TemporaryDirectory(prefix="warpline-ptxas-") as tmp:
        source = Path(tmp) / "kernel.ptx"
        source.write_text(text, encoding="utf-8")
        command = [exe, "-v", f"-arch={arch}", *(["-e", entry] if entry else []), str(source), "-o", os.devnull]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"ptxas could not run: {exc}"
    if done.returncode != 0:
        first = next((line for line in done.stderr.splitlines() if "error" in line or "fatal" in line), "")
        return f"ptxas failed: {first.strip() or done.stderr.strip()[:200]}"
    return parse_ptxas_report(done.stderr, arch, f"ptxas -v -arch={arch}")


_COMPILING = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
_PROPS = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")


def parse_ptxas_report(
    stderr: str, arch: str | None = None, command: str = "ptxas -v"
) -> dict[str, Resources]:
    """Parse ``ptxas -v`` stderr into Resources per entry function.

    Each kernel's block starts with ``Compiling entry function 'k'``; its ``Function properties``
    line is followed by the stack/spill line, then ``Used N registers[, used B barriers][, S bytes
    smem][, ... cmem[i]]``. ``.func`` bodies only get a properties block, which is skipped.
    """
    found: dict[str, Resources] = {}
    current: str | None = None
    fields: dict[str, int] = {}
    lines: list[str] = []
    in_kernel_props = False
    for raw in stderr.splitlines():
        line = raw.strip()
        if m := _COMPILING.search(line):
            current, fields, lines = m.group(1), {}, [line]
            arch = arch or m.group(2)
            continue
        if current is None:
            continue
        if m := _PROPS.search(line):
            in_kernel_props = m.group(1) == current
            lines.append(line)
            continue
        if (m := _FRAME.search(line)) and in_kernel_props:
            fields.update(stack=int(m.group(1)), stores=int(m.group(2)), loads=int(m.group(3)))
            lines.append(line)
            continue
        if m := _USED.search(line):
            barriers = _BARRIERS.search(line)
            smem = _SMEM.search(line)
            lines.append(line)
            found[current] = Resources(
                kernel=current,
                registers=int(m.group(1)),
                static_shared_bytes=int(smem.group(1)) if smem else 0,
                source="ptxas",
                arch=arch,
                stack_frame_bytes=fields.get("stack", 0),
                spill_store_bytes=fields.get("stores", 0),
                spill_load_bytes=fields.get("loads", 0),
                barriers=int(barriers.group(1)) if barriers else None,
                reason=command,
                report="\n".join(lines),
            )
            current = None
    return found


_PTXAS_VERSIONS: dict[str, str | None] = {}
# ptxas release -> the newest PTX ISA it reads (PTX ISA release notes).
_ISA_FOR_CUDA = {
    (13, 5): "9.5",      # the nvidia-cuda-nvcc 13.5 wheel (Triton's and numba's 9.4/9.5 PTX)
    (13, 0): "9.0",
    (12, 9): "8.8",
    (12, 8): "8.7",
    (12, 7): "8.6",
    (12, 6): "8.5",
    (12, 5): "8.5",
    (12, 4): "8.4",
    (12, 3): "8.3",
    (12, 2): "8.2",
    (12, 1): "8.1",
    (12, 0): "8.0",
    (11, 8): "7.8",
}


def ptxas_max_ptx_version(exe: str) -> str | None:
    """The newest PTX ``.version`` this ptxas accepts, from ``ptxas --version``; None if unknown
    (then ptxas itself decides, and its error becomes the reason for the estimate)."""
    if exe not in _PTXAS_VERSIONS:
        try:
            out = subprocess.run(
                [exe, "--version"], capture_output=True, text=True, timeout=30, check=False
            ).stdout
        except (OSError, subprocess.TimeoutExpired):
            out = ""
        m = re.search(r"release (\d+)\.(\d+)", out)
        _PTXAS_VERSIONS[exe] = _ISA_FOR_CUDA.get((int(m.group(1)), int(m.group(2)))) if m else None
    return _PTXAS_VERSIONS[exe]


def _ptx_version(text: str) -> str | None:
    m = re.search(r"^\s*\.version\s+(\d+\.\d+)", text, re.MULTILINE)
    return m.group(1) if m else None


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


# ---------------------------------------------------------------------- estimate


def estimate_resources(
    module: Module, function: Function, arch: str | None = None, reason: str = ""
) -> Resources:
    """The ptxas-free estimate described in the module docstring."""
    if function.instructions:
        pressure = _peak_pressure(function)
        registers = pressure + REGISTER_OVERHEAD
        how = f"peak register pressure {pressure} + {REGISTER_OVERHEAD}"
    else:
        registers = sum(_REG_SLOTS.get(d.type, 1) * (d.count or 1) for d in function.registers)
        how = "sum of declared register widths (no instructions)"
    registers = min(MAX_REGISTERS, max(2, registers + registers % 2))
    return Resources(
        kernel=function.name,
        registers=registers,
        static_shared_bytes=static_shared_bytes(module, function),
        source="estimate",
        arch=arch,
        reason=f"{reason}; estimated from the PTX ({how})" if reason else f"estimated from the PTX ({how})",
    )


def static_shared_bytes(module: Module, function: Function) -> int:
    """Static ``.shared`` bytes of a kernel: its own declarations plus module-scope ones it names."""
    total = 0
    named = symbols_named(function)
    candidates = list(function.variables) + [v for v in module.variables if v.name in named]
    for var in candidates:
        if var.state_space != "shared" or var.size_bytes is None or var.linkage == "extern":
            continue
        align = var.align or 1
        total = -(-total // align) * align + var.size_bytes
    return total


def _register_slots(function: Function) -> dict[str, int]:
    slots: dict[str, int] = {}
    for decl in function.registers:
        width = _REG_SLOTS.get(decl.type, 1)
        if decl.count is None:
            slots[decl.name] = width
        else:
            # ``%r<20>`` declares %r0..%r19; resolve names lazily by prefix below.
            slots[decl.name + "<>"] = width
    return slots


def _slot_width(name: str, slots: dict[str, int]) -> int:
    if name in slots:
        return slots[name]
    prefix = name.rstrip("0123456789")
    return slots.get(prefix + "<>", 1)


def _peak_pressure(function: Function) -> int:
    """Peak of the summed widths of live virtual registers over the instruction list."""
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for ins in function.instructions:
        for reg in (*ins.dests, *ins.srcs):
            first.setdefault(reg, ins.index)
            last[reg] = ins.index
    # A register defined before a loop and used inside it stays live for the whole loop.
    loops = [
        (function.labels[ins.branch_target], ins.index)
        for ins in function.instructions
        if ins.branch_target in function.labels and function.labels[ins.branch_target] <= ins.index
    ]
    changed = True
    while changed:
        changed = False
        for head, tail in loops:
            for reg, start in first.items():
                if start < head <= last[reg] < tail:
                    last[reg] = tail
                    changed = True
    slots = _register_slots(function)
    delta = [0] * (len(function.instructions) + 2)
    for reg, start in first.items():
        width = _slot_width(reg, slots)
        delta[start] += width
        delta[last[reg] + 1] -= width
    peak = running = 0
    for step in delta:
        running += step
        peak = max(peak, running)
    return peak


# ---------------------------------------------------------------------- inputs


def _load(ptx: str | os.PathLike[str] | Module) -> tuple[Module, str | None]:
    from engine.ptx import parse_ptx  # late: the PTX front end imports nothing from here

    if isinstance(ptx, Module):
        path = Path(ptx.filename)
        return ptx, path.read_text(encoding="utf-8") if path.is_file() else None
    if isinstance(ptx, os.PathLike) or ("\n" not in ptx and Path(ptx).is_file()):
        path = Path(ptx)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ResourceError(f"{path}: cannot read the PTX file: {exc.strerror or exc}") from exc
        return parse_ptx(text, str(path)), text
    return parse_ptx(ptx, "<string>"), ptx


def _find_kernel(module: Module, name: str | None) -> Function:
    try:
        return module.kernel(name)
    except KeyError:
        names = ", ".join(k.name for k in module.kernels) or "none"
        raise ResourceError(f"{module.filename}: no kernel {name!r} (kernels: {names})") from None


def _arch_name(arch: str | int | None, module: Module) -> str | None:
    if isinstance(arch, int):
        return f"sm_{arch}"
    if arch:
        return arch if arch.startswith("sm_") else f"sm_{arch}"
    for target in module.target:
        if target.startswith("sm_"):
            return target
    return None
