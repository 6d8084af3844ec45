"""Display names on the timeline: a subsystem's label (``ALU (int/FP32)`` for ``alu``), the
subsystem list of a trace, and the instruction class (opcode family) that colours bars by class."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from engine.pipeline.trace import Trace

# Display names of the subsystem names the simulator and profiles use (engine.units.Unit values
# and the examples' short names); anything else is shown as given.
SUBSYSTEM_LABELS: dict[str, str] = {
    "alu": "ALU (int/FP32)", "fp32": "ALU (int/FP32)", "int": "ALU (int/FP32)",
    "comp": "compute", "fp64": "FP64", "dpu": "FP64", "sfu": "SFU", "ldst": "LDST / memory",
    "mem": "memory", "memory": "memory", "tensor": "tensor", "control": "control",
    "barrier": "barrier", "bar": "barrier", "l2_atomic": "L2 atomics",
    "texture": "texture",
}
_STATE_SPACES = {"global", "shared", "local", "const", "param", "tex"}


def subsystem_label(name: str) -> str:
    return SUBSYSTEM_LABELS.get(name.strip().lower(), name)


def instruction_class(name: str) -> str:
    """Opcode family of an instruction's text: ``@%p1 ld.global.f32 %f1, [..]`` -> ``ld.global``.

    Hand-built kernels name instructions ``fma3`` or ``C0``: trailing digits are dropped so the
    copies of one unrolled operation share a class.
    """
    text = name.strip()
    if text.startswith("@"):
        text = text.split(None, 1)[1] if " " in text else text[1:]
    opcode = text.split(None, 1)[0] if text else "?"
    parts = opcode.rstrip(";").split(".")
    head = parts[0].rstrip("0123456789") or parts[0]
    if len(parts) > 1 and parts[1] in _STATE_SPACES:
        return f"{head}.{parts[1]}"
    return head


def subsystem_names(trace: Trace, subsystems: Sequence[str] | None,
                    units: Sequence[str] | None) -> list[str]:
    """The subsystem list: as given; else each index named after the most common unit of the
    instructions issued on it (``units`` is per static instruction); else ``subsystem k``."""
    n = int(trace.issues["subsystem"].max()) + 1 if len(trace.issues) else 0
    if subsystems is not None:
        if len(subsystems) < n:
            raise ValueError(f"the trace uses subsystem index {n - 1} but only {len(subsystems)} "
                             "subsystem names were given")
        return list(subsystems)
    names = [f"subsystem {k}" for k in range(n)]
    if units is not None:
        for k in range(n):
            used = trace.issues["instr"][trace.issues["subsystem"] == k]
            if len(used):
                common = Counter(units[int(i)] for i in np.unique(used)).most_common(1)[0][0]
                names[k] = str(common)
    return names
