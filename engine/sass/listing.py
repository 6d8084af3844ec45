"""nvdisasm's JSON listing (``nvdisasm -json -g``) as plain records.

Each function is a list of instructions in address order; an instruction carries its opcode
with modifiers (``LDS.128``), its guard predicate, the PTX line of the line-table row that
starts at it (None where no row starts, which in DWARF terms means "same as the row before"),
and, for control flow, the index of the instruction it jumps to. All architectures nvdisasm 13
reads (sm_75 and newer) use 16-byte instructions, so an address is an index times the size.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from engine.errors import WarplineError

_HEX = re.compile(r"0x([0-9a-fA-F]+)")
# Opcodes that transfer control to an address inside the function (not CALL, which leaves it).
JUMPS = frozenset({"BRA", "BRX", "JMP", "JMX"})


class SassListingError(WarplineError):
    """nvdisasm printed something this reader does not understand."""


@dataclass(frozen=True)
class SassInstruction:
    position: int            # index in the function, 0-based
    opcode: str              # ``LDS.128``, ``MUFU.SIN``
    predicate: str           # ``@!P0`` or ""
    operands: str
    line: int | None         # line-table row starting here (None: continues the row before)
    target: int | None       # index jumped to (branches, BSSY's reconvergence point)
    control: bool            # nvdisasm marks it as control flow
    stall: int | None = None  # ptxas's stall count (engine.sass.control_fields); None: not read

    @property
    def base(self) -> str:
        return self.opcode.split(".", 1)[0]

    @property
    def is_jump(self) -> bool:
        return self.base in JUMPS


def parse_listing(text: str, stalls: dict[str, tuple[int, ...]] | None = None) -> dict[str, list[SassInstruction]]:
    """Every function of the listing: name -> instructions. ``stalls``: each function's stall
    counts in address order (a function whose count differs from its listing's gets none)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SassListingError(f"nvdisasm's JSON listing is not JSON: {exc}") from None
    functions: dict[str, list[SassInstruction]] = {}
    for part in data if isinstance(data, list) else ():
        if not isinstance(part, list):
            continue
        for entry in part:
            if isinstance(entry, dict) and "function-name" in entry:
                name = str(entry["function-name"])
                functions[name] = _function(entry, (stalls or {}).get(name))
    lines = [ins.line for code in functions.values() for ins in code]
    if lines and all(line is None for line in lines):
        # nvdisasm 13.0 (JSON schema 12.8) leaves the source lines out of -json -g; without them
        # no SASS instruction can be matched to its PTX instruction
        producer = next((str(p.get("Producer", "")) for p in (data if isinstance(data, list) else ())
                         if isinstance(p, dict)), "")
        raise SassListingError(f"nvdisasm's JSON listing has no source lines ({producer or 'unknown version'}; "
                               "the nvidia-cuda-nvdisasm 13.5 package's has them)")
    return functions


def _function(entry: dict, stalls: tuple[int, ...] | None) -> list[SassInstruction]:
    raw = entry.get("sass-instructions") or []
    count = len(raw)
    if stalls is not None and len(stalls) != count:
        stalls = None
    length = int(entry.get("length") or 0)
    size = length // count if count else 16
    if count and size * count != length:
        raise SassListingError(f"{entry.get('function-name')}: {count} instructions in {length} bytes")
    out = []
    for position, item in enumerate(raw):
        opcode = str(item.get("opcode", ""))
        operands = str(item.get("operands", ""))
        attributes = item.get("other-attributes")
        control = isinstance(attributes, dict) and str(attributes.get("control-flow", "")).lower() == "true"
        target = None
        if control:
            found = _HEX.findall(operands)
            if found:
                address = int(found[-1], 16)
                if address % size == 0 and address // size < count:
                    target = address // size
        line = item.get("source-line")
        out.append(SassInstruction(position, opcode, str(item.get("predicate", "")), operands,
                                   int(line) if isinstance(line, int) else None, target, control,
                                   None if stalls is None else stalls[position]))
    return out
