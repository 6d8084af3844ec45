"""The interpreter's warp-wide instructions: shuffles, votes, the active mask, elect, redux,
reductions at a barrier and mbarriers (a part of :class:`engine.execution.machine.Machine`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from engine.execution import alu_ops, arith
from engine.execution.instruction_facts import (
    U64,
    _types,
)
from engine.execution.typed import FLOAT_TYPES
from engine.ptx.parsed_module import Instruction, OperandKind

if TYPE_CHECKING:
    from engine.execution.machine import Machine


# ------------------------------------------------------------------ warps
def warp_rows(m: Machine, lanes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    warp = lanes >> 5
    warps, row = np.unique(warp, return_inverse=True)
    return warps, row, lanes & 31


def shuffle(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    mode = next((m for m in ins.modifiers if m in ("up", "down", "bfly", "idx")), "idx")
    dest = ins.operands[0]
    a_op, b_op, c_op = ins.operands[1], ins.operands[2], ins.operands[3]
    b, kb = m._value(b_op, lanes, "b32")
    c, kc = m._value(c_op, lanes, "b32")
    lane = (lanes & 31).astype(np.int64)
    bval = (b & U64(31)).astype(np.int64)
    cval = (c & U64(31)).astype(np.int64)
    segmask = ((c >> U64(8)) & U64(31)).astype(np.int64)
    max_lane = (lane & segmask) | (cval & ~segmask)
    min_lane = lane & segmask
    if mode == "up":
        j = lane - bval
        ok = j >= max_lane
    elif mode == "down":
        j = lane + bval
        ok = j <= max_lane
    elif mode == "bfly":
        j = lane ^ bval
        ok = j <= max_lane
    else:
        j = min_lane | (bval & ~segmask)
        ok = j <= max_lane
    del min_lane
    j = np.where(ok, j, lane)
    source = (lanes & ~np.int64(31)) + np.clip(j, 0, 31)
    a_row = m.rows.get(a_op.name or "") if a_op.kind == OperandKind.REGISTER else None
    if a_row is not None:
        value, ka = m.regs[a_row, source], m.known[a_row, source]
    else:
        value, ka = m._value(a_op, lanes, "b32")
    known = ka & kb & kc
    name = dest.elements[0].name if dest.kind == OperandKind.PAIR else dest.name
    m._write(name, lanes, value, known, f"the shuffle at line {ins.location.line} reads unknown values")
    if dest.kind == OperandKind.PAIR and len(dest.elements) == 2:
        m._write(dest.elements[1].name, lanes, ok.astype(U64), kb & kc)


def vote(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    mode = next((m for m in ins.modifiers if m in ("all", "any", "uni", "ballot")), "any")
    value, known = m._value(ins.operands[1], lanes, "pred")
    pred = value != 0
    warps, row, lane = warp_rows(m, lanes)
    n = len(warps)
    ballot = np.zeros(n, dtype=U64)
    np.bitwise_or.at(ballot, row, np.where(pred, U64(1) << lane.astype(U64), U64(0)))
    active = np.zeros(n, dtype=U64)
    np.bitwise_or.at(active, row, U64(1) << lane.astype(U64))
    all_known = np.ones(n, dtype=bool)
    np.logical_and.at(all_known, row, known)
    if mode == "ballot":
        result = ballot[row]
    elif mode == "all":
        result = (ballot == active)[row].astype(U64)
    elif mode == "any":
        result = (ballot != 0)[row].astype(U64)
    else:
        result = ((ballot == active) | (ballot == 0))[row].astype(U64)
    m._write(alu_ops.dest_operand(m, ins).name, lanes, result, all_known[row],
                f"the vote at line {ins.location.line} reads unknown values")


def activemask(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    warps, row, lane = warp_rows(m, lanes)
    active = np.zeros(len(warps), dtype=U64)
    np.bitwise_or.at(active, row, U64(1) << lane.astype(U64))
    m._write(alu_ops.dest_operand(m, ins).name, lanes, active[row], np.ones(len(lanes), dtype=bool))


def elect(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    warps, row, lane = warp_rows(m, lanes)
    first = np.full(len(warps), 99, dtype=np.int64)
    np.minimum.at(first, row, lane)
    leader = lane == first[row]
    dest = ins.operands[0]
    if dest.kind == OperandKind.PAIR and len(dest.elements) == 2:
        m._write(dest.elements[0].name, lanes, (first[row] + (lanes & ~np.int64(31))).astype(U64) & U64(31),
                    np.ones(len(lanes), dtype=bool))
        m._write(dest.elements[1].name, lanes, leader.astype(U64), np.ones(len(lanes), dtype=bool))
    else:
        m._write(dest.name, lanes, leader.astype(U64), np.ones(len(lanes), dtype=bool))


def redux(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    op = next((m for m in ins.modifiers if m in ("add", "min", "max", "and", "or", "xor")), None)
    t = (_types(ins.modifiers) or ["u32"])[-1]
    if op is None or t in FLOAT_TYPES:
        raise arith.Unsupported("redux")
    value, known = m._typed(ins.operands[1], lanes, t)
    warps, row, _ = warp_rows(m, lanes)
    n = len(warps)
    v = value.astype(np.int64)
    if op == "add":
        acc = np.zeros(n, dtype=np.int64)
        np.add.at(acc, row, v)
    elif op in ("min", "max"):
        acc = np.full(n, np.iinfo(np.int64).max if op == "min" else np.iinfo(np.int64).min, dtype=np.int64)
        (np.minimum if op == "min" else np.maximum).at(acc, row, v)
    else:
        acc = np.zeros(n, dtype=np.int64) if op != "and" else np.full(n, -1, dtype=np.int64)
        {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op].at(acc, row, v)
    all_known = np.ones(n, dtype=bool)
    np.logical_and.at(all_known, row, known)
    alu_ops.store_result(m, ins, lanes, acc[row], all_known[row], t)


def barrier_reduction(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    """``bar.red.popc/and/or``: the block-wide result is written when the barrier releases;
    the run writes it at arrival, which only the block's own later instructions read."""
    op = next((m for m in ins.modifiers if m in ("popc", "and", "or")), "or")
    pred_op = ins.operands[-1]
    value, known = m._value(pred_op, lanes, "pred")
    rows = m.block_row[lanes]
    blocks = np.unique(rows)
    result = np.zeros(len(lanes), dtype=U64)
    for blk in blocks.tolist():
        sel = rows == blk
        votes = value[sel] != 0
        if op == "popc":
            r = U64(int(votes.sum()))
        elif op == "and":
            r = U64(bool(votes.all()))
        else:
            r = U64(bool(votes.any()))
        result[sel] = r
    m._write(ins.operands[0].name, lanes, result, np.ones(len(lanes), dtype=bool) & known.all())


def mbarrier(m: Machine, ins: Instruction, lanes: np.ndarray) -> None:
    """Transaction barriers of asynchronous copies: the run completes every copy at once, so a
    ``try_wait``/``test_wait`` succeeds; an ``arrive`` returns a state token nothing decodes."""
    full = ins.full_opcode
    if "try_wait" in full or "test_wait" in full:
        m._write(ins.operands[0].name if ins.operands[0].kind == OperandKind.REGISTER else None, lanes,
                    np.ones(len(lanes), dtype=U64), np.ones(len(lanes), dtype=bool))
    elif ins.dests and ins.operands and ins.operands[0].kind == OperandKind.REGISTER:
        m._write(ins.operands[0].name, lanes, np.zeros(len(lanes), dtype=U64), np.ones(len(lanes), dtype=bool))
