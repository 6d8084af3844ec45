"""The compiled path of the interpreter: runs of plain arithmetic in one numba call.

Most of a kernel's instructions are integer and floating-point arithmetic, moves, comparisons and
selections. :func:`decode` turns each of those into a row of small integers (operation, type,
destination and source registers, immediates); :func:`run_fast` executes a run of such rows for a
set of lanes in compiled loops, with the same semantics as the handlers of
:mod:`engine.execution.machine` (which take every other instruction: memory, warp-wide
operations, control flow). A row the compiled path does not know has operation 0 and ends the run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from engine.execution.typed import BITS, immediate_bits, is_type
from engine.ptx.parsed_module import Function, Instruction, Operand, OperandKind

# operations
(MOV, ADD, SUB, MUL, MAD, FMA, MIN, MAX, AND, OR, XOR, NOT, SHL, SHR, NEG, ABS, SETP, SELP, CVT, CVTA_TO,
 CVTA_FROM, DIV, REM, RCP, SQRT, RSQRT, EX2, LG2, SIN, COS, POPC, CNOT) = range(1, 33)
# type codes
UNSIGNED, SIGNED, F32, F64, PRED = 0, 1, 2, 3, 4
# source kinds
NONE, REG, IMM, SPECIAL, NOTREG = 0, 1, 2, 3, 4
# comparisons (setp): the unordered ones are +16
CMP = {"eq": 1, "ne": 2, "lt": 3, "le": 4, "gt": 5, "ge": 6, "lo": 3, "ls": 4, "hi": 5, "hs": 6,
       "equ": 17, "neu": 18, "ltu": 19, "leu": 20, "gtu": 21, "geu": 22, "num": 7, "nan": 8}
COMBINE = {"and": 1, "or": 2, "xor": 3}
# the operands a compiled mov reads
_MOVED_KINDS = (OperandKind.REGISTER, OperandKind.IMMEDIATE, OperandKind.SPECIAL, OperandKind.SYMBOL,
                OperandKind.PREDICATE)
_SIMPLE = {"add": ADD, "sub": SUB, "min": MIN, "max": MAX, "and": AND, "or": OR, "xor": XOR, "not": NOT,
           "shl": SHL, "shr": SHR, "neg": NEG, "abs": ABS, "div": DIV, "rem": REM, "rcp": RCP, "sqrt": SQRT,
           "rsqrt": RSQRT, "ex2": EX2, "lg2": LG2, "sin": SIN, "cos": COS, "popc": POPC, "cnot": CNOT,
           "selp": SELP, "mov": MOV}
# mode flags
HI, WIDE, SAT, RZI, RMI, RPI, RNI = 1, 2, 4, 8, 16, 32, 64


def _type_code(t: str) -> tuple[int, int]:
    if t == "pred":
        return PRED, 1
    if t == "f32":
        return F32, 32
    if t == "f64":
        return F64, 64
    if t[0] == "f" or t.startswith("bf") or t.endswith("x2") or t == "tf32":
        return -1, 0
    return (SIGNED if t[0] == "s" else UNSIGNED), BITS.get(t, 32)


class Decoded:
    """The compiled path's view of a kernel: one row per instruction (``op`` 0: not compiled)."""

    def __init__(self, function: Function, rows: dict[str, int], specials: list[str],
                 symbols: dict[str, tuple[str, int]], shared_base: int, local_base: int) -> None:
        n = len(function.instructions)
        # Decoded into Python lists, made arrays at the end: a numpy element write costs several
        # times a list's, and a 10^5-instruction kernel makes a million of them.
        self.op: Any = [0] * (n + 1)
        self.typ: Any = [0] * (n + 1)
        self.width: Any = [0] * (n + 1)
        self.styp: Any = [0] * (n + 1)       # cvt source type, setp comparison type
        self.swidth: Any = [0] * (n + 1)
        self.mode: Any = [0] * (n + 1)
        self.cmp: Any = [0] * (n + 1)
        self.combine: Any = [0] * (n + 1)
        self.dst: Any = [-1] * (n + 1)
        self.dst2: Any = [-1] * (n + 1)
        self.guard: Any = [-1] * (n + 1)
        self.guard_neg: Any = [False] * (n + 1)
        self.kind: Any = [0] * (4 * (n + 1))     # row i's four sources at 4i .. 4i + 3
        self.val: Any = [0] * (4 * (n + 1))
        self.base: Any = [0] * (n + 1)       # cvta: the window added or removed
        self.rows, self.specials, self.symbols = rows, {s: k for k, s in enumerate(specials)}, symbols
        self.shared_base, self.local_base = shared_base, local_base
        for ins in function.instructions:
            try:
                self._decode(ins)
            except _NotCompiled:
                self.op[ins.index] = 0
        for name in ("op", "typ", "width", "styp", "swidth", "mode", "cmp", "combine", "dst", "dst2", "guard"):
            setattr(self, name, np.array(getattr(self, name), dtype=np.int64))
        self.guard_neg = np.array(self.guard_neg, dtype=np.bool_)
        self.kind = np.array(self.kind, dtype=np.int64).reshape(n + 1, 4)
        self.val = np.array(self.val, dtype=np.uint64).reshape(n + 1, 4)
        self.base = np.array(self.base, dtype=np.uint64)

    def _source(self, i: int, k: int, op: Operand, t: str) -> None:
        if op.kind == OperandKind.REGISTER and op.name in self.rows:
            self.kind[4 * i + k], self.val[4 * i + k] = REG, self.rows[op.name]
        elif op.kind == OperandKind.PREDICATE and op.name in self.rows:
            self.kind[4 * i + k], self.val[4 * i + k] = (NOTREG if op.negated else REG), self.rows[op.name]
        elif op.kind == OperandKind.IMMEDIATE:
            self.kind[4 * i + k], self.val[4 * i + k] = IMM, immediate_bits(op.value, op.text, t)
        elif op.kind == OperandKind.SPECIAL and (op.name or op.text) in self.specials:
            self.kind[4 * i + k], self.val[4 * i + k] = SPECIAL, self.specials[op.name or op.text]
        elif op.kind == OperandKind.SYMBOL and op.name in self.symbols:
            self.kind[4 * i + k], self.val[4 * i + k] = IMM, np.uint64(self.symbols[op.name][1])
        else:
            raise _NotCompiled()

    def _decode(self, ins: Instruction) -> None:
        i = ins.index
        opcode, mods = ins.opcode, ins.modifiers
        types = [m for m in mods if is_type(m)]
        if not ins.operands or not types:
            raise _NotCompiled()
        t = types[-1]
        code, width = _type_code(t)
        if code < 0:
            raise _NotCompiled()
        dest = ins.operands[0]
        if ins.guard is not None:
            if ins.guard not in self.rows:
                raise _NotCompiled()
            self.guard[i], self.guard_neg[i] = self.rows[ins.guard], ins.guard_negated
        mode = (HI if "hi" in mods else 0) | (WIDE if "wide" in mods else 0) | (SAT if "sat" in mods else 0)
        mode |= RZI if "rzi" in mods else RMI if "rmi" in mods else RPI if "rpi" in mods else \
            RNI if "rni" in mods else 0
        srcs = ins.operands[1:]
        if opcode == "setp":
            cmp = next((m for m in mods if m in CMP), None)
            if cmp is None or dest.kind not in (OperandKind.REGISTER, OperandKind.PAIR):
                raise _NotCompiled()
            self.cmp[i] = CMP[cmp]
            combine = next((m for m in mods if m in COMBINE), None)
            self.combine[i] = COMBINE[combine] if combine and len(srcs) > 2 else 0
            names = [e.name for e in dest.elements] if dest.kind == OperandKind.PAIR else [dest.name]
            if any(n not in self.rows for n in names):
                raise _NotCompiled()
            self.dst[i] = self.rows[names[0]]
            if len(names) > 1:
                self.dst2[i] = self.rows[names[1]]
            for k, o in enumerate(srcs[:3]):
                self._source(i, k, o, "pred" if k == 2 else t)
            op = SETP
        else:
            if dest.kind != OperandKind.REGISTER or dest.name not in self.rows:
                raise _NotCompiled()
            self.dst[i] = self.rows[dest.name]
            if opcode == "cvt":
                if len(types) < 2:
                    raise _NotCompiled()
                code, width = _type_code(types[0])
                scode, swidth = _type_code(types[1])
                if code < 0 or scode < 0 or code == PRED or scode == PRED:
                    raise _NotCompiled()
                self.styp[i], self.swidth[i] = scode, swidth
                self._source(i, 0, srcs[0], types[1])
                op = CVT
            elif opcode == "cvta":
                space = next((m for m in mods if m in ("shared", "local", "global", "const", "param")), None)
                if space not in ("shared", "local", "global"):
                    raise _NotCompiled()
                self.base[i] = {"shared": self.shared_base, "local": self.local_base}.get(space, 0)
                self._source(i, 0, srcs[0], "u64")
                op = CVTA_TO if "to" in mods else CVTA_FROM
                if "u32" in mods:
                    width = 32
            elif opcode == "mul":
                if (mode & (HI | WIDE)) and width > 32:
                    raise _NotCompiled()
                op = MUL
            elif opcode in ("mad", "fma"):
                if "cc" in mods:
                    raise _NotCompiled()
                if (mode & (HI | WIDE)) and width > 32:
                    raise _NotCompiled()
                op = FMA if code in (F32, F64) else MAD
            elif opcode in _SIMPLE:
                op = _SIMPLE[opcode]
                if op == MOV and srcs[0].kind not in _MOVED_KINDS:
                    raise _NotCompiled()
                if op in (RCP, SQRT, RSQRT, EX2, LG2, SIN, COS) and code not in (F32, F64):
                    raise _NotCompiled()
                if op in (POPC, CNOT) and code in (F32, F64):
                    raise _NotCompiled()
            else:
                raise _NotCompiled()
            if opcode not in ("cvt", "cvta"):
                for k, o in enumerate(srcs[:4]):
                    src_t = "u32" if (op in (SHL, SHR) and k == 1) else "pred" if (op == SELP and k == 2) else t
                    self._source(i, k, o, src_t)
        self.op[i], self.typ[i], self.width[i], self.mode[i] = op, code, width, mode


class _NotCompiled(Exception):
    pass


# ------------------------------------------------------------------------------------ compiled
@njit(cache=True, nogil=True, inline="always")
def _mask(width):      # pragma: no cover - compiled
    if width >= 64:
        return np.uint64(0xFFFFFFFFFFFFFFFF)
    return (np.uint64(1) << np.uint64(width)) - np.uint64(1)


@njit(cache=True, nogil=True, inline="always")
def _signed(bits, width):      # pragma: no cover - compiled
    """The pattern's low ``width`` bits as a signed integer."""
    if width >= 64:
        return np.int64(bits)
    low = bits & _mask(width)
    sign = np.uint64(1) << np.uint64(width - 1)
    return np.int64(low ^ sign) - np.int64(sign)


@njit(cache=True, nogil=True, inline="always")
def _f32(bits, scratch32, view32):      # pragma: no cover - compiled
    scratch32[0] = np.uint32(bits & np.uint64(0xFFFFFFFF))
    return view32[0]


@njit(cache=True, nogil=True, inline="always")
def _from_f32(x, scratch32, view32):      # pragma: no cover - compiled
    view32[0] = np.float32(x)
    return np.uint64(scratch32[0])


@njit(cache=True, nogil=True, inline="always")
def _f64(bits, scratch64, view64):      # pragma: no cover - compiled
    scratch64[0] = bits
    return view64[0]


@njit(cache=True, nogil=True, inline="always")
def _from_f64(x, scratch64, view64):      # pragma: no cover - compiled
    view64[0] = x
    return scratch64[0]


@njit(cache=True, nogil=True)
def run_fast(start, end, lanes, regs, known, specials, op, typ, width, styp, swidth, mode, cmp, combine,
             dst, dst2, guard, guard_neg, kind, val, base):      # pragma: no cover - compiled
    """Runs instructions ``start``.. while they are compiled (``op`` > 0) and before ``end``, for
    ``lanes``; returns the index of the first it did not run."""
    scratch32 = np.zeros(1, dtype=np.uint32)
    view32 = scratch32.view(np.float32)
    scratch64 = np.zeros(1, dtype=np.uint64)
    view64 = scratch64.view(np.float64)
    i = start
    n = lanes.shape[0]
    srcb = np.zeros(4, dtype=np.uint64)
    srck = np.zeros(4, dtype=np.bool_)
    while i < end and op[i] > 0:
        o = op[i]
        t = typ[i]
        w = width[i]
        m = mode[i]
        for li in range(n):
            lane = lanes[li]
            ok = True
            if guard[i] >= 0:
                g = regs[guard[i], lane] != 0
                if not known[guard[i], lane]:
                    known[dst[i], lane] = False
                    if dst2[i] >= 0:
                        known[dst2[i], lane] = False
                    continue
                if g == guard_neg[i]:
                    continue
            for k in range(4):
                kd = kind[i, k]
                if kd == 0:
                    srcb[k] = 0
                    srck[k] = True
                elif kd == 1:
                    srcb[k] = regs[val[i, k], lane]
                    srck[k] = known[val[i, k], lane]
                elif kd == 2:
                    srcb[k] = val[i, k]
                    srck[k] = True
                elif kd == 3:
                    srcb[k] = specials[val[i, k], lane]
                    srck[k] = True
                else:
                    srcb[k] = np.uint64(1) if regs[val[i, k], lane] == 0 else np.uint64(0)
                    srck[k] = known[val[i, k], lane]
            a = srcb[0]
            b = srcb[1]
            c = srcb[2]
            ok = srck[0] and srck[1] and srck[2] and srck[3]
            out = np.uint64(0)
            out2 = np.uint64(0)
            if o == MOV:
                out = a if t != PRED else (np.uint64(1) if a != 0 else np.uint64(0))
                ok = srck[0]
            elif o == CVTA_TO:
                out = a - base[i] if (a & ~np.uint64(0xFFFFFFFFFF)) == base[i] and base[i] != 0 else a
                out &= _mask(w)
                ok = srck[0]
            elif o == CVTA_FROM:
                out = (a + base[i]) & _mask(w)
                ok = srck[0]
            elif t == F32 or t == F64:
                if t == F32:
                    x = np.float64(_f32(a, scratch32, view32))
                    y = np.float64(_f32(b, scratch32, view32))
                    z = np.float64(_f32(c, scratch32, view32))
                else:
                    x = _f64(a, scratch64, view64)
                    y = _f64(b, scratch64, view64)
                    z = _f64(c, scratch64, view64)
                r = 0.0
                if o == SETP:
                    cc = cmp[i]
                    nan = np.isnan(x) or np.isnan(y)
                    base_c = cc & 15
                    res = False
                    if base_c == 1:
                        res = x == y
                    elif base_c == 2:
                        res = x != y
                    elif base_c == 3:
                        res = x < y
                    elif base_c == 4:
                        res = x <= y
                    elif base_c == 5:
                        res = x > y
                    elif base_c == 6:
                        res = x >= y
                    elif base_c == 7:
                        res = not nan
                    elif base_c == 8:
                        res = nan
                    if base_c <= 6:
                        res = (res or nan) if cc >= 16 else (res and not nan)
                    out = np.uint64(res)
                    out2 = np.uint64(not res)
                    if combine[i] > 0:
                        other = srcb[2] != 0
                        ok = srck[0] and srck[1] and srck[2]
                        if combine[i] == 1:
                            out, out2 = np.uint64(res and other), np.uint64((not res) and other)
                        elif combine[i] == 2:
                            out, out2 = np.uint64(res or other), np.uint64((not res) or other)
                        else:
                            out, out2 = np.uint64(res != other), np.uint64((not res) != other)
                    else:
                        ok = srck[0] and srck[1]
                elif o == SELP:
                    out = a if c != 0 else b
                    ok = srck[2] and (srck[0] if c != 0 else srck[1])
                elif o == CVT:
                    st = styp[i]
                    if st == F32:
                        v = np.float64(_f32(a, scratch32, view32))
                    elif st == F64:
                        v = _f64(a, scratch64, view64)
                    elif st == SIGNED:
                        v = np.float64(_signed(a, swidth[i]))
                    else:
                        v = np.float64(a & _mask(swidth[i]))
                    if m & RZI:
                        v = np.trunc(v)
                    elif m & RMI:
                        v = np.floor(v)
                    elif m & RPI:
                        v = np.ceil(v)
                    elif m & RNI:
                        v = np.rint(v)
                    if m & SAT:
                        v = min(max(v, 0.0), 1.0)
                    r = v
                    ok = srck[0]
                else:
                    if o == ADD:
                        r = x + y
                    elif o == SUB:
                        r = x - y
                    elif o == MUL:
                        r = x * y
                    elif o == FMA:
                        r = x * y + z
                    elif o == MIN:
                        r = y if np.isnan(x) else (x if np.isnan(y) else min(x, y))
                    elif o == MAX:
                        r = y if np.isnan(x) else (x if np.isnan(y) else max(x, y))
                    elif o == NEG:
                        r = -x
                    elif o == ABS:
                        r = abs(x)
                    elif o == DIV:
                        r = x / y if y != 0 else (np.nan if x == 0 else np.inf * np.sign(x) * (1 if y >= 0 else -1))
                    elif o == RCP:
                        r = 1.0 / x if x != 0 else np.inf
                    elif o == SQRT:
                        r = np.sqrt(x) if x >= 0 else np.nan
                    elif o == RSQRT:
                        r = 1.0 / np.sqrt(x) if x > 0 else (np.inf if x == 0 else np.nan)
                    elif o == EX2:
                        r = 2.0 ** x if x < 1024 else np.inf
                    elif o == LG2:
                        r = np.log2(x) if x > 0 else (-np.inf if x == 0 else np.nan)
                    elif o == SIN:
                        r = np.sin(x)
                    elif o == COS:
                        r = np.cos(x)
                    if m & SAT:
                        r = min(max(r, 0.0), 1.0)
                if o != SETP and o != SELP:
                    if t == F32:
                        out = _from_f32(r, scratch32, view32)
                    else:
                        out = _from_f64(r, scratch64, view64)
            else:
                mk = _mask(w)
                signed = t == SIGNED
                if o == ADD:
                    if m & SAT and signed and w == 32:
                        s = _signed(a, 32) + _signed(b, 32)
                        s = min(max(s, -2147483648), 2147483647)
                        out = np.uint64(s) & mk
                    else:
                        out = (a + b) & mk
                elif o == SUB:
                    out = (a - b) & mk
                elif o == MUL or o == MAD:
                    if m & HI or m & WIDE:
                        if w > 32:
                            ok = False
                        if signed:
                            prod = np.uint64(_signed(a, w) * _signed(b, w))
                        else:
                            prod = (a & mk) * (b & mk)
                        if m & HI:
                            prod = (prod >> np.uint64(w)) if not signed else np.uint64(np.int64(prod) >> w)
                            out = prod & mk
                        else:
                            out = prod & _mask(2 * w)
                    else:
                        out = (a * b) & mk
                    if o == MAD:
                        out = (out + c) & (_mask(2 * w) if m & WIDE else mk)
                elif o == AND:
                    out = (a & b) & mk
                elif o == OR:
                    out = (a | b) & mk
                elif o == XOR:
                    out = (a ^ b) & mk
                elif o == NOT:
                    out = (np.uint64(1) if a == 0 else np.uint64(0)) if t == PRED else (~a) & mk
                elif o == CNOT:
                    out = np.uint64(1) if (a & mk) == 0 else np.uint64(0)
                elif o == NEG:
                    out = (np.uint64(0) - a) & mk
                elif o == ABS:
                    s = _signed(a, w)
                    out = np.uint64(-s if s < 0 else s) & mk
                elif o == SHL:
                    sh = b & np.uint64(0xFFFFFFFF)
                    out = np.uint64(0) if sh >= np.uint64(w) else (a << sh) & mk
                elif o == SHR:
                    sh = b & np.uint64(0xFFFFFFFF)
                    if signed:
                        s = _signed(a, w)
                        out = np.uint64(s >> min(np.int64(sh), w - 1)) & mk
                    else:
                        out = np.uint64(0) if sh >= np.uint64(w) else ((a & mk) >> sh)
                elif o == MIN or o == MAX:
                    if signed:
                        sa, sb = _signed(a, w), _signed(b, w)
                        out = np.uint64(min(sa, sb) if o == MIN else max(sa, sb)) & mk
                    else:
                        ua, ub = a & mk, b & mk
                        out = min(ua, ub) if o == MIN else max(ua, ub)
                elif o == DIV or o == REM:
                    if (b & mk) == 0:
                        ok = False
                        out = np.uint64(0)
                    elif signed:
                        sa, sb = _signed(a, w), _signed(b, w)
                        q = abs(sa) // abs(sb)
                        if (sa < 0) != (sb < 0):
                            q = -q
                        out = np.uint64(q if o == DIV else sa - q * sb) & mk
                    else:
                        ua, ub = a & mk, b & mk
                        out = ua // ub if o == DIV else ua % ub
                elif o == POPC:
                    v = a & mk
                    cnt = 0
                    while v:
                        v &= v - np.uint64(1)
                        cnt += 1
                    out = np.uint64(cnt)
                elif o == SETP:
                    cc = cmp[i] & 15
                    if signed:
                        sa, sb = _signed(a, w), _signed(b, w)
                        res = (sa == sb) if cc == 1 else (sa != sb) if cc == 2 else (sa < sb) if cc == 3 else \
                            (sa <= sb) if cc == 4 else (sa > sb) if cc == 5 else (sa >= sb)
                    else:
                        ua, ub = a & mk, b & mk
                        res = (ua == ub) if cc == 1 else (ua != ub) if cc == 2 else (ua < ub) if cc == 3 else \
                            (ua <= ub) if cc == 4 else (ua > ub) if cc == 5 else (ua >= ub)
                    out = np.uint64(res)
                    out2 = np.uint64(not res)
                    ok = srck[0] and srck[1]
                    if combine[i] > 0:
                        other = srcb[2] != 0
                        ok = ok and srck[2]
                        if combine[i] == 1:
                            out, out2 = np.uint64(res and other), np.uint64((not res) and other)
                        elif combine[i] == 2:
                            out, out2 = np.uint64(res or other), np.uint64((not res) or other)
                        else:
                            out, out2 = np.uint64(res != other), np.uint64((not res) != other)
                elif o == SELP:
                    out = a if c != 0 else b
                    ok = srck[2] and (srck[0] if c != 0 else srck[1])
                elif o == CVT:
                    st = styp[i]
                    if st == F32 or st == F64:
                        v = np.float64(_f32(a, scratch32, view32)) if st == F32 else _f64(a, scratch64, view64)
                        if m & RMI:
                            v = np.floor(v)
                        elif m & RPI:
                            v = np.ceil(v)
                        elif m & RNI:
                            v = np.rint(v)
                        else:
                            v = np.trunc(v)
                        if np.isnan(v):
                            v = 0.0
                        if signed:
                            lo = -float(2 ** (w - 1))
                            hi = float(2 ** (w - 1)) - 1.0
                            v = min(max(v, lo), hi)
                            out = np.uint64(np.int64(v)) & mk
                        else:
                            hi = float(2 ** w) - 1.0 if w < 64 else 1.8446744073709550e19
                            v = min(max(v, 0.0), hi)
                            out = np.uint64(v) & mk
                    else:
                        v_int = _signed(a, swidth[i]) if st == SIGNED else np.int64(a & _mask(swidth[i]))
                        if m & SAT:
                            if signed:
                                v_int = min(max(v_int, -(np.int64(1) << (w - 1))), (np.int64(1) << (w - 1)) - 1)
                            elif w < 64:
                                v_int = min(max(v_int, 0), (np.int64(1) << w) - 1)
                        out = np.uint64(v_int) & mk
                    ok = srck[0]
            regs[dst[i], lane] = out
            known[dst[i], lane] = ok
            if dst2[i] >= 0:
                regs[dst2[i], lane] = out2
                known[dst2[i], lane] = ok
        i += 1
    return i
