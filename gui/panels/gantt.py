"""Timeline panel: the simulation trace as per-subsystem Gantt charts (``gui.gantt.GanttView``,
which has its own colour-mode switch).

Bars carry 0-based static instruction indices (the simulator's); the window speaks 1-based
instruction numbers (the BLOCK table's), so this panel converts at its edges.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QSizePolicy, QSplitter, QVBoxLayout, QWidget

from engine.evaluation import Evaluation
from engine.evaluation.compare import BaselineFigures
from engine.names import display_name
from gui.gantt.widget import GanttView


class GanttPanel(QWidget):
    instructionClicked = Signal(int)   # 1-based instruction number

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = GanttView()
        self.view.setObjectName("ganttView")
        self.caption = QLabel()
        self.caption.setObjectName("ganttCaption")
        # a long demangled signature must not widen the panel (the splitter would jump)
        self.caption.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        # A pinned baseline is drawn above the current run, on the same (linked) cycle axis.
        self.baseline_view = GanttView()
        self.baseline_view.setObjectName("baselineGantt")
        self.baseline_caption = QLabel()
        self.baseline_caption.setObjectName("baselineCaption")
        self.baseline_caption.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.baseline_box = QWidget()
        box = QVBoxLayout(self.baseline_box)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.baseline_caption)
        box.addWidget(self.baseline_view, 1)
        self.baseline_box.hide()
        self.baseline_view.plot.setXLink(self.view.plot)
        # the current chart's legend serves both; the baseline's lanes get its rows
        self.baseline_view.hide_legend()
        self.baseline_view.set_lane_height(16)
        self.stack = QSplitter(Qt.Orientation.Vertical)
        self.stack.addWidget(self.baseline_box)
        self.stack.addWidget(self.view)
        self.stack.setChildrenCollapsible(False)
        self.baseline: Evaluation | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.caption)
        layout.addWidget(self.stack, 1)
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
        kernel = result.state.kernel
        self.view.param_prefix = f"{kernel}_param_" if kernel else ""
        self.view.set_clock(result.clock_mhz)
        if result.timeline is not None:
            self.view.set_layout(sim.trace, result.trace_names, result.timeline)   # laid out off-thread
        else:
            self.view.set_trace(sim.trace, result.trace_names, None, float(sim.cycles),
                                subsystems=result.trace_units)
        self.redraws += 1
        self.shown_cycles = float(sim.cycles)
        self._share_axis()
        if self._selected:
            self.highlight(self._selected)   # a new trace: keep the user's selection outlined
        d = result.description
        self.caption.setToolTip(kernel)      # the mangled name on hover
        self.caption.setText(
            f"{display_name(kernel)} — pipeline simulation of one SM: {float(sim.cycles):,.0f} cycles, "
            f"{d.blocks} blocks "
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

    def set_baseline(self, baseline: Evaluation | BaselineFigures | None, label: str = "") -> None:
        """Draw ``baseline``'s trace above the current one (None: remove it). A baseline of stored
        figures (a session's, not recomputed) has no trace: only its caption is shown."""
        if isinstance(baseline, BaselineFigures):
            self.baseline = None
            self.baseline_view.clear()
            self.baseline_view.hide()
            cycles = "" if baseline.cycles is None else f": {baseline.cycles:,.0f} cycles"
            self.baseline_caption.setText(f"Baseline — {label}{cycles} (no trace to draw)")
            self.baseline_box.show()
            total = max(self.stack.height(), 200)
            line = self.baseline_caption.sizeHint().height() + 4
            self.stack.setSizes([line, total - line])
            self._share_axis()
            return
        self.baseline_view.show()
        self.baseline = baseline
        sim = baseline.simulation if baseline is not None else None
        if sim is None or sim.trace is None:
            self.baseline_view.clear()
            self.baseline_box.hide()
            self.baseline = None
            self._share_axis()
            return
        view = self.baseline_view
        view.param_prefix = self.view.param_prefix
        view.set_clock(baseline.clock_mhz)
        view.set_time_unit(self.view.time_unit())
        view.set_color_mode(self.view.color_mode())
        if baseline.timeline is not None:
            view.set_layout(sim.trace, baseline.trace_names, baseline.timeline)
        else:
            view.set_trace(sim.trace, baseline.trace_names, None, float(sim.cycles),
                           subsystems=baseline.trace_units)
        self.baseline_caption.setText(f"Baseline — {label}: {float(sim.cycles):,.0f} cycles")
        self.baseline_box.show()
        total = max(self.stack.height(), 200)
        self.stack.setSizes([int(total * 0.42), total - int(total * 0.42)])
        self._share_axis()

    def _share_axis(self) -> None:
        """Both charts span the longer run, so the linked axis can show either one whole."""
        runs = [float(r.simulation.cycles) for r in (self.result, self.baseline)
                if r is not None and r.simulation is not None]
        if not runs:
            return
        c = max(max(runs), 1.0)
        views = [self.view] + ([self.baseline_view] if self.baseline is not None else [])
        for view in views:
            view.plot.getViewBox().setLimits(xMin=-0.05 * c, xMax=1.05 * c)
        # each view explicitly: a range the link already propagated while the other view's old
        # limits clamped it is not sent again
        for view in views:
            view.plot.getViewBox().setXRange(0.0, c, padding=0.01)
