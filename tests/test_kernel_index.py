"""The kernel index (``engine.ptx.index``) against the full parser, and parsing one kernel."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.errors import PtxSyntaxError, WarplineError
from engine.ptx import KernelEntry, index_kernels, parse_kernel, parse_ptx
from tests import ptx_gen
from tests.test_corpus import _load  # shares the parsed files with test_corpus

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted([*(ROOT / "samples" / "ptx").rglob("*.ptx"), *(ROOT / "tests" / "corpus").rglob("*.ptx"),
                *(ROOT / "tests" / "data").rglob("*.ptx")])


def _signature(function) -> str:
    return repr((function.name, function.params, function.labels, function.registers,
                 function.variables, function.directives, function.location,
                 function.end_location, function.instructions))


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_index_agrees_with_the_parser(path: Path) -> None:
    module = _load(path)
    entries = index_kernels(path)
    kernels = module.kernels
    assert [e.name for e in entries] == [k.name for k in kernels]
    data = path.read_bytes()
    for entry, kernel in zip(entries, kernels, strict=True):
        assert (entry.line, entry.column) == (kernel.location.line, kernel.location.column)
        assert entry.end_line == kernel.end_location.line
        assert entry.param_count == len(kernel.params)
        assert data[entry.end - 1 : entry.end] == b"}"
        assert data.count(b"\n", 0, entry.start) + 1 == entry.line
    if entries:  # one kernel parsed alone equals the same kernel of the whole file
        last = entries[-1].name
        alone = parse_kernel(path, last)
        assert [k.name for k in alone.kernels] == [last]
        assert _signature(alone.kernel(last)) == _signature(module.kernel(last))
        assert (alone.variables, alone.files, alone.target) == (module.variables, module.files, module.target)


def test_library_kernel_keeps_the_functions_it_calls(tmp_path: Path) -> None:
    text = ptx_gen.library(kernels=12, instructions=120, funcs=4)
    path = tmp_path / "lib.ptx"
    path.write_text(text)
    entries = index_kernels(path)
    assert len(entries) == 12 and all(isinstance(e, KernelEntry) for e in entries)
    assert all(e.param_count == 3 for e in entries)
    # Text, bytes and path give the same index.
    assert index_kernels(text) == entries == index_kernels(text.encode())
    full = parse_ptx(text, str(path))
    name = entries[5].name
    alone = parse_kernel(path, name)
    defined = sorted(f.name for f in alone.functions if f.is_definition)
    assert defined == sorted([name, "helper_1"])  # kernel 5 calls helper_(5 % 4)
    assert _signature(alone.kernel(name)) == _signature(full.kernel(name))
    assert alone.variables == full.variables


def test_unknown_kernel_names_the_known_ones() -> None:
    text = ptx_gen.library(kernels=3, instructions=40, funcs=1)
    with pytest.raises(WarplineError, match="no kernel named 'nope'.*library_kernel"):
        parse_kernel(text, "nope")


@pytest.mark.parametrize(("damage", "line"), [
    (lambda t: t.replace("\tret;\n}\n", "\tret;\n}\n}\n", 1), None),      # a stray '}'
    (lambda t: t[: t.rindex("}")], None),                                  # a missing '}'
    (lambda t: t.replace(".visible .entry", "/* .visible .entry", 1), 1),  # unterminated comment
])
def test_structural_damage_is_a_syntax_error(damage, line) -> None:
    text = damage(ptx_gen.library(kernels=3, instructions=40, funcs=1))
    with pytest.raises(PtxSyntaxError) as info:
        index_kernels(text, "lib.ptx")
    assert info.value.file == "lib.ptx" and info.value.line >= 1


def test_not_utf8_is_reported_at_its_line() -> None:
    data = ptx_gen.library(kernels=2, instructions=40, funcs=1).encode()
    at = data.index(b"add.s32")
    data = data[:at] + b"\xff" + data[at:]
    with pytest.raises(PtxSyntaxError, match="not UTF-8") as info:
        index_kernels(data, "lib.ptx")
    assert info.value.line == data.count(b"\n", 0, at) + 1


def test_declarations_and_sections_are_not_kernels() -> None:
    text = (".version 8.0\n.target sm_90\n.address_size 64\n"
            ".extern .entry declared(.param .u32 a);\n"
            ".section .nv.info\n"
            ".visible .entry k(.param .u32 a, .param .u64 b)\n.maxntid 128, 1, 1\n{\nret;\n}\n"
            "// .entry in a comment { \n"
            ".section .debug_str\n{\n$L__info_string0:\n.b8 95\n}\n")
    entries = index_kernels(text)
    assert [(e.name, e.param_count, e.line, e.end_line) for e in entries] == [("k", 2, 6, 10)]
    assert parse_kernel(text, "k").kernel("k").directives == {"maxntid": (128, 1, 1)}
