"""``ui.axis_specs.draw_specs`` makes exactly the specs pyqtgraph's ``generateDrawSpecs`` makes.

The axes draw from these specs (lines, grid, tick texts), so any difference would be a
different picture: they are compared field by field over log and linear axes, both
orientations, ranges from a sliver to many decades, sizes from small to wide, fixed ticks,
hidden values and presentation-sized fonts.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QFont, QPainter, QPicture

from ui import axis_specs
from ui.charts import Chart


def _pen(pen):
    return (pen.color().rgba(), pen.widthF(), pen.style(), pen.isCosmetic(), pen.capStyle())


def _comparable(specs):
    if specs is None:
        return None
    (axis_pen, a, b), ticks, texts = specs
    return (
        (_pen(axis_pen), (a.x(), a.y()), (b.x(), b.y())),
        [(_pen(pen), (p1.x(), p1.y()), (p2.x(), p2.y())) for pen, p1, p2 in ticks],
        [((r.x(), r.y(), r.width(), r.height()), int(flags), text) for r, flags, text in texts],
    )


def _both(axis):
    """(pyqtgraph's specs, ours) for ``axis`` as it is now, each on a fresh recording painter."""
    out = []
    for make in (pg.AxisItem.generateDrawSpecs, axis_specs.draw_specs):
        picture = QPicture()
        painter = QPainter(picture)
        try:
            out.append(_comparable(make(axis, painter)))
        finally:
            painter.end()
    return out


def _settled(chart):
    for _ in range(3):
        QCoreApplication.processEvents()
    chart.settle()


@pytest.fixture
def shown_chart(qtbot):
    def make(**kwargs):
        chart = Chart(title="Specs", x_label="Size", x_unit="B", y_label="Time", y_unit="s", **kwargs)
        qtbot.addWidget(chart)
        chart.resize(900, 560)
        chart.show()
        qtbot.waitExposed(chart)
        return chart
    return make


RANGES = [
    (1.0, 2.0), (0.0, 1.0), (0.0, 7.3e-3), (3.0, 3.0001), (1e3, 1e12), (0.5, 4096.0),
    (2.0, 1e9), (1e-6, 1e-2), (0.0, 150.0), (1.0, 1.05),
]


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("size", [(320, 200), (900, 560), (1900, 700)])
def test_the_specs_are_pyqtgraphs_for_every_range_and_size(shown_chart, log, size):
    chart = shown_chart(log_x=log, log_y=log)
    chart.resize(*size)
    compared = 0
    for lo, hi in RANGES:
        if log and lo <= 0:
            lo = hi / 1e3
        chart.set_log_range(lo, hi, lo * 2 if lo else 0.001, hi * 3)
        _settled(chart)
        for side in ("bottom", "left"):
            axis = chart.axis(side)
            assert axis_specs.covers(axis)
            ours_and_theirs = _both(axis)
            assert ours_and_theirs[1] == ours_and_theirs[0], (side, lo, hi, size, log)
            if ours_and_theirs[0] is not None:
                compared += len(ours_and_theirs[0][2])
    assert compared > 0  # texts were made, and compared


def test_fixed_ticks_hidden_values_and_a_large_font_give_pyqtgraphs_specs(shown_chart):
    chart = shown_chart()
    chart.set_log_range(0.0, 10.0, 0.0, 1.0)
    bottom, left = chart.axis("bottom"), chart.axis("left")
    bottom.setTicks([[(float(v), f"{v} GiB") for v in range(0, 11, 2)], [(v + 0.5, "") for v in range(10)]])
    left.setStyle(showValues=False)
    font = QFont()
    font.setPointSizeF(21.0)
    bottom.setStyle(tickFont=font)
    _settled(chart)
    for axis in (bottom, left):
        theirs, ours = _both(axis)
        assert ours == theirs
    assert [text for _r, _f, text in ours[2]] == [] and _both(bottom)[1][2]  # values hidden on the left only
    for axis in (bottom, left):  # without the grid: ticks of their own length, on both levels
        axis.setGrid(False)
        axis.setStyle(tickLength=-7)
        _settled(chart)
        theirs, ours = _both(axis)
        assert ours == theirs and len({p2 for _pen, _p1, p2 in ours[1]}) > 1


def test_a_text_is_measured_once_per_font_and_string(shown_chart, monkeypatch):
    chart = shown_chart()
    chart.set_log_range(0.0, 10.0, 0.0, 1.0)
    _settled(chart)
    axis_specs._MEASURED.clear()
    measured = []
    real = QPainter.boundingRect

    class Counting(QPainter):
        def boundingRect(self, *args):  # noqa: N802 - Qt naming
            measured.append(args[-1])
            return real(self, *args)

    for _ in range(3):
        picture = QPicture()
        painter = Counting(picture)
        try:
            specs = axis_specs.draw_specs(chart.axis("bottom"), painter)
        finally:
            painter.end()
    texts = [text for _r, _f, text in specs[2]]
    assert texts and len(measured) == len(set(measured)) >= len(texts)
    assert not math.isnan(specs[2][0][0].width())


@pytest.mark.parametrize("log", [False, True])
def test_tick_values_are_pyqtgraphs(shown_chart, log):
    import random

    chart = shown_chart(log_x=log)
    axis = chart.axis("bottom")
    rng = random.Random(15)
    cases = [(0.0, 1.0, 900.0), (-3.0, 7.0, 120.0), (1e-9, 3e-9, 1900.0), (2.0, 2.0 + 1e-7, 640.0)]
    cases += [(rng.uniform(-50, 50), rng.uniform(-50, 50) * 10 ** rng.randint(-6, 6), rng.uniform(40, 3000))
              for _ in range(300)]
    for lo, hi, size in cases:
        if lo == hi:
            continue
        theirs = pg.AxisItem.tickValues(axis, lo, hi, size)
        ours = axis_specs.tick_values(axis, lo, hi, size)
        assert ours == theirs, (lo, hi, size)


@pytest.mark.parametrize("size_pt", [7.0, 9.0, 10.5, 16.2, 20.0])
def test_tick_labels_as_static_texts_light_the_pixels_drawText_lights(qapp, size_pt):
    """An axis draws its tick labels as static texts placed where QPainter.drawText(rect,
    flags, text) puts them (issue 15: recorded into a picture they were shaped again on every
    replay). Random rects, alignments and labels, with spaces and non-ASCII: the same pixels."""
    import random

    from PySide6.QtCore import QRect, QRectF, Qt
    from PySide6.QtGui import QColor, QImage, QPen

    from ui.charts import _TickTexts

    rng = random.Random(size_pt)
    font = QFont()
    font.setPointSizeF(size_pt)
    texts = ["1", "10", "100 ms", "1 KiB", "32 GiB", "0.5", "20%", "1.18 k", "\u22123", "1 T", "10 \u03bcs",
             "1,024", "4.2 PFLOP/s", "CO\u2082 3 t", "  2  "]
    a = Qt.AlignmentFlag
    aligns = [a.AlignRight | a.AlignVCenter, a.AlignHCenter | a.AlignTop, a.AlignLeft | a.AlignVCenter,
              a.AlignHCenter | a.AlignBottom, a.AlignLeft | a.AlignTop]
    specs = [(QRectF(rng.uniform(2, 200), rng.uniform(2, 120), rng.uniform(20, 90), rng.uniform(10, 30)),
              int(rng.choice(aligns) | Qt.TextFlag.TextDontClip), rng.choice(texts)) for _ in range(40)]
    pen = QPen(QColor("#202020"))
    clip = QRect(0, 0, 320, 170)

    def image(draw) -> QImage:
        img = QImage(320, 170, QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(QColor("white"))
        painter = QPainter(img)
        try:
            draw(painter)
        finally:
            painter.end()
        return img

    def with_draw_text(painter) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        painter.setFont(font)
        painter.setPen(pen)
        painter.setClipRect(clip)
        for rect, flags, text in specs:
            painter.drawText(rect, flags, text)

    texts_drawn = _TickTexts.of(specs, font, pen, clip)
    assert texts_drawn is not None
    assert image(texts_drawn.draw) == image(with_draw_text)
    # what drawText would lay out otherwise is left to it (the axis records a picture then)
    assert _TickTexts.of([(QRectF(0, 0, 40, 30), int(a.AlignLeft), "two\nlines")], font, pen, clip) is None
    assert _TickTexts.of([(QRectF(0, 0, 40, 30), int(a.AlignLeft | Qt.TextFlag.TextWordWrap), "x")],
                         font, pen, clip) is None
