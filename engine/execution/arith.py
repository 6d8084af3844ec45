"""The arithmetic of PTX instructions on typed lane values (no registers, no memory).

Each function takes operands already read as the instruction's type (see
:mod:`engine.execution.typed`) and returns the result as a numpy array of that type, with PTX
semantics: integer arithmetic wraps at the type's width, ``.sat`` clamps, ``.hi``/``.wide``
products are exact, shifts past the width give 0 (or the sign), C division truncates, float
``min``/``max`` prefer the number over NaN, float-to-integer conversions saturate. What PTX
leaves undefined (integer division by zero) is reported as unknown lanes by the caller.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.execution.typed import BITS

U64 = np.uint64
MASK32 = U64(0xFFFFFFFF)


class Unsupported(Exception):
    """The instruction's semantics are not implemented: its results are unknown lanes."""


def int_binary(op: str, a: np.ndarray, b: np.ndarray, t: str, modifiers: tuple[str, ...]) -> np.ndarray:
    bits = BITS.get(t, 32)
    signed = t[0] == "s"
    if op == "add":
        r = a + b
    elif op == "sub":
        r = a - b
    elif op in ("and", "or", "xor"):
        ua, ub = a.astype(np.uint64) if a.dtype != np.bool_ else a, b.astype(np.uint64) if b.dtype != np.bool_ else b
        r = ua & ub if op == "and" else ua | ub if op == "or" else ua ^ ub
        return r
    elif op == "min":
        r = np.minimum(a, b)
    elif op == "max":
        r = np.maximum(a, b)
    elif op in ("div", "rem"):
        safe = np.where(b == 0, 1, b)
        if signed:
            q = np.abs(a) // np.abs(safe)
            q = np.where((a < 0) != (safe < 0), -q, q)
            r = q if op == "div" else a - q * safe
        else:
            r = a // safe if op == "div" else a % safe
    elif op == "shl":
        amount = b.astype(np.int64)
        r = np.where(amount >= bits, 0, a.astype(np.uint64) << np.minimum(amount, 63).astype(np.uint64))
        return r.astype(np.uint64)
    elif op == "shr":
        amount = np.minimum(b.astype(np.int64), 63)
        if signed:
            r = a >> np.minimum(amount, bits - 1)
        else:
            r = np.where(b.astype(np.int64) >= bits, 0, a.astype(np.uint64) >> amount.astype(np.uint64))
        return r
    else:
        raise Unsupported(op)
    if "sat" in modifiers and signed and bits == 32:
        r = np.clip(r.astype(np.int64), -(1 << 31), (1 << 31) - 1)
    return r


def int_mul(a: np.ndarray, b: np.ndarray, t: str, mode: str) -> np.ndarray:
    """``mul.lo``/``.hi``/``.wide`` of integers of type ``t`` (mode ``lo``, ``hi`` or ``wide``)."""
    bits = BITS.get(t, 32)
    signed = t[0] == "s"
    if bits <= 32:
        wide = a.astype(np.int64) * b.astype(np.int64) if signed else a.astype(np.uint64) * b.astype(np.uint64)
        if mode == "hi":
            return wide >> bits if signed else wide >> U64(bits)
        return wide
    if mode == "lo":
        return a * b
    if mode == "wide":
        raise Unsupported("mul.wide of 64-bit operands")
    ua, ub = a.astype(np.uint64), b.astype(np.uint64)
    a_lo, a_hi = ua & MASK32, ua >> U64(32)
    b_lo, b_hi = ub & MASK32, ub >> U64(32)
    lo_lo = a_lo * b_lo
    mid1 = a_hi * b_lo + (lo_lo >> U64(32))
    mid2 = a_lo * b_hi + (mid1 & MASK32)
    hi = a_hi * b_hi + (mid1 >> U64(32)) + (mid2 >> U64(32))
    if signed:
        hi = hi - np.where(a.astype(np.int64) < 0, ub, U64(0)) - np.where(b.astype(np.int64) < 0, ua, U64(0))
        return hi.view(np.int64)
    return hi


def mul24(a: np.ndarray, b: np.ndarray, t: str, hi: bool) -> np.ndarray:
    signed = t[0] == "s"
    a24 = (a.astype(np.int64) << 40 >> 40) if signed else (a.astype(np.uint64) & U64(0xFFFFFF)).astype(np.int64)
    b24 = (b.astype(np.int64) << 40 >> 40) if signed else (b.astype(np.uint64) & U64(0xFFFFFF)).astype(np.int64)
    product = a24 * b24
    return product >> 16 if hi else product


def int_unary(op: str, a: np.ndarray, t: str) -> np.ndarray:
    bits = BITS.get(t, 32)
    if op == "neg":
        return -a
    if op == "abs":
        return np.abs(a)
    if op == "not":
        return ~a if a.dtype != np.bool_ else ~a
    if op == "cnot":
        return (a == 0).astype(np.uint64)
    ua = a.astype(np.uint64) & (U64((1 << bits) - 1) if bits < 64 else U64(0xFFFFFFFFFFFFFFFF))
    if op == "popc":
        return _popcount(ua)
    if op == "clz":
        return np.where(ua == 0, bits, bits - 1 - _highest_bit(ua)).astype(np.uint64)
    if op == "bfind":
        v = ua
        if t[0] == "s":
            v = np.where(a < 0, ~ua & (U64((1 << bits) - 1) if bits < 64 else U64(0xFFFFFFFFFFFFFFFF)), ua)
        return np.where(v == 0, U64(0xFFFFFFFF), _highest_bit(v).astype(np.uint64))
    if op == "brev":
        out = np.zeros_like(ua)
        for k in range(bits):
            out |= ((ua >> U64(k)) & U64(1)) << U64(bits - 1 - k)
        return out
    raise Unsupported(op)


def _popcount(v: np.ndarray) -> np.ndarray:
    v = v - ((v >> U64(1)) & U64(0x5555555555555555))
    v = (v & U64(0x3333333333333333)) + ((v >> U64(2)) & U64(0x3333333333333333))
    v = (v + (v >> U64(4))) & U64(0x0F0F0F0F0F0F0F0F)
    return (v * U64(0x0101010101010101)) >> U64(56)


def _highest_bit(v: np.ndarray) -> np.ndarray:
    out = np.zeros(v.shape, dtype=np.int64)
    work = v.copy()
    for shift in (32, 16, 8, 4, 2, 1):
        big = work >= (U64(1) << U64(shift))
        out += np.where(big, shift, 0)
        work = np.where(big, work >> U64(shift), work)
    return out


def bfe(a: np.ndarray, pos: np.ndarray, length: np.ndarray, t: str) -> np.ndarray:
    bits = BITS.get(t, 32)
    p = np.clip(pos.astype(np.int64) & 0xFF, 0, bits)
    n = np.clip(length.astype(np.int64) & 0xFF, 0, bits)
    ua = a.astype(np.uint64)
    field = (ua >> p.astype(np.uint64)) & np.where(n >= 64, U64(0xFFFFFFFFFFFFFFFF),
                                                   (U64(1) << n.astype(np.uint64)) - U64(1))
    if t[0] == "s":
        sign_at = np.minimum(p + n - 1, bits - 1)
        sign = ((ua >> sign_at.astype(np.uint64)) & U64(1)).astype(bool) & (n > 0)
        field = np.where(sign, field | ~np.where(n >= 64, U64(0xFFFFFFFFFFFFFFFF),
                                                  (U64(1) << n.astype(np.uint64)) - U64(1)), field)
        return field.view(np.int64)
    return field


def bfi(a: np.ndarray, b: np.ndarray, pos: np.ndarray, length: np.ndarray, t: str) -> np.ndarray:
    bits = BITS.get(t, 32)
    p = np.clip(pos.astype(np.int64) & 0xFF, 0, bits)
    n = np.clip(length.astype(np.int64) & 0xFF, 0, bits - p)
    mask = np.where(n >= 64, U64(0xFFFFFFFFFFFFFFFF), (U64(1) << n.astype(np.uint64)) - U64(1)) << p.astype(np.uint64)
    return (b.astype(np.uint64) & ~mask) | ((a.astype(np.uint64) << p.astype(np.uint64)) & mask)


def prmt(a: np.ndarray, b: np.ndarray, c: np.ndarray, modifiers: tuple[str, ...]) -> np.ndarray:
    """Byte permute (default mode): each selector nibble picks one of the 8 bytes of b:a."""
    if any(m in modifiers for m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")):
        raise Unsupported("prmt mode")
    source = (b.astype(np.uint64) << U64(32)) | (a.astype(np.uint64) & MASK32)
    out = np.zeros(a.shape, dtype=np.uint64)
    sel = c.astype(np.uint64)
    for k in range(4):
        nibble = (sel >> U64(4 * k)) & U64(0xF)
        byte = (source >> ((nibble & U64(7)) * U64(8))) & U64(0xFF)
        sign = ((byte >> U64(7)) & U64(1)).astype(bool) & ((nibble & U64(8)) != 0)
        out |= np.where(sign, U64(0xFF), byte) << U64(8 * k)
    return out


def lop3(a: np.ndarray, b: np.ndarray, c: np.ndarray, lut: int) -> np.ndarray:
    ua, ub, uc = (x.astype(np.uint64) for x in (a, b, c))
    out = np.zeros(ua.shape, dtype=np.uint64)
    for i in range(8):
        if lut >> i & 1:
            out |= (ua if i & 4 else ~ua) & (ub if i & 2 else ~ub) & (uc if i & 1 else ~uc)
    return out & MASK32


def funnel_shift(a: np.ndarray, b: np.ndarray, n: np.ndarray, left: bool, clamp: bool) -> np.ndarray:
    amount = n.astype(np.uint64)
    amount = np.minimum(amount, U64(32)) if clamp else amount & U64(31)
    joined = (b.astype(np.uint64) << U64(32)) | (a.astype(np.uint64) & MASK32)
    if left:
        return ((joined << amount) >> U64(32)) & MASK32
    return (joined >> amount) & MASK32


# ------------------------------------------------------------------------------- floats
def float_binary(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        if op == "add":
            return a + b
        if op == "sub":
            return a - b
        if op == "mul":
            return a * b
        if op == "div":
            return a / b
        if op == "min":
            return np.fmin(a, b)
        if op == "max":
            return np.fmax(a, b)
        if op == "copysign":
            return np.copysign(b, a)
    raise Unsupported(op)


def float_fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """One rounding for f32 (computed in double, then rounded); double-precision fma rounds twice."""
    with np.errstate(all="ignore"):
        if a.dtype == np.float32:
            return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)
        return a * b + c


_UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "neg": np.negative, "abs": np.abs, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos,
    "tanh": np.tanh,
    "rcp": lambda x: 1.0 / x,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "ex2": np.exp2,
    "lg2": np.log2,
}


def float_unary(op: str, a: np.ndarray) -> np.ndarray:
    fn = _UNARY.get(op)
    if fn is None:
        raise Unsupported(op)
    with np.errstate(all="ignore"):
        return fn(a).astype(a.dtype)


def round_float(v: np.ndarray, modifiers: tuple[str, ...]) -> np.ndarray:
    """``cvt.rni``/``rzi``/``rmi``/``rpi`` (round to an integral value)."""
    with np.errstate(all="ignore"):
        if "rzi" in modifiers:
            return np.trunc(v)
        if "rmi" in modifiers:
            return np.floor(v)
        if "rpi" in modifiers:
            return np.ceil(v)
        return np.rint(v)


def float_compare(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        nan = np.isnan(a) | np.isnan(b)
        base = op.rstrip("u") if op not in ("num", "nan") else op
        if op == "num":
            return ~nan
        if op == "nan":
            return nan
        result = _COMPARE[base](a, b)
        if op.endswith("u") and op not in ("lo",):
            return result | nan
        return result & ~nan


def int_compare(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    base = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}.get(op, op)
    fn = _COMPARE.get(base)
    if fn is None:
        raise Unsupported(f"setp.{op}")
    return fn(a, b)


_COMPARE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
}
COMPARISONS = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu",
                         "gtu", "geu", "num", "nan"})


def testp(op: str, a: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        if op == "finite":
            return np.isfinite(a)
        if op == "infinite":
            return np.isinf(a)
        if op == "number":
            return ~np.isnan(a)
        if op == "notanumber":
            return np.isnan(a)
        tiny = np.finfo(a.dtype).tiny
        if op == "normal":
            return np.isfinite(a) & (np.abs(a) >= tiny)
        if op == "subnormal":
            return (a != 0) & (np.abs(a) < tiny)
    raise Unsupported(f"testp.{op}")
