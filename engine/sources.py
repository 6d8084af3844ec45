"""The source text behind a kernel: its PTX file and the CUDA files its ``.loc`` directives name.

``.file`` entries hold the path the compiler was given, usually relative to the directory it ran
in (nvcc's ``../hotspot.cu``), sometimes absolute on another machine. :func:`find_source_file`
looks where such a file can be found from here; a file that cannot be found is reported with the
places that were tried, never guessed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from engine.ptx.parsed_module import CudaLocation

MAX_SOURCE_BYTES = 32 * 1024 * 1024     # a source view is for reading: refuse anything larger


@dataclass(frozen=True)
class SourceText:
    """A text file for display. ``path`` is None when it was not found (``problem`` says why)."""

    name: str                               # as the PTX names it
    path: Path | None
    lines: list[str] = field(default_factory=list)
    problem: str = ""

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def candidate_paths(name: str, ptx_path: Path) -> list[Path]:
    """Where a ``.file`` name may be, in the order they are tried: as written (absolute, or relative
    to the PTX file's folder, then to the working directory), then its base name beside the PTX
    file and in the folder above it (``samples/ptx/x.ptx`` next to ``samples/x.cu``)."""
    written = Path(name)
    here = ptx_path.resolve().parent
    if written.is_absolute():
        paths = [written]
    else:
        paths = [here / written, Path.cwd() / written]
    paths += [here / written.name, here.parent / written.name]
    unique: list[Path] = []
    for p in paths:
        p = Path(os.path.normpath(p))
        if p not in unique:
            unique.append(p)
    return unique


def find_source_file(name: str, ptx_path: Path) -> Path | None:
    for path in candidate_paths(name, ptx_path):
        if path.is_file():
            return path
    return None


def read_source(name: str, path: Path | None, tried: list[Path] | None = None) -> SourceText:
    """``path`` read for display (undecodable bytes replaced); a missing or unreadable file gives
    a SourceText with the reason instead of raising."""
    if path is None:
        where = ", ".join(str(p) for p in tried or [])
        return SourceText(name, None, problem=f"{name} was not found (looked at {where})")
    try:
        size = path.stat().st_size
        if size > MAX_SOURCE_BYTES:
            return SourceText(name, None, problem=f"{path} is {size:,} bytes: too large to show")
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return SourceText(name, None, problem=f"{path} cannot be read: {exc.strerror or exc}")
    return SourceText(name, path, text.splitlines())


def cuda_sources(ptx_path: Path, names: set[str]) -> dict[str, SourceText]:
    """The CUDA files ``names`` (as ``.file`` gives them), each found and read or with its problem."""
    out: dict[str, SourceText] = {}
    for name in sorted(names):
        tried = candidate_paths(name, ptx_path)
        out[name] = read_source(name, find_source_file(name, ptx_path), tried)
    return out


def visible_location(location: CudaLocation | None, found: set[str]) -> CudaLocation | None:
    """The first position of an inlining chain (innermost first) whose file is in ``found``: code
    inlined from a header that is not at hand is shown at its call site in the user's file."""
    while location is not None:
        if location.file in found:
            return location
        location = location.inlined_at
    return None


def location_files(location: CudaLocation | None) -> set[str]:
    """Every file of an inlining chain."""
    files: set[str] = set()
    while location is not None:
        files.add(location.file)
        location = location.inlined_at
    return files
