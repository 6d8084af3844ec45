"""What a figure or a table was computed from, in words: the file, the kernel, the GPU profile,
the launch, the occupancy and the user's edits ("as computed" without any), and, where the figures
rest on assumed inputs or a profile not measured on its GPU, those too
(:mod:`engine.evaluation.caveats`). Exported pictures put it in their title line, CSV exports in
``# `` comment lines before the header, so that a file that leaves the window still says which
what-if it shows."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.evaluation.caveats import MARK, figure_caveats
from engine.names import display_name

AS_COMPUTED = "as computed"
ASSUMPTIONS_NAMED = 8      # assumed inputs named in a comment line (then "and N more")


def edits(state: Any) -> list[str]:
    """The user's edits of a state, one short phrase each (BLOCK-table cells by 1-based row)."""
    ov = state.overrides
    out: list[str] = []
    for row in sorted(ov.latencies):
        for column, value in sorted(ov.latencies[row].items()):
            out.append(f"#{row} {column} = {value:g}")
    for row in sorted(ov.n_ma):
        out.append(f"#{row} n_ma = {ov.n_ma[row]}")
    for (row, column), value in sorted(ov.block_cells.items(), key=lambda item: (item[0][0], item[0][1])):
        shown = "blank" if value is None or value == "" else (f"{value:g}" if isinstance(value, float) else str(value))
        out.append(f"#{row} {column} = {shown}")
    for level1 in sorted(ov.iterations):
        out.append(f"superstep L1 #{level1} × {ov.iterations[level1]}")
    for name in sorted(ov.params):
        out.append(f"{name} = {ov.params[name]:g}")
    if state.launch_source.endswith("(edited)") or state.launch_source == "edited":
        out.append("launch edited")
    return out


def occupancy_text(evaluation: Any) -> str:
    """``8 blocks/SM (as many as fit)`` or ``4 of 8 blocks/SM (set)``."""
    state = evaluation.state
    most = evaluation.max_blocks
    if state.occupancy is None:
        return f"{evaluation.resident_blocks} blocks/SM (as many as fit)"
    return f"{evaluation.resident_blocks} of {most} blocks/SM (set)"


def state_text(evaluation: Any, limit: int = 4) -> str:
    """Occupancy and edits in one phrase for a title: ``4 of 8 blocks/SM (set) · edited: #12
    lat_comm = 2000`` or ``8 blocks/SM (as many as fit) · as computed``; at most ``limit`` edits
    are named (then "and N more")."""
    made = edits(evaluation.state)
    if not made:
        return f"{occupancy_text(evaluation)} · {AS_COMPUTED}"
    named = made[:limit] + ([f"and {len(made) - limit} more"] if len(made) > limit else [])
    return f"{occupancy_text(evaluation)} · edited: {', '.join(named)}"


def launch_text(state: Any) -> str:
    launch = state.launch
    grid, block = ("×".join(str(x) for x in dims) for dims in (launch.grid, launch.block))
    text = f"grid {grid}, block {block}, dynamic shared memory {launch.smem_dynamic} B"
    if launch.regs_per_thread is not None:
        text += f", {launch.regs_per_thread} registers/thread"
    if launch.args:
        text += ", arguments " + ", ".join(f"{k}={v}" for k, v in launch.args.items())
    if launch.trip_overrides:
        text += ", trips " + ", ".join(f"{k}={v}" for k, v in launch.trip_overrides.items())
    return text


def provenance(evaluation: Any, path: str | Path | None = None) -> list[tuple[str, str]]:
    """(key, value) pairs: file, kernel, profile, launch, occupancy, policy, edits; then
    ``assumptions`` and ``profile basis`` where the figures rest on guesses or on a profile
    not measured on its GPU (the marks of :func:`engine.evaluation.caveats.figure_caveats`)."""
    state = evaluation.state
    profile = evaluation.profile
    out: list[tuple[str, str]] = []
    if path is not None:
        out.append(("file", str(path)))
    out.append(("kernel", f"{display_name(state.kernel)} ({state.kernel})"))
    out.append(("profile", f"{profile.name if profile is not None else state.profile}"
                           + (f" at {profile.device.clock_mhz:g} MHz" if profile is not None else "")))
    source = evaluation.launch_source or state.launch_source
    out.append(("launch", launch_text(state) + (f" ({source})" if source else "")))
    out.append(("occupancy", occupancy_text(evaluation)))
    out.append(("policy", state.policy))
    made = edits(state)
    out.append(("edits", "; ".join(made) if made else f"none ({AS_COMPUTED})"))
    caveats = figure_caveats(evaluation)
    if caveats.guessed:
        names = [a.subject for a in caveats.assumptions[:ASSUMPTIONS_NAMED]]
        more = caveats.count - len(names)
        plural = "s" if caveats.count != 1 else ""
        out.append(("assumptions", f"{MARK} the figures rest on {caveats.count} assumed input{plural}: "
                                   + "; ".join(names) + (f"; and {more} more" if more else "")))
    if caveats.profile:
        out.append(("profile basis", caveats.profile))
    return out


def comment_lines(evaluation: Any, path: str | Path | None = None, extra: Sequence[tuple[str, str]] = ()) -> list[str]:
    """The provenance as ``key: value`` lines (a CSV writer puts ``# `` before each)."""
    return [f"{key}: {value}" for key, value in [*provenance(evaluation, path), *extra]]
