"""Operand classification, immediates, and the destination/source rule.

Destination / source rule (the def-use graph and both models read ``Instruction.dests/srcs``):

1. The guard predicate (``@%p1`` / ``@!%p1``) is always a source.
2. Registers inside an address (``[%rd1+8]``, ``[tex, {%f1, %f2}]``) are always sources.
3. For most instructions operand 0 is the destination: a register, every element of a vector
   (``{%f1, _, %f3}``: placeholders ``_`` are dropped), or both halves of a pair (``%r17|%p3``).
   Every register of the other operands is a source.
4. There is no destination when operand 0 is an address (``st``, ``red``, ``cp.async*``,
   ``mbarrier.init``, ``wmma.store``, ``stmatrix``, ``sust``, ``prefetch`` ... write memory), nor
   for ``bra``, ``brx``, ``ret``, ``exit``, ``trap``, ``brkpt``, ``membar``, ``fence``,
   ``bar``/``barrier`` (except their ``.red`` forms, which write operand 0), ``nanosleep``,
   ``pmevent``, ``setmaxnreg``, ``griddepcontrol`` and ``prefetch*``: all their registers are sources.
5. ``call``: destinations are the registers of the return list ``(r)``, sources those of the
   argument list and an indirect callee register.
6. ``wgmma.mma_async``: the accumulator vector (operand 0) is both destination and source.
7. Special registers (``%tid.x`` ...) are neither: they are not written by the program.
8. The carry flag is a hidden register, named ``%cc`` here so that the def-use graph keeps a
   carry chain in order: ``.cc`` (``add.cc``, ``madc.hi.cc``) puts ``%cc`` in ``dests``, and
   ``addc``/``subc``/``madc`` put it in ``srcs``.

Each register appears once in ``dests`` and once in ``srcs``, in order of first appearance; a
register may be in both (``add.s32 %r1, %r1, 1``).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence
from functools import lru_cache

from engine.ptx.parsed_module import Operand, OperandKind

# Special registers by base name (the part before the first dot), plus numbered families.
SPECIAL_BASES = frozenset(
    """
    %tid %ntid %ctaid %nctaid %laneid %warpid %nwarpid %smid %nsmid %gridid %clock %clock64
    %clock_hi %lanemask_eq %lanemask_le %lanemask_lt %lanemask_ge %lanemask_gt %globaltimer
    %globaltimer_lo %globaltimer_hi %total_smem_size %dynamic_smem_size %aggr_smem_size
    %is_explicit_cluster %clusterid %nclusterid %cluster_ctaid %cluster_nctaid %cluster_ctarank
    %cluster_nctarank %current_graph_exec %WARP_SZ
    """.split()
)
_SPECIAL_FAMILY = re.compile(r"%(?:envreg\d+|pm\d(?:_64)?|reserved_smem_offset_\w+)$")
_FAMILY_PREFIXES = ("%envreg", "%pm", "%reserved_smem_offset_")

_NO_DEST_OPCODES = frozenset(
    "bra brx ret exit trap brkpt membar fence bar barrier nanosleep pmevent setmaxnreg "
    "griddepcontrol prefetch prefetchu applypriority discard".split()
)

CARRY_FLAG = "%cc"
_CARRY_READERS = frozenset({"addc", "subc", "madc"})

_HEX_FLOAT = re.compile(r"0[fF]([0-9a-fA-F]{8})$")
_HEX_DOUBLE = re.compile(r"0[dD]([0-9a-fA-F]{16})$")
_INTEGER = re.compile(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9]\d*)[uU]?$")
_DECIMAL_FLOAT = re.compile(r"\d+\.\d*(?:[eE][+-]?\d+)?$")


def is_special_register(name: str) -> bool:
    base = name.split(".", 1)[0] if "." in name else name
    if base in SPECIAL_BASES:
        return True
    # Only the numbered families need the pattern; %r12, %rd3, %p1 are ordinary registers.
    return base.startswith(_FAMILY_PREFIXES) and _SPECIAL_FAMILY.match(base) is not None


def decode_number(text: str) -> int | float | None:
    """The value of a PTX numeric literal, or None if the text is not one."""
    try:
        return _decode(text)
    except ValueError:  # e.g. more decimal digits than Python converts: not a real literal
        return None


def _decode(text: str) -> int | float | None:
    m = _HEX_FLOAT.match(text)
    if m:
        return struct.unpack(">f", bytes.fromhex(m.group(1)))[0]
    m = _HEX_DOUBLE.match(text)
    if m:
        return struct.unpack(">d", bytes.fromhex(m.group(1)))[0]
    m = _INTEGER.match(text)
    if m:
        digits = m.group(1)
        prefix = digits[:2].lower()
        if prefix == "0x":
            return int(digits[2:], 16)
        if prefix == "0b":
            return int(digits[2:], 2)
        if len(digits) > 1 and digits[0] == "0":
            return int(digits[1:], 8)  # PTX follows C: a leading 0 means octal
        return int(digits)
    if _DECIMAL_FLOAT.match(text):
        return float(text)
    return None


def _unique(names: list[str]) -> tuple[str, ...]:
    return tuple(names) if len(names) < 2 else tuple(dict.fromkeys(names))


def dests_and_srcs(
    opcode: str, modifiers: tuple[str, ...], operands: tuple[Operand, ...], guard: str | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Apply the module docstring's rule to one instruction."""
    return split_registers(opcode, modifiers, operands[0].kind if operands else None,
                           [o.registers() for o in operands], guard)


def split_registers(
    opcode: str, modifiers: tuple[str, ...], first_kind: OperandKind | None,
    registers: Sequence[tuple[str, ...]], guard: str | None,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """:func:`dests_and_srcs` given the kind of operand 0 and each operand's registers (the
    parser's fast path knows those of the operands it shares)."""
    srcs: list[str] = [guard] if guard else []
    may_write, accumulates, carry_out, carry_in = _plan(opcode, modifiers)
    if opcode == "call":
        rest = registers
        dests: list[str] = []
        if registers and first_kind == OperandKind.LIST and len(registers) > 1:
            dests = list(registers[0])
            rest = registers[1:]
        for regs in rest:
            srcs.extend(regs)
        return _unique(dests), _unique(srcs)
    if may_write and registers and first_kind in _DEST_KINDS:
        dests = list(registers[0])
        if accumulates:
            srcs.extend(registers[0])
        for regs in registers[1:]:
            srcs.extend(regs)
    else:
        dests = []
        for regs in registers:
            srcs.extend(regs)
    if carry_out:
        dests.append(CARRY_FLAG)  # after the real destination, so that dests[0] stays a register
    if carry_in:
        srcs.append(CARRY_FLAG)
    return _unique(dests), _unique(srcs)


_DEST_KINDS = frozenset({OperandKind.REGISTER, OperandKind.VECTOR, OperandKind.PAIR, OperandKind.PLACEHOLDER})


def plain_rule(opcode: str, modifiers: tuple[str, ...]) -> bool:
    """True when, with a register as operand 0, the rule is simply "operand 0 is written, the
    registers of the others are read" (no call, accumulator or carry flag involved)."""
    may_write, accumulates, carry_out, carry_in = _plan(opcode, modifiers)
    return opcode != "call" and may_write and not (accumulates or carry_out or carry_in)


@lru_cache(maxsize=4096)
def _plan(opcode: str, modifiers: tuple[str, ...]) -> tuple[bool, bool, bool, bool]:
    """What the rule says for an opcode: may operand 0 be a destination, is it also read
    (wgmma's accumulator), does it write or read the carry flag."""
    may_write = opcode not in _NO_DEST_OPCODES or ("red" in modifiers and opcode in ("bar", "barrier"))
    accumulates = opcode == "wgmma" and any(m.startswith("mma_async") for m in modifiers)
    return may_write, accumulates, "cc" in modifiers, opcode in _CARRY_READERS
