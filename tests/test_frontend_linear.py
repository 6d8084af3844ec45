"""The PTX front end stays linear: deep nesting, many labels, deeply nested loops, huge kernels.

Sizes here are modest (the suite must stay fast); ``bench/bench_frontend.py`` runs the big ones.
Each case also runs under a tight recursion limit, which proves that no walk recurses on the
nesting depth. The fast statement path of the parser and the sparse def-use solver are checked
against the general token path and the bitset solver, on real compiler output and on mutations.
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import random
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine.ptx.instructions as ptx_instructions
import engine.ptx.parser as ptx_parser
from engine.analysis import analyze_kernel
from engine.analysis.cfg import build_cfg
from engine.analysis.defuse import build_def_use, reaching_definitions, use_sparse
from engine.errors import PtxSyntaxError
from engine.ptx import load_ptx, parse_ptx
from engine.ptx.gc_pause import paused_gc
from tests import ptx_gen
from tests.test_ptx_fuzz import SEEDS, mutate

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted([*(ROOT / "samples").rglob("*.ptx"), *(ROOT / "tests" / "corpus").rglob("*.ptx"),
                *(ROOT / "tests" / "data").rglob("*.ptx")])


@contextlib.contextmanager
def shallow_stack(frames: int):
    """Allow only ``frames`` more Python frames than the caller has: any recursion on the size
    of the input fails with RecursionError."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + frames)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def _dump(module) -> str:
    return repr((module.version, module.target, module.address_size, module.files,
                 module.prototypes, module.variables, module.functions))


def _parse_both(text: str) -> tuple[str, str]:
    """(fast path result, token path result): the repr of the module or the error message."""
    out = []
    try:
        for fast in (True, False):
            ptx_parser.FAST_PATHS = fast
            try:
                out.append(_dump(parse_ptx(text, "f.ptx")))
            except PtxSyntaxError as exc:
                out.append(f"error: {exc}")
    finally:
        ptx_parser.FAST_PATHS = True
    return out[0], out[1]


# ---------------------------------------------------------------- both parser paths agree


@pytest.mark.parametrize("path", FILES[::5], ids=[str(p.relative_to(ROOT)) for p in FILES[::5]])
def test_fast_path_matches_token_path(path):
    fast, slow = _parse_both(path.read_text())
    assert not fast.startswith("error")
    assert fast == slow


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.sampled_from(sorted(SEEDS)), where=st.integers(0, 10**6),
       junk=st.text(st.sampled_from(list("{}[]();:,.@!|+-_%$\"/*\n\t 0123456789abfxXU#")),
                    min_size=1, max_size=5))
def test_both_paths_agree_on_mutated_statements(seed, where, junk):
    # Insert junk inside a body line: results or errors (message and position) must be equal.
    text = mutate(SEEDS[seed], [("insert", where, junk)])
    fast, slow = _parse_both(text)
    assert fast == slow


@pytest.mark.parametrize("statement", [
    "add.s32 %r1, %r2, 12abc;", "ld.global.f32 %f1, [%rd1+1.5];", "mov.b32 %r1, -;",
    "ld.global.v2.f32 {%f1, %f2}, [%rd1+-8];", "@!%p1 bra $L__BB0_1;", "st.global.f32 [%rd1], %f1",
    "mov.u32 %r1, %tid.x; // done", "add.s32 %r1 , %r2 ,%r3 ;", "setp.lt.s32 %r1|%p1, %r2, 4;",
    "mov.f32 %f1, 0f3F800000;", "mov.u32 %r1, 0x1F;", "add.s32 %r1, %r1, - 3;", "ret ;",
    "mov.u32 %r1, %r2::x;", "ld.param.u64 %rd1, [p_0 + 8];", "selp.b32 %r1, 1, 0, !%p1;",
    ".loc 1 09 5", ".loc 1 12", ".loc 1 12 3; add.s32 %r1, %r1, 1;", ".loc\t1 7 2 // c",
    "LAB: // c\n.callprototype (.param .b32 _) _ ();", "x : add.s32 %r1, %r1, 1;", "y::z: ret;",
    "{ add.s32 %r1, %r1, 1; } ;", "@%p1 bra.uni $L__BB0_1; /* c */ ret;",
])
def test_both_paths_agree_on_edge_statements(statement):
    text = (".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p_0)\n"
            "{\n.reg .pred %p<3>;\n.reg .b32 %r<9>;\n.reg .f32 %f<9>;\n.reg .b64 %rd<9>;\n"
            f"{statement}\n$L__BB0_1:\nret;\n}}\n")
    fast, slow = _parse_both(text)
    assert fast == slow


# ---------------------------------------------------------------- deep and wide inputs


def test_deep_scopes_parse_in_linear_time():
    def best(depth: int) -> float:
        text = ptx_gen.nested_scopes(depth)
        times = []
        for _ in range(3):
            start = time.perf_counter()
            parse_ptx(text)
            times.append(time.perf_counter() - start)
        return min(times)

    with shallow_stack(60):
        small, large = best(4000), best(16000)
    assert large < 8 * small + 0.05  # quadratic would be 16x
    function = parse_ptx(ptx_gen.nested_scopes(16000)).kernel("nest")
    assert len(function.instructions) == 16000 + 3


def test_scoped_labels_resolve_to_their_own_scope():
    depth = 3000
    with shallow_stack(60):
        function = parse_ptx(ptx_gen.nested_scopes(depth, labels=True)).kernel("nest")
    # Outermost SKIP keeps its name, the others are SKIP~1 .. SKIP~(depth-1), each branch
    # pointing at the label of its own scope (the instruction after it).
    assert len(function.labels) == depth
    branches = [i for i in function.instructions if i.opcode == "bra"]
    assert [b.branch_target for b in branches] == ["SKIP"] + [f"SKIP~{n}" for n in range(1, depth)]
    for b in branches:
        assert function.labels[b.branch_target] == b.index + 2
    with shallow_stack(700):
        analysis = analyze_kernel(function)
    assert analysis.cfg.loops == []


def test_many_labels_parse_and_analyse():
    n = 6000
    with shallow_stack(60):
        module = parse_ptx(ptx_gen.many_labels(n))
    function = module.kernel("labels")
    assert len(function.labels) == n
    with shallow_stack(700):
        analysis = analyze_kernel(function, None, module)
    cfg = analysis.cfg
    assert len(cfg.blocks) == n + n // 2 + 1 and cfg.loops == []
    # Every join reads %r2 from the then-part and from the join before: two definitions.
    join = function.labels["$L__BB0_101"]
    assert len(analysis.defuse.reaching(join, "%r2")) == 2


def test_deeply_nested_loops_are_analysed():
    depth = 600
    module = parse_ptx(ptx_gen.nested_loops(depth))
    with shallow_stack(700):
        analysis = analyze_kernel(module.kernel("loops"), None, module)
    loops = {lp.key: lp for lp in analysis.loop_info}
    assert len(loops) == depth
    assert loops["$L__H0"].depth == 1 and loops["$L__H0"].parent is None
    assert loops[f"$L__H{depth - 1}"].depth == depth
    assert loops[f"$L__H{depth - 1}"].parent == f"$L__H{depth - 2}"
    assert all(tc.value == 2 for tc in analysis.trip_counts.values())
    cfg = analysis.cfg
    inner = cfg.loop_by_header(cfg.loops[-1].header_block)
    assert all(cfg.dominates(inner.header_block, b) for b in inner.body)


def test_a_large_kernel_parses_compactly():
    n = 40000
    module = parse_ptx(ptx_gen.straight_kernel(n))
    body = module.kernel("straight").instructions
    assert len(body) == n
    # Equal operands are shared objects, and equal .loc positions one CudaLocation.
    regs = {id(o) for i in body for o in i.operands if o.text == "%rd2"}
    assert len(regs) == 1
    assert len({id(i.cuda_location) for i in body if i.cuda_location is not None}) <= n // 8 + 1
    assert body[-2].cuda_location is not None and body[-2].cuda_location.file == "/src/straight.cu"


# ---------------------------------------------------------------- def-use: both solvers agree


def _registers(function) -> list[str]:
    return sorted({r for i in function.instructions for r in i.dests + i.srcs}) + ["%unused"]


def _assert_same_def_use(function) -> None:
    cfg = build_cfg(function)
    regs = _registers(function)
    for skip in (frozenset(), frozenset(cfg.back_edges[:1]), frozenset(cfg.edges()[::3])):
        dense = build_def_use(function, cfg, skip, sparse=False)
        sparse = build_def_use(function, cfg, skip, sparse=True)
        assert dense.edges == sparse.edges
        for b in range(len(cfg.blocks)):
            for r in regs:
                assert dense.reaching_at_entry(b, r) == sparse.reaching_at_entry(b, r)
                assert dense.reaching_at_exit(b, r) == sparse.reaching_at_exit(b, r)
        only_dense = reaching_definitions(function, cfg, skip, sparse=False)
        only_sparse = reaching_definitions(function, cfg, skip, sparse=True)
        step = max(1, len(function.instructions) // 40)
        for i in range(0, len(function.instructions), step):
            for r in regs:
                defs = only_dense.reaching(i, r)
                assert defs == only_sparse.reaching(i, r) == dense.reaching(i, r)
                assert [only_dense.is_loop_carried(d, i, r) for d in defs] == \
                    [only_sparse.is_loop_carried(d, i, r) for d in defs]


def _random_kernel(rng: random.Random) -> str:
    blocks = rng.randint(1, 12)
    out = [".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u32 n)\n{\n"
           ".reg .pred %p<4>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\nld.param.u32 %r7, [n];\n"]
    for b in range(blocks):
        out.append(f"L{b}:\n")
        for _ in range(rng.randint(0, 3)):
            d, a, c = rng.randint(1, 6), rng.randint(1, 7), rng.randint(1, 7)
            guard = f"@%p{rng.randint(1, 3)} " if rng.random() < 0.2 else ""
            out.append(rng.choice([
                f"{guard}add.s32 %r{d}, %r{a}, {rng.randint(1, 3)};\n",
                f"{guard}mov.u32 %r{d}, {rng.randint(0, 5)};\n",
                f"setp.lt.s32 %p{rng.randint(1, 3)}, %r{a}, %r{c};\n",
                f"{guard}mov.b64 {{%r{d}, %r{a}}}, %rd1;\n",  # two destinations
                f"{guard}add.cc.u32 %r{d}, %r{a}, 1;\naddc.u32 %r{c}, %r{c}, 0;\n",
            ]))
        kind = rng.random()
        if kind < 0.35:
            out.append(f"@%p{rng.randint(1, 3)} bra L{rng.randint(0, blocks)};\n")
        elif kind < 0.5:
            out.append(f"bra L{rng.randint(0, blocks)};\n")
        elif kind < 0.55:
            out.append("ret;\n")
    out.append(f"L{blocks}:\nret;\n}}\n")
    return "".join(out)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32))
def test_sparse_and_bitset_def_use_agree_on_random_kernels(seed):
    _assert_same_def_use(parse_ptx(_random_kernel(random.Random(seed))).kernel("k"))


@pytest.mark.parametrize("name", ["samples/ptx/hotspot.sm_90.ptx", "samples/ptx/knn.sm_52.ptx",
                                  "tests/corpus/numba/black_scholes.cc52.ptx",
                                  "tests/corpus/nvcc/precision.sm_90.ptx"])
def test_sparse_and_bitset_def_use_agree_on_compiler_output(name):
    for function in load_ptx(ROOT / name).functions:
        if function.is_definition and function.instructions:
            _assert_same_def_use(function)


def test_an_instruction_writing_two_registers_defines_each_separately():
    # mov.b64 {%r1, %r2} writes both; %r2 alone is then rewritten. In the next block %r1 still
    # comes from the mov and %r2 only from its rewrite.
    body = ("mov.b64 {%r1, %r2}, %rd1;\nmov.u32 %r2, 7;\nbra NEXT;\nNEXT:\n"
            "add.s32 %r3, %r1, %r2;\nret;")
    text = (".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n"
            f".reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n{body}\n}}\n")
    function = parse_ptx(text).kernel("k")
    for sparse in (False, True):
        du = build_def_use(function, build_cfg(function), sparse=sparse)
        assert du.reaching(3, "%r1") == (0,) and du.reaching(3, "%r2") == (1,)


def test_large_kernels_take_the_sparse_solver():
    function = parse_ptx(ptx_gen.many_labels(12000)).kernel("labels")
    cfg = build_cfg(function)
    assert use_sparse(function, cfg)
    assert build_def_use(function, cfg).sparse



# ---------------------------------------------------------------- line shapes (fast path)
# The fast path learns the shape of a line (its digits made 0) from one statement it matched,
# then reads every later line of that shape from the learnt spans, and remembers whole lines.
# Lines of one shape must still give what the token path gives, whatever their digits.

_SHAPED_LINES = [
    "\tadd.s32 \t%r{0}, %r{1}, {2};",            # "09" is no number, "012" is octal
    "\tmad.lo.s32 \t%r{0}, %r{1}, %r{2}, %r{0};",
    "\t.loc\t{0} {1} {2}",                       # leading zeros: octal, or an error
    "\t.loc\t1 {1};",
    "\tmov.u64 \t%clock{0}, %rd{1};",            # %clock64 is special, %clock32 is not
    "\tmov.u32 \t%pm{0}, {1};",                  # %pm0..%pm9 are special, %pm10 is not
    "\tadd.s32 \tt{0}, t{1}, {2};",              # bare names: registers only within t<4>
    "\t@%p{0} add.s32 \t%r{1}, %r{2}, {0};",
    "\t@!%p{0} bra \t$L__BB0_{1};",
    "\tld.global.v2.f32 \t{{%f{0}, %f{1}}}, [%rd{2}+{1}];",
    "\tst.global.f32 \t[%rd{0}+-{1}], %f{2};",
    "\tadd.s32 %r{0} , %r{1} ,%r{2} ;",
    "\tsetp.lt.s32 \t%r{0}|%p{1}, %r{2}, 4;",
    "\tmov.f32 \t%f{0}, 0f3F8000{1}{2};",
    "\tadd.s32 \t%r{0},  %r{1}, {2};  // {2}",
    "    sub.s32 %r{0}, %r{1}, %r{2};\r",
    "\tadd.s32 \t%r{0}, %r{1}, {2}; add.s32 \t%r{1}, %r{0}, 1;",
    "\tmov.u32 \t%r{0}, %tid.x;",
    "\tcvt.u64.u32 \t%rd{0}, %r{1};",
]
_DIGITS = ["0", "1", "3", "7", "9", "09", "012", "10", "32", "64", "\u0661", "1\u0661"]


def _shaped_kernel(lines: list[str], declare_late: bool = False) -> str:
    head = (".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p_0)\n{\n"
            ".reg .pred %p<10>;\n.reg .b32 %r<100>;\n.reg .f32 %f<100>;\n.reg .b64 %rd<100>;\n")
    early = "" if declare_late else ".reg .b32 t<4>;\n"
    half = len(lines) // 2
    late = ".reg .b32 t<4>;\n" if declare_late else ""
    return (head + early + "\n".join(lines[:half]) + "\n" + late + "\n".join(lines[half:])
            + "\n$L__BB0_1:\nret;\n}\n.file 1 \"k.cu\"\n")


@pytest.mark.parametrize("template", _SHAPED_LINES)
def test_lines_of_one_shape_agree_with_the_token_path(template):
    rng = random.Random(template)
    lines = [template.format(*(rng.choice(_DIGITS[:4]) for _ in range(3))) for _ in range(3)]
    for a in _DIGITS:  # every digit string in every place, after the shape is learnt
        for b in ("1", "32", a):
            lines.append(template.format(a, b, rng.choice(_DIGITS)))
            lines.append(template.format(b, a, "1"))
    for declare_late in (False, True):
        text = _shaped_kernel(lines, declare_late)
        fast, slow = _parse_both(text)
        assert fast == slow
    for line in lines:  # each line alone too: when one is wrong, the error must be that line's
        fast, slow = _parse_both(_shaped_kernel(lines[:3] + [line]))
        assert fast == slow, line


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(_SHAPED_LINES), st.lists(st.sampled_from(_DIGITS), min_size=3,
                                                                   max_size=3)),
                min_size=1, max_size=40),
       st.booleans())
def test_random_shaped_lines_agree_with_the_token_path(picks, declare_late):
    lines = [template.format(*digits) for template, digits in picks]
    fast, slow = _parse_both(_shaped_kernel(lines * 2, declare_late))
    assert fast == slow


@pytest.mark.parametrize("fresh", [True, False])
def test_small_caches_do_not_change_the_result(monkeypatch, fresh):
    # With tiny limits every cache of the fast path is emptied again and again, and whole-line
    # look-ups are reviewed many times (switched off in fresh code, where no line recurs, and
    # kept in unrolled code). The module must not change.
    text = ptx_gen.straight_kernel(3000, fresh=fresh)
    reference = _parse_both(text)[1]
    monkeypatch.setattr(ptx_parser, "_LINE_LIMIT", 32)
    monkeypatch.setattr(ptx_parser, "_SHAPE_LIMIT", 4)
    monkeypatch.setattr(ptx_parser, "CACHE_LIMIT", 16)
    monkeypatch.setattr(ptx_instructions, "CACHE_LIMIT", 16)
    parser = ptx_parser._Parser(text, "f.ptx")
    with ptx_parser.paused_gc():
        module = parser.parse()
    assert _dump(module) == reference
    if not fresh:
        assert parser.rows_review[0]  # unrolled code keeps them


def test_a_parse_leaves_what_it_built_in_the_oldest_generation():
    # The collector's next young-generation pass must not scan a freshly parsed kernel.
    was_enabled = gc.isenabled()
    module = parse_ptx(ptx_gen.straight_kernel(2000))
    assert gc.isenabled() == was_enabled
    instr = module.kernel("straight").instructions[100]
    assert gc.is_tracked(instr)
    assert any(o is instr for o in gc.get_objects(generation=2))


def test_promotion_leaves_objects_frozen_by_others_alone():
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with paused_gc(promote=True):
            young = [[]]
        assert gc.get_freeze_count() == frozen  # not unfrozen
        assert not any(o is young for o in gc.get_objects(generation=2))
    finally:
        gc.unfreeze()
