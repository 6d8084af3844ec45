"""DRAM latency under load: the simulation solved together with the DRAM bandwidth it draws.

(Under load: DRAM busy with the whole launch's traffic. The engine's other "loaded" is data a
kernel reads from memory, ``engine.analysis.loaded_data``. The profile keys ``dram_loaded*``, the
mechanism ``loaded_dram_latency`` and the JSON key ``loaded_dram`` keep their names: files and
command lines written with them go on working.)

A load that goes to DRAM waits longer when the rest of the GPU keeps DRAM busy (measured with
``k_loaded``, ``bench/micro``: on the H100 +78 cycles at 61 % of the peak bandwidth, +335 at 83 %,
+1,160 at 91 %). The profile's ``[pipeline.dram_loaded]`` curve gives that extra latency by the
share of peak bandwidth in use. The simulator models one SM, with every SM alike, so the launch's
share is its DRAM bytes over (simulated cycles × the GPU's peak bytes per cycle). The share
depends on the time and the time on the latency. The curve was measured as a whole latency, and
part of it, the wait in front of a busy memory pipe, the simulation already has (its queue q, the
mean wait of the DRAM-bound requests, operands ready). The extra latency x solves

    x = curve(bytes / (T(x) · peak)) − q(x)

where T(x) is the simulated time with every DRAM-bound request ``dram_wait`` · x later. The right
side falls as x grows (a longer time draws a smaller share; the queue shrinks by less than x
grows), so there is one solution, between 0 and its value at x = 0. T is far from straight in x
(flat while bandwidth binds, then rising with the latency), so the bracket is shrunk by regula
falsi with the Illinois rule, to a hundredth of the load's latency: 2-8 simulations. A launch
that barely uses DRAM (less than a cycle of extra latency) keeps its first simulation.

Scattered fetches (a gather: one sector per 64-byte DRAM read) load DRAM far sooner: measured
beside gathering warps (``[pipeline.dram_loaded_scattered]``), the H100's DRAM saturates at 61 %
of the streaming peak, with loads waiting 2,150 cycles more there (the curve ends at that
saturation; more requests in flight only queue). A launch whose DRAM reads are partly scattered
reads both curves, weighted by the scattered share of its DRAM bytes.

Writes load DRAM sooner too: beside streams that write a third of their bytes (y = a·x + y) or
half (a copy), a read waits longer at the same bandwidth than beside reads alone (H100 at 2.2 TB/s:
+130 cycles beside reads, +330 beside a third written, +510 beside half), and DRAM saturates
lower (3.6, 3.1 and 2.9 TB/s). ``[[pipeline.dram_loaded_mixed]]`` holds those curves; a launch's
streaming part reads them at its share of bytes written, straight between the neighbouring
measured shares (0: the reading curve), and at the largest measured share beyond it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from engine.mechanisms import enabled
from engine.pipeline.description import KernelDescription
from engine.pipeline.simulator import SimulationResult, simulate

# Below this many cycles of extra latency a further simulation changes nothing worth its time.
TOLERANCE_CYCLES = 1.0
MAX_SIMULATIONS = 8          # the bound on one solve; most take 3-6
LINE_BYTES = 128.0    # the profile's dram_lam is SM cycles per 128-byte warp request


@dataclass(frozen=True)
class DramUnderLoad:
    """How busy DRAM was in the simulation the prediction comes from."""

    bandwidth_share: float     # DRAM bytes / (simulated SM cycles x the GPU's peak bytes per cycle)
    extra_cycles: float        # cycles added to DRAM's latency (the curve at that share, less the queue)
    simulations: int           # simulations the solve ran (1-8; a traced answer may take one more)
    scattered_share: float = 0.0   # of the DRAM bytes: scattered fetches (read on the scattered curve)
    written_share: float = 0.0     # of the DRAM bytes: written (the curves beside writing streams)

    def describe(self) -> str:
        text = f"DRAM at {100 * self.bandwidth_share:.0f} % of its peak bandwidth"
        parts = []
        if self.scattered_share >= 0.05:
            parts.append(f"{100 * self.scattered_share:.0f} % of its bytes scattered fetches")
        if self.written_share >= 0.05:
            parts.append(f"{100 * self.written_share:.0f} % written")
        if parts:
            text += f" ({'; '.join(parts)})"
        if self.extra_cycles >= TOLERANCE_CYCLES:
            text += f": loads wait {self.extra_cycles:,.0f} cycles more (latency under load)"
        return text

    def to_json(self) -> dict[str, float | int]:
        return {"bandwidth_share": self.bandwidth_share, "extra_dram_latency_cycles": self.extra_cycles,
                "simulations": self.simulations, "scattered_share": self.scattered_share,
                "written_share": self.written_share}


def extra_latency(curve: Sequence[tuple[float, float]], share: float) -> float:
    """Cycles the curve adds at ``share`` of the peak bandwidth (straight lines between its
    points; a share beyond 1, which the simulator's own bandwidth limit prevents, reads as 1)."""
    if not curve:
        return 0.0
    share = min(max(share, 0.0), 1.0)
    for (u0, x0), (u1, x1) in zip(curve, curve[1:], strict=False):
        if share <= u1:
            return x0 + (x1 - x0) * (share - u0) / (u1 - u0)
    return curve[-1][1]


def curve_for_writes(reading: Sequence[tuple[float, float]],
                     mixed: Sequence[tuple[float, Sequence[tuple[float, float]]]],
                     written: float) -> Callable[[float], float]:
    """The extra latency at a bandwidth share beside streams that write ``written`` of their
    bytes: the reading curve at 0, each measured mixed curve at its share written, straight
    lines between neighbours, the last measured curve beyond it."""
    anchors = [(0.0, reading), *mixed]
    written = min(max(written, 0.0), 1.0)
    for (w0, c0), (w1, c1) in zip(anchors, anchors[1:], strict=False):
        if written <= w1:
            t = (written - w0) / (w1 - w0)
            return lambda share: (1.0 - t) * extra_latency(c0, share) + t * extra_latency(c1, share)
    last = anchors[-1][1]
    return lambda share: extra_latency(last, share)


def peak_dram_bytes_per_cycle(profile: Any) -> float | None:
    """The GPU's DRAM bytes per SM cycle at the profile's measured rate (every SM streaming), or
    None when the profile has no DRAM rate."""
    memory = getattr(getattr(profile, "pipeline", None), "memory", {}) or {}
    lam = memory.get("dram_lam")
    sms = getattr(getattr(profile, "device", None), "sm_count", 0) or 0
    if not lam or lam <= 0 or sms <= 0:
        return None
    return LINE_BYTES / float(lam) * sms


def queue_cycles(d: KernelDescription, sim: SimulationResult) -> float:
    """Mean cycles a DRAM-bound request of ``sim`` waited, operands ready, for its busy memory
    pipeline: the part of the latency under load the simulation already has (weighted by how
    many of each instruction's requests go to DRAM)."""
    queue = sim.aggregates.average_queue
    if queue is None:
        return 0.0
    weight = total = 0.0
    for i, ins in enumerate(d.instructions):
        if ins.dram_wait > 0:
            w = ins.dram_wait * float(sim.aggregates.issue_count[i])
            weight += w
            total += w * float(queue[i])
    return total / weight if weight > 0 else 0.0


def simulate_under_dram_load(d: KernelDescription, dram_bytes: float | None, profile: Any, *, policy: str = "lrr",
                    trace: bool = False, cycle_budget: float | None = None, scattered_bytes: float = 0.0,
                    written_bytes: float = 0.0) -> tuple[SimulationResult, DramUnderLoad | None]:
    """Simulate ``d`` with DRAM's latency at the load the launch puts on it. ``dram_bytes``: the
    launch's DRAM bytes read and written, ``scattered_bytes`` the part of them that scattered
    fetches read, ``written_bytes`` the part written (``KernelTraffic``). Every simulation is bounded and
    cancellable as :func:`simulate` is. The second item is None where no share can be computed
    (no traffic figure, no measured curve, the mechanism off, a run stopped at its budget)."""

    def run(x: float, with_trace: bool = False) -> SimulationResult:
        return simulate(d.with_dram_delay(x), policy=policy, trace=with_trace, cycle_budget=cycle_budget)

    def traced(sim: SimulationResult, x: float) -> SimulationResult:
        # the solve's runs keep no trace (the live chart waits on them): the answer's run, once
        return run(x, True) if trace and sim.trace is None else sim

    first = run(0.0, trace)     # most launches need no second run: keep its trace
    curve = getattr(getattr(profile, "pipeline", None), "dram_loaded", ())
    peak = peak_dram_bytes_per_cycle(profile)
    if (not enabled("loaded_dram_latency") or not curve or peak is None or not dram_bytes or dram_bytes <= 0
            or first.cycles <= 0 or first.stopped_early or not any(ins.dram_wait > 0 for ins in d.instructions)):
        return first, None

    scattered_curve = getattr(profile.pipeline, "dram_loaded_scattered", ())
    mix = 0.0
    if scattered_curve and enabled("scattered_dram_load"):
        mix = min(1.0, max(0.0, scattered_bytes / dram_bytes))

    written = 0.0
    mixed_curves = getattr(profile.pipeline, "dram_loaded_mixed", ())
    if mixed_curves and enabled("mixed_dram_load"):
        written = min(1.0, max(0.0, written_bytes / dram_bytes))
    # nothing written (or the mechanism off) reads the reading curve alone, to the last bit
    streaming = curve_for_writes(curve, mixed_curves, written)

    def share_of(sim: SimulationResult) -> float:
        return dram_bytes / (float(sim.cycles) * peak)

    def measured(share: float) -> float:
        # mix 0 (or no scattered curve) reads the streaming curve alone, to the last bit
        return (1.0 - mix) * streaming(share) + mix * extra_latency(scattered_curve, share)

    def gap(x: float, sim: SimulationResult) -> float:
        # the measured latency under load, less what the run gave: x and its own queue
        return measured(share_of(sim)) - queue_cycles(d, sim) - x

    def answer(sim: SimulationResult, x: float, runs: int) -> DramUnderLoad:
        return DramUnderLoad(share_of(sim), x, runs, mix, written)

    upper = gap(0.0, first)
    if upper < TOLERANCE_CYCLES:
        return first, answer(first, 0.0, 1)
    # How close x must come: a hundredth of the latency a DRAM load then has, which moves a
    # latency-bound time by about a hundredth.
    idle = float(getattr(profile.pipeline, "memory", {}).get("dram_Lam", 0.0))

    def close(x: float, g: float) -> bool:
        return abs(g) <= max(TOLERANCE_CYCLES, 0.01 * (idle + x))

    # gap(x) falls from gap(0) = upper > 0: a later answer lowers the share (and the queue, but
    # less than it adds). The time is far from straight in x (flat while bandwidth binds, then
    # rising with the latency), so the root is bracketed and the bracket shrunk by regula falsi,
    # halving the kept end's gap when one end stays twice in a row (the Illinois rule), which
    # keeps a bent curve from stalling one end. An upper end that does not bracket is the answer.
    lo, g_lo = 0.0, upper
    hi = x = upper
    sim = run(hi)
    runs = 2
    g_hi = gap(hi, sim)
    kept = 0
    if g_hi >= 0 or close(hi, g_hi):
        return traced(sim, hi), answer(sim, hi, runs)
    while runs < MAX_SIMULATIONS:
        x = (lo * g_hi - hi * g_lo) / (g_hi - g_lo)
        sim = run(x)
        runs += 1
        g = gap(x, sim)
        if close(x, g):
            break
        if g > 0:
            lo, g_lo = x, g
            g_hi = g_hi / 2 if kept == 1 else g_hi
            kept = 1
        else:
            hi, g_hi = x, g
            g_lo = g_lo / 2 if kept == -1 else g_lo
            kept = -1
    return traced(sim, x), answer(sim, x, runs)


def simulate_with_traffic(d: KernelDescription, traffic: Any, profile: Any, *, policy: str = "lrr",
                          trace: bool = False, cycle_budget: float | None = None,
                          ) -> tuple[SimulationResult, DramUnderLoad | None]:
    """:func:`simulate_under_dram_load` with the launch's DRAM figures read from its ``KernelTraffic``
    (bytes read and written, the part scattered fetches read, the part written); None: no
    traffic figure, so no DRAM load either."""
    if traffic is None:
        return simulate_under_dram_load(d, None, profile, policy=policy, trace=trace, cycle_budget=cycle_budget)
    return simulate_under_dram_load(d, traffic.dram_read_bytes + traffic.dram_write_bytes, profile, policy=policy,
                           trace=trace, cycle_budget=cycle_budget, scattered_bytes=traffic.dram_scattered_bytes,
                           written_bytes=traffic.dram_write_bytes)
