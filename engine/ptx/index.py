"""Kernel index of a PTX file, and parsing one kernel of a large file.

:func:`index_kernels` lists the kernel definitions of a file without parsing any function body:
one pass of a regular-expression scan finds the top-level ``.entry``/``.func``/``.section``
definitions by balancing braces (comments and strings skipped), and only each header (name and
parameters) goes through the real parser. A 25 MB library with 252 kernels is indexed in well
under a second.

:func:`parse_kernel` parses one of those kernels: the file with every other function body
blanked out, except the ``.func`` definitions the kernel names (transitively). Module-level
directives and declarations (``.version``, ``.target``, ``.global``, ``.const``, ``.file``, ...)
stay, and the blanked ranges become the same number of line breaks (plus spaces up to the
column where the text resumes), so every line and column of the result, in instructions and in
errors, is the one of the original file. The chosen kernel comes out exactly as
:func:`engine.ptx.load_ptx` gives it.

Offsets are byte offsets into the file (into the UTF-8 encoding for text input); lines are
1-based. A ``str`` source is PTX text, except that a single line naming an existing file is read
as that file's path; ``bytes`` are file contents; an ``os.PathLike`` is a path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from engine.errors import PtxSyntaxError, WarplineError
from engine.fileio import read_regular_file
from engine.ptx.parsed_module import Function, Module

__all__ = ["KernelEntry", "index_kernels", "parse_kernel", "read_ptx_bytes"]

# Structure: braces, and comments and strings (skipped). The search looks for any of the four
# bytes that can start one (which the regex engine does at memory speed); :func:`_braces` then
# reads a comment or a string from there.
_CANDIDATE = re.compile(rb'[{}/"]')
_STRING = re.compile(rb'"(?:[^"\\\n]|\\[^\n])*"')


class _Token(NamedTuple):
    text: bytes   # b"{", b"}", b"/*" (an unterminated comment)
    start: int
    end: int


def _braces(data: bytes, pos: int) -> _Token | None:
    """The next brace at or after ``pos`` outside comments and strings (or an unterminated
    ``/*``), None at the end."""
    search = _CANDIDATE.search
    while True:
        m = search(data, pos)
        if m is None:
            return None
        at = m.start()
        c = data[at]
        if c == 0x7B or c == 0x7D:
            return _Token(data[at : at + 1], at, at + 1)
        if c == 0x2F:  # '/'
            nxt = data[at + 1 : at + 2]
            if nxt == b"/":
                stop = data.find(b"\n", at)
                pos = len(data) if stop < 0 else stop
            elif nxt == b"*":
                stop = data.find(b"*/", at + 2)
                if stop < 0:
                    return _Token(b"/*", at, at + 2)
                pos = stop + 2
            else:
                pos = at + 1
            continue
        string = _STRING.match(data, at)  # '"'
        pos = at + 1 if string is None else string.end()


# Directives that start a definition, looked for only in the (short) top-level text between
# blocks. A directive must be a whole lexer word: ``.visible.entry`` is one word in PTX.
_DIRECTIVE = re.compile(
    rb'//[^\n]*|/\*.*?\*/|/\*|"(?:[^"\\\n]|\\[^\n])*"'
    rb"|(?<![\w$.%:])\.(?:entry|func|section)(?![\w$]|\.[\w$]|::)",
    re.S,
)
# What a header ends at: its body, or ';' for a declaration.
_HEADER_END = re.compile(rb'//[^\n]*|/\*.*?\*/|/\*|"(?:[^"\\\n]|\\[^\n])*"|[{};()]', re.S)
# Linkage directives written before ``.entry``/``.func`` (they belong to the definition).
_LINKAGE_BEFORE = re.compile(rb"(?:\.(?:visible|extern|weak|weak_odr|common)[ \t\r\n]+)+$")
_IDENTIFIER = re.compile(rb"[A-Za-z_$][\w$]*")
# Between a ``.section`` header and a '{': a later line that starts with a directive.
_NEXT_DIRECTIVE = re.compile(rb"(?:[^\n]*\n)*?[ \t\r]*\.")
_MAX_KERNEL_NAMES = 12  # kernel names listed in a "no kernel named" message


@dataclass(frozen=True)
class KernelEntry:
    """One kernel definition of a PTX file.

    ``line``/``column`` are where the definition starts (its first linkage directive, as
    ``Function.location``), ``end_line`` the line of its closing ``}`` (``Function.end_location``);
    ``start``/``end`` its byte range, closing ``}`` included."""

    name: str
    line: int
    column: int
    end_line: int
    start: int
    end: int
    param_count: int


@dataclass(frozen=True)
class _Definition:
    kind: str            # "entry", "func" or "section"
    start: int           # first byte (linkage directive included)
    body: int            # offset of the body's '{' (-1 for a body-less .section)
    end: int             # one past the closing '}'
    name: str = ""
    params: int = 0


# The largest PTX file read: far above real libraries (tens of MB), far below what would exhaust
# memory once parsed (about 750 bytes of objects per instruction).
MAX_PTX_BYTES = 512 << 20


def read_ptx_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a PTX file: a regular file of at most MAX_PTX_BYTES (``/dev/zero`` or a FIFO
    is refused, not read forever); unreadable files raise a WarplineError naming the file, and so
    do files that are not PTX at all (:func:`check_is_ptx`)."""
    data = read_regular_file(path, MAX_PTX_BYTES, "PTX file")
    check_is_ptx(data, os.fspath(path))
    return data


# PTX opens with its .version and .target directives (after comments); a file without either in
# its first megabyte is something else (a .cu source, a cubin, a picture, a README)
_HEADER = re.compile(rb"^[ \t]*\.(?:version|target)\b", re.M)
_HEADER_BYTES = 1 << 20
_BINARY = {b"\x7fELF": "an ELF binary (a cubin or an executable)", b"\x89PNG": "a PNG image",
           b"%PDF": "a PDF document", b"PK\x03\x04": "a zip archive", b"\xff\xd8\xff": "a JPEG image"}


def check_is_ptx(data: bytes, filename: str) -> None:
    """WarplineError "not a PTX file" for bytes that cannot be PTX: binary data, or text without
    a ``.version`` or ``.target`` directive."""
    kind = next((what for magic, what in _BINARY.items() if data.startswith(magic)), None)
    if kind is None and b"\0" in data[:4096]:
        kind = "binary data"
    if kind is not None:
        raise WarplineError(f"{filename}: not a PTX file ({kind})")
    if data.strip() and not _HEADER.search(data[:_HEADER_BYTES]):
        hint = " (CUDA source: nvcc -ptx turns it into PTX)" if filename.endswith((".cu", ".cuh")) else ""
        raise WarplineError(f"{filename}: not a PTX file: no .version or .target directive{hint}")


def _source(source: str | bytes | os.PathLike[str], filename: str | None) -> tuple[bytes, str]:
    if isinstance(source, bytes):
        return source, filename or "<bytes>"
    if isinstance(source, str):
        if "\n" not in source and source.strip() and os.path.isfile(source):
            return read_ptx_bytes(source), filename or source
        return source.encode("utf-8"), filename or "<string>"
    return read_ptx_bytes(source), filename or os.fspath(source)


def _decode(data: bytes, filename: str) -> str:
    """The text of ``data``; the error points at the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise PtxSyntaxError("the file is not UTF-8 text", filename, line, column,
                             data[exc.start : exc.start + 8].hex(" ")) from exc


class _Lines:
    """Line and column of byte offsets, counting line breaks from the previous query (queries
    come mostly in file order, so a whole file costs one pass)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.offset = 0
        self.line = 1

    def __call__(self, offset: int) -> tuple[int, int]:
        data = self.data
        if offset >= self.offset:
            self.line += data.count(b"\n", self.offset, offset)
        else:
            self.line -= data.count(b"\n", offset, self.offset)
        self.offset = offset
        return self.line, offset - (data.rfind(b"\n", 0, offset) + 1) + 1


def _header(data: bytes, filename: str, start: int, stop: int, lines: _Lines) -> Function:
    """Name and parameters of the definition whose header is ``data[start:stop]``, read by
    the real parser as a declaration, at its real line and column."""
    from engine.ptx.parser import _Parser  # the parser imports nothing from here

    text = data[start:stop].decode("utf-8", "replace") + ";"
    line, column = lines(start)
    parser = _Parser(text, filename)
    parser.lexer.line = line
    parser.lexer.line_start = 1 - column
    parser.top_statement()
    functions = parser.module.functions
    if not functions:
        raise PtxSyntaxError("expected a function header", filename, line, column, text[:40])
    return functions[-1]


def _scan(data: bytes, filename: str) -> list[_Definition]:
    """Top-level definitions of ``data``, in file order."""
    lines = _Lines(data)
    out: list[_Definition] = []
    depth = 0
    pos = 0
    top = 0  # where the current stretch of top-level text began
    while True:
        m = _braces(data, pos)
        token = m.text if m is not None else b""
        if depth == 0 and (m is None or token == b"{"):
            # The top-level text before this block (or the end): definitions start there.
            stop = len(data) if m is None else m.start
            found = _definitions_in(data, filename, top, stop, lines)
            out.extend(found)
            if found and found[-1].end > stop:
                pos = top = found[-1].end  # the block was that definition's body
                continue
        if m is None:
            break
        pos = m.end
        if token == b"{":
            depth += 1
        elif token == b"}":
            depth -= 1
            if depth < 0:
                raise PtxSyntaxError("unbalanced '}'", filename, *lines(m.start), "}")
            if depth == 0:
                top = pos
        else:
            raise PtxSyntaxError("unterminated /* comment", filename, *lines(m.start), "/*")
    if depth > 0:
        raise PtxSyntaxError("end of file inside a block: a '}' is missing", filename,
                             *lines(len(data)), "{")
    return out


def _definitions_in(data: bytes, filename: str, start: int, stop: int, lines: _Lines
                    ) -> list[_Definition]:
    """Definitions whose directive lies in the top-level text ``data[start:stop]``."""
    out = []
    pos = start
    search = _DIRECTIVE.search
    while True:
        m = search(data, pos, stop)
        if m is None:
            return out
        pos = m.end()
        token = m.group()
        if token == b"/*":
            raise PtxSyntaxError("unterminated /* comment", filename, *lines(m.start()), "/*")
        if token[0] != 0x2E:  # a comment or a string
            continue
        found = _definition(data, filename, token[1:].decode(), m.start(), pos, lines)
        if found is not None:
            out.append(found)
            if found.end > stop:
                return out
            pos = found.end


def _definition(data: bytes, filename: str, kind: str, at: int, pos: int, lines: _Lines
                ) -> _Definition | None:
    """The definition whose directive is at ``at`` (None for a declaration)."""
    start = at
    before = _LINKAGE_BEFORE.search(data, max(0, at - 200), at)
    if before is not None:
        start = before.start()
    parens = 0
    if kind == "section":
        # ``.section .debug_str { ... }``; a header whose next line starts a new directive has
        # no body (as the parser reads it).
        m = _HEADER_END.search(data, pos)
        line_end = data.find(b"\n", pos)
        if m is None or (line_end >= 0 and m.start() > line_end
                         and _NEXT_DIRECTIVE.match(data, line_end, m.start())):
            return None
    while True:  # the header ends at '{' (a body) or ';' (a declaration), outside parentheses
        m = _HEADER_END.search(data, pos)
        if m is None:
            return None
        token = m.group()
        pos = m.end()
        if token == b"(":
            parens += 1
        elif token == b")":
            parens -= 1
        elif token == b"/*":
            raise PtxSyntaxError("unterminated /* comment", filename, *lines(m.start()), "/*")
        elif parens <= 0 and token == b";":
            return None
        elif parens <= 0 and token == b"}":
            raise PtxSyntaxError("unbalanced '}'", filename, *lines(m.start()), "}")
        elif parens <= 0 and token == b"{":
            body = m.start()
            break
    depth = 1
    while depth:
        m = _braces(data, pos)
        if m is None:
            raise PtxSyntaxError(f"end of file inside the body of this .{kind}", filename,
                                 *lines(body), "{")
        pos = m.end
        if m.text == b"{":
            depth += 1
        elif m.text == b"}":
            depth -= 1
        else:
            raise PtxSyntaxError("unterminated /* comment", filename, *lines(m.start), "/*")
    if kind == "section":
        return _Definition(kind, start, body, pos)
    header = _header(data, filename, start, body, lines)
    return _Definition(kind, start, body, pos, header.name, len(header.params))


def _definitions(source: str | bytes | os.PathLike[str], filename: str | None
                 ) -> tuple[bytes, str, list[_Definition]]:
    data, name = _source(source, filename)
    _decode(data, name)  # the same error as load_ptx for a file that is not UTF-8
    return data, name, _scan(data, name)


def index_kernels(source: str | bytes | os.PathLike[str], filename: str | None = None
                  ) -> list[KernelEntry]:
    """Every kernel (``.entry`` definition) of a PTX file or text, in file order, without
    parsing bodies. Structural damage at the top level (an unbalanced brace, an unterminated
    comment, a malformed header) raises PtxSyntaxError; damage inside a body does not show
    until that kernel is parsed."""
    data, name, definitions = _definitions(source, filename)
    lines = _Lines(data)
    out = []
    for d in definitions:
        if d.kind != "entry":
            continue
        line, column = lines(d.start)
        end_line = lines(d.end - 1)[0]
        out.append(KernelEntry(d.name, line, column, end_line, d.start, d.end, d.params))
    return out


def _blank(data: bytes, start: int, end: int) -> bytes:
    """What replaces ``data[start:end]``: its line breaks, then spaces up to the column at
    which the text after it starts, so that the rest keeps its lines and columns."""
    newlines = data.count(b"\n", start, end)
    if not newlines:
        return b" " * (end - start)
    return b"\n" * newlines + b" " * (end - (data.rfind(b"\n", start, end) + 1))


def parse_kernel(source: str | bytes | os.PathLike[str], name: str,
                 filename: str | None = None, progress: Callable[[int, int], None] | None = None) -> Module:
    """A Module with the module-level declarations of the file, the kernel ``name`` and the
    ``.func`` definitions it names (directly or through other functions); other bodies and
    DWARF sections are blanked out. An unknown name raises a WarplineError listing the kernels.
    ``progress``: as :func:`engine.ptx.parse_ptx` calls it (positions in the file's text)."""
    from engine.ptx.parser import parse_ptx

    text, file = kernel_source(source, name, filename)
    return parse_ptx(text, file, progress)


def kernel_source(source: str | bytes | os.PathLike[str], name: str,
                  filename: str | None = None, all_functions: bool = False) -> tuple[str, str]:
    """The text :func:`parse_kernel` parses, and the file name: the file with every body but
    the kernel ``name`` and the functions it calls blanked out, lines and columns kept; the
    kernel's instructions are where they were. With ``all_functions`` every ``.func`` body
    stays: ptxas refuses a file whose declared functions have no definition, used or not."""
    data, file, definitions = _definitions(source, filename)
    kernel = next((d for d in definitions if d.kind == "entry" and d.name == name), None)
    if kernel is None:
        names = [d.name for d in definitions if d.kind == "entry"]
        shown = ", ".join(names[:_MAX_KERNEL_NAMES]) + (", ..." if len(names) > _MAX_KERNEL_NAMES else "")
        raise WarplineError(f"{file}: no kernel named {name!r} (kernels: {shown or 'none'})")
    funcs: dict[str, list[_Definition]] = {}
    for d in definitions:
        if d.kind == "func":
            funcs.setdefault(d.name, []).append(d)
    keep = {id(kernel)} | ({id(d) for fs in funcs.values() for d in fs} if all_functions else set())
    todo = [kernel]
    while todo:
        d = todo.pop()
        for word in set(_IDENTIFIER.findall(data, d.body, d.end)):
            for f in funcs.get(word.decode("ascii"), ()):
                if id(f) not in keep:
                    keep.add(id(f))
                    todo.append(f)
    pieces = []
    pos = 0
    for d in definitions:
        if id(d) in keep:
            continue
        pieces.append(data[pos : d.start])
        pieces.append(_blank(data, d.start, d.end))
        pos = d.end
    pieces.append(data[pos:])
    return _decode(b"".join(pieces), file), file
