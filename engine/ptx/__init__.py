"""PTX front end: ``parse_ptx`` (text) and ``load_ptx`` (file) produce an ``engine.ptx.parsed_module.Module``.

The tokenizer is in :mod:`engine.ptx.lexer`, the grammar in :mod:`engine.ptx.parser` (and the modules
it names), and the rule that decides which registers an instruction writes and reads (``dests`` /
``srcs``) in the docstring of :mod:`engine.ptx.operands`. Parsing is linear in time and memory
and never recurses on nesting depth (10^6 instructions on a 2-core machine: 3.3 s and 380 MB when
statements recur, as in unrolled code; 11 s and 770 MB when every one is new; see
``bench/bench_frontend.py``).

For large files (libraries with hundreds of kernels), :mod:`engine.ptx.index`:

* ``index_kernels(text_or_path) -> list[KernelEntry]``: every kernel's name, line range, byte
  range and parameter count, found without parsing bodies (a 25 MB file: a fraction of a second);
* ``parse_kernel(text_or_path, name) -> Module``: only that kernel (plus the module-level
  declarations and the ``.func`` definitions it names), with the lines and columns of the file.
"""

from __future__ import annotations

import os

from engine.errors import PtxSyntaxError
from engine.ptx.index import KernelEntry, index_kernels, parse_kernel, read_ptx_bytes
from engine.ptx.parsed_module import Module
from engine.ptx.parser import parse_ptx

__all__ = ["KernelEntry", "index_kernels", "load_ptx", "parse_kernel", "parse_ptx"]


def load_ptx(path: str | os.PathLike[str]) -> Module:
    """Read and parse a PTX file. Unreadable or non-text files raise a WarplineError."""
    name = os.fspath(path)
    data = read_ptx_bytes(name)
    try:
        text = data.decode("utf-8-sig")  # tolerate a byte-order mark that editors add
    except UnicodeDecodeError as exc:
        # Point at the first bad byte: the line is one plus the newlines before it.
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise PtxSyntaxError("the file is not UTF-8 text", name, line, column,
                             data[exc.start : exc.start + 8].hex(" ")) from exc
    return parse_ptx(text, name)
