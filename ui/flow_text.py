"""Lines of coloured text in a chart's layout, wrapped and painted directly.

A chart's caption and key change with every edit (new seconds, new percentages). As rich text
(a ``QGraphicsTextItem`` given HTML) each change parsed the markup, built a text document and
laid it out again, and each paint drew it through that document: about a sixth of a Run plan
edit. :class:`FlowText` takes the same content as plain runs (text, colour, weight), measures
them with the font's metrics, breaks lines between pieces, and paints each run with one
``drawText``. Text is never interpreted as markup: whatever a run holds is drawn as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QStaticText, QTransform
from PySide6.QtWidgets import QGraphicsLayout, QSizePolicy

#: px around the text, as a text document's default margin (the look the charts had)
MARGIN = 4.0
#: the weight of a bold run (CSS 600: the charts' emphasis, not a heavy bold)
BOLD = QFont.Weight.DemiBold
#: what a chart's key puts before each entry's text
SWATCH = "\u25a0"


class TextRun(NamedTuple):
    """Text in one colour and weight; ``color`` None is the block's ink."""

    text: str
    color: str | None = None
    bold: bool = False


#: runs drawn side by side and never broken across lines (a key's swatch and its label)
Piece = tuple[TextRun, ...]


def words(text: str, color: str | None = None, *, bold: bool = False) -> list[Piece]:
    """``text`` as pieces that may break between words."""
    return [(TextRun(word, color, bold),) for word in text.split()]


def key_entry(color: str, text: str, *, bold: bool = False) -> Piece:
    """One entry of a chart's key: a swatch in ``color`` and its text, kept on one line."""
    return (TextRun(SWATCH, color, bold), TextRun("\u00a0" + text, None, bold))


class _Placed(NamedTuple):
    x: float
    line: int
    run: TextRun
    width: float


class FlowText(pg.GraphicsWidget):
    """Paragraphs of pieces, wrapped at the width it is given, in a chart's layout.

    Its height is its lines' (it asks its layout for another only when that changes); its width
    is whatever the layout gives it. ``gap`` is the room between pieces, in spaces: 1 between
    words, more between a key's entries."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._paragraphs: tuple[tuple[Piece, ...], ...] = ()
        self._gap = 1
        self._ink = QColor("#000000")
        self._size_pt = 9.0
        self._fonts: dict[bool, QFont] = {}
        self._wrap_width = 400.0
        self._placed: list[_Placed] = []
        self._lines = 0
        self._natural_width = 0.0
        self._colors: dict[str, QColor] = {}
        self._prepared: dict[tuple[str, bool], QStaticText] = {}
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.setVisible(False)

    # -- content -----------------------------------------------------------------------------
    def set_paragraphs(self, paragraphs: Sequence[Sequence[Piece]], ink: str, size_pt: float, *,
                       gap: int = 1) -> None:
        content = tuple(tuple(p) for p in paragraphs if p)
        ink_color = QColor(ink)
        if (content, gap, size_pt) == (self._paragraphs, self._gap, self._size_pt) and ink_color == self._ink:
            return
        if size_pt != self._size_pt:
            self._fonts.clear()
            self._prepared.clear()
        self._paragraphs, self._gap, self._size_pt, self._ink = content, gap, size_pt, ink_color
        self.setVisible(bool(content))
        self._lay_out()

    @property
    def ink(self) -> QColor:
        return QColor(self._ink)

    @property
    def size_pt(self) -> float:
        return self._size_pt

    def plain_text(self) -> str:
        """The text as shown: a line per paragraph, pieces joined by spaces (no wrapping)."""
        return "\n".join(" ".join("".join(run.text for run in piece) for piece in para)
                         for para in self._paragraphs)

    def runs(self) -> list[TextRun]:
        return [run for para in self._paragraphs for piece in para for run in piece]

    def set_wrap_width(self, width: float) -> None:
        width = max(80.0, float(width))
        if abs(self._wrap_width - width) < 1:
            return
        self._wrap_width = width
        if not self._lay_out():
            self.updateGeometry()  # the same lines, another preferred width

    def text_height(self) -> float:
        return self._height()

    def line_count(self) -> int:
        return self._lines

    # -- layout --------------------------------------------------------------------------------
    def _font(self, bold: bool) -> QFont:
        font = self._fonts.get(bold)
        if font is None:
            font = QFont()
            font.setPointSizeF(self._size_pt)
            if bold:
                font.setWeight(BOLD)
            self._fonts[bold] = font
        return font

    def _line_height(self) -> float:
        return QFontMetricsF(self._font(False)).lineSpacing()

    def _height(self) -> float:
        return 2 * MARGIN + self._lines * self._line_height() if self._lines else 0.0

    def _lay_out(self) -> bool:
        """Place the runs; True if that gave the block another height (its layout was asked)."""
        before = (self._lines, self._line_height())
        space = self._width(" ", False)
        gap = space * self._gap
        room = self._wrap_width - 2 * MARGIN
        placed: list[_Placed] = []
        line = -1
        for para in self._paragraphs:
            line += 1
            x = 0.0
            for piece in para:
                widths = [self._width(run.text, run.bold) for run in piece]
                start = x + gap if x > 0 else 0.0
                if x > 0 and start + sum(widths) > room:
                    line += 1
                    start = 0.0
                x = start
                for run, width in zip(piece, widths, strict=True):
                    last = placed[-1] if placed else None
                    if (last is not None and last.line == line and last.run[1:] == run[1:]
                            and abs(last.x + last.width + space - x) < 1e-6):
                        # the next word in the same look: one text to draw, not two
                        placed[-1] = _Placed(last.x, line, TextRun(f"{last.run.text} {run.text}", *run[1:]),
                                             x + width - last.x)
                    else:
                        placed.append(_Placed(x, line, run, width))
                    x += width
        self._placed, self._lines = placed, line + 1
        # only what is on show stays prepared
        wanted = {(item.run.text, item.run.bold) for item in placed}
        self._prepared = {key: text for key, text in self._prepared.items() if key in wanted}
        # asks for the width it wraps at, as a text document does: a long unwrapped line must not
        # make the chart ask for more room than it has
        self._natural_width = self._wrap_width if placed else 0.0
        self.update()
        if (self._lines, self._line_height()) == before:
            return False
        self._refit()
        return True

    def _static(self, text: str, bold: bool) -> QStaticText:
        """``text`` laid out once in its font (reused while it is on show): measuring and
        painting it again cost no new layout."""
        key = (text, bold)
        static = self._prepared.get(key)
        if static is None:
            static = QStaticText(text)
            static.setTextFormat(Qt.TextFormat.PlainText)  # never markup, whatever the text holds
            static.prepare(QTransform(), self._font(bold))
            self._prepared[key] = static
        return static

    def _width(self, text: str, bold: bool) -> float:
        return self._static(text, bold).size().width()

    def _refit(self) -> None:
        self.updateGeometry()
        layout = self.parentLayoutItem()
        if isinstance(layout, QGraphicsLayout) and self._chart_shown():
            # the chart laid out now, not at the layout request Qt posts, which comes after
            # this change's paint and would paint the chart a second time
            layout.activate()

    def _chart_shown(self) -> bool:
        scene = self.scene()
        return scene is not None and any(view.isVisible() for view in scene.views())

    def sizeHint(self, which, constraint=None):  # noqa: N802 - Qt naming
        height = self._height()
        if which == Qt.SizeHint.MinimumSize:
            return QSizeF(0, height)
        if which == Qt.SizeHint.MaximumSize:
            return QSizeF(1e6, height)
        return QSizeF(self._natural_width, height)

    # -- painting ------------------------------------------------------------------------------
    def _color(self, name: str | None) -> QColor:
        if name is None:
            return self._ink
        color = self._colors.get(name)
        if color is None:
            color = self._colors[name] = QColor(name)
        return color

    def paint(self, p, *_args) -> None:
        if not self._placed:
            return
        step = self._line_height()
        p.setRenderHint(p.RenderHint.TextAntialiasing, True)
        bold = None
        for x, line, run, _width in self._placed:
            if bold is not run.bold:
                bold = run.bold
                p.setFont(self._font(bold))
            p.setPen(self._color(run.color))
            # a static text is placed by its top left corner
            p.drawStaticText(QPointF(MARGIN + x, MARGIN + line * step), self._static(run.text, bold))

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt naming
        return QRectF(0.0, 0.0, self.size().width(), self.size().height())
