"""Occupancy control: resident blocks per SM (slider + spin box) with the limiting resource named.

A slider drag is one gesture: every value change during it carries the same merge key, so the
undo stack keeps one step per drag while the models still refresh live as the slider moves.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QSpinBox, QVBoxLayout, QWidget

from engine.occupancy import UNLIMITED, Occupancy


class OccupancyControl(QWidget):
    # (blocks per SM, merge key or "" for a discrete step)
    occupancyEdited = Signal(int, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName("occupancySlider")
        self.slider.setPageStep(1)
        self.slider.setTickPosition(QSlider.TickPosition.TicksBelow)
        self.spin = QSpinBox()
        self.spin.setObjectName("occupancySpin")
        self.spin.setSuffix(" blocks/SM")
        self.limit_label = QLabel()
        self.limit_label.setWordWrap(True)
        self.limit_label.setObjectName("occupancyLimiter")
        row = QHBoxLayout()
        row.addWidget(self.slider, 1)
        row.addWidget(self.spin)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.limit_label)
        self._drag_key = ""
        self._serial = 0
        self.slider.sliderPressed.connect(self._start_drag)
        self.slider.sliderReleased.connect(self._end_drag)
        self.slider.valueChanged.connect(self._slider_changed)
        self.spin.valueChanged.connect(self._spin_changed)

    def show_occupancy(self, occ: Occupancy | None, resident: int) -> None:
        """Show the range the launch allows and the value in use, without emitting edits."""
        maximum = max(1, occ.blocks_per_sm if occ is not None else 1)
        for w in (self.slider, self.spin):
            w.blockSignals(True)
            w.setRange(1, maximum)
            w.setValue(max(1, min(resident, maximum)))
            w.blockSignals(False)
        self.setEnabled(occ is not None and occ.blocks_per_sm > 0)
        if occ is None:
            self.limit_label.setText("occupancy unknown (no profile)")
            return
        limits = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in occ.limits.items() if v < UNLIMITED)
        self.limit_label.setText(
            f"max {occ.blocks_per_sm} blocks/SM ({occ.active_warps} warps, "
            f"{occ.occupancy_fraction:.0%}), limited by <b>{occ.limiter.replace('_', ' ')}</b>"
            f"<br><small>{limits}</small>")

    def _start_drag(self) -> None:
        self._serial += 1
        self._drag_key = f"occupancy-drag#{self._serial}"

    def _end_drag(self) -> None:
        self._drag_key = ""

    def _slider_changed(self, value: int) -> None:
        self.spin.blockSignals(True)
        self.spin.setValue(value)
        self.spin.blockSignals(False)
        self.occupancyEdited.emit(value, self._drag_key)

    def _spin_changed(self, value: int) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(value)
        self.slider.blockSignals(False)
        self.occupancyEdited.emit(value, "")
