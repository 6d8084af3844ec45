"""Colours of the Gantt chart: data bars (by warp or by instruction class) and stall causes.

The two families are chosen apart: data bars use the Tableau hues; stall causes use red,
purple and orange for dependencies and greys for contention, so a warp lane never reads like
a subsystem lane. Every palette keeps neighbouring
keys far apart in hue, because adjacent warps/classes often sit side by side in a lane.
"""

from __future__ import annotations

from PySide6.QtGui import QColor

from engine.pipeline.trace import STALL_CAUSES

# Tableau-10 plus two extra hues: widely used, distinguishable for common colour-vision deficits.
DATA_PALETTE: tuple[str, ...] = (
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
    "#b07aa1", "#ff9da7", "#9c755f", "#17becf", "#8cd17d", "#d37295",
)

STALL_PALETTE: dict[str, str] = {
    # dependencies in vivid hues (they are what a kernel author can act on) ...
    "memory_dependency": "#c0392b",
    "compute_dependency": "#6c3483",
    "barrier": "#b9770e",
    # ... contention in greys, so the common issue-limit waits do not drown them
    "subsystem_busy": "#5d6d7e",
    "issue_limit": "#b9c7d4",
    "not_resident": "#e3e5e8",
    "finished": "#f0f2f3",
}

HIGHLIGHT_FILL = "#ffe600"
HIGHLIGHT_OUTLINE = "#000000"
RANGE_FILL = QColor(255, 196, 0, 48)
HOVER_OUTLINE = "#000000"
BACKGROUND = "#ffffff"
FOREGROUND = "#202020"


def data_color(key: int) -> QColor:
    return QColor(DATA_PALETTE[key % len(DATA_PALETTE)])


def stall_color(cause: int) -> QColor:
    return QColor(STALL_PALETTE[STALL_CAUSES[cause]])
