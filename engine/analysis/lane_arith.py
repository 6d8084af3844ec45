"""Integer arithmetic of one PTX instruction over every lane of a block, with PTX semantics.

Wrap to the instruction type, C division and remainder, logical shifts of unsigned types,
``cvt`` read as its source type, ``setp`` with its combining predicate, ``selp``, ``bfe``,
``mul.hi``/``.wide``. Shared by the two per-lane evaluators: the memory analysis's addresses
(:mod:`engine.memory.lane_addresses`) and the trip counts that depend on thread indices
(:mod:`engine.analysis.tripcount`); each reads the operands its own way.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.analysis.classify import TYPE_BYTES
from engine.ptx.parsed_module import Instruction, Operand, OperandKind

COMPARE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal,
}


class LaneError(Exception):
    """A value that cannot be computed per lane; the message says why."""


def int64(v: int) -> int:
    """A Python int as the int64 with the same low 64 bits (``0xFFFFFFFFFFFFFFFF`` -> -1)."""
    return ((int(v) + (1 << 63)) % (1 << 64)) - (1 << 63)


def wrap(v: np.ndarray, type_name: str | None) -> np.ndarray:
    """Re-read ``v`` as ``type_name`` (two's complement wrap for 8/16/32-bit types)."""
    if type_name is None or type_name == "pred":
        return v
    bits = 8 * TYPE_BYTES.get(type_name, 8)
    if bits >= 64:
        return v  # int64 arithmetic already wraps at 64 bits
    v = np.asarray(v, dtype=np.int64) & ((1 << bits) - 1)
    if type_name[0] == "s":
        v = np.where(v >= 1 << (bits - 1), v - (1 << bits), v)
    return v


def cdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C division (toward zero)."""
    if np.any(b == 0):
        raise LaneError("division by zero")
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def integer_result(instr: Instruction, register: str,
                   read: Callable[[Operand, str | None], np.ndarray]) -> np.ndarray:
    """The value ``instr`` gives ``register`` in every lane, its operands read by
    ``read(operand, type)``; :class:`LaneError` when it is not integer arithmetic."""
    op, line = instr.opcode, instr.location.line
    types = [m for m in instr.modifiers if m in TYPE_BYTES]
    if types and not all(t[0] in "bsu" or t == "pred" for t in types):
        raise LaneError(f"{instr.full_opcode} at line {line} is not integer arithmetic")
    t = types[-1] if types else None
    dest = instr.operands[0] if instr.operands else None
    # setp.<cmp> %p|%q: the second register of the pair receives the complement
    complement = (dest is not None and dest.kind == OperandKind.PAIR and len(dest.elements) == 2
                  and dest.elements[1].name == register)
    if complement and op != "setp":
        raise LaneError(f"{instr.full_opcode} at line {line} writes a register pair")
    ins = [read(o, t) for o in instr.operands[1:]]
    xs = [wrap(v, t) for v in ins]
    if op in ("mov", "cvt", "cvta"):
        # cvt.<dst>.<src>: read as the source type, then wrap to the destination type.
        src = wrap(ins[0], types[-1] if types else None)
        return wrap(src, types[0] if types else None)
    if op == "setp":
        cmp = next((m for m in instr.modifiers if m in COMPARE), None)
        if cmp is None or len(xs) < 2:
            raise LaneError(f"{instr.full_opcode} at line {line} is not an integer comparison")
        if t is not None and t[0] in "bu" and cmp in ("lt", "le", "gt", "ge"):
            xs = [wrap(v, "u" + t[1:]) for v in xs]
        result = COMPARE[cmp](xs[0], xs[1])
        combine = next((m for m in instr.modifiers if m in ("and", "or", "xor")), None)
        if combine is not None and len(ins) >= 3:
            other = ins[2] != 0
            result = result & other if combine == "and" else result | other if combine == "or" \
                else result ^ other
        return (~result if complement else result).astype(np.int64)
    if op == "selp" and len(ins) == 3:
        return np.where(ins[2] != 0, xs[0], xs[1])
    out_t = t[0] + str(2 * 8 * TYPE_BYTES[t]) if "wide" in instr.modifiers and t else t
    result = _arith(instr, xs, t)
    return wrap(result, out_t)


def _arith(instr: Instruction, xs: list[np.ndarray], t: str | None) -> np.ndarray:
    op, line = instr.opcode, instr.location.line
    if op == "not" and t == "pred" and xs:  # logical, not bitwise (~1 would still be true)
        return (xs[0] == 0).astype(np.int64)
    if op in ("neg", "not", "abs") and xs:
        return -xs[0] if op == "neg" else ~xs[0] if op == "not" else np.abs(xs[0])
    if len(xs) < 2:
        raise LaneError(f"{instr.full_opcode} at line {line} is not supported")
    a, b = xs[0], xs[1]
    bits = 8 * TYPE_BYTES.get(t or "", 4)
    if op in ("mul", "mad"):
        if "hi" in instr.modifiers:
            if bits > 32:
                raise LaneError(f"{instr.full_opcode} at line {line}: 64-bit high products")
            if t and t[0] in "bu":
                a, b = wrap(a, f"u{bits}"), wrap(b, f"u{bits}")
            r = (a * b) >> bits
        else:
            r = a * b
        return r + xs[2] if op == "mad" and len(xs) > 2 else r
    simple: dict[str, Callable[[], np.ndarray]] = {
        "add": lambda: a + b, "sub": lambda: a - b, "and": lambda: a & b, "or": lambda: a | b,
        "xor": lambda: a ^ b, "min": lambda: np.minimum(a, b), "max": lambda: np.maximum(a, b),
        "div": lambda: cdiv(a, b), "rem": lambda: a - cdiv(a, b) * b,
        "shl": lambda: a << np.minimum(b, bits),
    }
    if op in simple:
        return simple[op]()
    if op == "bfe" and len(xs) == 3:  # bit field extract: len bits from pos, sign-extended for .s
        pos, length = np.clip(xs[1] & 0xFF, 0, bits), np.clip(xs[2] & 0xFF, 0, bits)
        field = (wrap(a, f"u{bits}") if bits < 64 else a) >> pos & ((1 << length) - 1)
        if t and t[0] == "s":
            sign = (length > 0) & ((field >> np.maximum(length - 1, 0)) & 1 == 1)
            field = np.where(sign, field - (1 << length), field)
        return field
    if op == "shr":
        if t and t[0] in "bu":  # logical shift: read as unsigned first
            a = wrap(a, f"u{bits}") if bits < 64 else a
        return a >> np.minimum(b, bits - 1)
    raise LaneError(f"{instr.full_opcode} at line {line} is not integer arithmetic")
