"""Reaching definitions: def-use edges across blocks, loop-carried edges, the u vector."""

from __future__ import annotations

import pytest

from engine.analysis.cfg import build_cfg
from engine.analysis.defuse import build_def_use
from engine.ptx.parsed_module import Function

parse_ptx = pytest.importorskip("engine.ptx").parse_ptx


def kernel(body: str) -> Function:
    text = (".version 8.0\n.target sm_90\n.address_size 64\n"
            ".visible .entry k(.param .u32 n, .param .u64 ptr)\n{\n.reg .pred %p<9>;\n"
            ".reg .b32 %r<40>;\n.reg .f32 %f<20>;\n.reg .b64 %rd<20>;\n"
            f"{body}\n}}\n")
    return parse_ptx(text, "test.ptx").kernel("k")


def analyse(body: str):
    f = kernel(body)
    cfg = build_cfg(f)
    return f, build_def_use(f, cfg)


def edge_set(du) -> set[tuple[int, int, str, bool]]:
    return {(e.producer, e.consumer, e.register, e.loop_carried) for e in du.edges}


def test_definitions_merge_at_join() -> None:
    _, du = analyse("""
    ld.param.u32 %r1, [n];           // 0
    mov.u32 %r2, %tid.x;             // 1
    setp.lt.s32 %p1, %r2, %r1;       // 2
    @%p1 bra THEN;                   // 3
    mov.u32 %r3, 1;                  // 4
    bra.uni JOIN;                    // 5
THEN:
    mov.u32 %r3, 2;                  // 6
JOIN:
    add.s32 %r4, %r3, %r2;           // 7
    ret;                             // 8
""")
    assert du.reaching(7, "%r3") == (4, 6)
    assert du.producers(7) == [1, 4, 6]
    assert du.consumers(1) == [2, 7]
    assert du.producers(3) == [2]      # the guard predicate is a use
    assert (2, 3, "%p1", False) in edge_set(du)
    assert du.graph.edges[1, 7]["registers"] == ("%r2",)
    assert du.first_user(0) == 2 and du.first_user(1) == 2 and du.first_user(7) is None
    assert du.u_vector() == [2, 2, 3, None, 7, None, 7, None, None]


def test_guarded_definition_does_not_kill() -> None:
    _, du = analyse("""
    mov.u32 %r1, 0;                  // 0
    mov.u32 %r2, %tid.x;             // 1
    setp.eq.s32 %p1, %r2, 0;         // 2
    @%p1 mov.u32 %r1, 5;             // 3
    add.s32 %r3, %r1, 1;             // 4
    mov.u32 %r1, 7;                  // 5
    add.s32 %r4, %r1, 1;             // 6
""")
    assert du.reaching(4, "%r1") == (0, 3)
    assert du.reaching(6, "%r1") == (5,)
    assert du.defs_of("%r1") == (0, 3, 5)


def test_loop_carried_edges() -> None:
    _, du = analyse("""
    mov.u32 %r1, 0;                  // 0
    mov.f32 %f1, 0f00000000;         // 1
LOOP:
    cvt.rn.f32.s32 %f2, %r1;         // 2
    add.f32 %f1, %f1, %f2;           // 3
    add.s32 %r1, %r1, 1;             // 4
    setp.lt.s32 %p1, %r1, 10;        // 5
    @%p1 bra LOOP;                   // 6
    mov.b32 %r2, %f1;                // 7
""")
    edges = edge_set(du)
    # %r1 at the top of the loop: from the init (same pass) or the previous iteration's add.
    assert (0, 2, "%r1", False) in edges
    assert (4, 2, "%r1", True) in edges
    assert (4, 4, "%r1", True) in edges          # the add reads its own earlier result
    assert (0, 4, "%r1", False) in edges
    assert (4, 5, "%r1", False) in edges          # same iteration
    assert (3, 3, "%f1", True) in edges and (1, 3, "%f1", False) in edges
    assert (3, 7, "%f1", False) in edges          # after the loop: not carried
    assert du.graph.edges[4, 2]["loop_carried"] is True
    assert du.first_user(4) == 5 and du.first_user(3) == 7 and du.first_user(2) == 3
    assert du.reaching_at_entry(1, "%r1") == (0, 4)
    assert du.reaching_at_exit(1, "%r1") == (4,)


def test_vector_and_predicate_registers() -> None:
    _, du = analyse("""
    ld.param.u64 %rd1, [ptr];                        // 0
    ld.global.v2.f32 {%f1, %f2}, [%rd1];             // 1
    add.f32 %f3, %f1, %f2;                           // 2
    setp.gt.f32 %p1|%p2, %f3, 0f00000000;            // 3
    selp.f32 %f4, %f1, %f3, %p2;                     // 4
    st.global.v2.f32 [%rd1+8], {%f3, %f4};           // 5
""")
    assert du.reaching(2, "%f1") == (1,) and du.reaching(2, "%f2") == (1,)
    assert du.producers(4) == [1, 2, 3]
    assert du.producers(5) == [0, 2, 4]
    assert du.first_user(0) == 1 and du.first_user(1) == 2


def test_five_thousand_instructions() -> None:
    # Speed is measured by bench/bench_frontend.py, not asserted here (a timed unit test fails on a
    # busy machine); this checks the result on a 5,000-instruction kernel.
    lines = ["mov.u32 %r1, 0;", "mov.u32 %r2, 1;", "LOOP:"]
    for i in range(5000):
        a, b = 3 + i % 30, 3 + (i + 7) % 30
        lines.append(f"add.s32 %r{a}, %r{b}, %r{a};")
        if i % 50 == 49:
            lines.append(f"setp.lt.s32 %p1, %r{a}, 99;")
            lines.append(f"@%p1 bra SKIP{i};")
            lines.append(f"SKIP{i}:")
    lines += ["add.s32 %r1, %r1, 1;", "setp.lt.s32 %p2, %r1, 4;", "@%p2 bra LOOP;", "ret;"]
    f = kernel("\n".join(lines))
    cfg = build_cfg(f)
    du = build_def_use(f, cfg)
    assert len(f.instructions) > 5000 and len(cfg.loops) == 1
    assert len(du.edges) > 10000
