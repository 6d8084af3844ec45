"""A kernel's launch-independent structure, its control-flow graph and def-use graph, built once
per parsed function: every analysis of the same kernel at another launch (an edit of the grid,
an assumption's effect, an occupancy sweep) shares them instead of rebuilding them (on a
10^5-label kernel each build is seconds)."""

from __future__ import annotations

import threading
import weakref

from engine.analysis.cfg import ControlFlowGraph, build_cfg
from engine.analysis.defuse import DefUseGraph, build_def_use
from engine.ptx.parsed_module import Function

_LOCK = threading.Lock()
# id(function) -> (a weak reference to it, its body list, the body's length, the graphs): the
# function object is a mutable dataclass (unhashable), so it is looked up by identity and checked
# to be the same object with the same body before the graphs are reused
_MEMO: dict[int, tuple[weakref.ref[Function], object, int, ControlFlowGraph, DefUseGraph]] = {}


def kernel_graphs(function: Function) -> tuple[ControlFlowGraph, DefUseGraph]:
    """``(build_cfg(function), build_def_use(function, cfg))``, built once per function."""
    key = id(function)
    with _LOCK:
        entry = _MEMO.get(key)
    if entry is not None:
        ref, body, length, cfg, defuse = entry
        if ref() is function and body is function.body and length == len(function.instructions):
            return cfg, defuse
    cfg = build_cfg(function)
    defuse = build_def_use(function, cfg)
    with _LOCK:
        _MEMO[key] = (weakref.ref(function, lambda _, k=key: _forget(k)), function.body,
                      len(function.instructions), cfg, defuse)
    return cfg, defuse


def _forget(key: int) -> None:
    with _LOCK:
        _MEMO.pop(key, None)
