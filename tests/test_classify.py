"""Classification of single instructions: unit, memory space, width and flags."""

from __future__ import annotations

import time

import pytest

from engine.analysis.classify import classify
from engine.ptx.parsed_module import Instruction, Operand, SourceLocation
from engine.units import MemorySpace, Unit

_LOC = SourceLocation("<test>", 1, 1)


def make(full_opcode: str, operands: tuple[Operand, ...] = ()) -> Instruction:
    opcode, *mods = full_opcode.split(".")
    return Instruction(0, opcode, tuple(mods), operands, (), (), full_opcode, _LOC)


@pytest.mark.parametrize(
    ("opcode", "unit"),
    [
        ("add.s32", Unit.ALU),
        ("fma.rn.f32", Unit.ALU),
        ("setp.lt.s32", Unit.ALU),
        ("fma.rn.f64", Unit.FP64),
        ("add.f64", Unit.FP64),
        ("setp.lt.f64", Unit.FP64),
        ("div.rn.f64", Unit.FP64),
        ("cvt.rn.f32.f64", Unit.FP64),
        ("cvt.rn.f64.s32", Unit.FP64),
        ("mov.f64", Unit.ALU),          # a register move, not arithmetic
        ("selp.f64", Unit.ALU),
        ("sin.approx.f32", Unit.SFU),
        ("ex2.approx.ftz.f32", Unit.SFU),
        ("rsqrt.approx.f32", Unit.SFU),
        ("rcp.approx.f32", Unit.SFU),
        ("div.full.f32", Unit.SFU),
        ("tanh.approx.f32", Unit.SFU),
        ("cvt.rn.f32.s32", Unit.SFU),   # int <-> float conversion
        ("cvt.rni.s32.f32", Unit.SFU),
        ("cvt.u64.u32", Unit.ALU),      # int <-> int stays on the ALU
        ("ld.global.f32", Unit.LDST),
        ("st.shared.v2.f32", Unit.LDST),
        ("atom.global.add.u32", Unit.LDST),
        ("shfl.sync.bfly.b32", Unit.LDST),
        ("ldmatrix.sync.aligned.m8n8.x4.shared.b16", Unit.LDST),
        ("wmma.load.a.sync.aligned.row.m16n16k16.global.f16", Unit.LDST),
        ("wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32", Unit.TENSOR),
        ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", Unit.TENSOR),
        ("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", Unit.TENSOR),
        ("bra.uni", Unit.CONTROL),
        ("ret", Unit.CONTROL),
        ("exit", Unit.CONTROL),
        ("bar.sync", Unit.BARRIER),
        ("membar.gl", Unit.BARRIER),
    ],
)
def test_unit(opcode: str, unit: Unit) -> None:
    assert classify(make(opcode)).unit is unit


@pytest.mark.parametrize(
    ("opcode", "space"),
    [
        ("ld.global.f32", MemorySpace.GLOBAL),
        ("ld.global.nc.v4.f32", MemorySpace.GLOBAL),
        ("ld.shared::cta.u32", MemorySpace.SHARED),
        ("st.local.u32", MemorySpace.LOCAL),
        ("ld.param.u64", MemorySpace.PARAM),
        ("ld.const.f32", MemorySpace.CONST),
        ("ld.f32", MemorySpace.GENERIC),
        ("cp.async.ca.shared.global", MemorySpace.GLOBAL),
        ("add.s32", MemorySpace.NONE),
        ("shfl.sync.idx.b32", MemorySpace.NONE),
    ],
)
def test_space(opcode: str, space: MemorySpace) -> None:
    assert classify(make(opcode)).space is space


def test_vector_width_and_bytes() -> None:
    c = classify(make("ld.global.v4.f32"))
    assert (c.vector_width, c.width_bytes, c.type_suffix) == (4, 16, "f32")
    assert classify(make("st.global.v2.f64")).width_bytes == 16
    assert classify(make("ld.global.u8")).width_bytes == 1
    assert classify(make("ldmatrix.sync.aligned.m8n8.x4.shared.b16")).width_bytes == 16
    cvt = classify(make("cvt.rn.f32.s32"))
    assert cvt.types == ("f32", "s32") and cvt.type_suffix == "s32"


def test_cp_async_width_comes_from_its_size_operand() -> None:
    ops = (Operand("address", "[%r1]"), Operand("address", "[%rd1]"), Operand("immediate", "16", value=16))
    assert classify(make("cp.async.cg.shared.global", ops)).width_bytes == 16


def test_flags() -> None:
    ld = classify(make("ld.global.f32"))
    assert ld.is_load and not ld.is_store and ld.is_global_memory and not ld.is_atomic
    st = classify(make("st.shared.f32"))
    assert st.is_store and not st.is_load and not st.is_global_memory
    atom = classify(make("atom.global.cas.b32"))
    assert atom.is_atomic and atom.is_global_memory
    assert classify(make("ld.f32")).is_global_memory  # generic may point to global
    assert classify(make("bar.sync")).is_barrier
    assert classify(make("barrier.sync.aligned")).is_barrier
    assert not classify(make("bar.warp.sync")).is_barrier  # warp-level: no block barrier
    assert not classify(make("membar.cta")).is_barrier
    assert classify(make("bra.uni")).is_branch and not classify(make("call.uni")).is_branch
    copy = classify(make("cp.async.ca.shared.global"))
    assert copy.is_load and copy.is_store and copy.unit is Unit.LDST
    wait = classify(make("cp.async.wait_group"))
    assert wait.unit is Unit.LDST and wait.space is MemorySpace.NONE
    assert not (wait.is_load or wait.is_store or wait.is_global_memory)


def test_cache_is_fast() -> None:
    instrs = [make(op) for op in ("add.s32", "ld.global.f32", "fma.rn.f32", "bar.sync")] * 2500
    start = time.perf_counter()
    units = [classify(i).unit for i in instrs]
    assert time.perf_counter() - start < 0.1
    assert units[:4] == [Unit.ALU, Unit.LDST, Unit.ALU, Unit.BARRIER]


def test_analyze_kernel_resolves_generic_pointers() -> None:
    parse_ptx = pytest.importorskip("engine.ptx").parse_ptx
    from engine.analysis import analyze_kernel

    text = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .b64 %rd<9>;
    .reg .f32 %f<4>;
    .shared .align 4 .b8 tile[1024];
    ld.param.u64 %rd1, [p];
    mov.u64 %rd2, tile;
    cvta.shared.u64 %rd3, %rd2;
    add.s64 %rd4, %rd3, 16;
    ld.f32 %f1, [%rd4];
    ld.f32 %f2, [%rd1];
    st.global.f32 [%rd1], %f1;
    ret;
}
"""
    a = analyze_kernel(parse_ptx(text, "g.ptx").kernel("k"))
    shared_generic, param_generic, store = a.classifications[4], a.classifications[5], a.classifications[6]
    assert shared_generic.space is MemorySpace.GENERIC and not shared_generic.is_global_memory
    assert param_generic.space is MemorySpace.GENERIC and param_generic.is_global_memory
    assert store.is_global_memory and store.is_store
    assert len(a.classifications) == len(a.function.instructions)
