"""Kinds are enum members wherever they are made: every operand, function, memory access and
data pattern the engine builds carries an OperandKind, FunctionKind, AccessKind or DataPattern,
never a bare string (a string compares equal to its member, so a missed constructor would
otherwise go unnoticed until a type-based dispatch or a rename of the values). Members print,
format and serialise as their values, which keeps every JSON, CSV and text output what it was
when the kinds were strings."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.analysis import analyze_kernel
from engine.analysis.loaded_data import DataPattern, parse_loaded_data
from engine.launch import load_launch_file
from engine.memory import analyze_memory
from engine.ptx import load_ptx, parse_ptx
from engine.ptx.index import parse_kernel
from engine.ptx.parsed_module import FunctionKind, Module, Operand, OperandKind
from engine.units import AccessKind

SAMPLES = Path(__file__).resolve().parent.parent / "samples"

# Statements the parser's fast line path leaves to its token path: split over lines, with
# comments inside, a call with lists, vectors, a destination pair, a negated predicate, a
# placeholder, labels, an address with an offset and a symbol base.
ODD = """
.version 8.0
.target sm_90
.address_size 64
.func (.param .b32 r) f(.param .b32 a) { .reg .b32 %r<3>; ld.param.b32 %r1, [a]; st.param.b32 [r], %r1; ret; }
.visible .entry k(.param .u64 k_p0)
{
  .reg .pred %p<4>; .reg .b32 %r<20>; .reg .b64 %rd<8>; .reg .f32 %f<8>;
  .shared .align 4 .b8 buf[256];
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1|%p2, %r1,
      /* a comment inside */ 16;
  and.pred %p3, %p2, !%p1;
  @!%p1 bra $L_end;
  ld.shared.v2.f32 {%f1, _}, [buf+8];
  mov.b64 {%r2, %r3}, %rd1;
  { .param .b32 a0; .param .b32 r0;
    st.param.b32 [a0], %r1;
    call (r0), f, (a0);
    ld.param.b32 %r4, [r0]; }
  ld.param.u64 %rd2, [k_p0];
  atom.global.add.u32 %r5, [%rd2+-4], 1;
$L_end:
  ret;
}
"""


def operands(module: Module) -> Iterator[Operand]:
    def walk(operand: Operand) -> Iterator[Operand]:
        yield operand
        if operand.base is not None:
            yield from walk(operand.base)
        for element in operand.elements:
            yield from walk(element)

    for function in module.functions:
        for instruction in function.instructions:
            for operand in instruction.operands:
                yield from walk(operand)


def assert_members(module: Module) -> set[OperandKind]:
    seen = set()
    for function in module.functions:
        assert type(function.kind) is FunctionKind, (function.name, function.kind)
    for operand in operands(module):
        assert type(operand.kind) is OperandKind, (operand.text, operand.kind)
        seen.add(operand.kind)
    return seen


def test_every_operand_and_function_of_the_samples_has_a_member() -> None:
    seen: set[OperandKind] = set()
    for path in sorted((SAMPLES / "ptx").glob("*.ptx")):
        text = path.read_text(encoding="utf-8")
        module = parse_ptx(text, str(path))
        seen |= assert_members(module)
        for kernel in module.kernels:
            seen |= assert_members(parse_kernel(path, kernel.name))
    assert {OperandKind.REGISTER, OperandKind.IMMEDIATE, OperandKind.ADDRESS, OperandKind.SPECIAL,
            OperandKind.LABEL, OperandKind.SYMBOL} <= seen


def test_the_token_path_makes_members_too() -> None:
    module = parse_ptx(ODD, "odd.ptx")
    assert [f.kind for f in module.functions] == [FunctionKind.FUNC, FunctionKind.ENTRY]
    seen = assert_members(module)
    assert {OperandKind.PAIR, OperandKind.PREDICATE, OperandKind.VECTOR, OperandKind.PLACEHOLDER,
            OperandKind.LIST, OperandKind.LABEL, OperandKind.SYMBOL, OperandKind.ADDRESS} <= seen


@pytest.mark.parametrize("name", ["copy", "hotspot", "floyd_warshall"])
def test_every_memory_access_has_a_member(name: str) -> None:
    launch_file = load_launch_file(SAMPLES / f"{name}.launch.toml")
    module = load_ptx(launch_file.ptx)
    launch = launch_file.launches[0]
    report = analyze_memory(analyze_kernel(module.kernel(launch.kernel), launch, module), launch, module)
    assert report.accesses
    for access in report.accesses:
        assert type(access.kind) is AccessKind, (access.text, access.kind)


@pytest.mark.parametrize("text", ["random:0:9", "linear:2:1", "offsets:1:4", "constant:3", "uniform:0:1"])
def test_a_data_pattern_has_a_member_and_reads_back(text: str) -> None:
    data = parse_loaded_data(text)
    assert type(data.kind) is DataPattern and data.text == text


def test_members_print_as_their_values() -> None:
    for member in (*OperandKind, *FunctionKind, *AccessKind, *DataPattern):
        assert member == member.value and hash(member) == hash(member.value)
        assert str(member) == f"{member}" == format(member) == member.value
        assert json.dumps({member: [member]}) == json.dumps({member.value: [member.value]})
        row = io.StringIO()
        csv.writer(row).writerow([member])
        assert row.getvalue().strip() == member.value
