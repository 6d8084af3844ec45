"""Parse every PTX file of the samples and of the generated corpus (one test per file).

The corpus (``tests/corpus/<frontend>/...ptx``) is written by ``tools/gen_corpus.py`` from nvcc,
NVRTC, numba-cuda and Triton; this test accepts whatever is there. When the analysis modules are
importable, every kernel also gets a CFG and a def-use graph, so that a parser change that breaks
them shows up here, on real compiler output, and not only in hand-written snippets.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from pathlib import Path

import pytest

from engine.ptx import load_ptx

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
FILES = sorted([*(ROOT / "samples").rglob("*.ptx"), *CORPUS.rglob("*.ptx")])

try:
    from engine.analysis.cfg import build_cfg
    from engine.analysis.defuse import build_def_use
except ImportError:  # the analysis package is optional for this test
    build_cfg = build_def_use = None


# Both tests read every file; parse each once (the tests only read the modules).
_load = functools.cache(load_ptx)


def _group(path: Path) -> str:
    """``tests/corpus/triton/x.ptx`` -> ``corpus/triton``; ``samples/ptx/x.ptx`` -> ``samples/ptx``."""
    rel = path.relative_to(ROOT)
    if rel.parts[0] == "tests":
        rel = rel.relative_to("tests")
    return "/".join(rel.parts[:2]) if len(rel.parts) > 2 else rel.parts[0]


def test_corpus_inventory() -> None:
    """Print files and kernels per front-end directory (visible with ``-s``)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for path in FILES:
        counts[_group(path)][0] += 1
        counts[_group(path)][1] += len(_load(path).kernels)
    for group, (files, kernels) in sorted(counts.items()):
        print(f"{group:28s} {files:4d} files {kernels:5d} kernels")
    if CORPUS.is_dir():  # tools/gen_corpus.py made it: an empty corpus means generation broke
        assert any(CORPUS.rglob("*.ptx")), f"{CORPUS} exists but holds no .ptx file"


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_corpus_file_parses(path: Path) -> None:
    module = _load(path)
    assert module.version is not None and module.target, "no .version/.target directive"
    for function in module.functions:
        if not function.is_definition:
            continue
        body = function.instructions
        assert [i.index for i in body] == list(range(len(body)))
        for instr in body:
            if instr.opcode == "bra":  # brx targets name a .branchtargets list instead
                assert instr.branch_target in function.labels, f"{function.name}: {instr.text}"
        if build_cfg is not None and body:
            cfg = build_cfg(function)
            assert cfg is not None
            assert build_def_use(function, cfg) is not None
