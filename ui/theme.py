"""One look for the whole application: the palette, light and dark themes, presentation mode.

Every colour a chart or a panel draws comes from here, so a chart on a projector and a
chart in a PNG look the same. The series palette is Okabe-Ito (Okabe & Ito, "Color
Universal Design", 2008): eight colours that colour-blind viewers can tell apart and that
survive a washed-out projector. The order puts yellow last because it has poor contrast
on a white background; the black of the original palette becomes the theme's ink (black on
light, near-white on dark) so it is never invisible.

Themes are applied with :func:`apply_theme`; charts, tables and anything else registered
with :func:`register` are restyled at once (they implement ``apply_theme(theme)`` and
``set_presentation(bool)``).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette, QPen

# Okabe-Ito, by name. The values are the published ones.
BLUE = "#0072B2"
ORANGE = "#E69F00"
GREEN = "#009E73"
VERMILLION = "#D55E00"
PURPLE = "#CC79A7"
SKY = "#56B4E9"
YELLOW = "#F0E442"
BLACK = "#000000"

OKABE_ITO: tuple[str, ...] = (BLUE, ORANGE, GREEN, VERMILLION, PURPLE, SKY, YELLOW, BLACK)

# Meaning, not decoration: the same colours mean the same things on every panel.
MEMORY_BOUND = BLUE  # the bandwidth roof, memory-bound kernels
COMPUTE_BOUND = ORANGE  # the compute roof, compute-bound kernels
OPERATING_POINT = VERMILLION  # the current scenario's point, always marked
MEASURED = GREEN  # measured data (nccl-tests logs, profiler numbers)
REFERENCE = PURPLE  # a compared scenario or a reference curve

#: How much bigger fonts and lines get in presentation mode.
PRESENTATION_SCALE = 1.6
#: Base sizes (points for fonts, device-independent pixels for lines) before presentation scale.
BASE_LINE_WIDTH = 2.0
BASE_TICK_FONT_PT = 10.0
BASE_LABEL_FONT_PT = 11.0
BASE_MARKER_SIZE = 12.0


@dataclass(frozen=True)
class Theme:
    """Colours for one theme. ``ink`` is the text and axis colour."""

    name: str
    dark: bool
    background: str
    ink: str
    muted: str  # secondary text, minor grid
    grid_alpha: float
    error: str  # invalid-input border and message
    series: tuple[str, ...] = field(default=())
    notice_bg: str = "#FFF4D6"  # background of a line that says "this differs from the plan"

    def series_color(self, i: int) -> QColor:
        return QColor(self.series[i % len(self.series)])

    def tone(self, color) -> QColor:
        """A palette colour in this theme's variant: on a dark background the darker Okabe-Ito
        colours (blue, green, vermillion) are lifted until they read as well as on white."""
        qcolor = QColor(color)
        if self.dark and qcolor.lightnessF() < 0.5:
            qcolor = qcolor.lighter(140)
        return qcolor

    def color(self, name: str) -> QColor:
        """A semantic colour: "memory_bound", "compute_bound", "operating_point", "measured",
        "reference", "ink", "background", "muted", "error"."""
        table = {
            "memory_bound": MEMORY_BOUND,
            "compute_bound": COMPUTE_BOUND,
            "operating_point": OPERATING_POINT,
            "measured": MEASURED,
            "reference": REFERENCE,
            "ink": self.ink,
            "background": self.background,
            "muted": self.muted,
            "error": self.error,
        }
        try:
            return self.tone(table[name])
        except KeyError:
            raise ValueError(f"unknown semantic colour {name!r}; one of {', '.join(table)}") from None


LIGHT = Theme(
    name="light",
    dark=False,
    background="#FFFFFF",
    ink="#000000",
    muted="#555555",
    grid_alpha=0.14,
    error="#C62828",
    series=(BLUE, ORANGE, GREEN, VERMILLION, PURPLE, SKY, "#000000", YELLOW),
)
DARK = Theme(
    name="dark",
    dark=True,
    background="#1E1E1E",
    ink="#EDEDED",
    muted="#A8A8A8",
    grid_alpha=0.2,
    error="#FF6E6E",
    notice_bg="#4A3B12",
    # on a dark background the blue is too dim to be the first series; sky leads instead
    series=(SKY, ORANGE, GREEN, VERMILLION, PURPLE, BLUE, "#EDEDED", YELLOW),
)
THEMES = {"light": LIGHT, "dark": DARK}

_state = {"theme": LIGHT, "presentation": False}
_registry: weakref.WeakSet = weakref.WeakSet()


def current_theme() -> Theme:
    return _state["theme"]


def presentation_enabled() -> bool:
    return bool(_state["presentation"])


def scale_factor(presentation: bool | None = None) -> float:
    """1.0 normally, :data:`PRESENTATION_SCALE` in presentation mode."""
    on = presentation_enabled() if presentation is None else presentation
    return PRESENTATION_SCALE if on else 1.0


def series_color(i: int, theme: Theme | None = None) -> QColor:
    """The i-th colour of the one qualitative palette (wraps around after eight)."""
    return (theme or current_theme()).series_color(i)


def semantic_color(name: str, theme: Theme | None = None) -> QColor:
    return (theme or current_theme()).color(name)


def theme_for_background(background: QColor) -> Theme:
    """The theme whose ink is readable on ``background`` (used by exports)."""
    if background.alpha() == 0:
        return current_theme()
    return DARK if background.lightnessF() < 0.5 else LIGHT


def register(obj) -> None:
    """Keep ``obj`` restyled on theme and presentation changes (held weakly)."""
    _registry.add(obj)


def _live(obj) -> bool:
    try:
        import shiboken6

        return shiboken6.isValid(obj)
    except (ImportError, TypeError):
        return True


def _palette(theme: Theme) -> QPalette:
    pal = QPalette()
    if not theme.dark:
        from PySide6.QtWidgets import QApplication

        style = QApplication.style() if QApplication.instance() else None
        return style.standardPalette() if style is not None else pal
    # Fusion outlines check boxes and fields in the window colour darkened: on a dark window
    # that outline vanishes against a field as dark as the window. Fields a step lighter than
    # the window keep their frame and box visible on a projector.
    window, base, text = QColor("#262626"), QColor("#3A3A3A"), QColor(theme.ink)
    role = QPalette.ColorRole
    for r, c in (
        (role.Window, window),
        (role.WindowText, text),
        (role.Base, base),
        (role.AlternateBase, QColor("#434343")),
        (role.ToolTipBase, QColor("#3A3A3A")),
        (role.ToolTipText, text),
        (role.PlaceholderText, QColor(theme.muted)),
        (role.Text, text),
        (role.Button, QColor("#353535")),
        (role.ButtonText, text),
        (role.BrightText, QColor(theme.error)),
        (role.Link, QColor(SKY)),
        (role.Highlight, QColor(BLUE)),
        (role.HighlightedText, QColor("#FFFFFF")),
    ):
        pal.setColor(r, c)
    for r in (role.Text, role.WindowText, role.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, r, QColor("#7F7F7F"))
    return pal


def resolve_theme(mode: str) -> Theme:
    """"light", "dark", or "system" (follows the platform's colour scheme)."""
    if mode in THEMES:
        return THEMES[mode]
    if mode != "system":
        raise ValueError(f"theme must be 'light', 'dark' or 'system', got {mode!r}")
    app = QGuiApplication.instance()
    if app is not None and app.styleHints().colorScheme() == Qt.ColorScheme.Dark:
        return DARK
    return LIGHT


def apply_theme(app, mode: str = "system") -> Theme:
    """Apply a theme to the application, pyqtgraph's defaults and every registered widget."""
    hints = app.styleHints()
    scheme = {"light": Qt.ColorScheme.Light, "dark": Qt.ColorScheme.Dark}.get(mode, Qt.ColorScheme.Unknown)
    if hasattr(hints, "setColorScheme"):  # Qt >= 6.8
        hints.setColorScheme(scheme)
    theme = resolve_theme(mode)
    if mode != "system" or theme.dark:
        app.setPalette(_palette(theme))
    else:
        app.setPalette(_palette(LIGHT))
    _state["theme"] = theme
    pg.setConfigOptions(background=theme.background, foreground=theme.ink, antialias=True)
    # Charts and tables first, then what redraws with them (a panel's series read its chart's theme).
    objects = sorted((o for o in list(_registry) if _live(o) and hasattr(o, "apply_theme")),
                     key=lambda o: bool(getattr(o, "THEMED_AFTER_ITS_PARTS", False)))
    for obj in objects:
        obj.apply_theme(theme)
    return theme


def set_presentation(enabled: bool) -> None:
    """Presentation mode for every registered chart and table: thick lines, large fonts."""
    _state["presentation"] = bool(enabled)
    for obj in list(_registry):
        if _live(obj) and hasattr(obj, "set_presentation"):
            obj.set_presentation(bool(enabled))


def error_style_sheet(selector: str = "QLineEdit") -> str:
    """Style sheet giving an input the red border of invalid input."""
    return f"{selector} {{ border: 2px solid {current_theme().error}; border-radius: 3px; }}"


def widened_pen(pen: QPen, factor: float) -> QPen:
    """A copy of ``pen`` for a picture ``factor`` times the screen's resolution: a cosmetic
    (or hairline) pen is so many pixels wide whatever the scale, so it is widened by the
    factor to keep its look; a pen in data units scales with the picture by itself."""
    pen = QPen(pen)
    if pen.isCosmetic() or pen.widthF() == 0:
        pen.setWidthF((pen.widthF() or 1.0) * factor)
    return pen
