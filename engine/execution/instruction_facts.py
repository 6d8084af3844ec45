"""What the interpreter's handlers share about PTX instructions: state spaces, the opcode
families, the type and vector suffixes of a modifier list, and counting the warps of a lane set."""

from __future__ import annotations

import numpy as np

from engine.execution.typed import is_type

U64 = np.uint64
SPACES = ("global", "shared", "local", "const", "param", "tex", "shared::cta", "shared::cluster")
_AXES = {"x": 0, "y": 1, "z": 2}
_BINARY = frozenset({"add", "sub", "mul", "div", "rem", "min", "max", "and", "or", "xor", "shl", "shr", "copysign"})
_UNARY = frozenset({"neg", "abs", "not", "cnot", "popc", "clz", "bfind", "brev", "sqrt", "rsqrt", "rcp", "sin",
                    "cos", "ex2", "lg2", "tanh"})
_NO_OPS = frozenset({"membar", "fence", "nanosleep", "prefetch", "prefetchu", "pmevent", "griddepcontrol",
                     "setmaxnreg", "discard", "applypriority", "createpolicy", "trap", "brkpt",
                     "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group", "cp.async.commit_group",
                     "cp.async.wait_group", "cp.async.wait_all", "cp.async.bulk.commit_group",
                     "cp.async.bulk.wait_group", "cp.async.bulk.wait_group.read"})



def _warps_of(lanes: np.ndarray) -> int:
    """Distinct warps among sorted lane numbers."""
    if not len(lanes):
        return 0
    w = lanes >> 5
    return 1 + int(np.count_nonzero(w[1:] != w[:-1]))


def _types(modifiers: tuple[str, ...]) -> list[str]:
    return [m for m in modifiers if is_type(m)]


def _vector(modifiers: tuple[str, ...]) -> int:
    for m in modifiers:
        if m in ("v2", "v4", "v8"):
            return int(m[1])
    return 1


def _space(modifiers: tuple[str, ...]) -> str:
    for m in modifiers:
        if m in SPACES:
            return "shared" if m.startswith("shared") else m
    return "generic"
