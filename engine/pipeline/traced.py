"""Dynamic paths from the run of the sampled warps (:mod:`engine.execution`).

A warp's run is the sequence of basic blocks it entered. This module turns one into the
simulator's path tree: each block issues in the scheduled order the static path walker gives it
(:class:`engine.pipeline.adapter._PathBuilder`), a loop's iterations that entered the same blocks
become one counted :class:`Loop` node (an unrolled straight body keeps ptxas's unrolling), and a
loop whose iterations vary is kept as its runs of equal iterations; past ``MAX_VARIANT_RUNS`` runs,
equal iterations are gathered (their counts kept, their order not), as a data-dependent branch's
two sides are.

:func:`block_paths` picks the block the simulated SM runs: the executed block whose warps ran the
number of instructions nearest the mean over the sample (one block per SM: the largest, since
that SM sets the time), and gives each of its warps its own path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.analysis.cfg import Loop as CfgLoop
from engine.pipeline.description import Loop, PathNode, Run

MAX_VARIANT_RUNS = 16


def _signature(nodes: Sequence[PathNode]) -> tuple:
    out: list = []
    for node in nodes:
        if isinstance(node, Run):
            out.append(node.instructions)
        else:
            out.append((node.count, node.dropped, _signature(node.body)))
    return tuple(out)


class TracedPath:
    """Builds one warp's path tree from its entered blocks, with ``builder``'s issue orders."""

    def __init__(self, builder: Any) -> None:
        self.builder = builder
        self.cfg = builder.cfg
        self.loops = {loop.header_block: loop for loop in self.cfg.loops}
        self.runs: dict[int, Run | None] = {}
        self.seq: list[int] = []
        self.pos = 0

    def _run(self, block: int) -> Run | None:
        if block not in self.runs:
            b = self.cfg.blocks[block]
            order = tuple(i for i in self.builder._issue_order(b.start, b.end) if i not in self.builder.dropped)
            self.runs[block] = Run(order) if order else None
        return self.runs[block]

    def build(self, sequence: np.ndarray) -> tuple[PathNode, ...]:
        self.seq = [int(b) for b in sequence]
        self.pos = 0
        nodes: list[PathNode] = []
        while self.pos < len(self.seq):
            nodes.extend(self._region(None))
        return tuple(nodes)

    def _region(self, loop: CfgLoop | None) -> list[PathNode]:
        """Nodes until the sequence leaves ``loop`` or comes back to its header."""
        nodes: list[PathNode] = []
        first = True
        while self.pos < len(self.seq):
            b = self.seq[self.pos]
            if loop is not None and (b not in loop.body or (b == loop.header_block and not first)):
                break
            first = False
            inner = self.loops.get(b)
            if inner is not None and (loop is None or inner.header_block != loop.header_block):
                nodes.extend(self._loop(inner))
                continue
            run = self._run(b)
            if run is not None:
                nodes.append(run)
            self.pos += 1
        return nodes

    def _loop(self, loop: CfgLoop) -> list[PathNode]:
        iterations: list[list[PathNode]] = []
        while self.pos < len(self.seq) and self.seq[self.pos] == loop.header_block:
            iterations.append(self._region(loop))
        return self._compress(loop, iterations)

    def _compress(self, loop: CfgLoop, iterations: list[list[PathNode]]) -> list[PathNode]:
        groups: list[tuple[tuple, list[PathNode], int]] = []
        for body in iterations:
            sig = _signature(body)
            if groups and groups[-1][0] == sig:
                groups[-1] = (sig, groups[-1][1], groups[-1][2] + 1)
            else:
                groups.append((sig, body, 1))
        if len(groups) > MAX_VARIANT_RUNS:
            gathered: dict[tuple, tuple[list[PathNode], int]] = {}
            for sig, body, count in groups:
                held = gathered.get(sig)
                gathered[sig] = (body, count + (held[1] if held else 0))
            groups = [(sig, body, count) for sig, (body, count) in gathered.items()]
        out: list[PathNode] = []
        for _, body, count in groups:
            if not body:
                continue
            if all(isinstance(n, Run) for n in body):
                out.extend(self.builder._unrolled(loop, body, count))
            else:
                out.append(Loop(tuple(body), count))
        return out


BLOCK_KINDS = 8          # kinds of blocks the simulated SM runs at most (quantiles of their work)


def block_totals(execution: Any, block_sizes: np.ndarray) -> np.ndarray:
    """Warp-instructions each executed block ran (every warp's entered blocks' sizes)."""
    per_warp = np.array([int(block_sizes[p].sum()) if len(p) else 0 for p in execution.paths], dtype=np.int64)
    return per_warp.reshape(-1, execution.warps_per_block).sum(axis=1)


def representative_blocks(execution: Any, block_sizes: np.ndarray, single_wave: bool) -> list[int]:
    """The sampled blocks the simulated SM runs, in turn. Blocks that differ in work (a triangular
    grid's full, partial and empty blocks) are represented by the blocks at evenly spaced
    quantiles of the grid's work as the sample estimates it (at most :data:`BLOCK_KINDS`), so the
    SM runs their mix; a single wave runs its largest block (that SM sets the time)."""
    totals = block_totals(execution, block_sizes)
    if single_wave:
        return [int(np.argmax(totals))]
    if totals.max() <= 1.02 * max(totals.min(), 1):
        return [int(np.argmin(np.abs(totals - totals.mean())))]
    order = np.argsort(totals, kind="stable")
    weight = np.cumsum(grid_weights(execution, totals)[order])
    picks = [int(order[min(len(order) - 1, int(np.searchsorted(weight, (k + 0.5) / BLOCK_KINDS * weight[-1])))])
             for k in range(BLOCK_KINDS)]
    return list(dict.fromkeys(picks))


# the spread blocks' mean work differs from the window's by more than this share and by more than
# the window's own scatter allows (3 standard errors): the work follows the block's place in the grid
POSITIONAL_SHARE = 0.05


def grid_weights(execution: Any, totals: np.ndarray) -> np.ndarray:
    """How many of the grid's blocks each sampled block stands for, in proportion. The window
    (and the row before it) is consecutive blocks from the grid's middle; the spread blocks are
    evenly over the grid. Where their work agrees (every block alike, or work varying with the
    data rather than the place), every sampled block counts the same; where it follows the
    place in the grid (a triangular loop over columns, a causal mask), the window only tells
    about the middle of the grid: the spread blocks stand for the rest of it."""
    sample = getattr(execution, "sample", None)
    ones = np.ones(len(totals), dtype=np.float64)
    if sample is None or sample.whole or len(sample.role) != len(totals):
        return ones
    # the grid's first and last blocks (kept for the span of addresses) are its extremes, not
    # a draw of it: they count as one block each and stay out of the comparison
    spread = np.array([r == "spread" for r in sample.role], dtype=bool)
    cluster = np.array([r in ("window", "before") for r in sample.role], dtype=bool)
    if spread.sum() < 2 or cluster.sum() < 2:
        return ones
    mean_c, mean_s = float(totals[cluster].mean()), float(totals[spread].mean())
    error = 3.0 * float(totals[cluster].std()) / np.sqrt(spread.sum())
    if abs(mean_s - mean_c) <= max(POSITIONAL_SHARE * mean_c, error):
        return ones
    weights = ones.copy()
    weights[spread] = max(1.0, (sample.grid_blocks - len(totals) + spread.sum()) / spread.sum())
    return weights


def block_paths(execution: Any, builder_for: Any, single_wave: bool
                ) -> tuple[list[tuple[PathNode, ...]], tuple[tuple[int, ...], ...], int]:
    """(distinct paths, per kind of block the path of each of its warps, completion slots the
    unrolled copies use)."""
    builder = builder_for(None)
    sizes = np.array([b.end - b.start for b in builder.cfg.blocks], dtype=np.int64)
    chosen = representative_blocks(execution, sizes, single_wave)
    tracer = TracedPath(builder)
    paths: list[tuple[PathNode, ...]] = []
    index: dict[tuple, int] = {}
    kinds: list[tuple[int, ...]] = []
    # Warps that entered the same blocks get the same path: built once. Not where building
    # gave unrolled copies completion slots of their own (each build takes new ones).
    built: dict[tuple[str, bytes], tuple[tuple[PathNode, ...], tuple]] = {}
    for block in chosen:
        kind = []
        for w in execution.block_warps(block):
            sequence = np.asarray(execution.paths[w])
            key = (sequence.dtype.str, sequence.tobytes())
            hit = built.get(key)
            if hit is not None:
                nodes, sig = hit
            else:
                slots_before = builder.extra_slots
                nodes = tracer.build(sequence)
                sig = _signature(nodes)
                if builder.extra_slots == slots_before:
                    built[key] = (nodes, sig)
            if sig not in index:
                index[sig] = len(paths)
                paths.append(nodes)
            kind.append(index[sig])
        kinds.append(tuple(kind))
    return paths, tuple(dict.fromkeys(kinds)) if len(set(kinds)) == 1 else tuple(kinds), builder.extra_slots


def counted_block_paths(execution: Any, builder_for: Any) -> tuple[list[tuple[PathNode, ...]],
                                                                   tuple[tuple[int, ...], ...], int]:
    """The blocks' mix as the launch counts it (a single wave is simulated at its largest block)."""
    return block_paths(execution, builder_for, False)
