"""Token cursor shared by the PTX parser's parts: look-ahead, expectations, errors, skipping.

Tokens are lexed on demand (:class:`engine.ptx.lexer.Lexer`) into a short buffer ``toks``;
``i`` indexes it. :meth:`TokenCursor.sync` drops what was consumed and un-lexes look-ahead at a
statement boundary, so that the buffer never grows with the file and the parser's fast paths can
read the next statement straight from the text at ``lexer.pos``.
"""

from __future__ import annotations

from engine.errors import PtxSyntaxError
from engine.ptx.lexer import Lexer, Token
from engine.ptx.operands import decode_number
from engine.ptx.parsed_module import SourceLocation

CLOSERS = {"{": "}", "[": "]", "(": ")"}


class TokenCursor:
    """A position in the token list of one file, with the helpers every grammar rule needs."""

    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.file = filename
        self.lexer = Lexer(text, filename)
        self.toks: list[Token] = []
        self.i = 0

    def sync(self) -> None:
        """At a statement boundary: forget consumed tokens, un-lex the look-ahead."""
        toks = self.toks
        if self.i < len(toks):
            self.lexer.reset(toks[self.i])
        toks.clear()
        self.i = 0

    def error(self, message: str, tok: Token | None = None, text: str | None = None) -> PtxSyntaxError:
        if tok is None:
            last = self.lexer.last_text
            if last:
                line = self.text.count("\n") + 1
                column = len(self.text) - (self.text.rfind("\n") + 1) + 1
                return PtxSyntaxError(message, self.file, line, column, text or last)
            return PtxSyntaxError(message, self.file, 1, 1, text or "")
        return PtxSyntaxError(message, self.file, tok.line, tok.column, tok.text if text is None else text)

    def peek(self, ahead: int = 0) -> Token | None:
        toks = self.toks
        j = self.i + ahead
        if j < len(toks):
            return toks[j]
        if self.i > 4096:  # a long statement (an initializer): keep two tokens of context
            del toks[: self.i - 2]
            j -= self.i - 2
            self.i = 2
        lex = self.lexer.lex
        while j >= len(toks):
            tok = lex()
            if tok is None:
                return None
            toks.append(tok)
        return toks[j]

    def next(self, what: str) -> Token:
        tok = self.peek()
        if tok is None:
            raise self.error(f"unexpected end of file, expected {what}")
        self.i += 1
        return tok

    def at(self, text: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.text == text and tok.kind == "punct"

    def expect(self, text: str, context: str = "") -> Token:
        tok = self.peek()
        if tok is None:
            raise self.error(f"unexpected end of file, expected {text!r}{context}")
        if tok.text != text or tok.kind != "punct":
            raise self.error(f"expected {text!r}{context}", tok)
        self.i += 1
        return tok

    def expect_int(self, what: str) -> int:
        tok = self.next(what)
        value = decode_number(tok.text) if tok.kind == "num" else None
        if not isinstance(value, int):
            raise self.error(f"expected {what}", tok)
        return value

    def unterminated(self, tok: Token, message: str) -> PtxSyntaxError:
        """The error for ``tok`` found where a ``;`` belongs (``tok`` was just consumed).

        When ``tok`` starts a new line the statement before it simply lacks its ``;``: point
        just past that statement's last token rather than at the next statement.
        """
        prev = self.toks[self.i - 2] if self.i >= 2 else None
        if prev is not None and prev.line != tok.line:
            return PtxSyntaxError("expected ';' at the end of the statement", self.file, prev.line,
                                  prev.column + len(prev.text), prev.text)
        return self.error(message, tok)

    def loc(self, tok: Token) -> SourceLocation:
        return SourceLocation(self.file, tok.line, tok.column)

    def skip_statement(self, start: Token) -> None:
        """Skip to the ``;`` that ends the statement begun at ``start``, balancing brackets."""
        stack: list[Token] = []
        while True:
            tok = self.peek()
            if tok is None:
                raise self.error("statement has no terminating ';'", start)
            self.i += 1
            if tok.kind != "punct":
                continue
            if tok.text == ";" and not stack:
                return
            self.track_brackets(tok, stack)

    def track_brackets(self, tok: Token, stack: list[Token]) -> None:
        """Push an opener, pop the closer that matches it; any other closer is malformed PTX."""
        if tok.text in CLOSERS:
            stack.append(tok)
        elif tok.text in ("}", "]", ")"):
            if not stack or CLOSERS[stack[-1].text] != tok.text:
                raise self.error(f"unbalanced {tok.text!r}", tok)
            stack.pop()

    def skip_group(self, open_tok: Token) -> None:
        """Skip from just after ``open_tok`` (``{`` or ``(``) to its matching closer."""
        stack = [open_tok]
        while stack:
            tok = self.peek()
            if tok is None:
                raise self.error(f"unclosed {stack[-1].text!r}", stack[-1])
            self.i += 1
            if tok.kind != "punct":
                continue
            if tok.text in CLOSERS:
                stack.append(tok)
            elif tok.text in ("}", "]", ")"):
                if CLOSERS[stack[-1].text] != tok.text:
                    raise self.error(f"unbalanced {tok.text!r}", tok)
                stack.pop()

    def line_args(self, directive: Token) -> list[Token]:
        """The arguments of a line directive: its remaining tokens on the same line."""
        args: list[Token] = []
        while True:
            tok = self.peek()
            if tok is None or tok.line != directive.line:
                break
            if tok.kind == "punct" and tok.text == ";":
                self.i += 1
                break
            if tok.kind == "word" and tok.text.startswith(".") and args and args[-1].text != ",":
                break  # the next statement starts on the same line
            if tok.kind == "punct" and tok.text in "{}":
                break
            args.append(tok)
            self.i += 1
        return args

