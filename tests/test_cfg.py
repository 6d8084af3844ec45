"""Control-flow graph: blocks, edges, dominators, natural loops and their nesting."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from engine.analysis.cfg import build_cfg
from engine.ptx.parsed_module import Function

parse_ptx = pytest.importorskip("engine.ptx").parse_ptx


def kernel(body: str, params: str = ".param .u32 n") -> Function:
    text = (".version 8.0\n.target sm_90\n.address_size 64\n"
            f".visible .entry k({params})\n{{\n.reg .pred %p<9>;\n.reg .b32 %r<40>;\n"
            f".reg .f32 %f<20>;\n.reg .b64 %rd<20>;\n{body}\n}}\n")
    return parse_ptx(text, "test.ptx").kernel("k")


IF_ELSE = """
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    setp.lt.s32 %p1, %r2, %r1;
    @%p1 bra THEN;
    mov.u32 %r3, 1;
    bra.uni JOIN;
THEN:
    mov.u32 %r3, 2;
JOIN:
    add.s32 %r4, %r3, %r2;
    ret;
"""


def test_if_else_blocks_and_edges() -> None:
    cfg = build_cfg(kernel(IF_ELSE))
    spans = [(b.label, b.start, b.end) for b in cfg.blocks]
    assert spans == [(None, 0, 4), (None, 4, 6), ("THEN", 6, 7), ("JOIN", 7, 9)]
    assert sorted(cfg.blocks[0].successors) == [1, 2]   # guarded branch: taken + fall-through
    assert cfg.blocks[1].successors == [3]               # bra.uni: no fall-through
    assert cfg.blocks[2].successors == [3]
    assert sorted(cfg.blocks[3].predecessors) == [1, 2]
    assert cfg.entry == 0 and cfg.exit_blocks == [3]
    assert cfg.dominators[3] == 0 and cfg.dominators[1] == 0
    assert cfg.dominates(0, 3) and not cfg.dominates(1, 3)
    assert cfg.loops == [] and cfg.loop_of(2) is None
    assert cfg.block_of(5).index == 1 and cfg.block_of(7).label == "JOIN"
    assert cfg.blocks[1].name == "B1"
    with pytest.raises(IndexError):
        cfg.block_of(9)


NESTED = """
    mov.u32 %r1, 0;
OUTER:
    mov.u32 %r2, 0;
INNER:
    add.s32 %r2, %r2, 1;
    setp.lt.s32 %p1, %r2, 8;
    @%p1 bra INNER;
    add.s32 %r1, %r1, 1;
    setp.lt.s32 %p2, %r1, 4;
    @%p2 bra OUTER;
    @%p2 ret;
    exit;
"""


def test_nested_natural_loops() -> None:
    cfg = build_cfg(kernel(NESTED))
    names = {lp.key: lp for lp in cfg.loops}
    assert set(names) == {"OUTER", "INNER"}
    outer, inner = names["OUTER"], names["INNER"]
    assert (outer.depth, inner.depth) == (1, 2)
    assert inner.parent == outer.header_block and outer.parent is None
    assert inner.body < outer.body
    assert inner.latches == (inner.header_block,)
    assert cfg.loops[0] is outer  # outermost first
    assert cfg.loop_of(cfg.block_of(3)) is inner
    assert cfg.loop_of(cfg.block_of(5)) is outer
    assert cfg.loop_of(cfg.block_of(0)) is None
    assert sorted(cfg.back_edges) == sorted([(inner.header_block, inner.header_block),
                                             (outer.latches[0], outer.header_block)])
    # A guarded ret ends a path and falls through; the exit block ends it for good.
    guarded = cfg.block_of(8)
    assert guarded.index in cfg.exit_blocks and cfg.block_of(9).index in guarded.successors
    assert cfg.block_of(9).index in cfg.exit_blocks


def test_irreducible_cycle_has_no_loop() -> None:
    body = """
    ld.param.u32 %r1, [n];
    setp.eq.s32 %p1, %r1, 0;
    @%p1 bra B;
A:
    add.s32 %r1, %r1, 1;
    bra.uni B;
B:
    add.s32 %r1, %r1, 2;
    setp.lt.s32 %p2, %r1, 9;
    @%p2 bra A;
    ret;
"""
    cfg = build_cfg(kernel(body))
    assert cfg.loops == []        # neither A nor B dominates the other
    assert cfg.graph.has_edge(cfg.block_of(6).index, cfg.block_of(3).index)


def test_unresolved_brx_targets_every_label() -> None:
    body = """
    ld.param.u32 %r1, [n];
    brx.idx %r1, TABLE;
L0:
    mov.u32 %r2, 0;
    ret;
L1:
    mov.u32 %r2, 1;
    ret;
"""
    f = kernel(body)
    cfg = build_cfg(f)
    assert sorted(cfg.blocks[0].successors) == [1, 2]
    # With the table known (``Function.branch_targets``, when the parser provides it), only
    # its labels are successors.
    f.branch_targets = {"TABLE": ("L1",)}  # type: ignore[attr-defined]
    assert build_cfg(f).blocks[0].successors == [2]


def test_empty_kernel() -> None:
    cfg = build_cfg(kernel(""))
    assert cfg.blocks == [] and cfg.entry is None and cfg.loops == []


CUDA = r"""
extern "C" __global__ void branchy(float *y, int n) {
    int t = threadIdx.x;
    if (t < n) y[t] = y[t] * 2.f; else y[t] = 0.f;
}
extern "C" __global__ void nest(float *y, int n, int m) {
    float acc = 0;
    #pragma unroll 1
    for (int i = 0; i < n; i++) {
      #pragma unroll 1
      for (int j = 0; j < m; j++) acc += y[i*m+j];
    }
    y[threadIdx.x] = acc;
}
"""


@pytest.fixture(scope="module")
def nvcc_module(tmp_path_factory: pytest.TempPathFactory):
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    work: Path = tmp_path_factory.mktemp("cfg")
    (work / "k.cu").write_text(CUDA)
    subprocess.run(["nvcc", "-ptx", "-arch=sm_90", "k.cu", "-o", "k.ptx"], cwd=work, check=True)
    return parse_ptx((work / "k.ptx").read_text(), "k.ptx")


def test_nvcc_nested_loops(nvcc_module) -> None:
    cfg = build_cfg(nvcc_module.kernel("nest"))
    assert sorted(lp.depth for lp in cfg.loops) == [1, 2]
    outer, inner = cfg.loops
    assert inner.parent == outer.header_block and inner.body < outer.body
    # every loop block is dominated by its header
    for lp in cfg.loops:
        assert all(cfg.dominates(lp.header_block, b) for b in lp.body)
        assert all(e not in lp.body for e in lp.exits)


def test_nvcc_branches_join(nvcc_module) -> None:
    cfg = build_cfg(nvcc_module.kernel("branchy"))
    assert cfg.loops == []
    joins = [b for b in cfg.blocks if len(b.predecessors) >= 2]
    assert joins, "the if/else must meet again"
    for b in cfg.blocks:  # every block is reachable and has a consistent edge list
        assert b.index in cfg.dominators
        for s in b.successors:
            assert b.index in cfg.blocks[s].predecessors
