"""The memory a sampled run reads and writes: a synthetic image of the kernel's buffers.

Nothing of the user's data is known but what the launch says, so the image is made from it:

* **Parameters** are laid out as the PTX declares them; a value the launch gives is stored, a
  64-bit parameter without one is a pointer to a buffer of its own (a 2^40-byte window, the
  same windows the static memory analysis uses), any other parameter without a value is
  *unknown*.
* **Global buffers** read what the kernel stored there during the run (kept byte by byte);
  elsewhere their integers are the buffer's declared data pattern (``[launch.data]``,
  :mod:`engine.analysis.loaded_data`, element = offset / access width) and floating-point data
  is uniform in the range a ``uniform:LO:HI`` pattern declares, by default [0, 1) (a hash of the
  address, so equal addresses read equal values: the documented default for data the launch does
  not describe). A 4-byte integer read of a buffer with a ``uniform`` pattern reads the bits of
  the float there (compilers copy float data through integer registers); any other integer read
  from a buffer with no integer pattern is *unknown*.
* **Module variables** (``.global``, ``.const``) start from their initializer where it is a
  list of numbers, else from the same defaults.
* **Shared memory** is one zero-filled image per running block, marked unknown until written;
  **local memory** one per thread.

Unknown values are carried per lane (a ``known`` mask beside each value) and only stop the run
when a branch or an address needs them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from numba import njit

from engine.analysis.loaded_data import BUFFER_SHIFT, DataPattern, LoadedData, _segment_starts
from engine.analysis.values import LaunchValues
from engine.execution.typed import FLOAT_TYPES, width_bytes
from engine.ptx.parsed_module import Function, Module, Variable

SHARED_BASE = np.uint64(0xF0 << BUFFER_SHIFT)     # generic window of a block's shared memory
LOCAL_BASE = np.uint64(0xF8 << BUFFER_SHIFT)      # generic window of a thread's local memory
WINDOW_MASK = np.uint64((1 << BUFFER_SHIFT) - 1)
VARIABLE_WINDOW = 0xC0                            # module .global/.const variables from here on
_FLOAT_SCALE = float(1 << 24)
CHUNK_SHIFT = 5                                   # the stored-bytes table keeps 32-byte chunks
CHUNK_BYTES = 1 << CHUNK_SHIFT


@dataclass(frozen=True)
class Window:
    """One global-memory buffer: where it starts, what it is called, what its integers are."""

    index: int                      # window number (address >> BUFFER_SHIFT)
    name: str
    data: LoadedData | None = None
    initial: np.ndarray | None = None   # initializer bytes (module variables)
    parameter: int | None = None        # the kernel parameter pointing to it


def _align(offset: int, align: int) -> int:
    return -(-offset // max(1, align)) * max(1, align)


@njit(cache=True, nogil=True, inline="always")
def _slot(keys, chunk):      # pragma: no cover - compiled
    cap = keys.shape[0]
    h = np.int64((np.uint64(chunk) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(20)) & (cap - 1)
    while keys[h] != -1 and keys[h] != chunk:
        h = (h + 1) & (cap - 1)
    return h


@njit(cache=True, nogil=True)
def _overlay_store(keys, vals, stored, good, addr, width, bits, known):      # pragma: no cover - compiled
    """Each lane's ``width`` bytes at ``addr`` into the chunk table; returns the chunks it added.
    Lanes of a warp mostly store next to each other, so the last chunk's slot is reused."""
    added = 0
    last = np.int64(-1)
    h = np.int64(0)
    for i in range(addr.shape[0]):
        for k in range(width):
            a = np.int64(addr[i]) + k
            chunk = a >> CHUNK_SHIFT
            if chunk != last:
                h = _slot(keys, chunk)
                if keys[h] == -1:
                    keys[h] = chunk
                    added += 1
                last = chunk
            o = a & (CHUNK_BYTES - 1)
            vals[h, o] = np.uint8((bits[i] >> np.uint64(8 * k)) & np.uint64(0xFF))
            stored[h, o] = 1
            good[h, o] = 1 if known[i] else 0
    return added


@njit(cache=True, nogil=True)
def _overlay_patch(keys, vals, stored, good, addr, width, bits, known):      # pragma: no cover - compiled
    """Replace the default bytes of each lane's value by the stored ones; a value whose every byte
    was stored known is known, one with a byte stored unknown is unknown. (A chunk not in the
    table has an empty slot, whose rows were never written: nothing stored there.)"""
    last = np.int64(-1)
    h = np.int64(0)
    for i in range(addr.shape[0]):
        every = True
        unknown = False
        value = bits[i]
        for k in range(width):
            a = np.int64(addr[i]) + k
            chunk = a >> CHUNK_SHIFT
            if chunk != last:
                h = _slot(keys, chunk)
                last = chunk
            o = a & (CHUNK_BYTES - 1)
            if not stored[h, o]:
                every = False
                continue
            b = np.uint64(vals[h, o])
            value = (value & ~(np.uint64(0xFF) << np.uint64(8 * k))) | (b << np.uint64(8 * k))
            if not good[h, o]:
                unknown = True
        bits[i] = value
        if unknown:
            known[i] = False
        elif every:
            known[i] = True


WINDOWS = 512                   # window numbers the compiled loads know (params, variables)
KIND_NONE, KIND_INITIAL, KIND_RANDOM, KIND_LINEAR, KIND_OFFSETS, KIND_CONSTANT, KIND_UNIFORM = range(7)
FLOAT_KIND = {"f32": 1, "tf32": 1, "f64": 2, "f16": 3, "bf16": 4}


@njit(cache=True, nogil=True, inline="always")
def _scrambled(x, span):      # pragma: no cover - compiled
    """engine.analysis.loaded_data.scrambled for one value."""
    z = np.uint64(x) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.int64(z % np.uint64(max(span, 1)))


@njit(cache=True, nogil=True)
def _global_load(addr, width, float_kind, w_kind, w_a, w_b, w_start, w_len, w_written, initial, offsets,
                 bits, known):      # pragma: no cover - compiled
    """Default bytes of each lane's access; returns whether a lane reads a window stored to."""
    patched = False
    mask = np.uint64(0xFFFFFFFFFFFFFFFF) if width >= 8 else (np.uint64(1) << np.uint64(8 * width)) - np.uint64(1)
    scratch64 = np.zeros(1, dtype=np.float64)
    view64 = scratch64.view(np.uint64)
    scratch32 = np.zeros(1, dtype=np.float32)
    view32 = scratch32.view(np.uint32)
    for i in range(addr.shape[0]):
        a = addr[i]
        window = np.int64(a >> np.uint64(40))
        kind = w_kind[window] if 0 <= window < w_kind.shape[0] else KIND_NONE
        if 0 <= window < w_written.shape[0] and w_written[window]:
            patched = True
        base = np.uint64(window) << np.uint64(40)
        if kind == KIND_INITIAL:
            offset = np.int64(a - base)
            if offset < 0 or offset + width > w_len[window]:
                known[i] = False
                continue
            v = np.uint64(0)
            for k in range(width):
                v |= np.uint64(initial[w_start[window] + offset + k]) << np.uint64(8 * k)
            bits[i] = v
            known[i] = True
            continue
        if float_kind == 0 and kind != KIND_NONE and kind != KIND_UNIFORM:
            element = np.int64((a - base) // np.uint64(max(width, 1)))
            if kind == KIND_CONSTANT:
                v = np.int64(w_a[window])
            elif kind == KIND_LINEAR:
                v = np.int64(np.floor(w_a[window] * element + w_b[window]))
            elif kind == KIND_OFFSETS:
                period = w_len[window] - 1
                start = w_start[window]
                p, within = element // period, element % period
                v = p * offsets[start + period] + offsets[start + within]
            else:
                lo = np.int64(w_a[window])
                v = lo + _scrambled(np.int64(a), np.int64(w_b[window]) - lo)
            bits[i] = np.uint64(v) & mask
            known[i] = True
            continue
        if float_kind == 0 and not (kind == KIND_UNIFORM and width == 4):
            known[i] = False
            continue
        unit = np.float64(_scrambled(np.int64(a) >> 2, 1 << 24)) / 16777216.0
        if kind == KIND_UNIFORM:
            unit = w_a[window] + (w_b[window] - w_a[window]) * unit
        if float_kind == 0:
            # a 4-byte integer read of a buffer of floats: the float's bits (compilers move
            # float data through integer registers, a float4 staged to shared memory as u32s)
            scratch32[0] = np.float32(unit)
            bits[i] = np.uint64(view32[0])
        elif float_kind == 2:
            scratch64[0] = unit
            bits[i] = view64[0]
        elif float_kind == 1:
            scratch32[0] = np.float32(unit)
            bits[i] = np.uint64(view32[0])
        elif float_kind == 3:
            bits[i] = np.uint64(_half_bits(unit))
        else:
            scratch32[0] = np.float32(unit)
            bits[i] = np.uint64(view32[0] >> np.uint32(16))
        known[i] = True
    return patched


@njit(cache=True, nogil=True, inline="always")
def _half_bits(x):      # pragma: no cover - compiled
    """IEEE half-precision pattern of a value in [0, 1) (round to nearest)."""
    if x <= 0.0:
        return 0
    e = 0
    m = x
    while m < 1.0:
        m *= 2.0
        e -= 1
    exponent = e + 15
    if exponent <= 0:
        return int(round(x * 16777216.0)) & 0x3FF
    mantissa = int(round((m - 1.0) * 1024.0))
    if mantissa == 1024:
        mantissa = 0
        exponent += 1
    return (exponent << 10) | mantissa


class _Overlay:
    """Bytes stored to global memory during the run, in an open-addressing table of 32-byte chunks
    (grown before it is half full): a warp's lanes store and load neighbouring bytes, so one
    lookup serves several lanes, and the table stays small enough for the processor's caches."""

    def __init__(self) -> None:
        self._allocate(1 << 12)
        self.used = np.zeros(1, dtype=np.int64)     # chunks in the table (the compiled path adds to it)

    def _allocate(self, capacity: int) -> None:
        self.keys = np.full(capacity, -1, dtype=np.int64)
        self.vals = np.zeros((capacity, CHUNK_BYTES), dtype=np.uint8)
        self.stored = np.zeros((capacity, CHUNK_BYTES), dtype=np.uint8)
        self.good = np.zeros((capacity, CHUNK_BYTES), dtype=np.uint8)

    def store(self, addr: np.ndarray, width: int, bits: np.ndarray, known: np.ndarray) -> None:
        need = int(self.used[0]) + len(addr) * (width // CHUNK_BYTES + 2)
        if need * 2 > len(self.keys):
            old = (self.keys, self.vals, self.stored, self.good)
            capacity = len(self.keys)
            while need * 2 > capacity:
                capacity *= 4
            self._allocate(capacity)
            _rehash(self.keys, self.vals, self.stored, self.good, *old)
        self.used[0] += _overlay_store(self.keys, self.vals, self.stored, self.good,
                                      addr.astype(np.uint64), width, bits.astype(np.uint64), known.astype(np.bool_))

    def patch(self, addr: np.ndarray, width: int, bits: np.ndarray, known: np.ndarray) -> None:
        _overlay_patch(self.keys, self.vals, self.stored, self.good, addr.astype(np.uint64), width, bits, known)


@njit(cache=True, nogil=True)
def _rehash(keys, vals, stored, good, old_keys, old_vals, old_stored, old_good):      # pragma: no cover
    for j in range(old_keys.shape[0]):
        if old_keys[j] == -1:
            continue
        h = _slot(keys, old_keys[j])
        keys[h] = old_keys[j]
        vals[h, :] = old_vals[j, :]
        stored[h, :] = old_stored[j, :]
        good[h, :] = old_good[j, :]


def _initializer_bytes(variable: Variable) -> np.ndarray | None:
    """A ``= {1.0, 2.0, ...}`` or ``= {0x3F800000, ...}`` initializer as bytes; None otherwise."""
    text = variable.initializer
    if not text or variable.size_bytes is None:
        return None
    numbers = re.findall(r"[-+]?(?:0[fFdD][0-9A-Fa-f]+|0[xX][0-9A-Fa-f]+|\d+\.?\d*(?:[eE][-+]?\d+)?)", text)
    if not numbers:
        return None
    t = variable.type
    width = width_bytes(t)
    out = np.zeros(variable.size_bytes, dtype=np.uint8)
    for k, number in enumerate(numbers[: variable.size_bytes // max(width, 1)]):
        low = number.lower()
        if low.startswith(("0f", "0d")):
            pattern = int(low[2:], 16)
        elif low.startswith("0x"):
            pattern = int(low, 16)
        elif t in FLOAT_TYPES:
            f = float(number)
            pattern = int(np.array([f], dtype=np.float64 if t == "f64" else np.float32)
                          .view(np.uint64 if t == "f64" else np.uint32)[0])
        else:
            pattern = int(float(number)) & ((1 << (8 * width)) - 1)
        out[k * width:(k + 1) * width] = np.frombuffer(int(pattern).to_bytes(width, "little"), dtype=np.uint8)
    return out


class MemoryImage:
    """Parameters, global buffers, module variables, shared and local memory of one run."""

    def __init__(self, function: Function, module: Module | None, values: LaunchValues,
                 blocks: int, lanes: int, dynamic_shared: int) -> None:
        self.function = function
        self.windows: dict[int, Window] = {}
        self.symbols: dict[str, tuple[str, int]] = {}     # name -> (space, address or offset)
        self.params = self._lay_out_params(function, values)
        self._variables(function, module)
        self.shared_size = self._lay_out_shared(function, module, dynamic_shared)
        self.local_size = self._lay_out_local(function)
        self.shared = np.zeros((max(blocks, 1), max(self.shared_size, 1)), dtype=np.uint8)
        self.shared_known = np.zeros_like(self.shared, dtype=bool)
        self.local = np.zeros((max(lanes, 1), max(self.local_size, 1)), dtype=np.uint8)
        self.local_known = np.zeros_like(self.local, dtype=bool)
        self.overlay = _Overlay()
        self.written: set[int] = set()                   # windows stored to during the run
        self._window_table()

    # ------------------------------------------------------------------ layout
    def _lay_out_params(self, function: Function, values: LaunchValues) -> tuple[np.ndarray, np.ndarray]:
        size = 0
        offsets = []
        for p in function.params:
            size = _align(size, p.align or min(8, max(1, p.size_bytes)))
            offsets.append(size)
            size += p.size_bytes
        data = np.zeros(max(size, 1), dtype=np.uint8)
        known = np.zeros(max(size, 1), dtype=bool)
        for index, (p, offset) in enumerate(zip(function.params, offsets, strict=True)):
            self.symbols[p.name] = ("param", offset)
            given = values.argument(index, p.name)
            width = p.size_bytes
            pattern: int | None = None
            if given is not None and p.array_size is None and width in (1, 2, 4, 8):
                if isinstance(given, float) and (p.type in FLOAT_TYPES):
                    pattern = int(np.array([given], dtype=np.float64 if p.type == "f64" else np.float32)
                                  .view(np.uint64 if p.type == "f64" else np.uint32)[0])
                elif isinstance(given, float) and not given.is_integer():
                    pattern = None
                else:
                    pattern = int(given) & ((1 << (8 * width)) - 1)
            elif given is None and width == 8 and p.array_size is None:
                window = index + 1                          # a pointer without a value: its own buffer
                self.windows[window] = Window(window, p.name, values.loaded_data(index, p.name), parameter=index)
                pattern = window << BUFFER_SHIFT
            if pattern is not None:
                data[offset:offset + width] = np.frombuffer(pattern.to_bytes(width, "little"), dtype=np.uint8)
                known[offset:offset + width] = True
        return data, known

    def _variables(self, function: Function, module: Module | None) -> None:
        variables = list(module.variables) if module is not None else []
        variables += [v for v in function.variables if v.state_space in ("global", "const")]
        k = 0
        for v in variables:
            if v.state_space not in ("global", "const"):
                continue
            window = VARIABLE_WINDOW + k
            k += 1
            self.windows[window] = Window(window, v.name, None, _initializer_bytes(v))
            self.symbols[v.name] = (v.state_space, window << BUFFER_SHIFT)

    def _lay_out_shared(self, function: Function, module: Module | None, dynamic: int) -> int:
        shared = [v for v in (module.variables if module is not None else []) if v.state_space == "shared"]
        shared += [v for v in function.variables if v.state_space == "shared"]
        offset = 0
        extern = []
        for v in shared:
            if v.size_bytes is None:
                extern.append(v)
                continue
            offset = _align(offset, v.align or 4)
            self.symbols[v.name] = ("shared", offset)
            offset += v.size_bytes
        for v in extern:                                  # dynamic shared memory follows the static
            offset = _align(offset, max(v.align or 16, 16))
            self.symbols[v.name] = ("shared", offset)
        return offset + (dynamic if extern else 0)

    def _lay_out_local(self, function: Function) -> int:
        offset = 0
        for v in function.variables:
            if v.state_space != "local":
                continue
            offset = _align(offset, v.align or 4)
            self.symbols[v.name] = ("local", offset)
            offset += v.size_bytes or 0
        return offset

    # ------------------------------------------------------------------ parameters
    def load_param(self, offset: np.ndarray | int, width: int) -> tuple[np.ndarray, np.ndarray]:
        data, known = self.params
        off = np.atleast_1d(np.asarray(offset, dtype=np.int64))
        bits = np.zeros(off.shape, dtype=np.uint64)
        ok = np.ones(off.shape, dtype=bool)
        inside = (off >= 0) & (off + width <= len(data))
        safe = np.where(inside, off, 0)
        for k in range(width):
            bits |= data[safe + k].astype(np.uint64) << np.uint64(8 * k)
            ok &= known[safe + k]
        return bits, ok & inside

    # ------------------------------------------------------------------ global memory
    def _window_table(self) -> None:
        """Per window number: what its bytes default to (the compiled loads read this)."""
        size = WINDOWS
        self.w_kind = np.zeros(size, dtype=np.int64)
        self.w_a = np.zeros(size, dtype=np.float64)
        self.w_b = np.zeros(size, dtype=np.float64)
        self.w_start = np.zeros(size, dtype=np.int64)
        self.w_len = np.zeros(size, dtype=np.int64)
        self.w_written = np.zeros(size, dtype=np.bool_)
        initial = [np.zeros(0, dtype=np.uint8)]
        offsets = [np.zeros(0, dtype=np.int64)]
        position = offset_position = 0
        for number, window in self.windows.items():
            if not 0 <= number < size:
                continue
            if window.initial is not None:
                self.w_kind[number] = KIND_INITIAL
                self.w_start[number], self.w_len[number] = position, len(window.initial)
                initial.append(window.initial)
                position += len(window.initial)
            elif window.data is not None:
                data = window.data
                self.w_kind[number] = {"random": KIND_RANDOM, "linear": KIND_LINEAR, "offsets": KIND_OFFSETS,
                                       "constant": KIND_CONSTANT, "uniform": KIND_UNIFORM}[data.kind]
                self.w_a[number], self.w_b[number] = data.a, data.b
                if data.kind == DataPattern.OFFSETS:
                    starts = _segment_starts(int(data.a), int(data.b))
                    self.w_start[number], self.w_len[number] = offset_position, len(starts)
                    offsets.append(starts)
                    offset_position += len(starts)
        self.initial_bytes = np.concatenate(initial)
        self.offset_tables = np.concatenate(offsets)

    def load_global(self, addr: np.ndarray, width: int, type_name: str) -> tuple[np.ndarray, np.ndarray]:
        """Each lane's ``width`` bytes at ``addr`` (uint64) as a pattern, and whether it is known."""
        bits = np.zeros(addr.shape, dtype=np.uint64)
        known = np.zeros(addr.shape, dtype=bool)
        if not len(addr):
            return bits, known
        patched = _global_load(np.ascontiguousarray(addr, dtype=np.uint64), width, FLOAT_KIND.get(type_name, 0),
                               self.w_kind, self.w_a, self.w_b, self.w_start, self.w_len, self.w_written,
                               self.initial_bytes, self.offset_tables, bits, known)
        if patched:
            self.overlay.patch(addr, width, bits, known)
        return bits, known

    def _default(self, window: int, addr: np.ndarray, width: int, type_name: str) -> tuple[np.ndarray, np.ndarray]:
        """What the buffer holds where the run stored nothing (tests compare against it)."""
        bits = np.zeros(addr.shape, dtype=np.uint64)
        known = np.zeros(addr.shape, dtype=bool)
        written = np.zeros_like(self.w_written)
        _global_load(np.ascontiguousarray(addr, dtype=np.uint64), width, FLOAT_KIND.get(type_name, 0),
                     self.w_kind, self.w_a, self.w_b, self.w_start, self.w_len, written, self.initial_bytes,
                     self.offset_tables, bits, known)
        return bits, known

    def store_global(self, addr: np.ndarray, width: int, bits: np.ndarray, known: np.ndarray) -> None:
        if not len(addr):
            return
        windows = np.unique((addr >> np.uint64(BUFFER_SHIFT)).astype(np.int64)).tolist()
        self.written.update(int(w) for w in windows)
        for w in windows:
            if 0 <= w < WINDOWS:
                self.w_written[w] = True
        self.overlay.store(addr, width, bits, known)

    # ------------------------------------------------------------------ shared and local
    def load_block(self, space: str, row: np.ndarray, offset: np.ndarray, width: int
                   ) -> tuple[np.ndarray, np.ndarray]:
        data, known = (self.shared, self.shared_known) if space == "shared" else (self.local, self.local_known)
        off = offset.astype(np.int64)
        inside = (off >= 0) & (off + width <= data.shape[1])
        bits = np.zeros(off.shape, dtype=np.uint64)
        ok = inside.copy()
        if not ok.any():   # all outside (a window smaller than the access, even empty): unknown
            return bits, ok
        safe = np.where(inside, off, 0)
        for k in range(width):
            bits |= np.where(inside, data[row, np.where(inside, safe + k, 0)], 0).astype(np.uint64) << np.uint64(8 * k)
            ok &= known[row, np.where(inside, safe + k, 0)]
        return bits, ok

    def store_block(self, space: str, row: np.ndarray, offset: np.ndarray, width: int,
                    bits: np.ndarray, known: np.ndarray) -> None:
        data, known_bytes = (self.shared, self.shared_known) if space == "shared" else (self.local, self.local_known)
        off = offset.astype(np.int64)
        inside = (off >= 0) & (off + width <= data.shape[1])
        if not inside.all():
            row, off, bits, known = row[inside], off[inside], bits[inside], known[inside]
        for k in range(width):
            data[row, off + k] = ((bits >> np.uint64(8 * k)) & np.uint64(0xFF)).astype(np.uint8)
            known_bytes[row, off + k] = known
