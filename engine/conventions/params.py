"""What each kernel parameter is (a pointer, an integer, a floating-point number, a structure),
which parameters the kernel reads, and which compiler wrote it.

The signature says it where the name is mangled (nvcc, NVRTC with C++ names, numba). Otherwise
the PTX types decide, and for a 64-bit integer parameter (a pointer or a ``size_t``?) the way the
kernel uses it: a value that is compared, divided or multiplied by another value is an integer;
one that only ever has offsets added is a pointer.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.analysis import KernelAnalysis
from engine.conventions.signature import NumbaArray, c_kind, numba_array, signature_arguments
from engine.names import display_name
from engine.ptx.parsed_module import Function, Module, OperandKind

POINTER, INTEGER, FLOAT, STRUCT, HANDLE = "pointer", "integer", "float", "struct", "handle"
# Instructions that take a texture or surface object (cudaTextureObject_t, a 64-bit integer in the
# signature): its value is an opaque handle, never an extent or an address.
_HANDLE_OPS = {"tex", "tld4", "txq", "suld", "sust", "sured", "suq"}
NUMBA, TRITON, CPP, PLAIN = "numba", "Triton", "nvcc/NVRTC (C++ signature)", "C linkage (nvcc, NVRTC or hand-written)"
_SIZE_OPS = {"setp", "rem", "div", "min", "max"}
_COPY_OPS = {"mov", "cvt"}
USAGE_LIMIT = 300_000        # instructions: beyond this, kinds come from the types alone


@dataclass(frozen=True)
class ArraySlots:
    """Where one numba array argument's fields sit among the PTX parameters."""

    argument: int                 # position in the Python signature
    first: int                    # PTX index of its meminfo field
    array: NumbaArray

    @property
    def nitems(self) -> int:
        return self.first + 2

    @property
    def itemsize(self) -> int:
        return self.first + 3

    @property
    def data(self) -> int:
        return self.first + 4

    def shape(self, k: int) -> int:
        return self.first + 5 + k

    def stride(self, k: int) -> int:
        return self.first + 5 + self.array.ndim + k

    @property
    def label(self) -> str:
        return f"array argument {self.argument}"


@dataclass(frozen=True)
class ParamFacts:
    frontend: str
    kinds: dict[int, str]               # parameter index -> POINTER / INTEGER / FLOAT / STRUCT
    read: frozenset[int]                # parameters some ld.param reads
    size_like: frozenset[int]           # integers compared, divided by or bounding (min/max)
    arrays: tuple[ArraySlots, ...] = ()  # numba array arguments
    field_of: dict[int, str] | None = None   # numba: parameter -> "array argument 2 .shape[0]"


def frontend_of(module: Module | None, function: Function) -> str:
    """Which compiler wrote the kernel, from what each leaves in the PTX."""
    variables = module.variables if module is not None else []
    if any(v.name.startswith("_ZN08NumbaEnv") for v in variables) or "Array<" in display_name(function.name):
        return NUMBA
    if function.name.startswith("_Z"):
        return CPP
    files = module.files.values() if module is not None else ()
    smem = [v.name for v in (*variables, *function.variables)]
    if any(str(f).endswith(".py") for f in files) or "global_smem" in smem:
        return TRITON
    return PLAIN


def param_facts(function: Function, module: Module | None, analysis: KernelAnalysis) -> ParamFacts:
    frontend = frontend_of(module, function)
    params = function.params
    read, loads = _reads(function)
    kinds: dict[int, str] = {}
    arrays: tuple[ArraySlots, ...] = ()
    field_of: dict[int, str] = {}
    signature = signature_arguments(function.name) if frontend in (NUMBA, CPP) else None
    if frontend == NUMBA and signature is not None:
        arrays, kinds, field_of = _numba_layout(signature, len(params))
    elif frontend == CPP and signature is not None and len(signature) == len(params):
        for i, text in enumerate(signature):
            kind = c_kind(text)
            if kind is not None:
                kinds[i] = kind
    uses = _uses(function, analysis, loads) if len(function.instructions) <= USAGE_LIMIT else {}
    for i, p in enumerate(params):
        if i in kinds:
            continue
        if p.array_size is not None:
            kinds[i] = STRUCT
        elif p.pointer_space is not None:
            kinds[i] = POINTER
        elif p.type.startswith("f"):
            kinds[i] = FLOAT
        elif p.type in ("u64", "b64", "s64"):
            kinds[i] = INTEGER if uses.get(i, set()) & (_SIZE_OPS | {"mul"}) else POINTER
        else:
            kinds[i] = INTEGER
    for i, ops in uses.items():
        if ops & _HANDLE_OPS:
            kinds[i] = HANDLE
    size_like = frozenset(i for i, ops in uses.items() if ops & _SIZE_OPS and kinds.get(i) == INTEGER)
    return ParamFacts(frontend, kinds, frozenset(read), size_like, arrays, field_of or None)


def _numba_layout(signature: list[str], count: int) -> tuple[tuple[ArraySlots, ...], dict[int, str], dict[int, str]]:
    """numba passes an array as meminfo, parent, nitems, itemsize, data, shape[ndim],
    strides[ndim]; a scalar as one parameter. Nothing is claimed when the counts disagree."""
    arrays: list[ArraySlots] = []
    kinds: dict[int, str] = {}
    field_of: dict[int, str] = {}
    at = 0
    for position, text in enumerate(signature):
        array = numba_array(text)
        if array is not None:
            slots = ArraySlots(position, at, array)
            arrays.append(slots)
            names = ["meminfo", "parent", "nitems", "itemsize", "data",
                     *(f"shape[{k}]" for k in range(array.ndim)), *(f"strides[{k}]" for k in range(array.ndim))]
            for k, name in enumerate(names):
                kinds[at + k] = POINTER if name in ("meminfo", "parent", "data") else INTEGER
                field_of[at + k] = f"{slots.label} .{name}"
            at += len(names)
            continue
        kind = c_kind(text)
        if kind is None:
            return (), {}, {}        # a record or tuple argument: its layout is not known here
        kinds[at] = kind
        at += 1
    if at != count:
        return (), {}, {}
    return tuple(arrays), kinds, field_of


def _reads(function: Function) -> tuple[set[int], dict[int, int]]:
    """Parameters read by ``ld.param`` (whole, from offset 0), and for each such load its
    instruction index -> parameter index."""
    index = {p.name: i for i, p in enumerate(function.params)}
    read: set[int] = set()
    loads: dict[int, int] = {}
    for instr in function.instructions:
        if instr.opcode != "ld" or "param" not in instr.modifiers:
            continue
        address = next((o for o in instr.operands if o.kind == OperandKind.ADDRESS), None)
        base = address.base if address is not None else None
        if base is not None and base.name in index:
            read.add(index[base.name])
            if not address.offset:
                loads[instr.index] = index[base.name]
    return read, loads


def _uses(function: Function, analysis: KernelAnalysis, loads: dict[int, int]) -> dict[int, set[str]]:
    """For each parameter read, the opcodes that consume its value (through moves and
    conversions); ``mul`` only where the other factor is not a constant."""
    instructions = function.instructions
    # who reads the register each instruction defines
    readers: dict[int, list[tuple[int, int]]] = {}
    for instr in instructions:
        for k, op in enumerate(instr.operands):
            if op.kind == OperandKind.ADDRESS and instr.opcode in _HANDLE_OPS and op.base is not None:
                op = op.base             # the texture or surface object a fetch names
            elif op.kind != OperandKind.REGISTER or k == 0:
                continue
            if op.kind != OperandKind.REGISTER or not op.name:
                continue
            for d in analysis.defuse.reaching(instr.index, op.name):
                readers.setdefault(d, []).append((instr.index, k))
    out: dict[int, set[str]] = {}
    for load, param in loads.items():
        ops = out.setdefault(param, set())
        stack, seen = [load], {load}
        while stack:
            d = stack.pop()
            for user, position in readers.get(d, ()):
                instr = instructions[user]
                if instr.opcode in _COPY_OPS:
                    if user not in seen:
                        seen.add(user)
                        stack.append(user)
                    continue
                if instr.opcode in ("mul", "mad") and position <= 2:
                    other = instr.operands[3 - position]
                    if other.kind != OperandKind.IMMEDIATE:
                        ops.add("mul")
                    continue
                ops.add(instr.opcode)
    return out
