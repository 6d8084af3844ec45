"""The chart's time axis: the cycle axis in SM cycles or in µs at the GPU profile's clock (the
data stay in cycles either way), with the unit box of the chart's toolbar."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QComboBox

if TYPE_CHECKING:
    import pyqtgraph as pg

TIME_UNITS = ("cycles", "us")


class TimeAxis(QObject):
    """The bottom axis's unit and the clock that converts cycles to µs."""

    changed = Signal()     # the unit was set (by the box or a call)

    def __init__(self, plot: pg.PlotItem | None = None) -> None:
        super().__init__()
        self.plot = plot            # (set by the chart once its plot exists)
        self.unit_box = QComboBox()
        self.unit_box.setObjectName("timeUnit")
        self.unit_box.addItems(["cycles", "µs"])
        self.unit_box.setToolTip("Time axis in SM cycles or in µs at the GPU profile's clock")
        self.unit_box.currentIndexChanged.connect(lambda i: self.set_unit(TIME_UNITS[i]))
        self._unit = "cycles"
        self._clock_mhz = 0.0

    def set_clock(self, clock_mhz: float) -> None:
        """The SM clock that converts cycles to µs (0: unknown, the µs axis is then unavailable)."""
        self._clock_mhz = float(clock_mhz or 0.0)
        units = self.unit_box.model()
        assert isinstance(units, QStandardItemModel)    # a QComboBox's own model
        units.item(1).setEnabled(self._clock_mhz > 0)
        if self._clock_mhz <= 0 and self._unit == "us":
            self.set_unit("cycles")
        else:
            self._apply()

    def set_unit(self, unit: str) -> None:
        """The bottom axis in ``"cycles"`` or ``"us"``; the data stay in cycles either way."""
        if unit not in TIME_UNITS:
            raise ValueError(f"time unit {unit!r}: choose one of {TIME_UNITS}")
        if unit == "us" and self._clock_mhz <= 0:
            unit = "cycles"
        self._unit = unit
        if self.unit_box.currentIndex() != TIME_UNITS.index(unit):
            self.unit_box.blockSignals(True)
            self.unit_box.setCurrentIndex(TIME_UNITS.index(unit))
            self.unit_box.blockSignals(False)
        self._apply()
        self.changed.emit()

    def unit(self) -> str:
        return self._unit

    def clock_mhz(self) -> float:
        return self._clock_mhz

    def _plot(self) -> pg.PlotItem:
        if self.plot is None:
            raise RuntimeError("the time axis has no plot yet (the chart gives it one)")
        return self.plot

    def _apply(self) -> None:
        axis = self._plot().getAxis("bottom")
        if self._unit == "us":
            axis.setScale(1.0 / self._clock_mhz)
            axis.setLabel(f"time (µs at {self._clock_mhz:g} MHz)")    # (the axis's: a hidden axis stays so)
        else:
            axis.setScale(1.0)
            axis.setLabel("cycle")

    def span_text(self, cycles: float) -> str:
        """A span of cycles, with its nanoseconds when the clock is known."""
        if self._clock_mhz > 0:
            return f"{cycles:g} cycles = {1000 * cycles / self._clock_mhz:.4g} ns"
        return f"{cycles:g} cycles"

    def zoom(self, factor: float) -> None:
        """Zoom the cycle axis about the middle of the view (factor < 1 zooms in)."""
        vb = self._plot().getViewBox()
        (x0, x1), _ = vb.viewRange()
        mid, half = (x0 + x1) / 2, (x1 - x0) / 2 * factor
        vb.setXRange(mid - half, mid + half, padding=0.0)

    def x_range(self) -> tuple[float, float]:
        """The cycles the view shows."""
        (x0, x1), _ = self._plot().getViewBox().viewRange()
        return float(x0), float(x1)
