"""Register def-use graph from reaching definitions over the CFG.

Two solvers give identical answers; :func:`build_def_use` picks by size.

* **Bitsets** (blocks x definitions up to :data:`DENSE_LIMIT` bits): definitions are
  instructions (bit ``i`` of a Python-int bitset = instruction ``i``), and the iterative data
  flow runs on whole-function bitsets, which is fastest for the kernels compilers write.
* **Sparse** (beyond that, where one bitset per block would cost blocks x instructions bits: a
  100,000-label kernel would need gigabytes): an SSA-style web per register. Join blocks get a
  merge node at the iterated dominance frontier of the blocks that define the register, names
  are pushed and popped along an iterative walk of the dominator tree, and a definition set is
  the closure of a node's operands (strongly connected merges share one set). Storage is
  linear in definitions, uses and merge nodes.

A guarded (``@p``) definition may not execute, so it adds itself without killing the earlier
definitions of its register.

An edge is *loop-carried* when its definition reaches the use only through a back edge (or any
DFS-retreating edge, for irreducible flow): the consumer reads the value of an earlier
iteration. That is found by solving the same problem a second time with those edges removed.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import NamedTuple

import networkx as nx

from engine.analysis.cfg import ControlFlowGraph, immediate_dominators, postorder
from engine.ptx.parsed_module import Function

# Bitset solver up to this many blocks x definitions (bits in one per-block bitset array).
DENSE_LIMIT = 1 << 26


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


class _Dense:
    """Answers of the bitset solver (bits are definitions; ``def_instr`` maps them to
    instructions, ``first_def`` an instruction to its first definition)."""

    def __init__(self, function: Function, cfg: ControlFlowGraph, def_instr: list[int],
                 first_def: list[int], defs_mask: dict[str, int], block_in: list[int],
                 block_out: list[int], flat_in: list[int]) -> None:
        self.body = function.instructions
        self.cfg = cfg
        self.def_instr = def_instr
        self.first_def = first_def
        self.defs_mask = defs_mask
        self.block_in = block_in
        self.block_out = block_out
        self.flat_in = flat_in

    def _instructions(self, mask: int) -> tuple[int, ...]:
        def_instr = self.def_instr
        return tuple(def_instr[k] for k in _bits(mask))

    def before(self, index: int, register: str, flat: bool = False) -> tuple[int, ...]:
        """Definitions of ``register`` live just before instruction ``index``."""
        block = self.cfg.block_of(index)
        mask = (self.flat_in if flat else self.block_in)[block.index] & self.defs_mask.get(register, 0)
        for instr in self.body[block.start:index]:
            if register in instr.dests:
                bit = 1 << (self.first_def[instr.index] + instr.dests.index(register))
                mask = bit if instr.guard is None else mask | bit
        return self._instructions(mask)

    def at_entry(self, block: int, register: str) -> tuple[int, ...]:
        return self._instructions(self.block_in[block] & self.defs_mask.get(register, 0))

    def at_exit(self, block: int, register: str) -> tuple[int, ...]:
        return self._instructions(self.block_out[block] & self.defs_mask.get(register, 0))

    def defs_of(self, register: str) -> tuple[int, ...]:
        return self._instructions(self.defs_mask.get(register, 0))


@dataclass
class DefUseGraph:
    """Producer -> consumer edges per register. ``graph`` is a DiGraph over instruction indices
    whose edges carry ``registers`` (tuple) and ``loop_carried`` (True when every register edge
    between the pair is loop-carried)."""

    function: Function
    cfg: ControlFlowGraph
    edges: list[DefUseEdge]
    _flow: _Dense | _Sparse = field(repr=False, default=None)  # type: ignore[assignment]
    _reaching: dict[tuple[int, str], tuple[int, ...]] = field(repr=False, default_factory=dict)
    _producers: dict[int, list[int]] = field(repr=False, default_factory=dict)
    _consumers: dict[int, list[int]] = field(repr=False, default_factory=dict)
    _carried: set[tuple[int, int, str]] = field(repr=False, default_factory=set)
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

    @property
    def sparse(self) -> bool:
        """True when the sparse (SSA-web) solver answered, False for bitsets."""
        return isinstance(self._flow, _Sparse)

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
        return producer not in self._flow.before(consumer, register, flat=True)

    def reaching(self, index: int, register: str) -> tuple[int, ...]:
        """Definitions of ``register`` that reach instruction ``index`` (whether it reads the
        register or not)."""
        found = self._reaching.get((index, register))
        if found is not None:
            return found
        return self._flow.before(index, register)

    def defs_of(self, register: str) -> tuple[int, ...]:
        return self._flow.defs_of(register)

    def reaching_at_entry(self, block: int, register: str) -> tuple[int, ...]:
        """Definitions of ``register`` live on entry to ``block``."""
        return self._flow.at_entry(block, register)

    def reaching_at_exit(self, block: int, register: str) -> tuple[int, ...]:
        """Definitions of ``register`` live on exit from ``block``."""
        return self._flow.at_exit(block, register)


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
    order = postorder([b.successors for b in cfg.blocks], cfg.entry)[::-1]
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


class _Web:
    """Reaching definitions of every register as an SSA-style web over one version of the CFG
    (``removed`` edges taken out), rooted at a virtual block ``V`` that stands for "no
    definition yet".

    The graph mirrors the bitset solver exactly: a block not reachable from the entry receives
    nothing (its only predecessor is ``V``) but still passes its own definitions on; a block cut
    off by removed edges gets ``V`` as an extra predecessor, so that every block has a
    dominator while its definition sets stay those of its remaining predecessors.

    A *value* is a node: an unguarded definition (``own`` = its instruction), a guarded one
    (``own`` plus the value before it) or a merge at a join block (its operands, one per
    predecessor). The set of definitions a value stands for is the closure over operands."""

    def __init__(self, function: Function, cfg: ControlFlowGraph, reachable: set[int],
                 removed: set[tuple[int, int]], def_blocks: dict[str, list[int]]) -> None:
        body = function.instructions
        blocks = cfg.blocks
        n = len(blocks)
        root = n
        preds: list[list[int]] = [[] for _ in range(n + 1)]
        succs: list[list[int]] = [[] for _ in range(n + 1)]
        for b in blocks:
            if b.index not in reachable:
                continue  # unreachable: nothing flows in
            for p in b.predecessors:
                if (p, b.index) not in removed:
                    preds[b.index].append(p)
                    succs[p].append(b.index)
        for b in range(n):
            if b == cfg.entry or b not in reachable:
                preds[b].append(root)
                succs[root].append(b)
        seen = {root}
        for start in [root, *range(n)]:  # a block cut off by removed edges hangs from the root
            if start in seen and start != root:
                continue
            if start != root:
                preds[start].append(root)
                succs[root].append(start)
                seen.add(start)
            todo = [start]
            while todo:
                for t in succs[todo.pop()]:
                    if t not in seen:
                        seen.add(t)
                        todo.append(t)
        idom = immediate_dominators(succs, preds, root)
        self.idom = idom
        self.root = root
        # Dominance frontiers (Cooper, Harvey and Kennedy's runner walk).
        frontier: list[list[int]] = [[] for _ in range(n + 1)]
        for b in range(n):
            if len(preds[b]) < 2:
                continue
            for p in preds[b]:
                runner = p
                while runner != idom[b]:
                    out = frontier[runner]
                    if not out or out[-1] != b:
                        out.append(b)
                    runner = idom[runner]
        # Merge nodes at the iterated frontier of each register's defining blocks.
        merges: list[list[str]] = [[] for _ in range(n + 1)]
        for register, where in def_blocks.items():
            placed: set[int] = set()
            queued = set(where)
            work = list(where)
            while work:
                for y in frontier[work.pop()]:
                    if y not in placed:
                        placed.add(y)
                        merges[y].append(register)
                        if y not in queued:
                            queued.add(y)
                            work.append(y)
        # Rename along the dominator tree: a stack of values per register.
        own: list[int] = [-1]            # value 0: no definition
        ops: list[list[int] | None] = [None]
        # uses[i]: the value each register of instruction i's ``srcs`` has there (in order)
        self.uses: list[tuple[int, ...]] = [()] * len(body)
        self.exits: dict[tuple[int, str], int] = {}  # last value of a register a block defines
        self.merge_at: dict[tuple[int, str], int] = {}
        children: list[list[int]] = [[] for _ in range(n + 1)]
        for b, d in idom.items():
            if b != d:
                children[d].append(b)
        for b in range(n + 1):
            for r in merges[b]:
                merge_at_b = len(own)
                own.append(-1)
                ops.append([])
                self.merge_at[(b, r)] = merge_at_b
        stacks: dict[str, list[int]] = {}
        uses, exits, merge_at = self.uses, self.exits, self.merge_at
        walk: list[tuple[int, list[str] | None]] = [(root, None)]
        while walk:
            b, pushed = walk.pop()
            if pushed is not None:  # leaving b
                for r in pushed:
                    stacks[r].pop()
                continue
            pushed = []
            for r in merges[b]:
                stacks.setdefault(r, []).append(merge_at[(b, r)])
                pushed.append(r)
            if b != root:
                block = blocks[b]
                get = stacks.get
                for instr in body[block.start:block.end]:
                    i = instr.index
                    if instr.srcs:
                        uses[i] = tuple([s[-1] if (s := get(r)) else 0 for r in instr.srcs])
                    for r in instr.dests:
                        stack = stacks.setdefault(r, [])
                        v = len(own)
                        own.append(i)
                        if instr.guard is None:
                            ops.append(None)
                        else:
                            ops.append([stack[-1] if stack else 0])
                        stack.append(v)
                        pushed.append(r)
                for r in pushed:
                    exits[(b, r)] = stacks[r][-1]
            for s in succs[b]:
                for r in merges[s]:
                    stack = stacks.get(r)
                    ops[merge_at[(s, r)]].append(stack[-1] if stack else 0)  # type: ignore[union-attr]
            walk.append((b, pushed))
            walk.extend((c, None) for c in reversed(children[b]))
        self.sets = _closure(own, ops)
        self._entry_memo: dict[tuple[int, str], int] = {}

    def value_at_entry(self, block: int, register: str) -> int:
        """The value of ``register`` on entry to ``block``: its merge node there, else the
        value leaving the nearest dominator that defines or merges it."""
        memo = self._entry_memo
        found = self.merge_at.get((block, register))
        if found is not None:
            return found
        path = []
        b = block
        while True:
            cached = memo.get((b, register))
            if cached is not None:
                found = cached
                break
            path.append(b)
            d = self.idom[b]
            if d == self.root:
                found = 0
                break
            found = self.exits.get((d, register))
            if found is None:
                found = self.merge_at.get((d, register))
            if found is not None:
                break
            b = d
        for b in path:
            memo[(b, register)] = found
        return found


def _closure(own: list[int], ops: list[list[int] | None]) -> list[tuple[int, ...]]:
    """Sorted definition tuple of every value: its own definition plus its operands' sets.
    Merges form cycles around loops; those are strongly connected components (found by an
    iterative Tarjan walk) whose members all get the same set."""
    n = len(own)
    sets: list[tuple[int, ...] | None] = [None] * n
    sets[0] = ()
    index = [0] * n
    low = [0] * n
    on_stack = [False] * n
    counter = 1
    stack: list[int] = []
    for start in range(1, n):
        if index[start]:
            continue
        work = [(start, 0)]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack[start] = True
        while work:
            v, k = work[-1]
            children = ops[v] or ()
            if k < len(children):
                work[-1] = (v, k + 1)
                w = children[k]
                if w == 0:
                    continue
                if not index[w]:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, 0))
                elif on_stack[w] and index[w] < low[v]:
                    low[v] = index[w]
                continue
            work.pop()
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] != index[v]:
                continue
            members = []
            while True:
                w = stack.pop()
                on_stack[w] = False
                members.append(w)
                if w == v:
                    break
            # Components complete in reverse topological order: operands outside are done.
            parts: list[tuple[int, ...]] = []
            mine: list[int] = []
            for w in members:
                if own[w] >= 0:
                    mine.append(own[w])
                for x in ops[w] or ():
                    if x and sets[x] is not None:
                        parts.append(sets[x])  # type: ignore[arg-type]
            result: tuple[int, ...]
            if not mine and parts and all(p is parts[0] for p in parts):
                result = parts[0]
            elif not parts and len(mine) == 1:
                result = (mine[0],)
            else:
                merged = set(mine)
                for p in parts:
                    merged.update(p)
                result = tuple(sorted(merged))
            for w in members:
                sets[w] = result
    return sets  # type: ignore[return-value]


class _Sparse:
    """Answers of the SSA-web solver: one web with the removed edges, one without the
    retreating edges as well (the "flat" one that tells loop-carried edges apart)."""

    def __init__(self, function: Function, cfg: ControlFlowGraph, skip: set[tuple[int, int]],
                 retreating: set[tuple[int, int]]) -> None:
        self.body = function.instructions
        self.cfg = cfg
        reachable = set(postorder([b.successors for b in cfg.blocks], cfg.entry)) \
            if cfg.entry is not None else set()
        def_blocks: dict[str, list[int]] = {}
        self.defs: dict[str, list[int]] = {}
        for block in cfg.blocks:
            for instr in self.body[block.start:block.end]:
                for r in instr.dests:
                    self.defs.setdefault(r, []).append(instr.index)
                    where = def_blocks.setdefault(r, [])
                    if not where or where[-1] != block.index:
                        where.append(block.index)
        self.full = _Web(function, cfg, reachable, skip, def_blocks)
        # Without retreating edges left to remove (no loops), the flat web is the same web.
        flat_removed = skip | retreating
        self.flat = self.full if flat_removed == skip else _Web(function, cfg, reachable,
                                                                 flat_removed, def_blocks)

    def before(self, index: int, register: str, flat: bool = False) -> tuple[int, ...]:
        web = self.flat if flat else self.full
        srcs = self.body[index].srcs
        if register in srcs:
            return web.sets[web.uses[index][srcs.index(register)]]
        block = self.cfg.block_of(index)
        found = set(web.sets[web.value_at_entry(block.index, register)])
        for instr in self.body[block.start:index]:
            if register in instr.dests:
                if instr.guard is None:
                    found = {instr.index}
                else:
                    found.add(instr.index)
        return tuple(sorted(found))

    def at_entry(self, block: int, register: str) -> tuple[int, ...]:
        web = self.full
        return web.sets[web.value_at_entry(block, register)]

    def at_exit(self, block: int, register: str) -> tuple[int, ...]:
        web = self.full
        value = web.exits.get((block, register))
        if value is None:
            value = web.value_at_entry(block, register)
        return web.sets[value]

    def defs_of(self, register: str) -> tuple[int, ...]:
        return tuple(self.defs.get(register, ()))


def use_sparse(function: Function, cfg: ControlFlowGraph) -> bool:
    """Whether :func:`build_def_use` takes the sparse solver: when one bitset per block would
    cost more than :data:`DENSE_LIMIT` bits in all, or single bitsets grow past 2^16 bits
    (shifting and masking them per instruction would then be quadratic)."""
    n = len(function.instructions)
    return n > (1 << 16) or n * len(cfg.blocks) > DENSE_LIMIT


def build_def_use(function: Function, cfg: ControlFlowGraph,
                  skip_edges: frozenset[tuple[int, int]] = frozenset(),
                  sparse: bool | None = None) -> DefUseGraph:
    """Def-use edges of ``function``. ``skip_edges`` are CFG edges (block pairs) that cannot be
    taken (uniform branch decisions of a given launch); definitions do not flow along them.
    ``sparse`` forces a solver (None: by size, see :func:`use_sparse`); both give the same
    graph."""
    return _build(function, cfg, skip_edges, complete=True, sparse=sparse)


def reaching_definitions(function: Function, cfg: ControlFlowGraph,
                         skip_edges: frozenset[tuple[int, int]] = frozenset(),
                         sparse: bool | None = None) -> DefUseGraph:
    """Only the data flow (no edge list): enough for ``reaching*`` and ``is_loop_carried``,
    at a fraction of the cost. The trip-count pass uses it for launch-pruned CFGs."""
    return _build(function, cfg, skip_edges, complete=False, sparse=sparse)


def _build(function: Function, cfg: ControlFlowGraph, skip_edges: frozenset[tuple[int, int]],
           complete: bool, sparse: bool | None) -> DefUseGraph:
    if sparse is None:
        sparse = use_sparse(function, cfg)
    if sparse:
        flow = _Sparse(function, cfg, set(skip_edges), _retreating_edges(cfg))
        if not complete:
            return DefUseGraph(function=function, cfg=cfg, edges=[], _flow=flow, complete=False)
        return _finish(function, cfg, flow, *_sparse_edges(function, cfg, flow))
    return _build_dense(function, cfg, skip_edges, complete)


def _sparse_edges(function: Function, cfg: ControlFlowGraph, flow: _Sparse
                  ) -> tuple[list[DefUseEdge], dict[tuple[int, str], tuple[int, ...]]]:
    edges: list[DefUseEdge] = []
    reaching: dict[tuple[int, str], tuple[int, ...]] = {}
    full, flat = flow.full, flow.flat
    full_uses, flat_uses, full_sets, flat_sets = full.uses, flat.uses, full.sets, flat.sets
    for instr in function.instructions:
        i = instr.index
        srcs = instr.srcs
        full_values = full_uses[i]
        flat_values = flat_uses[i]
        for k, r in enumerate(srcs):
            if r in srcs[:k]:
                continue  # a register listed twice is one use
            defs = full_sets[full_values[k]]
            reaching[(i, r)] = defs
            fm = defs if flat is full else flat_sets[flat_values[k]]
            if fm == defs:
                edges.extend(DefUseEdge(d, i, r, False) for d in defs)
            else:
                edges.extend(DefUseEdge(d, i, r, d not in fm) for d in defs)
    return edges, reaching


def _finish(function: Function, cfg: ControlFlowGraph, flow: _Dense | _Sparse,
            edges: list[DefUseEdge], reaching: dict[tuple[int, str], tuple[int, ...]]) -> DefUseGraph:
    producers: dict[int, set[int]] = {}
    consumers: dict[int, set[int]] = {}
    for e in edges:
        producers.setdefault(e.consumer, set()).add(e.producer)
        consumers.setdefault(e.producer, set()).add(e.consumer)
    return DefUseGraph(
        function=function,
        cfg=cfg,
        edges=edges,
        _flow=flow,
        _reaching=reaching,
        _producers={k: sorted(v) for k, v in producers.items()},
        _consumers={k: sorted(v) for k, v in consumers.items()},
        _carried={(e.producer, e.consumer, e.register) for e in edges if e.loop_carried},
    )


def _build_dense(function: Function, cfg: ControlFlowGraph, skip_edges: frozenset[tuple[int, int]],
                 complete: bool) -> DefUseGraph:
    # A definition is one (instruction, register) pair: bit k of a bitset is definition k, made
    # by instruction def_instr[k]. (Bits per instruction would let an instruction that writes
    # two registers keep the one it wrote later alive through the other one.)
    body = function.instructions
    first_def: list[int] = []
    def_instr: list[int] = []
    per_register: dict[str, list[int]] = {}
    for instr in body:
        first_def.append(len(def_instr))
        for r in instr.dests:
            per_register.setdefault(r, []).append(len(def_instr))
            def_instr.append(instr.index)
    defs_mask = {r: _mask(ids) for r, ids in per_register.items()}

    gen: list[int] = []
    kill: list[int] = []
    for block in cfg.blocks:
        local: dict[str, int] = {}
        killed: set[str] = set()
        for instr in body[block.start:block.end]:
            base = first_def[instr.index]
            for k, r in enumerate(instr.dests):
                bit = 1 << (base + k)
                if instr.guard is None:
                    local[r] = bit
                    killed.add(r)
                else:
                    local[r] = local.get(r, 0) | bit
        g = 0
        for m in local.values():
            g |= m
        kl = 0
        for r in killed:
            kl |= defs_mask[r]
        gen.append(g)
        kill.append(kl)

    block_in, block_out = _solve(cfg, gen, kill, set(skip_edges))
    flat_in, _ = _solve(cfg, gen, kill, _retreating_edges(cfg) | skip_edges)

    edges: list[DefUseEdge] = []
    reaching: dict[tuple[int, str], tuple[int, ...]] = {}
    flow = _Dense(function, cfg, def_instr, first_def, defs_mask, block_in, block_out, flat_in)
    if not complete:
        return DefUseGraph(function=function, cfg=cfg, edges=edges, _flow=flow, complete=False)
    for block in cfg.blocks:
        run: dict[str, int] = {}
        flat: dict[str, int] = {}
        for instr in body[block.start:block.end]:
            i = instr.index
            for r in dict.fromkeys(instr.srcs):
                if r not in run:
                    mask = defs_mask.get(r, 0)
                    run[r] = block_in[block.index] & mask
                    flat[r] = flat_in[block.index] & mask
                m = run[r]
                if m & (m - 1) == 0:  # the common case: zero or one reaching definition
                    ids: list[int] = [m.bit_length() - 1] if m else []
                else:
                    ids = _bits(m)
                defs = tuple(def_instr[d] for d in ids)
                reaching[(i, r)] = defs
                fm = flat[r]
                if fm == m:  # every definition also reaches without a back edge
                    edges.extend(DefUseEdge(p, i, r, False) for p in defs)
                else:
                    edges.extend(DefUseEdge(def_instr[d], i, r, not (fm >> d) & 1) for d in ids)
            base = first_def[i]
            for k, r in enumerate(instr.dests):
                bit = 1 << (base + k)
                if instr.guard is None:
                    run[r] = bit
                    flat[r] = bit
                else:
                    mask = defs_mask[r]
                    run[r] = run.get(r, block_in[block.index] & mask) | bit
                    flat[r] = flat.get(r, flat_in[block.index] & mask) | bit

    return _finish(function, cfg, flow, edges, reaching)


def _mask(ids: list[int]) -> int:
    """The bitset with bits ``ids`` set, built in linear time."""
    if not ids:
        return 0
    data = bytearray(ids[-1] // 8 + 1)
    for k in ids:
        data[k >> 3] |= 1 << (k & 7)
    return int.from_bytes(data, "little")
