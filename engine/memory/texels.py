"""1D texture fetches over linear memory, read as the global loads they are.

``tex1Dfetch`` compiles to ``tex.1d.v4.<type>.s32 {d0..d3}, [texture, {index}]``: the texel at an
integer index of a buffer bound to the texture object. On sm_70 and later textures and global loads
share the L1/texture cache, so such a fetch moves the sectors a global load of the same addresses
would: ``texture base + index x bytes per texel``, which the affine and per-lane evaluators can
compute (the texture handle is a kernel parameter, the index an ordinary register). Filtered,
2D/3D and float-coordinate fetches stay unanalysed (their addresses depend on the texture's
layout, which the PTX does not say).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.analysis.defuse import DefUseGraph
from engine.ptx.parsed_module import Instruction, OperandKind

_COMPONENT_BYTES = {"f32": 4, "s32": 4, "u32": 4, "f16": 2, "f64": 8}


@dataclass(frozen=True)
class TexelFetch:
    index_register: str   # the integer texel index
    texel_bytes: int      # bytes of one texel: the components the kernel reads, at their type's size


def texel_fetch(instr: Instruction, defuse: DefUseGraph) -> TexelFetch | None:
    """What a ``tex.1d`` fetch with an integer coordinate reads, or None for any other instruction.
    The texel's components in use are the destinations some consumer of the fetch reads."""
    if instr.opcode != "tex" or "1d" not in instr.modifiers:
        return None
    types = [m for m in instr.modifiers if m in _COMPONENT_BYTES]
    if len(types) != 2 or types[1] not in ("s32", "u32") or len(instr.operands) < 2:
        return None   # a float coordinate: a sampled (filtered or normalised) texture
    destination, address = instr.operands[0], instr.operands[1]
    if address.kind != OperandKind.ADDRESS or len(address.elements) != 1 or len(address.elements[0].elements) != 1:
        return None
    index = address.elements[0].elements[0]
    if index.kind != OperandKind.REGISTER or not index.name:
        return None
    components = destination.elements or (destination,)
    used = {r for c in defuse.consumers(instr.index) for r in defuse.function.instructions[c].srcs}
    read = [k for k, op in enumerate(components) if op.name in used]
    count = (max(read) + 1) if read else 1
    return TexelFetch(index.name, _COMPONENT_BYTES[types[0]] * count)
