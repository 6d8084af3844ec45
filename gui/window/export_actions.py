"""File › Export: what each export asks (size, range, title, file name), what it refuses while the
models still run, and what it reports. The writing itself is the shared
:class:`~gui.exporter.Exporter`'s, the one the CLI's renderer uses."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QSpinBox,
    QWidget,
)

from engine.errors import WarplineError
from engine.evaluation import Evaluation
from gui.exporter import Exporter

if TYPE_CHECKING:
    from gui.main_window import MainWindow


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


class ExportActions:
    """The window's exports: ``timeline``, ``curves``, ``roofline``, ``trace_csv`` and
    ``visible_png`` write at once (scripts, tests); the ``ask_*`` methods are the menu's actions."""

    def __init__(self, window: MainWindow, exporter: Exporter | None = None) -> None:
        self._window = window
        self.exporter = exporter or Exporter()

    # ---- writing ------------------------------------------------------------------------------
    def visible_png(self, path: str | os.PathLike[str], width: int, height: int) -> Path:
        """The timeline as shown (visible range, no title): what earlier versions wrote."""
        from gui.gantt.export_png import export_png

        export_png(self._window.gantt.view, str(path), width, height)
        return Path(path)

    def timeline(self, path: str | os.PathLike[str], width: int = 1600, height: int = 900,
                 visible: bool = False, title: bool = True, baseline: bool = True) -> Path:
        """The timeline as PNG, SVG or PDF (by suffix): the whole run or the visible range, under a
        title line naming the kernel, GPU profile, launch and predicted time. ``baseline``: a
        pinned baseline (or comparison) the chart shows is drawn above it, as on screen."""
        window = self._window
        return self.exporter.shown_timeline(window.gantt, Path(path), width, height, visible=visible, title=title,
                                            baseline=baseline, baseline_label=window.baseline.label)

    def curves(self, path: str | os.PathLike[str], width: int = 1200, height: int = 800,
               title: bool = True) -> Path:
        """The occupancy curves as PNG, SVG or PDF (by suffix), as the Curves tab draws them, under
        a title line naming the kernel, GPU profile and launch."""
        result = self._window.session.result
        if result is None or result.sweep is None:
            raise WarplineError("the occupancy curves are still being computed")
        return self.exporter.curves_image(result, Path(path), width=width, height=height, title=title)

    def roofline(self, path: str | os.PathLike[str], width: int = 1200, height: int = 800,
                 title: bool = True) -> Path:
        """The roofline as PNG, SVG or PDF (by suffix), as the Roofline tab draws it (its work
        choice), under a title line naming the kernel, GPU profile and launch."""
        window = self._window
        result = window.session.result
        if result is None or "models" not in result.parts:
            raise WarplineError("the models are still running")
        return self.exporter.roofline_image(result, Path(path), width=width, height=height, title=title,
                                            work=window.results_panel.roofline.work)

    def trace_csv(self, path: str | os.PathLike[str]) -> int:
        """The timeline's events and stalls as CSV; returns the number of rows."""
        result = self._window.session.result
        if result is None or result.simulation is None or result.simulation.trace is None:
            raise WarplineError("no simulation trace to export")
        return self.exporter.trace_csv(result, Path(path), self._source())

    def _source(self) -> Path | None:
        """The PTX file a CSV's comment lines name."""
        inputs = self._window.session.inputs
        return inputs.path if inputs is not None else None

    # ---- the menu's actions -------------------------------------------------------------------
    def _save_path(self, title: str, suffix: str, stem: str) -> Path | None:
        inputs = self._window.session.inputs
        base = (inputs.path.stem if inputs else "warpline") + f"-{stem}{suffix}"
        chosen, _ = QFileDialog.getSaveFileName(self._window, title, str(self._window.last_dir() / base),
                                                f"*{suffix}")
        return Path(chosen) if chosen else None

    def _image_path(self, title: str, stem: str) -> Path | None:
        """A PNG, SVG or PDF file to write (the chosen filter's suffix when the name has none)."""
        inputs = self._window.session.inputs
        base = (inputs.path.stem if inputs else "warpline") + f"-{stem}.png"
        chosen, chosen_filter = QFileDialog.getSaveFileName(
            self._window, title, str(self._window.last_dir() / base),
            "PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)")
        if not chosen:
            return None
        path = Path(chosen)
        if path.suffix.lower() not in (".png", ".svg", ".pdf"):
            path = path.with_name(path.name + "." + chosen_filter.split("*.")[-1].rstrip(")"))
        return path

    def _result_or_warn(self) -> Evaluation | None:
        result = self._window.session.result
        if result is None:
            self._window.show_message("Nothing to export yet: the models are still running")
        return result

    def ask_timeline(self) -> None:
        if self._result_or_warn() is None:
            return
        dialog = SizeDialog(self._window, 1600, 900)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        path = self._image_path("Export the timeline", "timeline")
        if path is None:
            return
        self._guarded(lambda: self.timeline(path, dialog.width_spin.value(), dialog.height_spin.value(),
                                            visible=dialog.range_combo.currentIndex() == 1,
                                            title=dialog.title_check.isChecked()), path)

    def ask_curves_image(self) -> None:
        result = self._result_or_warn()
        if result is None:
            return
        if result.sweep is None:
            self._window.show_message("The occupancy curves are still being computed")
            return
        dialog = SizeDialog(self._window, 1200, 800, what="curves")
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        path = self._image_path("Export the occupancy curves", "curves")
        if path is None:
            return
        self._guarded(lambda: self.curves(path, dialog.width_spin.value(), dialog.height_spin.value(),
                                          title=dialog.title_check.isChecked()), path)

    def ask_roofline_image(self) -> None:
        if self._result_or_warn() is None:
            return
        dialog = SizeDialog(self._window, 1200, 800, what="roofline")
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        path = self._image_path("Export the roofline", "roofline")
        if path is not None:
            self._guarded(lambda: self.roofline(path, dialog.width_spin.value(), dialog.height_spin.value(),
                                                title=dialog.title_check.isChecked()), path)

    def ask_trace_csv(self) -> None:
        if self._result_or_warn() is not None and (path := self._save_path("Export timeline CSV", ".csv",
                                                                             "timeline")):
            self._guarded(lambda: self.trace_csv(path), path)

    def ask_block_csv(self) -> None:
        result = self._result_or_warn()
        if result is not None and result.manybsp is not None and (
                path := self._save_path("Export BLOCK table", ".csv", "block")):
            self._guarded(lambda: self.exporter.block_csv(result, path), path)

    def ask_supersteps_csv(self) -> None:
        result = self._result_or_warn()
        if result is not None and result.manybsp is not None and (
                path := self._save_path("Export supersteps", ".csv", "supersteps")):
            self._guarded(lambda: self.exporter.supersteps_csv(result, path), path)

    def ask_curves_csv(self) -> None:
        result = self._result_or_warn()
        if result is not None and result.sweep is None:
            self._window.show_message("The occupancy curves are still being computed")
            return
        if result is not None and (path := self._save_path("Export occupancy curves", ".csv", "curves")):
            self._guarded(lambda: self.exporter.curves_csv(result, path), path)

    def ask_predictions_csv(self) -> None:
        result = self._result_or_warn()
        if result is not None and (path := self._save_path("Export predictions", ".csv", "predictions")):
            self._guarded(lambda: self.exporter.predictions_csv(result, path, self._source()), path)

    def _guarded(self, action: Callable[[], object], path: Path | None = None) -> None:
        try:
            action()
        except (WarplineError, OSError, ValueError) as exc:
            self._window.show_error(f"Export failed: {exc}")
            return
        self._window.show_message(f"Wrote {path}" if path is not None else "Exported")
