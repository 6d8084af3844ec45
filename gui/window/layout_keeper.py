"""The window's layout: its size for the screen, the default arrangement of docks and splitters
(compact below a width), and the user's arrangement saved in the settings shortly after each
change and restored at the next start."""

from __future__ import annotations

from typing import TYPE_CHECKING, SupportsIndex, SupportsInt

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QGuiApplication

from gui.gantt.lane_geometry import DEFAULT_LANE_PX

if TYPE_CHECKING:
    from gui.main_window import MainWindow

# Layout: the window takes at most this share of the screen's free area, never more than the
# preferred size; below COMPACT_WIDTH the inputs and results share one tabbed dock so the chart and
# the tables keep their width (1366 x 768 fits with nothing clipped).
SCREEN_SHARE = 0.9
PREFERRED_SIZE = (1800, 1050)
MINIMUM_SIZE = (1000, 620)
COMPACT_WIDTH = 1500
LAYOUT_VERSION = 2             # bump when docks change: an older saved state is then ignored
LAYOUT_KEY = "layout"
SAVE_DELAY_MS = 400


class WindowLayout:
    """Fits, lays out, saves and restores ``window``'s docks, splitters, BLOCK columns and chart lanes."""

    def __init__(self, window: MainWindow) -> None:
        self._window = window
        self.saver = QTimer(window)
        self.saver.setSingleShot(True)
        self.saver.setInterval(SAVE_DELAY_MS)
        self.saver.timeout.connect(self.save)
        self._default_header = window.block_view.horizontalHeader().saveState()

    def later(self) -> None:
        """Save the layout shortly (a move, a resize, a dragged splitter)."""
        self.saver.start()

    def _available(self) -> QSize:
        window = self._window
        screen = window.screen() or QGuiApplication.primaryScreen()
        return screen.availableGeometry().size() if screen is not None else QSize(*PREFERRED_SIZE)

    def fit_to_screen(self) -> None:
        """At most SCREEN_SHARE of the screen's free area, at most the preferred size."""
        window = self._window
        avail = self._available()
        window.setMinimumSize(min(MINIMUM_SIZE[0], avail.width()), min(MINIMUM_SIZE[1], avail.height()))
        window.resize(max(window.minimumWidth(), min(PREFERRED_SIZE[0], int(avail.width() * SCREEN_SHARE))),
                      max(window.minimumHeight(), min(PREFERRED_SIZE[1], int(avail.height() * SCREEN_SHARE))))

    def apply_default(self) -> None:
        """Docks, splitters, BLOCK columns and chart lanes as a fresh install has them (for the
        window's current width: the inputs and results share a tabbed dock on small screens)."""
        window = self._window
        compact = window.width() < COMPACT_WIDTH
        for dock in (window.inputs_dock, window.results_dock):
            window.removeDockWidget(dock)
            dock.setFloating(False)
        if compact:
            # results first: the first dock of a tab group is the one shown
            window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, window.results_dock)
            window.tabifyDockWidget(window.results_dock, window.inputs_dock)
        else:
            window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, window.inputs_dock)
            window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, window.results_dock)
        for dock in (window.inputs_dock, window.results_dock):
            dock.show()
        window.results_dock.raise_()
        window.block_view.reset_columns(self._default_header)
        window.gantt.view.set_lane_height(DEFAULT_LANE_PX)
        window.gantt.view.groups.set_collapse_auto()
        # Dock and splitter sizes only stick once the window is laid out: after one event loop turn.
        QTimer.singleShot(0, lambda: self._default_sizes(compact))

    def _default_sizes(self, compact: bool) -> None:
        window = self._window
        window.results_dock.raise_()
        width = window.width()
        if compact:
            window.resizeDocks([window.results_dock], [max(380, int(width * 0.3))], Qt.Orientation.Horizontal)
        else:
            window.resizeDocks([window.inputs_dock, window.results_dock], [320, max(420, int(width * 0.25))],
                               Qt.Orientation.Horizontal)
        total_w = max(window.table_split.width(), 400)
        window.table_split.setSizes([int(total_w * 0.6), total_w - int(total_w * 0.6)])
        total_h = max(window.chart_split.height(), 300)
        window.chart_split.setSizes([int(total_h * 0.36), total_h - int(total_h * 0.36)])

    def save(self) -> None:
        """Window geometry, docks, splitters, BLOCK columns and chart lanes into the settings."""
        window = self._window
        if not window.isVisible():
            return
        s = window.settings
        s.beginGroup(LAYOUT_KEY)
        s.setValue("version", LAYOUT_VERSION)
        s.setValue("geometry", window.saveGeometry())
        s.setValue("state", window.saveState(LAYOUT_VERSION))
        s.setValue("tableSplit", window.table_split.saveState())
        s.setValue("chartSplit", window.chart_split.saveState())
        s.setValue("blockColumns", window.block_view.horizontalHeader().saveState())
        s.setValue("laneHeight", window.gantt.view.lane_height())
        groups = window.gantt.view.groups
        s.setValue("collapseWarps", "auto" if groups.collapse_is_automatic() else
                   str(groups.collapse_box.isChecked()).lower())
        s.endGroup()
        s.sync()

    def restore(self) -> bool:
        """The saved layout, if there is one of this version and it fits the screen; else the
        default one. Returns whether a saved layout was used."""
        window = self._window
        s = window.settings
        s.beginGroup(LAYOUT_KEY)
        try:
            saved = s.value("version") is not None and _as_int(s.value("version")) == LAYOUT_VERSION
            if saved:
                saved = bool(window.restoreGeometry(s.value("geometry")) and
                             window.restoreState(s.value("state"), LAYOUT_VERSION))
            if saved:
                window.table_split.restoreState(s.value("tableSplit"))
                window.chart_split.restoreState(s.value("chartSplit"))
                window.block_view.restore_columns(s.value("blockColumns"))
                window.gantt.view.set_lane_height(_as_int(s.value("laneHeight", DEFAULT_LANE_PX)))
                collapse = str(s.value("collapseWarps", "auto")).lower()
                if collapse == "auto":
                    window.gantt.view.groups.set_collapse_auto()
                else:
                    window.gantt.view.groups.set_all_collapsed(collapse == "true")
        except (TypeError, ValueError):
            saved = False
        finally:
            s.endGroup()
        avail = self._available()
        if not saved or window.width() > avail.width() or window.height() > avail.height():
            self.fit_to_screen()
        if not saved:
            self.apply_default()
        return saved

    def reset(self) -> None:
        """View › Reset layout: forget the saved layout and lay the window out afresh."""
        self._window.settings.remove(LAYOUT_KEY)
        self.fit_to_screen()
        self.apply_default()
        self._window.show_message("Layout reset")

    def watch(self) -> None:
        """Save the layout shortly after it changes (no need to wait for the window to close)."""
        window = self._window
        later = self.saver.start
        for splitter in (window.table_split, window.chart_split):
            splitter.splitterMoved.connect(lambda *_: later())
        for dock in (window.inputs_dock, window.results_dock):
            dock.dockLocationChanged.connect(lambda *_: later())
            dock.topLevelChanged.connect(lambda *_: later())
            dock.visibilityChanged.connect(lambda *_: later())
        header = window.block_view.horizontalHeader()
        header.sectionResized.connect(lambda *_: later())
        header.sectionMoved.connect(lambda *_: later())
        window.block_view.columnsChanged.connect(later)
        window.gantt.view.lane_spin.valueChanged.connect(lambda *_: later())
        window.gantt.view.groups.collapse_box.toggled.connect(lambda *_: later())


def _as_int(value: object) -> int:
    """A whole number read from the settings: an int, or its text in an INI file (TypeError or
    ValueError for anything else, which makes the saved layout unusable)."""
    if isinstance(value, str | bytes | SupportsInt | SupportsIndex):
        return int(value)
    raise TypeError(f"not a whole number: {value!r}")
