"""The memory a sampled run reads and writes: a synthetic image of the kernel's buffers.

Nothing of the user's data is known but what the launch says, so the image is made from it:

* **Parameters** are laid out as the PTX declares them; a value the launch gives is stored, a
  64-bit parameter without one is a pointer to a buffer of its own (a 2^40-byte window, the
  same windows the static memory analysis uses), any other parameter without a value is
  *unknown*.
* **Global buffers** read what the kernel stored there during the run (kept byte by byte);
  elsewhere their integers are the buffer's declared data pattern (``[launch.data]``,
  :mod:`engine.analysis.loaded_data`, element = offset / access width) and floating-point data
  is uniform in [0, 1) (a hash of the address, so equal addresses read equal values: the
  documented default for data the launch does not describe). An integer read from a buffer with
  no declared pattern is *unknown*.
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

from engine.analysis.loaded_data import BUFFER_SHIFT, LoadedData, scrambled
from engine.analysis.values import LaunchValues
from engine.execution.typed import BITS, FLOAT_TYPES, width_bytes
from engine.ptx.model import Function, Module, Variable

SHARED_BASE = np.uint64(0xF0 << BUFFER_SHIFT)     # generic window of a block's shared memory
LOCAL_BASE = np.uint64(0xF8 << BUFFER_SHIFT)      # generic window of a thread's local memory
WINDOW_MASK = np.uint64((1 << BUFFER_SHIFT) - 1)
VARIABLE_WINDOW = 0xC0                            # module .global/.const variables from here on
_FLOAT_SCALE = float(1 << 24)


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


class _Overlay:
    """Bytes stored to global memory during the run: stores append (cheap), a load from a buffer
    that was stored to merges the appended bytes once (the last store to a byte wins)."""

    def __init__(self) -> None:
        self.chunks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []   # byte address, byte, known
        self.keys = np.zeros(0, dtype=np.int64)
        self.values = np.zeros(0, dtype=np.uint8)
        self.known = np.zeros(0, dtype=bool)

    def store(self, addr: np.ndarray, width: int, bits: np.ndarray, known: np.ndarray) -> None:
        k = np.arange(width, dtype=np.int64)
        keys = (addr.astype(np.int64)[:, None] + k[None, :]).ravel()
        values = ((bits.astype(np.uint64)[:, None] >> (8 * k[None, :]).astype(np.uint64)) & np.uint64(0xFF))
        self.chunks.append((keys, values.astype(np.uint8).ravel(), np.repeat(known, width)))

    def _merge(self) -> None:
        if not self.chunks:
            return
        keys = np.concatenate([self.keys] + [c[0] for c in self.chunks])
        values = np.concatenate([self.values] + [c[1] for c in self.chunks])
        known = np.concatenate([self.known] + [c[2] for c in self.chunks])
        self.chunks = []
        # the last store to each byte wins: unique over the reversed order keeps the last
        rev_keys, first = np.unique(keys[::-1], return_index=True)
        last = len(keys) - 1 - first
        self.keys, self.values, self.known = rev_keys, values[last], known[last]

    def patch(self, addr: np.ndarray, width: int, bits: np.ndarray, known: np.ndarray) -> None:
        """Replace the default bytes of each lane's value by the stored ones."""
        self._merge()
        if not len(self.keys):
            return
        every = np.ones(len(addr), dtype=bool)
        unknown = np.zeros(len(addr), dtype=bool)
        base = addr.astype(np.int64)
        for k in range(width):
            pos = np.searchsorted(self.keys, base + k)
            found = (pos < len(self.keys)) & (self.keys[np.minimum(pos, len(self.keys) - 1)] == base + k)
            every &= found
            if not found.any():
                continue
            hit = np.flatnonzero(found)
            shift = np.uint64(8 * k)
            byte = self.values[pos[hit]].astype(np.uint64)
            bits[hit] = (bits[hit] & ~(np.uint64(0xFF) << shift)) | (byte << shift)
            unknown[hit] |= ~self.known[pos[hit]]
        known[every] = True
        known[unknown] = False


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
    def load_global(self, addr: np.ndarray, width: int, type_name: str) -> tuple[np.ndarray, np.ndarray]:
        """Each lane's ``width`` bytes at ``addr`` (uint64) as a pattern, and whether it is known."""
        bits = np.zeros(addr.shape, dtype=np.uint64)
        known = np.zeros(addr.shape, dtype=bool)
        if not len(addr):
            return bits, known
        window = (addr >> np.uint64(BUFFER_SHIFT)).astype(np.int64)
        for w in np.unique(window).tolist():
            lanes = window == w
            b, k = self._default(int(w), addr[lanes], width, type_name)
            bits[lanes], known[lanes] = b, k
        if self.written and np.isin(window, list(self.written)).any():
            self.overlay.patch(addr, width, bits, known)
        return bits, known

    def _default(self, window: int, addr: np.ndarray, width: int, type_name: str) -> tuple[np.ndarray, np.ndarray]:
        buffer = self.windows.get(window)
        base = np.uint64(window) << np.uint64(BUFFER_SHIFT)
        if buffer is not None and buffer.initial is not None:
            offset = (addr - base).astype(np.int64)
            inside = (offset >= 0) & (offset + width <= len(buffer.initial))
            safe = np.where(inside, offset, 0)
            bits = np.zeros(addr.shape, dtype=np.uint64)
            for k in range(width):
                bits |= buffer.initial[safe + k].astype(np.uint64) << np.uint64(8 * k)
            return bits, inside
        t = type_name
        if buffer is not None and buffer.data is not None and t not in FLOAT_TYPES:
            element = ((addr - base) // np.uint64(max(width, 1))).astype(np.int64)
            values = buffer.data.values(element, addr.astype(np.int64))
            return values.astype(np.int64).view(np.uint64) & np.uint64((1 << (8 * width)) - 1 if width < 8
                                                                          else 0xFFFFFFFFFFFFFFFF), \
                np.ones(addr.shape, dtype=bool)
        if t in FLOAT_TYPES:
            unit = scrambled(addr.astype(np.int64) >> 2, 1 << 24).astype(np.float64) / _FLOAT_SCALE
            if t == "f64":
                return unit.view(np.uint64), np.ones(addr.shape, dtype=bool)
            if t == "f16":
                return unit.astype(np.float16).view(np.uint16).astype(np.uint64), np.ones(addr.shape, dtype=bool)
            if t == "bf16":
                return (unit.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint64), \
                    np.ones(addr.shape, dtype=bool)
            return unit.astype(np.float32).view(np.uint32).astype(np.uint64), np.ones(addr.shape, dtype=bool)
        return np.zeros(addr.shape, dtype=np.uint64), np.zeros(addr.shape, dtype=bool)

    def store_global(self, addr: np.ndarray, width: int, bits: np.ndarray, known: np.ndarray) -> None:
        if not len(addr):
            return
        windows = np.unique((addr >> np.uint64(BUFFER_SHIFT)).astype(np.int64)).tolist()
        self.written.update(int(w) for w in windows)
        self.overlay.store(addr, width, bits, known)

    # ------------------------------------------------------------------ shared and local
    def load_block(self, space: str, row: np.ndarray, offset: np.ndarray, width: int
                   ) -> tuple[np.ndarray, np.ndarray]:
        data, known = (self.shared, self.shared_known) if space == "shared" else (self.local, self.local_known)
        off = offset.astype(np.int64)
        inside = (off >= 0) & (off + width <= data.shape[1])
        safe = np.where(inside, off, 0)
        bits = np.zeros(off.shape, dtype=np.uint64)
        ok = inside.copy()
        for k in range(width):
            bits |= data[row, safe + k].astype(np.uint64) << np.uint64(8 * k)
            ok &= known[row, safe + k]
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
