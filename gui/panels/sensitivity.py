"""The Sensitivity tab: a tornado chart of how far each figure of the GPU (every latency class,
each memory level's latency and bandwidth, the clock) and the occupancy move a model's kernel
cycles at ±X % (:mod:`engine.evaluation.sensitivity`), with the table under it.

A run is tens of evaluations, so it runs in the background (:class:`gui.background.BackgroundRunner`)
with its own evaluator (the window's caches stay the window's), only while the tab is shown and
only once the window's own evaluation of the state has finished; an edit makes it stale (cancelled
and redone), and a result is kept per (kernel, state, step, model): going back to a state shown
before shows its result at once."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.errors import WarplineError
from engine.evaluation import Evaluator, models
from engine.evaluation.sensitivity import DEFAULT_MODEL, Sensitivity, sensitivity
from gui.background import BackgroundRunner
from gui.glossary import set_header_tips
from gui.theme import changed_theme, current, style_chart

MINUS_COLOR = "#4c9be8"
PLUS_COLOR = "#e8794c"
KEEP_RESULTS = 16
DELAY_MS = 300            # after the window's evaluation finished: a burst of edits settles first
COLUMNS = ("parameter", "base", "−X %: Δ kernel cycles", "+X %: Δ kernel cycles", "note")
COLUMN_HELP = ("The figure that was moved: a latency class, a memory level's latency or bandwidth, the clock "
               "or the resident blocks per SM.",
               "Its value in the profile (or the state) the run starts from.",
               "The change of the model's kernel cycles with the figure lowered by the step.",
               "The change of the model's kernel cycles with the figure raised by the step.",
               "Why a side has no figure, or the occupancy a side ran at.")


class TornadoPlot(pg.PlotWidget):
    """Horizontal bars per parameter, largest swing on top: Δ % of kernel cycles at −X % and +X %."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tornadoPlot")
        self.setMenuEnabled(False)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.getPlotItem().getViewBox().invertY(True)
        self.showGrid(x=True, y=False, alpha=0.25)
        self.setLabel("bottom", "Δ kernel cycles (%)")
        self._theme = current(self.palette())
        style_chart(self, self.getPlotItem(), self._theme)
        self.titles: list[str] = []

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        theme = changed_theme(self, event)
        if theme is not None:
            self._theme = theme
            style_chart(self, self.getPlotItem(), theme)

    def show_result(self, result: Sensitivity | None) -> None:
        self.clear()
        self.titles = []
        if result is None or not result.rows:
            return
        base = result.base_kernel_cycles
        rows = result.rows
        y = np.arange(len(rows), dtype=float)

        def pct(values: list[float | None]) -> np.ndarray:
            return np.array([0.0 if v is None or not base else 100.0 * (v - base) / base for v in values])

        minus, plus = pct([r.minus for r in rows]), pct([r.plus for r in rows])
        lo = pg.BarGraphItem(x0=np.minimum(minus, 0), width=np.abs(minus), y=y - 0.18, height=0.34,
                             brush=MINUS_COLOR, pen=None)
        hi = pg.BarGraphItem(x0=np.minimum(plus, 0), width=np.abs(plus), y=y + 0.18, height=0.34,
                             brush=PLUS_COLOR, pen=None)
        self.addItem(lo)
        self.addItem(hi)
        self.addItem(pg.InfiniteLine(0, angle=90, pen=pg.mkPen(self._theme.chart_text, width=1)))
        self.titles = [r.parameter.title for r in rows]
        self.getAxis("left").setTicks([[(float(k), t) for k, t in enumerate(self.titles)]])
        span = max(float(np.abs(np.concatenate([minus, plus])).max()), 0.5)
        self.setXRange(-span * 1.15, span * 1.15, padding=0)
        self.setYRange(-0.6, len(rows) - 0.4, padding=0)


class SensitivityPanel(QWidget):
    message = Signal(str)

    def __init__(self, session: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.step_spin = QSpinBox()
        self.step_spin.setObjectName("sensitivityStep")
        self.step_spin.setRange(1, 90)
        self.step_spin.setValue(10)
        self.step_spin.setPrefix("± ")
        self.step_spin.setSuffix(" %")
        self.step_spin.setToolTip("How far each figure moves, either way")
        self.model_box = QComboBox()
        self.model_box.setObjectName("sensitivityModel")
        self._model_ids = [m.id for m in models() if m.primary]
        for m in models():
            if m.primary:
                self.model_box.addItem(m.title)
        self.model_box.setCurrentIndex(self._model_ids.index(DEFAULT_MODEL))
        self.model_box.setToolTip("The model whose kernel cycles are compared")
        self.model_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop this run (it starts again when the state or the step changes)")
        self.cancel_button.clicked.connect(self.cancel)
        self.csv_button = QPushButton("CSV…")
        self.csv_button.setToolTip("Save the ranked table as CSV")
        self.csv_button.clicked.connect(self._save_csv)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        top = QHBoxLayout()
        top.addWidget(QLabel("Step"))
        top.addWidget(self.step_spin)
        top.addWidget(self.model_box, 1)
        top.addWidget(self.csv_button)
        self.running = QWidget()
        running = QHBoxLayout(self.running)
        running.setContentsMargins(0, 0, 0, 0)
        running.addWidget(self.progress, 1)
        running.addWidget(self.cancel_button)
        self.caption = QLabel("Shows how each latency, bandwidth, the clock and the occupancy move the "
                              "kernel's cycles.")
        self.caption.setObjectName("sensitivityCaption")
        self.caption.setWordWrap(True)
        self.chart = TornadoPlot()
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("sensitivityTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        set_header_tips(self.table, COLUMN_HELP)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        # the chart and the table take the room the tab gets, never ask for more: the Results
        # panel's predictions table above the tabs keeps its rows on a 1366 x 768 screen
        for widget in (self.chart, self.table):
            widget.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Ignored)
            widget.setMinimumHeight(60)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.chart)
        split.addWidget(self.table)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Ignored)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.running)
        layout.addWidget(self.caption)
        layout.addWidget(split, 1)

        self.result: Sensitivity | None = None
        self.runs = 0                    # runs started (tests and the benchmark read it)
        # (key, result), newest last; states are compared by value (they hold dicts: not hashable)
        self._results: list[tuple[tuple, Sensitivity]] = []
        self._pending_key: tuple | None = None
        self._evaluator = Evaluator()
        self._runner = BackgroundRunner("warpline-sensitivity", self)
        self._runner.finished.connect(self._finished)
        self._runner.failed.connect(self._failed)
        self._runner.progress.connect(self._progress)
        self._runner.busyChanged.connect(self._busy)
        self._delay = QTimer(self)
        self._delay.setSingleShot(True)
        self._delay.setInterval(DELAY_MS)
        self._delay.timeout.connect(self._start)
        self.step_spin.valueChanged.connect(lambda _v: self._request())
        self.model_box.currentIndexChanged.connect(lambda _i: self._request())
        session.evaluationFinished.connect(lambda _r: self._request())
        session.stateChanged.connect(lambda _s: self._stale())
        self._busy(False)

    # ---- what to compute -------------------------------------------------------------------------
    @property
    def step(self) -> float:
        return self.step_spin.value() / 100.0

    @property
    def model(self) -> str:
        return self._model_ids[self.model_box.currentIndex()]

    def _key(self) -> tuple | None:
        inputs, state = self.session.inputs, self.session.state
        if inputs is None or state is None:
            return None
        return (id(inputs), state, self.step, self.model)

    def _stale(self) -> None:
        """The state changed: what is shown no longer applies (kept until the new run ends)."""
        if self.result is not None and self._kept(self._key()) is None:
            self.caption.setText("Stale: the state changed; recomputed once the window's models are in.")
        self._runner.cancel()
        self._pending_key = None

    def showEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        self._request()

    def _request(self) -> None:
        """Show the kept result of the current state, or start one after a short delay (only while
        the tab is shown and the window's own evaluation of the state is done)."""
        key = self._key()
        if key is None or not self.isVisible():
            return
        kept = self._kept(key)
        if kept is not None:
            self._show(kept)
            return
        result = self.session.result
        if result is None or not result.finished or result.state != self.session.state:
            return                      # the window's evaluation first (it is what the user waits for)
        if key != self._pending_key:
            self._runner.cancel()
            self._delay.start()

    def _start(self) -> None:
        key = self._key()
        if key is None or self._kept(key) is not None or not self.isVisible():
            return
        inputs, state, step, model = self.session.inputs, self.session.state, self.step, self.model
        evaluator = self._evaluator
        self._pending_key = key
        self.runs += 1
        self.caption.setText(f"Computing: each figure ±{100 * step:g} % ({self.model_box.currentText()})…")
        self._runner.submit(lambda cancel, progress: (key, sensitivity(
            inputs, state, step=step, model=model, evaluator=evaluator, cancel=cancel, progress=progress)))

    def _kept(self, key: tuple | None) -> Sensitivity | None:
        return next((r for k, r in self._results if k == key), None) if key is not None else None

    def cancel(self) -> None:
        if self._runner.busy:
            self._runner.cancel()
            self._pending_key = None
            self.caption.setText("Cancelled. Change the step or the state, or show the tab again, to run it.")

    def wait(self, msecs: int = 60_000) -> bool:
        return self._runner.wait(msecs)

    # ---- outcomes -------------------------------------------------------------------------------
    def _finished(self, _gen: int, payload: tuple) -> None:
        key, result = payload
        self._pending_key = None
        self._results = [(k, r) for k, r in self._results if k != key][-(KEEP_RESULTS - 1):] + [(key, result)]
        if key == self._key():
            self._show(result)

    def _failed(self, _gen: int, message: str) -> None:
        self._pending_key = None
        self.caption.setText(f"No sensitivity: {message.splitlines()[0]}")

    def _progress(self, _gen: int, fraction: float, what: str) -> None:
        self.progress.setValue(int(100 * fraction))
        self.progress.setFormat(f"{what} %p%")

    def _busy(self, busy: bool) -> None:
        self.running.setVisible(busy)
        self.cancel_button.setEnabled(busy)

    def _show(self, result: Sensitivity) -> None:
        self.result = result
        summary = result.summary()
        first = summary.split(". ", 1)[0].rstrip(".") + "."
        step = f"{100 * result.step:g} %"
        self.caption.setText(f"{first} Blue: each figure −{step}; orange: +{step}.")
        self.caption.setToolTip(f"{summary}\n\n{result.evaluations} evaluations in {result.elapsed_s:.1f} s"
                                + "".join(f"\n{n}" for n in result.notes))
        self.chart.show_result(result)
        records = result.records()
        self.table.setRowCount(len(records))
        step = f"{100 * result.step:g}"
        self.table.setHorizontalHeaderLabels([c.replace("X", step) for c in COLUMNS])
        set_header_tips(self.table, COLUMN_HELP)
        for k, rec in enumerate(records):
            def delta(cycles: float | None, pct: float | None) -> str:
                return "—" if cycles is None else f"{cycles:+,.0f} ({pct:+.1f} %)"
            cells = [rec["title"], rec["base"], delta(rec["minus_delta_cycles"], rec["minus_delta_percent"]),
                     delta(rec["plus_delta_cycles"], rec["plus_delta_percent"]), rec["note"]]
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if col in (2, 3):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                item.setToolTip(rec["parameter"])
                self.table.setItem(k, col, item)

    def _save_csv(self) -> None:
        if self.result is None:
            self.message.emit("No sensitivity to save yet")
            return
        path, _ = QFileDialog.getSaveFileName(self, "Save the sensitivity", "sensitivity.csv", "*.csv")
        if not path:
            return
        try:
            inputs = self.session.inputs
            self.result.csv(path, comments=[f"file: {inputs.path}"] if inputs is not None else ())
        except WarplineError as exc:
            self.message.emit(str(exc))
            return
        self.message.emit(f"Wrote {path}")

    def shutdown(self) -> None:
        self._delay.stop()
        self._runner.stop()
