"""The symbols a function's body names (``.shared`` arrays, globals, functions), found once per
parsed body: the occupancy, the resource estimate, the adapter's SM context and the shared-memory
layout each ask, and a 10^5-instruction body has over a million operands to walk."""

from __future__ import annotations

from engine.ptx.parsed_module import Function, Operand, OperandKind


def symbols_named(function: Function) -> frozenset[str]:
    """Every symbol an operand of ``function``'s instructions names, at any depth (an address's
    base, a vector's elements); kept on the function until its body is replaced or changes length."""
    kept: tuple[object, int, frozenset[str]] | None = getattr(function, "_warpline_symbols", None)
    if kept is not None and kept[0] is function.body and kept[1] == len(function.instructions):
        return kept[2]
    names: set[str] = set()

    def visit(operand: Operand) -> None:
        if operand.kind == OperandKind.SYMBOL and operand.name:
            names.add(operand.name)
        if operand.base is not None:
            visit(operand.base)
        for element in operand.elements:
            visit(element)

    symbol = OperandKind.SYMBOL
    for instruction in function.instructions:
        for operand in instruction.operands:
            # most operands are registers and immediates with nothing inside: no call for them
            if operand.base is not None or operand.elements:
                visit(operand)
            elif operand.kind == symbol and operand.name:
                names.add(operand.name)
    found = frozenset(names)
    try:
        function._warpline_symbols = (function.body, len(function.instructions), found)  # type: ignore[attr-defined]
    except AttributeError:      # a slotted stand-in for a Function: walked again next time
        pass
    return found
