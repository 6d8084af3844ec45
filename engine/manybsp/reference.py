"""Readers for the reference tables of 000 (``<gpu>_<kernel>_instructions.tsv`` = Table X-1 and
``<gpu>_<kernel>_block.tsv`` = Table X-2), as stored under ``shared/reference/manybsp``.

The instruction tables carry no def-use edges other than ``u`` (first user), so producers are
recovered from the PTX text: the registers an instruction reads, each mapped to the latest earlier
row that writes it (straight-line order, which is what 000's u column follows).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from engine.errors import TableFormatError
from engine.manybsp.rows import FU_BY_NAME, BlockRow, FuCell, InstructionRow

_REG = re.compile(r"%[A-Za-z_][A-Za-z0-9_]*")
# Special registers are inputs of the hardware, never results of an earlier row.
_SPECIAL = ("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%clock", "%smid", "%gridid")
# Opcodes whose first operand is read, not written.
_NO_DEST = ("st", "bra", "bar", "ret", "exit", "red", "membar", "barrier", "prefetch")


def _read_tsv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def _num(text: str, path: Path, row: int, column: str, default: float = 0.0) -> float:
    text = (text or "").strip()
    if text in ("", "--"):
        return default
    if "~" in text:
        # ``1~2`` (000's range of transactions) was costed at its upper end.
        text = text.split("~")[-1]
    try:
        return float(text)
    except ValueError as exc:
        raise TableFormatError(f"not a number: {text!r}", str(path), row, column) from exc


def split_registers(text: str) -> tuple[str, tuple[str, ...], tuple[str, ...], bool]:
    """(opcode, dests, srcs, is_branch) of one PTX statement in a reference table."""
    body = text.strip().rstrip(";").strip()
    guard: tuple[str, ...] = ()
    # Guards appear as ``@%p1``, ``@!%p7`` and, in 000's extraction, ``@p8`` or ``!%p15``.
    match = re.match(r"^([@!]+%?[A-Za-z_][A-Za-z0-9_]*)\s+", body)
    if match:
        guard = ("%" + match.group(1).lstrip("@!%"),)
        body = body[match.end():]
    # The opcode may run into its first operand (``selp.b32%r43``).
    match = re.match(r"^[A-Za-z][A-Za-z0-9_.:]*", body)
    opcode = match.group(0) if match else body
    rest = body[len(opcode):]
    regs = [r for r in _REG.findall(rest) if not r.startswith(_SPECIAL)]
    base = opcode.split(".")[0]
    if base in _NO_DEST or not regs or rest.lstrip().startswith("["):
        return opcode, (), tuple(regs) + guard, base in ("bra", "brx", "ret", "exit")
    return opcode, (regs[0],), tuple(regs[1:]) + guard, False


def instruction_table_from_reference_tsv(path: str | Path) -> list[InstructionRow]:
    """Read a Table X-1 TSV into instruction rows (labels attach to the next instruction)."""
    path = Path(path)
    rows: list[InstructionRow] = []
    last_writer: dict[str, int] = {}
    labels: list[str] = []
    for line_no, rec in enumerate(_read_tsv(path), start=2):
        inst = (rec.get("inst") or "").strip()
        text = (rec.get("text") or "").strip()
        if not inst:
            if text.endswith(":"):
                labels.append(text[:-1])
            continue
        try:
            index = int(inst)
        except ValueError as exc:
            raise TableFormatError(f"instruction number {inst!r}", str(path), line_no, "inst") from exc
        opcode, dests, srcs, is_branch = split_registers(text)
        fu_text = (rec.get("fu") or "").strip()
        is_barrier = opcode.startswith(("bar", "barrier")) or "MI" in (fu_text, rec.get("n_fu", ""))
        fu = None if is_barrier else FU_BY_NAME.get(fu_text)
        if fu is None and not is_barrier:
            raise TableFormatError(f"unknown functional unit {fu_text!r}", str(path), line_no, "fu")
        lat_comm = _num(rec.get("lat_comm", ""), path, line_no, "lat_comm")
        producers = tuple(sorted({last_writer[r] for r in srcs if r in last_writer}))
        rows.append(
            InstructionRow(
                index=index,
                text=text,
                opcode=opcode,
                fu=fu,
                n_fu=int(_num(rec.get("n_fu", ""), path, line_no, "n_fu")) if not is_barrier else 0,
                T=_num(rec.get("T", ""), path, line_no, "T"),
                n_ma=int(_num(rec.get("n_ma", ""), path, line_no, "n_ma")),
                lat_comp=_num(rec.get("lat_comp", ""), path, line_no, "lat_comp"),
                lat_comm=lat_comm,
                is_barrier=is_barrier,
                is_global_access=lat_comm > 0,
                u=int(_num(rec.get("u", ""), path, line_no, "u")),
                d=int(_num(rec.get("d", ""), path, line_no, "d")),
                p=int(_num(rec.get("p", ""), path, line_no, "p")),
                producers=producers,
                is_branch=is_branch,
                labels=tuple(labels),
            )
        )
        labels = []
        for r in dests:
            last_writer[r] = index
    return rows


def parse_fu_cell(text: str, path: str, row: int, column: str) -> FuCell | None:
    """``16+1`` -> FuCell(16, 1); ``2`` -> FuCell(0, 2); blank -> None."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        if "+" in text:
            a, b = text.split("+", 1)
            return FuCell(float(a), float(b))
        return FuCell(0.0, float(text))
    except ValueError as exc:
        raise TableFormatError(f"FU cell {text!r} is not a number or 'a+b'", path, row, column) from exc


def block_table_from_reference_tsv(path: str | Path) -> list[BlockRow]:
    """Read a Table X-2 TSV (label rows skipped)."""
    path = Path(path)
    out: list[BlockRow] = []
    for line_no, rec in enumerate(_read_tsv(path), start=2):
        inst = (rec.get("inst") or "").strip()
        if not inst:
            continue
        issue_text = (rec.get("issue") or "").strip()
        cells = {}
        for column in range(1, 5):
            cell = parse_fu_cell(rec.get(f"fu{column}", ""), str(path), line_no, f"fu{column}")
            if cell is not None:
                cells[column] = cell
        wot = (rec.get("warp_over_T") or "").strip()
        out.append(
            BlockRow(
                index=int(inst),
                op=(rec.get("op") or "").strip(),
                issue=_num(issue_text, path, line_no, "issue") if issue_text else None,
                fu=cells,
                warp_over_T=None if wot in ("", "--") else _num(wot, path, line_no, "warp_over_T"),
                comm=_num(rec.get("comm", ""), path, line_no, "comm"),
                ovh=_num(rec.get("ovh", ""), path, line_no, "ovh"),
                sync=_num(rec.get("sync", ""), path, line_no, "sync"),
                u=int(_num(rec.get("u", ""), path, line_no, "u")),
                d=int(_num(rec.get("d", ""), path, line_no, "d")),
                p=int(_num(rec.get("p", ""), path, line_no, "p")),
            )
        )
    return out
