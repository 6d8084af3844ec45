"""Control-flow graph of one PTX function: basic blocks, dominators and natural loops.

Blocks start at labels and after control transfers; ``bra``/``brx`` add edges to their targets
(a guarded branch also falls through), ``ret``/``exit``/``trap`` end a path unless guarded.
Loops are natural loops of back edges (u -> h with h dominating u); loops sharing a header are
merged. Irreducible cycles have no dominating header, so they simply yield no loop.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import networkx as nx

from engine.ptx.model import Function, Instruction

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
    graph: nx.DiGraph
    entry: int | None
    exit_blocks: list[int]
    dominators: dict[int, int]     # immediate dominator of each reachable block (entry -> entry)
    loops: list[Loop]              # outermost first, then by header position
    back_edges: list[tuple[int, int]]
    _starts: list[int] = field(default_factory=list, repr=False)
    _innermost: dict[int, int] = field(default_factory=dict, repr=False)  # block -> header

    def block_of(self, instruction_index: int) -> BasicBlock:
        """The block holding an instruction. IndexError when out of range."""
        if not 0 <= instruction_index < len(self.function.instructions):
            raise IndexError(instruction_index)
        return self.blocks[bisect.bisect_right(self._starts, instruction_index) - 1]

    def loop_of(self, block: int | BasicBlock) -> Loop | None:
        """The innermost loop containing a block, or None."""
        index = block.index if isinstance(block, BasicBlock) else block
        header = self._innermost.get(index)
        return None if header is None else self.loop_by_header(header)

    def loop_by_header(self, header_block: int) -> Loop | None:
        for loop in self.loops:
            if loop.header_block == header_block:
                return loop
        return None

    def dominates(self, a: int, b: int) -> bool:
        """True when block ``a`` dominates block ``b`` (both reachable)."""
        if b not in self.dominators or a not in self.dominators:
            return False
        while True:
            if a == b:
                return True
            parent = self.dominators[b]
            if parent == b:
                return False
            b = parent


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

    graph = nx.DiGraph()
    graph.add_nodes_from(range(len(blocks)))
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
        for s in dict.fromkeys(succ):
            graph.add_edge(block.index, s)
    for block in blocks:
        block.successors = list(graph.successors(block.index))
        block.predecessors = list(graph.predecessors(block.index))

    entry = 0 if blocks else None
    dominators = dict(nx.immediate_dominators(graph, entry)) if entry is not None else {}
    if entry is not None:
        dominators[entry] = entry  # networkx versions differ on whether the entry maps to itself
    cfg = ControlFlowGraph(
        function=function,
        blocks=blocks,
        graph=graph,
        entry=entry,
        exit_blocks=sorted(set(exit_blocks)),
        dominators=dominators,
        loops=[],
        back_edges=[],
        _starts=starts,
    )
    _find_loops(cfg)
    return cfg


def _find_loops(cfg: ControlFlowGraph) -> None:
    graph = cfg.graph
    back_edges = [(u, h) for u, h in graph.edges if u in cfg.dominators and cfg.dominates(h, u)]
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
            stack.extend(p for p in graph.predecessors(node) if p in cfg.dominators)
    # Parents: the smallest other loop whose body contains this header.
    order = sorted(bodies, key=lambda h: len(bodies[h]))
    parent: dict[int, int | None] = {}
    for h in order:
        enclosing = [g for g in order if g != h and h in bodies[g] and len(bodies[g]) >= len(bodies[h])]
        parent[h] = min(enclosing, key=lambda g: len(bodies[g])) if enclosing else None
    depth: dict[int, int] = {}

    def depth_of(h: int) -> int:
        if h not in depth:
            p = parent[h]
            depth[h] = 1 if p is None else depth_of(p) + 1
        return depth[h]

    loops = []
    for h, body in bodies.items():
        exits = sorted({s for b in body for s in graph.successors(b) if s not in body})
        loops.append(
            Loop(
                header_block=h,
                header_label=cfg.blocks[h].label,
                body=frozenset(body),
                latches=tuple(sorted(set(latches[h]))),
                exits=tuple(exits),
                depth=depth_of(h),
                parent=parent[h],
            )
        )
    loops.sort(key=lambda lp: (lp.depth, cfg.blocks[lp.header_block].start))
    cfg.loops = loops
    cfg.back_edges = sorted(back_edges)
    # Innermost loop of each block: visit outer loops first so inner ones overwrite.
    for loop in loops:
        for b in loop.body:
            cfg._innermost[b] = loop.header_block
