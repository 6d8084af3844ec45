"""The stall counts ptxas writes into each SASS instruction's control field, read from the cubin.

From Volta (sm_70) on, every instruction is 128 bits and its upper bits carry the scheduling
decisions ptxas made: a stall count (bits 105-108: cycles the warp waits before it may issue its
next instruction, the fixed-latency waits of dependent arithmetic, of a predicate before the
branch that reads it, of a barrier), a yield bit, the scoreboards a variable-latency instruction
sets and the ones its successor waits on. The hardware has no interlock for fixed-latency
results: the stall count is what keeps a dependent instruction from issuing early, so it is a
fact of the compiled kernel, not an estimate.

nvdisasm's JSON listing does not print the control field, so it is read here from the ELF file
ptxas wrote (section ``.text.<function>``, one 16-byte instruction after the other, the same
order as the listing). Only what the simulator uses is decoded (the stall count); a file this
reader does not understand gives no counts (the simulator then keeps its one-cycle issue gap).
"""

from __future__ import annotations

import struct

import numpy as np

ELF_MAGIC = b"\x7fELF"
INSTRUCTION_BYTES = 16       # sm_70 and newer
_STALL_SHIFT = 105 - 64      # within the upper 64-bit word
_STALL_MASK = 0xF


def _sections(data: bytes) -> dict[str, tuple[int, int]]:
    """Section name -> (offset, size) of a little-endian ELF64 file; empty when it is not one."""
    if len(data) < 64 or data[:4] != ELF_MAGIC or data[4] != 2 or data[5] != 1:
        return {}
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    if shentsize < 64 or shstrndx >= shnum or shoff + shnum * shentsize > len(data):
        return {}
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + k * shentsize) for k in range(shnum)]
    names_at, names_size = headers[shstrndx][4], headers[shstrndx][5]
    if names_at + names_size > len(data):
        return {}
    names = data[names_at:names_at + names_size]
    out: dict[str, tuple[int, int]] = {}
    for name_offset, _type, _flags, _addr, offset, size in headers:
        end = names.find(b"\0", name_offset)
        if end < 0 or offset + size > len(data):
            continue
        out[names[name_offset:end].decode("ascii", "replace")] = (offset, size)
    return out


def stall_counts(cubin: bytes) -> dict[str, tuple[int, ...]]:
    """Each function's stall counts, in address order (its ``.text`` section's instructions);
    empty for a file that is not a 64-bit little-endian ELF."""
    out: dict[str, tuple[int, ...]] = {}
    for name, (offset, size) in _sections(cubin).items():
        if not name.startswith(".text.") or size % INSTRUCTION_BYTES:
            continue
        # each instruction is two little-endian 64-bit words; the control field is in the upper one
        upper = np.frombuffer(cubin, dtype="<u8", count=size // 8, offset=offset)[1::2]
        out[name[len(".text."):]] = tuple(int(c) for c in (upper >> _STALL_SHIFT) & _STALL_MASK)
    return out
