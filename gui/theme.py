"""Light and dark colours of everything Warpline paints itself (charts, marked cells, source
gutters, the error banner), chosen from the system palette.

Qt styles the widgets from the platform's palette; what the app draws with its own colours has to
follow it, or a dark desktop gets white charts with black-on-dark text in marked cells. A palette
is dark when its window colour is darker than its text. Widgets read :func:`current` when they
paint or fill, and repaint on ``QEvent.PaletteChange`` (the chart re-colours its items there).

Exports (PNG, SVG, PDF figures) always use :data:`LIGHT`: they go into reports and onto paper.
The stall and data colours of the chart are the same in both themes; only what stands for
"nothing" (idle, finished, not resident) follows the background.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent
from PySide6.QtGui import QBrush, QColor, QGuiApplication, QPalette

PALETTE_EVENTS = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)


@dataclass(frozen=True)
class Theme:
    name: str
    dark: bool
    # charts (the Gantt chart, the occupancy curves, the bottleneck bars)
    chart_background: str
    chart_text: str            # axis labels, legend text, tooltip text, export titles
    chart_axis: str            # axis lines
    separator: str             # between the unit lanes and the warp lanes
    tip_fill: tuple[int, int, int, int]
    tip_border: str
    hover_outline: str
    marker: str                # the occupancy plot's line at the current occupancy
    idle: str                  # a heat strip's idle share; a finished warp's lane
    not_resident: str          # a warp slot before its block is resident
    range_fill: tuple[int, int, int, int]   # the selected superstep's span of cycles
    # tables and text
    edited: str                # an overridden cell
    unknown: str               # a value the models had to assume (set it)
    rejected: str              # a refused value
    selected_rows: str         # the rows of the selected superstep
    line_fill: str             # highlighted source lines
    gutter_fill: str
    gutter_text: str
    better: str                # fewer cycles than the baseline
    worse: str
    error_text: str            # a model with no figure, a refused prediction
    derived_text: str          # a profile figure derived from others
    assumed_text: str          # a profile figure assumed or a placeholder
    banner_fill: str
    banner_border: str
    banner_text: str

    def qcolor(self, field: str) -> QColor:
        value = getattr(self, field)
        return QColor(*value) if isinstance(value, tuple) else QColor(value)


LIGHT = Theme(
    name="light", dark=False,
    chart_background="#ffffff", chart_text="#202020", chart_axis="#404040", separator="#909090",
    tip_fill=(255, 255, 235, 240), tip_border="#808080", hover_outline="#000000", marker="#444444",
    idle="#f3f3f3", not_resident="#e6e6e6", range_fill=(255, 196, 0, 48),
    edited="#ffecb3", unknown="#ffd2a0", rejected="#ff9696", selected_rows="#c8e1ff",
    line_fill="#ffec96", gutter_fill="#f0f0f0", gutter_text="#828282",
    better="#1b7a1b", worse="#b00020", error_text="#aa0000", derived_text="#1f5fa8", assumed_text="#8a5a00",
    banner_fill="#fde2e2", banner_border="#dd3333", banner_text="#3a0000",
)

DARK = Theme(
    name="dark", dark=True,
    chart_background="#1b1d21", chart_text="#e4e4e4", chart_axis="#b8b8b8", separator="#6a6a6a",
    tip_fill=(44, 46, 52, 245), tip_border="#9a9a9a", hover_outline="#ffffff", marker="#d0d0d0",
    idle="#34363b", not_resident="#2a2c31", range_fill=(255, 214, 90, 24),
    edited="#5c4a14", unknown="#6b3f12", rejected="#7a2424", selected_rows="#1f3f66",
    line_fill="#5a5020", gutter_fill="#25272b", gutter_text="#8c8c8c",
    better="#6fd36f", worse="#ff7b8a", error_text="#ff8080", derived_text="#82b4f0", assumed_text="#e0b060",
    banner_fill="#4a1c1c", banner_border="#d05050", banner_text="#ffe0e0",
)


def style_chart(widget: object, plot: object, theme: Theme) -> None:
    """``widget``'s background (a pyqtgraph GraphicsView) and ``plot``'s left and bottom axes
    (a PlotItem or PlotWidget) in ``theme``: every chart of the window is coloured the same."""
    widget.setBackground(theme.chart_background)
    for side in ("left", "bottom"):
        axis = plot.getAxis(side)
        axis.setTextPen(theme.chart_text)
        axis.setPen(theme.chart_axis)


def is_dark(palette: QPalette | None = None) -> bool:
    """Whether ``palette`` (default: the application's) is a dark one: its windows darker than
    their text."""
    pal = palette if palette is not None else QGuiApplication.palette()
    return pal.color(QPalette.ColorRole.Window).lightness() < pal.color(QPalette.ColorRole.WindowText).lightness()


_BY_PALETTE: dict[int, Theme] = {}


def current(palette: QPalette | None = None) -> Theme:
    """The theme of ``palette`` (default: the application's). Item models call this for every
    marked cell they paint: the answer is kept per palette (its cache key changes with it)."""
    pal = palette if palette is not None else QGuiApplication.palette()
    key = pal.cacheKey()
    theme = _BY_PALETTE.get(key)
    if theme is None:
        if len(_BY_PALETTE) > 64:
            _BY_PALETTE.clear()
        theme = _BY_PALETTE[key] = DARK if is_dark(pal) else LIGHT
    return theme


def changed_theme(widget: object, event: QEvent) -> Theme | None:
    """The theme ``widget`` should take after ``event``: its palette's, when the event is a
    palette change and that theme differs from the widget's ``_theme``; None otherwise, and for
    a widget that fixes its theme (``_fixed_theme``) or has not set up its ``_theme`` yet
    (palette events come while pyqtgraph sets a view up, before the subclass's own set-up)."""
    if event.type() not in PALETTE_EVENTS or not hasattr(widget, "_theme"):
        return None
    if getattr(widget, "_fixed_theme", None) is not None:
        return None
    theme = current(widget.palette())  # type: ignore[attr-defined]
    return theme if theme != widget._theme else None  # type: ignore[attr-defined]


_BRUSHES: dict[tuple[int, str], QBrush] = {}


def brush(field: str, palette: QPalette | None = None) -> QBrush:
    """A brush of the current theme's colour ``field`` (item models return these as backgrounds,
    for every marked cell they paint: kept per palette and field)."""
    pal = palette if palette is not None else QGuiApplication.palette()
    key = (pal.cacheKey(), field)
    found = _BRUSHES.get(key)
    if found is None:
        if len(_BRUSHES) > 256:
            _BRUSHES.clear()
        found = _BRUSHES[key] = QBrush(current(pal).qcolor(field))
    return found


def dark_palette() -> QPalette:
    """A dark palette as a dark desktop theme hands it to Qt (screenshots and tests use it to
    stand for the system's)."""
    pal = QPalette()
    role = QPalette.ColorRole
    for r, colour in ((role.Window, "#2d2f33"), (role.WindowText, "#e4e4e4"), (role.Base, "#1f2125"),
                      (role.AlternateBase, "#292b30"), (role.Text, "#e4e4e4"), (role.Button, "#383a3f"),
                      (role.ButtonText, "#e4e4e4"), (role.BrightText, "#ffffff"), (role.Highlight, "#3d7bd9"),
                      (role.HighlightedText, "#ffffff"), (role.ToolTipBase, "#383a3f"),
                      (role.ToolTipText, "#e4e4e4"), (role.PlaceholderText, "#8c8c8c"), (role.Link, "#7fb2f0"),
                      (role.Light, "#4a4c52"), (role.Midlight, "#3e4045"), (role.Mid, "#303236"),
                      (role.Dark, "#1a1b1e"), (role.Shadow, "#0d0d0f")):
        pal.setColor(r, QColor(colour))
    for r, colour in ((role.WindowText, "#7c7c7c"), (role.Text, "#7c7c7c"), (role.ButtonText, "#7c7c7c")):
        pal.setColor(QPalette.ColorGroup.Disabled, r, QColor(colour))
    return pal


def contrast(a: QColor | str, b: QColor | str) -> float:
    """WCAG contrast ratio of two colours (1 to 21; 4.5 is the minimum for body text)."""
    def luminance(c: QColor) -> float:
        def channel(v: float) -> float:
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
        return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF())

    la, lb = sorted((luminance(QColor(a)), luminance(QColor(b))), reverse=True)
    return (la + 0.05) / (lb + 0.05)
