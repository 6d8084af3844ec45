"""The main window: menus, docks, the error banner, the status bar, and the wiring between the
session (model) and the panels (views). It holds no state of its own beyond what Qt needs."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from PySide6.QtCore import QEvent, QSettings, QSize, Qt, QTimer, QUrl
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QGuiApplication,
    QKeySequence,
    QMoveEvent,
    QResizeEvent,
    QShortcut,
)
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QFileDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from engine.errors import PtxSyntaxError, WarplineError
from engine.evaluation import Evaluation, sweep_csv
from engine.evaluation.caveats import figure_caveats
from engine.evaluation.compare import BaselineFigures
from engine.names import display_name
from engine.ptx.summary import KernelSummary
from engine.session_file import SUFFIX, MissingPtxError
from gui import main_thread_gc
from gui.baseline import Baseline
from gui.gantt.widget import DEFAULT_LANE_PX
from gui.kernel_picker import KernelPicker
from gui.loader import KernelList, LoadRequest, list_kernels, load_kernel
from gui.panels.diff import DiffPanel
from gui.panels.gantt import GanttPanel
from gui.panels.inputs import InputsPanel
from gui.panels.results import ResultsPanel
from gui.panels.sass import SassPanel
from gui.panels.source import SourcePanel
from gui.panels.tables import BlockTableView, SuperstepView
from gui.session import Session
from gui.theme import PALETTE_EVENTS
from gui.theme import current as current_theme
from gui.tour import QuickStartTour, Step

APP_NAME = "Warpline"
MAX_RECENT = 8
# Layout: the window takes at most this share of the screen's free area, never more than the
# preferred size; below COMPACT_WIDTH the inputs and results share one tabbed dock so the chart and
# the tables keep their width (1366 x 768 fits with nothing clipped).
SCREEN_SHARE = 0.9
PREFERRED_SIZE = (1800, 1050)
MINIMUM_SIZE = (1000, 620)
COMPACT_WIDTH = 1500
LAYOUT_VERSION = 2             # bump when docks change: an older saved state is then ignored
LAYOUT_KEY = "layout"
REDO_KEYS = [QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")]
SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "ptx" / "hotspot.sm_90.ptx"


class ErrorBanner(QFrame):
    """A dismissible red strip above the tables: errors stay visible without a modal dialog."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("errorBanner")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.clicked.connect(self.hide)
        # what the user can do about the error, when there is something (Locate… a missing file)
        self.action_button = QToolButton()
        self.action_button.setObjectName("bannerAction")
        self.action_button.hide()
        self.action_button.clicked.connect(self._act)
        self._action: Callable[[], None] | None = None
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.action_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.restyle()
        self.hide()

    def restyle(self) -> None:
        """Light red with dark text, or dark red with light text on a dark desktop (the
        application's palette: the banner's own is the style sheet's, and a widget with a style
        sheet is not told of palette changes: the window calls this on its own)."""
        t = current_theme()
        sheet = (f"#errorBanner {{ background: {t.banner_fill}; border: 1px solid {t.banner_border}; }}"
                 f" #errorBanner QLabel, #errorBanner QToolButton {{ color: {t.banner_text}; }}")
        if sheet != self.styleSheet():
            self.setStyleSheet(sheet)

    def show_error(self, text: str, action: tuple[str, Callable[[], None]] | None = None) -> None:
        """Show ``text``; ``action``: (button text, what it does) offered beside it."""
        self.label.setText(text)
        self._action = action[1] if action is not None else None
        self.action_button.setText(action[0] if action is not None else "")
        self.action_button.setVisible(action is not None)
        self.show()

    def _act(self) -> None:
        if self._action is not None:
            self._action()


class SizeDialog(QDialog):
    """Size, range and title of a timeline export (the format comes from the file name)."""

    def __init__(self, parent: QWidget, width: int, height: int, what: str = "timeline") -> None:
        """``what``: "timeline" (asks for the cycles: the whole run or the visible range) or
        "curves"."""
        super().__init__(parent)
        self.setWindowTitle(f"Export the {'occupancy curves' if what == 'curves' else what}")
        self.width_spin = QSpinBox()
        self.height_spin = QSpinBox()
        for spin, value in ((self.width_spin, width), (self.height_spin, height)):
            spin.setRange(64, 16384)
            spin.setValue(value)
            spin.setSuffix(" px")
        self.range_combo = QComboBox()
        self.range_combo.addItems(["the whole run", "the visible range"])
        self.title_check = QCheckBox("Title line (kernel, GPU, launch, predicted time)" if what == "timeline"
                                     else "Title line (kernel, GPU, launch)")
        self.title_check.setChecked(True)
        form = QFormLayout(self)
        form.addRow("Width", self.width_spin)
        form.addRow("Height", self.height_spin)
        form.addRow("Cycles", self.range_combo)
        form.setRowVisible(self.range_combo, what == "timeline")
        form.addRow(self.title_check)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)


@contextmanager
def busy_cursor() -> Iterator[None]:
    """A wait cursor while the UI thread parses (a 25,000-line PTX file takes about a second)."""
    QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
    try:
        yield
    finally:
        QApplication.restoreOverrideCursor()


class MainWindow(QMainWindow):
    def __init__(self, settings: QSettings | None = None) -> None:
        super().__init__()
        # the session's worker thread must never collect a window's Qt garbage
        main_thread_gc.install(QApplication.instance())
        self.settings = settings or QSettings(APP_NAME, APP_NAME)
        self.session = Session(self)
        self.baseline = Baseline(self)
        self.setAcceptDrops(True)
        self.setMinimumSize(*MINIMUM_SIZE)

        self.banner = ErrorBanner()
        self._model_banner = False
        self.block_view = BlockTableView(self.session)
        self.superstep_view = SuperstepView(self.session)
        self.gantt = GanttPanel()
        self.source_panel = SourcePanel()
        self.side_tabs = QTabWidget()
        self.side_tabs.addTab(self.superstep_view, "Supersteps")
        self.side_tabs.addTab(self.source_panel, "Source")
        self.sass_panel = SassPanel()
        self.side_tabs.addTab(self.sass_panel, "SASS")
        self.side_tabs.setTabToolTip(self.side_tabs.indexOf(self.sass_panel),
                                     "The SASS ptxas makes of the kernel, each line with its PTX instruction and its "
                                     "predicted warp-cycles; import Nsight Compute source counters to compare")
        self.diff_panel = DiffPanel()
        self.side_tabs.addTab(self.diff_panel, "Diff")
        self.side_tabs.setTabToolTip(self.side_tabs.indexOf(self.diff_panel),
                                     "The instructions of the comparison (baseline or a second kernel) aligned "
                                     "with the current kernel's, changed rows and cells marked")
        top = QSplitter(Qt.Orientation.Horizontal)
        top.setObjectName("tableSplit")
        top.addWidget(self.block_view)
        top.addWidget(self.side_tabs)
        top.setStretchFactor(0, 3)
        top.setStretchFactor(1, 2)
        top.setChildrenCollapsible(False)
        split = QSplitter(Qt.Orientation.Vertical)
        split.setObjectName("chartSplit")
        split.addWidget(top)
        split.addWidget(self.gantt)
        # the chart first: it takes the larger share and any height the window gains
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setChildrenCollapsible(False)
        self.table_split, self.chart_split = top, split
        central = QWidget()
        vbox = QVBoxLayout(central)
        vbox.setContentsMargins(2, 2, 2, 2)
        vbox.addWidget(self.banner)
        vbox.addWidget(split, 1)
        self.setCentralWidget(central)

        self.inputs_panel = InputsPanel(self.session)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.inputs_panel)
        self.inputs_dock = self._dock("Inputs", scroll, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.results_panel = ResultsPanel(self.session)
        self.results_dock = self._dock("Results", self.results_panel, Qt.DockWidgetArea.RightDockWidgetArea)
        self.inputs_panel.setMinimumWidth(280)
        scroll.setMinimumWidth(300)
        self.results_panel.setMinimumWidth(300)

        self.progress = QProgressBar()
        self.progress.setMaximumWidth(180)
        self.progress.setRange(0, 100)
        self.progress.hide()
        self.statusBar().addPermanentWidget(self.progress)
        self._build_load_status()
        # Show progress only for a recomputation that lasts: quick edits would make it flicker.
        self._progress_delay = QTimer(self)
        self._progress_delay.setSingleShot(True)
        self._progress_delay.setInterval(250)
        self._progress_delay.timeout.connect(lambda: self.progress.setVisible(self.session.busy))

        self._build_menus()
        self._connect()
        self._update_title()
        self._layout_saver = QTimer(self)
        self._layout_saver.setSingleShot(True)
        self._layout_saver.setInterval(400)
        self._layout_saver.timeout.connect(self.save_layout)
        self._default_header = self.block_view.horizontalHeader().saveState()
        self.restore_layout()
        self._watch_layout()

    # ------------------------------------------------------------------ construction

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"{title.lower()}Dock")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    # ------------------------------------------------------------------ layout

    def _available(self) -> QSize:
        screen = self.screen() or QGuiApplication.primaryScreen()
        return screen.availableGeometry().size() if screen is not None else QSize(*PREFERRED_SIZE)

    def fit_to_screen(self) -> None:
        """At most SCREEN_SHARE of the screen's free area, at most the preferred size."""
        avail = self._available()
        self.setMinimumSize(min(MINIMUM_SIZE[0], avail.width()), min(MINIMUM_SIZE[1], avail.height()))
        self.resize(max(self.minimumWidth(), min(PREFERRED_SIZE[0], int(avail.width() * SCREEN_SHARE))),
                    max(self.minimumHeight(), min(PREFERRED_SIZE[1], int(avail.height() * SCREEN_SHARE))))

    def apply_default_layout(self) -> None:
        """Docks, splitters, BLOCK columns and chart lanes as a fresh install has them (for the
        window's current width: the inputs and results share a tabbed dock on small screens)."""
        compact = self.width() < COMPACT_WIDTH
        for dock in (self.inputs_dock, self.results_dock):
            self.removeDockWidget(dock)
            dock.setFloating(False)
        if compact:
            # results first: the first dock of a tab group is the one shown
            self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.results_dock)
            self.tabifyDockWidget(self.results_dock, self.inputs_dock)
        else:
            self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.inputs_dock)
            self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.results_dock)
        for dock in (self.inputs_dock, self.results_dock):
            dock.show()
        self.results_dock.raise_()
        self.block_view.reset_columns(self._default_header)
        self.gantt.view.set_lane_height(DEFAULT_LANE_PX)
        self.gantt.view.set_collapse_auto()
        # Dock and splitter sizes only stick once the window is laid out: after one event loop turn.
        QTimer.singleShot(0, lambda: self._default_sizes(compact))

    def _default_sizes(self, compact: bool) -> None:
        self.results_dock.raise_()
        width = self.width()
        if compact:
            self.resizeDocks([self.results_dock], [max(380, int(width * 0.3))], Qt.Orientation.Horizontal)
        else:
            self.resizeDocks([self.inputs_dock, self.results_dock], [320, max(420, int(width * 0.25))],
                             Qt.Orientation.Horizontal)
        total_w = max(self.table_split.width(), 400)
        self.table_split.setSizes([int(total_w * 0.6), total_w - int(total_w * 0.6)])
        total_h = max(self.chart_split.height(), 300)
        self.chart_split.setSizes([int(total_h * 0.36), total_h - int(total_h * 0.36)])

    def save_layout(self) -> None:
        """Window geometry, docks, splitters, BLOCK columns and chart lanes into the settings."""
        if not self.isVisible():
            return
        s = self.settings
        s.beginGroup(LAYOUT_KEY)
        s.setValue("version", LAYOUT_VERSION)
        s.setValue("geometry", self.saveGeometry())
        s.setValue("state", self.saveState(LAYOUT_VERSION))
        s.setValue("tableSplit", self.table_split.saveState())
        s.setValue("chartSplit", self.chart_split.saveState())
        s.setValue("blockColumns", self.block_view.horizontalHeader().saveState())
        s.setValue("laneHeight", self.gantt.view.lane_height())
        view = self.gantt.view
        s.setValue("collapseWarps", "auto" if view.collapse_is_automatic() else
                   str(view.collapse_box.isChecked()).lower())
        s.endGroup()
        s.sync()

    def restore_layout(self) -> bool:
        """The saved layout, if there is one of this version and it fits the screen; else the
        default one. Returns whether a saved layout was used."""
        s = self.settings
        s.beginGroup(LAYOUT_KEY)
        try:
            saved = s.value("version") is not None and int(s.value("version")) == LAYOUT_VERSION
            if saved:
                saved = bool(self.restoreGeometry(s.value("geometry")) and
                             self.restoreState(s.value("state"), LAYOUT_VERSION))
            if saved:
                self.table_split.restoreState(s.value("tableSplit"))
                self.chart_split.restoreState(s.value("chartSplit"))
                self.block_view.restore_columns(s.value("blockColumns"))
                self.gantt.view.set_lane_height(int(s.value("laneHeight", DEFAULT_LANE_PX)))
                collapse = str(s.value("collapseWarps", "auto")).lower()
                if collapse == "auto":
                    self.gantt.view.set_collapse_auto()
                else:
                    self.gantt.view.set_all_collapsed(collapse == "true")
        except (TypeError, ValueError):
            saved = False
        finally:
            s.endGroup()
        avail = self._available()
        if not saved or self.width() > avail.width() or self.height() > avail.height():
            self.fit_to_screen()
        if not saved:
            self.apply_default_layout()
        return saved

    def reset_layout(self) -> None:
        """View › Reset layout: forget the saved layout and lay the window out afresh."""
        self.settings.remove(LAYOUT_KEY)
        self.fit_to_screen()
        self.apply_default_layout()
        self.show_message("Layout reset")

    def _watch_layout(self) -> None:
        """Save the layout shortly after it changes (no need to wait for the window to close)."""
        later = self._layout_saver.start
        for splitter in (self.table_split, self.chart_split):
            splitter.splitterMoved.connect(lambda *_: later())
        for dock in (self.inputs_dock, self.results_dock):
            dock.dockLocationChanged.connect(lambda *_: later())
            dock.topLevelChanged.connect(lambda *_: later())
            dock.visibilityChanged.connect(lambda *_: later())
        header = self.block_view.horizontalHeader()
        header.sectionResized.connect(lambda *_: later())
        header.sectionMoved.connect(lambda *_: later())
        self.block_view.columnsChanged.connect(later)
        self.gantt.view.lane_spin.valueChanged.connect(lambda *_: later())
        self.gantt.view.collapse_box.toggled.connect(lambda *_: later())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._layout_saver.start()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        if event.type() in PALETTE_EVENTS and hasattr(self, "banner"):
            self.banner.restyle()

    def moveEvent(self, event: QMoveEvent) -> None:
        super().moveEvent(event)
        self._layout_saver.start()

    def _action(self, menu, text: str, slot, shortcut=None) -> QAction:  # noqa: ANN001
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(shortcut)
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file = bar.addMenu("&File")
        self._action(file, "&Open PTX or session…", self._open_dialog, QKeySequence.StandardKey.Open)
        self.recent_menu = file.addMenu("Open &recent")
        file.addSeparator()
        self._action(file, "&Save session", self.save_session, QKeySequence.StandardKey.Save)
        self._action(file, "Save session &as…", lambda: self.save_session(ask=True),
                     QKeySequence.StandardKey.SaveAs)
        file.addSeparator()
        export = file.addMenu("&Export")
        self._action(export, "Timeline as &PNG, SVG or PDF…", self._export_png)
        self._action(export, "Timeline as &CSV (events and stalls)…", self._export_trace_csv)
        self._action(export, "&BLOCK table CSV…", self._export_block_csv)
        self._action(export, "&Supersteps CSV…", self._export_supersteps_csv)
        self._action(export, "Occupancy curves as P&NG, SVG or PDF…", self._export_curves_image)
        self._action(export, "Occupancy c&urves CSV…", self._export_curves_csv)
        self._action(export, "&Roofline as PNG, SVG or PDF…", self._export_roofline_image)
        self._action(export, "&Predictions CSV…", self._export_predictions_csv)
        file.addSeparator()
        self._action(file, "&Quit", self.close, QKeySequence.StandardKey.Quit)

        edit = bar.addMenu("&Edit")
        self.undo_action = self.session.undo_stack.createUndoAction(self, "&Undo")
        self.undo_action.setShortcut(QKeySequence.StandardKey.Undo)
        self.redo_action = self.session.undo_stack.createRedoAction(self, "&Redo")
        # Both common redo keys, each once: the platform's standard Redo list already holds
        # Ctrl+Shift+Z on Linux, and a sequence listed twice makes Qt call the shortcut ambiguous.
        self.redo_action.setShortcuts(REDO_KEYS)
        edit.addAction(self.undo_action)
        edit.addAction(self.redo_action)
        edit.addSeparator()
        self._action(edit, "Reset all model &overrides", self._reset_overrides)
        edit.addSeparator()
        self._action(edit, "&Pin as baseline", self.pin_baseline, QKeySequence("Ctrl+B"))
        self._action(edit, "Compare with another &kernel or file…", self._compare_dialog, QKeySequence("Ctrl+K"))
        self._action(edit, "&Clear the baseline", self.baseline.clear)

        view = bar.addMenu("&View")
        view.addAction(self.inputs_dock.toggleViewAction())
        view.addAction(self.results_dock.toggleViewAction())
        view.addSeparator()
        chart = self.gantt.view
        self._action(view, "Zoom &in (timeline)", lambda: chart.zoom(0.5), QKeySequence("Ctrl+="))
        self._action(view, "Zoom &out (timeline)", lambda: chart.zoom(2.0), QKeySequence("Ctrl+-"))
        self._action(view, "&Fit the whole run", chart.fit, QKeySequence("Ctrl+0"))
        self._action(view, "Time axis: cycles / &µs",
                     lambda: chart.set_time_unit("cycles" if chart.time_unit() == "us" else "us"),
                     QKeySequence("Ctrl+U"))
        view.addSeparator()
        self._action(view, "&Reset layout", self.reset_layout)
        help_menu = bar.addMenu("&Help")
        self._action(help_menu, "&Quick start (a tour of the window)", self.quick_start)
        self._action(help_menu, "&About Warpline", self._about)
        self._fill_recent()

    def _connect(self) -> None:
        s = self.session
        s.fileChanged.connect(self._update_title)
        s.dirtyChanged.connect(lambda _dirty: self._update_title())
        s.timelineChanged.connect(self._show_timeline)
        s.evaluationFinished.connect(self._show_finished)
        s.computeFailed.connect(self.show_error)
        s.busyChanged.connect(self._busy)
        s.undo_stack.indexChanged.connect(self._history_moved)
        s.progress.connect(self._progress)
        # The occupancy sweep waits for the chart to show a new partial result (see ComputeWorker).
        self.gantt.view.painted.connect(s.timeline_painted)
        for panel in (self.inputs_panel, self.results_panel, self.block_view, self.superstep_view):
            panel.message.connect(self.show_message)
        self.results_panel.error.connect(self.show_error)
        self.gantt.instructionClicked.connect(self.block_view.select_instruction)
        self.block_view.rowsSelected.connect(self.source_panel.select)
        s.timelineChanged.connect(self.source_panel.set_result)
        self.source_panel.instructionsPicked.connect(self._hot_spot_picked)
        s.fileChanged.connect(self._show_sources)
        self.baseline.changed.connect(self._baseline_changed)
        self.baseline.edited.connect(s.mark_unsaved)
        self.baseline.failedToCompare.connect(self.show_error)
        s.evaluationFinished.connect(self.diff_panel.set_current)
        s.fileChanged.connect(lambda: self.sass_panel.set_inputs(self.session.inputs))
        # (after the chart: the timeline part is painted first, the per-line figures follow)
        s.modelsChanged.connect(self.sass_panel.set_result)
        self.sass_panel.instructionPicked.connect(self.block_view.select_instruction)
        self.sass_panel.message.connect(self.show_message)
        self.block_view.rowsSelected.connect(self.sass_panel.mark_instructions)
        self.diff_panel.instructionPicked.connect(self.block_view.select_instruction)
        s.baselinesLoaded.connect(lambda entries: self.baseline.restore(entries, s.inputs, s.ptx_sha256))
        self.superstep_view.instructionsSelected.connect(self._superstep_selected)

    # ------------------------------------------------------------------ feedback

    def show_message(self, text: str) -> None:
        self.statusBar().showMessage(text, 8000)

    def show_error(self, text: str) -> None:
        self._model_banner = False   # an error of the user's action: stays until dismissed
        self.banner.show_error(text)
        self.statusBar().showMessage(text.splitlines()[0], 15000)

    def _history_moved(self, _index: int) -> None:
        """An undo or redo: a refused edit's message no longer applies to what is shown. (A
        model banner is redone by the evaluation that follows.)"""
        if not self._model_banner:
            self.banner.hide()
        self.statusBar().clearMessage()

    def _busy(self, busy: bool) -> None:
        if busy:
            self._progress_delay.start()
        else:
            self._progress_delay.stop()
            self.progress.hide()

    def _progress(self, fraction: float, what: str) -> None:
        self.progress.setValue(int(fraction * 100))
        self.progress.setFormat(f"{what} %p%")

    def _show_timeline(self, result: Evaluation) -> None:
        if not self.gantt.show_result(result):
            # No chart paint will acknowledge this timeline: the worker goes on after the paints
            # the panels have queued.
            self.session.timeline_painted()

    def _show_finished(self, result: Evaluation) -> None:
        # A model that cannot run on these inputs (a profile without Many-BSP figures, a block
        # that does not fit) is worth a banner; it clears itself once every model runs again.
        if result.errors:
            lines = [f"{stage}: {message}" for stage, message in result.errors.items()]
            self.banner.show_error("Some models could not run:\n" + "\n".join(lines))
            self._model_banner = True
        elif self._model_banner:
            self.banner.hide()
            self._model_banner = False

    def _superstep_selected(self, instructions: set[int]) -> None:
        self.block_view.model_.set_highlight(instructions)
        if instructions:
            self.block_view.select_instruction(min(instructions))
        self.gantt.highlight(instructions)
        # the whole superstep in the sources (the table selects its first row only)
        self.source_panel.select([r for r in self.block_view.model_.rows if r.index in instructions])

    def pin_baseline(self) -> bool:
        """Keep the current (finished) result as the baseline the chart and Compare tab show."""
        result = self.session.result
        if result is None or not result.finished or result.state != self.session.state:
            self.show_message("Nothing to pin yet: the models are still running")
            return False
        state = result.state
        launch = "×".join(str(x) for x in state.launch.grid) + " / " + "×".join(str(x) for x in state.launch.block)
        label = f"{display_name(state.kernel).split('(')[0]}, {state.profile}, {launch}, " \
                f"{result.resident_blocks} blocks/SM"
        edits = self.session.undo_stack.index()
        if edits:
            label += f", after {edits} edit{'s' if edits > 1 else ''}"
        self.baseline.pin(result, label, self.session.inputs.path, self.session.ptx_sha256)
        self.show_message(f"Pinned as baseline: {label}")
        return True

    def _baseline_changed(self, result: Evaluation | BaselineFigures | None) -> None:
        # a baseline restored from a session shows its stored figures until it is recomputed
        label = self.baseline.label + (f" ({self.baseline.note})" if self.baseline.note else "")
        self.gantt.set_baseline(result, label)
        self.results_panel.compare.set_baseline(result, label)
        self.diff_panel.set_baseline(result, self.baseline.label)
        self.session.set_baselines(self.baseline.entries())
        if isinstance(result, Evaluation) and self.baseline.label:
            self.show_message(f"Comparing with {self.baseline.label}")
        recomputed = isinstance(result, Evaluation) and self.baseline.stored is not None
        if result is not None and not recomputed:      # a recomputation keeps the tab the user is on
            self.results_dock.show()
            self.results_dock.raise_()
            self.results_panel.tabs.setCurrentWidget(self.results_panel.compare)

    def compare_with(self, path: str | os.PathLike[str], kernel: str | None = None) -> None:
        """Open ``path`` (another file, or another version of this one) as the comparison, on the
        current GPU profile (and launch, for a version of the same kernel): loaded and evaluated
        in the background, then drawn above the current run, listed in the Compare tab and
        aligned in the Diff tab."""
        state = self.session.state
        self.baseline.compare_with(path, profile=state.profile if state is not None else None, kernel=kernel,
                                   choose=lambda names: self.choose_kernel(names), like=state)
        self.show_message(f"Opening {Path(path).name} as the comparison…")

    def _compare_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Compare with", str(self._last_dir()),
                                              "PTX (*.ptx);;All files (*)")
        if path:
            self.compare_with(path)

    def _hot_spot_picked(self, instructions: list[int]) -> None:
        """A hot-spot row: its instructions outlined in the table and the chart, the first selected."""
        self.block_view.model_.set_highlight(set(instructions))
        self.block_view.select_instruction(instructions[0])
        self.gantt.highlight(set(instructions))

    def _show_sources(self) -> None:
        if self.session.inputs is not None:
            self.source_panel.show_inputs(self.session.inputs)

    def _update_title(self) -> None:
        inputs = self.session.inputs
        if inputs is None:
            self.setWindowTitle(APP_NAME)
            return
        dirty = "*" if self.session.dirty else ""
        self.setWindowTitle(f"{APP_NAME} — {inputs.path.name} [{display_name(inputs.kernel_name)}]{dirty}")

    # ------------------------------------------------------------------ opening

    def open_file(self, path: str | os.PathLike[str]) -> bool:
        """Open a PTX file or a session and return once it is open (scripts, tests, the tour: the
        window's own actions use :meth:`open_file_async`). A PTX file is indexed, the kernel asked
        for when it has several, and only that kernel parsed. On failure the error is shown (with
        the PTX line for a syntax error) and the current session stays as it was."""
        path = Path(path)
        self.session.cancel_load()      # a load still running must not replace this file later
        try:
            notes: list[str] = []
            if path.suffix == SUFFIX:
                with busy_cursor():
                    notes = self.session.open_session(path)
            else:
                # The kernel is asked for before anything is parsed or computed.
                with busy_cursor():
                    listing = list_kernels(path)
                kernel = self._pick_kernel(listing)
                with busy_cursor():
                    self.session.open_loaded(load_kernel(path, listing, kernel))
        except WarplineError as exc:
            self._show_open_error(path, exc)
            if isinstance(exc, MissingPtxError):
                self.offer_locate(exc)
            return False
        self._opened(path, notes)
        return True

    def open_file_async(self, path: str | os.PathLike[str],
                        on_done: Callable[[bool], None] | None = None) -> LoadRequest | None:
        """Open a file without blocking the window (File › Open, recent files, drops, the command
        line): the kernels are listed at once, the chooser shown when the file has several and no
        launch file names one, and the chosen kernel is parsed and resolved in the background,
        with its progress and a Cancel button (or Esc) in the status bar. A session file loads the
        same way (its kernel named by the session: nothing is asked). The session changes only
        when the load succeeds; errors are shown as :meth:`open_file` shows them. ``on_done(ok)``
        follows the outcome (False also when cancelled)."""
        path = Path(path)
        done = None if on_done is None else (lambda request: on_done(request.ok))
        if path.suffix == SUFFIX:
            return self.session.open_session_async(path, on_done=done)
        return self.session.open_ptx_async(path, choose=lambda names: self.choose_kernel(names), on_done=done)

    def cancel_load(self) -> bool:
        """Status bar › Cancel (Esc): stop opening; the open session stays as it was."""
        return self.session.cancel_load()

    def wait_for_load(self, timeout_ms: int = 120_000) -> bool:
        """Run the event loop until no file is being opened (scripts; the window never blocks on a
        load). False when it is still loading after ``timeout_ms``."""
        deadline = time.monotonic() + timeout_ms / 1000
        while self.session.loading and time.monotonic() < deadline:
            QApplication.processEvents()
            time.sleep(0.005)
        return not self.session.loading

    def _build_load_status(self) -> None:
        """What a file being opened shows in the status bar: the step, a busy bar, Cancel (Esc)."""
        self.load_status = QWidget()
        self.load_label = QLabel()
        self.load_label.setMaximumWidth(520)
        self.load_bar = QProgressBar()
        self.load_bar.setRange(0, 0)              # busy until a step says how far it is (the parse does)
        self.load_bar.setMaximumWidth(120)
        self.load_cancel = QToolButton()
        self.load_cancel.setText("Cancel")
        self.load_cancel.setToolTip("Stop opening this file (Esc); the open kernel stays as it is")
        self.load_cancel.clicked.connect(self.cancel_load)
        row = QHBoxLayout(self.load_status)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.load_label)
        row.addWidget(self.load_bar)
        row.addWidget(self.load_cancel)
        self.load_status.hide()
        self.statusBar().addPermanentWidget(self.load_status)
        self._cancel_key = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        self._cancel_key.setContext(Qt.ShortcutContext.WindowShortcut)
        self._cancel_key.setEnabled(False)        # Esc belongs to the editors unless a file loads
        self._cancel_key.activated.connect(self.cancel_load)
        loader = self.session.loader
        loader.stageChanged.connect(self._load_stage)
        loader.progressChanged.connect(self._load_progress)
        loader.busyChanged.connect(self._load_busy)
        loader.finished.connect(self._load_finished)

    def _load_stage(self, request: LoadRequest, text: str) -> None:
        self.load_label.setText(f"{text}…")
        self.load_label.setToolTip(str(request.path))
        self.load_bar.setRange(0, 0)              # busy until the step says how far it is

    def _load_progress(self, request: LoadRequest, fraction: float) -> None:
        # the parse of the chosen kernel: the bar fills as it goes
        self.load_bar.setRange(0, 1000)
        self.load_bar.setValue(round(1000 * fraction))

    def _load_busy(self, busy: bool) -> None:
        self.load_status.setVisible(busy)
        self._cancel_key.setEnabled(busy)

    def _load_finished(self, request: LoadRequest) -> None:
        path = request.path
        restore = request.origin == "restore"
        name = request.session.ptx_path.name if restore and request.session is not None else path.name
        if request.origin == "kernel" and not request.ok:
            self.inputs_panel.show_state(self.session.state)   # the kernel box back to the open one
        if request.cancelled:
            inputs = self.session.inputs
            kept = f"; {inputs.path.name} stays open" if inputs is not None else ""
            if restore:
                self.show_message(f"Cancelled restoring the unsaved work on {name}; it is offered again "
                                  f"at the next start{kept}")
            else:
                self.show_message(f"Cancelled opening {name}{kept}")
        elif request.error is not None:
            if restore:
                self.show_error(f"Cannot restore the unsaved session of {name}: {request.error}")
            elif isinstance(request.error, MissingPtxError) and request.origin == "session":
                self._show_open_error(path, request.error)
                self.offer_locate(request.error)
            else:
                self._show_open_error(path, request.error)
        elif request.origin == "kernel":
            self.banner.hide()
            self.show_message(f"Opened {display_name(request.kernel or '')}")
        elif restore:
            self.banner.hide()
            if request.notes:
                self.show_error("Restored with changes: " + "\n".join(request.notes))
            self.show_message(f"Restored unsaved work on {name}")
        else:
            self._opened(path, request.notes)

    def offer_locate(self, error: MissingPtxError) -> None:
        """The session's PTX is missing (not where it was saved, not beside the session): the
        error banner offers Locate…, which asks where the file is and opens the session with it
        (the window does not block on a question meanwhile)."""
        self._model_banner = False
        self.banner.show_error(f"Cannot open {error.session_path.name}: {error}\nLocate "
                               f"{error.ptx_path.name} to open the session with it.",
                               ("Locate…", lambda: self._locate(error)))

    def _locate(self, error: MissingPtxError) -> None:
        chosen = self.locate_file(error)
        if chosen is not None:
            self.banner.hide()
            self.session.open_session_async(error.session_path, ptx=chosen)

    def locate_file(self, error: MissingPtxError) -> Path | None:
        """The Locate… file dialog (tests replace it)."""
        chosen, _ = QFileDialog.getOpenFileName(self, f"Locate {error.ptx_path.name}", str(error.session_path.parent),
                                                "PTX (*.ptx);;All files (*)")
        return Path(chosen) if chosen else None

    def _show_open_error(self, path: Path, exc: WarplineError) -> None:
        if isinstance(exc, PtxSyntaxError):
            self.show_error(f"Cannot open {path.name}: syntax error at line {exc.line}, column {exc.column}"
                            f"\n{exc}")
        else:
            self.show_error(f"Cannot open {path.name}: {exc}")

    def _opened(self, path: Path, notes: list[str]) -> None:
        self.banner.hide()
        if notes:   # overrides made on instructions that changed since: named, not applied
            self.show_error(f"{path.name}: " + "\n".join(notes))
        self._add_recent(path)
        inputs = self.session.inputs
        if inputs is not None and inputs.launch is None and path.suffix != SUFFIX:
            self.show_message(f"Opened {path.name}: no launch file found, so 1 block of 32 threads is "
                              "assumed; set the grid, block and arguments in the Inputs panel")
        else:
            self.show_message(f"Opened {path}")

    def _pick_kernel(self, listing: KernelList) -> str:
        """The kernel to open: asked for when the file has several and no launch file names one
        (the first kernel when the user cancels)."""
        if listing.chosen is not None:
            return listing.chosen
        self._picking = listing             # (what choose_kernel shows of each kernel)
        try:
            return self.choose_kernel(list(listing.names)) or listing.names[0]
        finally:
            self._picking = None

    def choose_kernel(self, names: list[str], summaries: Sequence[KernelSummary] | None = None) -> str | None:
        """Ask which kernel to open (tests replace this): the kernel picker, demangled names with
        their sizes, loops and launch bounds, filtered as the user types. ``summaries``: those of
        the file being opened (default: what the loader listed)."""
        if summaries is None:
            summaries = self._listed_summaries(names)
        picker = self.kernel_picker(names, summaries)
        return picker.chosen() if picker.exec() == QDialog.DialogCode.Accepted else None

    def kernel_picker(self, names: Sequence[str], summaries: Sequence[KernelSummary] = ()) -> KernelPicker:
        return KernelPicker(names, summaries, self)

    def _listed_summaries(self, names: list[str]) -> tuple[KernelSummary, ...]:
        """The summaries the loader made of the file whose kernels are being chosen."""
        picking = getattr(self, "_picking", None)
        if picking is not None and list(picking.names) == list(names):
            return picking.summaries
        for loader in (self.session.loader, getattr(self.baseline, "_loader", None)):
            current = getattr(loader, "current", None)
            listing = getattr(current, "listing", None)
            if listing is not None and list(listing.names) == list(names):
                return listing.summaries
        return ()

    def _open_dialog(self) -> None:
        if not self.confirm_discard():
            return
        path, _ = QFileDialog.getOpenFileName(self, "Open", str(self._last_dir()),
                                              f"PTX or session (*.ptx *{SUFFIX});;All files (*)")
        if path:
            self.open_file_async(path)

    def _last_dir(self) -> Path:
        inputs = self.session.inputs
        return inputs.path.parent if inputs is not None else Path.cwd()

    def _recent(self) -> list[str]:
        value = self.settings.value("recentFiles", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in value or []]

    def _add_recent(self, path: Path) -> None:
        entry = str(path.resolve())
        recent = [entry] + [p for p in self._recent() if p != entry]
        self.settings.setValue("recentFiles", recent[:MAX_RECENT])
        self._fill_recent()

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        recent = self._recent()
        for entry in recent:
            action = self.recent_menu.addAction(entry)
            action.triggered.connect(lambda _=False, p=entry: self.confirm_discard() and self.open_file_async(p))
        self.recent_menu.setEnabled(bool(recent))

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        urls: list[QUrl] = [u for u in event.mimeData().urls() if u.isLocalFile()]
        if urls and self.confirm_discard():
            event.acceptProposedAction()
            self.open_file_async(urls[0].toLocalFile())

    # ------------------------------------------------------------------ sessions

    def save_session(self, ask: bool = False) -> bool:
        path = self.session.session_path
        if ask or path is None:
            inputs = self.session.inputs
            suggestion = str(self._last_dir() / ((inputs.path.stem if inputs else "session") + SUFFIX))
            chosen, _ = QFileDialog.getSaveFileName(self, "Save session", suggestion,
                                                    f"Warpline session (*{SUFFIX})")
            if not chosen:
                return False
            path = Path(chosen if chosen.endswith(SUFFIX) else chosen + SUFFIX)
        try:
            written = self.session.save(path)
        except (WarplineError, OSError) as exc:
            self.show_error(f"Cannot save the session: {exc}")
            return False
        self.session.discard_recovery()
        self._add_recent(written)
        self.show_message(f"Saved {written}")
        return True

    def confirm_discard(self) -> bool:
        """True when there are no unsaved changes, or the user saved or discarded them."""
        if not self.session.dirty:
            return True
        answer = QMessageBox.question(
            self, APP_NAME, "The session has unsaved changes. Save them first?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Save)
        if answer == QMessageBox.StandardButton.Save:
            return self.save_session()
        if answer == QMessageBox.StandardButton.Discard:
            self.session.discard_recovery()   # an explicit discard: this window's autosave goes
            return True
        return False

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.confirm_discard():
            event.ignore()
            return
        self.session.shutdown()
        self.baseline.shutdown()
        self.results_panel.sensitivity.shutdown()
        self.gantt.series.shutdown()
        self.diff_panel.shutdown()
        self.sass_panel.shutdown()
        self.session.discard_recovery()
        event.accept()

    def _reset_overrides(self) -> None:
        from dataclasses import replace

        from engine.manybsp import Overrides

        state = self.session.state
        if state is not None:
            self.session.apply(replace(state, overrides=Overrides()), "Reset all overrides")

    def quick_start(self) -> QuickStartTour:
        """Help › Quick start: the tour, on the hotspot sample when no kernel is open."""
        if self.session.inputs is None:
            self.open_file(SAMPLE)
        results = self.results_panel

        def show_results(tab: QWidget | None = None) -> None:
            self.results_dock.show()
            self.results_dock.raise_()
            if tab is not None:
                results.tabs.setCurrentWidget(tab)

        def show_inputs() -> None:
            self.inputs_dock.show()
            self.inputs_dock.raise_()

        steps = [
            Step("What the kernel costs",
                 "Every model's prediction for this launch: SM cycles, kernel cycles with the launch cost, "
                 "and µs. Hover a model for what it assumes.", lambda: results.table, show_results),
            Step("The simulated SM",
                 "Each issued instruction on its unit (top lanes) and each warp's waits, coloured by cause "
                 "(below). Hover a bar for details, click it to find its row; right-click a block's warps to "
                 "collapse them into a heat strip or hide them; Ctrl+= and Ctrl+- zoom, Ctrl+0 fits.",
                 lambda: self.gantt),
            Step("The BLOCK table",
                 "One row per PTX instruction. Double-click a latency cell (lat_comm of an ld.global, say) and "
                 "type a new value: every model and the chart recompute. Ctrl+Z undoes; right-click resets.",
                 lambda: self.block_view),
            Step("Where the time goes",
                 "The Source tab shows the PTX and CUDA lines; its Hot spots tab ranks lines by simulated "
                 "warp-cycles, and the BLOCK table's “sim. share” column does the same per instruction.",
                 lambda: self.side_tabs, lambda: self.side_tabs.setCurrentWidget(self.source_panel)),
            Step("What limits it",
                 "The Bottleneck tab names the limit in one sentence, with every unit's utilisation and the "
                 "share of warp-cycles lost to each stall cause.",
                 lambda: results.verdict, lambda: show_results(results.verdict)),
            Step("Try another launch",
                 "Change the grid, block, registers or the resident blocks per SM here; the occupancy line "
                 "names the resource that limits it. Pin a result as baseline first (Edit menu) to compare.",
                 lambda: self.inputs_panel, show_inputs),
        ]
        tour = QuickStartTour(self, steps)
        tour.show()
        self.tour = tour
        return tour

    def _about(self) -> None:
        QMessageBox.about(self, APP_NAME, "<b>Warpline</b><br>Why a GPU kernel takes the time it takes: "
                          "Many-BSP and Pipeline models from PTX, with live Gantt charts.")

    # ------------------------------------------------------------------ exports

    def _save_path(self, title: str, suffix: str, stem: str) -> Path | None:
        inputs = self.session.inputs
        base = (inputs.path.stem if inputs else "warpline") + f"-{stem}{suffix}"
        chosen, _ = QFileDialog.getSaveFileName(self, title, str(self._last_dir() / base), f"*{suffix}")
        return Path(chosen) if chosen else None

    def _result_or_warn(self) -> Evaluation | None:
        result = self.session.result
        if result is None:
            self.show_message("Nothing to export yet: the models are still running")
        return result

    def export_png(self, path: str | os.PathLike[str], width: int, height: int) -> Path:
        """The timeline as shown (visible range, no title): what earlier versions wrote."""
        from gui.gantt.export_png import export_png

        export_png(self.gantt.view, str(path), width, height)
        return Path(path)

    def export_timeline(self, path: str | os.PathLike[str], width: int = 1600, height: int = 900,
                        visible: bool = False, title: bool = True, baseline: bool = True) -> Path:
        """The timeline as PNG, SVG or PDF (by suffix): the whole run or the visible range, under a
        title line naming the kernel, GPU profile, launch and predicted time. ``baseline``: a
        pinned baseline (or comparison) the chart shows is drawn above it, as on screen."""
        from gui.gantt.export_pair import caption
        from gui.gantt.export_png import export_timeline, title_line

        result = self.gantt.result
        text = title_line(result) if title and result is not None else ""
        shown = self.gantt.baseline if baseline else None
        captions = ("", "")
        if shown is not None and result is not None:
            captions = (f"baseline — {caption(self.baseline.label, shown)}", f"current — {caption('', result)}")
        below, copies = [], []
        series = self.gantt.series
        if self.gantt.series_box.isChecked() and series.series is not None:
            # the time series as shown under the chart, on the same cycles
            from gui.gantt.export_png import Piece
            from gui.gantt.timeseries import export_copy

            copies.append(export_copy(series.series))
            below.append(Piece(copies[-1], max(160, int(height * 0.3)), "time series (this SM)"))
        try:
            return export_timeline(self.gantt.view, path, width, height, title=text,
                                   x_range=self.gantt.view.x_range() if visible else None,
                                   baseline=self.gantt.baseline_view if shown is not None else None,
                                   captions=captions, below=below)
        finally:
            for copy in copies:
                copy.close()
                copy.deleteLater()

    def _image_path(self, title: str, stem: str) -> Path | None:
        """A PNG, SVG or PDF file to write (the chosen filter's suffix when the name has none)."""
        inputs = self.session.inputs
        base = (inputs.path.stem if inputs else "warpline") + f"-{stem}.png"
        chosen, chosen_filter = QFileDialog.getSaveFileName(
            self, title, str(self._last_dir() / base),
            "PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)")
        if not chosen:
            return None
        path = Path(chosen)
        if path.suffix.lower() not in (".png", ".svg", ".pdf"):
            path = path.with_name(path.name + "." + chosen_filter.split("*.")[-1].rstrip(")"))
        return path

    def _export_png(self) -> None:
        if self._result_or_warn() is None:
            return
        dialog = SizeDialog(self, 1600, 900)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        path = self._image_path("Export the timeline", "timeline")
        if path is None:
            return
        self._guarded(lambda: self.export_timeline(path, dialog.width_spin.value(), dialog.height_spin.value(),
                                                   visible=dialog.range_combo.currentIndex() == 1,
                                                   title=dialog.title_check.isChecked()), path)

    def export_curves(self, path: str | os.PathLike[str], width: int = 1200, height: int = 800,
                      title: bool = True) -> Path:
        """The occupancy curves as PNG, SVG or PDF (by suffix), as the Curves tab draws them, under
        a title line naming the kernel, GPU profile and launch."""
        from gui.curves import export_curves

        result = self.session.result
        if result is None or result.sweep is None:
            raise WarplineError("the occupancy curves are still being computed")
        return export_curves(result, path, width, height, title=title)

    def _export_curves_image(self) -> None:
        result = self._result_or_warn()
        if result is None:
            return
        if result.sweep is None:
            self.show_message("The occupancy curves are still being computed")
            return
        dialog = SizeDialog(self, 1200, 800, what="curves")
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        path = self._image_path("Export the occupancy curves", "curves")
        if path is None:
            return
        self._guarded(lambda: self.export_curves(path, dialog.width_spin.value(), dialog.height_spin.value(),
                                                 title=dialog.title_check.isChecked()), path)

    def export_roofline(self, path: str | os.PathLike[str], width: int = 1200, height: int = 800,
                        title: bool = True) -> Path:
        """The roofline as PNG, SVG or PDF (by suffix), as the Roofline tab draws it (its work
        choice), under a title line naming the kernel, GPU profile and launch."""
        from gui.gantt.export_png import figure_title
        from gui.panels.roofline import export_roofline

        result = self.session.result
        if result is None or "models" not in result.parts:
            raise WarplineError("the models are still running")
        return export_roofline(result, path, width, height, figure_title(result, "roofline") if title else "",
                               work=self.results_panel.roofline.work)

    def _export_roofline_image(self) -> None:
        if self._result_or_warn() is None:
            return
        dialog = SizeDialog(self, 1200, 800, what="roofline")
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        path = self._image_path("Export the roofline", "roofline")
        if path is not None:
            self._guarded(lambda: self.export_roofline(path, dialog.width_spin.value(), dialog.height_spin.value(),
                                                       title=dialog.title_check.isChecked()), path)

    def export_trace_csv(self, path: str | os.PathLike[str]) -> int:
        from engine.timeline.csv_export import export_trace_csv

        result = self.session.result
        if result is None or result.simulation is None or result.simulation.trace is None:
            raise WarplineError("no simulation trace to export")
        return export_trace_csv(result.simulation.trace, path, result.trace_names, result.trace_units,
                                figure_caveats(result).csv_header, header=self._provenance(result))

    def _provenance(self, result: Evaluation) -> list[str]:
        """What a CSV export was computed from (file, kernel, profile, launch, edits)."""
        from engine.evaluation.provenance import comment_lines

        inputs = self.session.inputs
        return comment_lines(result, inputs.path if inputs is not None else None)

    def _export_trace_csv(self) -> None:
        if self._result_or_warn() is not None and (path := self._save_path("Export timeline CSV", ".csv",
                                                                             "timeline")):
            self._guarded(lambda: self.export_trace_csv(path), path)

    def _export_block_csv(self) -> None:
        from engine.manybsp import export_block_table

        result = self._result_or_warn()
        if result is not None and result.manybsp is not None and (
                path := self._save_path("Export BLOCK table", ".csv", "block")):
            self._guarded(lambda: export_block_table(result.manybsp.block, path), path)

    def _export_supersteps_csv(self) -> None:
        from engine.manybsp import export_supersteps

        result = self._result_or_warn()
        if result is not None and result.manybsp is not None and (
                path := self._save_path("Export supersteps", ".csv", "supersteps")):
            self._guarded(lambda: export_supersteps(result.manybsp.level1, path), path)

    def _export_curves_csv(self) -> None:
        result = self._result_or_warn()
        if result is not None and result.sweep is None:
            self.show_message("The occupancy curves are still being computed")
            return
        if result is not None and (path := self._save_path("Export occupancy curves", ".csv", "curves")):
            self._guarded(lambda: sweep_csv(result.sweep, str(path), figure_caveats(result).csv_header), path)

    def _export_predictions_csv(self) -> None:
        from engine.evaluation.prediction_report import predictions_csv

        result = self._result_or_warn()
        if result is not None and (path := self._save_path("Export predictions", ".csv", "predictions")):
            self._guarded(lambda: predictions_csv(result, str(path), comments=self._provenance(result)), path)

    def _guarded(self, action, path: Path | None = None) -> None:  # noqa: ANN001
        try:
            action()
        except (WarplineError, OSError, ValueError) as exc:
            self.show_error(f"Export failed: {exc}")
            return
        self.show_message(f"Wrote {path}" if path is not None else "Exported")
