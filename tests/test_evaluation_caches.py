"""The evaluator's caches are keyed by ``id()`` of an analysis, function or description: an
entry must never answer for another object that got the same id after the first was freed
(a Many-BSP figure of one kernel once showed in the window for another, 12,442 against 116,151
cycles, when the full suite's worker had freed many analyses)."""

from __future__ import annotations

import gc
from pathlib import Path

from engine.evaluation import Evaluator, state_for
from engine.evaluation.core import _held, _hold
from engine.inputs import resolve_inputs

ROOT = Path(__file__).resolve().parents[1]


class _Owner:
    pass


def test_an_entry_answers_only_for_the_object_it_was_made_for():
    cache: dict = {}
    first = _Owner()
    key = (id(first), "x")
    assert _hold(cache, key, first, 1) == 1
    assert _held(cache, key, first) == 1
    other = _Owner()
    assert _held(cache, key, other) is None          # same key (as after an id is reused): no answer


def test_every_id_keyed_cache_holds_the_object_of_its_key():
    path = ROOT / "samples" / "ptx" / "copy.sm_90.ptx"
    inputs = resolve_inputs(path, profile="h100", use_ptxas=False)
    ev = Evaluator()
    ev.evaluate(inputs, state_for(inputs), trace=False)
    gc.collect()
    for cache in (ev._memory, ev._descriptions, ev._tables, ev._completions):
        assert cache
        for key, (owner, _) in cache.items():
            assert id(owner) == key[0]       # alive (held here), so no other object has this id
