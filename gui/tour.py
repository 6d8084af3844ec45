"""Help › Quick start: a short guided tour of the window. Each step outlines one part of the window
and says in two or three sentences what it shows and what to try; Next and Back walk through them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QPoint, QRect, Qt, QTimer
from PySide6.QtWidgets import QDialog, QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

BODY_WIDTH = 400          # pixels of a step's text: its height follows from the text
MARGIN_PX = 24           # between the dialog and the window's edge


@dataclass(frozen=True)
class Step:
    title: str
    text: str
    target: Callable[[], QWidget]
    before: Callable[[], None] = lambda: None      # bring the target on screen (raise a dock, a tab)


class _Outline(QFrame):
    """An orange frame over the widget a step is about; lets every click through."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("tourOutline")
        self.setStyleSheet("#tourOutline { border: 3px solid #ff8c00; background: transparent; }")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.hide()

    def cover(self, widget: QWidget) -> None:
        window = self.parentWidget()
        top_left = widget.mapTo(window, QPoint(0, 0))
        self.setGeometry(top_left.x() - 2, top_left.y() - 2, widget.width() + 4, widget.height() + 4)
        self.raise_()
        self.show()


class QuickStartTour(QDialog):
    def __init__(self, window: QWidget, steps: list[Step]) -> None:
        super().__init__(window)
        self.setWindowTitle("Quick start")
        self.setModal(False)
        self.steps = steps
        self.index = 0
        self.outline = _Outline(window)
        self.heading = QLabel()
        self.heading.setObjectName("tourHeading")
        self.body = QLabel()
        self.body.setObjectName("tourBody")
        self.body.setWordWrap(True)
        self.body.setFixedWidth(BODY_WIDTH)
        self.counter = QLabel()
        self.back = QPushButton("Back")
        self.next = QPushButton("Next")
        self.back.clicked.connect(lambda: self.go(self.index - 1))
        self.next.clicked.connect(self._next)
        buttons = QHBoxLayout()
        buttons.addWidget(self.counter, 1)
        buttons.addWidget(self.back)
        buttons.addWidget(self.next)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.body, 1)
        layout.addLayout(buttons)
        # The window's layout can move the outlined widget after a step starts (a banner or the
        # load status appears or goes): the outline follows it while the tour is open.
        self._follow = QTimer(self)
        self._follow.setInterval(50)
        self._follow.timeout.connect(self._recover)
        self._follow.start()
        self.finished.connect(self._closed)
        self.go(0)

    def _closed(self, _result: int) -> None:
        self._follow.stop()
        self.outline.hide()

    def _recover(self) -> None:
        target = self.steps[self.index].target()
        if self.outline.isVisible() and target.isVisible():
            self.outline.cover(target)

    def _next(self) -> None:
        if self.index + 1 < len(self.steps):
            self.go(self.index + 1)
        else:
            self.accept()

    def go(self, index: int) -> None:
        self.index = max(0, min(index, len(self.steps) - 1))
        step = self.steps[self.index]
        step.before()
        self.heading.setText(f"<b>{step.title}</b>")
        self.body.setText(step.text)
        # a dialog keeps the size of its first step: the text of a longer one would be cut off
        self.body.setFixedHeight(self.body.heightForWidth(BODY_WIDTH))
        self.counter.setText(f"{self.index + 1} of {len(self.steps)}")
        self.back.setEnabled(self.index > 0)
        self.next.setText("Done" if self.index + 1 == len(self.steps) else "Next")
        self.adjustSize()
        target = step.target()
        if target.isVisible():
            self.outline.cover(target)
            self._stand_aside(target)
        else:
            self.outline.hide()

    def _stand_aside(self, target: QWidget) -> None:
        """Put the dialog in the corner of the window where it hides least of ``target``."""
        window = self.parentWidget()
        if window is None or not window.isVisible():
            return
        area = QRect(window.mapToGlobal(QPoint(0, 0)), window.size())
        aim = QRect(target.mapToGlobal(QPoint(0, 0)), target.size())
        size = self.frameGeometry().size()
        inset = MARGIN_PX
        corners = [QPoint(area.right() - size.width() - inset, area.bottom() - size.height() - inset),
                   QPoint(area.left() + inset, area.bottom() - size.height() - inset),
                   QPoint(area.right() - size.width() - inset, area.top() + inset),
                   QPoint(area.left() + inset, area.top() + inset)]

        def hidden(corner: QPoint) -> int:
            common = QRect(corner, size).intersected(aim)
            return common.width() * common.height() if common.isValid() else 0

        self.move(min(corners, key=hidden))

    def target(self) -> QWidget:
        return self.steps[self.index].target()
