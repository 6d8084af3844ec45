"""Assumptions tab: every input the evaluation guessed, what it took, why, how far the headline
figure moves at the alternative, and a field to give the real value in place.

A thin view over :mod:`engine.evaluation.assumptions` (the same list ``predict`` prints) and
:mod:`engine.evaluation.caveats`. Each guess is a card: the input, the value assumed, the effect
(filled in when the evaluation's part ``assumptions`` arrives), the rule, and a line edit holding
the assumed value: change it (or keep it) and press Enter or *Give* to make it the launch's own,
one undoable edit; the guess, and the figures' marks with it, go away.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from engine.analysis.loaded_data import parse_loaded_data
from engine.errors import WarplineError
from engine.evaluation import Evaluation
from engine.evaluation.assumptions import Assumption
from engine.evaluation.caveats import MARK, figure_caveats
from engine.launch import argument_value, parse_dim
from engine.state import WorkbenchState
from gui.session import Session
from gui.theme import changed_theme, current

KIND_TITLES = {"argument": "argument", "layout": "layout", "trip count": "trip count", "data": "data",
               "launch": "launch", "pattern": "address pattern"}


def fill_in_text(assumption: Assumption) -> str:
    """What the edit field starts with: the value assumed, in the form it takes."""
    fill = assumption.fill
    if fill.kind == "launch" and len(fill.values) == 2:
        grid, block = fill.values
        return f"{','.join(map(str, grid))} / {','.join(map(str, block))}"
    if len(set(fill.values)) == 1 and len(fill.values) > 1:
        return f"{fill.values[0]:g}"          # one value for the whole group
    return ", ".join(f"{v:g}" if isinstance(v, (int, float)) else str(v) for v in fill.values)


def state_with(state: WorkbenchState, assumption: Assumption, text: str, params: list[Any]) -> WorkbenchState:
    """``state`` with the value typed for ``assumption`` given; WarplineError says why not."""
    text = text.strip()
    if not text:
        raise WarplineError(f"{assumption.subject}: type a value first")
    fill = assumption.fill
    launch = state.launch
    if fill.kind == "args":
        parts = [p for p in text.replace(";", ",").replace(" ", ",").split(",") if p]
        if len(parts) == 1 and len(fill.keys) > 1:
            parts = parts * len(fill.keys)       # one value for every member of the group
        if len(parts) != len(fill.keys):
            raise WarplineError(f"{assumption.subject}: {len(fill.keys)} values wanted (arguments "
                                f"{', '.join(map(str, fill.keys))}), got {len(parts)}")
        args = {k: v for k, v in launch.args.items() if k not in fill.keys}
        for index, part in zip(fill.keys, parts, strict=True):
            try:
                number: int | float = int(part, 0)
            except ValueError:
                try:
                    number = float(part)
                except ValueError:
                    raise WarplineError(f"argument {index}: {part!r} is not a number") from None
            try:
                args[index] = argument_value(params[index], number)
            except WarplineError as exc:
                raise WarplineError(f"argument {index}: {exc}") from None
        return state.with_launch(args=args)
    if fill.kind == "trip":
        try:
            count = int(text)
        except ValueError:
            raise WarplineError(f"{assumption.subject}: {text!r} is not a whole number") from None
        if count < 0:
            raise WarplineError(f"{assumption.subject}: a trip count cannot be negative")
        return state.with_launch(trip_overrides={**launch.trip_overrides, fill.keys[0]: count})
    if fill.kind == "none":
        raise WarplineError(f"{assumption.subject}: no input settles it")
    if fill.kind == "data":
        if not fill.keys:
            raise WarplineError(f"{assumption.subject}: no pointer argument to declare the data of")
        parse_loaded_data(text)
        return state.with_launch(data={**launch.data, fill.keys[0]: text})
    grid_text, _, block_text = text.partition("/")
    changes: dict[str, Any] = {"grid": parse_dim(grid_text, "grid")}
    if block_text.strip():
        changes["block"] = parse_dim(block_text, "block")
    return state.with_launch(**changes)


class AssumptionCard(QFrame):
    """One guessed input: what, the value, the effect, why, and the field to give it."""

    given = Signal(object, str)        # (Assumption, the text typed)

    def __init__(self, assumption: Assumption, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.assumption = assumption
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setObjectName("assumptionCard")
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.effect = QLabel()
        self.effect.setObjectName("assumptionEffect")
        self.effect.setWordWrap(True)
        self.rule = QLabel()
        self.rule.setWordWrap(True)
        self.rule.setTextFormat(Qt.TextFormat.RichText)
        self.rule.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.edit = QLineEdit(fill_in_text(assumption))
        self.edit.setObjectName("assumptionEdit")
        self.edit.setPlaceholderText(assumption.fill.option)
        self.edit.setToolTip(f"The real value (command line: {assumption.fill.option}); Enter gives it")
        self.edit.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.button = QPushButton("Give")
        self.button.setToolTip("Make this the launch's own value: the guess and its marks go away (Ctrl+Z undoes it)")
        self.button.setEnabled(assumption.fill.kind in ("args", "trip", "launch")
                               or (assumption.fill.kind == "data" and bool(assumption.fill.keys)))
        self.edit.setEnabled(self.button.isEnabled())
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.edit, 1)
        row.addWidget(self.button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(2)
        layout.addWidget(self.title)
        layout.addWidget(self.effect)
        layout.addWidget(self.rule)
        layout.addLayout(row)
        self.edit.returnPressed.connect(self._give)
        self.button.clicked.connect(self._give)
        self.show_text()

    def show_text(self, effect: Any = None, computing: bool = False, muted: str = "#777") -> None:
        a = self.assumption
        self.title.setText(f"<b>{html.escape(a.subject)}</b> <small>[{KIND_TITLES.get(a.kind, a.kind)}]</small>"
                           f"<br>assumed: <b>{html.escape(a.assumed)}</b>")
        details = "".join(f"<br>{html.escape(d)}" for d in a.details) if len(a.details) > 1 else ""
        self.rule.setText(f'<small style="color:{muted}">{html.escape(a.rule)}{details}</small>')
        if a.alternative is None:
            self.effect.setText("no alternative to try: give the real value")
        elif effect is not None:
            self.effect.setText(f"if {a.alternative.description}: {effect.text()}")
        else:
            self.effect.setText(f"if {a.alternative.description}: " + ("computing…" if computing else "—"))

    def _give(self) -> None:
        self.given.emit(self.assumption, self.edit.text())


class AssumptionsPanel(QWidget):
    """The Assumptions tab of the results dock."""

    message = Signal(str)              # a refused value, for the status bar
    countChanged = Signal(int)         # guesses listed (for the tab's title)

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.summary = QLabel("No kernel open.")
        self.summary.setObjectName("assumptionsSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.profile_note = QLabel()
        self.profile_note.setObjectName("profileProvenance")
        self.profile_note.setWordWrap(True)
        self.cards_box = QWidget()
        self.cards = QVBoxLayout(self.cards_box)
        self.cards.setContentsMargins(0, 0, 0, 0)
        self.cards.setSpacing(4)
        self.cards.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.cards_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addWidget(self.profile_note)
        layout.addWidget(scroll, 1)
        self._theme = current(self.palette())
        self._shown: tuple[tuple[str, str], ...] | None = None
        self._result: Evaluation | None = None
        self.card_widgets: list[AssumptionCard] = []
        for signal in (session.timelineChanged, session.modelsChanged, session.evaluationFinished):
            signal.connect(self.show_result)
        session.assumptionsChanged.connect(self.show_result)

    def changeEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        theme = changed_theme(self, event)
        if theme is not None:
            self._theme = theme
            if self._result is not None:
                self._shown = None
                self.show_result(self._result)

    def show_result(self, result: Evaluation) -> None:
        self._result = result
        caveats = figure_caveats(result)
        t = self._theme
        if caveats.guessed:
            self.summary.setText(f'<span style="color:{t.assumed_text}"><b>{MARK} Every figure rests on '
                                 f"{caveats.count} assumed input{'s' if caveats.count != 1 else ''}.</b></span> "
                                 "Give the real values below (or keep a guess by giving it) to remove the mark.")
        else:
            self.summary.setText("No assumptions: every input the models read is given or follows from the PTX.")
        self.profile_note.setText(f"Profile {caveats.profile}." if caveats.profile else "")
        self.profile_note.setStyleSheet(f"color: {t.assumed_text}" if caveats.profile else "")
        self.profile_note.setVisible(bool(caveats.profile))
        shown = tuple((a.key, a.assumed) for a in result.assumptions)
        if shown != self._shown:
            self._shown = shown
            self._rebuild(result.assumptions)
        computing = "assumptions" not in result.parts
        muted = self.palette().color(QPalette.ColorRole.PlaceholderText).name()
        for card in self.card_widgets:
            card.show_text(result.effects.get(card.assumption.key), computing, muted)
        self.countChanged.emit(len(result.assumptions))

    def _rebuild(self, assumptions: tuple[Assumption, ...]) -> None:
        for card in self.card_widgets:
            self.cards.removeWidget(card)
            card.deleteLater()
        self.card_widgets = []
        for k, assumption in enumerate(assumptions):
            card = AssumptionCard(assumption)
            card.given.connect(self._give)
            self.cards.insertWidget(k, card)
            self.card_widgets.append(card)

    def _give(self, assumption: Assumption, text: str) -> None:
        state, inputs = self.session.state, self.session.inputs
        if state is None or inputs is None:
            return
        try:
            new = state_with(state, assumption, text, inputs.function.params)
        except WarplineError as exc:
            self.message.emit(str(exc))
            return
        self.session.apply(new, f"Give {assumption.subject}")
