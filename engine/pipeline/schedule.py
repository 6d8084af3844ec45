"""Issue order inside a basic block: the order ptxas would give the PTX, not the order it was written.

The simulator issues each warp's instructions in order, so a load written just before its first
use stalls the warp for the whole memory latency, while ptxas's scheduler moves independent loads
up to the top of their block and so keeps several in flight (a four-times-unrolled sum of loads
runs four loads per latency, not one). This module reorders a block the same way: a list schedule
that keeps every ordering the program needs and, among the instructions free to go, issues the
one with the longest latency path to the end of the block first (ties keep the written order).

Orderings kept (one pass in program order, linear in the block's size):
* registers: read after write, write after read, write after write (predicates included); for
  the copies of a loop body that ptxas unrolled, the same orderings of completion slots instead
  (each copy has registers of its own, so only true dependences and the slots shared with the
  next pass order them);
* memory: a store, atomic or reduction stays after every earlier access of the block that may
  touch the same memory and before every later one; a load stays after the last earlier such
  store unless it reads memory no store of the kernel can change (``ld.global.nc``,
  ``ld.const``, ``ld.param``, textures). PTX's state spaces are disjoint windows, so a shared
  store does not order a global load (ptxas hoists the loads of a tile staged in shared memory
  above its ``STS``); a generic access may touch global, shared or local memory;
* fences: barriers, memory fences, warp-synchronous operations (shuffles, votes, matrix
  operations), calls and control flow stay in place with everything before before them and
  everything after after them.
Reordering within those rules keeps the value every consumer reads, so the simulator's
"latest executed instance of each producer" rule still names the right instance.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

_READ_ONLY_SPACES = frozenset({"const", "param", "nc"})
_FENCE_OPCODES = frozenset({
    "bar", "barrier", "membar", "fence", "bra", "brx", "ret", "exit", "call", "trap", "brkpt",
    "shfl", "vote", "match", "redux", "activemask", "wmma", "mma", "wgmma", "ldmatrix", "stmatrix",
    "mbarrier", "cp", "griddepcontrol", "elect", "setmaxnreg", "nanosleep", "pmevent",
})


def _is_fence(instr: Any, cls: Any) -> bool:
    return instr.opcode in _FENCE_OPCODES or cls.is_barrier or cls.is_branch


# PTX's state spaces are distinct windows; a generic address may fall in any a store can write
_GENERIC_WINDOWS = ("global", "shared", "local", "generic")


def _spaces_touched(cls: Any) -> tuple[str, ...]:
    """The spaces whose stores an access of ``cls`` must stay ordered with."""
    space = cls.space.value
    return _GENERIC_WINDOWS if space == "generic" else (space, "generic")


def _is_read_only_load(instr: Any, cls: Any) -> bool:
    if cls.space.value in ("tex", "const", "param"):
        return True
    return any(m in _READ_ONLY_SPACES for m in instr.modifiers)


def block_issue_order(instructions: Sequence[Any], classifications: Sequence[Any],
                      latencies: Sequence[float], start: int, end: int,
                      sass: Sequence[float | None] | None = None) -> tuple[int, ...]:
    """The instruction indices ``start..end-1`` in the order a latency-driven scheduler issues
    them. ``latencies`` are the Λ of every instruction of the kernel (indexed like it); ``sass``:
    see :func:`issue_positions`."""
    positions = issue_positions(instructions, classifications, latencies, tuple(range(start, end)), sass=sass)
    return tuple(start + k for k in positions)


def issue_positions(instructions: Sequence[Any], classifications: Sequence[Any],
                    latencies: Sequence[float], sequence: Sequence[int],
                    renamed: Sequence[tuple[int, tuple[int, ...]]] | None = None,
                    sass: Sequence[float | None] | None = None) -> tuple[int, ...]:
    """The positions of ``sequence`` in the order a latency-driven scheduler issues them (an
    index may repeat: the copies of a loop body that ptxas unrolled, scheduled as one block).
    ``renamed`` (per position: the completion slot it writes, the slots it reads) replaces the
    register orderings by orderings of those slots, as for copies that ptxas gave registers of
    their own. ``sass`` (per position: where ptxas put the instruction in its SASS, None where
    it made none) makes ptxas's own order the priority instead of the latency path: among the
    instructions free to go, the one ptxas issues first goes first, and an instruction without
    SASS goes right after the one written before it."""
    n = len(sequence)
    if n <= 2:
        return tuple(range(n))
    preds: list[set[int]] = [set() for _ in range(n)]
    last_writer: dict[str, int] = {}
    readers: dict[str, list[int]] = {}
    # per state space: the last store-like access, and the accesses after it
    last_store: dict[str, int] = {}
    accesses_since_store: dict[str, list[int]] = {}
    last_fence: int | None = None
    since_fence: list[int] = []
    for k in range(n):
        i = sequence[k]
        instr, cls = instructions[i], classifications[i]
        p = preds[k]
        if renamed is None:
            reads: Sequence[Any] = instr.srcs
            writes: Sequence[Any] = instr.dests
        else:
            reads, writes = renamed[k][1], (renamed[k][0],)
        for reg in reads:
            if reg in last_writer:
                p.add(last_writer[reg])
        for reg in writes:
            if reg in last_writer:
                p.add(last_writer[reg])
            p.update(readers.get(reg, ()))
        if _is_fence(instr, cls):
            p.update(since_fence)
            if last_fence is not None:
                p.add(last_fence)
            last_fence, since_fence = k, []
        else:
            if last_fence is not None:
                p.add(last_fence)
            since_fence.append(k)
        if cls.is_memory and not _is_fence(instr, cls):
            touched = _spaces_touched(cls)
            if cls.is_store or cls.is_atomic:
                for space in touched:
                    p.update(accesses_since_store.get(space, ()))
                    if space in last_store:
                        p.add(last_store[space])
                own = cls.space.value
                last_store[own], accesses_since_store[own] = k, []
            else:
                if not _is_read_only_load(instr, cls):
                    p.update(last_store[space] for space in touched if space in last_store)
                accesses_since_store.setdefault(cls.space.value, []).append(k)
        for reg in reads:
            readers.setdefault(reg, []).append(k)
        for reg in writes:
            last_writer[reg] = k
            readers[reg] = []
        p.discard(k)
    succs: list[list[int]] = [[] for _ in range(n)]
    for k, p in enumerate(preds):
        for q in p:
            succs[q].append(k)
    # height: the longest latency path from an instruction to the end of the block
    height = [0.0] * n
    for k in range(n - 1, -1, -1):
        below = max((height[s] for s in succs[k]), default=0.0)
        height[k] = float(latencies[sequence[k]]) + below
    if sass is not None and any(x is not None for x in sass):
        priority, known = [], -1.0
        for k in range(n):
            known = float(sass[k]) if sass[k] is not None else known
            priority.append(known)
    else:
        priority = [-h for h in height]
    waiting = [len(p) for p in preds]
    ready = [(priority[k], k) for k in range(n) if waiting[k] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, k = heapq.heappop(ready)
        order.append(k)
        for s in succs[k]:
            waiting[s] -= 1
            if waiting[s] == 0:
                heapq.heappush(ready, (priority[s], s))
    if len(order) != n:   # cannot happen (edges only point forward); keep the written order
        return tuple(range(n))
    return tuple(order)
