"""Property test: mutated real PTX either parses or raises PtxSyntaxError at a real position.

The seeds are nvcc 13.0 output checked in under ``tests/data/ptx`` next to their sources
(``nvcc -ptx -arch=sm_90 -lineinfo reduce.cu``, ``nvcc -ptx -arch=sm_80 tile.cu``). Mutations work on the text
(delete, duplicate, truncate, insert arbitrary characters) and on white-space separated tokens
(swap two, drop one), which between them produce unbalanced braces, missing ``;``, stray bytes,
cut comments and strings, and instructions outside bodies.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import PtxSyntaxError
from engine.ptx import parse_ptx

SEEDS = {p.name: p.read_text() for p in sorted((Path(__file__).parent / "data" / "ptx").glob("*.ptx"))}
_PIECES = re.compile(r"\S+|\s+")

# Characters PTX uses plus some it never does (NUL, '#', non-ASCII, lone quotes and comment openers).
_ALPHABET = st.sampled_from(list("{}[]();:,.@!|+-_%$\"/*\n\t 0123456789abcdefxXU#\x00\u00e9\u2603"))
_OPS = st.one_of(
    st.tuples(st.just("delete"), st.integers(0, 10**6), st.integers(1, 40)),
    st.tuples(st.just("duplicate"), st.integers(0, 10**6), st.integers(1, 200)),
    st.tuples(st.just("truncate"), st.integers(0, 10**6), st.just(0)),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.text(_ALPHABET, min_size=1, max_size=6)),
    st.tuples(st.just("swap"), st.integers(0, 10**6), st.integers(0, 10**6)),
    st.tuples(st.just("drop"), st.integers(0, 10**6), st.just(0)),
)


def mutate(text: str, ops: list[tuple]) -> str:
    for op, a, b in ops:
        if not text:
            break
        at = a % len(text)
        if op == "delete":
            text = text[:at] + text[at + b :]
        elif op == "duplicate":
            text = text[: at + b] + text[at : at + b] + text[at + b :]
        elif op == "truncate":
            text = text[:at]
        elif op == "insert":
            text = text[:at] + b + text[at:]
        else:
            pieces = _PIECES.findall(text)
            words = [i for i, p in enumerate(pieces) if not p.isspace()]
            if not words:
                continue
            i = words[a % len(words)]
            if op == "swap":
                j = words[b % len(words)]
                pieces[i], pieces[j] = pieces[j], pieces[i]
            else:
                pieces[i] = ""
            text = "".join(pieces)
    return text


def check_module(module) -> None:
    """A parse that succeeds must still give a self-consistent module."""
    for function in module.functions:
        body = function.instructions
        assert [i.index for i in body] == list(range(len(body)))
        assert all(0 <= index <= len(body) for index in function.labels.values())
        for instr in body:
            assert instr.opcode and instr.text.endswith(";")
            assert all(isinstance(r, str) and r for r in instr.dests + instr.srcs)


def test_seeds_are_present_and_clean():
    assert len(SEEDS) >= 2
    for name, text in SEEDS.items():
        assert parse_ptx(text, name).kernels, name


@settings(max_examples=300, derandomize=True, deadline=1000, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.sampled_from(sorted(SEEDS)), ops=st.lists(_OPS, min_size=1, max_size=4))
def test_mutated_ptx_parses_or_fails_cleanly(seed: str, ops: list[tuple]) -> None:
    text = mutate(SEEDS[seed], ops)
    try:
        module = parse_ptx(text, "fuzz.ptx")
    except PtxSyntaxError as err:
        assert err.file == "fuzz.ptx"
        assert 1 <= err.line <= text.count("\n") + 1, (err.line, str(err))
        assert err.column >= 1
        assert str(err).startswith(f"fuzz.ptx:{err.line}:{err.column}: ")
    else:
        check_module(module)


@settings(max_examples=100, derandomize=True, deadline=500, database=None)
@given(st.text(_ALPHABET, max_size=300))
def test_random_text_never_escapes_as_another_exception(text: str) -> None:
    try:
        check_module(parse_ptx(text, "noise.ptx"))
    except PtxSyntaxError as err:
        assert err.line >= 1 and err.column >= 1


# ---------------------------------------------------------------------------- generated valid PTX
_REG = st.builds(lambda p, n: f"%{p}{n}", st.sampled_from(["r", "rd", "f", "fd", "p"]), st.integers(0, 99))
_IMM = st.sampled_from(["0", "-1", "42", "0x1F", "0f3F800000", "0d3FF0000000000000", "7U", "0fbf000000"])
_GAP = st.sampled_from([" ", "\t", "  ", " /* c */ ", "\n\t", " \n "])


@st.composite
def _source_operand(draw) -> tuple[str, list[str]]:
    """One source operand as text, and the registers it reads."""
    choice = draw(st.integers(0, 4))
    if choice == 0:
        reg = draw(_REG)
        return reg, [reg]
    if choice == 1:
        return draw(_IMM), []
    if choice == 2:
        reg, gap = draw(_REG), draw(_GAP)
        offset = draw(st.sampled_from(["", "+4", "+-12", f"{gap}+{gap}0"]))
        return f"[{reg}{offset}]", [reg]
    if choice == 3:
        regs = draw(st.lists(_REG, min_size=1, max_size=4))
        return "{" + ", ".join(regs) + "}", regs
    return draw(st.sampled_from(["%tid.x", "%ctaid.y", "%laneid", "sym", "[sym+8]"])), []


@st.composite
def _instruction(draw) -> tuple[str, str, tuple[str, ...], tuple[str, ...]]:
    opcode = draw(st.sampled_from(["add", "mad", "ld", "cvt", "frob", "shfl", "mma"]))
    mods = draw(st.lists(st.sampled_from(["s32", "global", "v4", "shared::cta", "rn", "sync"]),
                         max_size=4))
    full = ".".join([opcode, *mods])
    guard = draw(st.sampled_from(["", "@%p9 ", "@!%p8 "]))
    dest = draw(st.one_of(_REG, st.builds(lambda a, b: f"{a}|{b}", _REG, _REG)))
    sources = draw(st.lists(_source_operand(), max_size=4))
    gap = draw(_GAP)
    text = f"{guard}{full}{gap}{dest}" + "".join(f",{gap}{s}" for s, _ in sources) + ";"
    srcs = ([guard.strip("@! ")] if guard else []) + [r for _, regs in sources for r in regs]
    return text, full, tuple(dict.fromkeys(dest.split("|"))), tuple(dict.fromkeys(srcs))


@settings(max_examples=100, derandomize=True, deadline=1000, database=None)
@given(st.lists(_instruction(), min_size=1, max_size=12))
def test_generated_instructions_round_trip(instructions) -> None:
    decls = ".reg .b32 %r<100>;\n.reg .b64 %rd<100>;\n.reg .f32 %f<100>;\n"
    text = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n" + decls
    text += "\n".join(t for t, *_ in instructions) + "\n}\n"
    body = parse_ptx(text, "gen.ptx").kernel().instructions
    assert len(body) == len(instructions)
    for got, (source, full, dests, srcs) in zip(body, instructions, strict=True):
        assert got.full_opcode == full, source
        assert (got.dests, got.srcs) == (dests, srcs), source
