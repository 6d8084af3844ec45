"""Recursive-descent PTX parser over the tokens of :mod:`engine.ptx.lexer`.

The parser is deliberately lenient about *content* (unknown opcodes, modifiers and directives are
kept or skipped, never rejected, because every new PTX ISA adds some) and strict about *structure*
(balanced braces/brackets/parentheses, ``;`` where a statement needs one, instructions only inside
function bodies), because structural damage means the file is not PTX and any model built from it
would be wrong. Structural errors raise :class:`PtxSyntaxError` at the token at fault.

Directives that end at the end of their line instead of at ``;`` (``.version``, ``.target``,
``.address_size``, ``.file``, ``.loc``) are read up to the last token on their line; a ``;`` after
them is accepted too, as old compilers wrote one.

The grammar is layered by inheritance, one concern per module: :mod:`engine.ptx.cursor` (token
look-ahead, errors, skipping), :mod:`engine.ptx.declarations` (variables, parameters, ``.reg``),
:mod:`engine.ptx.instructions` (statements and operands), and this module (directives, functions,
bodies, labels).

Inside function bodies a fast path reads the common statements (one-line instructions, labels,
plain ``.loc``, braces) straight from the text, one regular-expression match each; a line that
holds one instruction or ``.loc`` is read without matching when a line of the same shape (the
same text but for its digits) was matched before (:meth:`_Parser.learn_line`). Anything else
goes through the tokens, and all give identical modules and errors (tests/test_frontend_linear.py
checks it on real compiler output, on mutations and on lines of one shape with other digits).
Nested ``{ }`` scopes are numbered, not copied, and scope-local labels are resolved in one sweep,
so time and memory stay linear in the input at any nesting depth.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import replace

from engine.errors import PtxSyntaxError
from engine.ptx.declarations import LINKAGES, STATE_SPACES, base_space
from engine.ptx.gc_pause import paused_gc
from engine.ptx.instructions import (
    CACHE_LIMIT,
    INSTRUCTION_PATTERN,
    PLAIN_REGISTER,
    BodyState,
    Fallback,
    InstructionParser,
    LocTuple,
    RegisterTest,
    operand_separator,
    split_opcode,
)
from engine.ptx.lexer import Token
from engine.ptx.operands import SPECIAL_BASES, decode_number, is_special_register, split_registers
from engine.ptx.parsed_module import (
    LOCATION_SETTERS,
    CudaLocation,
    Function,
    FunctionKind,
    Instruction,
    Module,
    OperandKind,
    Param,
    SourceLocation,
    named_operand,
    source_location,
)

# (as in engine.ptx.instructions)
_REGISTER = OperandKind.REGISTER
_LINE_DIRECTIVES = frozenset({".version", ".target", ".address_size", ".file", ".loc"})
_DECLARATION_STARTS = frozenset(
    ".version .target .address_size .file .section .entry .func .visible .extern .weak .weak_odr "
    ".common .global .shared .const .local .tex .pragma .alias".split()
)
_BODY_SPACES = frozenset({"shared", "local", "const", "global"})
_ESCAPE = re.compile(r"\\(.)")
# The fast path of a function body (see engine.ptx.instructions) matches one whole statement,
# after white space and line comments: an instruction, a plain ``.loc file line [column]``, a
# label not followed by a prototype/target table, or one of ``{ } ;``.
_WHITE = r"(?:[ \t\r\f\v\n]+|//[^\n]*)*+"
_STATEMENT = re.compile(
    _WHITE + r"(?:(?P<i>" + INSTRUCTION_PATTERN + r")"
    r"|(?P<loc>\.loc[ \t]+(?P<f>\d+)[ \t]+(?P<l>\d+)(?:[ \t]+(?P<c>\d+))?"
    r"(?:[ \t]*;|(?=[ \t\r]*(?:\n|//|\Z))))"
    r"|(?P<label>(?>%?[A-Za-z_$][\w$]*(?:(?:\.|::)[\w$]+)*))[ \t]*:(?!:)"
    r"(?!" + _WHITE + r"(?:/\*|\.(?:callprototype|branchtargets|calltargets)))"
    r"|(?P<p>[{};]))?"
)
FAST_PATHS = True  # tests turn this off to check that both paths agree
# A learnt line shape records the spans of these groups of _STATEMENT (see learn_line).
_SHAPE_GROUPS = {"i": ("i", "guard", "op", "ops"), "loc": ("loc", "f", "l", "c")}
_LOC, _INSTRUCTION, _PLAIN = 0, 1, 2  # the kinds of line shape
_BRANCHES = ("bra", "brx")  # their bare-name operands are labels
_ZERO_DIGITS = str.maketrans("123456789", "000000000")
_SPECIAL_SHAPES = frozenset(name.translate(_ZERO_DIGITS) for name in SPECIAL_BASES)
# Line shapes are bytes: bytes.translate is a table look-up per byte, str.translate a dict
# look-up per character. (In UTF-8, bytes 0x30-0x39 are always ASCII digits.)
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
_SHAPE_LIMIT = 1 << 12  # line shapes per parser before they are forgotten (bounds their memory)
_LINE_LIMIT = 1 << 16  # whole lines remembered, likewise
# A parse with a progress callback calls it every this many lines (about 0.1 ms of a parse's
# 7 us a line apart: a check of one integer per line, nothing measurable without a callback).
PROGRESS_LINES = 1 << 13
Progress = Callable[[int, int], None]   # (characters read, characters in all); may raise to stop
_ROW_HIT_RATIO = 16  # see fast_statements


def _unescape(text: str) -> str:
    """C-style string content: ``\\x`` stands for ``x`` (enough for paths and quotes)."""
    return _ESCAPE.sub(lambda m: m.group(1), text) if "\\" in text else text


class _Parser(InstructionParser):
    """Module level: directives, declarations and function definitions."""

    def __init__(self, text: str, filename: str, progress: Progress | None = None) -> None:
        super().__init__(text, filename)
        self.progress = progress
        self.report_at = PROGRESS_LINES       # the line at which progress is called next
        self.module = Module(filename=filename)
        self.declared: set[str] = set()  # names of functions declared without a body so far
        self.line_shapes: dict[bytes, tuple] = {}  # see learn_line
        self.shapes_of_text: bytes | None = None  # see shape_text
        self.rows_review = (True, 0, _LINE_LIMIT)  # whole-line look-ups: on?, hits, lines left

    # ----------------------------------------------------------------- module level
    def parse(self) -> Module:
        while self.peek() is not None:
            self.top_statement()
            self.sync()
        self.resolve_locations()
        return self.module

    def resolve_locations(self) -> None:
        """Turn the ``.loc`` tuples the bodies hold into CudaLocations (the ``.file`` table is
        complete only now); equal positions share one object."""
        made: dict[LocTuple, CudaLocation] = {}
        last = found = None
        for function in self.module.functions:
            for instr in function.body or ():
                loc = instr.cuda_location
                if loc is not None:
                    if loc is not last:  # runs of instructions share the tuple of their .loc
                        last = loc
                        found = made.get(loc)  # type: ignore[call-overload]
                        if found is None:
                            found = made[loc] = self.cuda_location(loc)  # type: ignore[index,arg-type]
                    instr.cuda_location = found

    def top_statement(self) -> None:
        tok = self.next("a directive")
        if tok.kind == "word" and tok.text.startswith("."):
            self.directive(tok)
            return
        if tok.kind == "word" and self.at(":"):
            # A named prototype outside a function: ``proto : .callprototype ...;``.
            colon = self.next("':'")
            follow = self.peek()
            if follow is not None and follow.text == ".callprototype":
                self.module.prototypes.append(tok.text)
                self.skip_statement(colon)
                return
            raise self.error("label outside a function body", tok)
        if tok.kind == "punct" and tok.text == "}":
            raise self.error("unbalanced '}'", tok)
        if tok.kind == "punct" and tok.text == "{":
            raise self.error("block outside a function body", tok)
        raise self.error("instruction or text outside a function body", tok)

    def directive(self, tok: Token) -> None:
        name = tok.text
        if name in _LINE_DIRECTIVES:
            self.line_directive(tok, self.line_args(tok))
            return
        if name == ".section":
            self.section(tok)
            return
        linkage: str | None = None
        start = tok
        while name[1:] in LINKAGES:
            linkage = name[1:] if linkage is None or linkage == "visible" else linkage
            tok = self.next("a declaration")
            if tok.kind != "word" or not tok.text.startswith("."):
                raise self.error("expected a declaration after a linkage directive", tok)
            name = tok.text
        if name in (".entry", ".func"):
            self.function(start, FunctionKind(name[1:]), linkage)
            return
        space = base_space(name)
        if space in STATE_SPACES and space not in ("reg", "param", "sreg"):
            self.module.variables.extend(self.variables(start, space, linkage))
            return
        # ``.pragma``, ``.alias``, ``.callprototype``, future directives: skip them whole.
        self.skip_unknown(tok)

    def skip_unknown(self, start: Token) -> None:
        """Skip a directive this parser does not model: through its ``;``, or up to a later line
        that starts a declaration, so that a future directive written without ``;`` (as
        ``.target`` is) does not swallow the declaration after it."""
        stack: list[Token] = []
        while True:
            tok = self.peek()
            if tok is None:
                if stack:
                    raise self.error(f"unclosed {stack[-1].text!r}", stack[-1])
                return
            if (not stack and tok.line != start.line and tok.kind == "word"
                    and tok.text in _DECLARATION_STARTS):
                return
            self.i += 1
            if tok.kind != "punct":
                continue
            if tok.text == ";" and not stack:
                return
            self.track_brackets(tok, stack)

    def line_directive(self, tok: Token, args: list[Token]) -> None:
        name = tok.text
        if name == ".version":
            if not args or args[0].kind != "num":
                raise self.error("'.version' needs a version number", tok)
            self.module.version = args[0].text
        elif name == ".target":
            targets = tuple(a.text for a in args if a.kind == "word")
            if not targets:
                raise self.error("'.target' needs a target name", tok)
            self.module.target = targets
        elif name == ".address_size":
            value = decode_number(args[0].text) if args and args[0].kind == "num" else None
            if not isinstance(value, int):
                raise self.error("'.address_size' needs 32 or 64", tok)
            self.module.address_size = value
        elif name == ".file":
            index = decode_number(args[0].text) if args and args[0].kind == "num" else None
            strings = [a for a in args if a.kind == "str"]
            if not isinstance(index, int) or not strings:
                raise self.error("'.file' needs an index and a quoted file name", tok)
            # Windows paths arrive escaped (``"C:\\src\\k.cu"``).
            self.module.files[index] = _unescape(strings[0].text[1:-1])
        # ``.loc`` outside a body positions nothing: it is accepted and ignored.

    def section(self, tok: Token) -> None:
        """DWARF ``.section .debug_info { ... }``: skipped, braces balanced."""
        while True:
            nxt = self.next("'{' after .section")
            if nxt.kind == "punct" and nxt.text == "{":
                self.skip_group(nxt)
                return
            if nxt.kind == "punct" and nxt.text == ";":
                return
            if nxt.line != tok.line and nxt.kind == "word" and nxt.text.startswith("."):
                self.i -= 1  # a section header without a body
                return

    def function(self, start: Token, kind: FunctionKind, linkage: str | None) -> None:
        return_params: list[Param] = []
        if kind == FunctionKind.FUNC and self.at("("):
            return_params = self.param_list()
        while True:
            name_tok = self.next("a function name")
            if name_tok.text == ".attribute" and self.at("("):
                self.skip_group(self.next("'('"))
                continue
            break
        if name_tok.kind != "word" or name_tok.text.startswith("."):
            raise self.error("expected a function name", name_tok)
        params = self.param_list() if self.at("(") else []
        function = Function(
            name=name_tok.text, kind=kind, params=params, return_params=return_params,
            linkage=linkage, location=self.loc(start),
        )
        while True:
            tok = self.next(f"'{{' or ';' after the header of {name_tok.text}")
            if tok.kind == "punct" and tok.text == ";":
                break  # a declaration
            if tok.kind == "punct" and tok.text == "{":
                self.body(function, tok)
                break
            if tok.kind == "word" and tok.text.startswith("."):
                if tok.text == ".pragma":
                    self.skip_statement(tok)
                elif tok.text == ".attribute" and self.at("("):
                    self.skip_group(self.next("'('"))
                else:
                    function.directives[tok.text[1:]] = self.directive_numbers()
                continue
            raise self.error(f"expected '{{' or ';' after the header of {name_tok.text}", tok)
        functions = self.module.functions
        if function.is_definition:
            # nvcc declares a .func before its first caller and defines it later (with -G even
            # after the kernel); the definition supersedes the forward declaration, so that a
            # look-up by name finds the body.
            if function.name in self.declared:
                self.declared.discard(function.name)
                functions[:] = [f for f in functions if f.name != function.name or f.is_definition]
        else:
            self.declared.add(function.name)
        functions.append(function)

    def body(self, function: Function, open_tok: Token) -> None:
        function.body = []
        state = BodyState(function)
        state.register_names.update(p.name for p in function.params + function.return_params
                                    if p.state_space == "reg")
        self.is_register = RegisterTest(state.register_names, state.register_ranges)
        self.forget_operands()
        scopes = [open_tok]  # the '{' of every open scope, for the end-of-file message
        while True:
            if FAST_PATHS and self.fast_statements(state, scopes):
                return
            if self.progress is not None and self.lexer.line >= self.report_at:
                # the token path (a statement the fast path left) reports too
                self.report_at = self.lexer.line + PROGRESS_LINES
                self.progress(self.lexer.pos, len(self.text))
            tok = self.peek()
            if tok is None:
                raise self.error(f"end of file inside the body of {function.name}", scopes[-1],
                                 text="{")
            self.i += 1
            if tok.kind == "punct":
                if tok.text == "{":
                    scopes.append(tok)
                    state.open_scope()
                    continue
                if tok.text == "}":
                    if self.close_scope(state, scopes, tok):
                        return
                    continue
                if tok.text == "@":
                    self.instruction(state, tok)
                    continue
                if tok.text == ";":
                    continue  # an empty statement
                raise self.error("unexpected punctuation in a function body", tok)
            if tok.kind != "word":
                raise self.error("unexpected token in a function body", tok)
            if self.at(":"):
                colon = self.next("':'")
                follow = self.peek()
                if follow is not None and follow.text in (".callprototype", ".branchtargets",
                                                          ".calltargets"):
                    if follow.text == ".callprototype":
                        self.module.prototypes.append(tok.text)
                    self.skip_statement(colon)
                    continue
                state.label_defs.append((tok.text, state.scope, len(function.body), tok.line,
                                         tok.column, tok.pos))
                continue
            if tok.text.startswith("."):
                self.body_directive(state, tok)
                continue
            self.i -= 1
            self.instruction(state, None)

    def close_scope(self, state: BodyState, scopes: list[Token], tok: Token) -> bool:
        """A ``}``: True when it closes the body."""
        scopes.pop()
        state.close_scope()
        if scopes:
            return False
        state.scope_last[0] = len(state.scope_parent) - 1
        state.function.end_location = self.loc(tok)
        self.resolve_labels(state)
        return True

    def fast_statements(self, state: BodyState, scopes: list[Token]) -> bool:
        """Read body statements straight from the text while they have a common shape. True
        when the body closed; False at the first statement the token path must read (the
        white space before it consumed).

        Two levels. A line that holds one instruction or ``.loc`` and nothing else is looked
        up whole, or else read by the spans of its shape (see :meth:`learn_line`; the most
        common shape, ``op.mods \\t%d, a, b;``, is built right here: in a kernel where every
        statement is new, this loop is where the time goes). Anything else, and a line of a
        shape not seen yet, is matched with :data:`_STATEMENT`, one statement at a time.

        Looking lines up whole pays in unrolled code, where they recur, and costs a little
        everywhere else: after every :data:`_LINE_LIMIT` lines remembered, the look-up is
        kept only if it found at least one line in :data:`_ROW_HIT_RATIO`, and switched off
        for the next :data:`_LINE_LIMIT` lines otherwise."""
        if self.toks:
            self.sync()
        lexer = self.lexer
        text = self.text
        find = text.find
        starts_line = text.startswith
        match = _STATEMENT.match
        cache = self.statement_cache
        rows = self.line_cache
        rows_on, rows_hits, rows_left = self.rows_review
        shapes = self.line_shapes
        shape_text = self.shape_text()
        operand_caches = self.operand_cache
        register_cache = self.register_cache
        registers_of = register_cache.__getitem__
        new_location = object.__new__
        set_file, set_line, set_column = LOCATION_SETTERS
        body = state.function.body
        assert body is not None
        append = body.append
        scope_of = state.instruction_scopes.append
        file = self.file
        pos, line, line_start = lexer.pos, lexer.line, lexer.line_start
        progress = self.progress
        report_at = self.report_at if progress is not None else sys.maxsize
        try:
            while True:
                if line >= report_at:
                    report_at = self.report_at = line + PROGRESS_LINES
                    progress(pos, len(text))  # type: ignore[misc]  # set whenever report_at is
                key = None  # the shape of the line after pos, when it must be learnt
                if starts_line("\n", pos):
                    nl = find("\n", pos + 1)
                    if nl > 0:
                        base = pos + 1
                        got = None
                        if rows_on:
                            row = text[base:nl]
                            got = rows.get(row)
                            if got is not None:
                                rows_hits += 1
                        else:
                            row = None
                            rows_left -= 1
                            if not rows_left:
                                rows_on, rows_hits, rows_left = True, 0, _LINE_LIMIT
                        if got is None:
                            key = (shape_text[base:nl] if shape_text is not None else
                                   text[base:nl].encode("utf-8", "surrogatepass").translate(_DIGITS_TO_ZERO))
                            shape = shapes.get(key)
                            if shape is None:
                                pass
                            elif shape[0] == _PLAIN:
                                # InstructionParser.build_statement for this shape (no guard,
                                # operands split at ", ", text op + " " + ops + ";"), inlined;
                                # with the usual miss, a new destination register, made here.
                                _, column, o0, o1, s0, s1, fresh_dest = shape
                                op = text[base + o0 : base + o1]
                                ops = text[base + s0 : base + s1]
                                opcode, modifiers, plain = split_opcode(op)
                                branch = opcode in _BRANCHES
                                parts = ops.split(", ")
                                known = operand_caches[branch]
                                operands = tuple(map(known.get, parts))
                                if all(operands):  # (only a miss is false: None)
                                    if plain and operands[0].kind == _REGISTER:
                                        dests = registers_of(parts[0])
                                        srcs = sum(map(registers_of, parts[1:]), ())
                                    else:
                                        dests, srcs = split_registers(
                                            opcode, modifiers, operands[0].kind,
                                            list(map(registers_of, parts)), None)
                                elif (fresh_dest and plain and operands[0] is None
                                      and all(operands[1:]) and len(register_cache) < CACHE_LIMIT):
                                    dest = parts[0]
                                    operands = (named_operand(_REGISTER, dest), *operands[1:])
                                    known[dest] = operands[0]
                                    register_cache[dest] = dests = (dest,)
                                    srcs = sum(map(registers_of, parts[1:]), ())
                                else:
                                    self.branch = branch
                                    try:
                                        operands, registers = self.new_operands(known, parts, operands)
                                    except Fallback:
                                        operands = ()
                                    else:
                                        first = operands[0].kind
                                        if plain and first == _REGISTER:
                                            dests = registers[0]
                                            srcs = sum(registers[1:], ())
                                        else:
                                            dests, srcs = split_registers(opcode, modifiers, first,
                                                                          registers, None)
                                if operands:
                                    n = len(srcs)
                                    if n == 2:
                                        if srcs[0] == srcs[1]:
                                            srcs = srcs[:1]
                                    elif n > 2:
                                        srcs = tuple(dict.fromkeys(srcs))
                                    text_of = f"{op} {ops};"
                                    line += 1
                                    line_start = base
                                    pos = nl
                                    where = new_location(SourceLocation)  # source_location(), inlined
                                    set_file(where, file)
                                    set_line(where, line)
                                    set_column(where, column)
                                    append(Instruction(
                                        len(body), opcode, modifiers, operands, dests, srcs, text_of,
                                        where, None, False, state.cuda_loc,  # type: ignore[arg-type]
                                    ))
                                    scope_of(state.scope)
                                    lexer.last_text = ";"
                                    if rows_on:
                                        if len(rows) >= _LINE_LIMIT:
                                            rows.clear()
                                        rows[row] = (column, (opcode, modifiers, operands, dests, srcs,
                                                              text_of, None, False))
                                        rows_left -= 1
                                        if not rows_left:
                                            rows_on = rows_hits * _ROW_HIT_RATIO >= _LINE_LIMIT
                                            rows_hits, rows_left = 0, _LINE_LIMIT
                                    continue
                            else:
                                got = self.shaped_line(state, text[base:nl] if row is None else row, shape)
                        if got is not None:
                            line += 1
                            line_start = base
                            pos = nl
                            if got is True:  # a .loc line
                                continue
                            column, hit = got
                            where = new_location(SourceLocation)  # source_location(), inlined
                            set_file(where, file)
                            set_line(where, line)
                            set_column(where, column)
                            append(Instruction(
                                len(body), hit[0], hit[1], hit[2], hit[3], hit[4], hit[5], where,
                                hit[6], hit[7], state.cuda_loc,  # type: ignore[arg-type]  # resolved later
                            ))
                            scope_of(state.scope)
                            lexer.last_text = ";"
                            continue
                m = match(text, pos)
                kind = m.lastgroup  # the statement's own group closes last
                start = m.start(kind) if kind else m.end()
                row_start = pos + 1
                if start > pos:
                    newlines = text.count("\n", pos, start)
                    if newlines:
                        line += newlines
                        line_start = text.rfind("\n", pos, start) + 1
                    pos = start
                if kind is None:
                    return False
                if kind == "i":
                    statement = m.group("i")
                    hit = cache.get(statement)
                    if hit is None:
                        try:
                            hit = self.new_statement(m, statement)
                        except Fallback:
                            return False
                    append(Instruction(
                        len(body), hit[0], hit[1], hit[2], hit[3], hit[4], hit[5],
                        source_location(file, line, start - line_start + 1), hit[6], hit[7],
                        state.cuda_loc,  # type: ignore[arg-type]  # a LocTuple until resolve_locations
                    ))
                    scope_of(state.scope)
                    pos = m.end()
                    lexer.last_text = ";"
                    if key is not None and line_start == row_start:
                        self.learn_line(m, key, row_start, nl, hit)
                    continue
                column = start - line_start + 1
                if kind == "loc":
                    nums = [decode_number(g) for g in m.group("f", "l", "c") if g is not None]
                    if not all(isinstance(n, int) for n in nums):
                        return False  # "09" is no octal number: the token path reports it
                    state.cuda_loc = (nums[0], nums[1], nums[2] if len(nums) > 2 else 0, None)  # type: ignore[assignment]
                    lexer.last_text = ";" if text[m.end() - 1] == ";" else str(m.group("c") or m.group("l"))
                    if key is not None and line_start == row_start:
                        self.learn_line(m, key, row_start, nl, None)
                elif kind == "label":
                    state.label_defs.append((m.group("label"), state.scope, len(body), line, column,
                                             start))
                    lexer.last_text = ":"
                else:
                    c = m.group("p")
                    lexer.last_text = c
                    if c == "{":
                        scopes.append(Token("punct", c, line, column, start))
                        state.open_scope()
                    elif c == "}":
                        pos = m.end()
                        if self.close_scope(state, scopes, Token("punct", c, line, column, start)):
                            return True
                pos = m.end()
        finally:
            lexer.pos, lexer.line, lexer.line_start = pos, line, line_start
            self.rows_review = (rows_on, rows_hits, rows_left)

    def shape_text(self) -> bytes | None:
        """The text with every ASCII digit made ``0``, as bytes, when it is ASCII (then a line's
        shape is a slice of it at the same offsets); None otherwise (each line is encoded)."""
        if self.shapes_of_text is None and self.text.isascii():
            self.shapes_of_text = self.text.encode("ascii").translate(_DIGITS_TO_ZERO)
        return self.shapes_of_text

    def learn_line(self, m: re.Match[str], key: bytes, row_start: int, row_end: int,
                   hit: tuple | None) -> None:
        """Remember the shape of a line that :data:`_STATEMENT` read as white space, one
        instruction or ``.loc`` (``m``), then only white space or a line comment.

        The shape is the line with its ASCII digits made ``0``: the patterns give every digit
        the same treatment (``\\d``, ``\\w``, no digit literals), so a line of the same shape
        matches the same way, with the same group spans, and those spans are read instead of
        matching. What depends on the shape alone is worked out here once: how the operands
        split and whether the statement's one-line text is ``op + " " + ops + ";"``. An
        instruction line is also remembered whole."""
        text = self.text
        end = m.end()
        rest = text[end:row_end]
        if rest.strip(" \t\r\f\v") and not rest.lstrip(" \t\r\f\v").startswith("//"):
            return  # another statement or a block comment follows on the line
        spans = [x - row_start if x >= 0 else -1 for name in _SHAPE_GROUPS[m.lastgroup]
                 for x in m.span(name)]
        if hit is None:  # .loc: the last token is ';' or the last number
            numbers = [text[row_start + a : row_start + b] for a, b in zip(spans[2::2], spans[3::2], strict=True)
                       if a >= 0]
            if not all(n.isascii() for n in numbers):
                return  # digits other than ASCII ones: leave them to decode_number
            shape: tuple = (_LOC, text[end - 1] == ";", *spans)
        else:
            op, ops = m.group("op", "ops")
            separator = operand_separator(ops)
            tidy = (m.group("guard") is None and ops is not None
                    and " ".join(m.group("i").split()) == f"{op} {ops};")
            if tidy and separator == ", ":
                # Whether operand 0 of every line of this shape, when new, is a register that
                # word() would make without a second look (digits aside, the pattern is the
                # same for all of them; %clock64 is the one special register with digits).
                dest = ops.split(", ")[0]
                fresh_dest = (PLAIN_REGISTER(dest) is not None
                              and dest.translate(_ZERO_DIGITS) not in _SPECIAL_SHAPES)
                shape = (_PLAIN, spans[0] + 1, *spans[4:8], fresh_dest)
            else:
                shape = (_INSTRUCTION, m.group("neg") is not None, *spans, separator, tidy)
            rows = self.line_cache
            if len(rows) >= _LINE_LIMIT:
                rows.clear()
            rows[text[row_start:row_end]] = (spans[0] + 1, hit)
        shapes = self.line_shapes
        if len(shapes) >= _SHAPE_LIMIT:
            shapes.clear()
        shapes[key] = shape

    def shaped_line(self, state: BodyState, row: str, shape: tuple) -> tuple[int, tuple] | bool | None:
        """The line ``row`` read from its learnt ``shape`` (other than the one
        :meth:`fast_statements` builds itself): (column, instruction tuple) for an instruction
        (also remembered whole), True for a ``.loc`` (``state.cuda_loc`` set), None when its
        content needs the general path."""
        if shape[0] == _INSTRUCTION:
            _, negated, i0, i1, g0, g1, o0, o1, s0, s1, separator, tidy = shape
            op = row[o0:o1]
            ops = row[s0:s1] if s0 >= 0 else None
            try:
                hit = self.build_statement(
                    negated, row[g0:g1] if g0 >= 0 else None, op, ops,
                    f"{op} {ops};" if tidy else " ".join(row[i0:i1].split()), separator)
            except Fallback:
                return None
            got = (i0 + 1, hit)
            rows = self.line_cache
            if len(rows) >= _LINE_LIMIT:
                rows.clear()
            rows[row] = got
            return got
        # .loc: its numbers are ASCII digits; decimal unless they start with 0 (octal, or
        # malformed as "09": the general path decides)
        _, semicolon, _, _, f0, f1, l0, l1, c0, c1 = shape
        index, number = row[f0:f1], row[l0:l1]
        column = row[c0:c1] if c0 >= 0 else "0"
        if ((index[0] == "0" and len(index) > 1) or (number[0] == "0" and len(number) > 1)
                or (column[0] == "0" and len(column) > 1)):
            return None
        state.cuda_loc = (int(index), int(number), int(column), None)  # type: ignore[assignment]
        self.lexer.last_text = ";" if semicolon else column if c0 >= 0 else number
        return True

    def body_directive(self, state: BodyState, tok: Token) -> None:
        function = state.function
        if tok.text == ".loc":
            state.cuda_loc = self.loc_directive(tok, self.line_args(tok))
        elif tok.text in _LINE_DIRECTIVES:
            self.line_directive(tok, self.line_args(tok))
        elif tok.text == ".reg":
            decls = self.registers(tok)
            function.registers.extend(decls)
            for decl in decls:
                if decl.count is None:
                    state.register_names.add(decl.name)
                else:
                    state.register_ranges.append((decl.name, decl.count))
                if not decl.name.startswith("%") or is_special_register(decl.name):
                    self.forget_operands()  # a bare name (or a special one) became a register
        elif base_space(tok.text) in _BODY_SPACES or (
            tok.text[1:] in LINKAGES and (nxt := self.peek()) is not None
            and base_space(nxt.text) in _BODY_SPACES
        ):
            linkage = None
            if tok.text[1:] in LINKAGES:  # ``.extern .shared .b8 smem[];`` inside a body
                linkage, tok = tok.text[1:], self.next("a state space")
            function.variables.extend(self.variables(tok, base_space(tok.text), linkage))
        else:
            self.skip_statement(tok)  # .param in call scopes, .pragma, unknown directives

    def loc_directive(self, tok: Token, args: list[Token]) -> LocTuple:
        """``.loc 1 12 5`` or ``.loc 2 388 5, function_name $L__info_string0, inlined_at 1 7 5``."""
        head = self.loc_numbers(tok, args[:3])
        inlined: LocTuple | None = None
        for n, arg in enumerate(args):
            if arg.text == "inlined_at":
                inlined = self.loc_numbers(tok, args[n + 1 : n + 4])
        return (*head[:3], inlined)

    def loc_numbers(self, tok: Token, args: list[Token]) -> LocTuple:
        nums = [decode_number(a.text) for a in args if a.kind == "num"]
        if len(nums) < 2 or not all(isinstance(n, int) for n in nums):
            raise self.error(f"'{tok.text}' needs a file index, a line and a column", tok)
        return (nums[0], nums[1], nums[2] if len(nums) > 2 else 0, None)  # type: ignore[return-value]

    def cuda_location(self, loc: LocTuple) -> CudaLocation:
        index, line, column, inlined = loc
        name = self.module.files.get(index, f"<file {index}>")
        return CudaLocation(name, line, column, self.cuda_location(inlined) if inlined else None)

    def resolve_labels(self, state: BodyState) -> None:
        """Fill ``Function.labels`` and ``Instruction.labels``; rename scope-local duplicates.

        Inline assembly inlined twice (CUTLASS's ``LAB_WAIT:`` inside ``{ }``) defines one label
        name in several nested scopes, which PTX allows. Such a name keeps its spelling in the
        outermost scope that defines it; every other definition becomes ``name~N`` and each
        branch is pointed at the definition of its innermost enclosing scope, so that the flat
        ``labels`` dict and ``branch_target`` stay unambiguous for the CFG.

        One sweep over the body in text order does it: text order visits the scope tree depth
        first, so a stack per duplicated name holds the definitions of the enclosing scopes.
        """
        function = state.function
        body = function.body or []
        by_name: dict[str, list[tuple[str, int, int, int, int, int]]] = {}
        for definition in state.label_defs:
            by_name.setdefault(definition[0], []).append(definition)
        final: dict[tuple[str, int], str] = {}
        depth = state.scope_depth
        for name, defs in by_name.items():
            if len(defs) == 1:
                final[(name, defs[0][1])] = name
                continue
            seen: set[int] = set()
            for _, scope, _, line, column, _ in defs:
                if scope in seen:
                    raise PtxSyntaxError("label defined twice in one scope", self.file, line, column,
                                         name)
                seen.add(scope)
            for n, d in enumerate(sorted(defs, key=lambda d: (depth[d[1]], d[5]))):
                final[(name, d[1])] = name if n == 0 else f"{name}~{n}"
        per_index: dict[int, list[str]] = {}
        for name, scope, index, *_ in state.label_defs:
            label = final[(name, scope)]
            function.labels[label] = index
            per_index.setdefault(index, []).append(label)
        for index, labels in per_index.items():
            if index < len(body):
                body[index].labels = tuple(labels)
        duplicated = {name for name, defs in by_name.items() if len(defs) > 1}
        if duplicated:
            self.rename_scoped_labels(state, body, duplicated, by_name, final)

    @staticmethod
    def rename_scoped_labels(state: BodyState, body: list, duplicated: set[str],
                             by_name: dict[str, list], final: dict[tuple[str, int], str]) -> None:
        defined_in: dict[int, list[tuple[str, str]]] = {}  # scope -> (name, final name)
        for name in duplicated:
            for d in by_name[name]:
                defined_in.setdefault(d[1], []).append((name, final[(name, d[1])]))
        stacks: dict[str, list[str]] = {name: [] for name in duplicated}
        parent, last = state.scope_parent, state.scope_last
        path: list[int] = []

        def enter(scope: int) -> None:
            path.append(scope)
            for name, target in defined_in.get(scope, ()):
                stacks[name].append(target)

        enter(0)
        for instr, scope in zip(body, state.instruction_scopes, strict=True):
            while not path[-1] <= scope <= last[path[-1]]:  # leave scopes that do not hold it
                for name, _ in defined_in.get(path.pop(), ()):
                    stacks[name].pop()
            if path[-1] != scope:
                chain = []
                while scope != path[-1]:
                    chain.append(scope)
                    scope = parent[scope]
                for inner in reversed(chain):
                    enter(inner)
            if not any(o.kind == OperandKind.LABEL and o.name in duplicated for o in instr.operands):
                continue
            operands = []
            for o in instr.operands:
                if o.kind == OperandKind.LABEL and o.name in duplicated and stacks[o.name]:
                    o = replace(o, name=stacks[o.name][-1])  # the innermost definition wins
                operands.append(o)
            instr.operands = tuple(operands)


def parse_ptx(text: str, filename: str = "<string>", progress: Progress | None = None) -> Module:
    """Parse PTX source text into a :class:`Module`; malformed text raises PtxSyntaxError.
    ``progress(done, total)``, when given, is called every few thousand lines of a body with the
    characters read so far; whatever it raises (a cancellation) ends the parse.

    Time and memory are linear in the text: tokens are lexed on demand and dropped after each
    statement, nothing recurses on nesting, and equal operands are shared. The cyclic garbage
    collector is paused meanwhile: parsing makes millions of objects and no cycles, and its
    passes over them would cost a quarter of the time."""
    if text.startswith("\ufeff"):
        text = text[1:]  # a byte-order mark is not PTX, but editors add one
    with paused_gc(promote=True):
        return _Parser(text, filename, progress).parse()
