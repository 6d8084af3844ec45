"""The bottleneck verdict: what limits a kernel, in one sentence, with the figures behind it.

Everything here is read from the Pipeline simulator's aggregates (``SimulationResult.aggregates``),
which the simulator counts whether or not it keeps a trace:

* every subsystem's busy cycles and utilisation (busy / run cycles);
* warp-cycles per stall cause. Each warp exists for the whole run and in each cycle it either
  issues (one warp-cycle per issued instruction), waits for a cause, is not yet resident or has
  finished, so ``issued + Σ stalls = warps × cycles``. Shares below are of the *resident*
  warp-cycles (issuing or waiting), the time in which a warp could have made progress;
* the memory analysis (global sectors per request, shared-memory bank conflicts) for the memory
  levels, with the warp requests the simulation issued to each.

The window's Bottleneck tab, ``predict --explain`` (text and JSON) read :func:`explain`; nothing
else computes a verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.pipeline.trace import STALL_CAUSES
from engine.timeline.labels import subsystem_label

# Causes a warp cannot act on while it waits: before it is resident and after it finished.
OUTSIDE = ("not_resident", "finished")
ISSUING = "issuing"
# A subsystem busy this share of the run is the limit whatever the warps wait for.
SATURATED = 0.8
CAUSE_TITLES = {
    ISSUING: "issuing",
    "memory_dependency": "waiting for memory results",
    "compute_dependency": "waiting for arithmetic results",
    "barrier": "waiting at a barrier",
    "subsystem_busy": "waiting for a busy unit",
    "issue_limit": "ready, waiting for an issue slot",
    "not_resident": "not yet resident",
    "finished": "finished",
}


@dataclass(frozen=True)
class UnitUse:
    name: str                # the simulator's subsystem name
    title: str               # what the window calls it
    busy_cycles: float
    utilisation: float       # busy / run cycles


@dataclass(frozen=True)
class CauseShare:
    cause: str               # a STALL_CAUSES name, or "issuing"
    title: str
    warp_cycles: float
    share: float             # of the resident warp-cycles (0 for the causes outside residency)


@dataclass(frozen=True)
class MemoryLevel:
    level: str               # "global" | "shared"
    accesses: int            # static instructions of that space
    requests: int            # warp requests the simulation issued to it
    sectors_per_request: float | None = None    # global: mean 32-byte sectors per request
    efficiency: float | None = None             # global: useful / fetched bytes
    bank_conflict_degree: float | None = None   # shared: mean ways of a conflict (1 = none)

    def details(self) -> list[str]:
        """What the analysis says of the level's requests, one phrase each."""
        out = []
        if self.sectors_per_request is not None:
            out.append(f"{self.sectors_per_request:.2f} sectors/request")
        if self.efficiency is not None:
            out.append(f"{self.efficiency:.0%} of fetched bytes used")
        if self.bank_conflict_degree is not None:
            out.append(f"{self.bank_conflict_degree:.2f}-way bank conflicts")
        return out


@dataclass(frozen=True)
class Verdict:
    limiter: str             # a short key: "unit:<name>", a stall cause, or "issue"
    sentence: str
    evidence: list[str]
    cycles: float
    warps: int
    resident_warp_cycles: float
    units: list[UnitUse]
    causes: list[CauseShare]
    memory: list[MemoryLevel] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "limiter": self.limiter, "verdict": self.sentence, "evidence": list(self.evidence),
            "cycles": self.cycles, "warps": self.warps, "resident_warp_cycles": self.resident_warp_cycles,
            "subsystems": [{"name": u.name, "title": u.title, "busy_cycles": u.busy_cycles,
                            "utilisation": u.utilisation} for u in self.units],
            "warp_cycles": [{"cause": c.cause, "title": c.title, "warp_cycles": c.warp_cycles,
                             "share": c.share} for c in self.causes],
            "memory": [{"level": m.level, "accesses": m.accesses, "requests": m.requests,
                        "sectors_per_request": m.sectors_per_request, "efficiency": m.efficiency,
                        "bank_conflict_degree": m.bank_conflict_degree} for m in self.memory],
        }

    def text(self) -> str:
        lines = [f"Bottleneck: {self.sentence}"]
        lines += [f"  - {e}" for e in self.evidence]
        lines.append("  subsystem            busy cycles  utilisation")
        lines += [f"  {u.title:<20} {u.busy_cycles:>11,.1f}  {u.utilisation:>10.1%}" for u in self.units]
        lines.append("  warp-cycles (share of resident)")
        for c in self.causes:
            share = f"{c.share:>6.1%}" if c.cause not in OUTSIDE else "     —"
            lines.append(f"  {c.title:<46} {c.warp_cycles:>12,.1f}  {share}")
        for m in self.memory:
            extra = m.details()
            lines.append(f"  {m.level} memory: {m.accesses} instructions, {m.requests:,} warp requests"
                         + (f", {', '.join(extra)}" if extra else ""))
        return "\n".join(lines)


def explain(evaluation: Any) -> Verdict | None:
    """The verdict of an evaluation (``engine.evaluation.Evaluation``); None without a simulation."""
    sim = getattr(evaluation, "simulation", None)
    if sim is None:
        return None
    verdict = verdict_from(sim, getattr(evaluation, "memory", None))
    traffic = getattr(evaluation, "traffic", None)
    if traffic is not None:
        verdict.evidence.append(traffic.summary())
    return verdict


def verdict_from(sim: Any, memory: Any = None) -> Verdict:
    """The verdict from a ``SimulationResult`` (and the memory report, for the memory levels)."""
    agg = sim.aggregates
    cycles = float(sim.cycles)
    units = [UnitUse(name, subsystem_label(name), float(agg.unit_busy_cycles.get(name, 0.0)),
                     float(agg.utilisation.get(name, 0.0))) for name in agg.utilisation]
    issued = float(sim.instructions_issued)
    stalls = {c: float(agg.stall_cycles.get(c, 0.0)) for c in STALL_CAUSES}
    resident = issued + sum(v for c, v in stalls.items() if c not in OUTSIDE)
    total = resident + sum(stalls[c] for c in OUTSIDE)
    warps = round(total / cycles) if cycles > 0 else 0

    def share(v: float) -> float:
        return v / resident if resident > 0 else 0.0

    causes = [CauseShare(ISSUING, CAUSE_TITLES[ISSUING], issued, share(issued))]
    causes += [CauseShare(c, CAUSE_TITLES.get(c, c.replace("_", " ")), v, 0.0 if c in OUTSIDE else share(v))
               for c, v in stalls.items()]
    levels = _memory_levels(agg, memory)
    limiter, sentence, evidence = _judge(units, causes, levels, cycles)
    return Verdict(limiter, sentence, evidence, cycles, warps, resident, units, causes, levels)


def _memory_levels(agg: Any, memory: Any) -> list[MemoryLevel]:
    if memory is None:
        return []
    counts = agg.issue_count
    out = []
    for level in ("global", "shared"):
        acc = [a for a in memory.accesses if str(getattr(a.space, "value", a.space)).lower() == level]
        if not acc:
            continue
        requests = int(sum(int(counts[a.index]) for a in acc if 0 <= a.index < len(counts)))

        def mean(attr: str, accesses: list = acc) -> float | None:
            # per request, as Nsight Compute's sectors per request: each access weighs what the
            # simulated warps issued of it (evenly where none of them issued any)
            known = [(float(getattr(a, attr)), float(counts[a.index]) if 0 <= a.index < len(counts) else 0.0)
                     for a in accesses if getattr(a, attr) is not None]
            if not known:
                return None
            weight = sum(w for _, w in known)
            if weight <= 0:
                return sum(v for v, _ in known) / len(known)
            return sum(v * w for v, w in known) / weight

        if level == "global":
            out.append(MemoryLevel(level, len(acc), requests, mean("sectors_per_request"), mean("efficiency")))
        else:
            out.append(MemoryLevel(level, len(acc), requests, bank_conflict_degree=mean("bank_conflict_mean")))
    return out


def _judge(units: list[UnitUse], causes: list[CauseShare], levels: list[MemoryLevel],
           cycles: float) -> tuple[str, str, list[str]]:
    """The limiter, its sentence and the evidence, from the shares above."""
    by_cause = {c.cause: c for c in causes}
    busiest = max(units, key=lambda u: u.utilisation, default=None)
    waits = [c for c in causes if c.cause not in OUTSIDE and c.cause != ISSUING]
    top = max(waits, key=lambda c: c.share, default=None)
    evidence = []
    if busiest is not None:
        evidence.append(f"busiest unit: {busiest.title}, {busiest.utilisation:.0%} of {cycles:,.0f} cycles")
    if top is not None:
        evidence.append(f"largest wait: {top.title}, {top.share:.0%} of the resident warp-cycles")
    evidence.append(f"issuing: {by_cause[ISSUING].share:.0%} of the resident warp-cycles")
    glob = next((m for m in levels if m.level == "global"), None)
    if glob is not None and glob.sectors_per_request is not None:
        evidence.append(f"global accesses fetch {glob.sectors_per_request:.1f} sectors per request"
                        + (f" ({glob.efficiency:.0%} of the bytes used)" if glob.efficiency is not None else ""))

    if busiest is not None and busiest.utilisation >= SATURATED:
        return (f"unit:{busiest.name}",
                f"The {busiest.title} unit limits this kernel: it is busy {busiest.utilisation:.0%} of the run"
                + (f", and warps spend {top.share:.0%} of their time {top.title}." if top is not None else "."),
                evidence)
    if top is None or top.share < by_cause[ISSUING].share:
        return ("issue", "Instruction issue limits this kernel: warps issue more often than they wait "
                f"({by_cause[ISSUING].share:.0%} of their resident time).", evidence)
    what = {
        "memory_dependency": "memory latency limits this kernel: warps mostly wait for loads to return",
        "compute_dependency": "arithmetic latency limits this kernel: warps mostly wait for dependent "
                              "results",
        "barrier": "synchronisation limits this kernel: warps mostly wait at barriers",
        "subsystem_busy": f"the {busiest.title if busiest else 'busiest'} unit's throughput limits this "
                          "kernel: warps mostly wait for a busy unit",
        "issue_limit": "the schedulers' issue rate limits this kernel: ready warps mostly wait for an "
                       "issue slot",
    }.get(top.cause, f"{top.title} limits this kernel")
    return top.cause, f"{what[0].upper()}{what[1:]} ({top.share:.0%} of their resident time).", evidence
