"""The interpreter's memory instructions that the compiled path does not take: loads, stores,
atomics, asynchronous copies, texture fetches and ldmatrix over the memory image, each recorded
for the cache simulation (a part of :class:`engine.execution.machine.Machine`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from engine.execution.image import LOCAL_BASE, SHARED_BASE, WINDOW_MASK
from engine.execution.instruction_facts import (
    U64,
    _space,
    _types,
    _warps_of,
)
from engine.execution.recorder import ATOMIC, LOAD_CACHED, LOAD_UNCACHED, STORE
from engine.execution.typed import BITS, FLOAT_TYPES, read, write
from engine.ptx.parsed_module import Instruction, Operand, OperandKind
from engine.units import AccessKind

if TYPE_CHECKING:
    from engine.execution.machine import Machine


# ------------------------------------------------------------------ memory
def access(m: Machine, ins: Instruction, operand: Operand, lanes: np.ndarray
            ) -> tuple[str, np.ndarray, np.ndarray]:
    """(space, address, known): the address of each lane's access, generic addresses resolved."""
    space = _space(ins.modifiers)
    address, known = m._address(operand, lanes)
    if space == "generic":
        window = address & ~WINDOW_MASK
        if (window == SHARED_BASE).all():
            return "shared", address & WINDOW_MASK, known
        if (window == LOCAL_BASE).all():
            return "local", address & WINDOW_MASK, known
        if ((window == SHARED_BASE) | (window == LOCAL_BASE)).any():
            return "mixed", address, known
        return "global", address, known
    if space in ("shared", "local"):
        window = address & ~WINDOW_MASK
        address = np.where((window == SHARED_BASE) | (window == LOCAL_BASE), address & WINDOW_MASK, address)
    return space, address, known


def local_physical(m: Machine, lanes: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """Where a thread's local word lives: consecutive lanes' same word are adjacent, so a
    warp reading one local variable reads one line."""
    warp = (lanes >> 5).astype(U64)
    frame_words = U64(max(1, -(-m.image.local_size // 4)))
    word = offset >> U64(2)
    lane = (lanes & 31).astype(U64)
    return LOCAL_BASE + ((warp * frame_words + word) * U64(32) + lane) * U64(4) + (offset & U64(3))


def element_registers(m: Machine, ins: Instruction, data: Operand) -> tuple[list[Operand], str, int]:
    types = _types(ins.modifiers)
    t = types[-1] if types else "b32"
    elements = list(data.elements) if data.kind == OperandKind.VECTOR else [data]
    return elements, t, max(1, BITS.get(t, 32) // 8)


def request_kind(m: Machine, ins: Instruction) -> int:
    if ins.opcode in ("atom", "red"):
        return ATOMIC
    if ins.opcode == "st":
        return STORE
    if any(m in ("cg", "cv", "volatile", "relaxed", "acquire") for m in ins.modifiers):
        return LOAD_UNCACHED
    return LOAD_CACHED


def load(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    dest, address_op = ins.operands[0], ins.operands[1]
    elements, t, width = element_registers(m, ins, dest)
    total = width * len(elements)
    reached = _warps_of(lanes)
    space, address, known = access(m, ins, address_op, lanes)
    if space == "param":
        offsets = address.astype(np.int64)
        bits_all = [m.image.load_param(offsets + k * width, width) for k in range(len(elements))]
        for element, (bits, kk) in zip(elements, bits_all, strict=True):
            if element.kind == OperandKind.REGISTER:
                m._write(element.name, lanes, bits, kk & known, "a kernel argument has no value")
        return
    record_with(m, ins, address_op, space, AccessKind.LOAD, total, lanes, address, known, reached)
    for k, element in enumerate(elements):
        if element.kind != OperandKind.REGISTER:
            continue
        bits, kk = read_memory(m, space, lanes, address + U64(k * width), width, t, known)
        m._write(element.name, lanes, bits, kk,
                    f"line {ins.location.line} loads data the launch does not describe")


def read_memory(m: Machine, space: str, lanes: np.ndarray, address: np.ndarray, width: int, t: str,
                 known: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if not len(lanes):
        return np.zeros(0, dtype=U64), np.zeros(0, dtype=bool)
    if space == "shared":
        bits, kk = m.image.load_block("shared", m.block_row[lanes], address, width)
    elif space == "local":
        bits, kk = m.image.load_block("local", lanes, address, width)
    elif space in ("global", "const", "tex"):
        bits, kk = m.image.load_global(address, width, t)
    else:
        return np.zeros(len(lanes), dtype=U64), np.zeros(len(lanes), dtype=bool)
    return bits, kk & known


def write_memory(m: Machine, space: str, lanes: np.ndarray, address: np.ndarray, width: int,
                  bits: np.ndarray, known: np.ndarray) -> None:
    if not len(lanes):
        return
    if space == "shared":
        m.image.store_block("shared", m.block_row[lanes], address, width, bits, known)
    elif space == "local":
        m.image.store_block("local", lanes, address, width, bits, known)
    elif space == "global":
        m.image.store_global(address, width, bits, known)


def store(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    address_op, data = ins.operands[0], ins.operands[1]
    elements, t, width = element_registers(m, ins, data)
    reached = _warps_of(lanes)
    space, address, known = access(m, ins, address_op, lanes)
    record_with(m, ins, address_op, space, AccessKind.STORE, width * len(elements), lanes, address, known,
                      reached)
    for k, element in enumerate(elements):
        bits, kk = m._value(element, lanes, t)
        ok = known
        write_memory(m, space, lanes[ok], address[ok] + U64(k * width), width, bits[ok], kk[ok])


def record_with(m: Machine, ins: Instruction, address_op: Operand, space: str, kind: AccessKind, width: int,
                 lanes: np.ndarray, address: np.ndarray, known: np.ndarray, reached: int) -> None:
    rec = m.recorder
    if len(lanes) and not known.all():
        base_op = address_op.base if address_op.kind == OperandKind.ADDRESS else None
        base = base_op.name if base_op is not None else ""
        rec.unknown(ins.index, space if space != "mixed" else "global", kind, width, int((~known).sum()),
                    m.why.get(base or "", "its address depends on values the run does not know"))
        lanes, address = lanes[known], address[known]
    if space == "mixed":
        rec.unknown(ins.index, "global", kind, width, len(lanes), "its generic address mixes state spaces")
    elif space == "shared":
        rec.shared_access(ins.index, kind, width, lanes, address, reached, m.block_row)
    elif space == "const":
        rec.constant_access(ins.index, width, lanes, address, reached)
    elif space in ("global", "tex"):
        request = {AccessKind.STORE: STORE, AccessKind.ATOMIC: ATOMIC}.get(kind, request_kind(m, ins))
        rec.global_access(ins.index, space, kind, request, width, lanes, address, reached, m.block_of_warp)
    elif space == "local":
        rec.global_access(ins.index, "local", kind, LOAD_CACHED if kind == AccessKind.LOAD else STORE, width, lanes,
                          local_physical(m, lanes, address), reached, m.block_of_warp)


def atomic(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    has_dest = ins.opcode == "atom"
    address_op = ins.operands[1] if has_dest else ins.operands[0]
    srcs = ins.operands[2:] if has_dest else ins.operands[1:]
    types = _types(ins.modifiers)
    t = types[-1] if types else "b32"
    width = max(1, BITS.get(t, 32) // 8)
    op = next((m for m in ins.modifiers if m in ("add", "min", "max", "inc", "dec", "cas", "exch", "and", "or",
                                                   "xor")), "add")
    reached = _warps_of(lanes)
    space, address, known = access(m, ins, address_op, lanes)
    record_with(m, ins, address_op, space, AccessKind.ATOMIC, width, lanes, address, known, reached)
    if not len(lanes):
        return
    values = [m._value(o, lanes, t) for o in srcs]
    value_known = np.logical_and.reduce([k for _, k in values]) if values else np.ones(len(lanes), bool)
    sel = np.flatnonzero(known)
    old_all = np.zeros(len(lanes), dtype=U64)
    old_known = np.zeros(len(lanes), dtype=bool)
    if len(sel) and space in ("global", "shared"):
        apply_atomics(m, op, t, width, space, lanes, address, sel, values, value_known, old_all, old_known)
    if has_dest:
        m._write(ins.operands[0].name, lanes, old_all, old_known,
                    f"the atomic at line {ins.location.line} returns data the run does not know")


def apply_atomics(m: Machine, op: str, t: str, width: int, space: str, lanes: np.ndarray, address: np.ndarray,
                   sel: np.ndarray, values: list[tuple[np.ndarray, np.ndarray]], value_known: np.ndarray,
                   old_all: np.ndarray, old_known: np.ndarray) -> None:
    """The lanes' atomics applied one after another in lane order (a fixed, documented order):
    each lane's old value is what the lanes before it on the same word left."""
    addr = address[sel]
    key = addr if space == "global" else (m.block_row[lanes[sel]].astype(U64) << U64(40)) | addr
    uniq, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
    head_lanes = lanes[sel][first]
    base, base_known = read_memory(m, space, head_lanes, addr[first], width, t, np.ones(len(first), bool))
    order = np.argsort(inverse, kind="stable")
    group = inverse[order]
    operand = values[0][0][sel][order] if values else np.zeros(len(sel), U64)
    okv = value_known[sel][order]
    final = base.copy()
    final_known = base_known.copy()
    olds = np.zeros(len(sel), dtype=U64)
    olds_known = np.zeros(len(sel), dtype=bool)
    starts = np.searchsorted(group, np.arange(len(uniq)))
    if op == "add":
        typed = read(operand, t)
        acc = typed.astype(np.float64) if t in FLOAT_TYPES else typed.astype(np.int64)
        cs = np.cumsum(acc)
        before = np.where(starts > 0, cs[np.maximum(starts - 1, 0)], 0)[group]
        exclusive = cs - acc - before
        base_typed = read(base, t).astype(acc.dtype)
        olds = write((base_typed[group] + exclusive).astype(typed.dtype), t)
        totals = np.add.reduceat(acc, starts) if len(starts) else acc[:0]
        final = write((base_typed + totals).astype(typed.dtype), t)
        group_ok = np.logical_and.reduceat(okv, starts) if len(starts) else okv[:0]
        final_known = base_known & group_ok
        olds_known = (base_known & group_ok)[group]
    else:
        for g in range(len(uniq)):
            current, current_known = final[g:g + 1], bool(final_known[g])
            for j in range(starts[g], starts[g] + counts[g]):
                olds[j], olds_known[j] = current[0], current_known
                lane_index = sel[order[j]]
                current = atomic_value(op, t, current, operand[j:j + 1], values, lane_index)
                current_known = current_known and bool(okv[j])
            final[g], final_known[g] = current[0], current_known
    back = np.empty(len(sel), dtype=np.int64)
    back[order] = np.arange(len(sel))
    old_all[sel] = olds[back]
    old_known[sel] = olds_known[back]
    write_memory(m, space, head_lanes, addr[first], width, final, final_known)


def atomic_value(op: str, t: str, old: np.ndarray, operand: np.ndarray,
                  values: list[tuple[np.ndarray, np.ndarray]], i: int) -> np.ndarray:
    a, b = read(old, t), read(operand, t)
    if op == "add":
        r = a + b
    elif op == "min":
        r = np.minimum(a, b)
    elif op == "max":
        r = np.maximum(a, b)
    elif op == "exch":
        r = b
    elif op == "cas":
        new = read(values[1][0][i:i + 1], t)
        r = np.where(a == b, new, a)
    elif op == "inc":
        r = np.where(a >= b, 0, a + 1)
    elif op == "dec":
        r = np.where((a == 0) | (a > b), b, a - 1)
    else:
        ua, ub = old.astype(U64), operand.astype(U64)
        r = ua & ub if op == "and" else ua | ub if op == "or" else ua ^ ub
        return r
    return write(r, t)


def copy(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    """``cp.async.ca/cg.shared.global [dst], [src], cp-size{, src-size | ignore-src}``: the copy
    happens at once; its global read is recorded like a load (``.cg`` bypasses L1) and its shared
    write like a store. By the ISA a lane reads ``src-size`` bytes of the source (fewer than
    ``cp-size``: the rest of the destination is zero-filled) and none where ``src-size`` is 0 or
    the ``ignore-src`` predicate is true: a masked-off load of a compiler's software pipeline
    (Triton's tail stages) moves no data."""
    full = ins.full_opcode
    if not full.startswith("cp.async") or "bulk" in full:
        if "bulk" in full:
            m.recorder.unknown(ins.index, "global", AccessKind.LOAD, 0, len(lanes),
                                  "bulk (TMA) copies are not followed by the run")
        return
    if len(ins.operands) < 3:
        return
    dst_op, src_op, size_op = ins.operands[0], ins.operands[1], ins.operands[2]
    size = int(size_op.value or 16) if size_op.kind == OperandKind.IMMEDIATE else 16
    reached = _warps_of(lanes)
    run = lanes
    src, known_src = m._address(src_op, run)
    dst, known_dst = m._address(dst_op, run)
    dst = np.where((dst & ~WINDOW_MASK) == SHARED_BASE, dst & WINDOW_MASK, dst)
    read_bytes, known_read = _source_bytes(m, ins, run, size)
    kind = LOAD_UNCACHED if "cg" in ins.modifiers else LOAD_CACHED
    rec = m.recorder
    ok = known_src | (known_read & (read_bytes == 0))
    if len(run) and not ok.all():
        rec.unknown(ins.index, "global", AccessKind.LOAD, size, int((~ok).sum()), "its source address is unknown")
    reads = known_src & (read_bytes > 0)
    # a read of fewer bytes than cp-size stays in the aligned cp-size chunk: the same sector
    rec.global_access(ins.index, "global", AccessKind.LOAD, kind, size, run[reads], src[reads], reached,
                      m.block_of_warp)
    written = ok & known_dst
    for k in range(0, size, 4):
        piece = min(4, size - k)
        bits, kk = m.image.load_global(src[written] + U64(k), piece, "b32")
        filled = read_bytes[written] <= k           # zero-filled by the ISA: known zeros
        bits = np.where(filled, U64(0), bits)
        kk = np.where(filled, known_read[written], kk & known_src[written])
        m.image.store_block("shared", m.block_row[run[written]], dst[written] + U64(k), piece, bits, kk)


def _source_bytes(m: Machine, ins: Instruction, lanes: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Per lane, the bytes a ``cp.async`` reads from its source (``src-size`` clamped to
    ``cp-size``, 0 under a true ``ignore-src``), and whether that is known."""
    n = len(lanes)
    extra = list(ins.operands[3:])
    if extra and "L2::cache_hint" in ins.modifiers:
        extra = extra[:-1]                           # the last operand is the cache policy
    if not extra:
        return np.full(n, size, dtype=np.int64), np.ones(n, dtype=bool)
    op = extra[0]
    value, known = m._value(op, lanes, "u32")
    if op.kind == OperandKind.PREDICATE or op.name in m.predicates:
        return np.where(value != 0, 0, size).astype(np.int64), known
    return np.minimum(value.astype(np.int64) & 0xFFFFFFFF, size), known


def texture(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    """``tex.1d`` at an integer coordinate reads texel ``index`` of the texture's buffer: an
    L1/texture-path load of base + index x texel bytes (4 bytes per component the kernel
    uses). Other geometries have results the run treats as unknown and no address."""
    dest, coords = ins.operands[0], ins.operands[1]
    elements = list(dest.elements) if dest.kind == OperandKind.VECTOR else [dest]
    used = [e for e in elements if e.kind == OperandKind.REGISTER and e.name in m.read_registers]
    reached = _warps_of(lanes)
    geometry = next((m for m in ins.modifiers if m in ("1d", "2d", "3d", "a1d", "a2d", "cube", "acube",
                                                       "2dms", "a2dms")), "")
    types = _types(ins.modifiers)
    coord_t = types[-1] if types else "s32"
    if geometry != "1d" or coord_t[0] not in "su" or coords.kind != OperandKind.ADDRESS or not coords.elements:
        m.recorder.unknown(ins.index, "tex", AccessKind.LOAD, 4 * max(len(used), 1), len(lanes),
                              f"{geometry or 'this'} texture fetches have no address in the run")
        for e in elements:
            if e.kind == OperandKind.REGISTER:
                m._poison(e.name, lanes, "a texture fetch the run does not follow")
        return
    handle = coords.base
    base, kb = m._value(handle, lanes, "u64") if handle is not None else (np.zeros(len(lanes), U64),
                                                                              np.zeros(len(lanes), bool))
    coord = coords.elements[0].elements[0] if coords.elements[0].kind == OperandKind.VECTOR else coords.elements[0]
    index, ki = m._typed(coord, lanes, coord_t)
    texel = 4 * max(len(used), 1)
    address = base + (index.astype(np.int64) * texel).astype(np.int64).view(U64)
    known = kb & ki
    record_with(m, ins, coords, "tex", AccessKind.LOAD, texel, lanes, address, known, reached)
    for k, element in enumerate(elements):
        if element.kind != OperandKind.REGISTER:
            continue
        bits, kk = m.image.load_global(address + U64(4 * k), 4, "f32") if len(lanes) else \
            (np.zeros(0, U64), np.zeros(0, bool))
        m._write(element.name, lanes, bits, kk & known)


def ldmatrix(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    """``ldmatrix``: each of the first 8/16/32 lanes names one 16-byte row in shared memory;
    the fragments it returns are data the run does not follow."""
    dest, address_op = ins.operands[0], ins.operands[1]
    count = next((int(m[1]) for m in ins.modifiers if m in ("x1", "x2", "x4")), 1)
    reached = _warps_of(lanes)
    rows = lanes[(lanes & 31) < 8 * count]
    space, address, known = access(m, ins, address_op, rows)
    record_with(m, ins, address_op, "shared", AccessKind.LOAD, 16, rows, address, known, reached)
    for e in (dest.elements if dest.kind == OperandKind.VECTOR else [dest]):
        if e.kind == OperandKind.REGISTER:
            m._poison(e.name, lanes, "matrix fragments are not followed by the run")
