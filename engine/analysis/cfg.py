"""Control-flow graph of one PTX function: basic blocks, dominators and natural loops.

Blocks start at labels and after control transfers; ``bra``/``brx`` add edges to their targets
(a guarded branch also falls through), ``ret``/``exit``/``trap`` end a path unless guarded.
Loops are natural loops of back edges (u -> h with h dominating u); loops sharing a header are
merged. Irreducible cycles have no dominating header, so they simply yield no loop.

Every walk here is iterative (no recursion on nesting depth): depth-first orders with explicit
stacks, immediate dominators by Cooper, Harvey and Kennedy's iteration over reverse postorder,
``dominates`` in O(1) from entry/exit numbers of the dominator tree, loop parents and depths in
one pass over the loop bodies. The networkx view (``graph``) is built only when asked for.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import networkx as nx

from engine.ptx.parsed_module import Function, Instruction

_TERMINATORS = {"ret", "exit", "trap"}


@dataclass
class BasicBlock:
    """Instructions ``start`` (inclusive) to ``end`` (exclusive) of the function body."""

    index: int
    label: str | None
    start: int
    end: int
    successors: list[int] = field(default_factory=list)
    predecessors: list[int] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The label, or ``B<index>`` for an unlabeled block."""
        return self.label if self.label is not None else f"B{self.index}"

    def __len__(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class Loop:
    """A natural loop. ``depth`` is 1 for an outermost loop; ``parent`` is the enclosing loop's
    header block (None when outermost)."""

    header_block: int
    header_label: str | None
    body: frozenset[int]
    latches: tuple[int, ...]       # blocks with a back edge to the header
    exits: tuple[int, ...]         # blocks outside the loop reached from inside it
    depth: int
    parent: int | None

    @property
    def key(self) -> str:
        """The name trip counts are keyed by: the header label, or ``B<index>``."""
        return self.header_label if self.header_label is not None else f"B{self.header_block}"


@dataclass
class ControlFlowGraph:
    function: Function
    blocks: list[BasicBlock]
    entry: int | None
    exit_blocks: list[int]
    dominators: dict[int, int]     # immediate dominator of each reachable block (entry -> entry)
    loops: list[Loop]              # outermost first, then by header position
    back_edges: list[tuple[int, int]]
    _starts: list[int] = field(default_factory=list, repr=False)
    _innermost: dict[int, int] = field(default_factory=dict, repr=False)  # block -> header
    _by_header: dict[int, Loop] = field(default_factory=dict, repr=False)
    _dom_in: dict[int, int] = field(default_factory=dict, repr=False)   # dominator-tree DFS
    _dom_out: dict[int, int] = field(default_factory=dict, repr=False)  # entry/exit numbers
    _graph: nx.DiGraph | None = field(default=None, repr=False)
    _block_index: list[int] | None = field(default=None, repr=False)   # instruction -> block

    @property
    def graph(self) -> nx.DiGraph:
        """The blocks as a networkx DiGraph (built on first use; the analysis does not need it)."""
        if self._graph is None:
            graph = nx.DiGraph()
            graph.add_nodes_from(range(len(self.blocks)))
            for block in self.blocks:
                for s in block.successors:
                    graph.add_edge(block.index, s)
            self._graph = graph
        return self._graph

    def edges(self) -> list[tuple[int, int]]:
        """Every edge (block, successor), in block order."""
        return [(b.index, s) for b in self.blocks for s in b.successors]

    def block_of(self, instruction_index: int) -> BasicBlock:
        """The block holding an instruction. IndexError when out of range."""
        if not 0 <= instruction_index < len(self.function.instructions):
            raise IndexError(instruction_index)
        return self.blocks[bisect.bisect_right(self._starts, instruction_index) - 1]

    def block_indices(self) -> list[int]:
        """The block index of every instruction, by instruction index (built on first use: the
        affine analysis asks for it millions of times on a big kernel)."""
        if self._block_index is None:
            self._block_index = [self.blocks[bisect.bisect_right(self._starts, i) - 1].index
                                 for i in range(len(self.function.instructions))]
        return self._block_index

    def loop_of(self, block: int | BasicBlock) -> Loop | None:
        """The innermost loop containing a block, or None."""
        index = block.index if isinstance(block, BasicBlock) else block
        header = self._innermost.get(index)
        return None if header is None else self._by_header.get(header)

    def loop_by_header(self, header_block: int) -> Loop | None:
        return self._by_header.get(header_block)

    def dominates(self, a: int, b: int) -> bool:
        """True when block ``a`` dominates block ``b`` (both reachable)."""
        dom_in = self._dom_in
        if a not in dom_in or b not in dom_in:
            return False
        return dom_in[a] <= dom_in[b] and self._dom_out[b] <= self._dom_out[a]


def postorder(successors: list[list[int]], start: int) -> list[int]:
    """Depth-first postorder of the blocks reachable from ``start`` (children in successor
    order), with an explicit stack of (block, next successor to try) kept as two flat lists."""
    seen = [False] * len(successors)
    seen[start] = True
    order: list[int] = []
    stack = [start]
    next_child = [0] * len(successors)
    while stack:
        node = stack[-1]
        children = successors[node]
        k = next_child[node]
        while k < len(children) and seen[children[k]]:
            k += 1
        if k < len(children):
            child = children[k]
            next_child[node] = k + 1
            seen[child] = True
            stack.append(child)
        else:
            stack.pop()
            order.append(node)
    return order


def immediate_dominators(successors: list[list[int]], predecessors: list[list[int]],
                         entry: int) -> dict[int, int]:
    """Immediate dominator of every block reachable from ``entry`` (the entry maps to itself):
    Cooper, Harvey and Kennedy's "A Simple, Fast Dominance Algorithm", iterated in reverse
    postorder until nothing changes (twice for reducible graphs). The map lists the entry first,
    then the blocks in reverse postorder."""
    post = postorder(successors, entry)
    number = [-1] * len(successors)
    for i, b in enumerate(post):
        number[b] = i
    idom = [-1] * len(successors)
    idom[entry] = entry
    rpo = post[-2::-1]  # reverse postorder without the entry
    changed = True
    while changed:
        changed = False
        for b in rpo:
            new = -1
            for p in predecessors[b]:
                if idom[p] < 0:
                    continue  # unreachable, or not processed yet in this pass
                if new < 0:
                    new = p
                    continue
                x, y = p, new
                while x != y:
                    while number[x] < number[y]:
                        x = idom[x]
                    while number[y] < number[x]:
                        y = idom[y]
                new = x
            if idom[b] != new:
                idom[b] = new
                changed = True
    out = {entry: entry}
    for b in rpo:
        out[b] = idom[b]
    return out


def _dominator_numbers(idom: dict[int, int], entry: int) -> tuple[dict[int, int], dict[int, int]]:
    """Entry and exit times of an iterative DFS over the dominator tree: ``a`` dominates ``b``
    exactly when ``a``'s interval contains ``b``'s."""
    children: dict[int, list[int]] = {}
    for b, d in idom.items():
        if b != d:
            children.setdefault(d, []).append(b)
    t_in: dict[int, int] = {}
    t_out: dict[int, int] = {}
    clock = 0
    stack = [(entry, False)]
    while stack:
        node, done = stack.pop()
        if done:
            t_out[node] = clock
            clock += 1
            continue
        t_in[node] = clock
        clock += 1
        stack.append((node, True))
        stack.extend((c, False) for c in children.get(node, ()))
    return t_in, t_out


def _targets(instruction: Instruction, function: Function) -> list[str] | None:
    """Label targets of a branch, or None when they cannot be resolved (brx without a table)."""
    if instruction.opcode == "brx":
        tables = getattr(function, "branch_targets", {}) or {}
        for operand in instruction.operands:
            if operand.name in tables:
                return list(tables[operand.name])
        return None
    target = instruction.branch_target
    return [target] if target is not None else None


def _leaders(function: Function) -> list[int]:
    body = function.instructions
    leaders = {0} if body else set()
    leaders.update(i for i in function.labels.values() if i < len(body))
    for instr in body:
        if instr.opcode in ("bra", "brx") or instr.opcode in _TERMINATORS:
            if instr.index + 1 < len(body):
                leaders.add(instr.index + 1)
    return sorted(leaders)


def build_cfg(function: Function) -> ControlFlowGraph:
    """Split the body into basic blocks, connect them, find dominators and natural loops."""
    body = function.instructions
    starts = _leaders(function)
    label_at: dict[int, str] = {}
    for name, index in sorted(function.labels.items(), key=lambda kv: kv[1]):
        label_at.setdefault(index, name)  # first label of a run names the block
    blocks = [
        BasicBlock(n, label_at.get(s), s, starts[n + 1] if n + 1 < len(starts) else len(body))
        for n, s in enumerate(starts)
    ]
    block_at = {b.start: b.index for b in blocks}
    labeled = [b.index for b in blocks if b.start in label_at]

    exit_blocks: list[int] = []
    for block in blocks:
        last = body[block.end - 1]
        succ: list[int] = []
        falls_through = True
        if last.opcode in ("bra", "brx"):
            targets = _targets(last, function)
            if targets is None:  # unresolvable indirect branch: any labeled block may follow
                succ.extend(labeled)
            for t in targets or ():
                index = function.labels.get(t)
                if index is not None and index in block_at:
                    succ.append(block_at[index])
                elif index is not None:
                    exit_blocks.append(block.index)  # label past the last instruction
            falls_through = last.guard is not None
        elif last.opcode in _TERMINATORS:
            falls_through = last.guard is not None
            exit_blocks.append(block.index)
        if falls_through:
            if block.index + 1 < len(blocks):
                succ.append(block.index + 1)
            elif last.opcode not in _TERMINATORS:
                exit_blocks.append(block.index)  # falls off the end
        block.successors = list(dict.fromkeys(succ))
    for block in blocks:  # predecessors in block order, as the successors were added
        for s in block.successors:
            blocks[s].predecessors.append(block.index)

    entry = 0 if blocks else None
    successors = [b.successors for b in blocks]
    dominators = {}
    if entry is not None:
        dominators = immediate_dominators(successors, [b.predecessors for b in blocks], entry)
    dom_in, dom_out = _dominator_numbers(dominators, entry) if entry is not None else ({}, {})
    cfg = ControlFlowGraph(
        function=function,
        blocks=blocks,
        entry=entry,
        exit_blocks=sorted(set(exit_blocks)),
        dominators=dominators,
        loops=[],
        back_edges=[],
        _starts=starts,
        _dom_in=dom_in,
        _dom_out=dom_out,
    )
    _find_loops(cfg)
    return cfg


def _find_loops(cfg: ControlFlowGraph) -> None:
    blocks = cfg.blocks
    back_edges = [(u, h) for u, h in cfg.edges() if u in cfg.dominators and cfg.dominates(h, u)]
    bodies: dict[int, set[int]] = {}
    latches: dict[int, list[int]] = {}
    for u, h in back_edges:
        # Natural loop: the header plus every block that reaches the latch without passing h.
        body = bodies.setdefault(h, {h})
        latches.setdefault(h, []).append(u)
        stack = [u]
        while stack:
            node = stack.pop()
            if node in body:
                continue
            body.add(node)
            stack.extend(p for p in blocks[node].predecessors if p in cfg.dominators)
    # Parent: the smallest other loop whose body holds this header (the first such in
    # ascending size order). One pass over the bodies, smallest first.
    order = sorted(bodies, key=lambda h: len(bodies[h]))
    parent: dict[int, int | None] = dict.fromkeys(bodies)
    for g in order:
        size = len(bodies[g])
        for b in bodies[g]:
            if b != g and b in parent and parent[b] is None and size >= len(bodies[b]):
                parent[b] = g
    depth: dict[int, int] = {}
    for h in bodies:  # depth = 1 + the parent's, by walking up (no recursion)
        chain: list[int] = []
        on_chain: set[int] = set()
        node: int | None = h
        while node is not None and node not in depth and node not in on_chain:
            chain.append(node)
            on_chain.add(node)
            node = parent[node]
        base = depth.get(node, 0) if node is not None else 0
        for n in reversed(chain):
            base += 1
            depth[n] = base

    loops = []
    for h, body in bodies.items():
        exits = sorted({s for b in body for s in blocks[b].successors if s not in body})
        loops.append(
            Loop(
                header_block=h,
                header_label=blocks[h].label,
                body=frozenset(body),
                latches=tuple(sorted(set(latches[h]))),
                exits=tuple(exits),
                depth=depth[h],
                parent=parent[h],
            )
        )
    loops.sort(key=lambda lp: (lp.depth, blocks[lp.header_block].start))
    cfg.loops = loops
    cfg.back_edges = sorted(back_edges)
    cfg._by_header = {loop.header_block: loop for loop in loops}
    # Innermost loop of each block: visit outer loops first so inner ones overwrite.
    for loop in loops:
        for b in loop.body:
            cfg._innermost[b] = loop.header_block


# Instructions a bare loop test is made of (integer bookkeeping, the compare, the branch).
_TEST_OPCODES = frozenset({"setp", "bra", "mov", "add", "sub", "mul", "mad", "shl", "shr", "and", "or", "xor",
                           "not", "selp", "cvt", "min", "max", "neg"})


def top_tested(cfg: ControlFlowGraph, loop: Loop) -> bool:
    """Whether the loop's header is nothing but its exit test: the last pass of each entry then
    runs none of the body."""
    header = cfg.blocks[loop.header_block]
    body = cfg.function.instructions[header.start:header.end]
    exits = any(s not in loop.body for s in header.successors)
    return (exits and loop.header_block not in loop.latches
            and all(i.opcode in _TEST_OPCODES for i in body))
