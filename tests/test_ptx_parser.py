"""Unit tests of the PTX front end: one small snippet per construct, plus real nvcc output."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from engine.errors import PtxSyntaxError, WarplineError
from engine.ptx import load_ptx, parse_ptx
from engine.ptx.lexer import tokenize
from engine.ptx.parsed_module import CudaLocation

DATA = Path(__file__).parent / "data" / "ptx"
HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"


def body(code: str, header: str = HEADER, decls: str = ".reg .b32 %r<10>;\n.reg .pred %p<4>;\n"):
    """Parse ``code`` as the body of one kernel and return that kernel."""
    module = parse_ptx(f"{header}.visible .entry k()\n{{\n{decls}{code}\n}}\n", "t.ptx")
    return module.kernel("k")


def one(code: str, **kw):
    instructions = body(code, **kw).instructions
    assert len(instructions) == 1, [i.text for i in instructions]
    return instructions[0]


# ---------------------------------------------------------------------------- module directives
def test_module_directives_with_and_without_semicolons():
    m = parse_ptx(".version 7.8;\n.target sm_90, debug\n.address_size 64;\n")
    assert m.version == "7.8" and m.target == ("sm_90", "debug") and m.address_size == 64
    assert m.sm_version == 90 and m.functions == []


def test_old_isa_header_and_target_options():
    m = parse_ptx(".version 1.4\n.target sm_13, map_f64_to_f32\n")
    assert m.version == "1.4" and m.target == ("sm_13", "map_f64_to_f32") and m.address_size is None


def test_dwarf_sections_are_skipped_and_parsing_goes_on():
    text = HEADER + (
        ".visible .entry k() { ret; }\n"
        "\t.file\t1 \"/p/k.cu\", 1700000000, 1234\n"
        ".section .debug_info\n{\n.b32 99\n.b8 2\n$L__info_string0:\n.b8 95,90,0\n.b64 $L__tmp10\n"
        ".b32 .debug_loc+266\n}\n"
        ".section .debug_macinfo { .b8 0 }\n"
        ".visible .entry after() { exit; }\n"
    )
    m = parse_ptx(text)
    assert [k.name for k in m.kernels] == ["k", "after"]
    assert m.files == {1: "/p/k.cu"}


# ---------------------------------------------------------------------------- functions, params
def test_entry_params_alignment_pointer_and_arrays():
    m = parse_ptx(HEADER + """
.visible .entry k(
    .param .u32 n,
    .param .align 8 .b8 s[24],
    .param .u64 .ptr .global .align 16 x,
    .param .v2 .f32 pair
)
.maxntid 256, 1, 1
.minnctapersm 2
.maxnreg 64
.explicitcluster
.reqnctapercluster 2, 1, 1
{
    ret;
}
""")
    k = m.kernel()
    n, s, x, pair = k.params
    assert (n.name, n.type, n.size_bytes) == ("n", "u32", 4)
    assert (s.type, s.size_bytes, s.align, s.array_size) == ("b8", 24, 8, 24)
    assert (x.type, x.pointer_space, x.pointer_align, x.align, x.size_bytes) == ("u64", "global", 16, None, 8)
    assert pair.size_bytes == 8
    assert k.directives == {"maxntid": (256, 1, 1), "minnctapersm": (2,), "maxnreg": (64,),
                            "explicitcluster": (), "reqnctapercluster": (2, 1, 1)}
    assert k.linkage == "visible" and k.is_kernel and k.location.line == 5


def test_func_declarations_return_params_and_linkage():
    m = parse_ptx(HEADER + """
.extern .func  (.param .b32 func_retval0) vprintf
(
	.param .b64 vprintf_param_0,
	.param .b64 vprintf_param_1
)
;
.weak .func (.reg .b32 r) twice(.reg .b32 a) { add.s32 r, a, a; ret; }
.weak_odr .func nothing() { ret; }
.func .attribute(.unified(0x1, 0x2)) noargs { ret; }
""")
    vprintf, twice, nothing, noargs = m.functions
    assert vprintf.linkage == "extern" and not vprintf.is_definition
    assert [p.name for p in vprintf.return_params] == ["func_retval0"] and len(vprintf.params) == 2
    assert twice.linkage == "weak" and twice.return_params[0].state_space == "reg"
    add = twice.instructions[0]
    assert add.dests == ("r",) and add.srcs == ("a",)  # .reg params are registers without '%'
    assert nothing.linkage == "weak_odr" and noargs.params == [] and noargs.instructions[0].opcode == "ret"
    assert m.kernels == []


def test_definition_supersedes_forward_declaration():
    m = parse_ptx(HEADER + """
.func (.param .b32 r) f(.param .b32 a);
.extern .func g();
.visible .entry k() { call.uni g, (); ret; }
.func (.param .b32 r) f(.param .b32 a) { ret; }
""")
    assert [(f.name, f.is_definition) for f in m.functions] == [("g", False), ("k", True), ("f", True)]


def test_callprototype_and_indirect_call():
    k = body("""
prototype_0 : .callprototype (.param .b32 _) _ (.param .b64 _);
.reg .b64 %rd<3>;
{
    .param .b64 param0;
    st.param.b64 [param0+0], %rd1;
    .param .b32 retval0;
    call (retval0),
        %rd2,
        (
        param0
        ),
        prototype_0;
    ld.param.b32 %r1, [retval0+0];
}
""")
    st, call, ld = k.instructions
    assert call.opcode == "call" and call.srcs == ("%rd2",) and call.dests == ()
    assert [o.kind for o in call.operands] == ["list", "register", "list", "symbol"]
    assert call.text == "call (retval0), %rd2, ( param0 ), prototype_0;"
    assert ld.dests == ("%r1",) and st.srcs == ("%rd1",)


def test_call_with_register_return_and_arguments():
    call = one("call.uni (%r1), f, (%r2, %r3);")
    assert call.modifiers == ("uni",) and call.dests == ("%r1",) and call.srcs == ("%r2", "%r3")
    bare = one("call.uni f;")
    assert bare.dests == () and bare.srcs == () and bare.operands[0].kind == "symbol"


# ---------------------------------------------------------------------------- declarations
def test_register_declarations_ranges_lists_and_scopes():
    k = body("""
{
    .reg .pred p, q;
    setp.ne.u32 p, %r1, 0;
    @p bar.arrive 1, 64;
    @!q mov.u32 %r2, 1;
}
""", decls=".reg .b32 %r<21>;\n.reg .v4 .f32 %v;\n")
    regs = {(r.type, r.name, r.count) for r in k.registers}
    assert regs == {("b32", "%r", 21), ("f32", "%v", None), ("pred", "p", None), ("pred", "q", None)}
    assert k.registers[0].names()[-1] == "%r20"
    setp, bar, mov = k.instructions
    assert setp.dests == ("p",) and setp.srcs == ("%r1",)
    assert (bar.guard, bar.guard_negated, bar.dests, bar.srcs) == ("p", False, (), ("p",))
    assert (mov.guard, mov.guard_negated, mov.srcs) == ("q", True, ("q",))


def test_module_and_function_variables():
    m = parse_ptx(HEADER + """
.global .align 4 .b8 g_arr[16] = {0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64};
.extern .shared .align 16 .b8 smem[];
.common .global .align 8 .u64 env;
.const .align 4 .f32 coeffs[2][3] = {{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}};
.global .u32 a = 1, b[2] = {2, 3};
.visible .global .attribute(.managed) .align 4 .u32 managed;
.global .texref tex0;
.visible .entry k()
{
    .local .align 4 .b8 __local_depot0[28];
    .shared .align 4 .b8 tile[1024];
    ret;
}
""")
    g, smem, env, coeffs, a, b, managed, tex0 = m.variables
    assert (g.state_space, g.type, g.size_bytes, g.align, g.array_dims) == ("global", "b8", 16, 4, (16,))
    assert g.initializer.startswith("{0, 0, 128") and g.location.line == 5
    assert (smem.linkage, smem.size_bytes, smem.array_dims) == ("extern", None, (None,))
    assert (env.linkage, env.size_bytes) == ("common", 8)
    assert coeffs.size_bytes == 24 and coeffs.initializer == "{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}"
    assert (a.initializer, b.size_bytes, b.initializer) == ("1", 8, "{2, 3}")
    assert managed.linkage == "visible" and managed.size_bytes == 4
    assert (tex0.type, tex0.size_bytes) == ("texref", None)
    local, tile = m.kernel().variables
    assert (local.state_space, local.size_bytes) == ("local", 28)
    assert (tile.state_space, tile.size_bytes, tile.align) == ("shared", 1024, 4)


# ---------------------------------------------------------------------------- instructions
def test_labels_map_to_the_next_instruction_and_branch_targets():
    k = body("""
$L__BB0_1:
BB0_2:
    add.s32 %r1, %r1, 1;
    setp.lt.s32 %p1, %r1, 10;
    @%p1 bra.uni $L__BB0_1;
$L__func_end0:
""")
    assert k.labels == {"$L__BB0_1": 0, "BB0_2": 0, "$L__func_end0": 3}
    add, setp, bra = k.instructions
    assert add.labels == ("$L__BB0_1", "BB0_2") and add.dests == ("%r1",) and add.srcs == ("%r1",)
    assert bra.branch_target == "$L__BB0_1" and bra.operands[0].kind == "label"
    assert bra.guard == "%p1" and bra.srcs == ("%p1",) and bra.dests == ()
    assert [i.index for i in k.instructions] == [0, 1, 2]


def test_modifiers_with_double_colons():
    i = one("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%rd1], [%rd2], %r1, [%rd3];",
            decls=".reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n")
    assert i.opcode == "cp"
    assert i.modifiers == ("async", "bulk", "shared::cluster", "global", "mbarrier::complete_tx::bytes")
    assert i.dests == () and i.srcs == ("%rd1", "%rd2", "%r1", "%rd3")
    fence = one("fence.proxy.async.shared::cta;")
    assert fence.full_opcode == "fence.proxy.async.shared::cta" and fence.operands == ()


def test_vector_placeholder_and_pair_destinations():
    k = body("""
mov.b64 {_, %r1}, %rd1;
shfl.sync.down.b32 %r2|%p1, %r3, 16, 31, -1;
ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+16];
st.shared.v2.f32 [%r4], {%f1, %f2};
mbarrier.arrive.shared.b64 _, [%rd2];
""", decls=".reg .b32 %r<5>;\n.reg .b64 %rd<3>;\n.reg .f32 %f<5>;\n.reg .pred %p<2>;\n")
    mov, shfl, ld, st, arrive = k.instructions
    assert mov.dests == ("%r1",) and mov.srcs == ("%rd1",)
    assert mov.operands[0].elements[0].kind == "placeholder"
    assert shfl.dests == ("%r2", "%p1") and shfl.srcs == ("%r3",) and shfl.operands[0].kind == "pair"
    assert ld.dests == ("%f1", "%f2", "%f3", "%f4") and ld.operands[1].offset == 16
    assert st.dests == () and st.srcs == ("%r4", "%f1", "%f2")
    assert arrive.dests == () and arrive.srcs == ("%rd2",)


@pytest.mark.parametrize(
    ("address", "base_kind", "base", "offset"),
    [
        ("[%rd1+-12]", "register", "%rd1", -12),
        ("[ %rd1 + 0 ]", "register", "%rd1", 0),
        ("[%rd1-4]", "register", "%rd1", -4),
        ("[name]", "symbol", "name", 0),
        ("[name+4]", "symbol", "name", 4),
        ("[%r1]", "register", "%r1", 0),
        ("[%rd1+0x10]", "register", "%rd1", 16),
    ],
)
def test_address_forms(address, base_kind, base, offset):
    ld = one(f"ld.global.u32 %r2, {address};", decls=".reg .b32 %r<3>;\n.reg .b64 %rd<2>;\n")
    op = ld.operands[1]
    assert op.kind == "address" and op.base.kind == base_kind and op.base.name == base
    assert op.offset == offset
    assert ld.srcs == ((base,) if base_kind == "register" else ())


def test_braces_inside_brackets_for_textures():
    tex = one("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tex0, {%f5, %f6}];",
              decls=".reg .f32 %f<8>;\n")
    assert tex.dests == ("%f1", "%f2", "%f3", "%f4") and tex.srcs == ("%f5", "%f6")
    assert tex.operands[1].base.name == "tex0" and tex.operands[1].elements[0].kind == "vector"
    sust = one("sust.b.2d.b32.trap [surf, {%r1, %r2}], {%r3};")
    assert sust.dests == () and sust.srcs == ("%r1", "%r2", "%r3")


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        ("0f3F800000", 1.0),
        ("0fBF800000", -1.0),
        ("0f3f000000", 0.5),
        ("0d3FF0000000000000", 1.0),
        ("0x1F", 31),
        ("0xffffffff", 4294967295),
        ("12U", 12),
        ("-2147483648", -2147483648),
        ("017", 15),
        ("0", 0),
    ],
)
def test_immediates(literal, value):
    mov = one(f"mov.b32 %r1, {literal};")
    assert mov.operands[1].kind == "immediate" and mov.operands[1].value == value


def test_special_registers_are_neither_dests_nor_srcs():
    k = body("""
mov.u32 %r1, %tid.x;
mov.u32 %r2, %ctaid.y;
mov.u32 %r3, %ntid.x;
mov.u32 %r4, %laneid;
mov.u64 %rd1, %clock64;
mov.u32 %r5, %envreg3;
""", decls=".reg .b32 %r<6>;\n.reg .b64 %rd<2>;\n")
    for instr in k.instructions:
        assert instr.operands[1].kind == "special" and instr.srcs == ()
    assert [i.operands[1].name for i in k.instructions] == [
        "%tid.x", "%ctaid.y", "%ntid.x", "%laneid", "%clock64", "%envreg3"]


def test_no_destination_opcodes():
    k = body("""
bar.sync %r1;
bar.red.popc.u32 %r2, 0, %p1;
red.global.add.u32 [%rd1], %r3;
atom.global.add.u32 %r4, [%rd1], 1;
nanosleep.u32 %r5;
membar.gl;
prefetch.global.L2 [%rd1];
mbarrier.init.shared.b64 [%rd1], %r6;
mbarrier.try_wait.parity.shared::cta.b64 %p2, [%rd1], %r7;
wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd1], {%f1, %f2}, %r8;
stmatrix.sync.aligned.m8n8.x2.shared.b16 [%rd1], {%r1, %r2};
trap;
exit;
""", decls=".reg .b32 %r<9>;\n.reg .b64 %rd<2>;\n.reg .f32 %f<3>;\n.reg .pred %p<3>;\n")
    got = {i.full_opcode.split(".")[0] + ("." + i.modifiers[0] if i.modifiers else ""): (i.dests, i.srcs)
           for i in k.instructions}
    assert got["bar.sync"] == ((), ("%r1",))
    assert got["bar.red"] == (("%r2",), ("%p1",))
    assert got["red.global"] == ((), ("%rd1", "%r3"))
    assert got["atom.global"] == (("%r4",), ("%rd1",))
    assert got["nanosleep.u32"] == ((), ("%r5",))
    assert got["membar.gl"] == ((), ())
    assert got["prefetch.global"] == ((), ("%rd1",))
    assert got["mbarrier.init"] == ((), ("%rd1", "%r6"))
    assert got["mbarrier.try_wait"] == (("%p2",), ("%rd1", "%r7"))
    assert got["wmma.store"] == ((), ("%rd1", "%f1", "%f2", "%r8"))
    assert got["stmatrix.sync"] == ((), ("%rd1", "%r1", "%r2"))


def test_wgmma_accumulator_is_dest_and_source():
    acc = ", ".join(f"%f{i}" for i in range(64))
    k = body(f"""
wgmma.fence.sync.aligned;
wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{{acc}}}, %rd1, %rd2, %p1, 1, 1, 0, 1;
wgmma.commit_group.sync.aligned;
wgmma.wait_group.sync.aligned 0;
""", decls=".reg .f32 %f<64>;\n.reg .b64 %rd<3>;\n.reg .pred %p<2>;\n")
    mma = k.instructions[1]
    regs = tuple(f"%f{i}" for i in range(64))
    assert mma.dests == regs and mma.srcs == (*regs, "%rd1", "%rd2", "%p1")
    assert len(mma.operands[0].elements) == 64
    assert k.instructions[3].dests == () and k.instructions[3].srcs == ()


def test_comments_pragmas_and_unknown_opcodes():
    k = body("""
    /* a block comment
       over lines */ add.s32 %r1, /* mid-line */ %r2, 3; // trailing
    .pragma "nounroll";
    frobnicate.fancy.x9::y %r3, %r1;
    .newdirective 1, 2;
""")
    add, frob = k.instructions
    assert add.srcs == ("%r2",) and add.location.line == 10  # the comment opens on line 9
    assert add.text == "add.s32 %r1, %r2, 3;"
    assert (frob.opcode, frob.modifiers, frob.dests, frob.srcs) == ("frobnicate", ("fancy", "x9::y"),
                                                                      ("%r3",), ("%r1",))


def test_loc_maps_instructions_to_cuda_source():
    m = parse_ptx(HEADER + """
.visible .entry k()
{
    .reg .b32 %r<3>;
    mov.u32 %r1, 0;
    .loc 1 12 5
    add.s32 %r1, %r1, 1;
    .loc 2 388 5, function_name $L__info_string0, inlined_at 1 7 5
    add.s32 %r2, %r1, 1;
    .loc 3 4 1
    ret;
}
.file 1 "/home/u/k.cu", 1700000000, 1234
.file 2 "/usr/include/cuda/header.h"
""")
    first, add, inlined, ret = m.kernel().instructions
    assert first.cuda_location is None
    loc = add.cuda_location
    assert (loc.file, loc.line, loc.column) == ("/home/u/k.cu", 12, 5)
    assert (inlined.cuda_location.file, inlined.cuda_location.line) == ("/usr/include/cuda/header.h", 388)
    assert inlined.cuda_location.inlined_at == CudaLocation("/home/u/k.cu", 7, 5)
    assert add.cuda_location.inlined_at is None
    assert ret.cuda_location.file == "<file 3>"  # no .file 3: the index is kept visibly


def test_multiline_entry_header_and_nested_scopes():
    text = HEADER + ".visible .entry\nk\n(\n.param .u32 n\n)\n{\n{\n{\n.reg .b32 %t;\nmov.u32 %t, 1;\n}\n}\n"
    text += "ret;\n}\n"
    k = parse_ptx(text).kernel()
    assert [i.opcode for i in k.instructions] == ["mov", "ret"] and k.end_location.line == 17


# ---------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("code", "line", "column", "fragment"),
    [
        # The snippet starts on line 8 (3 header lines, the entry, '{', 2 declaration lines).
        ("add.s32 %r1, %r2, 3\nret;", 8, 20, "expected ';'"),
        ("ld.global.u32 %r1, [%r2;", 8, 20, "unclosed '['"),
        ("mov.b64 {%r1, %r2, %rd1;", 8, 9, "unclosed '{'"),
        ("add.s32 %r1, %r2, 3; #", 8, 22, "unexpected character"),
        ("mov.u32 %r1, 0xZZ;", 8, 14, "malformed number"),
        ("add.s32 %r1 %r2;", 8, 13, "expected ',' or ';'"),
    ],
)
def test_error_locations_inside_bodies(code, line, column, fragment):
    with pytest.raises(PtxSyntaxError) as info:
        body(code)
    err = info.value
    assert (err.file, err.line, err.column) == ("t.ptx", line, column), str(err)
    assert fragment in err.message


@pytest.mark.parametrize(
    ("text", "line", "column", "fragment"),
    [
        (HEADER + "add.s32 %r1, %r2, 3;\n", 4, 1, "outside a function body"),
        (HEADER + "}\n", 4, 1, "unbalanced"),
        (HEADER + ".visible .entry k()\n{\n  ret;\n", 5, 1, "end of file inside the body of k"),
        (HEADER + "/* never closed\n ret;", 4, 1, "unterminated /* comment"),
        (HEADER + '.pragma "nounroll;\n', 4, 9, "unterminated string"),
        (HEADER + ".global .u32 x[4\n;", 5, 1, "expected ']'"),
        (".version\n", 1, 1, "'.version' needs"),
        (HEADER + ".global .u32 x\n.global .u32 y;\n", 4, 15, "expected ';'"),
        (HEADER + ".entry k() {\n.reg .b32 %r<4>\nret; }\n", 5, 16, "expected ';'"),
        (HEADER + ".global .u32 x y;\n", 4, 16, "expected ';' after a declaration"),
    ],
)
def test_error_locations_at_module_level(text, line, column, fragment):
    with pytest.raises(PtxSyntaxError) as info:
        parse_ptx(text, "m.ptx")
    err = info.value
    assert (err.line, err.column) == (line, column), str(err)
    assert fragment in err.message and err.text


def test_load_ptx_wraps_file_problems(tmp_path):
    with pytest.raises(WarplineError, match="cannot read"):
        load_ptx(tmp_path / "missing.ptx")
    bad = tmp_path / "bad.ptx"
    bad.write_bytes(b".version 8.0\n.target sm_90 \xff\xfe\n")
    with pytest.raises(PtxSyntaxError) as info:
        load_ptx(bad)
    assert (info.value.line, info.value.column) == (2, 15)
    good = tmp_path / "bom.ptx"
    good.write_bytes(b"\xef\xbb\xbf.version 8.0\n.target sm_90\n")
    assert load_ptx(good).version == "8.0" and load_ptx(str(good)).filename == str(good)


def test_lexer_positions_and_kinds():
    toks = tokenize("  ld.global.f32 %f1, [%rd1+-4]; // c\n@!%p1 bra $L__BB0_3;")
    assert [(t.kind, t.text, t.line, t.column) for t in toks[:3]] == [
        ("word", "ld.global.f32", 1, 3), ("word", "%f1", 1, 17), ("punct", ",", 1, 20)]
    assert toks[-4].text == "%p1" and toks[-4].line == 2 and toks[-4].column == 3


# ---------------------------------------------------------------------------- real compiler output
def test_checked_in_nvcc_output_parses():
    m = load_ptx(DATA / "reduce.sm_90.lineinfo.ptx")
    k = m.kernel()
    assert k.name == "_Z10reduce_sumPKfPfi" and k.directives == {"maxntid": (256, 1, 1)}
    assert any(i.cuda_location and i.cuda_location.file.endswith("reduce.cu") for i in k.instructions)
    shfl = [i for i in k.instructions if i.opcode == "shfl"]
    assert shfl and all(i.operands[0].kind == "pair" and i.dests[1].startswith("%p") for i in shfl)
    for target in (i.branch_target for i in k.instructions if i.branch_target):
        assert target in k.labels
    tile = load_ptx(DATA / "tile.sm_80.ptx")
    assert [f.name for f in tile.kernels] == ["_Z7tile_mmPK6float4PKfPfif"]
    assert tile.sm_version == 80


def test_five_thousand_lines_parse():
    # Speed is measured by bench/bench_frontend.py, not asserted here: a timed unit test fails on
    # a busy 2-core machine.
    block = "\n".join(f"    add.s32 %r{i % 9 + 1}, %r{(i + 1) % 9 + 1}, {i};" for i in range(4990))
    k = body(block)
    assert len(k.instructions) == 4990
    assert k.instructions[-1].text.strip() == "add.s32 %r4, %r5, 4989;"


NVCC = shutil.which("nvcc")
CUDA = r"""
#include <cstdio>
__device__ __noinline__ float helper(float a, int b) { return a * b + sinf(a); }
__global__ void __launch_bounds__(128) k(int n, float a, const float* __restrict__ x, float* y) {
  __shared__ float tile[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] : 0.f;
  __syncthreads();
  for (int j = 0; j < n; j += 3) if (i < n) y[i] += a * tile[threadIdx.x] + helper(a, j);
  if (i == 0) printf("%d\n", n);
}
"""


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
@pytest.mark.parametrize("flags", [[], ["-lineinfo"], ["-G"]])
def test_fresh_nvcc_output(tmp_path, flags):
    src = tmp_path / "k.cu"
    src.write_text(CUDA)
    out = tmp_path / "k.ptx"
    subprocess.run([NVCC, "-ptx", "-arch=sm_90", *flags, str(src), "-o", str(out)], check=True,
                   capture_output=True)
    m = load_ptx(out)
    k = m.kernel()
    assert k.directives["maxntid"] == (128, 1, 1) and len(k.params) == 4
    assert any(f.name == "vprintf" and not f.is_definition for f in m.functions)
    calls = [i for f in m.functions for i in f.instructions if i.opcode == "call"]
    assert calls and all(i.operands[1].kind == "symbol" for i in calls if i.operands[0].kind == "list")
    if flags:
        assert str(src) in m.files.values()
        located = [i for i in k.instructions if i.cuda_location is not None]
        assert located and any(i.cuda_location.file == str(src) for i in located)
    if "-G" in flags:
        assert m.target == ("sm_90", "debug")


# ---------------------------------------------------------------------------- compiler dialects
def test_old_isa_1_4_dialect():
    m = parse_ptx("""
	.version 1.4
	.target sm_13
	.file	1 "<command-line>"
	.file	15 "k.cu"
	.tex .u32 texA;
	.entry _Z3fooPf (
		.param .u32 __cudaparm__Z3fooPf_a)
	{
	.reg .u16 %rh<4>;
	.reg .u32 %r<8>;
	.reg .f32 %f<4>;
	.loc	15	5	0
$LDWbegin__Z3fooPf:
	cvt.u32.u16 	%r1, %tid.x;
	ld.param.u32 	%r2, [__cudaparm__Z3fooPf_a];
	tex.1d.v4.s32.s32 {%r3,%r4,%r5,%r6},[texA,{%r1,%r1,%r1,%r1}];
	mov.f32 	%f1, 0f3f800000;  	// 1
	st.global.f32 	[%r2+0], %f1;
	//<loop> Loop body line 5, nesting depth: 1, estimated iterations: unknown
	exit;
$LDWend__Z3fooPf:
	} // _Z3fooPf
""")
    assert m.version == "1.4" and m.address_size is None and m.files[15] == "k.cu"
    assert m.variables[0].state_space == "tex"
    k = m.kernel()
    cvt, ld, tex, mov, st, ex = k.instructions
    assert cvt.operands[1].kind == "special" and cvt.cuda_location.file == "k.cu"
    assert tex.dests == ("%r3", "%r4", "%r5", "%r6") and tex.srcs == ("%r1",)
    assert mov.operands[1].value == 1.0 and st.srcs == ("%r2", "%f1")
    assert k.labels == {"$LDWbegin__Z3fooPf": 0, "$LDWend__Z3fooPf": 6}


def test_triton_style_inline_asm_blocks_and_loc_comments():
    k = body("""
	.loc	1 10 24                         // matmul.py:10:24
	// begin inline asm
	mov.u32 %r1, 0x0;
	mov.u32 %r2, 0x0;
	@%p1 ld.global.v2.b32 { %r1, %r2 }, [ %rd1 + 0 ];
	// end inline asm
	// begin inline asm
	{
	.reg .pred %p_inner;
	setp.ne.b32 %p_inner, %r1, 0;
	@%p_inner st.shared.b32 [ %r3 + 0 ], %r2;
	}
	// end inline asm
	ldmatrix.sync.aligned.m8n8.x4.shared.b16 { %r4, %r5, %r6, %r7 }, [ %r3 + 0 ];
	mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 { %f1, %f2, %f3, %f4 },
		{ %r4, %r5, %r6, %r7 }, { %r8, %r9 }, { %f1, %f2, %f3, %f4 };
""", decls=".reg .b32 %r<10>;\n.reg .b64 %rd<2>;\n.reg .pred %p<2>;\n.reg .f32 %f<5>;\n")
    mov1, mov2, ld, setp, st, ldm, mma = k.instructions
    assert ld.guard == "%p1" and ld.dests == ("%r1", "%r2") and ld.srcs == ("%p1", "%rd1")
    assert ld.cuda_location.line == 10 and ld.cuda_location.column == 24
    assert st.guard == "%p_inner" and st.srcs == ("%p_inner", "%r3", "%r2")
    assert ldm.dests == ("%r4", "%r5", "%r6", "%r7")
    assert mma.dests == ("%f1", "%f2", "%f3", "%f4")
    assert mma.srcs == ("%r4", "%r5", "%r6", "%r7", "%r8", "%r9", "%f1", "%f2", "%f3", "%f4")


def test_branch_tables_and_cluster_directives():
    m = parse_ptx(HEADER + """
.visible .entry k() .reqntid 128, 1, 1 .maxclusterrank 8
{
    .reg .b32 %r<2>;
    ts: .branchtargets L0, L1;
    brx.idx %r1, ts;
L0:
    ret;
L1:
    exit;
}
""")
    k = m.kernel()
    assert k.directives == {"reqntid": (128, 1, 1), "maxclusterrank": (8,)}
    brx = k.instructions[0]
    assert brx.srcs == ("%r1",) and brx.dests == () and k.labels == {"L0": 1, "L1": 2}


def test_numba_style_module():
    m = parse_ptx("""
.version 8.4
.target sm_80
.address_size 64
.visible .global .align 4 .u32 _ZN6cudapy4k__errcode__;
.common .global .align 8 .u64 _ZN08NumbaEnv4k;
.visible .entry _ZN6cudapy4kE(
	.param .u64 _ZN6cudapy4kE_param_0,
	.param .u64 _ZN6cudapy4kE_param_1
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<5>;
	.reg .b64 	%rd<5>;
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mad.lo.s32 	%r3, %r1, %r2, %r4;
	setp.ge.s64 	%p1, %rd1, %rd2;
	@%p1 bra 	$L__BB0_2;
	st.global.f32 	[%rd3], %f1;
$L__BB0_2:
	ret;
}
""")
    assert [v.linkage for v in m.variables] == ["visible", "common"]
    k = m.kernel()
    assert k.instructions[4].branch_target == "$L__BB0_2" and k.labels["$L__BB0_2"] == 6


def test_scope_local_labels_from_repeated_inline_asm():
    wait = """
{
    .reg .pred P1;
LAB_WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 P1, [%rd1], %r1;
    @P1 bra DONE;
    bra LAB_WAIT;
DONE:
}
"""
    k = body(wait + "DONE:\n add.s32 %r2, %r2, 1;\n" + wait + "bra DONE;",
             decls=".reg .b32 %r<3>;\n.reg .b64 %rd<2>;\n")
    assert k.labels == {"LAB_WAIT": 0, "DONE": 3, "DONE~1": 3, "DONE~2": 7, "LAB_WAIT~1": 4}
    targets = [i.branch_target for i in k.instructions if i.opcode == "bra"]
    # Each block branches to its own labels; the last bra (outer scope) to the outer DONE.
    assert targets == ["DONE~1", "LAB_WAIT", "DONE~2", "LAB_WAIT~1", "DONE"]
    assert k.instructions[3].labels == ("DONE~1", "DONE")


def test_label_twice_in_one_scope_is_an_error():
    with pytest.raises(PtxSyntaxError, match="label defined twice") as info:
        body("L1:\n ret;\nL1:\n exit;")
    assert (info.value.line, info.value.column) == (10, 1)


def test_missing_semicolon_after_a_bare_opcode():
    with pytest.raises(PtxSyntaxError, match="expected ';'") as info:
        body("ret\n}")
    assert (info.value.line, info.value.column, info.value.text) == (8, 4, "ret")
    with pytest.raises(PtxSyntaxError, match="expected ';'") as info:
        body("bar.sync 0\nmov.u32 %r1, 0;")
    assert (info.value.line, info.value.column) == (8, 11)


def test_unknown_module_directives_are_skipped_without_eating_declarations():
    m = parse_ptx(HEADER + ".futuredirective 3\n.global .u32 x;\n.alias a, b;\n"
                  ".newblock { 1, 2 };\n.visible .entry k() { ret; }\n")
    assert [v.name for v in m.variables] == ["x"] and [k.name for k in m.kernels] == ["k"]
    digits = "9" * 5000
    with pytest.raises(PtxSyntaxError, match="malformed number"):
        body(f"mov.u32 %r1, {digits};")


def test_carry_chain_is_a_hidden_register():
    k = body("add.cc.u32 %r1, %r2, %r3;\naddc.cc.u32 %r4, %r5, %r6;\naddc.u32 %r7, 0, 0;")
    first, middle, last = k.instructions
    assert first.dests == ("%r1", "%cc") and first.srcs == ("%r2", "%r3")
    assert middle.dests == ("%r4", "%cc") and middle.srcs == ("%r5", "%r6", "%cc")
    assert last.dests == ("%r7",) and last.srcs == ("%cc",)


def test_function_scope_extern_shared_and_escaped_file_names():
    m = parse_ptx(HEADER + """
.visible .entry k()
{
    .extern .shared .align 16 .b8 smem[];
    ret;
}
.file 1 "C:\\\\src\\\\k.cu"
.file 2 "/tmp/a \\"b\\".cu"
""")
    (smem,) = m.kernel().variables
    assert (smem.name, smem.linkage, smem.state_space, smem.size_bytes) == ("smem", "extern", "shared", None)
    assert m.files == {1: "C:\\src\\k.cu", 2: '/tmp/a "b".cu'}
