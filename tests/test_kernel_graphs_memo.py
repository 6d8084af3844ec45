"""engine.analysis.structure builds a parsed function's graphs once, builds them again when the
body changes, and keeps nothing alive: a function that is dropped is collected with its graphs
(a table of them keyed by the function's id once kept every parsed function for the life of the
process)."""

from __future__ import annotations

import gc
import weakref

from engine.analysis.structure import kernel_graphs
from engine.ptx import parse_ptx

PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u32 n)
{
  .reg .b32 %r<3>;
  ld.param.u32 %r1, [n];
  add.s32 %r2, %r1, 1;
  ret;
}
"""


def test_graphs_are_built_once_per_body() -> None:
    function = parse_ptx(PTX).kernels[0]
    cfg, defuse = kernel_graphs(function)
    assert kernel_graphs(function)[0] is cfg and kernel_graphs(function)[1] is defuse
    function.body = list(function.body or ())   # a new body (the same statements)
    again = kernel_graphs(function)
    assert again[0] is not cfg and again[1] is not defuse


def test_a_dropped_function_is_collected_with_its_graphs() -> None:
    function = parse_ptx(PTX).kernels[0]
    cfg, defuse = kernel_graphs(function)
    gone = [weakref.ref(function), weakref.ref(cfg), weakref.ref(defuse)]
    del function, cfg, defuse
    gc.collect()
    assert [ref() for ref in gone] == [None, None, None]
