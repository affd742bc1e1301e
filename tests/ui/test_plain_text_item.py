"""Chart labels drawn as static texts sit and measure exactly as pyqtgraph's text documents did.

The labels' places (beside a point, on a line, clear of each other) are worked out from their
boxes, so a ``PlainTextGraphic`` must measure as the ``QGraphicsTextItem`` it replaces, for
every font and text the charts show; its ink must land where the document's did; and the
text must stay text (markup in a preset's name is shown, not rendered).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter
from PySide6.QtWidgets import QGraphicsScene, QGraphicsTextItem

from ui.plain_text_item import PlainTextGraphic, PlainTextItem

TEXTS = ["1. 58.8% → 61.2%: overlap the gradient all-reduce", "▼", "Ridge 590 FLOP/B", "", "x",
         "H100 SXM: 989 TFLOP/s", "two\nlines", "Amdahl ceiling: 50×", "<b>bold?</b> & {value}",
         "a\r\nb", "a\rb", "c\u2028d", "e\u2029f", "g\nh\n", "tab\there", "two  spaces"]


def _font(points: float, bold: bool) -> QFont:
    font = QFont()
    font.setPointSizeF(points)
    font.setBold(bold)
    return font


@pytest.mark.parametrize("points", [8.0, 9.0, 11.5, 13.0, 16.0, 21.0])
@pytest.mark.parametrize("bold", [False, True])
def test_it_measures_as_a_text_document(qapp, points, bold):
    for text in TEXTS:
        document, plain = QGraphicsTextItem(), PlainTextGraphic()
        for item in (document, plain):
            item.setFont(_font(points, bold))
            item.setPlainText(text)
        assert plain.boundingRect() == document.boundingRect(), (points, bold, text)
        assert plain.toPlainText() == document.toPlainText()


def _ink(item, size=(420, 90)) -> tuple[int, int, int, int]:
    """The box of the pixels ``item`` paints (x0, y0, x1, y1), drawn at (10, 10)."""
    scene = QGraphicsScene()
    scene.addItem(item)
    item.setPos(10, 10)
    image = QImage(*size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.white)
    painter = QPainter(image)
    scene.render(painter, QRectF(0, 0, *size), QRectF(0, 0, *size))
    painter.end()
    bits = np.frombuffer(image.constBits(), np.uint8).reshape(size[1], image.bytesPerLine())[:, :size[0] * 4]
    dark = bits.reshape(size[1], size[0], 4)[:, :, :3].min(axis=2) < 128
    ys, xs = np.nonzero(dark)
    scene.removeItem(item)
    return int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())


def test_its_ink_lands_where_the_documents_did(qapp):
    for text in ("Ridge 590 FLOP/B", "two\nlines", "▼"):
        boxes = []
        for item in (QGraphicsTextItem(), PlainTextGraphic()):
            item.setFont(_font(11.5, False))
            item.setDefaultTextColor(QColor("#000000"))
            item.setPlainText(text)
            boxes.append(_ink(item))
        (a0, b0, a1, b1), (c0, d0, c1, d1) = boxes
        assert max(abs(a0 - c0), abs(b0 - d0), abs(a1 - c1), abs(b1 - d1)) <= 1, (text, boxes)


def test_a_label_sits_where_pyqtgraphs_sat_and_shows_markup_as_text(qapp):
    scene = QGraphicsScene()
    for anchor in ((0, 0), (0.5, 1.0), (-0.08, 1.1), (1.0, 0.5)):
        theirs = pg.TextItem("Ridge 590 FLOP/B", anchor=anchor)
        ours = PlainTextItem("Ridge 590 FLOP/B", anchor=anchor)
        for item in (theirs, ours):
            scene.addItem(item)
            item.setFont(_font(9.0, True))
            item.setPos(QPointF(100.0, 50.0))
        assert ours.sceneBoundingRect() == theirs.sceneBoundingRect(), anchor
    hostile = PlainTextItem("<b>Evil</b> GPU", color="#123456")
    assert hostile.toPlainText() == "<b>Evil</b> GPU" and "&lt;b&gt;" in hostile.textItem.toHtml()
    assert hostile.textItem.defaultTextColor() == QColor("#123456")
    hostile.setHtml("<i>shown</i> as text")  # markup given as markup: its text, never rendered
    assert hostile.toPlainText() == "shown as text"
    assert hostile.textItem.boundingRect().width() > PlainTextGraphic().boundingRect().width()
