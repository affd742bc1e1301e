"""An axis' drawing specifications (its line, tick lines and tick texts), as pyqtgraph makes them.

pyqtgraph's ``AxisItem.generateDrawSpecs`` takes about half a millisecond of Python per axis,
and an axis makes its specs again whenever its range moves: two or three axes on every edit
that moves a chart's range (a GPU count typed in the toolbar re-records the step and what-if
axes). :func:`draw_specs` gives the same specs (the same pens, points, rectangles, flags and
strings; ``tests/ui/test_axis_specs.py`` compares the two over many ranges, sizes and
orientations) for about a third of that: the text of a tick label is measured once per font
and string instead of on every redraw, each tick level's pen is made once, and the loops make
no pyqtgraph ``Point`` per tick.

Anything it does not cover (an axis whose axis line stops at its ticks) is left to pyqtgraph.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from math import ceil, hypot

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPen

from ui.bounded_cache import BoundedCache

#: (font key, device dpi, text) -> the text's box as pyqtgraph measures it (before its 0.8);
#: tick texts are few (numbers a chart shows), but not unbounded
_MEASURED = BoundedCache(4096)

_MEASURE_BOX = QRectF(0, 0, 100, 100)
_CENTER = Qt.AlignmentFlag.AlignCenter
_TEXT_FLAGS = {
    "left": Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter | Qt.TextFlag.TextDontClip,
    "right": Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter | Qt.TextFlag.TextDontClip,
    "top": Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom | Qt.TextFlag.TextDontClip,
    "bottom": Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextDontClip,
}


def covers(axis) -> bool:
    """Whether :func:`draw_specs` makes this axis' specs (else pyqtgraph's own does)."""
    return (axis.orientation in _TEXT_FLAGS and tuple(axis.style["stopAxisAtTick"]) == (False, False)
            and isinstance(axis.style["tickAlpha"], (type(None), float, int)))


def _measure(p, key: tuple[str, int], text: str) -> QRectF:
    """``p.boundingRect`` of ``text`` in a 100 x 100 box, centred: a new rectangle each call
    (pyqtgraph shrinks its height in place)."""
    found = _MEASURED.get((key[0], key[1], text))
    if found is None:
        br = p.boundingRect(_MEASURE_BOX, _CENTER, text)
        found = _MEASURED.keep((key[0], key[1], text), (br.x(), br.y(), br.width(), br.height()))
    return QRectF(*found)


def tick_values(axis, lo: float, hi: float, size: float) -> list[tuple[float, list[float]]]:
    """``axis.tickValues(lo, hi, size)`` as pyqtgraph's makes it, without its numpy: a tick
    of a finer level is left out where a coarser level has one within 1% of its spacing (the
    nearest coarser tick is found by bisection instead of comparing every pair)."""
    lo, hi = sorted((lo, hi))
    scale = axis.scale
    lo *= scale
    hi *= scale
    ticks = []
    taken: list[float] = []  # every level's ticks so far, sorted
    for spacing, offset in axis.tickSpacing(lo, hi, size):
        start = (ceil((lo - offset) / spacing) * spacing) + offset
        num = int((hi - start) / spacing) + 1
        near = spacing / scale * 0.01
        values = []
        for i in range(max(num, 0)):
            v = (i * spacing + start) / scale
            k = bisect_left(taken, v)
            if (k < len(taken) and abs(taken[k] - v) <= near) or (k > 0 and abs(taken[k - 1] - v) <= near):
                continue
            values.append(v)
        for v in values:
            insort(taken, v)
        ticks.append((spacing / scale, values))
    if axis.logMode:
        return axis.logTickValues(lo, hi, size, ticks)
    return ticks


def _level_pen(axis, level: int, n_ticks: int, length_px: float) -> QPen:
    """The pen of tick level ``level``: the tick pen at pyqtgraph's alpha for that level."""
    alpha = axis.style["tickAlpha"]
    if alpha is None:
        alpha = 255 / (level + 1)
        if axis.grid is not False:
            share = 0.05 * length_px / (n_ticks + 1)
            alpha *= axis.grid / 255. * (0. if share < 0. else 1. if share > 1. else share)
    elif isinstance(alpha, float):
        alpha = min(255, max(0, int(round(alpha * 255))))
    elif not 0 <= alpha <= 255:
        raise ValueError("lineAlpha should be [0..255]")
    pen = axis.tickPen()
    if pen.brush().style() == Qt.BrushStyle.SolidPattern:  # only plain colour pens take the alpha
        pen = QPen(pen)
        color = QColor(pen.color())
        color.setAlpha(int(alpha))
        pen.setColor(color)
    return pen


def draw_specs(axis, p):
    """``(axis_spec, tick_specs, text_specs)`` as ``pyqtgraph.AxisItem.generateDrawSpecs(p)``
    makes them for ``axis`` (see :func:`covers`), or None where it returns None."""
    style = axis.style
    if style["tickFont"] is not None:
        p.setFont(style["tickFont"])
    bounds = axis.mapRectFromParent(axis.geometry())
    view = axis.linkedView()
    tick_bounds = bounds if view is None or axis.grid is False else view.mapRectToItem(axis, view.boundingRect())

    orientation = axis.orientation
    if orientation == "left":
        span = (bounds.topRight() + QPointF(-1.0, -1.0), bounds.bottomRight() + QPointF(-1.0, 1.0))
        tick_start, tick_stop, tick_dir, across = tick_bounds.right(), bounds.right(), -1, 0
    elif orientation == "right":
        span = (bounds.topLeft() + QPointF(1.0, -1.0), bounds.bottomLeft() + QPointF(1.0, 1.0))
        tick_start, tick_stop, tick_dir, across = tick_bounds.left(), bounds.left(), 1, 0
    elif orientation == "top":
        span = (bounds.bottomLeft() + QPointF(-1.0, -1.0), bounds.bottomRight() + QPointF(1.0, -1.0))
        tick_start, tick_stop, tick_dir, across = tick_bounds.bottom(), bounds.bottom(), -1, 1
    else:  # bottom
        span = (bounds.topLeft() + QPointF(-1.0, 1.0), bounds.topRight() + QPointF(1.0, 1.0))
        tick_start, tick_stop, tick_dir, across = tick_bounds.top(), bounds.top(), 1, 1

    device = axis.deviceTransform_()
    if device is None:
        return None
    a, b = device.map(span[0]), device.map(span[1])
    length_px = hypot(b.x() - a.x(), b.y() - a.y())
    if length_px == 0:
        return None

    if axis._tickLevels is None:
        if type(axis).tickValues is pg.AxisItem.tickValues:
            levels = tick_values(axis, axis.range[0], axis.range[1], length_px)
        else:
            levels = axis.tickValues(axis.range[0], axis.range[1], length_px)
        level_strings = None
    else:
        levels, level_strings = [], []
        for level in axis._tickLevels:
            levels.append((None, [value for value, _text in level]))
            level_strings.append([text for _value, text in level])

    lo, hi = axis.range[0], axis.range[1]
    dif = hi - lo
    if dif == 0:
        scale, offset = 1, 0
    elif across == 0:
        scale = -bounds.height() / dif
        offset = lo * scale - bounds.height()
    else:
        scale = bounds.width() / dif
        offset = lo * scale
    ends = (lo * scale - offset, hi * scale - offset)
    x_min, x_max = min(ends), max(ends)

    positions: list[list[float | None]] = []
    tick_specs = []
    grid = axis.grid is not False
    for i, (_spacing, ticks) in enumerate(levels):
        shown: list[float | None] = []
        positions.append(shown)
        length = style["tickLength"] / ((i * 0.5) + 1.0)
        pen = _level_pen(axis, i, len(ticks), length_px)
        end = tick_stop if grid else tick_stop + length * tick_dir
        for v in ticks:
            x = (v * scale) - offset
            if x < x_min or x > x_max:
                shown.append(None)
                continue
            shown.append(x)
            if across == 1:
                tick_specs.append((pen, QPointF(x, tick_start), QPointF(x, end)))
            else:
                tick_specs.append((pen, QPointF(tick_start, x), QPointF(end, x)))
    axis_spec = (axis.pen(), span[0], span[1])

    text_specs: list = []
    if not style["showValues"]:
        return axis_spec, tick_specs, text_specs

    text_offset = style["tickTextOffset"][across]
    font_key = (p.font().key(), p.device().logicalDpiY() if p.device() is not None else 0)
    flags = _TEXT_FLAGS[orientation]
    room = axis.boundingRect()
    gap = max(0, style["tickLength"]) + text_offset
    measured: list[QRectF] = []  # every measured text so far, as pyqtgraph counts them
    last_across = 0
    for i in range(min(len(levels), style["maxTextLevel"] + 1)):
        if level_strings is None:
            spacing, values = levels[i]
            strings = axis.tickStrings(values, axis.autoSIPrefixScale * axis.scale, spacing)
        else:
            strings = list(level_strings[i])
        if len(strings) == 0:
            continue
        shown = positions[i]
        rects: list[QRectF | None] = []
        for j, s in enumerate(strings):
            if shown[j] is None or s is None:
                rects.append(None)
                continue
            br = _measure(p, font_key, s)
            br.setHeight(br.height() * 0.8)
            rects.append(br)
            measured.append(br)
        if measured:
            if across == 0:
                along = sum(r.height() for r in measured)
                size_across = max(r.width() for r in measured)
            else:
                along = sum(r.width() for r in measured)
                size_across = max(r.height() for r in measured)
        else:
            along = size_across = 0
        if i > 0:  # the first level is always drawn; the next ones while there is room
            fill = float(along) / length_px
            if any(len(text_specs) >= n and fill >= limit for n, limit in style["textFillLimits"]):
                break
        last_across = size_across
        for j, s in enumerate(strings):
            rect_j = rects[j]
            if rect_j is None:
                continue
            x = shown[j]
            height, width = rect_j.height(), rect_j.width()
            if orientation == "left":
                rect = QRectF(tick_stop - gap - width, x - (height / 2), width, height)
            elif orientation == "right":
                rect = QRectF(tick_stop + gap, x - (height / 2), width, height)
            elif orientation == "top":
                rect = QRectF(x - width / 2., tick_stop - gap - height, width, height)
            else:
                rect = QRectF(x - width / 2., tick_stop + gap, width, height)
            if room & rect != rect:  # as pyqtgraph tests it (contains() differs in rounding)
                continue
            text_specs.append((rect, flags, s))
    axis._updateMaxTextSize(last_across)
    return axis_spec, tick_specs, text_specs
