"""Instruction statements: guard, opcode and modifiers, operands, and their registers."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.errors import PtxSyntaxError
from engine.ptx.declarations import DeclarationParser
from engine.ptx.lexer import Token
from engine.ptx.model import Function, Instruction, Operand
from engine.ptx.operands import decode_number, dests_and_srcs, is_special_register

# A ``.loc`` before its ``.file`` names are known: file index, line, column, inlined-at site.
LocTuple = tuple[int, int, int, "LocTuple | None"]

_MAX_NESTING = 32  # operand nesting bound, so that no input can exhaust the stack


@dataclass
class BodyState:
    """What the parser tracks while inside one function body."""

    function: Function
    register_names: set[str] = field(default_factory=set)
    register_ranges: list[tuple[str, int]] = field(default_factory=list)
    cuda_loc: LocTuple | None = None  # the last ``.loc``
    scope: tuple[int, ...] = ()  # ids of the open nested ``{ }`` scopes
    label_defs: list[tuple[Token, tuple[int, ...], int]] = field(default_factory=list)
    instruction_scopes: list[tuple[int, ...]] = field(default_factory=list)


class RegisterTest:
    """Is a name without ``%`` a declared register (``.reg .pred p;`` in inline asm)?"""

    def __init__(self, names: set[str], ranges: list[tuple[str, int]]) -> None:
        self.names = names
        self.ranges = ranges

    def __call__(self, name: str) -> bool:
        if name in self.names:
            return True
        for prefix, count in self.ranges:
            if name.startswith(prefix):
                digits = name[len(prefix):]
                if digits.isdigit() and int(digits) < count:
                    return True
        return False


class InstructionParser(DeclarationParser):
    """Grammar rules for one instruction statement inside a function body."""

    def __init__(self, text: str, filename: str) -> None:
        super().__init__(text, filename)
        # (instruction, file index, line, column) for every instruction after a ``.loc``;
        # resolved at the end because ``.file`` lines come after the function bodies.
        self.pending_locs: list[tuple[Instruction, LocTuple]] = []
        self.depth = 0  # operand nesting depth, checked against _MAX_NESTING
        self.is_register = RegisterTest(set(), [])  # replaced per function body
        self.branch = False  # inside a bra/brx: bare names are labels

    def instruction(self, state: BodyState, guard_tok: Token | None) -> None:
        function = state.function
        first = guard_tok or self.peek()
        assert first is not None
        guard: str | None = None
        negated = False
        if guard_tok is not None:
            if self.at("!"):
                self.i += 1
                negated = True
            pred = self.next("a guard predicate")
            if pred.kind != "word" or pred.text.startswith("."):
                raise self.error("expected a predicate after '@'", pred)
            guard = pred.text
        op_tok = self.next("an opcode")
        if op_tok.kind != "word" or op_tok.text.startswith((".", "%")):
            raise self.error("expected an opcode", op_tok)
        parts = op_tok.text.split(".")
        opcode, modifiers = parts[0], tuple(parts[1:])
        self.branch = opcode in ("bra", "brx")
        operands: list[Operand] = []
        nxt = self.peek()
        if nxt is not None and not (nxt.kind == "punct" and nxt.text == ";"):
            try:
                self.operand_list(operands, first)
            except PtxSyntaxError:
                # ``ret`` then a new line: the operand "list" is really the next statement, so
                # the fault is the ';' missing after the opcode, not whatever broke later.
                if nxt.line != op_tok.line:
                    raise self.missing_semicolon(op_tok, first) from None
                raise
        end = self.next("';'")
        dests, srcs = dests_and_srcs(opcode, modifiers, tuple(operands), guard)
        instr = Instruction(
            index=len(function.body or []), opcode=opcode, modifiers=modifiers,
            operands=tuple(operands), dests=dests, srcs=srcs,
            text=clean_statement(self.text[first.pos : end.pos + 1]),
            location=self.loc(first), guard=guard, guard_negated=negated,
        )
        if state.cuda_loc is not None:
            self.pending_locs.append((instr, state.cuda_loc))
        assert function.body is not None
        function.body.append(instr)
        state.instruction_scopes.append(state.scope)

    def operand_list(self, operands: list[Operand], first: Token) -> None:
        while True:
            operands.append(self.operand())
            tok = self.peek()
            if tok is None:
                raise self.error("statement has no terminating ';'", first)
            if tok.kind == "punct" and tok.text == ",":
                self.i += 1
                continue
            if tok.kind == "punct" and tok.text == ";":
                return
            prev = self.toks[self.i - 1]
            if tok.line != prev.line:
                raise self.missing_semicolon(prev, first)
            raise self.error("expected ',' or ';' between operands", tok)

    def missing_semicolon(self, prev: Token, first: Token) -> PtxSyntaxError:
        """The error for a statement that ends at ``prev`` without its ``;``."""
        return PtxSyntaxError("expected ';' at the end of the statement", self.file, prev.line,
                              prev.column + len(prev.text),
                              " ".join(self.text[first.pos : prev.pos + len(prev.text)].split()))

    def operand(self) -> Operand:
        tok = self.next("an operand")
        self.depth += 1
        try:
            if self.depth > _MAX_NESTING:
                raise self.error("operands nested too deeply", tok)
            return self.operand_from(tok)
        finally:
            self.depth -= 1

    def operand_from(self, tok: Token) -> Operand:
        if tok.kind == "punct":
            if tok.text == "{":
                elements = self.element_list(tok, "}")
                return Operand("vector", self.source(tok), elements=elements)
            if tok.text == "(":
                elements = self.element_list(tok, ")")
                return Operand("list", self.source(tok), elements=elements)
            if tok.text == "[":
                return self.address(tok)
            if tok.text == "!":
                pred = self.next("a predicate")
                if pred.kind != "word":
                    raise self.error("expected a predicate after '!'", pred)
                return Operand("predicate", self.source(tok), name=pred.text, negated=True)
            if tok.text in ("-", "+") and self.peek() is not None and self.peek().kind == "num":  # type: ignore[union-attr]
                num = self.next("a number")
                value = self.number(num)
                return Operand("immediate", self.source(tok), value=-value if tok.text == "-" else value)
            raise self.error("unexpected punctuation in an operand", tok)
        atom = self.atom(tok)
        if self.at("|"):
            self.i += 1
            second = self.next("a register after '|'")
            if second.kind != "word":
                raise self.error("expected a register after '|'", second)
            return Operand("pair", self.source(tok), elements=(atom, self.atom(second)))
        return atom

    def source(self, first: Token) -> str:
        last = self.toks[self.i - 1]
        # Collapse white space: ``call`` lists span lines and ``[ %rd1 + 0 ]`` pads its brackets.
        return " ".join(self.text[first.pos : last.pos + len(last.text)].split())

    def number(self, tok: Token) -> int | float:
        value = decode_number(tok.text)
        if value is None:
            raise self.error("malformed number", tok)
        return value

    def atom(self, tok: Token) -> Operand:
        text = tok.text
        if tok.kind == "num":
            return Operand("immediate", text, value=self.number(tok))
        if tok.kind == "str":
            return Operand("other", text)
        if text == "_":
            return Operand("placeholder", text)
        if text.startswith("%"):
            if is_special_register(text) and text not in self.is_register.names:
                return Operand("special", text, name=text)
            return Operand("register", text, name=text)
        if self.is_register(text):
            return Operand("register", text, name=text)
        if text.startswith("."):
            return Operand("other", text)
        return Operand("label" if self.branch else "symbol", text, name=text)

    def element_list(self, open_tok: Token, closer: str) -> tuple[Operand, ...]:
        elements: list[Operand] = []
        if self.at(closer):
            self.i += 1
            return ()
        while True:
            tok = self.peek()
            stray = tok is not None and tok.kind == "punct" and tok.text in (";", "}", ")", "]")
            if tok is None or (stray and tok.text != closer):
                raise self.error(f"unclosed {open_tok.text!r}", open_tok)
            elements.append(self.operand())
            tok = self.peek()
            if tok is not None and tok.kind == "punct" and tok.text == closer:
                self.i += 1
                return tuple(elements)
            if tok is not None and tok.kind == "punct" and tok.text == ",":
                self.i += 1
                continue
            raise self.error(f"unclosed {open_tok.text!r}", open_tok)

    def address(self, open_tok: Token) -> Operand:
        """``[%rd1+-12]``, ``[ %rd1 + 0 ]``, ``[name+4]``, ``[tex, {%f1, %f2}]``."""
        if self.at("]"):
            raise self.error("empty address", open_tok)
        base = self.operand()
        offset = 0
        others: list[Operand] = []
        while True:
            tok = self.peek()
            if tok is None or (tok.kind == "punct" and tok.text in (";", "}", ")")):
                raise self.error("unclosed '['", open_tok)
            if tok.kind != "punct":
                raise self.error("expected ']' or '+' in an address", tok)
            self.i += 1
            if tok.text == "]":
                break
            if tok.text in ("+", "-"):
                sign = -1 if tok.text == "-" else 1
                term = self.operand()
                if term.kind == "immediate" and isinstance(term.value, int):
                    offset += sign * term.value
                else:
                    others.append(term)  # ``[a+%r1]`` is not PTX, but keep its registers
                continue
            if tok.text == ",":
                others.append(self.operand())
                continue
            raise self.error("unexpected punctuation in an address", tok)
        return Operand("address", self.source(open_tok), base=base, offset=offset,
                       elements=tuple(others))


_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


def clean_statement(statement: str) -> str:
    """One-line text of a statement: comments dropped, white space collapsed."""
    if "/" in statement:
        statement = _COMMENT.sub(" ", statement)
    return " ".join(statement.split())

