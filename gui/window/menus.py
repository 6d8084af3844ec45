"""The window's menu bar: File (open, recent, save, export, quit), Edit (undo, redo, overrides,
baseline), View (docks, the chart's zoom and time unit, the layout) and Help."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QMessageBox, QWidget

from gui.window import APP_NAME

if TYPE_CHECKING:
    from gui.main_window import MainWindow

REDO_KEYS = [QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")]


class WindowMenus(NamedTuple):
    """The parts of the menus the window keeps: File › Open recent, Edit › Undo and Redo."""

    recent: QMenu
    undo: QAction
    redo: QAction


def _action(window: QWidget, menu: QMenu, text: str, slot: Callable[..., object],
            shortcut: QKeySequence | QKeySequence.StandardKey | None = None) -> QAction:
    action = QAction(text, window)
    if shortcut is not None:
        action.setShortcut(shortcut)
    action.triggered.connect(slot)
    menu.addAction(action)
    return action


def build_menus(window: MainWindow) -> WindowMenus:
    """Fill ``window``'s menu bar; returns its Open recent menu and Undo and Redo actions."""
    bar = window.menuBar()
    recent = _file_menu(window, bar.addMenu("&File"))
    undo, redo = _edit_menu(window, bar.addMenu("&Edit"))
    view = bar.addMenu("&View")
    view.addAction(window.inputs_dock.toggleViewAction())
    view.addAction(window.results_dock.toggleViewAction())
    view.addSeparator()
    chart = window.gantt.view
    _action(window, view, "Zoom &in (timeline)", lambda: chart.time_axis.zoom(0.5), QKeySequence("Ctrl+="))
    _action(window, view, "Zoom &out (timeline)", lambda: chart.time_axis.zoom(2.0), QKeySequence("Ctrl+-"))
    _action(window, view, "&Fit the whole run", chart.fit, QKeySequence("Ctrl+0"))
    _action(window, view, "Time axis: cycles / &µs",
            lambda: chart.time_axis.set_unit("cycles" if chart.time_axis.unit() == "us" else "us"),
            QKeySequence("Ctrl+U"))
    view.addSeparator()
    _action(window, view, "&Reset layout", window.window_layout.reset)
    help_menu = bar.addMenu("&Help")
    _action(window, help_menu, "&Quick start (a tour of the window)", window.quick_start)
    _action(window, help_menu, "&About Warpline", lambda: _about(window))
    return WindowMenus(recent, undo, redo)


def _file_menu(window: MainWindow, file: QMenu) -> QMenu:
    """File's actions; returns its Open recent menu (filled by gui.window.recent_files)."""
    _action(window, file, "&Open PTX or session…", window.open_dialog, QKeySequence.StandardKey.Open)
    recent = file.addMenu("Open &recent")
    file.addSeparator()
    _action(window, file, "&Save session", window.save_session, QKeySequence.StandardKey.Save)
    _action(window, file, "Save session &as…", lambda: window.save_session(ask=True),
            QKeySequence.StandardKey.SaveAs)
    file.addSeparator()
    export = file.addMenu("&Export")
    exports = window.exports
    _action(window, export, "Timeline as &PNG, SVG or PDF…", exports.ask_timeline)
    _action(window, export, "Timeline as &CSV (events and stalls)…", exports.ask_trace_csv)
    _action(window, export, "&BLOCK table CSV…", exports.ask_block_csv)
    _action(window, export, "&Supersteps CSV…", exports.ask_supersteps_csv)
    _action(window, export, "Occupancy curves as P&NG, SVG or PDF…", exports.ask_curves_image)
    _action(window, export, "Occupancy c&urves CSV…", exports.ask_curves_csv)
    _action(window, export, "&Roofline as PNG, SVG or PDF…", exports.ask_roofline_image)
    _action(window, export, "&Predictions CSV…", exports.ask_predictions_csv)
    file.addSeparator()
    _action(window, file, "&Quit", window.close, QKeySequence.StandardKey.Quit)
    return recent


def _edit_menu(window: MainWindow, edit: QMenu) -> tuple[QAction, QAction]:
    """Edit's actions; returns its Undo and Redo actions."""
    undo_stack = window.session.undo_stack
    undo = undo_stack.createUndoAction(window, "&Undo")
    undo.setShortcut(QKeySequence.StandardKey.Undo)
    redo = undo_stack.createRedoAction(window, "&Redo")
    # Both common redo keys, each once: the platform's standard Redo list already holds
    # Ctrl+Shift+Z on Linux, and a sequence listed twice makes Qt call the shortcut ambiguous.
    redo.setShortcuts(REDO_KEYS)
    edit.addAction(undo)
    edit.addAction(redo)
    edit.addSeparator()
    _action(window, edit, "Reset all model &overrides", lambda: _reset_overrides(window))
    edit.addSeparator()
    _action(window, edit, "&Pin as baseline", window.pin_baseline, QKeySequence("Ctrl+B"))
    _action(window, edit, "Compare with another &kernel or file…", window.compare_dialog, QKeySequence("Ctrl+K"))
    _action(window, edit, "&Clear the baseline", window.baseline.clear)
    return undo, redo


def _reset_overrides(window: MainWindow) -> None:
    from dataclasses import replace

    from engine.manybsp import Overrides

    state = window.session.state
    if state is not None:
        window.session.apply(replace(state, overrides=Overrides()), "Reset all overrides")


def _about(window: MainWindow) -> None:
    QMessageBox.about(window, APP_NAME, "<b>Warpline</b><br>Why a GPU kernel takes the time it takes: "
                      "Many-BSP and Pipeline models from PTX, with live Gantt charts.")
