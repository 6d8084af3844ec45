"""Timeline panel: the simulation trace as per-subsystem Gantt charts (``gui.gantt.GanttView``,
which has its own colour-mode switch).

Bars carry 0-based static instruction indices (the simulator's); the window speaks 1-based
instruction numbers (the BLOCK table's), so this panel converts at its edges.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QSplitter, QVBoxLayout, QWidget

from engine.evaluation import Evaluation
from engine.evaluation.caveats import figure_caveats
from engine.evaluation.compare import BaselineFigures
from engine.names import display_name
from gui.elided import ElidedLabel
from gui.gantt.timeseries import TimeSeriesPanel
from gui.gantt.widget import GanttView

BASELINE_SHARE = 0.45      # of the two charts' lane height, the baseline's
CURRENT_EXTRA_PX = 170     # toolbar, time axis and legend of a chart not laid out yet
BASELINE_EXTRA_PX = 12     # the baseline chart's margins (it has no toolbar, axis or legend)


class GanttPanel(QWidget):
    instructionClicked = Signal(int)   # 1-based instruction number

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = GanttView()
        self.view.setObjectName("ganttView")
        # a long demangled signature must not widen the panel (the splitter would jump): elided
        self.caption = ElidedLabel()
        self.caption.setObjectName("ganttCaption")
        # A pinned baseline is drawn above the current run, on the same (linked) cycle axis, with
        # the current chart's colours, unit and collapsed groups (its toolbar and time axis would
        # only repeat the current chart's and take the lanes' height).
        self.baseline_view = GanttView()
        self.baseline_view.setObjectName("baselineGantt")
        self.baseline_view.toolbar.hide()
        self.baseline_view.plot.showAxis("bottom", False)
        self.baseline_caption = ElidedLabel()
        self.baseline_caption.setObjectName("baselineCaption")
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
        # the time series under the chart, on its time axis (off until asked for: they take the
        # lanes' room)
        self.series = TimeSeriesPanel()
        self.series.link_to(self.view.plot)
        self.series.setMinimumHeight(170)      # three plots a reader can tell apart
        self.series.hide()
        self.stack.addWidget(self.series)
        self.stack.setChildrenCollapsible(False)
        self.series_box = QCheckBox("time series")
        self.series_box.setObjectName("timeSeriesBox")
        self.series_box.setToolTip("Under the chart, on its time axis: DRAM, L2 and L1 bytes per cycle, the active "
                                   "warps and the share of warps per stall cause")
        self.series_box.toggled.connect(self.show_series)
        self.baseline: Evaluation | None = None
        # in the chart's toolbar, beside "collapse warps" (a row of its own would take the lanes' room)
        bar = self.view.toolbar.layout()
        bar.insertWidget(bar.indexOf(self.view.groups.groups_button) + 1, self.series_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.caption)
        layout.addWidget(self.stack, 1)
        self.result: Evaluation | None = None
        self._selected: set[int] = set()
        self.redraws = 0             # how many traces were drawn (tests and the benchmark read it)
        self.shown_cycles: float | None = None
        self.view.instructionClicked.connect(lambda i: self.instructionClicked.emit(int(i) + 1))
        self.view.optionsChanged.connect(self._follow_options)
        self._series_pending: Evaluation | None = None
        self.view.painted.connect(self._chart_painted)

    def _chart_painted(self) -> None:
        pending, self._series_pending = self._series_pending, None
        if pending is not None:
            self.series.set_result(pending)

    def show_series(self, on: bool) -> None:
        """Show or hide the time series under the chart (they take a third of its height)."""
        if self.series_box.isChecked() != on:
            self.series_box.setChecked(on)       # (calls back here)
            return
        self.series.setVisible(on)
        if on:
            sizes = self.stack.sizes()
            total = sum(sizes)
            share = max(int(total * 0.36), min(150, total // 2))
            rest = total - share
            top = sizes[0] if self.baseline_box.isVisible() else 0
            self.stack.setSizes([top, max(rest - top, 100), share])
            if self.result is not None:
                self.series.set_result(self.result)

    def _follow_options(self) -> None:
        """The baseline chart shows what the current chart's toolbar says (the same warp groups
        where its groups have the same names)."""
        view, base = self.view, self.baseline_view
        base.set_color_mode(view.color_mode())
        base.time_axis.set_unit(view.time_axis.unit())
        if view.groups.collapse_is_automatic():
            base.groups.set_collapse_auto()          # decided by its own height, as the current chart's
        else:
            base.groups.set_all_collapsed(view.groups.collapse_box.isChecked())
        base.groups.set_hidden_groups(view.groups.hidden_groups())

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
        self.view.time_axis.set_clock(result.clock_mhz)
        if result.timeline is not None:
            self.view.set_layout(sim.trace, result.trace_names, result.timeline)   # laid out off-thread
        else:
            self.view.set_trace(sim.trace, result.trace_names, None, float(sim.cycles),
                                subsystems=result.trace_units)
        self.redraws += 1
        self.shown_cycles = float(sim.cycles)
        # the series follow once the chart has painted the new trace (their job would compete with
        # that paint for the interpreter); hidden, they are not computed at all
        self._series_pending = result
        self._share_axis()
        if self._selected:
            self.highlight(self._selected)   # a new trace: keep the user's selection outlined
        d = result.description
        self.caption.setToolTip(kernel)      # the mangled name on hover
        caveats = figure_caveats(result)
        self.caption.setText(
            f"{display_name(kernel)} — pipeline simulation of one SM: {caveats.mark(f'{float(sim.cycles):,.0f}')} "
            f"cycles, {d.blocks} blocks "
            f"({result.resident_blocks} resident), {d.warps_per_block} warps/block, policy {sim.policy}"
            + (" — trace truncated" if sim.trace.truncated else "") + caveats.title_suffix())
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
            series = self.stack.sizes()[2] if self.series.isVisible() else 0
            total = max(self.stack.height() - series, 200)
            line = self.baseline_caption.sizeHint().height() + 4
            self.stack.setSizes([line, total - line, series])
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
        view.time_axis.set_clock(baseline.clock_mhz)
        self._follow_options()
        if baseline.timeline is not None:
            view.set_layout(sim.trace, baseline.trace_names, baseline.timeline)
        else:
            view.set_trace(sim.trace, baseline.trace_names, None, float(sim.cycles),
                           subsystems=baseline.trace_units)
        self.baseline_caption.setText(f"Baseline — {label}: {float(sim.cycles):,.0f} cycles")
        self.baseline_box.show()
        self.stack.setSizes(self._stack_sizes())
        self._share_axis()

    def _stack_sizes(self) -> list[int]:
        """Heights of the baseline and current charts that give their lanes about the same room:
        the current chart also holds the toolbar, the time axis and the legend."""
        series = self.stack.sizes()[2] if self.series.isVisible() else 0
        total = max(self.stack.height() - series, 200)
        vb = self.view.plot.getViewBox()
        current_extra = self.view.height() - vb.height() if self.view.isVisible() and vb.height() > 1 \
            else CURRENT_EXTRA_PX
        base_extra = self.baseline_caption.sizeHint().height() + BASELINE_EXTRA_PX
        lanes = max(total - current_extra - base_extra, 0)
        base = int(base_extra + lanes * BASELINE_SHARE)
        return [base, total - base, series]

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
