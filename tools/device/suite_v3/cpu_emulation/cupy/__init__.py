"""A stand-in for CuPy that runs suite v3's kernels on the CPU (see ../build.py): arrays are NumPy
arrays in host memory, RawModule loads ``lib<family>.so`` from $WARPLINE_CPU_EMULATION (default
build/cpu_emulation) and a launch calls the kernel's CPU build with the same arguments."""

from __future__ import annotations

import ctypes
import os
import re
from pathlib import Path

import numpy as np

from . import cuda  # noqa: F401  (check_kernels.py uses cupy.cuda)

LIBS = Path(os.environ.get("WARPLINE_CPU_EMULATION", Path(__file__).resolve().parents[5] / "build" / "cpu_emulation"))
zeros = np.zeros
full = np.full


def asarray(a):
    return np.array(a, copy=True)


def asnumpy(a):
    return np.array(a, copy=True)


def ndarray(shape, dtype, memptr):
    """A view of a __constant__ table (memptr: its address in the CPU build)."""
    dt = np.dtype(dtype)
    count = int(np.prod(shape))
    raw = (ctypes.c_char * (count * dt.itemsize)).from_address(memptr)
    return np.frombuffer(raw, dtype=dt).reshape(shape)


def _short_name(mangled: str) -> str:
    m = re.match(r"_Z(\d+)", mangled)
    return mangled if not m else mangled[m.end():m.end() + int(m.group(1))]


class RawModule:
    def __init__(self, path: str):
        family = Path(path).name.split(".")[0]
        self.lib = ctypes.CDLL(str(LIBS / f"lib{family}.so"))
        self.lib.emu_global.restype = ctypes.c_void_p

    def get_function(self, name: str) -> _Kernel:
        return _Kernel(self.lib, _short_name(name))

    def get_global(self, name: str) -> int:
        address = self.lib.emu_global(name.encode())
        if not address:
            raise KeyError(name)
        return address


class _Kernel:
    def __init__(self, lib, name: str):
        self.lib, self.name = lib, name
        self.max_dynamic_shared_size_bytes = 0

    def __call__(self, grid, block, args, shared_mem: int = 0) -> None:
        held = []   # the argument values, alive until the call returns
        for a in args:
            if isinstance(a, np.ndarray):
                held.append(ctypes.c_void_p(a.ctypes.data))
            elif type(a).__name__ == "TextureObject":
                held.append(ctypes.c_uint64(a.arr.ctypes.data))
            elif isinstance(a, np.generic):
                held.append(ctypes.create_string_buffer(a.tobytes(), a.nbytes))
            else:
                raise TypeError(f"{self.name}: argument of type {type(a).__name__}")
        pointers = (ctypes.c_void_p * len(held))(*[ctypes.cast(ctypes.pointer(h), ctypes.c_void_p).value
                                                   for h in held])
        dims = (tuple(grid) + (1, 1))[:3] + (tuple(block) + (1, 1))[:3]
        if self.lib.emu_run(self.name.encode(), *(ctypes.c_uint(d) for d in dims), ctypes.c_size_t(shared_mem),
                            pointers):
            raise KeyError(f"no kernel {self.name} in the CPU build")
