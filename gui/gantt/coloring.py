"""What colour each bar of the chart gets: the colour mode (by warp, by instruction class, by
block) with its toolbar box, the theme the chart draws in, and the legend's name of each colour.
The palettes themselves are :mod:`gui.gantt.colors`'."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QComboBox

from engine.pipeline.trace import STALL_CAUSES, Trace
from engine.timeline.lanes import WARP_COLORS, Lane, TimelineLayout
from gui.gantt import colors
from gui.theme import Theme

# Colour modes of the instruction bars; "block" is drawn here (the layout knows warp and class).
COLOR_MODES = ("warp", "class", "block")
COLOR_MODE_TITLES = ("colour by warp", "colour by instruction class", "colour by block")


class ChartColoring:
    """The colour mode and theme of one chart; ``mode_box`` is the toolbar's choice of mode."""

    def __init__(self, theme: Theme, fixed: Theme | None, on_mode: Callable[[str], None]) -> None:
        """``fixed``: the theme given to the chart (None: it follows the system palette);
        ``on_mode``: called with the mode the user picks in the box."""
        self.theme = theme
        self.fixed_theme = fixed
        self.mode = "warp"
        self.mode_box = QComboBox()
        self.mode_box.addItems(list(COLOR_MODE_TITLES))
        self.mode_box.currentIndexChanged.connect(lambda i: on_mode(COLOR_MODES[i]))

    def show_mode(self, mode: str) -> None:
        """The box shows ``mode`` (without reporting it as the user's pick)."""
        if mode not in COLOR_MODES:
            raise ValueError(f"colour mode {mode!r}: choose one of {COLOR_MODES}")
        if self.mode_box.currentIndex() != COLOR_MODES.index(mode):
            self.mode_box.blockSignals(True)
            self.mode_box.setCurrentIndex(COLOR_MODES.index(mode))
            self.mode_box.blockSignals(False)

    def stall_color(self, cause: int) -> QColor:
        return colors.stall_color(cause, self.theme)

    @staticmethod
    def stall_name(cause: int) -> str:
        return STALL_CAUSES[cause]

    @staticmethod
    def data_color(key: int) -> QColor:
        return colors.data_color(key)

    def color_keys(self, lane: Lane, layout: TimelineLayout, trace: Trace) -> np.ndarray:
        """The colour key of every bar of ``lane`` in the current mode."""
        if self.mode == "block" and lane.source == "issues":
            keys: np.ndarray = (trace.issues["block"][lane.row] % WARP_COLORS).astype(np.int16)
            return keys
        return layout.color_keys(lane, trace, "warp" if self.mode == "block" else self.mode)

    def data_names(self, layout: TimelineLayout, trace: Trace) -> Callable[[int], str]:
        """The legend's text of each instruction-bar colour key in the current mode."""
        if self.mode in ("warp", "block"):
            ids = np.flatnonzero(np.bincount(trace.issues[self.mode])) if len(trace.issues) \
                else np.zeros(0, np.int64)
            noun = self.mode

            def name_of(k: int) -> str:
                return id_list(noun, ids[ids % WARP_COLORS == k].tolist())
            return name_of
        classes = layout.classes

        def class_of(k: int) -> str:
            return classes[k]
        return class_of


def id_list(noun: str, ids: list[int]) -> str:
    """Legend text of one colour: the warps (or blocks) drawn in it, e.g. "warps 1, 13, 25 …"."""
    if len(ids) == 1:
        return f"{noun} {ids[0]}"
    shown = ", ".join(str(i) for i in ids[:3])
    return f"{noun}s {shown}" + (" …" if len(ids) > 3 else "")
