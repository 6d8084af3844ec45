"""Cyclic garbage is collected on the GUI thread only (gui/main_thread_gc.py)."""

from __future__ import annotations

import gc

from gui import main_thread_gc


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_windows_turn_automatic_collection_off_and_the_gui_thread_collects(qapp, qtbot):
    was_enabled = gc.isenabled()
    try:
        collector = main_thread_gc.install(qapp)
        assert main_thread_gc.install(qapp) is collector          # one per application
        assert not gc.isenabled() and collector.timer.isActive()
        gc.collect()
        for _ in range(collector.thresholds[0] + 10):                 # cross generation 0's threshold
            _Cycle()
        assert gc.get_count()[0] > collector.thresholds[0]
        collector.collect_due()
        assert gc.get_count()[0] < collector.thresholds[0]
    finally:
        if was_enabled:
            gc.enable()


def test_the_gui_thread_waits_while_a_computation_has_the_collector_paused(qapp, qtbot):
    from engine.ptx.gc_pause import paused_gc

    was_enabled = gc.isenabled()
    try:
        collector = main_thread_gc.install(qapp)
        gc.collect()
        cycles = [_Cycle() for _ in range(collector.thresholds[0] + 10)]
        del cycles
        with paused_gc():
            collector.collect_due()
            assert gc.get_count()[0] > collector.thresholds[0]   # nothing collected meanwhile
        collector.collect_due()
        assert gc.get_count()[0] < collector.thresholds[0]
    finally:
        if was_enabled:
            gc.enable()
