"""Running ptxas and nvdisasm on a rewritten PTX text, with time limits.

Both run in a private temporary folder; failures come back as a reason string (the first error
line the tool printed), never as an exception, because a kernel that ptxas will not assemble
still has its PTX model.
"""

from __future__ import annotations

import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from engine.sass.control_fields import stall_counts
from engine.sass.tools import SassTools

PTXAS_TIMEOUT_S = 120.0
NVDISASM_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Disassembly:
    """nvdisasm's JSON listing and, per function, the stall counts of its instructions in address
    order (:mod:`engine.sass.control_fields`; empty when the cubin could not be read)."""

    listing: str
    stalls: dict[str, tuple[int, ...]]


@dataclass(frozen=True)
class ToolFailure:
    """Why no listing could be had."""

    reason: str


def _first_error(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if "error" in line.lower() or "fatal" in line.lower():
            return line[:300]
    return lines[0][:300] if lines else "no message"


def _run(command: list[str], timeout: float, what: str, cwd: str) -> subprocess.CompletedProcess[str] | str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False, cwd=cwd)
    except subprocess.TimeoutExpired:
        return f"{what} took longer than {timeout:.0f} s"
    except OSError as exc:
        return f"{what} could not run: {exc.strerror or exc}"
    if done.returncode != 0:
        return f"{what} failed: {_first_error(done.stderr)}"
    return done


def disassemble(text: str, kernel: str, arch: str, tools: SassTools) -> Disassembly | ToolFailure:
    """nvdisasm's JSON listing (with line numbers) of ``kernel`` assembled for ``arch``, with the
    stall counts of the cubin's instructions; the reason when it cannot be had."""
    with tempfile.TemporaryDirectory(prefix="warpline-sass-") as tmp:
        source = Path(tmp) / "kernel.ptx"
        cubin = Path(tmp) / "kernel.cubin"
        source.write_text(text, encoding="utf-8")
        # -e keeps ptxas to the one kernel: a library file may hold hundreds.
        assembled = _run([tools.ptxas, f"-arch={arch}", "-lineinfo", "-e", kernel, str(source), "-o", str(cubin)],
                         PTXAS_TIMEOUT_S, "ptxas", tmp)
        if isinstance(assembled, str):
            return ToolFailure(assembled)
        listed = _run([tools.nvdisasm, "-json", "-g", str(cubin)], NVDISASM_TIMEOUT_S, "nvdisasm", tmp)
        if isinstance(listed, str):
            return ToolFailure(listed)
        try:
            stalls = stall_counts(cubin.read_bytes())
        except (OSError, ValueError, struct.error):
            stalls = {}
        return Disassembly(listed.stdout, stalls)
