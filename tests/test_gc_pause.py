"""The collector pause around parsing, analysis and evaluation (engine/ptx/gc_pause.py)."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

from engine.ptx.gc_pause import paused_gc, pauses_in_progress

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "ptx" / "copy.sm_90.ptx"


def test_overlapping_pauses_in_two_threads_switch_the_collector_on_once_the_last_ends():
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        entered, release = threading.Event(), threading.Event()

        def other() -> None:
            with paused_gc():
                entered.set()
                release.wait(10)

        worker = threading.Thread(target=other)
        with paused_gc():
            assert not gc.isenabled() and pauses_in_progress() == 1
            worker.start()
            assert entered.wait(10)
            assert pauses_in_progress() == 2
        # the first pause ended while the other thread's still runs: still off
        assert not gc.isenabled() and pauses_in_progress() == 1
        release.set()
        worker.join(10)
        assert gc.isenabled() and pauses_in_progress() == 0
    finally:
        if not was_enabled:
            gc.disable()


def test_a_collector_switched_off_by_its_owner_stays_off():
    was_enabled = gc.isenabled()
    gc.disable()                                    # as the window does (gui/main_thread_gc.py)
    try:
        with paused_gc(promote=True):
            with paused_gc():
                pass
        assert not gc.isenabled()
    finally:
        if was_enabled:
            gc.enable()


def test_an_exception_ends_the_pause():
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        try:
            with paused_gc():
                raise ValueError("stop")
        except ValueError:
            pass
        assert gc.isenabled() and pauses_in_progress() == 0
    finally:
        if not was_enabled:
            gc.disable()


def test_an_evaluation_runs_with_the_collector_paused(monkeypatch):
    from engine.evaluation import core

    seen: list[tuple[bool, int]] = []
    original = core.Evaluator._evaluate

    def spy(self, *args, **kwargs):
        seen.append((gc.isenabled(), pauses_in_progress()))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(core.Evaluator, "_evaluate", spy)
    from engine.inputs import resolve_inputs

    inputs = resolve_inputs(SAMPLE, profile="h100")
    core.Evaluator().evaluate(inputs, only=["roofline"], trace=False)
    assert seen == [(False, 1)]
