"""The main window: menus, docks, the error banner, the status bar, and the wiring between the
session (model) and the panels (views). It holds no state of its own beyond what Qt needs."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from PySide6.QtCore import QEvent, QSettings, Qt
from PySide6.QtGui import QCloseEvent, QMoveEvent, QResizeEvent
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDockWidget,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from engine.errors import PtxSyntaxError, WarplineError
from engine.evaluation import Evaluation
from engine.evaluation.compare import BaselineFigures
from engine.names import display_name
from engine.ptx.summary import KernelSummary
from engine.session_file import SUFFIX, MissingPtxError
from gui import main_thread_gc
from gui.baseline import Baseline
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
from gui.window import APP_NAME
from gui.window.export_actions import ExportActions
from gui.window.file_drop import FileDrop
from gui.window.layout_keeper import MINIMUM_SIZE, WindowLayout
from gui.window.menus import build_menus
from gui.window.recent_files import RecentFiles
from gui.window.status import ComputeProgress, LoadStatus

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


@contextmanager
def busy_cursor() -> Iterator[None]:
    """A wait cursor while the UI thread parses (a 25,000-line PTX file takes about a second)."""
    QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
    try:
        yield
    finally:
        QApplication.restoreOverrideCursor()


def open_error_text(path: Path, exc: WarplineError) -> str:
    """What the window says when ``path`` cannot be opened (a syntax error with its place)."""
    if isinstance(exc, PtxSyntaxError):
        return f"Cannot open {path.name}: syntax error at line {exc.line}, column {exc.column}\n{exc}"
    return f"Cannot open {path.name}: {exc}"


def _dock(window: QMainWindow, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
    dock = QDockWidget(title, window)
    dock.setObjectName(f"{title.lower()}Dock")
    dock.setWidget(widget)
    window.addDockWidget(area, dock)
    return dock


class MainWindow(QMainWindow):
    def __init__(self, settings: QSettings | None = None) -> None:
        super().__init__()
        # the session's worker thread must never collect a window's Qt garbage
        main_thread_gc.install(QApplication.instance())
        self.settings = settings or QSettings(APP_NAME, APP_NAME)
        self.session = Session(self)
        self.baseline = Baseline(self)
        self.file_drop = FileDrop(self, self.confirm_discard, self.open_file_async)
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
        self.inputs_dock = _dock(self, "Inputs", scroll, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.results_panel = ResultsPanel(self.session)
        self.results_dock = _dock(self, "Results", self.results_panel, Qt.DockWidgetArea.RightDockWidgetArea)
        self.inputs_panel.setMinimumWidth(280)
        scroll.setMinimumWidth(300)
        self.results_panel.setMinimumWidth(300)

        self.progress = ComputeProgress(lambda: self.session.busy)
        self.statusBar().addPermanentWidget(self.progress)
        self.load_status = LoadStatus(self, self.cancel_load)
        self.statusBar().addPermanentWidget(self.load_status)
        self.load_status.follow(self.session.loader)
        self.session.loader.finished.connect(self._load_finished)

        self.exports = ExportActions(self)
        self.window_layout = WindowLayout(self)
        self.recent_menu, self.undo_action, self.redo_action = build_menus(self)
        self.recent = RecentFiles(self.settings, self.recent_menu,
                                  lambda path: self.confirm_discard() and self.open_file_async(path))
        self._connect()
        self._update_title()
        self.window_layout.restore()
        self.window_layout.watch()

    # ------------------------------------------------------------------ Qt events

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.window_layout.later()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        if event.type() in PALETTE_EVENTS and hasattr(self, "banner"):
            self.banner.restyle()

    def moveEvent(self, event: QMoveEvent) -> None:
        super().moveEvent(event)
        self.window_layout.later()

    def _connect(self) -> None:
        s = self.session
        s.fileChanged.connect(self._update_title)
        s.dirtyChanged.connect(lambda _dirty: self._update_title())
        s.timelineChanged.connect(self._show_timeline)
        s.evaluationFinished.connect(self._show_finished)
        s.computeFailed.connect(self.show_error)
        s.busyChanged.connect(self.progress.set_busy)
        s.undo_stack.indexChanged.connect(self._history_moved)
        s.progress.connect(self.progress.show_progress)
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

    def compare_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Compare with", str(self.last_dir()),
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
            self.show_error(open_error_text(path, exc))
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
                self.show_error(open_error_text(path, request.error))
                self.offer_locate(request.error)
            else:
                self.show_error(open_error_text(path, request.error))
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

    def _opened(self, path: Path, notes: list[str]) -> None:
        self.banner.hide()
        if notes:   # overrides made on instructions that changed since: named, not applied
            self.show_error(f"{path.name}: " + "\n".join(notes))
        self.recent.add(path)
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

    def open_dialog(self) -> None:
        if not self.confirm_discard():
            return
        path, _ = QFileDialog.getOpenFileName(self, "Open", str(self.last_dir()),
                                              f"PTX or session (*.ptx *{SUFFIX});;All files (*)")
        if path:
            self.open_file_async(path)

    def last_dir(self) -> Path:
        inputs = self.session.inputs
        return inputs.path.parent if inputs is not None else Path.cwd()

    # ------------------------------------------------------------------ sessions

    def save_session(self, ask: bool = False) -> bool:
        path = self.session.session_path
        if ask or path is None:
            inputs = self.session.inputs
            suggestion = str(self.last_dir() / ((inputs.path.stem if inputs else "session") + SUFFIX))
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
        self.recent.add(written)
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
