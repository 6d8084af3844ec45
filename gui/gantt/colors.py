"""Colours of the Gantt chart: data bars (by warp or by instruction class) and stall causes.

The two families are chosen apart: data bars use the Tableau hues; stall causes use red,
purple and orange for dependencies and greys for contention, so a warp lane never reads like
a subsystem lane. Every palette keeps neighbouring
keys far apart in hue, because adjacent warps/classes often sit side by side in a lane.
"""

from __future__ import annotations

from PySide6.QtGui import QColor

from engine.pipeline.trace import STALL_CAUSES
from gui.theme import LIGHT, Theme

# Blues, greens, teals, yellows and pinks: no red, purple, dark orange or grey, which the
# stall causes use, so a bar's colour never leaves in doubt whether it is work or a wait.
DATA_PALETTE: tuple[str, ...] = (
    "#4e79a7", "#59a14f", "#edc948", "#76b7b2", "#ff9da7", "#00a087",
    "#17becf", "#8cd17d", "#7fb1e3", "#bcbd22", "#1f5f8b", "#e377c2",
)

STALL_PALETTE: dict[str, str] = {
    # dependencies in vivid hues (they are what a kernel author can act on) ...
    "memory_dependency": "#c0392b",
    "compute_dependency": "#6c3483",
    "barrier": "#b9770e",
    # ... contention in greys, so the common issue-limit waits do not drown them
    "subsystem_busy": "#5f5f5f",
    "issue_limit": "#bdbdbd",
    "not_resident": "#e6e6e6",
    "finished": "#f3f3f3",
}

# Collapsed warp groups (heat strips): issuing in a dark blue of the work family, idle in the
# theme's "finished" grey, every wait in its stall cause's colour.
HEAT_ISSUING = "#2a5d8f"

HIGHLIGHT_FILL = "#ffe600"
HIGHLIGHT_OUTLINE = "#000000"
# the light theme's (exports draw in it whatever the desktop's theme)
BACKGROUND = LIGHT.chart_background
FOREGROUND = LIGHT.chart_text
# the stall causes that mean "no warp here": drawn in the theme's near-background greys
_NOTHING = {"finished": "idle", "not_resident": "not_resident"}


def data_color(key: int) -> QColor:
    return QColor(DATA_PALETTE[key % len(DATA_PALETTE)])


def stall_color(cause: int, theme: Theme = LIGHT) -> QColor:
    name = STALL_CAUSES[cause]
    if name in _NOTHING:
        return theme.qcolor(_NOTHING[name])
    return QColor(STALL_PALETTE[name])


def heat_color(category: str, theme: Theme = LIGHT) -> QColor:
    """Colour of a heat-strip category (``engine.timeline.activity.HEAT_CATEGORIES``) in ``theme``."""
    if category == "issuing":
        return QColor(HEAT_ISSUING)
    if category == "idle":
        return theme.qcolor("idle")
    return QColor(STALL_PALETTE[category])
