"""Timeline panel: the simulation trace as per-subsystem Gantt charts (``gui.gantt.GanttView``,
which has its own colour-mode switch).

Bars carry 0-based static instruction indices (the simulator's); the window speaks 1-based
instruction numbers (the BLOCK table's), so this panel converts at its edges.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from engine.evaluation import Evaluation
from gui.gantt.widget import GanttView


class GanttPanel(QWidget):
    instructionClicked = Signal(int)   # 1-based instruction number

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = GanttView()
        self.view.setObjectName("ganttView")
        self.caption = QLabel()
        self.caption.setObjectName("ganttCaption")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.caption)
        layout.addWidget(self.view, 1)
        self.result: Evaluation | None = None
        self._selected: set[int] = set()
        self.redraws = 0             # how many traces were drawn (tests and the benchmark read it)
        self.shown_cycles: float | None = None
        self.view.instructionClicked.connect(lambda i: self.instructionClicked.emit(int(i) + 1))

    def show_result(self, result: Evaluation) -> bool:
        """Draw the result's trace; False when there was nothing new to draw."""
        sim = result.simulation
        if sim is None or sim.trace is None:
            self.caption.setText(result.errors.get("simulation", "no simulation"))
            return False
        if self.result is not None and self.result.simulation is sim:
            return False   # a later result of the same state repeats the trace: nothing to redraw
        self.result = result
        if result.timeline is not None:
            self.view.set_layout(sim.trace, result.trace_names, result.timeline)   # laid out off-thread
        else:
            self.view.set_trace(sim.trace, result.trace_names, None, float(sim.cycles),
                                subsystems=result.trace_units)
        self.redraws += 1
        self.shown_cycles = float(sim.cycles)
        if self._selected:
            self.highlight(self._selected)   # a new trace: keep the user's selection outlined
        d = result.description
        self.caption.setText(
            f"Pipeline simulation of one SM: {float(sim.cycles):,.0f} cycles, {d.blocks} blocks "
            f"({result.resident_blocks} resident), {d.warps_per_block} warps/block, policy {sim.policy}"
            + (" — trace truncated" if sim.trace.truncated else ""))
        return True

    def highlight(self, instructions: set[int]) -> None:
        """Highlight 1-based instructions and the stretch of time in which they ran."""
        self._selected = set(instructions)
        zero_based = {i - 1 for i in instructions}
        self.view.highlight_instructions(zero_based)
        if self.result is None or self.result.simulation is None or not instructions:
            return
        issues = self.result.simulation.trace.issues
        mask = np.isin(issues["instr"], np.fromiter(zero_based, dtype=np.int64))
        if mask.any():
            self.view.highlight_range(float(issues["issue"][mask].min()), float(issues["complete"][mask].max()))
