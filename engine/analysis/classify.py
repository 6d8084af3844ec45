"""Per-instruction classification: functional unit, memory space, access width, flags.

Table-driven and cached by full opcode (``ld.global.v4.f32``), because a kernel repeats a few
dozen distinct opcodes thousands of times. Decisions where PTX leaves the hardware unit open:

* **FP64**: any arithmetic or comparison whose type is ``.f64`` (``add/sub/mul/fma/mad/div/rcp/
  sqrt/min/max/abs/neg/setp/testp``) and any ``cvt`` with an ``.f64`` side. Consumer GPUs run
  these on the few DPUs, so they must not be charged to the FP32 pipes. ``mov``/``selp``/``ld``/
  ``st`` of ``.f64`` are moves or memory operations and keep their usual unit.
* **SFU**: the MUFU operations (``sin cos ex2 lg2 rsqrt tanh``, ``rcp/sqrt`` of f32/f16 at any
  rounding, ``div`` of f32 with ``.approx``/``.full``/``.rn``) because every one of them starts
  with an MUFU seed; and ``cvt`` between a floating type and an integer type or float rounding
  (``cvt.rni.f32.f32``), which runs on the conversion path that shares the SFU's issue rate on
  Maxwell through Hopper. Integer-to-integer ``cvt`` and f16<->f32 packing stay ALU.
* **LDST**: loads, stores, atomics, reductions, ``cp.async*``, ``ldmatrix/stmatrix``, texture
  and surface ops, ``prefetch``, ``mbarrier``, and ``shfl``: shuffles go through the same
  crossbar/LSU path as shared-memory accesses on NVIDIA GPUs and have LSU-like throughput.
* **TENSOR**: ``mma``, ``wmma.mma``, ``wgmma.*`` (``wmma.load``/``wmma.store`` are LDST).
* **BARRIER**: ``bar``, ``barrier``, ``membar``, ``fence``. Only CTA-wide ``bar``/``barrier``
  (not ``bar.warp.sync``, not fences) set ``is_barrier``: those are the ones that split
  Many-BSP level-1 supersteps and synchronise warps in the pipeline simulator.
* **CONTROL**: ``bra brx call ret exit trap brkpt``.
* ``type_suffix`` is the last type modifier (PTX puts the instruction type last; for ``cvt`` that
  is the source type, ``types`` holds both).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from engine.ptx.parsed_module import Instruction, OperandKind
from engine.units import MemorySpace, Unit

# Size in bytes of each PTX fundamental type.
TYPE_BYTES: dict[str, int] = {
    "pred": 1,
    "b8": 1, "s8": 1, "u8": 1, "e4m3": 1, "e5m2": 1,
    "b16": 2, "s16": 2, "u16": 2, "f16": 2, "bf16": 2,
    "b32": 4, "s32": 4, "u32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "tf32": 4,
    "e4m3x2": 2, "e5m2x2": 2,
    "b64": 8, "s64": 8, "u64": 8, "f64": 8,
    "b128": 16,
}
_FLOAT_TYPES = {"f16", "bf16", "f32", "f64", "f16x2", "bf16x2", "tf32", "e4m3", "e5m2"}
_INT_TYPES = {t for t in TYPE_BYTES if t[0] in "bsu"}

_CONTROL = {"bra", "brx", "call", "ret", "exit", "trap", "brkpt", "griddepcontrol"}
_BARRIER = {"bar", "barrier", "membar", "fence"}
_TENSOR = {"mma", "wgmma", "tcgen05"}
_MEMORY = {
    "ld", "ldu", "st", "atom", "red", "cp", "ldmatrix", "stmatrix", "tex", "tld4", "suld",
    "sust", "sured", "suq", "txq", "prefetch", "prefetchu", "mbarrier", "shfl", "multimem",
    "cp.async", "st.async", "red.async",
}
_LOADS = {"ld", "ldu", "ldmatrix", "tex", "tld4", "suld"}
_STORES = {"st", "stmatrix", "sust"}
_ATOMICS = {"atom", "red", "sured"}
_SFU_OPS = {"sin", "cos", "ex2", "lg2", "rsqrt", "tanh"}
_FP64_ARITH = {
    "add", "sub", "mul", "fma", "mad", "div", "rcp", "sqrt", "min", "max", "abs", "neg",
    "setp", "set", "testp", "copysign",
}
_SPACES: dict[str, MemorySpace] = {
    "global": MemorySpace.GLOBAL,
    "shared": MemorySpace.SHARED,
    "local": MemorySpace.LOCAL,
    "const": MemorySpace.CONST,
    "param": MemorySpace.PARAM,
}
_VECTOR = re.compile(r"^v(\d+)$")
_MATRIX_COUNT = re.compile(r"^x(\d+)$")


@dataclass(frozen=True)
class Classification:
    """What the models need to know about one instruction, independent of the GPU."""

    unit: Unit
    space: MemorySpace
    width_bytes: int          # bytes per thread moved/produced: type size x vector width
    vector_width: int
    type_suffix: str | None
    types: tuple[str, ...]
    is_load: bool
    is_store: bool
    is_atomic: bool
    is_barrier: bool
    is_branch: bool
    is_global_memory: bool    # global, or generic (which may point to global; see analyze_kernel)

    @property
    def is_memory(self) -> bool:
        return self.space is not MemorySpace.NONE


def _space_of(opcode: str, modifiers: tuple[str, ...], is_mem: bool) -> MemorySpace:
    if not is_mem or opcode in ("shfl",):
        return MemorySpace.NONE
    if opcode in ("tex", "tld4", "txq"):
        return MemorySpace.TEXTURE
    if opcode in ("ldmatrix", "stmatrix", "mbarrier"):
        return MemorySpace.SHARED
    if opcode in ("suld", "sust", "sured", "suq"):
        return MemorySpace.GLOBAL  # surfaces live in global memory
    if opcode == "cp":
        # cp.async.ca.shared.global: the source space is the one that costs memory traffic.
        spaces = [m.split("::")[0] for m in modifiers if m.split("::")[0] in _SPACES]
        if "global" in spaces:
            return MemorySpace.GLOBAL
        return _SPACES[spaces[-1]] if spaces else MemorySpace.GENERIC
    for m in modifiers:
        space = _SPACES.get(m.split("::")[0])
        if space is not None:
            return space
    return MemorySpace.GENERIC


def _unit_of(opcode: str, modifiers: tuple[str, ...], types: tuple[str, ...]) -> Unit:
    if opcode in _CONTROL:
        return Unit.CONTROL
    if opcode in _BARRIER:
        return Unit.BARRIER
    if opcode in _TENSOR or (opcode == "wmma" and "mma" in modifiers):
        return Unit.TENSOR
    if opcode in _MEMORY or opcode == "wmma":
        return Unit.LDST
    if opcode == "cvt":
        if "f64" in types:
            return Unit.FP64
        has_float = any(t in _FLOAT_TYPES for t in types)
        has_int = any(t in _INT_TYPES for t in types)
        rounds_float = len(types) == 2 and types[0] == types[1] and has_float
        return Unit.SFU if (has_float and has_int) or rounds_float else Unit.ALU
    if "f64" in types:
        return Unit.FP64 if opcode in _FP64_ARITH else Unit.ALU
    if opcode in _SFU_OPS:
        return Unit.SFU
    if opcode in ("rcp", "sqrt") and any(t in ("f32", "f16", "bf16") for t in types):
        return Unit.SFU
    if opcode == "div" and "f32" in types:
        return Unit.SFU
    return Unit.ALU


def _width(opcode: str, modifiers: tuple[str, ...], type_suffix: str | None, vector: int) -> int:
    if opcode == "ldmatrix" or opcode == "stmatrix":
        count = next((int(m.group(1)) for x in modifiers if (m := _MATRIX_COUNT.match(x))), 1)
        return 4 * count  # one 32-bit register per 8x8 matrix per thread
    if type_suffix is None:
        return 0
    return TYPE_BYTES[type_suffix] * vector


@lru_cache(maxsize=4096)
def _classify_opcode(opcode: str, modifiers: tuple[str, ...]) -> Classification:
    types = tuple(m for m in modifiers if m in TYPE_BYTES)
    type_suffix = types[-1] if types else None
    vector = next((int(m.group(1)) for x in modifiers if (m := _VECTOR.match(x))), 1)
    unit = _unit_of(opcode, modifiers, types)
    is_mem = unit is Unit.LDST
    space = _space_of(opcode, modifiers, is_mem)
    # cp.async copies global -> shared (a load and a store); cp.async.commit_group/wait_group
    # name no state space and only order earlier copies.
    is_async_copy = opcode == "cp" and space is not MemorySpace.GENERIC
    if opcode == "cp" and not is_async_copy:
        space = MemorySpace.NONE
    is_load = opcode in _LOADS or (opcode == "wmma" and "load" in modifiers) or is_async_copy
    is_store = opcode in _STORES or (opcode == "wmma" and "store" in modifiers) or is_async_copy
    return Classification(
        unit=unit,
        space=space,
        width_bytes=_width(opcode, modifiers, type_suffix, vector),
        vector_width=vector,
        type_suffix=type_suffix,
        types=types,
        is_load=is_load,
        is_store=is_store,
        is_atomic=opcode in _ATOMICS,
        is_barrier=opcode in ("bar", "barrier") and "warp" not in modifiers,
        is_branch=opcode in ("bra", "brx"),
        is_global_memory=space in (MemorySpace.GLOBAL, MemorySpace.GENERIC),
    )


def classify(instruction: Instruction) -> Classification:
    """Classify one instruction (cached by opcode and modifiers)."""
    result = _classify_opcode(instruction.opcode, instruction.modifiers)
    if instruction.opcode == "cp" and "async" in instruction.modifiers and result.width_bytes == 0:
        # cp.async's size is its third operand (4, 8 or 16 bytes), not a type suffix.
        sizes = [op.value for op in instruction.operands[2:3] if op.kind == OperandKind.IMMEDIATE]
        if sizes and isinstance(sizes[0], int):
            return replace(result, width_bytes=sizes[0])
    return result
