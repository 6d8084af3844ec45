"""Hand-rolled PTX tokenizer.

One master regular expression, tried at each position with ``match``; every alternative is a
simple character-class run or a fixed prefix, so matching is linear in the input and no input can
make it backtrack catastrophically. Comments and white space are dropped; every other piece of
text becomes a :class:`Token` that knows its 1-based line and column, which the parser needs for
precise error messages.

Token kinds:
  ``word``   identifiers, opcodes and directives, dots and ``::`` included: ``ld.global.nc.f32``,
             ``.reg``, ``%tid.x``, ``$L__BB0_3``, ``cp.async.bulk.shared::cluster``
  ``num``    numeric literals, kept as text (``0f3F800000``, ``0x1F``, ``12U``, ``9.0``)
  ``str``    a double-quoted string, quotes included
  ``punct``  one punctuation character
"""

from __future__ import annotations

import re
from typing import NamedTuple

from engine.errors import PtxSyntaxError

# A word may start with '.' (directive) or '%' (register); the body continues over dots and '::'
# so that a whole opcode with its modifiers is one token (``mbarrier::complete_tx::bytes``).
_MASTER = re.compile(
    r"""
    (?P<nl>\n)
  | (?P<ws>[ \t\r\f\v]+)
  | (?P<lc>//[^\n]*)
  | (?P<bc>/\*)
  | (?P<str>"(?:[^"\\\n]|\\[^\n])*")
  | (?P<num>\d+\.\d*(?:[eE][+-]?\d+)?|\d[\w$]*)
  | (?P<word>[.%]?[A-Za-z_$][\w$]*(?:(?:\.|::)[\w$]+)*)
  | (?P<punct>[,;:{}\[\]()<>+\-=@!|*/~&^?])
    """,
    re.VERBOSE,
)


class Token(NamedTuple):
    """One token; a named tuple because files have ~10^5 of them and tuples are cheapest."""

    kind: str
    text: str
    line: int
    column: int
    pos: int  # offset in the text; lets the parser slice the original source of a statement


def tokenize(text: str, filename: str = "<string>") -> list[Token]:
    """Split PTX source into tokens, or raise :class:`PtxSyntaxError` at the first bad character."""
    tokens: list[Token] = []
    append = tokens.append
    match = _MASTER.match
    pos = 0
    end = len(text)
    line = 1
    line_start = 0
    while pos < end:
        m = match(text, pos)
        if m is None:
            column = pos - line_start + 1
            if text[pos] == '"':
                raise PtxSyntaxError("unterminated string", filename, line, column,
                                     _line_text(text, line_start))
            raise PtxSyntaxError("unexpected character", filename, line, column, text[pos])
        kind = m.lastgroup
        stop = m.end()
        if kind == "nl":
            line += 1
            line_start = stop
        elif kind == "bc":
            close = text.find("*/", stop)
            if close < 0:
                raise PtxSyntaxError("unterminated /* comment", filename, line,
                                     pos - line_start + 1, "/*")
            stop = close + 2
            newlines = text.count("\n", pos, stop)
            if newlines:
                line += newlines
                line_start = text.rfind("\n", pos, stop) + 1
        elif kind not in ("ws", "lc"):
            append(Token(kind, m.group(), line, pos - line_start + 1, pos))  # type: ignore[arg-type]
        pos = stop
    return tokens


def _line_text(text: str, line_start: int) -> str:
    stop = text.find("\n", line_start)
    return text[line_start:] if stop < 0 else text[line_start:stop]
