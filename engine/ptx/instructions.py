"""Instruction statements: guard, opcode and modifiers, operands, and their registers.

Two paths read an instruction. The general one works on tokens and accepts every form the
grammar allows. The fast one (:data:`INSTRUCTION_PATTERN`, driven by the body loop of
:mod:`engine.ptx.parser`, and :meth:`InstructionParser.new_statement`) matches a whole
one-line statement of the common shapes (``@!%p1 bra $L__BB0_3;``, ``ld.global.v2.f32 {%f1, %f2},
[%rd4+-8];``, ``mad.lo.s32 %r5, %r6, 7, %r5;``) with one regular expression and builds the same
objects from text, sharing equal operands between instructions; anything else (comments inside
a statement, several lines, call lists, strings, malformed numbers) goes to the general path, so
both paths give identical results and identical errors. Every quantifier of the fast patterns is
atomic or bounded by a delimiter, so they cannot backtrack badly either.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass, field
from functools import lru_cache

from engine.errors import PtxSyntaxError
from engine.ptx.declarations import DeclarationParser
from engine.ptx.lexer import Token
from engine.ptx.operands import (
    SPECIAL_BASES,
    decode_number,
    dests_and_srcs,
    is_special_register,
    plain_rule,
    split_registers,
)
from engine.ptx.parsed_module import Function, Instruction, Operand, OperandKind, named_operand

# A ``.loc`` before its ``.file`` names are known: file index, line, column, inlined-at site.
LocTuple = tuple[int, int, int, "LocTuple | None"]

# The members bound once for the per-operand paths: on Python 3.11 a lookup on an Enum class goes
# through EnumType.__getattr__'s slow path (~0.4 us), a module global takes ~0.02 us (10^6
# operands: bench/bench_frontend.py's straight-1M).
(_REGISTER, _SPECIAL, _PREDICATE, _IMMEDIATE, _SYMBOL, _LABEL, _ADDRESS, _VECTOR, _PLACEHOLDER, _PAIR, _OTHER) = (
    OperandKind.REGISTER, OperandKind.SPECIAL, OperandKind.PREDICATE, OperandKind.IMMEDIATE, OperandKind.SYMBOL,
    OperandKind.LABEL, OperandKind.ADDRESS, OperandKind.VECTOR, OperandKind.PLACEHOLDER, OperandKind.PAIR,
    OperandKind.OTHER)
_MAX_NESTING = 32  # operand nesting bound, so that no input can exhaust the stack
CACHE_LIMIT = 1 << 16  # entries per fast-path cache before it is emptied (bounds its memory)

# ------------------------------------------------------------------ fast-path patterns
# Each piece mirrors one lexer token (atomic groups: no backtracking into a token) and must be
# followed by a delimiter, so the fast path splits text exactly where the lexer would.
_W = r"[A-Za-z_$][\w$]*"
_WORD = rf"(?>%?{_W}(?:\.[\w$]+)*)"                     # a register, symbol or label
_LWORD = rf"(?>{_W}(?:(?:\.|::)[\w$]+)*)"               # an opcode with its modifiers
_GWORD = rf"(?>%?{_W}(?:(?:\.|::)[\w$]+)*)"             # a guard predicate, a label name
_NUM = r"(?>\d+\.\d*(?:[eE][+-]?\d+)?|\d[\w$]*)"
_ATOM = rf"(?:{_WORD}|{_NUM})"
_ADDR = rf"\[[ \t]*{_WORD}[ \t]*(?:(?:\+[ \t]*-?|-)[ \t]*{_NUM}[ \t]*)?\]"
_VEC = rf"\{{[ \t]*{_ATOM}(?:[ \t]*,[ \t]*{_ATOM})*[ \t]*\}}"
# Alternatives in order of their first character; a word is one match whether or not a '|'
# pair follows, so no operand is matched twice.
_OPND = rf"(?:{_WORD}(?:[ \t]*\|[ \t]*{_WORD})?|{_ADDR}|{_NUM}|{_VEC}|![ \t]*{_WORD}|[-+][ \t]*{_NUM})"
INSTRUCTION_PATTERN = (
    rf"(?:@[ \t]*(?P<neg>!)?[ \t]*(?P<guard>{_GWORD})[ \t]+)?(?P<op>{_LWORD})"
    rf"(?:[ \t]*;|[ \t]+(?P<ops>{_OPND}(?:[ \t]*,[ \t]*{_OPND})*)[ \t]*;)"
)
_OPERAND = re.compile(_OPND)
# A %name that word() makes a register without a second look: no dot, no pair, no special
# register (those of a numbered family are all left to word(), whatever their number).
# (SPECIAL_BASES is checked beside it.)
PLAIN_REGISTER = re.compile(r"%(?!envreg|pm|reserved_smem_offset_)[A-Za-z_$][\w$]*+").fullmatch
_ADDRESS_PARTS = re.compile(rf"\[[ \t]*({_WORD})[ \t]*(?:(\+[ \t]*-?|-)[ \t]*({_NUM})[ \t]*)?\]")


@lru_cache(maxsize=4096)
def split_opcode(word: str) -> tuple[str, tuple[str, ...], bool]:
    """``ld.global.f32`` -> ``("ld", ("global", "f32"), plain)``; ``plain`` when the
    destination/source rule reduces to "operand 0 is written, the rest read" (see
    :func:`engine.ptx.operands.split_registers`)."""
    parts = word.split(".")
    opcode, modifiers = parts[0], tuple(parts[1:])
    return opcode, modifiers, opcode != "call" and plain_rule(opcode, modifiers)


class Fallback(Exception):
    """The fast path declines a statement; the general path reads it (and reports any error)."""


@dataclass
class BodyState:
    """What the parser tracks while inside one function body.

    Nested ``{ }`` scopes are numbered in the order they open (0 is the body itself); the
    tree is kept as flat lists (parent, depth, last descendant), so that nesting depth costs
    nothing per instruction and no walk over it recurses."""

    function: Function
    register_names: set[str] = field(default_factory=set)
    register_ranges: list[tuple[str, int]] = field(default_factory=list)
    cuda_loc: LocTuple | None = None  # the last ``.loc``
    scope: int = 0  # id of the innermost open scope
    scope_parent: list[int] = field(default_factory=lambda: [-1])
    scope_depth: list[int] = field(default_factory=lambda: [0])
    scope_last: list[int] = field(default_factory=lambda: [0])  # last scope id opened inside
    # (name, scope, instruction index, line, column, offset) of every label definition
    label_defs: list[tuple[str, int, int, int, int, int]] = field(default_factory=list)
    instruction_scopes: array = field(default_factory=lambda: array("l"))

    def open_scope(self) -> None:
        new = len(self.scope_parent)
        self.scope_parent.append(self.scope)
        self.scope_depth.append(self.scope_depth[self.scope] + 1)
        self.scope_last.append(new)
        self.scope = new

    def close_scope(self) -> None:
        self.scope_last[self.scope] = len(self.scope_parent) - 1
        self.scope = self.scope_parent[self.scope]


class RegisterTest:
    """Is a name without ``%`` a declared register (``.reg .pred p;`` in inline asm)?

    ``ranges`` grows as ``.reg .b32 t<4>;`` lines are read; it is indexed by prefix (the
    largest count wins) and prefix length, so a test costs one look-up per distinct prefix
    length, not one per declaration or per character."""

    def __init__(self, names: set[str], ranges: list[tuple[str, int]]) -> None:
        self.names = names
        self.ranges = ranges
        self._indexed = 0
        self._by_prefix: dict[str, int] = {}
        self._lengths: set[int] = set()

    def __call__(self, name: str) -> bool:
        if name in self.names:
            return True
        if not self.ranges:
            return False
        by_prefix = self._by_prefix
        if self._indexed < len(self.ranges):
            for prefix, count in self.ranges[self._indexed:]:
                by_prefix[prefix] = max(count, by_prefix.get(prefix, 0))
                self._lengths.add(len(prefix))
            self._indexed = len(self.ranges)
        stem = len(name.rstrip("0123456789"))  # where the trailing digits start
        for length in self._lengths:
            if stem <= length < len(name):
                count = by_prefix.get(name[:length])
                digits = name[length:]
                # (more than 18 digits exceed any count, and int() would refuse 4,300)
                if count is not None and len(digits) <= 18 and int(digits) < count:
                    return True
        return False


class InstructionParser(DeclarationParser):
    """Grammar rules for one instruction statement inside a function body."""

    def __init__(self, text: str, filename: str) -> None:
        super().__init__(text, filename)
        self.depth = 0  # operand nesting depth, checked against _MAX_NESTING
        self.is_register = RegisterTest(set(), [])  # replaced per function body
        self.branch = False  # inside a bra/brx: bare names are labels
        # Fast-path memory: operand text -> Operand (one dict for branches, where bare names are
        # labels, one for the rest), operand text -> its registers (the same in both: a label
        # and a symbol hold none), and statement text -> everything but its position. Operands
        # and registers live in separate dicts so that a statement whose operands are all known
        # is looked up with ``map`` alone, without a Python call per operand (a kernel where
        # every statement is new spends its time there). All depend on which names are
        # registers, so :meth:`forget_operands` empties them when that changes.
        self.operand_cache: tuple[dict[str, Operand], dict[str, Operand]] = ({}, {})
        self.register_cache: dict[str, tuple[str, ...]] = {}
        self.statement_cache: dict[str, tuple] = {}
        self.line_cache: dict[str, tuple[int, tuple]] = {}  # a whole line -> (column, statement)

    def forget_operands(self) -> None:
        self.operand_cache[0].clear()
        self.operand_cache[1].clear()
        self.register_cache.clear()
        self.statement_cache.clear()
        self.line_cache.clear()

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
        body = function.body
        assert body is not None
        body.append(Instruction(
            index=len(body), opcode=opcode, modifiers=modifiers,
            operands=tuple(operands), dests=dests, srcs=srcs,
            text=clean_statement(self.text[first.pos : end.pos + 1]),
            location=self.loc(first), guard=guard, guard_negated=negated,
            cuda_location=state.cuda_loc,  # type: ignore[arg-type]  # resolved after parsing
        ))
        state.instruction_scopes.append(state.scope)

    # ------------------------------------------------------------------ fast path
    def new_statement(self, m: re.Match[str], statement: str) -> tuple:
        """Everything but the position of the instruction ``statement`` that
        :data:`INSTRUCTION_PATTERN` matched in ``m``, kept for its next occurrence (Fallback:
        the token path must read it)."""
        negated, guard, op_text, ops = m.group("neg", "guard", "op", "ops")
        hit = self.build_statement(negated is not None, guard, op_text, ops,
                                   " ".join(statement.split()), operand_separator(ops))
        cache = self.statement_cache
        if len(cache) >= CACHE_LIMIT:
            cache.clear()
        cache[statement] = hit
        return hit

    def build_statement(self, negated: bool, guard: str | None, op_text: str, ops: str | None,
                        text: str, separator: str | None) -> tuple:
        """The instruction tuple (opcode, modifiers, operands, dests, srcs, text, guard,
        negated) from the groups of :data:`INSTRUCTION_PATTERN`, the statement's one-line
        ``text`` and the ``separator`` of its operands (Fallback: the token path must read it).

        In a kernel whose registers are all fresh every statement comes here, so the common
        case makes few calls: the operands are looked up with ``map``, and only a miss
        (typically the new destination register) costs a Python call."""
        opcode, modifiers, plain = split_opcode(op_text)
        branch = self.branch = opcode in ("bra", "brx")
        if not ops:
            dests, srcs = split_registers(opcode, modifiers, None, [], guard)
            return opcode, modifiers, (), dests, srcs, text, guard, negated
        parts = ops.split(separator) if separator else _OPERAND.findall(ops)
        known = self.operand_cache[branch]
        operands = tuple(map(known.get, parts))
        if all(operands):  # (an Operand is always true: only a miss is None)
            registers = list(map(self.register_cache.__getitem__, parts))
        else:
            operands, registers = self.new_operands(known, parts, operands)
        first = operands[0].kind
        if plain and first == _REGISTER:
            # The common case of the rule in engine.ptx.operands: operand 0 is the
            # destination, every register of the others (and the guard) a source.
            dests = registers[0]
            if guard:
                registers[0] = (guard,)
            else:
                del registers[0]
            srcs = sum(registers, ())
            if len(srcs) > 1:
                srcs = tuple(dict.fromkeys(srcs))
        else:
            dests, srcs = split_registers(opcode, modifiers, first, registers, guard)
        return opcode, modifiers, operands, dests, srcs, text, guard, negated

    def new_operands(self, known: dict[str, Operand], parts: list[str],
                     found: tuple[Operand | None, ...]
                     ) -> tuple[tuple[Operand, ...], list[tuple[str, ...]]]:
        """The operands of ``parts`` and their registers, given those ``found`` (None for a
        miss); the misses are remembered under both spellings (as written and without the
        white space around them)."""
        registers_of = self.register_cache
        if len(registers_of) >= CACHE_LIMIT:  # bound the memory: forget and start over
            self.operand_cache[0].clear()
            self.operand_cache[1].clear()
            registers_of.clear()
            found = (None,) * len(parts)
        elif (found[0] is None and all(found[1:]) and PLAIN_REGISTER(parts[0])
              and parts[0] not in SPECIAL_BASES):
            # The usual miss: a new destination register, nothing else.
            part = parts[0]
            operand = known[part] = named_operand(_REGISTER, part)
            held = registers_of[part] = (part,)
            return (operand, *found[1:]), [held, *map(registers_of.__getitem__, parts[1:])]
        operands = []
        registers = []
        for operand, part in zip(found, parts, strict=True):
            if operand is not None:
                held = registers_of[part]
            elif PLAIN_REGISTER(part) and part not in SPECIAL_BASES:
                operand = known[part] = named_operand(_REGISTER, part)
                held = registers_of[part] = (part,)
            else:
                text = part.strip()
                operand = known.get(text)
                if operand is not None:
                    held = registers_of[text]
                elif text[0] == "%" and "|" not in text:
                    operand = self.word(text)
                    held = (text,) if operand.kind == _REGISTER else ()
                else:
                    operand = self.fast_operand(text)
                    held = operand.registers()
                known[part] = known[text] = operand
                registers_of[part] = registers_of[text] = held
            operands.append(operand)
            registers.append(held)
        return tuple(operands), registers

    def fast_operand(self, text: str) -> Operand:
        """One operand that :data:`_OPND` matched, built as :meth:`operand` builds it."""
        c = text[0]
        if c == "[":
            m = _ADDRESS_PARTS.match(text)
            assert m is not None
            base_text, sign, number = m.groups()
            offset = 0
            if number is not None:
                value = decode_number(number)
                if not isinstance(value, int):
                    raise Fallback  # a float offset or a malformed number
                offset = -value if "-" in sign else value
            return Operand(_ADDRESS, " ".join(text.split()), base=self.atom_text(base_text),
                           offset=offset)
        if c == "{":
            elements = tuple(self.atom_text(e.strip()) for e in text[1:-1].split(","))
            return Operand(_VECTOR, " ".join(text.split()), elements=elements)
        if c == "!":
            return Operand(_PREDICATE, " ".join(text.split()), name=text[1:].strip(), negated=True)
        if c in "-+":
            value = decode_number(text[1:].strip())
            if value is None:
                raise Fallback
            return Operand(_IMMEDIATE, " ".join(text.split()), value=-value if c == "-" else value)
        if "|" in text:
            first, second = text.split("|")
            return Operand(_PAIR, " ".join(text.split()),
                           elements=(self.atom_text(first.strip()), self.atom_text(second.strip())))
        return self.atom_text(text)

    def atom_text(self, text: str) -> Operand:
        """A number or a word token's operand (shared by both paths)."""
        if text[0].isdigit():
            value = decode_number(text)
            if value is None:
                raise Fallback
            return Operand(_IMMEDIATE, text, value=value)
        return self.word(text)

    def word(self, text: str) -> Operand:
        if text == "_":
            return Operand(_PLACEHOLDER, text)
        if text.startswith("%"):
            if is_special_register(text) and text not in self.is_register.names:
                return named_operand(_SPECIAL, text)
            return named_operand(_REGISTER, text)
        if self.is_register(text):
            return Operand(_REGISTER, text, name=text)
        if text.startswith("."):
            return Operand(_OTHER, text)
        return Operand(_LABEL if self.branch else _SYMBOL, text, name=text)

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
                return Operand(OperandKind.VECTOR, self.source(tok), elements=elements)
            if tok.text == "(":
                elements = self.element_list(tok, ")")
                return Operand(OperandKind.LIST, self.source(tok), elements=elements)
            if tok.text == "[":
                return self.address(tok)
            if tok.text == "!":
                pred = self.next("a predicate")
                if pred.kind != "word":
                    raise self.error("expected a predicate after '!'", pred)
                return Operand(OperandKind.PREDICATE, self.source(tok), name=pred.text, negated=True)
            if tok.text in ("-", "+") and self.peek() is not None and self.peek().kind == "num":  # type: ignore[union-attr]
                num = self.next("a number")
                value = self.number(num)
                return Operand(OperandKind.IMMEDIATE, self.source(tok), value=-value if tok.text == "-" else value)
            raise self.error("unexpected punctuation in an operand", tok)
        atom = self.atom(tok)
        if self.at("|"):
            self.i += 1
            second = self.next("a register after '|'")
            if second.kind != "word":
                raise self.error("expected a register after '|'", second)
            return Operand(OperandKind.PAIR, self.source(tok), elements=(atom, self.atom(second)))
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
        if tok.kind == "num":
            return Operand(OperandKind.IMMEDIATE, tok.text, value=self.number(tok))
        if tok.kind == "str":
            return Operand(OperandKind.OTHER, tok.text)
        return self.word(tok.text)

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
                if term.kind == OperandKind.IMMEDIATE and isinstance(term.value, int):
                    offset += sign * term.value
                else:
                    others.append(term)  # ``[a+%r1]`` is not PTX, but keep its registers
                continue
            if tok.text == ",":
                others.append(self.operand())
                continue
            raise self.error("unexpected punctuation in an address", tok)
        return Operand(OperandKind.ADDRESS, self.source(open_tok), base=base, offset=offset,
                       elements=tuple(others))


def operand_separator(ops: str | None) -> str | None:
    """How :meth:`InstructionParser.build_statement` splits the operand text ``ops``: at
    ``", "`` (the usual spelling: the parts come bare), at ``","`` (parts with white space,
    which the operand look-up strips), or None (a vector's commas: ``findall``)."""
    if not ops or "{" in ops:
        return None
    return ", " if ops.count(",") == ops.count(", ") else ","


_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


def clean_statement(statement: str) -> str:
    """One-line text of a statement: comments dropped, white space collapsed."""
    if "/" in statement:
        statement = _COMMENT.sub(" ", statement)
    return " ".join(statement.split())

