"""A one-line label that ends in "…" when its text is wider than the label, with the whole text in
its tooltip: a long demangled signature or a run's statistics never widen a panel (the splitters
would jump) and are never cut off mid-word without a sign."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    """``text()`` is the whole text; what is painted is elided to the label's width. The tooltip
    is the whole text when it does not fit, followed by any tooltip set with :meth:`setToolTip`."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._extra_tip = ""
        self._update_tip()

    def setText(self, text: str) -> None:  # noqa: N802 - Qt API
        super().setText(text)
        self._update_tip()

    def setToolTip(self, tip: str) -> None:  # noqa: N802 - Qt API
        self._extra_tip = tip
        self._update_tip()

    def shown_text(self) -> str:
        """What the label paints at its current width."""
        width = max(0, self.contentsRect().width() - 2 * self.margin())
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, width)

    def is_elided(self) -> bool:
        return self.shown_text() != self.text()

    def _update_tip(self) -> None:
        parts = [self.text()] if self.text() and self.is_elided() else []
        if self._extra_tip:
            parts.append(self._extra_tip)
        super().setToolTip("\n\n".join(parts))

    def resizeEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        self._update_tip()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        painter = QPainter(self)
        rect = self.contentsRect().adjusted(self.margin(), self.margin(), -self.margin(), -self.margin())
        self.style().drawItemText(painter, rect, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                                  self.palette(), self.isEnabled(), self.shown_text(), self.foregroundRole())
        painter.end()

