"""Declarations: state-space variables, parameter lists, ``.reg`` lines, performance directives."""

from __future__ import annotations

from engine.ptx.cursor import TokenCursor
from engine.ptx.lexer import Token
from engine.ptx.operands import decode_number
from engine.ptx.parsed_module import Param, RegisterDeclaration, Variable

TYPE_BYTES = {
    "b8": 1, "u8": 1, "s8": 1, "pred": 1,
    "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2, "e4m3x2": 2, "e5m2x2": 2,
    "b32": 4, "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "tf32": 4,
    "b64": 8, "u64": 8, "s64": 8, "f64": 8,
    "b128": 16,
}
_OPAQUE_TYPES = frozenset({"texref", "samplerref", "surfref"})
STATE_SPACES = frozenset({"global", "shared", "const", "local", "tex", "param", "reg", "sreg"})
LINKAGES = frozenset({"visible", "extern", "weak", "weak_odr", "common"})


def base_space(word: str) -> str:
    """``.shared::cta`` -> ``shared``."""
    return word[1:].split("::", 1)[0]


class DeclarationParser(TokenCursor):
    """Grammar rules for declarations; the module and body parsers build on it."""

    def variables(self, start: Token, space: str, linkage: str | None) -> list[Variable]:
        """``.shared .align 16 .b8 tile[1024] = {...};`` possibly with several names."""
        align: int | None = None
        vtype = ""
        vector = 1
        while True:
            tok = self.next("a type or a name")
            if tok.kind == "word" and tok.text.startswith("."):
                word = tok.text[1:]
                if word == "align":
                    align = self.expect_int("an alignment")
                elif word == "attribute" and self.at("("):
                    self.skip_group(self.next("'('"))
                elif word in ("v2", "v4", "v8"):
                    vector = int(word[1:])
                elif word in TYPE_BYTES or word in _OPAQUE_TYPES:
                    vtype = word
                elif word in LINKAGES:
                    linkage = linkage or word
                continue  # ``.ptr``, ``.managed`` and friends carry no size
            if tok.kind != "word":
                raise self.error("expected a variable name", tok)
            break
        out: list[Variable] = []
        name_tok = tok
        while True:
            dims: list[int | None] = []
            while self.at("["):
                open_tok = self.next("'['")
                if self.at("]"):
                    dims.append(None)
                else:
                    dims.append(self.expect_int("an array size"))
                self.expect("]", f" to close the '[' at line {open_tok.line}")
            initializer: str | None = None
            if self.at("="):
                initializer = self.initializer(self.next("'='"))
            size: int | None = TYPE_BYTES.get(vtype)
            if size is not None:
                size *= vector
                for d in dims:
                    size = None if d is None or size is None else size * d
            out.append(
                Variable(
                    name=name_tok.text, state_space=space, type=vtype, size_bytes=size, align=align,
                    array_dims=tuple(dims), initializer=initializer, linkage=linkage,
                    location=self.loc(start),
                )
            )
            tok = self.next("';'")
            if tok.kind == "punct" and tok.text == ";":
                return out
            if tok.kind == "punct" and tok.text == ",":
                name_tok = self.next("a variable name")
                if name_tok.kind != "word":
                    raise self.error("expected a variable name", name_tok)
                continue
            raise self.unterminated(tok, "expected ';' after a declaration")

    def initializer(self, eq: Token) -> str:
        """Initialiser text up to the ``,`` or ``;`` at depth 0, kept verbatim."""
        first = self.peek()
        if first is None:
            raise self.error("unexpected end of file in an initializer", eq)
        stack: list[Token] = []
        last = first
        while True:
            tok = self.peek()
            if tok is None:
                raise self.error("unclosed initializer", stack[-1] if stack else eq)
            if tok.kind == "punct":
                if tok.text in (",", ";") and not stack:
                    break
                self.track_brackets(tok, stack)
            last = tok
            self.i += 1
        return self.text[first.pos : last.pos + len(last.text)]

    def param_list(self) -> list[Param]:
        open_tok = self.expect("(")
        params: list[Param] = []
        if self.at(")"):
            self.i += 1
            return params
        while True:
            params.append(self.param())
            tok = self.next("')'")
            if tok.kind == "punct" and tok.text == ")":
                return params
            if not (tok.kind == "punct" and tok.text == ","):
                raise self.error(f"expected ',' or ')' in the parameter list opened at line {open_tok.line}",
                                 tok)

    def param(self) -> Param:
        space = "param"
        align = pointer_align = pointer_space = None
        ptype = ""
        vector = 1
        after_ptr = False
        while True:
            tok = self.next("a parameter")
            if not (tok.kind == "word" and tok.text.startswith(".")):
                break
            word = tok.text[1:]
            if word in ("param", "reg"):
                space = word
            elif word == "align":
                value = self.expect_int("an alignment")
                if after_ptr:
                    pointer_align = value
                else:
                    align = value
            elif word == "ptr":
                after_ptr = True
            elif after_ptr and base_space(tok.text) in STATE_SPACES:
                pointer_space = base_space(tok.text)
            elif word in ("v2", "v4", "v8"):
                vector = int(word[1:])
            elif word == "attribute" and self.at("("):
                self.skip_group(self.next("'('"))
            else:
                ptype = word
        if tok.kind != "word":
            raise self.error("expected a parameter name", tok)
        array_size: int | None = None
        if self.at("["):
            open_tok = self.next("'['")
            if not self.at("]"):
                array_size = self.expect_int("an array size")
            self.expect("]", f" to close the '[' at line {open_tok.line}")
        size = TYPE_BYTES.get(ptype, 0) * vector * (array_size or 1)
        return Param(
            name=tok.text, type=ptype, size_bytes=size, align=align, array_size=array_size,
            pointer_space=pointer_space, pointer_align=pointer_align, state_space=space,
        )

    def directive_numbers(self) -> tuple[int, ...]:
        """``.maxntid 256, 1, 1`` -> (256, 1, 1); ``.explicitcluster`` -> ()."""
        values: list[int] = []
        while True:
            tok = self.peek()
            if tok is None or tok.kind != "num":
                return tuple(values)
            value = decode_number(tok.text)
            if not isinstance(value, int):
                raise self.error("expected an integer", tok)
            values.append(value)
            self.i += 1
            if not self.at(","):
                return tuple(values)
            self.i += 1

    def registers(self, start: Token) -> list[RegisterDeclaration]:
        """``.reg .b32 %r<21>;``, ``.reg .pred p, q;``, ``.reg .v4 .f32 %v<2>;``."""
        rtype = ""
        tok = self.next("a register type")
        while tok.kind == "word" and tok.text.startswith("."):
            word = tok.text[1:]
            if word == "align":
                self.expect_int("an alignment")
            elif word not in ("v2", "v4", "v8"):
                rtype = word
            tok = self.next("a register name")
        out: list[RegisterDeclaration] = []
        while True:
            if tok.kind != "word":
                raise self.error("expected a register name", tok)
            count: int | None = None
            if self.at("<"):
                self.i += 1
                count = self.expect_int("a register count")
                self.expect(">", " after the register count")
            out.append(RegisterDeclaration(rtype, tok.text, count))
            tok = self.next("';'")
            if tok.kind == "punct" and tok.text == ";":
                return out
            if not (tok.kind == "punct" and tok.text == ","):
                raise self.unterminated(tok, "expected ';' after a register declaration")
            tok = self.next("a register name")

