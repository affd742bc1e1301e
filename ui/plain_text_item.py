"""Chart texts (labels at a point, on a line) drawn as static texts, not text documents.

pyqtgraph's ``TextItem`` shows its text through a ``QGraphicsTextItem``: a whole text document,
laid out again on every new text (a ceiling's "50x", a what-if row's percentages, a ridge's
value change on most edits) and drawn through the document on every paint. Chart labels are
one or a few lines of plain text, so :class:`PlainTextGraphic` holds each line as a
``QStaticText``: measured once per text, drawn as prepared glyphs.

It stands in for the ``QGraphicsTextItem`` inside a pyqtgraph ``TextItem``
(:func:`use_plain_text`), so anchors, rotation and placement work unchanged, and it measures
as the document did (4 px of margin around the text, each line as tall as the document's
line): a label sits exactly where it sat (``tests/ui/test_plain_text_item.py`` compares them).
"""

from __future__ import annotations

import html
import math
import re
from typing import NamedTuple

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QStaticText,
    QTextDocumentFragment,
    QTextOption,
    QTransform,
)
from PySide6.QtWidgets import QGraphicsItem

from ui.bounded_cache import BoundedCache

#: the margin a QGraphicsTextItem's document leaves around its text
MARGIN = 4.0
#: what a text document breaks a line at (it hands each back as "\n")
_LINE_BREAKS = re.compile("\r\n|[\r\u2028\u2029]")

class PreparedText(NamedTuple):
    """A static text prepared in a font, with its advance and size as measured then."""

    static: QStaticText
    advance: float
    size: QSizeF


#: prepared texts by (text, font key), shared by every chart text drawn as a static text (tick
#: labels, titles, legend names, labels at a point): the same text comes back with the next
#: range, toggle or undo, and preparing it (shaping its glyphs) was most of setting it
_PREPARED: BoundedCache = BoundedCache(4096)


def prepared_text(text: str, font: QFont, font_key: str | None = None) -> PreparedText:
    """``text`` (one line, plain) as a static text prepared in ``font``, with its advance and
    size. The static text is shared: draw it, never change it. A painter at another resolution
    (an SVG or PNG export) lays it out again in place, which changes what its own ``size()``
    says: read the size kept here, measured when it was prepared. ``font_key``: ``font.key()``,
    for a caller preparing many texts in one font."""
    key = (text, font.key() if font_key is None else font_key)
    found = _PREPARED.get(key)
    if found is None:
        static = QStaticText(text)
        static.setTextFormat(Qt.TextFormat.PlainText)
        option = QTextOption()
        option.setWrapMode(QTextOption.WrapMode.NoWrap)
        static.setTextOption(option)
        static.prepare(QTransform(), font)
        found = _PREPARED.keep(key, PreparedText(static, QFontMetricsF(font).horizontalAdvance(text),
                                                  QSizeF(static.size())))
    return found


def document_line_height(font: QFont) -> float:
    """The height of one line of ``font`` as a text document lays it out: whole pixels (the
    labels that stand in for text documents measure as they did)."""
    return float(math.ceil(QFontMetricsF(font).height()))


class PlainTextGraphic(QGraphicsItem):
    """Plain text with the part of ``QGraphicsTextItem``'s interface a pyqtgraph ``TextItem``
    and the panels use (text, font, colour, bounding rect). What the text holds is shown as
    it is: never read as markup."""

    def __init__(self, parent: QGraphicsItem | None = None):
        super().__init__(parent)
        self._text = ""
        self._font = QFont()
        self._color = QColor(Qt.GlobalColor.black)
        self._lines: list[QStaticText] = []
        self._rect = QRectF()
        self._lay_out()

    # -- QGraphicsTextItem's interface ------------------------------------------------------------
    def setPlainText(self, text: str) -> None:  # noqa: N802 - Qt naming
        text = _LINE_BREAKS.sub("\n", text)  # a name from a file may break lines any way
        if text != self._text:
            self._text = text
            self._lay_out()

    def toPlainText(self) -> str:  # noqa: N802 - Qt naming
        return self._text

    def setHtml(self, markup: str) -> None:  # noqa: N802 - Qt naming
        """The text the markup shows, as plain text (a label never renders markup)."""
        self.setPlainText(QTextDocumentFragment.fromHtml(markup).toPlainText())

    def toHtml(self) -> str:  # noqa: N802 - Qt naming
        return html.escape(self._text)

    def setFont(self, font: QFont) -> None:  # noqa: N802 - Qt naming
        if font != self._font:
            self._font = QFont(font)
            self._lay_out()

    def font(self) -> QFont:
        return QFont(self._font)

    def setDefaultTextColor(self, color) -> None:  # noqa: N802 - Qt naming
        color = QColor(color)
        if color != self._color:
            self._color = color
            self.update()

    def defaultTextColor(self) -> QColor:  # noqa: N802 - Qt naming
        return QColor(self._color)

    def setTextWidth(self, _width: float) -> None:  # noqa: N802 - Qt naming
        """Chart labels are not wrapped: their lines are the text's own."""

    # -- measuring and painting -------------------------------------------------------------------
    def _lay_out(self) -> None:
        lines = []
        width = 0.0
        for part in self._text.split("\n"):
            prepared = prepared_text(part, self._font)
            line = prepared.static
            width = max(width, prepared.size.width())
            lines.append(line)
        # a document's line is a whole number of pixels tall
        self._line_height = document_line_height(self._font)
        rect = QRectF(0.0, 0.0, width + 2 * MARGIN, self._line_height * len(lines) + 2 * MARGIN)
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = rect
        self._lines = lines
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt naming
        return QRectF(self._rect)

    def paint(self, p: QPainter, *_args) -> None:
        if not self._text:
            return
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        p.setFont(self._font)
        p.setPen(self._color)
        for i, line in enumerate(self._lines):
            p.drawStaticText(QPointF(MARGIN, MARGIN + i * self._line_height), line)


def use_plain_text(item: pg.TextItem) -> None:
    """Give a pyqtgraph ``TextItem`` (or ``InfLineLabel``) a :class:`PlainTextGraphic` in place
    of its text document, keeping its text, font and colour, and placing it again."""
    old = item.textItem
    if isinstance(old, PlainTextGraphic):
        return
    new = PlainTextGraphic(item)
    new.setFont(old.font())
    new.setDefaultTextColor(old.defaultTextColor())
    new.setPlainText(old.toPlainText())
    old.setParentItem(None)
    if old.scene() is not None:
        old.scene().removeItem(old)
    item.textItem = new
    item.updateTextPos()


class PlainTextItem(pg.TextItem):
    """pyqtgraph's ``TextItem`` (anchored, unscaled text at a point in data coordinates) with
    its text as a :class:`PlainTextGraphic`."""

    def __init__(self, text: str = "", **kwargs):
        super().__init__("", **kwargs)
        use_plain_text(self)
        self.setText(text)


__all__ = ["PlainTextGraphic", "PlainTextItem", "PreparedText", "document_line_height", "use_plain_text",
           "prepared_text", "MARGIN"]
