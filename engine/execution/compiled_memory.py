"""The compiled path of loads and stores: one numba call per memory instruction and group of lanes.

Global, shared, local and parameter loads and stores of up to four 1-, 2-, 4- or 8-byte elements
(``ld``, ``ldu``, ``st``, generic addresses that all fall in global memory) run here with the
semantics of :mod:`engine.execution.machine`'s handlers: the same default data
(:func:`engine.execution.image._global_load`), the same requests (:func:`engine.execution.requests._requests`),
the same counters and cache log. What this path does not take it *declines* (returns False before
changing anything) and the interpreted handler runs the instruction instead: an address a lane
does not know, a generic address into shared or local memory, a load from a buffer the run stored
to, a log or store table without room.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.execution.image import CHUNK_BYTES, _global_load, _overlay_patch, _overlay_store
from engine.execution.recorder import (
    C_ACTIVE,
    C_DISTINCT,
    C_LINES,
    C_LINES_MAX,
    C_REQUESTS,
    C_SECTORS,
    C_SECTORS_MAX,
    C_WARPS,
    C_WAVEFRONTS,
    C_WAVEFRONTS_MAX,
)
from engine.execution.requests import _requests
from engine.execution.typed import immediate_bits
from engine.ptx.parsed_module import Function, OperandKind

# spaces and kinds of Decoded memory rows
M_GLOBAL, M_SHARED, M_LOCAL, M_PARAM, M_GENERIC = 1, 2, 3, 4, 5
M_LOAD, M_STORE = 1, 2
FLOAT_KIND = {"f32": 1, "tf32": 1, "f64": 2, "f16": 3, "bf16": 4}
_SPACE = {"global": M_GLOBAL, "shared": M_SHARED, "shared::cta": M_SHARED, "local": M_LOCAL, "param": M_PARAM}
_WIDTH = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2, "b32": 4, "u32": 4,
          "s32": 4, "f32": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8}
WINDOW_SHIFT = np.uint64(40)


class MemoryRows:
    """Per instruction: how the compiled path runs it (``space`` 0: it does not)."""

    def __init__(self, function: Function, rows: dict[str, int], symbols: dict[str, tuple[str, int]]) -> None:
        n = len(function.instructions)
        self.space = np.zeros(n + 1, dtype=np.int64)
        self.kind = np.zeros(n + 1, dtype=np.int64)
        self.request = np.zeros(n + 1, dtype=np.int64)
        self.width = np.zeros(n + 1, dtype=np.int64)
        self.vector = np.zeros(n + 1, dtype=np.int64)
        self.float_kind = np.zeros(n + 1, dtype=np.int64)
        self.base_kind = np.zeros(n + 1, dtype=np.int64)     # 1 register, 2 value
        self.base = np.zeros(n + 1, dtype=np.uint64)
        self.offset = np.zeros(n + 1, dtype=np.int64)
        self.element_kind = np.zeros((n + 1, 4), dtype=np.int64)   # 0 none, 1 register, 2 value
        self.element = np.zeros((n + 1, 4), dtype=np.uint64)
        self.guard = np.full(n + 1, -1, dtype=np.int64)
        self.guard_negated = np.zeros(n + 1, dtype=np.bool_)
        for ins in function.instructions:
            if ins.opcode not in ("ld", "ldu", "st") or len(ins.operands) < 2:
                continue
            mods = ins.modifiers
            if any(m in ("volatile", "relaxed", "acquire", "release", "mmio") for m in mods):
                continue
            space = next((_SPACE[m] for m in mods if m in _SPACE), M_GENERIC)
            types = [m for m in mods if m in _WIDTH]
            vector = next((int(m[1]) for m in mods if m in ("v2", "v4")), 1)
            if not types or any(m.startswith("v8") for m in mods):
                continue
            load = ins.opcode in ("ld", "ldu")
            address, data = (ins.operands[1], ins.operands[0]) if load else (ins.operands[0], ins.operands[1])
            if address.kind != OperandKind.ADDRESS:
                continue
            i = ins.index
            if address.base is None:
                self.base_kind[i], self.base[i] = 2, np.uint64(0)
            elif address.base.kind == OperandKind.REGISTER and address.base.name in rows:
                self.base_kind[i], self.base[i] = 1, rows[address.base.name]
            elif address.base.kind == OperandKind.SYMBOL and address.base.name in symbols:
                self.base_kind[i], self.base[i] = 2, np.uint64(symbols[address.base.name][1])
            elif address.base.kind == OperandKind.IMMEDIATE:
                self.base_kind[i], self.base[i] = 2, np.uint64(int(address.base.value or 0) & 0xFFFFFFFFFFFFFFFF)
            else:
                continue
            elements = list(data.elements) if data.kind == OperandKind.VECTOR else [data]
            if len(elements) != vector:
                continue
            ok = True
            for k, e in enumerate(elements):
                if e.kind == OperandKind.REGISTER and e.name in rows:
                    self.element_kind[i, k], self.element[i, k] = 1, rows[e.name]
                elif e.kind == OperandKind.PLACEHOLDER:
                    self.element_kind[i, k] = 0
                elif e.kind == OperandKind.IMMEDIATE and not load:
                    self.element_kind[i, k], self.element[i, k] = 2, immediate_bits(e.value, e.text, types[-1])
                else:
                    ok = False
            if not ok or (ins.guard is not None and ins.guard not in rows):
                continue
            if not -(1 << 63) <= address.offset < (1 << 63):   # not an address: run as declined
                continue
            if ins.guard is not None:
                self.guard[i], self.guard_negated[i] = rows[ins.guard], ins.guard_negated
            self.space[i] = space
            self.kind[i] = M_LOAD if load else M_STORE
            self.request[i] = (1 if any(m in ("cg", "cv") for m in mods) else 0) if load else 2
            self.width[i] = _WIDTH[types[-1]]
            self.vector[i] = vector
            self.float_kind[i] = FLOAT_KIND.get(types[-1], 0)
            self.offset[i] = address.offset


@njit(cache=True, nogil=True)
def memory_op(i, lanes, n_warps, regs, known, space, kind, request, width, vector, float_kind, base_kind, base,
              offset, element_kind, element, guard, guard_negated,
              w_kind, w_a, w_b, w_start, w_len, w_written, initial, offsets,
              ov_keys, ov_vals, ov_stored, ov_good, ov_used,
              shared, shared_known, local, local_known, param, param_known, block_row, local_frame_words,
              shared_base, local_base, counters, block_of_warp,
              req_instr, req_block, req_kind, req_warp, req_segment, segment_now, ent_req, ent_line, ent_sectors,
              ent_bytes, log_counts, max_entries):      # pragma: no cover - compiled
    """Runs memory instruction ``i`` for ``lanes``; False when it declines (nothing changed)."""
    n = lanes.shape[0]
    run = np.empty(n, dtype=np.int64)
    addr = np.empty(n, dtype=np.uint64)
    m = 0
    g = guard[i]
    for li in range(n):
        lane = lanes[li]
        if g >= 0:
            if not known[g, lane]:
                return False
            if (regs[g, lane] != 0) == guard_negated[i]:
                continue
        if base_kind[i] == 1:
            if not known[np.int64(base[i]), lane]:
                return False
            a = regs[np.int64(base[i]), lane] + np.uint64(offset[i])
        else:
            a = base[i] + np.uint64(offset[i])
        run[m] = lane
        addr[m] = a
        m += 1
    sp = space[i]
    w = width[i]
    vec = vector[i]
    total = w * vec
    window_mask = (np.uint64(1) << WINDOW_SHIFT) - np.uint64(1)
    for j in range(m):
        win = addr[j] & ~window_mask
        if sp == M_GENERIC:
            if win == shared_base or win == local_base:
                return False
        elif sp == M_SHARED or sp == M_LOCAL:
            if win == shared_base or win == local_base:
                addr[j] = addr[j] & window_mask
    if sp == M_GLOBAL or sp == M_GENERIC:
        if kind[i] == 2:
            need = ov_used[0] + m * (total // CHUNK_BYTES + 2)
            if need * 2 > ov_keys.shape[0]:
                return False                     # the interpreted path grows the table
    logged = sp == M_GLOBAL or sp == M_GENERIC or sp == M_LOCAL
    req_addr = addr[:m].copy()
    if sp == M_LOCAL:
        for j in range(m):
            lane = run[j]
            warp = np.uint64(lane >> 5)
            word = addr[j] >> np.uint64(2)
            req_addr[j] = local_base + ((warp * np.uint64(local_frame_words) + word) * np.uint64(32)
                                        + np.uint64(lane & 31)) * np.uint64(4) + (addr[j] & np.uint64(3))
    rk = request[i]
    if logged and m > 0 and log_counts[2] == 0:
        if log_counts[1] + 2 * m > max_entries:
            log_counts[2] = 1
        elif log_counts[0] + m > req_instr.shape[0] or log_counts[1] + 2 * m > ent_line.shape[0]:
            return False                         # the interpreted path grows the log
    if sp == M_PARAM:
        for j in range(m):
            for k in range(vec):
                ek = element_kind[i, k]
                if ek != 1:
                    continue
                off = np.int64(addr[j]) + k * w
                bits = np.uint64(0)
                ok = 0 <= off and off + w <= param.shape[0]
                if ok:
                    for b in range(w):
                        bits |= np.uint64(param[off + b]) << np.uint64(8 * b)
                        ok = ok and param_known[off + b]
                r = np.int64(element[i, k])
                regs[r, run[j]] = bits
                known[r, run[j]] = ok
        return True
    # --- the request: counters and the cache log
    counters[i, C_WARPS] += n_warps
    if m > 0:
        stores = kind[i] == 2
        (warps, active, sectors, lines, bank, distinct, e_row, e_line, e_sec, e_bytes) = _requests(
            run[:m], req_addr, total, stores, logged)
        nr = warps.shape[0]
        counters[i, C_REQUESTS] += nr
        counters[i, C_ACTIVE] += active.sum()
        counters[i, C_SECTORS] += sectors.sum()
        counters[i, C_LINES] += lines.sum()
        counters[i, C_SECTORS_MAX] = max(counters[i, C_SECTORS_MAX], sectors.max())
        counters[i, C_LINES_MAX] = max(counters[i, C_LINES_MAX], lines.max())
        counters[i, C_WAVEFRONTS] += bank.sum()
        counters[i, C_WAVEFRONTS_MAX] = max(counters[i, C_WAVEFRONTS_MAX], bank.max())
        counters[i, C_DISTINCT] += distinct.sum()
        if logged and log_counts[2] == 0:
            r0 = log_counts[0]
            e0 = log_counts[1]
            for r in range(nr):
                req_instr[r0 + r] = i
                req_block[r0 + r] = block_of_warp[warps[r]]
                req_kind[r0 + r] = rk
                req_warp[r0 + r] = warps[r]
                req_segment[r0 + r] = segment_now[0]
            ne = e_line.shape[0]
            for e in range(ne):
                ent_req[e0 + e] = e_row[e] + r0
                ent_line[e0 + e] = e_line[e]
                ent_sectors[e0 + e] = e_sec[e]
                for q in range(4):
                    ent_bytes[e0 + e, q] = e_bytes[e, q]
            log_counts[0] += nr
            log_counts[1] += ne
    # --- the data
    if kind[i] == 1 and (sp == M_GLOBAL or sp == M_GENERIC):
        # global loads: each element's default data for every lane in one pass
        element_addr = np.empty(m, dtype=np.uint64)
        element_bits = np.empty(m, dtype=np.uint64)
        element_known = np.empty(m, dtype=np.bool_)
        for k in range(vec):
            if element_kind[i, k] != 1:
                continue
            for j in range(m):
                element_addr[j] = addr[j] + np.uint64(k * w)
                element_bits[j] = 0
                element_known[j] = False
            if _global_load(element_addr, w, float_kind[i], w_kind, w_a, w_b, w_start, w_len, w_written, initial,
                            offsets, element_bits, element_known):
                _overlay_patch(ov_keys, ov_vals, ov_stored, ov_good, element_addr, w, element_bits, element_known)
            r = np.int64(element[i, k])
            for j in range(m):
                regs[r, run[j]] = element_bits[j]
                known[r, run[j]] = element_known[j]
        return True
    if kind[i] == 2 and (sp == M_GLOBAL or sp == M_GENERIC):
        store_addr = np.empty(m, dtype=np.uint64)
        store_bits = np.empty(m, dtype=np.uint64)
        store_known = np.empty(m, dtype=np.bool_)
        for k in range(vec):
            ek = element_kind[i, k]
            if ek == 0:
                continue
            for j in range(m):
                lane = run[j]
                store_addr[j] = addr[j] + np.uint64(k * w)
                if ek == 1:
                    store_bits[j] = regs[np.int64(element[i, k]), lane]
                    store_known[j] = known[np.int64(element[i, k]), lane]
                else:
                    store_bits[j] = element[i, k]
                    store_known[j] = True
                wn = np.int64(store_addr[j] >> WINDOW_SHIFT)
                if 0 <= wn < w_written.shape[0]:
                    w_written[wn] = True
            ov_used[0] += _overlay_store(ov_keys, ov_vals, ov_stored, ov_good, store_addr, w, store_bits,
                                         store_known)
        return True
    data = shared if sp == M_SHARED else local
    kn = shared_known if sp == M_SHARED else local_known
    for j in range(m):
        lane = run[j]
        row = block_row[lane] if sp == M_SHARED else lane
        for k in range(vec):
            ek = element_kind[i, k]
            off = np.int64(addr[j]) + k * w
            inside = 0 <= off and off + w <= data.shape[1]
            if kind[i] == 1:
                if ek != 1:
                    continue
                bits = np.uint64(0)
                ok = inside
                if inside:
                    for b in range(w):
                        bits |= np.uint64(data[row, off + b]) << np.uint64(8 * b)
                        ok = ok and kn[row, off + b]
                regs[np.int64(element[i, k]), lane] = bits
                known[np.int64(element[i, k]), lane] = ok
            else:
                if ek == 1:
                    bits = regs[np.int64(element[i, k]), lane]
                    ok = known[np.int64(element[i, k]), lane]
                elif ek == 2:
                    bits = element[i, k]
                    ok = True
                else:
                    continue
                if inside:
                    for b in range(w):
                        data[row, off + b] = np.uint8((bits >> np.uint64(8 * b)) & np.uint64(0xFF))
                        kn[row, off + b] = ok
    return True


__all__ = ["MemoryRows", "memory_op"]
