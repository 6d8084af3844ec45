"""The Many-BSP device figures of a profile: its ``[manybsp]`` section, or, for a profile without
one (001's GPUs), figures derived from its pipeline, instruction and device figures, each marked
with where it came from (derived, assumed, placeholder or missing).

The profile itself (``engine.profiles``) holds only what its file states, so that the Pipeline
model and the default-profile choice see nothing invented; the derivation lives here, beside the
model that needs it.
"""

from __future__ import annotations

import math

from engine.errors import ProfileError
from engine.profiles import (
    ASSUMED,
    DERIVED,
    MISSING,
    PLACEHOLDER,
    DerivedValue,
    ManyBspParams,
    Profile,
)
from engine.units import Unit

# μ (eq. 24) has no measurement recipe in 000; the measured profiles (h100, h200) keep this
# placeholder too (docs/microbenchmarks.md), so a derived profile uses the same one.
MU_PLACEHOLDER = 2.0

# the key of the barrier table among the derived figures (its absence refuses barrier rows)
MISSING_BARRIER = "barrier_overhead"


def manybsp_figures(profile: Profile) -> ManyBspParams:
    """The Many-BSP device figures: the ``[manybsp]`` section, or, for a profile without one,
    figures derived from its pipeline and device sections (:func:`derive_manybsp`), each marked
    with its provenance. ``profile.manybsp`` itself stays None for such a profile."""
    return profile.manybsp if profile.manybsp is not None else derive_manybsp(profile)


def barrier_overhead(profile: Profile, threads_per_block: int) -> float:
    """000's barrier overhead for a block size: the table value, linear interpolation
    between table rows, and the nearest row's value outside the table (no extrapolation:
    the two measured points do not say how the cost grows beyond them). A profile without a
    ``[manybsp]`` section uses the table derived from its ``bar.sync`` rule."""
    figures = manybsp_figures(profile)
    if MISSING_BARRIER in figures.missing:
        where = str(profile.path or profile.name)
        raise ProfileError("this profile has no [manybsp] section and no bar.sync rule to derive "
                           "the barrier overhead from", where, "manybsp")
    table = figures.barrier_overhead
    if threads_per_block <= table[0][0]:
        return table[0][1]
    for (t0, c0), (t1, c1) in zip(table, table[1:], strict=False):
        if threads_per_block <= t1:
            return c0 + (c1 - c0) * (threads_per_block - t0) / (t1 - t0)
    return table[-1][1]


def figure_source(profile: Profile, dotted_key: str) -> str:
    """Where a profile's number came from (:meth:`Profile.source_of`); for a ``manybsp.*`` key of
    a profile without a ``[manybsp]`` section, how that figure was derived (``kind: provenance``)."""
    parts = dotted_key.split(".")
    if parts[0] != "manybsp" or profile.manybsp is not None:
        return profile.source_of(dotted_key)
    stated = profile.source_of(dotted_key)   # a [sources] entry still says it first
    if stated:
        return stated
    figures = derive_manybsp(profile)
    derived = figures.derived_value(parts[1]) if len(parts) > 1 else None
    if derived is not None:
        return f"{derived.kind}: {derived.provenance}"
    return figures.source


def derive_manybsp(profile: Profile) -> ManyBspParams:
    """Many-BSP figures for a profile without a ``[manybsp]`` section (001's GPUs), built from its
    pipeline and device figures; every value says where it came from (``derivation``).

    * ``mem_lat``: the latency Λ of a global access, ``pipeline.memory.global_Lam``, else
      ``dram_Lam``, else the ``ld.global`` rule's ``lat_comm``/Λ, else ``units.ldst.lat_comm``.
    * ``barrier_overhead``: from the ``bar.sync`` rule (or a ``[units.barrier]`` section):
      ``Λ + (warps − 1)·λ``, the cycles until 001's pipeline releases a block whose warps all
      issue the barrier into a pipe that takes one every λ cycles; a two-row table (one warp, the
      largest block), so the linear interpolation gives that line at every block size.
    * ``issue_cycle`` = 1 (assumed: 000's value on all its GPUs; 001's issue limit IL is not
      used, as it folds in unit throughput that the BLOCK table's FU columns already charge).
    * ``mu`` = :data:`MU_PLACEHOLDER` (nothing defines μ; 000 gives no way to measure it).
    * ``block_lnch_ovh``, ``warp_lnch_ovh``: no profile section has launch-overhead figures, so
      they are MISSING (0 here): the prediction is refused until they are given.
    """
    dev, mem = profile.device, profile.pipeline.memory
    notes: list[DerivedValue] = []

    mem_lat = 0.0
    global_rule = profile.rule_for("ld.global.b32")
    ldst = profile.units.get(Unit.LDST)
    candidates: list[tuple[str, float | None]] = [
        ("pipeline.memory.global_Lam", mem.get("global_Lam")),
        ("pipeline.memory.dram_Lam", mem.get("dram_Lam")),
    ]
    if global_rule is not None:
        rule_lat = global_rule.lat_comm if global_rule.lat_comm else global_rule.Lam
        candidates.append((f"the '{global_rule.pattern.text}' rule's latency", rule_lat))
    candidates.append(("units.ldst.lat_comm", ldst.lat_comm if ldst is not None else None))
    found = next(((key, value) for key, value in candidates if value is not None and value > 0), None)
    if found is not None:
        mem_lat = float(found[1])
        notes.append(DerivedValue("mem_lat", DERIVED, f"{mem_lat:g} cycles from {found[0]}, the profile's "
                                  "global-memory latency Λ", f"from {found[0]}"))
    else:
        notes.append(DerivedValue("mem_lat", MISSING, "no global-memory latency in the profile "
                                  "(pipeline.memory.global_Lam/dram_Lam, an ld.global rule or units.ldst.lat_comm)",
                                  "no global-memory latency"))

    barrier: tuple[tuple[int, float], ...] = ((dev.warp_size, 0.0),)
    bar_rule = profile.rule_for("bar.sync")
    if bar_rule is not None or Unit.BARRIER in profile.units:
        cost = profile.cost_for_opcode("bar.sync", Unit.BARRIER)
        lam, Lam = cost.lam, cost.Lam
        where = f"the '{bar_rule.pattern.text}' rule" if bar_rule is not None else "units.barrier"
        if math.isfinite(lam) and math.isfinite(Lam):
            top = dev.max_threads_per_block
            warps = math.ceil(top / dev.warp_size)
            barrier = ((dev.warp_size, float(Lam)),)
            if top > dev.warp_size:
                barrier += ((top, float(Lam + (warps - 1) * lam)),)
            notes.append(DerivedValue(MISSING_BARRIER, DERIVED,
                                      f"from {where} (λ = {lam:g}, Λ = {Lam:g}): Λ + (warps − 1)·λ, "
                                      f"{Lam:g} cycles for one warp, {barrier[-1][1]:g} for {top} threads",
                                      f"from {where}'s λ/Λ"))
        else:
            notes.append(DerivedValue(MISSING_BARRIER, MISSING, f"{where} has no finite λ/Λ", "no finite λ/Λ"))
    else:
        notes.append(DerivedValue(MISSING_BARRIER, MISSING, "no bar.sync rule or [units.barrier] section "
                                  "to derive it from", "no bar.sync rule"))

    notes.append(DerivedValue("issue_cycle", ASSUMED, "1 cycle per warp instruction and scheduler, 000's "
                              "value on all its GPUs (pipeline.issue_limit is not used: it includes unit "
                              "throughput that the FU columns already charge)", "assumed, 000's value"))
    notes.append(DerivedValue("mu", PLACEHOLDER, "nothing in the profile defines μ and 000 gives no way to "
                              f"measure it; {MU_PLACEHOLDER:g} is the placeholder the measured h100/h200 profiles "
                              "use too (000's GPUs print 1.93 to 3.49)", "placeholder, nothing defines μ"))
    for key in ("block_lnch_ovh", "warp_lnch_ovh"):
        notes.append(DerivedValue(key, MISSING, "the profile has no [manybsp] section and no launch-overhead "
                                  "figure to derive it from: [pipeline] has none, 001 measures none",
                                  "no launch-overhead figure"))
    return ManyBspParams(
        mem_lat=mem_lat,
        mu=MU_PLACEHOLDER,
        block_lnch_ovh=0.0,
        warp_lnch_ovh=0.0,
        barrier_overhead=barrier,
        issue_cycle=1.0,
        source="derived: the profile has no [manybsp] section; each figure comes from its [pipeline], "
               "instruction and device figures or is marked assumed, placeholder or missing",
        derivation=tuple(notes),
    )


def manybsp_derivation_line(profile: Profile) -> str:
    """One line naming every Many-BSP figure the profile does not state, with its provenance
    ('' for a profile with a [manybsp] section): the warning the front ends print."""
    figures = manybsp_figures(profile)
    if not figures.is_derived:
        return ""
    values = {"mem_lat": figures.mem_lat, "issue_cycle": figures.issue_cycle, "mu": figures.mu}
    shown = [f"{d.key}{f' = {values[d.key]:g}' if d.key in values else ''} ({d.origin})"
             for d in figures.derivation if d.kind != MISSING]
    missing = [f"{d.key} ({d.origin})" for d in figures.derivation if d.kind == MISSING]
    line = (f"Many-BSP parameters derived from the pipeline figures (profile {profile.name!r} has no "
            f"[manybsp] section): " + ", ".join(shown))
    if missing:
        line += f"; cannot be derived: {', '.join(missing)}"
    return line
