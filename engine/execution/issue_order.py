"""When a warp's memory instructions leave it, against the other warps' (for the cache replay).

The run executes a group of warps through a basic block one instruction at a time for all of
them; a warp on the GPU does not wait for the others. A scheduler issues a warp's next
instruction as soon as its operands are ready, so the loads of a block that need no loaded
value (an unrolled loop's reads) leave back to back, and the warp stalls only at the first
instruction that uses a loaded value; the scheduler then issues other warps' instructions
until the data arrives.

:func:`load_waits` gives, per instruction, how many loads of its own basic block it waits for
one after another (0: it needs no value loaded in its block). The cache replay issues a
segment's requests by that count first, then warp by warp (:func:`issue_order`), so a warp's
independent requests reach L1 together, as on the GPU, and requests behind a load's result come
after every warp's requests that were ready before them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

# loads whose value comes back late: every load but the kernel's parameters and the constant
# bank (served in the issue stage's constant cache)
_LOADS = frozenset({"ld", "ldu", "atom", "tex", "tld4", "suld", "ldmatrix"})
_NOT_WAITED = frozenset({"param", "const"})


def _waits_for_value(ins: Any) -> bool:
    if ins.opcode not in _LOADS or not ins.dests:
        return False
    return not (_NOT_WAITED & set(ins.modifiers))


def load_waits(instructions: Sequence[Any], blocks: Sequence[Any]) -> np.ndarray:
    """Per instruction of ``instructions`` (a function's body; ``blocks`` its basic blocks with
    ``start`` and ``end``), the loads of its block it waits for in sequence: the longest chain
    of loaded values, within the block, that its operands (the guard included) depend on."""
    waits = np.zeros(len(instructions), dtype=np.int64)
    for block in blocks:
        level: dict[str, int] = {}
        for i in range(block.start, block.end):
            ins = instructions[i]
            own = max((level.get(r, 0) for r in ins.srcs), default=0)
            waits[i] = own
            out = own + 1 if _waits_for_value(ins) else own
            for d in ins.dests:
                level[d] = out
    return waits


def issue_order(log: dict[str, np.ndarray], selected: np.ndarray, part: np.ndarray | None = None) -> np.ndarray:
    """The requests ``selected`` (indices into ``log``, in the run's order) in the order the
    replay issues them: by ``part`` first (0 before 1, where given), then by the segment they
    were logged in, the loads they wait for (``request_waits``), the warp, and the run's order.
    A log without segments and warps (an older or hand-made one) keeps the run's order."""
    if "request_segment" not in log or "request_warp" not in log or not len(selected):
        return selected
    keys: list[np.ndarray] = [selected, log["request_warp"][selected]]
    if "request_waits" in log:
        keys.append(log["request_waits"][selected])
    keys.append(log["request_segment"][selected])
    if part is not None:
        keys.append(part)
    return selected[np.lexsort(keys)].astype(np.int64)
