"""PTX types over lanes: registers hold 64-bit patterns, instructions read and write them typed.

Every register of the interpreter is a row of ``uint64`` bit patterns, one per lane, as the
hardware's registers are untyped bits: a ``.b32`` register written by ``add.s32`` and read by
``mov.f32`` keeps its 32 bits. An instruction's type says how its operands are read: unsigned
and bit types zero-extend their low bits, signed types sign-extend them, ``.f32``/``.f64``/
``.f16``/``.bf16`` reinterpret them as IEEE values, and ``.pred`` is zero or not.
"""

from __future__ import annotations

import numpy as np

BITS: dict[str, int] = {
    "b8": 8, "b16": 16, "b32": 32, "b64": 64, "b128": 128,
    "u8": 8, "u16": 16, "u32": 32, "u64": 64,
    "s8": 8, "s16": 16, "s32": 32, "s64": 64,
    "f16": 16, "bf16": 16, "f32": 32, "f64": 64, "tf32": 32,
    "f16x2": 32, "bf16x2": 32, "e4m3x2": 16, "e5m2x2": 16,
    "pred": 1,
}
FLOAT_TYPES = frozenset({"f16", "bf16", "f32", "f64", "tf32"})
PACKED_TYPES = frozenset({"f16x2", "bf16x2"})
_MASKS = {b: np.uint64((1 << b) - 1) if b < 64 else np.uint64(0xFFFFFFFFFFFFFFFF) for b in (1, 8, 16, 32, 64)}
U64 = np.uint64


def is_type(name: str) -> bool:
    return name in BITS


def width_bytes(type_name: str) -> int:
    return max(1, BITS.get(type_name, 32) // 8)


def low_bits(bits: np.ndarray, width: int) -> np.ndarray:
    """The low ``width`` bits of each pattern (a uint64 array)."""
    if width >= 64:
        return bits
    return bits & _MASKS[width]


def read(bits: np.ndarray, type_name: str | None) -> np.ndarray:
    """The lanes' patterns read as ``type_name`` (uint64 for unsigned/bit types, int64 for signed,
    float32/float64 for floats, float32 for ``f16``/``bf16``, bool for ``pred``)."""
    t = type_name or "b64"
    if t == "pred":
        return bits != 0
    if t == "f32" or t == "tf32":
        return low_bits(bits, 32).astype(np.uint32).view(np.float32)
    if t == "f64":
        return bits.view(np.float64)
    if t == "f16":
        return low_bits(bits, 16).astype(np.uint16).view(np.float16).astype(np.float32)
    if t == "bf16":
        return (low_bits(bits, 16).astype(np.uint32) << np.uint32(16)).view(np.float32)
    width = BITS.get(t, 64)
    if width >= 64:
        return bits.view(np.int64) if t[0] == "s" else bits
    low = low_bits(bits, width)
    if t[0] == "s":
        sign = U64(1 << (width - 1))
        return (low ^ sign).view(np.int64) - np.int64(1 << (width - 1))
    return low


def write(values: np.ndarray, type_name: str | None) -> np.ndarray:
    """The uint64 patterns that store ``values`` as ``type_name`` (inverse of :func:`read`)."""
    t = type_name or "b64"
    if t == "pred":
        return np.asarray(values).astype(bool).astype(np.uint64)
    if t == "f32" or t == "tf32":
        return np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    if t == "f64":
        return np.asarray(values, dtype=np.float64).view(np.uint64)
    if t == "f16":
        return np.asarray(values, dtype=np.float32).astype(np.float16).view(np.uint16).astype(np.uint64)
    if t == "bf16":
        as32 = np.asarray(values, dtype=np.float32).view(np.uint32)
        rounded = (as32 + np.uint32(0x7FFF) + ((as32 >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
        return rounded.astype(np.uint64)
    values = np.asarray(values)
    if values.dtype.kind == "f":
        values = _float_to_int(values, t)
    width = BITS.get(t, 64)
    return low_bits(values.astype(np.int64).view(np.uint64) if values.dtype.kind == "i" else
                    values.astype(np.uint64), min(width, 64))


def _float_to_int(values: np.ndarray, type_name: str) -> np.ndarray:
    """Saturating float-to-integer conversion (PTX: NaN becomes 0, out-of-range values clamp)."""
    width = BITS.get(type_name, 64)
    with np.errstate(invalid="ignore", over="ignore"):
        v = np.nan_to_num(values.astype(np.float64), nan=0.0)
        if type_name[0] == "s":
            lo, hi = -float(1 << (width - 1)), float((1 << (width - 1)) - 1)
            return np.clip(v, lo, hi).astype(np.int64)
        hi = float((1 << width) - 1) if width < 64 else 18446744073709549568.0
        return np.clip(v, 0.0, hi).astype(np.uint64)


def immediate_bits(value: int | float | None, text: str, type_name: str | None) -> np.uint64:
    """The pattern of a literal operand as an instruction of ``type_name`` reads it.

    ``0fXXXXXXXX`` and ``0dXXXXXXXXXXXXXXXX`` are bit patterns and kept exactly; other literals
    take the instruction's type (a float literal in a float instruction, an integer otherwise)."""
    low = text.strip().lower()
    if low.startswith("0f") and len(low) == 10:
        return U64(int(low[2:], 16))
    if low.startswith("0d") and len(low) == 18:
        return U64(int(low[2:], 16))
    t = type_name or "b64"
    if isinstance(value, float) or (t in FLOAT_TYPES and value is not None):
        f = float(value if value is not None else 0.0)
        if t == "f64":
            return np.array([f], dtype=np.float64).view(np.uint64)[0]
        if t == "f16":
            return U64(int(np.array([f], dtype=np.float16).view(np.uint16)[0]))
        return U64(int(np.array([f], dtype=np.float32).view(np.uint32)[0]))
    v = int(value or 0)
    return U64(v & 0xFFFFFFFFFFFFFFFF)
