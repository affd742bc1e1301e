"""Lines of coloured text in a chart's layout, wrapped and painted directly.

A chart's caption and key change with every edit (new seconds, new percentages). As rich text
(a ``QGraphicsTextItem`` given HTML) each change parsed the markup, built a text document and
laid it out again, and each paint drew it through that document. :class:`FlowText` takes the
same content as plain runs (text, colour, weight) and lays each paragraph out as one
``QTextLayout`` with a format per run: one shaping pass and one draw per paragraph, about a
third of the rich text's cost. Text is never interpreted as markup: whatever a run holds is
drawn as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QTextCharFormat, QTextLayout, QTextOption
from PySide6.QtWidgets import QGraphicsLayout, QSizePolicy

#: px around the text, as a text document's default margin (the look the charts had)
MARGIN = 4.0
#: the weight of a bold run (CSS 600: the charts' emphasis, not a heavy bold)
BOLD = QFont.Weight.DemiBold
#: what a chart's key puts before each entry's text
SWATCH = "\u25a0"
#: how many paragraphs no longer shown a text block keeps laid out (see FlowText._recent)
RECENT_LAYOUTS = 16


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


def _separator(gap: int) -> str:
    """What goes between a paragraph's pieces for the gap asked for: a line breaks only at its
    last space (a piece itself never breaks: its spaces and hyphens are made non-breaking)."""
    return "\u00a0" * (gap - 1) + " "


def _font(size_pt: float) -> QFont:
    font = QFont()
    font.setPointSizeF(size_pt)
    return font


def _unbroken(text: str) -> str:
    return text.replace(" ", "\u00a0").replace("-", "\u2011")


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
        self._font = _font(self._size_pt)
        self._wrap_width = 400.0
        #: per paragraph: (its pieces, the width it was laid out at, its layout)
        self._layouts: list[tuple[tuple[Piece, ...], float, QTextLayout]] = []
        #: paragraphs laid out lately, by (pieces, width), in this look: a paragraph shown again
        #: (a toggle, an undo) takes its layout back instead of being shaped and broken again
        self._recent: dict[tuple[tuple[Piece, ...], float], QTextLayout] = {}
        self._lines = 0
        self._formats: dict[tuple[str | None, bool], QTextCharFormat] = {}
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.setVisible(False)

    # -- content -----------------------------------------------------------------------------
    def set_paragraphs(self, paragraphs: Sequence[Sequence[Piece]], ink: str, size_pt: float, *,
                       gap: int = 1) -> None:
        content = tuple(tuple(p) for p in paragraphs if p)
        ink_color = QColor(ink)
        if (content, gap, size_pt) == (self._paragraphs, self._gap, self._size_pt) and ink_color == self._ink:
            return
        if (size_pt, gap) != (self._size_pt, self._gap) or ink_color != self._ink:
            self._layouts, self._formats, self._recent = [], {}, {}  # every paragraph in the new look
            self._font = _font(size_pt)
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
    def _line_height(self) -> float:
        return QFontMetricsF(self._font).lineSpacing()

    def _height(self) -> float:
        return 2 * MARGIN + self._lines * self._line_height() if self._lines else 0.0

    def _format(self, color: str | None, bold: bool) -> QTextCharFormat:
        key = (color, bold)
        fmt = self._formats.get(key)
        if fmt is None:
            fmt = self._formats[key] = QTextCharFormat()
            fmt.setForeground(self._ink if color is None else QColor(color))
            if bold:
                fmt.setFontWeight(BOLD)
        return fmt

    def _paragraph_layout(self, para: tuple[Piece, ...], width: float) -> QTextLayout:
        """``para`` as one text with a format per run, broken into lines ``width`` wide."""
        texts: list[str] = []
        ranges: list[QTextLayout.FormatRange] = []
        at = 0
        separator = _separator(self._gap)
        for piece in para:
            if texts:
                texts.append(separator)
                at += len(separator)
            for run in piece:
                text = _unbroken(run.text)
                span = QTextLayout.FormatRange()
                span.start, span.length, span.format = at, len(text), self._format(run.color, run.bold)
                ranges.append(span)
                texts.append(text)
                at += len(text)
        layout = QTextLayout("".join(texts), self._font)
        option = QTextOption()
        option.setWrapMode(QTextOption.WrapMode.WordWrap)
        layout.setTextOption(option)
        layout.setFormats(ranges)
        # keep the shaped glyphs: without this endLayout() drops them and every paint shapes
        # the text again (a third of a caption's paint)
        layout.setCacheEnabled(True)
        step = self._line_height()
        layout.beginLayout()
        while (line := layout.createLine()).isValid():
            line.setLineWidth(width)
            line.setPosition(QPointF(0.0, (line.lineNumber()) * step))
        layout.endLayout()
        return layout

    def _lay_out(self) -> bool:
        """Lay the paragraphs out (again only those that changed); True if that gave the block
        another height (its layout was asked)."""
        before = (self._lines, self._line_height())
        width = self._wrap_width - 2 * MARGIN
        kept = self._layouts
        layouts = []
        for i, para in enumerate(self._paragraphs):
            if i < len(kept) and kept[i][0] == para and kept[i][1] == width:
                layouts.append(kept[i])
                continue
            layout = self._recent.pop((para, width), None)
            if layout is None:
                layout = self._paragraph_layout(para, width)
            layouts.append((para, width, layout))
        for shown, shown_width, layout in self._layouts:  # the ones shown until now, the latest last
            self._recent.pop((shown, shown_width), None)
            self._recent[(shown, shown_width)] = layout
        while len(self._recent) > RECENT_LAYOUTS:
            del self._recent[next(iter(self._recent))]
        self._layouts = layouts
        self._lines = sum(layout.lineCount() for _para, _width, layout in layouts)
        self.update()
        if (self._lines, self._line_height()) == before:
            return False
        self._refit()
        return True

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
        # the width it wraps at, as a text document asks for: a long unwrapped line must not make
        # the chart ask for more room than it has
        return QSizeF(self._wrap_width if self._layouts else 0.0, height)

    # -- painting ------------------------------------------------------------------------------
    def paint(self, p, *_args) -> None:
        if not self._layouts:
            return
        p.setRenderHint(p.RenderHint.TextAntialiasing, True)
        p.setPen(self._ink)
        top = MARGIN
        step = self._line_height()
        for _para, _width, layout in self._layouts:
            layout.draw(p, QPointF(MARGIN, top))
            top += layout.lineCount() * step

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt naming
        return QRectF(0.0, 0.0, self.size().width(), self.size().height())
