"""The main window: menus, docks, the error banner, the status bar, and the wiring between the
session (model) and the panels (views). It holds no state of its own beyond what Qt needs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer, QUrl
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QFileDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QInputDialog,
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
from engine.inputs import find_launch_file
from engine.names import display_name
from engine.ptx import load_ptx
from engine.ptx.model import Module
from engine.session_file import SUFFIX
from gui.panels.gantt import GanttPanel
from gui.panels.inputs import InputsPanel
from gui.panels.results import ResultsPanel
from gui.panels.source import SourcePanel
from gui.panels.tables import BlockTableView, SuperstepView
from gui.session import Session

APP_NAME = "Warpline"
MAX_RECENT = 8
SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "ptx" / "hotspot.sm_90.ptx"


class ErrorBanner(QFrame):
    """A dismissible red strip above the tables: errors stay visible without a modal dialog."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("errorBanner")
        self.setStyleSheet("#errorBanner { background: #fde2e2; border: 1px solid #d33; }")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()

    def show_error(self, text: str) -> None:
        self.label.setText(text)
        self.show()


class SizeDialog(QDialog):
    def __init__(self, parent: QWidget, width: int, height: int) -> None:
        super().__init__(parent)
        self.setWindowTitle("PNG size")
        self.width_spin = QSpinBox()
        self.height_spin = QSpinBox()
        for spin, value in ((self.width_spin, width), (self.height_spin, height)):
            spin.setRange(64, 16384)
            spin.setValue(value)
            spin.setSuffix(" px")
        form = QFormLayout(self)
        form.addRow("Width", self.width_spin)
        form.addRow("Height", self.height_spin)
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
        self.settings = settings or QSettings(APP_NAME, APP_NAME)
        self.session = Session(self)
        self.setAcceptDrops(True)
        self.resize(1500, 920)

        self.banner = ErrorBanner()
        self._model_banner = False
        self.block_view = BlockTableView(self.session)
        self.superstep_view = SuperstepView(self.session)
        self.gantt = GanttPanel()
        self.source_panel = SourcePanel()
        self.side_tabs = QTabWidget()
        self.side_tabs.addTab(self.superstep_view, "Supersteps")
        self.side_tabs.addTab(self.source_panel, "Source")
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.block_view)
        top.addWidget(self.side_tabs)
        top.setStretchFactor(0, 3)
        top.setStretchFactor(1, 2)
        top.setSizes([560, 380])
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(self.gantt)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setSizes([330, 610])
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
        self.inputs_panel.setMinimumWidth(300)
        # Dock sizes only stick once the window is laid out, hence after the first event loop turn.
        QTimer.singleShot(0, lambda: self.resizeDocks([self.inputs_dock, self.results_dock], [340, 440],
                                                      Qt.Orientation.Horizontal))

        self.progress = QProgressBar()
        self.progress.setMaximumWidth(180)
        self.progress.setRange(0, 100)
        self.progress.hide()
        self.statusBar().addPermanentWidget(self.progress)
        # Show progress only for a recomputation that lasts: quick edits would make it flicker.
        self._progress_delay = QTimer(self)
        self._progress_delay.setSingleShot(True)
        self._progress_delay.setInterval(250)
        self._progress_delay.timeout.connect(lambda: self.progress.setVisible(self.session.worker.busy))

        self._build_menus()
        self._connect()
        self._update_title()

    # ------------------------------------------------------------------ construction

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"{title.lower()}Dock")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

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
        self._action(export, "Timeline as &PNG…", self._export_png)
        self._action(export, "Timeline as &CSV (events and stalls)…", self._export_trace_csv)
        self._action(export, "&BLOCK table CSV…", self._export_block_csv)
        self._action(export, "&Supersteps CSV…", self._export_supersteps_csv)
        self._action(export, "Occupancy c&urves CSV…", self._export_curves_csv)
        self._action(export, "&Predictions CSV…", self._export_predictions_csv)
        file.addSeparator()
        self._action(file, "&Quit", self.close, QKeySequence.StandardKey.Quit)

        edit = bar.addMenu("&Edit")
        self.undo_action = self.session.undo_stack.createUndoAction(self, "&Undo")
        self.undo_action.setShortcut(QKeySequence.StandardKey.Undo)
        self.redo_action = self.session.undo_stack.createRedoAction(self, "&Redo")
        self.redo_action.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence.StandardKey.Redo])
        edit.addAction(self.undo_action)
        edit.addAction(self.redo_action)
        edit.addSeparator()
        self._action(edit, "Reset all model &overrides", self._reset_overrides)

        view = bar.addMenu("&View")
        view.addAction(self.inputs_dock.toggleViewAction())
        view.addAction(self.results_dock.toggleViewAction())
        help_menu = bar.addMenu("&Help")
        self._action(help_menu, "&About Warpline", self._about)
        self._fill_recent()

    def _connect(self) -> None:
        s = self.session
        s.fileChanged.connect(self._update_title)
        s.dirtyChanged.connect(lambda _dirty: self._update_title())
        s.timelineChanged.connect(self._show_timeline)
        s.evaluationFinished.connect(self._show_finished)
        s.computeFailed.connect(self.show_error)
        s.worker.busyChanged.connect(self._busy)
        s.worker.progress.connect(self._progress)
        # The occupancy sweep waits for the chart to show a new partial result (see ComputeWorker).
        self.gantt.view.painted.connect(s.worker.partial_painted)
        for panel in (self.inputs_panel, self.results_panel, self.block_view, self.superstep_view):
            panel.message.connect(self.show_message)
        self.gantt.instructionClicked.connect(self.block_view.select_instruction)
        self.block_view.rowsSelected.connect(self.source_panel.select)
        s.fileChanged.connect(self._show_sources)
        self.superstep_view.instructionsSelected.connect(self._superstep_selected)

    # ------------------------------------------------------------------ feedback

    def show_message(self, text: str) -> None:
        self.statusBar().showMessage(text, 8000)

    def show_error(self, text: str) -> None:
        self._model_banner = False   # an error of the user's action: stays until dismissed
        self.banner.show_error(text)
        self.statusBar().showMessage(text.splitlines()[0], 15000)

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
            self.session.worker.partial_painted()

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
        """Open a PTX file or a session. On failure the error is shown (with the PTX line for a
        syntax error) and the current session stays as it was."""
        path = Path(path)
        try:
            if path.suffix == SUFFIX:
                with busy_cursor():
                    self.session.open_session(path)
            else:
                # Parsed once here: the kernel is asked for before anything is computed.
                with busy_cursor():
                    module = load_ptx(path)
                kernel = self._pick_kernel(path, module)
                with busy_cursor():
                    self.session.open_ptx(path, kernel=kernel, module=module)
        except PtxSyntaxError as exc:
            self.show_error(f"Cannot open {path.name}: syntax error at line {exc.line}, column {exc.column}"
                            f"\n{exc}")
            return False
        except WarplineError as exc:
            self.show_error(f"Cannot open {path.name}: {exc}")
            return False
        self.banner.hide()
        self._add_recent(path)
        inputs = self.session.inputs
        if inputs is not None and inputs.launch is None and path.suffix != SUFFIX:
            self.show_message(f"Opened {path.name}: no launch file found, so 1 block of 32 threads is "
                              "assumed; set the grid, block and arguments in the Inputs panel")
        else:
            self.show_message(f"Opened {path}")
        return True

    def _pick_kernel(self, path: Path, module: Module) -> str | None:
        """The kernel to open: asked for when the file has several and no launch file names one
        (None, the first kernel, when the user cancels)."""
        if len(module.kernels) < 2 or find_launch_file(path) is not None:
            return None
        return self.choose_kernel([k.name for k in module.kernels])

    def choose_kernel(self, names: list[str]) -> str | None:
        """Ask which kernel to open (tests replace this)."""
        choice, ok = QInputDialog.getItem(self, "Choose a kernel", "This file has several kernels:",
                                          names, 0, False)
        return choice if ok else None

    def _open_dialog(self) -> None:
        if not self.confirm_discard():
            return
        path, _ = QFileDialog.getOpenFileName(self, "Open", str(self._last_dir()),
                                              f"PTX or session (*.ptx *{SUFFIX});;All files (*)")
        if path:
            self.open_file(path)

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
            action.triggered.connect(lambda _=False, p=entry: self.confirm_discard() and self.open_file(p))
        self.recent_menu.setEnabled(bool(recent))

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        urls: list[QUrl] = [u for u in event.mimeData().urls() if u.isLocalFile()]
        if urls and self.confirm_discard():
            event.acceptProposedAction()
            self.open_file(urls[0].toLocalFile())

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
        return answer == QMessageBox.StandardButton.Discard

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.confirm_discard():
            event.ignore()
            return
        self.session.shutdown()
        self.session.discard_recovery()
        event.accept()

    def _reset_overrides(self) -> None:
        from dataclasses import replace

        from engine.manybsp import Overrides

        state = self.session.state
        if state is not None:
            self.session.apply(replace(state, overrides=Overrides()), "Reset all overrides")

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
        from gui.gantt.export_png import export_png

        export_png(self.gantt.view, str(path), width, height)
        return Path(path)

    def _export_png(self) -> None:
        if self._result_or_warn() is None:
            return
        dialog = SizeDialog(self, 1600, 900)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        path = self._save_path("Export timeline PNG", ".png", "timeline")
        if path is not None:
            self._guarded(lambda: self.export_png(path, dialog.width_spin.value(), dialog.height_spin.value()), path)

    def export_trace_csv(self, path: str | os.PathLike[str]) -> int:
        from engine.timeline import export_trace_csv

        result = self.session.result
        if result is None or result.simulation is None or result.simulation.trace is None:
            raise WarplineError("no simulation trace to export")
        return export_trace_csv(result.simulation.trace, path, result.trace_names, result.trace_units)

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
            self._guarded(lambda: sweep_csv(result.sweep, str(path)), path)

    def _export_predictions_csv(self) -> None:
        from engine.evaluation.report import predictions_csv

        result = self._result_or_warn()
        if result is not None and (path := self._save_path("Export predictions", ".csv", "predictions")):
            self._guarded(lambda: predictions_csv(result, str(path)), path)

    def _guarded(self, action, path: Path | None = None) -> None:  # noqa: ANN001
        try:
            action()
        except (WarplineError, OSError, ValueError) as exc:
            self.show_error(f"Export failed: {exc}")
            return
        self.show_message(f"Exported {path}" if path is not None else "Exported")
