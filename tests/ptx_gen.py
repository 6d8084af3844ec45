"""Generators of large or deeply nested PTX, shared by the front-end tests and
``bench/bench_frontend.py``.

Every generator returns PTX text that ``engine.ptx.parse_ptx`` accepts and that looks like what
nvcc writes (registers declared with ``%r<N>``, ``$L__BB`` labels, ``.loc`` lines), so that the
parser and the analysis take their ordinary paths and the sizes measure real work.
"""

from __future__ import annotations

import re

HEADER = ".version 8.4\n.target sm_90\n.address_size 64\n\n"

def _regs(n: int) -> str:
    return (f"\t.reg .pred \t%p<8>;\n\t.reg .b32 \t%r<{n + 2}>;\n\t.reg .f32 \t%f<{n + 2}>;\n"
            "\t.reg .b64 \t%rd<16>;\n")


def _straight_body(n: int, with_loc: bool = True, seed: int = 0, fresh: bool = True,
                   pointer: str = "p_0") -> str:
    """``n`` instructions of a straight-line kernel body as nvcc writes it: every result in a
    fresh virtual register (so no two statements are alike), integer and float arithmetic,
    loads and stores through a parameter pointer, compares and selects; a ``.loc`` every
    eight. Registers: ``%r``/``%f`` up to ``n``, ``%p`` up to 8, ``%rd`` up to 16. Without
    ``fresh``, registers cycle through 64 names and addresses through 64 offsets, as in
    hand-unrolled code: the same 512 statements come back again and again. ``pointer`` is the
    kernel's pointer parameter."""
    out = [f"\tld.param.u64 \t%rd1, [{pointer}];\n", "\tcvta.to.global.u64 \t%rd2, %rd1;\n",
           "\tmov.u32 \t%r1, %tid.x;\n", "\tmov.f32 \t%f1, 0f00000000;\n"]
    count = 4
    i = seed
    r = f = 1  # the newest %r and %f
    while count < n:
        k = i % 8
        if with_loc and k == 0:
            out.append(f"\t.loc\t1 {i // 8 + 10} 5\n")
        if k == 0:
            out.append(f"\tadd.s32 \t%r{r + 1}, %r{r}, %r{max(1, r - 3)};\n")
            r += 1
        elif k == 1:
            out.append(f"\tmul.lo.s32 \t%r{r + 1}, %r{r}, {i % 97 + 1};\n")
            r += 1
        elif k == 2:
            out.append(f"\tmad.lo.s32 \t%r{r + 1}, %r{r}, %r{max(1, r - 2)}, %r1;\n")
            r += 1
        elif k == 3:
            out.append(f"\tld.global.f32 \t%f{f + 1}, [%rd2+{4 * (i % 4096)}];\n")
            f += 1
        elif k == 4:
            out.append(f"\tfma.rn.f32 \t%f{f + 1}, %f{f}, %f{max(1, f - 1)}, 0f3F800000;\n")
            f += 1
        elif k == 5:
            out.append(f"\tst.global.f32 \t[%rd2+{4 * (i % 4096)}], %f{f};\n")
        elif k == 6:
            out.append(f"\tsetp.lt.s32 \t%p{i % 7 + 1}, %r{r}, %r{max(1, r - 1)};\n")
        else:
            out.append(f"\tselp.b32 \t%r{r + 1}, %r{r}, %r{max(1, r - 2)}, %p{(i - 1) % 7 + 1};\n")
            r += 1
        count += 1
        i += 1
        if not fresh:
            r, f = r % 60 + 1, f % 60 + 1
    out.append("\tret;\n")
    return "".join(out if fresh else [_CYCLE_OFFSETS.sub(_cycle, line) for line in out])


_CYCLE_OFFSETS = re.compile(r"\+(\d+)\]")


def _cycle(m: re.Match[str]) -> str:
    return f"+{int(m.group(1)) % 256}]"


def straight_kernel(n: int, name: str = "straight", with_loc: bool = True, fresh: bool = True) -> str:
    """A module with one kernel of ``n`` instructions (see ``_straight_body``)."""
    return (HEADER + f".visible .entry {name}(\n\t.param .u64 p_0\n)\n{{\n" + _regs(n)
            + _straight_body(n - 1, with_loc, fresh=fresh) + "}\n\t.file\t1 \"/src/straight.cu\"\n")


def nested_scopes(depth: int, labels: bool = False) -> str:
    """One kernel whose body nests ``{ }`` scopes ``depth`` deep, each adding to ``%r1``. With
    ``labels`` (CUTLASS-style inline asm inlined into itself) each scope also declares a register
    and defines the same label ``SKIP`` that its own guarded branch jumps to (PTX allows one
    name per scope)."""
    out = [HEADER, ".visible .entry nest()\n{\n\t.reg .pred \t%p<2>;\n\t.reg .b32 \t%r<4>;\n",
           "\tmov.u32 \t%r1, 0;\n\tsetp.eq.s32 \t%p1, %r1, 7;\n"]
    for _ in range(depth):
        if labels:
            out.append("\t{\n\t.reg .b32 t;\n\tadd.s32 \t%r1, %r1, 1;\n"
                       "\t@%p1 bra \tSKIP;\n\tadd.s32 \t%r2, %r1, 2;\nSKIP:\n")
        else:
            out.append("\t{\n\tadd.s32 \t%r1, %r1, 1;\n")
    for _ in range(depth):
        out.append("\t}\n")
    out.append("\tret;\n}\n")
    return "".join(out)


def many_labels(n: int) -> str:
    """One kernel with ``n`` labels (about 60 bytes each, like nvcc's unrolled code): a chain of
    if-then diamonds. Each head adds to ``%r1`` and skips the then-part under ``%p1``; each join
    redefines ``%r2``, so that every use sees at most two definitions."""
    out = [HEADER, ".visible .entry labels()\n{\n\t.reg .pred \t%p<2>;\n\t.reg .b32 \t%r<8>;\n",
           "\tmov.u32 \t%r1, %tid.x;\n\tmov.u32 \t%r2, 0;\n\tsetp.lt.s32 \t%p1, %r1, 5;\n"]
    for i in range(0, n - 1, 2):
        out.append(f"$L__BB0_{i}:\n\tadd.s32 \t%r1, %r1, 1;\n\t@%p1 bra \t$L__BB0_{i + 1};\n"
                   f"\tadd.s32 \t%r2, %r1, %r2;\n$L__BB0_{i + 1}:\n\tadd.s32 \t%r2, %r2, %r1;\n")
    if n % 2:
        out.append(f"$L__BB0_{n - 1}:\n")
    out.append("\tret;\n}\n")
    return "".join(out)


def nested_loops(depth: int, trips: int = 2) -> str:
    """One kernel with ``depth`` perfectly nested counted loops, each running ``trips`` times
    (headers ``$L__H<i>``, counter ``%r<i+1>``, bottom-tested like nvcc's)."""
    out = [HEADER, ".visible .entry loops()\n{\n\t.reg .pred \t%p<2>;\n",
           f"\t.reg .b32 \t%r<{depth + 2}>;\n\t.reg .f32 \t%f<4>;\n"]
    for i in range(depth):
        out.append(f"\tmov.u32 \t%r{i + 1}, 0;\n$L__H{i}:\n")
    out.append("\tadd.f32 \t%f1, %f1, %f2;\n")
    for i in reversed(range(depth)):
        out.append(f"\tadd.s32 \t%r{i + 1}, %r{i + 1}, 1;\n"
                   f"\tsetp.lt.u32 \t%p1, %r{i + 1}, {trips};\n\t@%p1 bra \t$L__H{i};\n")
    out.append("\tret;\n}\n")
    return "".join(out)


def library(kernels: int = 252, instructions: int = 2400, funcs: int = 8) -> str:
    """A library-shaped module (what ``nvcc -lineinfo`` writes for a template-heavy .cu):
    module-scope ``.global``/``.const`` data, ``.func`` helpers declared before and defined after
    their callers, ``kernels`` entries of about ``instructions`` instructions each, a ``.file``
    table and a DWARF ``.section`` at the end. 252 x 2,400 is about 25 MB."""
    out = [HEADER,
           ".global .align 4 .b8 lookup_table[4096];\n",
           ".const .align 8 .b8 coefficients[256] = {1, 2, 3, 4};\n",
           ".extern .shared .align 16 .b8 dyn_smem[];\n\n"]
    for f in range(funcs):
        out.append(f".func  (.param .b32 func_retval0) helper_{f}(\n\t.param .b32 helper_{f}_param_0\n);\n")
    for k in range(kernels):
        name = f"_Z14library_kernelILi{k}EEvPfS0_i"
        out.append(f"\n\t// .globl\t{name}\n.visible .entry {name}(\n\t.param .u64 {name}_param_0,\n"
                   f"\t.param .u64 {name}_param_1,\n\t.param .u32 {name}_param_2\n)\n"
                   ".maxntid 256, 1, 1\n{\n" + _regs(instructions)
                   + "\t.reg .b32 \t%ret<2>;\n")
        body = _straight_body(instructions - 8, seed=k, pointer=f"{name}_param_0")
        out.append(body[: body.rfind("\tret;")])
        out.append(f"\tld.global.u32 \t%r3, [lookup_table+{4 * (k % 1024)}];\n"
                   "\tld.const.u32 \t%r4, [coefficients];\n"
                   "\t{\n\t.reg .b32 temp_param_reg;\n\t.param .b32 param0;\n"
                   "\tst.param.b32 \t[param0], %r3;\n\t.param .b32 retval0;\n"
                   f"\tcall.uni (retval0), helper_{k % funcs}, (param0);\n"
                   "\tld.param.b32 \t%r5, [retval0];\n\t}\n\tret;\n}\n")
    for f in range(funcs):
        out.append(f"\n.func  (.param .b32 func_retval0) helper_{f}(\n\t.param .b32 helper_{f}_param_0\n)\n"
                   "{\n\t.reg .b32 \t%r<4>;\n"
                   f"\tld.param.u32 \t%r1, [helper_{f}_param_0];\n"
                   f"\tld.global.u32 \t%r2, [lookup_table+{4 * f}];\n"
                   "\tadd.s32 \t%r3, %r1, %r2;\n\tst.param.b32 \t[func_retval0], %r3;\n\tret;\n}\n")
    out.append("\t.file\t1 \"/src/library.cu\"\n")
    out.append("\t.section\t.debug_str\n\t{\n$L__info_string0:\n.b8 95\n.b8 90\n.b8 0\n\t}\n")
    return "".join(out)
