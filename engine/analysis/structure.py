"""A kernel's launch-independent structure, its control-flow graph and def-use graph, built once
per parsed function: every analysis of the same kernel at another launch (an edit of the grid,
an assumption's effect, an occupancy sweep) shares them instead of rebuilding them (on a
10^5-label kernel each build is seconds)."""

from __future__ import annotations

from engine.analysis.cfg import ControlFlowGraph, build_cfg
from engine.analysis.defuse import DefUseGraph, build_def_use
from engine.ptx.parsed_module import Function

# The graphs live on the function object itself, so that they go when it goes. (Both graphs hold
# the function: a table beside it, keyed by its id, kept every parsed function alive for the
# life of the process, and its clean-up ran only at exit, after the module was torn down.)
_ATTRIBUTE = "_warpline_graphs"


def kernel_graphs(function: Function) -> tuple[ControlFlowGraph, DefUseGraph]:
    """``(build_cfg(function), build_def_use(function, cfg))``, built once per function (again
    when its body was replaced or changed length). Two threads that ask at once may each build
    them; either result is the same."""
    entry = getattr(function, _ATTRIBUTE, None)
    if entry is not None:
        body, length, cfg, defuse = entry
        if body is function.body and length == len(function.instructions):
            return cfg, defuse
    cfg = build_cfg(function)
    defuse = build_def_use(function, cfg)
    try:
        setattr(function, _ATTRIBUTE, (function.body, len(function.instructions), cfg, defuse))
    except AttributeError:      # a slotted stand-in for a Function: built again next time
        pass
    return cfg, defuse
