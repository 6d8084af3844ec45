"""Reference Pipeline-model simulator, written only for the tests.

Deliberately plain: exact ``Fraction`` times (no ticks), every warp's instruction list
materialised, a heap of candidate event times, and every warp examined at every event. It shares
no code with ``engine.pipeline`` beyond reading the description, so agreement is evidence.

Rules (the same as docs/pipeline.md states for the engine):
* at time t, one *round* visits the resident warps in policy order and issues every warp whose
  next instruction has its producers completed, whose previous issue was at least the warp issue
  interval ago, whose subsystem is free, while fewer than IL instructions issued in cycle floor(t);
* LRR visits slots from the one after the last issuing slot; GTO visits the last issuing warp
  first, then blocks from oldest to youngest, warps in index order;
* barriers release at the latest completion of the block's barrier instruction; a block retires at
  its warps' last completion, its successor starts a launch overhead later (launched at the start
  of the next round, in retirement order, and it is then the youngest);
* rounds repeat at the same time while some warp could still issue;
* with schedulers bound (``schedulers`` > 1), a subsystem of ``scheduler_subsystems`` is one pipe
  per scheduler, each busy ``schedulers`` x lambda per instruction; the others are the SM's;
* an instruction with memory-level times (``level_lam``: L2, DRAM) takes each level from its
  issue or when the level is free, whichever is later, for that time; its result comes its
  latency after its issue plus the longest such wait;
* asynchronous copies (``async_op``): a copy's completion joins its warp's open group, a commit
  closes the group (more than eight pending: the two oldest become one), a wait completes no
  earlier than every group but the newest ``async_n`` (wait_all: the open one too).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from fractions import Fraction

from engine.errors import SimulationError
from engine.pipeline.description import KernelDescription, Loop, Run


def expand_slots(nodes, ins_deps: dict[int, tuple[int, ...]]) -> list[tuple[int, int, tuple[int, ...]]]:
    """(instruction, completion slot it writes, slots it waits for) per executed position."""
    out: list[tuple[int, int, tuple[int, ...]]] = []
    for node in nodes:
        if isinstance(node, Run):
            if node.renamed is None:
                out.extend((i, i, ins_deps.get(i, ())) for i in node.instructions)
            else:
                out.extend((i, w, r) for i, (w, r) in zip(node.instructions, node.renamed, strict=True))
        else:
            assert isinstance(node, Loop)
            body = expand_slots(node.body, ins_deps)
            out.extend(body * node.count)
    return out


@dataclass(eq=False)
class _Warp:
    gid: int
    program: list[tuple[int, int, tuple[int, ...]]]
    pc: int = 0
    gap: Fraction = Fraction(0)
    ready: Fraction = Fraction(0)
    at_barrier: bool = False
    done: bool = False
    last_complete: Fraction = Fraction(0)
    latest: dict[int, Fraction] = field(default_factory=dict)
    open_group: Fraction = Fraction(0)
    groups: list[Fraction] = field(default_factory=list)

    def earliest(self) -> Fraction:
        return max(self.gap, self.ready)


@dataclass
class OracleResult:
    cycles: Fraction
    issues: dict[int, list[tuple[int, Fraction]]]  # warp -> [(instr, issue time)]


def _copy_groups(w: _Warp, op: int, pending: int, complete: Fraction) -> Fraction:
    if op == 1:
        w.open_group = max(w.open_group, complete)
        return complete
    if op in (2, 4):
        w.groups.append(w.open_group)
        w.open_group = Fraction(0)
        if len(w.groups) > 8:
            w.groups[0:2] = [max(w.groups[0], w.groups[1])]
    if op in (3, 4):
        keep = pending if op == 3 else 0
        while len(w.groups) > keep:
            complete = max(complete, w.groups.pop(0))
    return complete


def run_oracle(d: KernelDescription, policy: str = "lrr") -> OracleResult:
    ins = d.instructions
    wpb = d.warps_per_block
    gamma = min(d.resident_blocks, d.blocks)
    deps = {i: x.deps for i, x in enumerate(ins)}
    programs = [expand_slots(p, deps) for p in d.paths]
    il = d.issue_limit
    nsched = d.schedulers if il is not None else 1
    per_sched = il // nsched if il is not None else None
    sched_count = [0] * nsched     # each scheduler's issues this cycle
    rotation = [0] * gamma         # per block slot: its block's number mod nsched

    def scheduler(s: int) -> int:
        """Slot mod nsched; a block of a multiple of nsched warps is rotated by its number."""
        if wpb % nsched:
            return s % nsched
        return (s % wpb + rotation[s // wpb]) % nsched
    # a subsystem each scheduler has its own copy of: one pipe per scheduler, at 1/nsched of
    # the SM's rate (busy nsched x lambda per instruction)
    own = [nsched > 1 and name in d.scheduler_subsystems for name in d.subsystems]

    def pipe(s: int, u: int) -> tuple[int, int]:
        return (u, scheduler(s)) if own[u] else (u, 0)

    sub_free: dict[tuple[int, int], Fraction] = {}
    level_free = [Fraction(0), Fraction(0)]
    slots: list[_Warp | None] = [None] * (gamma * wpb)
    age = list(range(gamma))           # block slots, oldest first
    queue = list(range(gamma))         # block slots waiting for a block
    start_of = [d.block_launch_overhead] * gamma
    launcher_free = Fraction(0)        # one block start at a time, block_launch_interval apart
    arrived = [0] * gamma
    bar_max = [Fraction(0)] * gamma
    finished = [0] * gamma
    next_block = 0
    issues: dict[int, list[tuple[int, Fraction]]] = {}
    end = Fraction(0)
    rr = 0
    greedy: _Warp | None = None
    cycle = -1
    count = 0
    events: list[Fraction] = [Fraction(0)]
    t = Fraction(0)

    def fetch(w: _Warp, base: Fraction) -> None:
        """Called after w issued (or was released): compute when its next instruction is ready."""
        w.ready = base
        if w.pc < len(w.program):
            for p in w.program[w.pc][2]:
                w.ready = max(w.ready, w.latest.get(p, Fraction(0)))

    while True:
        t = heapq.heappop(events)
        while events and events[0] == t:
            heapq.heappop(events)
        # launches
        for b in queue:
            if next_block >= d.blocks:
                continue
            arrived[b] = 0
            bar_max[b] = Fraction(0)
            finished[b] = 0
            start = start_of[b]
            if d.block_launch_interval > 0:
                start = max(start, launcher_free)
                launcher_free = start + d.block_launch_interval
            rotation[b] = next_block % nsched
            for wi in range(wpb):
                gid = next_block * wpb + wi
                w = _Warp(gid=gid, program=programs[d.path_of_warp(wi)])
                w.gap = start + wi * d.warp_launch_overhead
                issues[gid] = []
                slots[b * wpb + wi] = w
            next_block += 1
        queue = []
        while True:  # rounds at time t
            if math.floor(t) != cycle:
                cycle = math.floor(t)
                count = 0
                sched_count = [0] * nsched
            if policy == "lrr":
                order = [(rr + k) % len(slots) for k in range(len(slots))]
            else:
                order = []
                if greedy is not None and not greedy.done and any(x is greedy for x in slots):
                    order.append(next(k for k, x in enumerate(slots) if x is greedy))
                for b in list(age):
                    for wi in range(wpb):
                        s = b * wpb + wi
                        if s not in order:
                            order.append(s)
            first = last = None
            for s in order:
                if il is not None and count >= il:
                    break
                w = slots[s]
                if w is None or w.done or w.at_barrier or w.earliest() > t:
                    continue
                i, slot, _ = w.program[w.pc]
                u = ins[i].unit
                if sub_free.get(pipe(s, u), Fraction(0)) > t:
                    continue
                if per_sched is not None and sched_count[scheduler(s)] >= per_sched:
                    continue              # its scheduler has issued its share of this cycle
                # issue
                count += 1
                sched_count[scheduler(s)] += 1
                sub_free[pipe(s, u)] = t + ins[i].lam * (nsched if own[u] else 1)
                wait = Fraction(0)
                for q, busy in enumerate(ins[i].level_lam):
                    if busy > 0:
                        start = max(t, level_free[q])
                        level_free[q] = start + Fraction(busy)
                        wait = max(wait, start - t)
                complete = _copy_groups(w, ins[i].async_op, ins[i].async_n, t + ins[i].Lam + wait)
                end = max(end, complete)
                issues[w.gid].append((i, t))
                w.latest[slot] = complete
                w.last_complete = max(w.last_complete, complete)
                w.gap = t + max(d.warp_issue_interval, Fraction(ins[i].issue_gap).limit_denominator(10**6))
                w.pc += 1
                first = s if first is None else first
                last = s
                b = s // wpb
                block = [slots[b * wpb + k] for k in range(wpb)]
                if ins[i].barrier:
                    w.at_barrier = True
                    arrived[b] += 1
                    bar_max[b] = max(bar_max[b], complete)
                    if arrived[b] == wpb:
                        release = bar_max[b]
                        arrived[b] = 0
                        bar_max[b] = Fraction(0)
                        released = block
                    elif arrived[b] + finished[b] == wpb:
                        raise SimulationError("barrier deadlock")
                    else:
                        released = []
                else:
                    release = Fraction(0)
                    released = [w]
                for x in released:
                    x.at_barrier = False
                    if x.pc >= len(x.program):
                        x.done = True
                        finished[b] += 1
                        if arrived[b] > 0 and arrived[b] + finished[b] == wpb:
                            raise SimulationError("barrier deadlock")
                        if finished[b] == wpb:
                            start_of[b] = max(y.last_complete for y in block) + d.block_launch_overhead
                            age.remove(b)
                            age.append(b)
                            queue.append(b)
                    else:
                        fetch(x, release)
            if policy == "gto" and first is not None:
                greedy = slots[first]
            if policy == "lrr" and last is not None:
                rr = (last + 1) % len(slots)
            # next events
            full = il is not None and count >= il
            again = False
            for s, w in enumerate(slots):
                if w is None or w.done or w.at_barrier:
                    continue
                e = max(w.earliest(), sub_free.get(pipe(s, ins[w.program[w.pc][0]].unit), Fraction(0)))
                mine_full = per_sched is not None and sched_count[scheduler(s)] >= per_sched
                if (full or mine_full) and e < cycle + 1:
                    e = Fraction(cycle + 1)
                if e <= t:
                    again = True
                else:
                    heapq.heappush(events, e)
            if again and queue:
                heapq.heappush(events, t)  # launch first, then another round at t
            if not again or queue:
                break
        for b in queue:
            if next_block < d.blocks:
                heapq.heappush(events, max(start_of[b], t))
        if not events:
            if next_block < d.blocks or any(w is not None and not w.done for w in slots):
                raise SimulationError("stuck")
            break
    return OracleResult(cycles=end, issues=issues)
