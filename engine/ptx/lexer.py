"""Hand-rolled PTX tokenizer.

One master regular expression, tried at each position with ``match``; every alternative is a
simple character-class run or a fixed prefix, so matching is linear in the input and no input can
make it backtrack catastrophically. Comments and white space are dropped; every other piece of
text becomes a :class:`Token` that knows its 1-based line and column, which the parser needs for
precise error messages.

:class:`Lexer` produces the tokens one at a time, on demand, so that the parser never holds the
token list of a whole file (a 10^6-instruction kernel has ~10^7 tokens); :func:`tokenize` lists
them all, for tests and small inputs.

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
# White space runs include newlines: one match per run, the line count comes from counting them.
_MASTER = re.compile(
    r"""
    (?P<ws>[ \t\r\f\v\n]+)
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


class Lexer:
    """Tokens of ``text`` from a position on, one per :meth:`lex` call.

    ``pos``, ``line`` and ``line_start`` (the offset where the current line begins) are public:
    the parser's fast paths read statements straight from the text and move them forward, and
    :meth:`reset` moves them back to a token that was lexed but not consumed."""

    def __init__(self, text: str, filename: str = "<string>") -> None:
        self.text = text
        self.file = filename
        self.pos = 0
        self.end = len(text)
        self.line = 1
        self.line_start = 0
        self.last_text = ""  # text of the last token produced (end-of-file messages show it)

    def reset(self, tok: Token) -> None:
        """Continue lexing at ``tok`` (a token this lexer produced)."""
        self.pos = tok.pos
        self.line = tok.line
        self.line_start = tok.pos - tok.column + 1

    def lex(self) -> Token | None:
        """The next token, None at the end of the text; PtxSyntaxError at a bad character."""
        text = self.text
        match = _MASTER.match
        pos = self.pos
        end = self.end
        while pos < end:
            m = match(text, pos)
            if m is None:
                column = pos - self.line_start + 1
                self.pos = pos
                if text[pos] == '"':
                    raise PtxSyntaxError("unterminated string", self.file, self.line, column,
                                         _line_text(text, self.line_start))
                raise PtxSyntaxError("unexpected character", self.file, self.line, column, text[pos])
            kind = m.lastgroup
            stop = m.end()
            if kind == "ws":
                newlines = text.count("\n", pos, stop)
                if newlines:
                    self.line += newlines
                    self.line_start = text.rfind("\n", pos, stop) + 1
            elif kind == "bc":
                close = text.find("*/", stop)
                if close < 0:
                    self.pos = pos
                    raise PtxSyntaxError("unterminated /* comment", self.file, self.line,
                                         pos - self.line_start + 1, "/*")
                stop = close + 2
                newlines = text.count("\n", pos, stop)
                if newlines:
                    self.line += newlines
                    self.line_start = text.rfind("\n", pos, stop) + 1
            elif kind != "lc":
                self.pos = stop
                word = m.group()
                self.last_text = word
                return Token(kind, word, self.line, pos - self.line_start + 1, pos)  # type: ignore[arg-type]
            pos = stop
        self.pos = pos
        return None


def tokenize(text: str, filename: str = "<string>") -> list[Token]:
    """Split PTX source into tokens, or raise :class:`PtxSyntaxError` at the first bad character."""
    lexer = Lexer(text, filename)
    tokens: list[Token] = []
    append = tokens.append
    while (tok := lexer.lex()) is not None:
        append(tok)
    return tokens


def _line_text(text: str, line_start: int) -> str:
    stop = text.find("\n", line_start)
    return text[line_start:] if stop < 0 else text[line_start:stop]
