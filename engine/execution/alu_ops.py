"""The interpreter's arithmetic, logic, comparison and conversion instructions (a part of
:class:`engine.execution.machine.Machine`, which runs them; split out so that each kind of
instruction has its own module)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from engine.execution import arith
from engine.execution.image import LOCAL_BASE, SHARED_BASE, WINDOW_MASK
from engine.execution.instruction_facts import (
    _BINARY,
    U64,
    _space,
    _types,
)
from engine.execution.typed import BITS, FLOAT_TYPES, PACKED_TYPES, read, write
from engine.ptx.parsed_module import Instruction, Operand, OperandKind

if TYPE_CHECKING:
    from engine.execution.machine import Machine


# ------------------------------------------------------------------ arithmetic
def dest_operand(m: Machine, ins: Instruction) -> Operand:
    return ins.operands[0]


def store_result(m: Machine, ins: Instruction, lanes: np.ndarray, result: np.ndarray, known: np.ndarray,
                  t: str) -> None:
    dest = dest_operand(m, ins)
    bits = write(result, t)
    if dest.kind == OperandKind.REGISTER:
        m._write(dest.name, lanes, bits, known, f"line {ins.location.line} reads unknown values")
    elif dest.kind == OperandKind.PAIR and dest.elements:
        m._write(dest.elements[0].name, lanes, bits, known, f"line {ins.location.line} reads unknown values")


def binary(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    types = _types(ins.modifiers)
    t = types[-1] if types else "b32"
    op = ins.opcode
    if t in PACKED_TYPES:
        packed(m, ins, lanes, t)
        return
    a, ka = m._typed(ins.operands[1], lanes, t)
    if op in ("shl", "shr"):
        b, kb = m._typed(ins.operands[2], lanes, "u32")
    else:
        b, kb = m._typed(ins.operands[2], lanes, t)
    known = ka & kb
    out_t = t
    if t in FLOAT_TYPES:
        result = arith.float_binary(op, a, b)
        if "sat" in ins.modifiers:
            result = np.clip(result, 0.0, 1.0)
    elif op == "mul":
        mode = "hi" if "hi" in ins.modifiers else "wide" if "wide" in ins.modifiers else "lo"
        result = arith.int_mul(a, b, t, mode)
        if mode == "wide":
            out_t = t[0] + str(2 * BITS[t])
    elif t == "pred":
        result = arith.int_binary(op, a.astype(np.uint64), b.astype(np.uint64), "b8", ins.modifiers)
    else:
        if op in ("div", "rem"):
            known = known & (b != 0)
        result = arith.int_binary(op, a, b, t, ins.modifiers)
    store_result(m, ins, lanes, result, known, out_t)


def packed(m: Machine, ins: Instruction, lanes: np.ndarray, t: str) -> None:
    half = "f16" if t == "f16x2" else "bf16"
    srcs = [m._value(o, lanes, "b32") for o in ins.operands[1:]]
    known = np.logical_and.reduce([k for _, k in srcs])
    out = np.zeros(len(lanes), dtype=U64)
    for part in (0, 1):
        vals = [read((bits >> U64(16 * part)) & U64(0xFFFF), half) for bits, _ in srcs]
        op = ins.opcode
        if op in ("fma", "mad"):
            r = arith.float_fma(*vals)
        elif op in _BINARY:
            r = arith.float_binary(op, vals[0], vals[1])
        elif op in ("neg", "abs"):
            r = arith.float_unary(op, vals[0])
        else:
            raise arith.Unsupported(f"{ins.full_opcode}")
        out |= write(r, half) << U64(16 * part)
    m._write(dest_operand(m, ins).name, lanes, out, known)


def unary(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    types = _types(ins.modifiers)
    t = types[-1] if types else "b32"
    if t in PACKED_TYPES:
        packed(m, ins, lanes, t)
        return
    a, known = m._typed(ins.operands[1], lanes, t)
    if t in FLOAT_TYPES:
        result = arith.float_unary(ins.opcode, a)
    elif t == "pred":
        result = ~a if ins.opcode == "not" else a
    else:
        result = arith.int_unary(ins.opcode, a, t)
        if ins.opcode in ("popc", "clz", "bfind"):
            store_result(m, ins, lanes, result, known, "u32")
            return
    store_result(m, ins, lanes, result, known, t)


def mad(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    types = _types(ins.modifiers)
    t = types[-1] if types else "f32"
    if t in PACKED_TYPES:
        packed(m, ins, lanes, t)
        return
    if any(m == "cc" for m in ins.modifiers):
        carry_op(m, ins, lanes)
        return
    a, ka = m._typed(ins.operands[1], lanes, t)
    b, kb = m._typed(ins.operands[2], lanes, t)
    known = ka & kb
    if t in FLOAT_TYPES:
        c, kc = m._typed(ins.operands[3], lanes, t)
        result = arith.float_fma(a, b, c)
        if "sat" in ins.modifiers:
            result = np.clip(result, 0.0, 1.0)
        store_result(m, ins, lanes, result, known & kc, t)
        return
    mode = "hi" if "hi" in ins.modifiers else "wide" if "wide" in ins.modifiers else "lo"
    out_t = t[0] + str(2 * BITS[t]) if mode == "wide" else t
    c, kc = m._typed(ins.operands[3], lanes, out_t)
    product = arith.int_mul(a, b, t, mode)
    result = product + c
    if "sat" in ins.modifiers and t == "s32":
        result = np.clip(result.astype(np.int64), -(1 << 31), (1 << 31) - 1)
    store_result(m, ins, lanes, result, known & kc, out_t)


def mul24(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    t = (_types(ins.modifiers) or ["u32"])[-1]
    a, ka = m._typed(ins.operands[1], lanes, t)
    b, kb = m._typed(ins.operands[2], lanes, t)
    store_result(m, ins, lanes, arith.mul24(a, b, t, "hi" in ins.modifiers), ka & kb, t)


def mad24(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    t = (_types(ins.modifiers) or ["u32"])[-1]
    a, ka = m._typed(ins.operands[1], lanes, t)
    b, kb = m._typed(ins.operands[2], lanes, t)
    c, kc = m._typed(ins.operands[3], lanes, t)
    store_result(m, ins, lanes, arith.mul24(a, b, t, "hi" in ins.modifiers) + c, ka & kb & kc, t)


def sad(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    t = (_types(ins.modifiers) or ["u32"])[-1]
    a, ka = m._typed(ins.operands[1], lanes, t)
    b, kb = m._typed(ins.operands[2], lanes, t)
    c, kc = m._typed(ins.operands[3], lanes, t)
    diff = np.where(a > b, a - b, b - a)
    store_result(m, ins, lanes, c + diff, ka & kb & kc, t)


def carry_op(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    """``add.cc``/``addc``/``sub.cc``/``subc``/``mad.cc``/``madc``: 32- and 64-bit carry chains."""
    t = (_types(ins.modifiers) or ["u32"])[-1]
    bits = BITS.get(t, 32)
    mask = U64((1 << bits) - 1) if bits < 64 else U64(0xFFFFFFFFFFFFFFFF)
    a, ka = m._value(ins.operands[1], lanes, t)
    b, kb = m._value(ins.operands[2], lanes, t)
    a, b = a & mask, b & mask
    known = ka & kb
    carry_in = m.carry[lanes] if ins.opcode in ("addc", "subc", "madc") else np.zeros(len(lanes), dtype=U64)
    op = ins.opcode.rstrip("c") if ins.opcode in ("addc", "subc", "madc") else ins.opcode
    if op == "mad":
        c, kc = m._value(ins.operands[3], lanes, t)
        known &= kc
        mode = "hi" if "hi" in ins.modifiers else "lo"
        product = write(arith.int_mul(read(a, t), read(b, t), t, mode), t) & mask
        a, b = product, c & mask
        op = "add"
    if op == "add":
        total = a + b + carry_in
        carry = ((total & mask) < a) | (((total & mask) == a) & (carry_in > 0) & (b > 0)) if bits == 64 \
            else (total >> U64(bits)) & U64(1)
    else:
        borrow_in = carry_in
        total = a - b - borrow_in
        carry = (a < b + borrow_in).astype(U64)
    if "cc" in ins.modifiers or ins.opcode in ("addc", "subc", "madc") and "cc" in ins.modifiers:
        m.carry[lanes] = np.asarray(carry).astype(U64)
    m._write(dest_operand(m, ins).name, lanes, total & mask, known)


def mov(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    t = (_types(ins.modifiers) or ["b64"])[-1]
    dest, src = ins.operands[0], ins.operands[1]
    width = BITS.get(t, 64)
    if dest.kind == OperandKind.VECTOR:                    # unpack: mov.b64 {%r1, %r2}, %rd1
        bits, known = m._value(src, lanes, t)
        parts = [e for e in dest.elements]
        piece = width // max(len(parts), 1)
        for k, element in enumerate(parts):
            if element.kind == OperandKind.REGISTER:
                m._write(element.name, lanes, (bits >> U64(piece * k)) & U64((1 << piece) - 1), known)
        return
    if src.kind == OperandKind.VECTOR:                     # pack: mov.b64 %rd1, {%r1, %r2}
        piece = width // max(len(src.elements), 1)
        out = np.zeros(len(lanes), dtype=U64)
        known = np.ones(len(lanes), dtype=bool)
        for k, element in enumerate(src.elements):
            bits, kk = m._value(element, lanes, f"b{piece}")
            out |= (bits & U64((1 << piece) - 1)) << U64(piece * k)
            known &= kk
        m._write(dest.name, lanes, out, known)
        return
    bits, known = m._value(src, lanes, t)
    if t == "pred":
        bits = (bits != 0).astype(U64)
    m._write(dest.name, lanes, bits, known, f"line {ins.location.line} copies an unknown value")


def cvt(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    types = _types(ins.modifiers)
    if len(types) < 2:
        types = types * 2 if types else ["b32", "b32"]
    dst, src = types[0], types[1]
    if dst in PACKED_TYPES or src in PACKED_TYPES:
        raise arith.Unsupported("packed conversion")
    value, known = m._typed(ins.operands[1], lanes, src)
    mods = ins.modifiers
    if src in FLOAT_TYPES:
        if any(m in mods for m in ("rni", "rzi", "rmi", "rpi")):
            value = arith.round_float(value, mods)
        elif dst not in FLOAT_TYPES:
            value = np.trunc(value)
        if dst in FLOAT_TYPES:
            result = value.astype(np.float64 if dst == "f64" else np.float32)
            if "sat" in mods:
                result = np.clip(result, 0.0, 1.0)
            if "relu" in mods:
                result = np.maximum(result, 0.0)
        else:
            result = value                          # saturating conversion in write()
    elif dst in FLOAT_TYPES:
        result = value.astype(np.float64 if dst == "f64" else np.float32)
    else:
        result = value
        if "sat" in mods:
            bits = BITS.get(dst, 32)
            lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if dst[0] == "s" else (0, (1 << bits) - 1)
            result = np.clip(value.astype(np.float64), lo, hi)
    store_result(m, ins, lanes, result, known, dst)


def cvta(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    bits, known = m._value(ins.operands[1], lanes, "u64")
    to = "to" in ins.modifiers
    space = _space(ins.modifiers)
    base = {"shared": SHARED_BASE, "local": LOCAL_BASE}.get(space)
    if base is not None:
        if to:
            bits = np.where((bits & ~WINDOW_MASK) == base, bits & WINDOW_MASK, bits)
        else:
            bits = bits + base
    if "u32" in ins.modifiers:
        bits = bits & U64(0xFFFFFFFF)
    m._write(dest_operand(m, ins).name, lanes, bits, known)


def setp(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    types = _types(ins.modifiers)
    t = types[-1] if types else "s32"
    cmp = next((m for m in ins.modifiers if m in arith.COMPARISONS), None)
    if cmp is None:
        raise arith.Unsupported("setp without a comparison")
    if t in PACKED_TYPES:
        raise arith.Unsupported("packed comparison")
    a, ka = m._typed(ins.operands[1], lanes, t)
    b, kb = m._typed(ins.operands[2], lanes, t)
    known = ka & kb
    result = arith.float_compare(cmp, a, b) if t in FLOAT_TYPES else arith.int_compare(cmp, a, b)
    combine = next((m for m in ins.modifiers if m in ("and", "or", "xor")), None)
    other = np.zeros(len(lanes), dtype=bool)
    if combine is not None and len(ins.operands) > 3:
        c, kc = m._value(ins.operands[3], lanes, "pred")
        other = c != 0
        known = known & kc
    first, second = result, ~result
    if combine is not None:
        fn = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[combine]
        first, second = fn(result, other), fn(~result, other)
    dest = ins.operands[0]
    why = f"the comparison at line {ins.location.line} reads unknown values"
    if dest.kind == OperandKind.PAIR and len(dest.elements) == 2:
        m._write(dest.elements[0].name, lanes, first.astype(U64), known, why)
        m._write(dest.elements[1].name, lanes, second.astype(U64), known, why)
    else:
        m._write(dest.name, lanes, first.astype(U64), known, why)


def set(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    types = _types(ins.modifiers)
    dst, src = (types[0], types[-1]) if len(types) >= 2 else ("u32", types[-1] if types else "s32")
    cmp = next((m for m in ins.modifiers if m in arith.COMPARISONS), "eq")
    a, ka = m._typed(ins.operands[1], lanes, src)
    b, kb = m._typed(ins.operands[2], lanes, src)
    result = arith.float_compare(cmp, a, b) if src in FLOAT_TYPES else arith.int_compare(cmp, a, b)
    values = np.where(result, 1.0, 0.0) if dst in FLOAT_TYPES else np.where(result, 0xFFFFFFFF, 0)
    store_result(m, ins, lanes, values, ka & kb, dst)


def selp(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    t = (_types(ins.modifiers) or ["b32"])[-1]
    a, ka = m._value(ins.operands[1], lanes, t)
    b, kb = m._value(ins.operands[2], lanes, t)
    c, kc = m._value(ins.operands[3], lanes, "pred")
    choose = c != 0
    known = kc & np.where(choose, ka, kb)
    m._write(dest_operand(m, ins).name, lanes, np.where(choose, a, b), known,
                f"the selection at line {ins.location.line} reads unknown values")


def slct(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    types = _types(ins.modifiers)
    t, ct = types[0], types[-1]
    a, ka = m._value(ins.operands[1], lanes, t)
    b, kb = m._value(ins.operands[2], lanes, t)
    c, kc = m._typed(ins.operands[3], lanes, ct)
    choose = c >= 0
    m._write(dest_operand(m, ins).name, lanes, np.where(choose, a, b), kc & np.where(choose, ka, kb))


def bfe(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    t = (_types(ins.modifiers) or ["u32"])[-1]
    a, ka = m._typed(ins.operands[1], lanes, t)
    p, kp = m._typed(ins.operands[2], lanes, "u32")
    n, kn = m._typed(ins.operands[3], lanes, "u32")
    store_result(m, ins, lanes, arith.bfe(a, p, n, t), ka & kp & kn, t)


def bfi(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    t = (_types(ins.modifiers) or ["b32"])[-1]
    a, ka = m._typed(ins.operands[1], lanes, t)
    b, kb = m._typed(ins.operands[2], lanes, t)
    p, kp = m._typed(ins.operands[3], lanes, "u32")
    n, kn = m._typed(ins.operands[4], lanes, "u32")
    store_result(m, ins, lanes, arith.bfi(a, b, p, n, t), ka & kb & kp & kn, t)


def prmt(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    a, ka = m._typed(ins.operands[1], lanes, "b32")
    b, kb = m._typed(ins.operands[2], lanes, "b32")
    c, kc = m._typed(ins.operands[3], lanes, "b32")
    store_result(m, ins, lanes, arith.prmt(a, b, c, ins.modifiers), ka & kb & kc, "b32")


def lop3(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    a, ka = m._typed(ins.operands[1], lanes, "b32")
    b, kb = m._typed(ins.operands[2], lanes, "b32")
    c, kc = m._typed(ins.operands[3], lanes, "b32")
    lut = ins.operands[4]
    if lut.kind != OperandKind.IMMEDIATE:
        raise arith.Unsupported("lop3 with a register table")
    store_result(m, ins, lanes, arith.lop3(a, b, c, int(lut.value or 0)), ka & kb & kc, "b32")


def shf(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    a, ka = m._typed(ins.operands[1], lanes, "b32")
    b, kb = m._typed(ins.operands[2], lanes, "b32")
    c, kc = m._typed(ins.operands[3], lanes, "u32")
    result = arith.funnel_shift(a, b, c, "l" in ins.modifiers, "clamp" in ins.modifiers)
    store_result(m, ins, lanes, result, ka & kb & kc, "b32")


def testp(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    t = (_types(ins.modifiers) or ["f32"])[-1]
    what = next((m for m in ins.modifiers if m in ("finite", "infinite", "number", "notanumber", "normal",
                                                   "subnormal")), "finite")
    a, known = m._typed(ins.operands[1], lanes, t)
    m._write(dest_operand(m, ins).name, lanes, arith.testp(what, a).astype(U64), known)


def unknown_result(m: Machine, ins: Instruction, lanes: np.ndarray, why: str = "") -> None:
    reason = why or f"{ins.full_opcode} at line {ins.location.line} is not modelled"
    for reg in ins.dests:
        m._poison(reg, lanes, reason)


def no_op(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    return
