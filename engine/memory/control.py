"""Control dependence: which branch decisions make a block execute.

Needed for the active lanes of a warp access: a store under ``if (i < n)`` or a load on one side
of a divergent branch is issued only by the lanes that take that side. Block ``X`` is control
dependent on edge ``A -> S`` when ``X`` post-dominates ``S`` but not ``A`` (the classic
definition); it executes when some such ``A`` executes and takes ``S``.

Loop tests are left out: a branch that leaves a loop holding ``X`` or jumps back to its header
decides the iteration count, which the trip counts and the sampled iteration already describe.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.analysis.cfg import ControlFlowGraph, immediate_dominators

_EXIT = -1  # virtual node every block without successors flows into


@dataclass(frozen=True)
class Dependence:
    """``X`` runs when ``block`` runs and its final branch goes to ``successor``;
    ``loop_test`` marks branches that only decide a loop's iterations (taken as given)."""

    block: int
    successor: int
    loop_test: bool


def post_dominators(cfg: ControlFlowGraph) -> dict[int, int]:
    """Immediate post-dominator of every block that reaches an exit (``_EXIT`` for the virtual
    exit every block without successors flows into, which maps to itself)."""
    n = len(cfg.blocks)
    exit_node = n                      # _EXIT's number in the lists
    reverse_succ: list[list[int]] = [[] for _ in range(n + 1)]
    reverse_pred: list[list[int]] = [[] for _ in range(n + 1)]
    for b in cfg.blocks:
        for s in dict.fromkeys(b.successors):
            reverse_succ[s].append(b.index)
            reverse_pred[b.index].append(s)
        if not b.successors:
            reverse_succ[exit_node].append(b.index)
            reverse_pred[b.index].append(exit_node)
    return {(_EXIT if b == exit_node else b): (_EXIT if d == exit_node else d)
            for b, d in immediate_dominators(reverse_succ, reverse_pred, exit_node).items()}


def control_dependences(cfg: ControlFlowGraph) -> dict[int, list[Dependence]]:
    """For every block, the branch edges it is control dependent on."""
    # Blocks that cannot reach an exit (infinite loops) have no post-dominator; they keep no
    # dependences, i.e. they are taken to run whenever reached.
    ipdom = post_dominators(cfg)
    out: dict[int, list[Dependence]] = {b.index: [] for b in cfg.blocks}
    for a in cfg.blocks:
        if len(set(a.successors)) < 2 or a.index not in ipdom:
            continue
        stop = ipdom[a.index]
        tested = _tested_loops(cfg, a.index)   # one set: a membership test per dependent block
        for s in dict.fromkeys(a.successors):
            runner = s
            seen: set[int] = set()
            while runner != stop and runner in ipdom and runner not in seen and runner != _EXIT:
                seen.add(runner)
                out[runner].append(Dependence(a.index, s, runner in tested))
                runner = ipdom[runner]
    return out


def _tested_loops(cfg: ControlFlowGraph, branch_block: int) -> frozenset[int]:
    """The blocks of the loops whose iterations ``branch_block``'s branch decides: loops holding
    it that one of its successors leaves or returns to the header of. A dependent block in one
    of them depends on a loop test. Computed once per branch (not per dependent block): with a
    thousand nested loops, a check per (branch, dependent, loop) was cubic."""
    successors = cfg.blocks[branch_block].successors
    return frozenset().union(*(loop.body for loop in cfg.loops
                               if branch_block in loop.body
                               and any(s not in loop.body or s == loop.header_block for s in successors)))
