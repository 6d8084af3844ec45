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
"""

from __future__ import annotations

import re
from dataclasses import replace

from engine.ptx.declarations import LINKAGES, STATE_SPACES, base_space
from engine.ptx.instructions import BodyState, InstructionParser, LocTuple, RegisterTest
from engine.ptx.lexer import Token
from engine.ptx.model import CudaLocation, Function, Module, Param
from engine.ptx.operands import decode_number

_LINE_DIRECTIVES = frozenset({".version", ".target", ".address_size", ".file", ".loc"})
_DECLARATION_STARTS = frozenset(
    ".version .target .address_size .file .section .entry .func .visible .extern .weak .weak_odr "
    ".common .global .shared .const .local .tex .pragma .alias".split()
)
_BODY_SPACES = frozenset({"shared", "local", "const", "global"})
_ESCAPE = re.compile(r"\\(.)")


def _unescape(text: str) -> str:
    """C-style string content: ``\\x`` stands for ``x`` (enough for paths and quotes)."""
    return _ESCAPE.sub(lambda m: m.group(1), text) if "\\" in text else text


class _Parser(InstructionParser):
    """Module level: directives, declarations and function definitions."""

    def __init__(self, text: str, filename: str) -> None:
        super().__init__(text, filename)
        self.module = Module(filename=filename)

    # ----------------------------------------------------------------- module level
    def parse(self) -> Module:
        while self.i < len(self.toks):
            self.top_statement()
        for instr, loc in self.pending_locs:
            instr.cuda_location = self.cuda_location(loc)
        return self.module

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
            self.function(start, name[1:], linkage)
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

    def function(self, start: Token, kind: str, linkage: str | None) -> None:
        return_params: list[Param] = []
        if kind == "func" and self.at("("):
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
            functions[:] = [f for f in functions if f.name != function.name or f.is_definition]
        functions.append(function)

    def body(self, function: Function, open_tok: Token) -> None:
        function.body = []
        state = BodyState(function)
        state.register_names.update(p.name for p in function.params + function.return_params
                                    if p.state_space == "reg")
        self.is_register = RegisterTest(state.register_names, state.register_ranges)
        scopes = [open_tok]
        next_scope = 1
        while True:
            tok = self.peek()
            if tok is None:
                raise self.error(f"end of file inside the body of {function.name}", scopes[-1],
                                 text="{")
            self.i += 1
            if tok.kind == "punct":
                if tok.text == "{":
                    scopes.append(tok)
                    state.scope = (*state.scope, next_scope)
                    next_scope += 1
                    continue
                if tok.text == "}":
                    scopes.pop()
                    state.scope = state.scope[:-1]
                    if not scopes:
                        function.end_location = self.loc(tok)
                        self.resolve_labels(state)
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
                state.label_defs.append((tok, state.scope, len(function.body)))
                continue
            if tok.text.startswith("."):
                self.body_directive(state, tok)
                continue
            self.i -= 1
            self.instruction(state, None)

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
        """
        function = state.function
        body = function.body or []
        by_name: dict[str, list[tuple[Token, tuple[int, ...], int]]] = {}
        for definition in state.label_defs:
            by_name.setdefault(definition[0].text, []).append(definition)
        final: dict[tuple[str, tuple[int, ...]], str] = {}
        for name, defs in by_name.items():
            seen: set[tuple[int, ...]] = set()
            for tok, scope, _ in defs:
                if scope in seen:
                    raise self.error("label defined twice in one scope", tok)
                seen.add(scope)
            for n, (_, scope, _) in enumerate(sorted(defs, key=lambda d: (len(d[1]), d[0].pos))):
                final[(name, scope)] = name if n == 0 else f"{name}~{n}"
        per_index: dict[int, list[str]] = {}
        for tok, scope, index in state.label_defs:
            label = final[(tok.text, scope)]
            function.labels[label] = index
            per_index.setdefault(index, []).append(label)
        for index, labels in per_index.items():
            if index < len(body):
                body[index].labels = tuple(labels)
        duplicated = {name for name, defs in by_name.items() if len(defs) > 1}
        if not duplicated:
            return
        for instr, scope in zip(body, state.instruction_scopes, strict=True):
            if not any(o.kind == "label" and o.name in duplicated for o in instr.operands):
                continue
            operands = []
            for o in instr.operands:
                if o.kind == "label" and o.name in duplicated:
                    # The innermost enclosing scope that defines the name wins.
                    for depth in range(len(scope), -1, -1):
                        target = final.get((o.name, scope[:depth]))
                        if target is not None:
                            o = replace(o, name=target)
                            break
                operands.append(o)
            instr.operands = tuple(operands)



def parse_ptx(text: str, filename: str = "<string>") -> Module:
    """Parse PTX source text into a :class:`Module`; malformed text raises PtxSyntaxError."""
    if text.startswith("\ufeff"):
        text = text[1:]  # a byte-order mark is not PTX, but editors add one
    return _Parser(text, filename).parse()
