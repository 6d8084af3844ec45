"""Where ptxas put each copy of an unrolled loop body in its SASS: the order a warp issues them in.

Both the Pipeline simulator (its list scheduler's priority) and Many-BSP* (one warp's in-order
path through an unrolled level-1 superstep) read the SASS order through :func:`copy_positions`,
so the two models see the same schedule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def copy_positions(copies: Sequence[tuple[int, int]], positions: Mapping[int, tuple[int, ...]] | None,
                   deps: Sequence[Sequence[int]] | None = None) -> list[float | None] | None:
    """SASS positions of ``copies``, (unrolled copy, instruction index) pairs; None without a
    SASS map, or when no instruction of an unrolled body has one SASS copy per PTX iteration.

    ``positions[i]``: where the SASS copies of instruction ``i`` lie (``SassMap.positions``).
    ``deps[i]``: the instructions ``i`` reads (to place the copies of an instruction whose SASS
    copies do not number u before their consumers' copies).

    Where ptxas unrolled a loop u times, most instructions have u copies in its SASS, one per
    PTX iteration a pass covers, and the c-th in address order is copy c's. Others have more
    (an operation split in two) or fewer (a copy folded into another, or moved to the previous
    pass where ptxas rotated the loop). Where the instruction's consumers later in the body have
    u copies, its copy c comes before their copy c: each of its SASS copies goes to the first
    copy whose consumers come after it, and a copy without one sits just before them. Otherwise
    each goes to the copy whose typical position (the median over the instructions with exactly
    u) is nearest, and a copy without one sits at that typical position plus the instruction's
    usual offset from it. An instruction without SASS (folded away) gets None."""
    if not positions:
        return None
    u = 1 + max((c for c, _ in copies), default=0)
    if u == 1:
        # Not unrolled (the Pipeline adapter asks this of every basic block): each instruction's
        # first SASS copy, nothing to place.
        firsts = [positions.get(i, ()) for _, i in copies]
        return [float(where[0]) if where else None for where in firsts]
    found = {i: positions.get(i, ()) for _, i in copies}
    exact = [where for where in found.values() if len(where) == u]
    if u > 1 and not exact:
        return None
    centre = [float(np.median([where[c] for where in exact])) for c in range(u)] if u > 1 else [0.0]
    placed: dict[int, list[float | None]] = {}
    for i, where in found.items():
        if not where:
            placed[i] = [None] * u
        elif len(where) == u or u == 1:
            placed[i] = [float(x) for x in where[:u]]
        else:
            placed[i] = _place_copies(i, where, u, found, centre, deps)
    return [placed[i][c] for c, i in copies]


def _place_copies(i: int, where: tuple[int, ...], u: int, found: Mapping[int, tuple[int, ...]],
                  centre: list[float], deps: Sequence[Sequence[int]] | None) -> list[float | None]:
    """The u copies' positions of an instruction with another number of SASS copies (see
    :func:`copy_positions`)."""
    consumers = [found[j] for j in found if j > i and len(found[j]) == u and deps is not None
                 and j < len(deps) and i in deps[j]]
    mine: dict[int, float] = {}
    if consumers:
        bound = [min(where_j[c] for where_j in consumers) for c in range(u)]
        for x in sorted(where):
            c = next((c for c in range(u) if c not in mine and x < bound[c]), None)
            if c is not None:
                mine[c] = float(x)
        return [mine.get(c, bound[c] - 0.5) for c in range(u)]
    for x in where:
        c = min(range(u), key=lambda c: abs(x - centre[c]))
        mine.setdefault(c, float(x))
    offset = float(np.median([x - centre[c] for c, x in mine.items()]))
    return [mine.get(c, centre[c] + offset) for c in range(u)]
