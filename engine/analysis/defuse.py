"""Register def-use graph from reaching definitions over the CFG.

Definitions are instructions (bit ``i`` of a Python-int bitset = instruction ``i``), so the
iterative data flow runs on whole-function bitsets and stays fast for thousands of
instructions. A guarded (``@p``) definition may not execute, so it adds itself without killing
the earlier definitions of its register.

An edge is *loop-carried* when its definition reaches the use only through a back edge (or any
DFS-retreating edge, for irreducible flow): the consumer reads the value of an earlier
iteration. That is found by running the same data flow a second time with those edges removed.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import NamedTuple

import networkx as nx

from engine.analysis.cfg import ControlFlowGraph
from engine.ptx.model import Function


class DefUseEdge(NamedTuple):
    """``consumer`` reads ``register`` as written by ``producer``. (A NamedTuple: kernels have
    tens of thousands of these, and tuples are several times cheaper to build.)"""

    producer: int
    consumer: int
    register: str
    loop_carried: bool


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


@dataclass
class DefUseGraph:
    """Producer -> consumer edges per register. ``graph`` is a DiGraph over instruction indices
    whose edges carry ``registers`` (tuple) and ``loop_carried`` (True when every register edge
    between the pair is loop-carried)."""

    function: Function
    cfg: ControlFlowGraph
    edges: list[DefUseEdge]
    _defs_mask: dict[str, int] = field(repr=False, default_factory=dict)
    _block_in: list[int] = field(repr=False, default_factory=list)
    _block_out: list[int] = field(repr=False, default_factory=list)
    _reaching: dict[tuple[int, str], tuple[int, ...]] = field(repr=False, default_factory=dict)
    _producers: dict[int, list[int]] = field(repr=False, default_factory=dict)
    _consumers: dict[int, list[int]] = field(repr=False, default_factory=dict)
    _carried: set[tuple[int, int, str]] = field(repr=False, default_factory=set)
    _flat_in: list[int] = field(repr=False, default_factory=list)
    # False for the reaching-definitions-only graphs of ``reaching_definitions``: those have no
    # edge list and answer only ``reaching*`` / ``is_loop_carried``.
    complete: bool = True

    _graph: nx.DiGraph | None = field(repr=False, default=None)

    @property
    def graph(self) -> nx.DiGraph:
        """Built on first use: the trip-count pass makes throw-away def-use graphs that never
        need it, and building it is a third of the cost."""
        if self._graph is None:
            graph = nx.DiGraph()
            graph.add_nodes_from(range(len(self.function.instructions)))
            for e in self.edges:
                if graph.has_edge(e.producer, e.consumer):
                    data = graph.edges[e.producer, e.consumer]
                    data["registers"] = (*data["registers"], e.register)
                    data["loop_carried"] = data["loop_carried"] and e.loop_carried
                else:
                    graph.add_edge(e.producer, e.consumer, registers=(e.register,),
                                   loop_carried=e.loop_carried)
            self._graph = graph
        return self._graph

    def producers(self, index: int) -> list[int]:
        """Instructions whose results instruction ``index`` reads (sorted)."""
        return self._producers.get(index, [])

    def consumers(self, index: int) -> list[int]:
        """Instructions that read a result of instruction ``index`` (sorted)."""
        return self._consumers.get(index, [])

    def first_user(self, index: int) -> int | None:
        """Many-BSP's ``u``: the smallest consumer index after ``index``, None when none."""
        for c in self.consumers(index):
            if c > index:
                return c
        return None

    def u_vector(self) -> list[int | None]:
        return [self.first_user(i) for i in range(len(self.function.instructions))]

    def is_loop_carried(self, producer: int, consumer: int, register: str) -> bool:
        """True when ``producer``'s value of ``register`` reaches ``consumer`` only from an
        earlier iteration."""
        if self.complete:
            return (producer, consumer, register) in self._carried
        flat = self._walk(self._flat_in, consumer, register)
        return not (flat >> producer) & 1

    def _walk(self, block_in: list[int], index: int, register: str) -> int:
        """Definitions of ``register`` live just before ``index``, as a bitset."""
        block = self.cfg.block_of(index)
        mask = block_in[block.index] & self._defs_mask.get(register, 0)
        for instr in self.function.instructions[block.start:index]:
            if register in instr.dests:
                bit = 1 << instr.index
                mask = bit if instr.guard is None else mask | bit
        return mask

    def reaching(self, index: int, register: str) -> tuple[int, ...]:
        """Definitions of ``register`` that reach instruction ``index`` (whether it reads the
        register or not)."""
        found = self._reaching.get((index, register))
        if found is not None:
            return found
        # Not a recorded use: walk the block from its entry up to the instruction.
        return tuple(_bits(self._walk(self._block_in, index, register)))

    def defs_of(self, register: str) -> tuple[int, ...]:
        return tuple(_bits(self._defs_mask.get(register, 0)))

    def reaching_at_entry(self, block: int, register: str) -> tuple[int, ...]:
        """Definitions of ``register`` live on entry to ``block``."""
        return tuple(_bits(self._block_in[block] & self._defs_mask.get(register, 0)))

    def reaching_at_exit(self, block: int, register: str) -> tuple[int, ...]:
        """Definitions of ``register`` live on exit from ``block``."""
        return tuple(_bits(self._block_out[block] & self._defs_mask.get(register, 0)))


def _retreating_edges(cfg: ControlFlowGraph) -> set[tuple[int, int]]:
    """Edges to a block still on the DFS stack: back edges plus irreducible retreats."""
    if cfg.entry is None:
        return set()
    out: set[tuple[int, int]] = set(cfg.back_edges)
    state: dict[int, int] = {}  # 1 on stack, 2 done
    stack = [(cfg.entry, iter(cfg.blocks[cfg.entry].successors))]
    state[cfg.entry] = 1
    while stack:
        node, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            state[node] = 2
            stack.pop()
        elif state.get(nxt) == 1:
            out.add((node, nxt))
        elif nxt not in state:
            state[nxt] = 1
            stack.append((nxt, iter(cfg.blocks[nxt].successors)))
    return out


def _solve(cfg: ControlFlowGraph, gen: list[int], kill: list[int],
           skip: set[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """Forward may-analysis IN[b] = OR OUT[p]; OUT[b] = gen | (IN & ~kill), by a worklist in
    reverse postorder (a block is revisited only when a predecessor's OUT changed)."""
    n = len(cfg.blocks)
    block_in = [0] * n
    block_out = list(gen)
    if cfg.entry is None:
        return block_in, block_out
    keep = [~k for k in kill]
    preds = [[p for p in b.predecessors if (p, b.index) not in skip] for b in cfg.blocks]
    succs = [[s for s in b.successors if (b.index, s) not in skip] for b in cfg.blocks]
    order = list(reversed(list(nx.dfs_postorder_nodes(cfg.graph, cfg.entry))))
    rank = {b: i for i, b in enumerate(order)}
    pending = set(order)
    heap = list(range(len(order)))  # ranks, already a valid min-heap
    while heap:
        b = order[heapq.heappop(heap)]
        pending.discard(b)
        new_in = 0
        for p in preds[b]:
            new_in |= block_out[p]
        block_in[b] = new_in
        new_out = gen[b] | (new_in & keep[b])
        if new_out != block_out[b]:
            block_out[b] = new_out
            for s in succs[b]:
                if s in rank and s not in pending:
                    pending.add(s)
                    heapq.heappush(heap, rank[s])
    return block_in, block_out


def build_def_use(function: Function, cfg: ControlFlowGraph,
                  skip_edges: frozenset[tuple[int, int]] = frozenset()) -> DefUseGraph:
    """Def-use edges of ``function``. ``skip_edges`` are CFG edges (block pairs) that cannot be
    taken (uniform branch decisions of a given launch); definitions do not flow along them."""
    return _build(function, cfg, skip_edges, complete=True)


def reaching_definitions(function: Function, cfg: ControlFlowGraph,
                         skip_edges: frozenset[tuple[int, int]] = frozenset()) -> DefUseGraph:
    """Only the data flow (no edge list): enough for ``reaching*`` and ``is_loop_carried``,
    at a fraction of the cost. The trip-count pass uses it for launch-pruned CFGs."""
    return _build(function, cfg, skip_edges, complete=False)


def _build(function: Function, cfg: ControlFlowGraph, skip_edges: frozenset[tuple[int, int]],
           complete: bool) -> DefUseGraph:
    body = function.instructions
    defs_mask: dict[str, int] = {}
    for instr in body:
        for r in instr.dests:
            defs_mask[r] = defs_mask.get(r, 0) | (1 << instr.index)

    gen: list[int] = []
    kill: list[int] = []
    for block in cfg.blocks:
        local: dict[str, int] = {}
        killed: set[str] = set()
        for instr in body[block.start:block.end]:
            bit = 1 << instr.index
            for r in instr.dests:
                if instr.guard is None:
                    local[r] = bit
                    killed.add(r)
                else:
                    local[r] = local.get(r, 0) | bit
        g = 0
        for m in local.values():
            g |= m
        k = 0
        for r in killed:
            k |= defs_mask[r]
        gen.append(g)
        kill.append(k)

    block_in, block_out = _solve(cfg, gen, kill, set(skip_edges))
    flat_in, _ = _solve(cfg, gen, kill, _retreating_edges(cfg) | skip_edges)

    edges: list[DefUseEdge] = []
    reaching: dict[tuple[int, str], tuple[int, ...]] = {}
    if not complete:
        return DefUseGraph(function=function, cfg=cfg, edges=edges, _defs_mask=defs_mask,
                           _block_in=block_in, _block_out=block_out, _flat_in=flat_in, complete=False)
    for block in cfg.blocks:
        run: dict[str, int] = {}
        flat: dict[str, int] = {}
        for instr in body[block.start:block.end]:
            for r in dict.fromkeys(instr.srcs):
                if r not in run:
                    mask = defs_mask.get(r, 0)
                    run[r] = block_in[block.index] & mask
                    flat[r] = flat_in[block.index] & mask
                m = run[r]
                if m & (m - 1) == 0:  # the common case: zero or one reaching definition
                    defs: tuple[int, ...] = (m.bit_length() - 1,) if m else ()
                else:
                    defs = tuple(_bits(m))
                reaching[(instr.index, r)] = defs
                fm = flat[r]
                if fm == m:  # every definition also reaches without a back edge
                    edges.extend(DefUseEdge(d, instr.index, r, False) for d in defs)
                else:
                    edges.extend(DefUseEdge(d, instr.index, r, not (fm >> d) & 1) for d in defs)
            bit = 1 << instr.index
            for r in instr.dests:
                if instr.guard is None:
                    run[r] = bit
                    flat[r] = bit
                else:
                    mask = defs_mask[r]
                    run[r] = run.get(r, block_in[block.index] & mask) | bit
                    flat[r] = flat.get(r, flat_in[block.index] & mask) | bit

    producers: dict[int, set[int]] = {}
    consumers: dict[int, set[int]] = {}
    for e in edges:
        producers.setdefault(e.consumer, set()).add(e.producer)
        consumers.setdefault(e.producer, set()).add(e.consumer)
    return DefUseGraph(
        function=function,
        cfg=cfg,
        edges=edges,
        _defs_mask=defs_mask,
        _block_in=block_in,
        _block_out=block_out,
        _reaching=reaching,
        _producers={k: sorted(v) for k, v in producers.items()},
        _consumers={k: sorted(v) for k, v in consumers.items()},
        _carried={(e.producer, e.consumer, e.register) for e in edges if e.loop_carried},
        _flat_in=flat_in,
    )
