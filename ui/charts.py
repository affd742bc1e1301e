"""Charts made to be shown: one configured plot widget that every panel uses.

:class:`Chart` is a ``pyqtgraph.PlotWidget`` with the house style: theme background, axis
labels that carry their unit, log axes labelled in human units ("1 T", "10 T", "100 T" with
"(FLOP/s)" in the axis label), the palette from :mod:`ui.theme`, a legend only when there is
more than one series, the operating point marked, a hover readout, presentation mode, and
``chart_data()`` for the CSV export. Data is always given in real SI values; the log10
bookkeeping pyqtgraph needs stays inside this module.
"""

from __future__ import annotations

import contextlib
import math
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import (
    QCoreApplication,
    QEvent,
    QObject,
    QPointF,
    QRect,
    QRectF,
    QSizeF,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QGuiApplication,
    QPaintEngine,
    QPainter,
    QPainterPath,
    QPen,
    QPicture,
    QPixmapCache,
    QStaticText,
    QTransform,
)
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QGraphicsView

from ui import axis_specs
from ui import theme as th
from ui.bounded_cache import BoundedCache
from ui.label_placement import place_labels, place_near
from ui.plain_text_item import (
    PlainTextItem,
    PreparedText,
    document_line_height,
    prepared_text,
    use_plain_text,
)
from ui.point_marker import PointMarker

_PREFIXES = [
    (1e18, "E"),
    (1e15, "P"),
    (1e12, "T"),
    (1e9, "G"),
    (1e6, "M"),
    (1e3, "k"),
    (1.0, ""),
    (1e-3, "m"),
    (1e-6, "µ"),
    (1e-9, "n"),
    (1e-12, "p"),
    (1e-15, "f"),
]
#: units that take milli, micro, nano (as workbench.units does): 1.5 ms, 350 mW
_SMALL_PREFIX_UNITS = frozenset({"s", "W", "J"})
_BINARY_PREFIXES = [(1024.0**p, s) for p, s in ((5, "Pi"), (4, "Ti"), (3, "Gi"), (2, "Mi"), (1, "Ki"), (0, ""))]


def si_label(value: float, unit: str = "", *, binary: bool = False, digits: int = 3) -> str:
    """A compact tick or readout label: 1e14 -> "100 T" (or "100 TFLOP/s" with a unit)."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g} {unit}".strip()
    magnitude = abs(value)
    table = _BINARY_PREFIXES if binary else _PREFIXES
    if unit not in _SMALL_PREFIX_UNITS:  # 0.1 FLOP/B, not 100 mFLOP/B
        table = [(f, p) for f, p in table if f >= 1.0]
    factor, prefix = table[-1]
    for f, p in table:
        if magnitude >= f * (1 - 1e-9):
            factor, prefix = f, p
            break
    mantissa = value / factor
    text = f"{mantissa:.{digits}g}"
    if "e" in text:  # beyond the prefix table: plain scientific
        text = f"{value:.{digits}g}"
        prefix = ""
    sep = " " if (prefix or unit) else ""
    return f"{text}{sep}{prefix}{unit}"


#: the least share of the shown range that new data must span for the range to hold still
KEEP_SPAN = 0.6


def held_range(current: tuple[float, float], new: tuple[float, float]) -> tuple[float, float] | None:
    """The range an axis should show for data fitted to ``new`` while it shows ``current``
    (view coordinates: decades on a log axis). None: keep ``current``, the data lies inside it
    and spans at least ``KEEP_SPAN`` of it. Data that leaves it widens it to cover both, when the
    data still spans ``KEEP_SPAN`` of that (so values edited back and forth settle on one range
    instead of moving it every time); otherwise, and for data shrunk well inside, ``new``."""
    lo, hi = min(current), max(current)
    new_lo, new_hi = min(new), max(new)
    span, new_span = hi - lo, new_hi - new_lo
    if not (math.isfinite(span) and span > 0):
        return (new_lo, new_hi)
    if lo <= new_lo and new_hi <= hi and new_span >= KEEP_SPAN * span:
        return None
    both_lo, both_hi = min(lo, new_lo), max(hi, new_hi)
    if new_span >= KEEP_SPAN * (both_hi - both_lo):
        return (both_lo, both_hi)
    return (new_lo, new_hi)


class SteadyViewBox(pg.ViewBox):
    """A view box whose automatic range holds still while the data stays well inside it.

    pyqtgraph fits the range to the data after every change, so a value typed, or a slider
    step, moved the axes a little each time: the gridlines jumped under the curve (harder to
    see what moved) and every axis recorded its ticks and texts again (the largest part of a
    redraw). Here an automatic fit goes through :func:`held_range`, except the first after a
    resize. A range the caller sets (unless it asks for ``Chart.set_log_range(..., hold=True)``)
    and an explicit :meth:`autoRange` are taken as they are."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._fitted = False  # the range is still pyqtgraph's default: nothing to hold
        self._resized = False  # the next automatic fit follows a new size: fitted as it asks

    def setRange(self, rect=None, xRange=None, yRange=None, padding=None, update=True,  # noqa: N802
                 disableAutoRange=True):
        automatic = self._updatingRange and not disableAutoRange and rect is None
        if automatic and not self._resized:
            # pyqtgraph's automatic fit (updateAutoRange): move only what must move
            xRange, yRange = self.held(xRange, yRange)
            if xRange is None and yRange is None:
                return
        if automatic:
            self._resized = False
        super().setRange(rect, xRange, yRange, padding, update, disableAutoRange)
        self._fitted = True

    def resizeEvent(self, ev):  # noqa: N802 - pyqtgraph naming
        # pyqtgraph's padding depends on the size: held across a shrink and a grow, the
        # range would keep the smaller size's wider padding
        if ev.oldSize() != ev.newSize():
            self._resized = True
        super().resizeEvent(ev)

    #: set by the chart: asks for its automatic range to be fitted before the next paint,
    #: returns False when it cannot (the view is then updated, as pyqtgraph does)
    fit_requested: Callable[[], bool] | None = None

    def queueUpdateAutoRange(self):  # noqa: N802 - pyqtgraph naming
        """pyqtgraph marks the whole view for repainting so that a paint comes to fit the range:
        a moved point then repainted the whole plot. The chart fits it (Chart.settle) before
        the paint the moved item asks for itself; a range that changes repaints what it moves."""
        self._autoRangeNeedsUpdate = True
        hook = self.fit_requested
        if hook is None or not hook():
            self.update()

    def itemBoundsChanged(self, item):  # noqa: N802 - pyqtgraph naming
        """pyqtgraph fits its automatic range again (before the next paint) when any item in
        the view moves, those it was told to ignore included: the operating point's label,
        placed after the range is fitted, made every All-reduce edit fit both charts twice."""
        added = self.addedItems
        parent = item
        while parent is not None:
            if any(parent is counted for counted in added):
                super().itemBoundsChanged(item)
                return
            parent = parent.parentItem()
        self._itemBoundsCache.pop(item, None)

    def held(self, x_range, y_range):
        """``x_range`` and ``y_range`` as :func:`held_range` has them (None: keep that axis)."""
        if not self._fitted:
            return x_range, y_range
        (x0, x1), (y0, y1) = self.state["viewRange"]
        if x_range is not None:
            x_range = held_range((x0, x1), x_range)
        if y_range is not None:
            y_range = held_range((y0, y1), y_range)
        return x_range, y_range


class _AxisGrid(QGraphicsItem):
    """An axis' grid lines, drawn under it across the plot. The axis keeps its painting as a
    pixmap (see keep_painted) while its range stays, and a pixmap is as big as the item's
    bounding rect: with its grid the axis' covered the whole plot, and every repaint blended
    that plot-sized pixmap (two per chart, about 1 ms of a 10,000-kernel Roofline repaint).
    Alone, the axis keeps a pixmap of its own strip; the grid, a few filled rectangles, is
    painted directly each time."""

    def __init__(self, axis: LogUnitAxis):
        super().__init__(axis)
        self._axis = axis
        self._rect = QRectF()
        # under the axis line, as when the axis drew its grid first
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemStacksBehindParent)

    def fit(self) -> None:
        """Cover the plot's view (on a new size of the axis or the view)."""
        axis = self._axis
        view = axis.linkedView()
        rect = view.mapRectToItem(axis, view.boundingRect()) if axis.grid_drawn_apart() else QRectF()
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = rect

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt naming
        return QRectF(self._rect)

    def paint(self, p, *_args) -> None:
        self._axis.paint_grid(p)


#: the alignment flags a tick label may have for _TickTexts (pyqtgraph gives these and TextDontClip)
_ALIGNMENTS = (Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignHCenter
               | Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignBottom | Qt.AlignmentFlag.AlignVCenter)


#: the same flags as ints (see _TickTexts.of)
_DRAWN_FLAGS = int(_ALIGNMENTS) | int(Qt.TextFlag.TextDontClip)
_RIGHT, _H_CENTRE = int(Qt.AlignmentFlag.AlignRight), int(Qt.AlignmentFlag.AlignHCenter)
_BOTTOM, _V_CENTRE = int(Qt.AlignmentFlag.AlignBottom), int(Qt.AlignmentFlag.AlignVCenter)


class _TickTexts:
    """An axis' tick labels as static texts at the places ``QPainter.drawText(rect, flags,
    text)`` puts them (the same pixels: left, centred or right of the rect by the text's
    advance, top, centre or bottom by the font's height). Recorded into a picture, each label
    was shaped again on every replay; a static text keeps its glyphs, and the same label
    comes back with the next range."""

    def __init__(self, font: QFont, pen: QPen, clip: QRect, placed: list[tuple[QPointF, QStaticText]]):
        self.font, self.pen, self.clip, self.placed = font, pen, clip, placed

    @classmethod
    def of(cls, text_specs, font: QFont, pen: QPen, clip: QRect) -> _TickTexts | None:
        """The labels of ``text_specs`` ((rect, flags, text) as pyqtgraph gives them), or None
        for a label drawText would lay out otherwise (several lines, other flags)."""
        height = QFontMetricsF(font).height()
        font_key = font.key()  # (once: every label is in this font)
        placed = []
        for rect, flags, text in text_specs:
            flags = int(flags)  # plain ints: Python's enum operators cost a call each
            if "\n" in text or flags & ~_DRAWN_FLAGS:
                return None
            static, width, _size = prepared_text(text, font, font_key)
            x, y = rect.x(), rect.y()
            if flags & _RIGHT:
                x += rect.width() - width
            elif flags & _H_CENTRE:
                x += (rect.width() - width) / 2
            if flags & _BOTTOM:
                y += rect.height() - height
            elif flags & _V_CENTRE:
                y += (rect.height() - height) / 2
            placed.append((QPointF(x, y), static))
        return cls(QFont(font), QPen(pen), QRect(clip), placed)

    def draw(self, p) -> None:
        p.save()
        try:
            p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
            p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
            p.setFont(self.font)
            p.setPen(self.pen)
            p.setClipRect(self.clip, Qt.ClipOperation.IntersectClip)
            for at, static in self.placed:
                p.drawStaticText(at, static)
        finally:
            p.restore()


class LogUnitAxis(pg.AxisItem):
    """An axis for one unit. On a log axis the ticks read "1 T", "10 T", "100 T" (prefix
    scaled, the unit in the axis label) instead of pyqtgraph's "10¹²"; automatic SI prefixes
    are off there because they mislabel log axes. A linear axis keeps pyqtgraph's behaviour
    (prefix moved into the label: "(TFLOP/s)")."""

    def __init__(self, orientation: str, unit: str = "", *, binary: bool = False, unit_in_ticks: bool = False, **kwargs):
        super().__init__(orientation, **kwargs)
        self.unit = unit
        self.binary = binary
        self.unit_in_ticks = unit_in_ticks
        #: the colour behind the plot: grid lines are drawn opaque, pre-blended onto it
        #: (None: translucent, e.g. for a transparent export)
        self.grid_background: QColor | None = None
        self._specs_rect: QRectF | None = None
        #: recorded by paint(): the axis line (``picture``), the tick and grid lines, the labels
        self._lines: list[tuple[QPen, QPointF, QPointF]] = []
        self._fills: list[tuple[QColor, float, float, float, float]] | None = None
        self._fill_rects: tuple | None = None  # (fills, device offset, [(QColor, [QRect])])
        self._text_picture: QPicture | None = None
        self._texts: _TickTexts | None = None  # the tick labels, when they can be static texts
        self._grid_item = _AxisGrid(self)

    def boundingRect(self):  # noqa: N802 - Qt naming
        # generateDrawSpecs asks for it once per tick label; it maps the whole view each time
        rect = self._specs_rect
        if rect is not None:
            return QRectF(rect)
        if self.grid_drawn_apart():
            # its own strip (and the pixel its line runs past each end): the grid, across
            # the plot, is its grid item's (_AxisGrid)
            return self.mapRectFromParent(self.geometry()).adjusted(-2.0, -2.0, 2.0, 2.0)
        return super().boundingRect()

    _recorded: QPicture | None = None  # (picture)
    _recording = False  # inside _record
    _grid_item: _AxisGrid | None = None  # (None while pyqtgraph's constructor runs)

    @property
    def picture(self) -> QPicture | None:
        """The recorded drawing (pyqtgraph's); None when it must be recorded again."""
        return self._recorded

    @picture.setter
    def picture(self, value: QPicture | None) -> None:
        # pyqtgraph drops the recording (new ticks, size, pens) and updates the axis; the grid
        # drawn apart changes with it and must be repainted where it was too: a chart repaints
        # only the rectangle around what changed, and old grid lines were left above the bars
        # (not while recording, which the paint does: pyqtgraph then drops it for a wider label)
        self._recorded = value
        grid = self._grid_item
        if value is None and grid is not None and not self._recording and self.grid_drawn_apart():
            grid.update()

    def grid_drawn_apart(self) -> bool:
        """Whether its grid lines are drawn by its grid item (a grid across a linked view)."""
        return self.grid is not False and self.linkedView() is not None

    def _fit_grid(self) -> None:
        if self._grid_item is not None:
            self._grid_item.fit()

    def resizeEvent(self, ev=None):  # noqa: N802 - Qt naming
        super().resizeEvent(ev)
        self._fit_grid()

    def linkedViewChanged(self, view, newRange=None):  # noqa: N802 - pyqtgraph naming
        super().linkedViewChanged(view, newRange)
        self._fit_grid()  # another size of the view (a new range leaves the rect as it is)

    def setGrid(self, grid):  # noqa: N802 - pyqtgraph naming
        self.prepareGeometryChange()  # the axis' own rect is the strip only with a grid
        super().setGrid(grid)
        self._fit_grid()

    # -- painting -----------------------------------------------------------------------------
    @pg.debug.warnOnException  # an exception escaping a paint crashes Qt
    def paint(self, p, opt, widget):
        """pyqtgraph's AxisItem.paint (the tick and grid lines, then the axis line, then the
        labels, recorded once per range, size or style change), with the grid lines filled as
        1 px rectangles where that lights exactly the pixels Qt's line drawing lights (see
        ``_fill_lines``): Qt rasterises an aliased 1 px line pixel by pixel, and the ~120 grid
        lines of a 1920 px log-log chart were a good part of every repaint."""
        if self.picture is None:
            self._record()
        if not self.grid_drawn_apart():
            self._paint_lines(p)  # its ticks (with a grid, its grid item draws them under it)
        # the axis line over its grid: at an export's fractional scale a light grid line
        # starting on the axis line's pixels cut it into dashes
        self.picture.play(p)
        if self._texts is not None:
            self._texts.draw(p)
        elif self._text_picture is not None:
            self._text_picture.play(p)

    def paint_grid(self, p) -> None:
        """The grid lines (with a grid, the tick lines are the grid's), for the grid item."""
        if not self.grid_drawn_apart():
            return
        if self.picture is None:
            self._record()  # the grid item paints first (it stacks behind the axis)
        self._paint_lines(p)

    def _paint_lines(self, p) -> None:
        if self._lines and not self._fill_lines(p):
            p.save()
            p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
            for pen, p1, p2 in self._lines:
                p.setPen(pen)
                p.drawLine(p1, p2)
            p.restore()

    def _record(self) -> None:
        """pyqtgraph's drawPicture, split around the tick lines."""
        self._recording = True
        try:
            self._record_now()
        finally:
            self._recording = False

    def _record_now(self) -> None:
        picture, text_picture = QPicture(), QPicture()
        self._lines, self._fills, self._text_picture, self._texts = [], None, None, None
        painter = QPainter(picture)
        try:
            if self.style["tickFont"]:
                painter.setFont(self.style["tickFont"])
            font = QFont(painter.font())  # the labels' font, as measured for the specs
            specs = self.generateDrawSpecs(painter)
            if specs is not None:
                axis_spec, tick_specs, text_specs = specs
                painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
                painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
                pen, p1, p2 = axis_spec
                painter.setPen(pen)
                painter.drawLine(p1, p2)
                self._lines = list(tick_specs)
                self._fills = self._fillable(self._lines)
        finally:
            painter.end()
        # where pyqtgraph cuts them (its rect: the strip and, with a grid, the plot)
        clip = pg.AxisItem.boundingRect(self).toAlignedRect()
        if specs is not None and text_specs:
            self._texts = _TickTexts.of(text_specs, font, self.textPen(), clip)
        if specs is not None and text_specs and self._texts is None:  # labels drawText lays out otherwise
            painter = QPainter(text_picture)
            try:
                painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
                painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
                if self.style["tickFont"] is not None:
                    painter.setFont(self.style["tickFont"])
                painter.setPen(self.textPen())
                painter.setClipRect(clip)
                for rect, flags, text in text_specs:
                    painter.drawText(rect, int(flags), text)
            finally:
                painter.end()
            self._text_picture = text_picture
        self.picture = picture

    @staticmethod
    def _fillable(lines) -> list[tuple[QColor, float, float, float, float]] | None:
        """The lines as (colour, x1, y1, x2, y2) if every one can be filled as a rectangle:
        horizontal or vertical, at least 2 px long, drawn with a solid, opaque, 1 px cosmetic
        pen with square or round caps (Qt lights the same pixels for those; flat caps differ)."""
        out = []
        colors: dict[int, QColor | None] = {}  # the few pens (one per tick level), checked once
        for pen, p1, p2 in lines:
            key = id(pen)
            if key not in colors:
                color = pen.color()
                plain = (pen.style() == Qt.PenStyle.SolidLine and pen.isCosmetic() and pen.widthF() <= 1.0
                         and pen.capStyle() in (Qt.PenCapStyle.SquareCap, Qt.PenCapStyle.RoundCap)
                         and pen.brush().style() == Qt.BrushStyle.SolidPattern and color.alpha() == 255)
                colors[key] = color if plain else None
            color = colors[key]
            x1, y1, x2, y2 = p1.x(), p1.y(), p2.x(), p2.y()
            if color is None or not ((x1 == x2 and abs(y2 - y1) >= 2) or (y1 == y2 and abs(x2 - x1) >= 2)):
                return None
            out.append((color, x1, y1, x2, y2))
        return out

    def _fill_lines(self, p) -> bool:
        """Fill the recorded lines as rectangles, if this painter draws them as Qt's raster
        engine does on screen: unscaled, opaque, plain source-over. An aliased 1 px line from
        (x1, y) to (x2, y) lights row floor(y), columns floor(min x) to floor(max x) (device
        coordinates; vertical lines alike), which a 1 px high rectangle fills directly."""
        fills = self._fills
        if fills is None:
            return False
        engine = p.paintEngine()
        transform = p.transform()
        if (engine is None or engine.type() != QPaintEngine.Type.Raster
                or transform.type().value > QTransform.TransformationType.TxTranslate.value
                or p.opacity() != 1.0 or p.compositionMode() != QPainter.CompositionMode.CompositionMode_SourceOver):
            return False
        dx, dy = transform.dx(), transform.dy()
        cached = self._fill_rects
        if cached is None or cached[0] is not fills or cached[1] != (dx, dy):
            # consecutive lines of one colour (a tick level) are filled in one call, in order
            floor = math.floor
            runs: list[tuple[QColor, list[QRect]]] = []
            for color, x1, y1, x2, y2 in fills:
                if y1 == y2:
                    a, b = sorted((floor(x1 + dx), floor(x2 + dx)))
                    rect = QRect(a, floor(y1 + dy), b - a + 1, 1)
                else:
                    a, b = sorted((floor(y1 + dy), floor(y2 + dy)))
                    rect = QRect(floor(x1 + dx), a, 1, b - a + 1)
                if runs and runs[-1][0] == color:
                    runs[-1][1].append(rect)
                else:
                    runs.append((color, [rect]))
            cached = self._fill_rects = (fills, (dx, dy), runs)
        p.save()
        p.resetTransform()
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        p.setPen(Qt.PenStyle.NoPen)
        try:
            for color, rects in cached[2]:
                p.setBrush(color)
                p.drawRects(rects)
        finally:
            p.restore()
        return True

    def generateDrawSpecs(self, p):  # noqa: N802 - pyqtgraph naming
        """pyqtgraph's specs, with translucent grid lines made opaque over ``grid_background``:
        the same look, but Qt's raster engine blends translucent full-length lines ~10x slower
        (a 1920 px chart's grid took most of every repaint, hover moves included)."""
        self._specs_rect = super().boundingRect()  # constant while the specs are made
        try:
            specs = axis_specs.draw_specs(self, p) if axis_specs.covers(self) else super().generateDrawSpecs(p)
        finally:
            self._specs_rect = None
        bg = self.grid_background
        if specs is None or bg is None or self.grid is False:
            return specs
        axis_spec, tick_specs, text_specs = specs
        opaque: dict[int, QPen] = {}
        shown: dict[int, QPen] = {}  # by pen object: a tick level's lines share one pen
        out = []
        for pen, p1, p2 in tick_specs:
            made = shown.get(id(pen))
            if made is None:
                made = pen
                c = pen.color()
                if c.alpha() < 255:
                    key = c.rgba()
                    if key not in opaque:
                        a = c.alphaF()
                        mixed = QColor.fromRgbF(a * c.redF() + (1 - a) * bg.redF(),
                                                a * c.greenF() + (1 - a) * bg.greenF(),
                                                a * c.blueF() + (1 - a) * bg.blueF())
                        new = QPen(pen)
                        new.setColor(mixed)
                        opaque[key] = new
                    made = opaque[key]
                shown[id(pen)] = made  # tick_specs keeps ``pen`` alive: its id is not reused
            out.append((made, p1, p2))
        return axis_spec, out, text_specs

    def setLogMode(self, *args, **kwargs):  # noqa: N802 - pyqtgraph naming
        super().setLogMode(*args, **kwargs)
        self.enableAutoSIPrefix(not self.logMode and not self.binary)

    # -- what makes the ticks, grid and labels be made again: only a real change --------------
    # pyqtgraph drops the recorded axis (ticks, grid lines, tick texts) and typesets its title
    # again whenever one of these is called, with a new value or not; panels call them on every
    # redraw (the same ticks, the same label), and a linked view calls setRange on every resize.
    def setRange(self, mn, mx):  # noqa: N802 - pyqtgraph naming
        if getattr(self, "range", None) is not None and list(self.range) == [mn, mx]:
            return  # nothing to redo: the recording depends on the size too, dropped on resize
        super().setRange(mn, mx)

    def setTicks(self, ticks):  # noqa: N802 - pyqtgraph naming
        try:
            same = ticks == getattr(self, "_tickLevels", ())
        except (TypeError, ValueError):  # arrays: compare by value is ambiguous, so redraw
            same = False
        if same is True:
            return
        super().setTicks(ticks)

    def enableAutoSIPrefix(self, enable=True):  # noqa: N802 - pyqtgraph naming
        if getattr(self, "_auto_si_applied", None) == bool(enable) and self.autoSIPrefix == bool(enable):
            return
        self._auto_si_applied = bool(enable)
        super().enableAutoSIPrefix(enable)

    def _updateLabel(self):  # noqa: N802 - pyqtgraph naming
        # the title is typeset again only when its text or style changed (a range change calls
        # this for the SI prefix, which is mostly the same)
        text = self.labelString()
        if text != getattr(self, "_label_html", None):
            self._label_html = text
            self.label.setHtml(text)
            self._adjustSize()
        self.picture = None
        self.update()

    def logTickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph naming
        lo, hi = sorted(self.range) if self.range is not None else (0.0, 0.0)
        decades = abs(hi - lo)
        unit = self.unit if self.unit_in_ticks else ""
        strings = []
        for v in values:
            real = 10.0 ** float(v) * scale
            mantissa = round(real / 10.0 ** math.floor(math.log10(real) + 1e-9), 6)
            keep = mantissa in (1.0,) or (decades <= 2.5 and mantissa in (2.0, 5.0)) or decades <= 1.0
            strings.append(si_label(real, unit, binary=self.binary) if keep else "")
        if spacing is None:
            # pyqtgraph's minor (2..9 per decade) level, always the last: None, not "", for an
            # unlabelled tick skips measuring and placing an empty text; an empty text measures
            # 0 x 0, so what is drawn and the space the axis keeps are the same
            strings = [s or None for s in strings]
        return strings


class FrameAxis(pg.AxisItem):
    """The top and right edges of the plot frame: the axis line, no ticks, no values. Drawn
    directly; pyqtgraph's AxisItem records its (empty) ticks and texts into a picture again
    after every range change. Anything more than the line is pyqtgraph's own paint."""

    _frame_span: tuple | None = None  # (geometry, the line's two ends in item coordinates)

    def __init__(self, orientation: str, **kwargs):
        super().__init__(orientation, **kwargs)
        # no values and no label: pyqtgraph would otherwise re-typeset the (hidden) label
        # with a new SI prefix on every range change
        self.enableAutoSIPrefix(False)

    @pg.debug.warnOnException  # an exception escaping a paint crashes Qt
    def paint(self, p, opt, widget):
        if (self.style["showValues"] or self._tickLevels != [] or self.grid is not False
                or self.orientation not in ("top", "right") or tuple(self.style["stopAxisAtTick"]) != (False, False)):
            super().paint(p, opt, widget)
            return
        # pyqtgraph's generateDrawSpecs and drawPicture for an axis without ticks or values:
        # the line worked out once per geometry (the chart repaints the frame on every edit)
        geometry = self.geometry()
        kept = self._frame_span
        if kept is None or kept[0] != geometry:
            bounds = self.mapRectFromParent(geometry)
            if self.orientation == "top":
                span = (bounds.bottomLeft() + QPointF(-1.0, -1.0), bounds.bottomRight() + QPointF(1.0, -1.0))
            else:
                span = (bounds.topLeft() + QPointF(1.0, -1.0), bounds.bottomLeft() + QPointF(1.0, 1.0))
            kept = self._frame_span = (QRectF(geometry), span)
        span = kept[1]
        if self.deviceTransform_() is None or span[0] == span[1]:
            return  # not on a device, or a line of no length (pyqtgraph draws nothing then)
        p.save()
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        p.setPen(self.pen())
        p.drawLine(span[0], span[1])
        p.restore()


@dataclass(frozen=True)
class BarRect:
    """One bar of a chart's drawing, in data units, with its fill and its edge (the edge's
    width in pixels, presentation scale included)."""

    x0: float
    width: float
    y0: float
    height: float
    fill: QColor
    edge: QColor
    edge_width: float

    def look(self) -> tuple[int, int, float]:
        return self.fill.rgba(), self.edge.rgba(), self.edge_width


class BarsItem(pg.GraphicsObject):
    """All the bars of a chart as one item that draws its rectangles itself. A change hands it
    the new bars and repaints; pyqtgraph's ``BarGraphItem`` made numpy arrays, pens and brushes
    of them, recorded them into a picture on the next paint and then played it (a third of a
    millisecond per chart and change, for a dozen bars). The bars are drawn as that picture
    drew them: in order, each a rectangle with its own cosmetic pen and brush.

    Its bounding rect (the bars, padded by half the widest edge in pixels, as pyqtgraph pads
    them) is worked out once per change of the bars or of the view: the scene asks for it
    dozens of times per change."""

    _bounds: QRectF | None = None
    _pen_scale = 1.0  # an export's resolution scale (setExportMode)

    def __init__(self) -> None:
        super().__init__()
        self.rects: tuple[BarRect, ...] = ()
        #: what paint draws: (rectangle in data units, pen, brush) per bar, in order
        self._drawn: list[tuple[QRectF, QPen, QBrush]] = []
        #: pens and brushes by look (fill, edge, edge width): a redraw mostly keeps its colours
        self._looks = BoundedCache(64)
        self._data_rect = QRectF()
        self._edge_px = 0.0  # the widest edge, in pixels
        self._shape: QPainterPath | None = None
        self.setVisible(False)

    @classmethod
    def added_to(cls, plot: pg.PlotItem) -> BarsItem:
        """A new item in ``plot``, under its texts (theirs are drawn at z 30)."""
        item = cls()
        item.setZValue(10)
        plot.addItem(item)
        return item

    def show_rects(self, rects: Sequence[BarRect]) -> None:
        """Draw ``rects`` (nothing happens when they are the ones drawn)."""
        rects = tuple(rects)
        if rects != self.rects:
            self.prepareGeometryChange()  # the old rect, for the scene to repaint and re-index
            self.rects = rects
            self._drawn = [(QRectF(r.x0, r.y0, r.width, r.height).normalized(), *self._look(r)) for r in rects]
            data = QRectF()
            for rect, _pen, _brush in self._drawn:
                data = data.united(rect) if not data.isNull() else QRectF(rect)
            self._data_rect = data
            self._edge_px = max((r.edge_width for r in rects), default=0.0)
            self._bounds = self._shape = None
            self.update()
            self.informViewBoundsChanged()
        if self.isVisible() != bool(rects):
            self.setVisible(bool(rects))

    def drawn(self) -> list[tuple[float, float, float, float, QColor, QColor, float]]:
        """What a paint draws, bar by bar: (x0, width, y0, height, fill, edge, edge width)."""
        return [(rect.x(), rect.width(), rect.y(), rect.height(), brush.color(), pen.color(), pen.widthF())
                for rect, pen, brush in self._drawn]

    def _look(self, bar: BarRect) -> tuple[QPen, QBrush]:
        key = bar.look()
        look = self._looks.get(key)
        if look is None:
            look = self._looks.keep(key, (pg.mkPen(bar.edge, width=bar.edge_width), pg.mkBrush(bar.fill)))
        return look

    def set_x_scale(self, scale: float) -> None:
        """Draw x from 0 to ``scale`` data units in 0 to 1 of the view (a bar chart whose view
        holds still while its values move)."""
        self.prepareGeometryChange()
        self.setTransform(QTransform.fromScale(1.0 / scale, 1.0))
        self._bounds = None  # its edges' padding in data units follows the new scale

    def viewTransformChanged(self) -> None:  # noqa: N802 - pyqtgraph naming
        self.prepareGeometryChange()
        self._bounds = None  # the pen's pixel padding is another length in data units
        super().viewTransformChanged()

    def setExportMode(self, export, opts=None) -> None:  # noqa: N802 - pyqtgraph naming
        self._bounds = None
        # an export at a higher resolution widens the edges as it widens the other lines
        self._pen_scale = float((opts or {}).get("resolutionScale", 1.0)) if export else 1.0
        return super().setExportMode(export, opts)

    # -- what the view and its automatic range ask ---------------------------------------------
    def dataBounds(self, ax: int, frac: float = 1.0, orthoRange=None):  # noqa: N802 - pyqtgraph naming
        rect = self._data_rect
        if not self.rects:
            return None, None
        return (rect.left(), rect.right()) if ax == 0 else (rect.top(), rect.bottom())

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt naming
        if self._bounds is None:
            self._bounds = self._padded()
        return QRectF(self._bounds)

    def _padded(self) -> QRectF:
        if not self.rects:
            return QRectF()
        pad = self.pixelPadding()  # half the widest edge (half a pixel with none)
        vx, vy = self.pixelVectors()
        px = 0.0 if vx is None else vx.length() * pad
        py = 0.0 if vy is None else vy.length() * pad
        return self._data_rect.adjusted(-px, -py, px, py)

    def shape(self) -> QPainterPath:
        if self._shape is None:
            path = QPainterPath()
            for rect, _pen, _brush in self._drawn:
                path.addRect(rect)
            self._shape = path
        return self._shape

    def pixelPadding(self) -> float:  # noqa: N802 - pyqtgraph naming
        """Room an automatic range leaves around the bars, in pixels: half the widest edge."""
        return (self._edge_px or 1.0) * 0.5

    @pg.debug.warnOnException  # an exception escaping a paint crashes Qt
    def paint(self, p, *_args) -> None:
        scale = self._pen_scale
        for rect, pen, brush in self._drawn:
            p.setPen(pen if scale == 1.0 else th.widened_pen(pen, scale))
            p.setBrush(brush)
            p.drawRect(rect)


@dataclass
class Series:
    """One drawn series: real (not log10) values, and how it is drawn."""

    name: str
    x: np.ndarray
    y: np.ndarray
    item: pg.PlotDataItem
    color_index: int | None
    color: str | None
    width: float
    style: Qt.PenStyle
    symbol: str | None
    in_legend: bool


_STYLES = {"solid": Qt.PenStyle.SolidLine, "dash": Qt.PenStyle.DashLine, "dot": Qt.PenStyle.DotLine}

_SETTLE_EVENT = QEvent.Type(QEvent.registerEventType())


class _Settler(QObject):
    """Runs a chart's :meth:`Chart.settle` from the event loop, first: its event is posted at
    high priority, ahead of the scene's own queued processing of changed items and of the
    window's update request, so the chart is painted once, with everything in place."""

    def __init__(self, chart: Chart):
        super().__init__(chart)
        self._chart = chart

    def post(self) -> None:
        QCoreApplication.postEvent(self, QEvent(_SETTLE_EVENT), Qt.EventPriority.HighEventPriority.value)

    def customEvent(self, event) -> None:  # noqa: N802 - Qt naming
        if event.type() == _SETTLE_EVENT:
            self._chart.settle()


def keep_painted(item: QGraphicsItem) -> None:
    """Let Qt keep ``item``'s last painting as a pixmap and reuse it until the item changes.

    The chart's view repaints as a whole (see :class:`Chart`), so axes and curves that an edit
    left alone were painted again on every edit (pyqtgraph replays an axis' recorded ticks and
    texts, 0.2-0.3 ms an axis; a wide antialiased curve strokes in about as long). The pixmap
    is in device pixels (a 2x screen gets a 2x one) and any ``update()`` of the item, which
    pyqtgraph makes on every change of data, ticks, pens or text, paints it again. Exports
    paint without it. Only for items that paint inside their bounding rect: Qt cuts the pixmap
    there (the frame's edge lines and a legend's border lie on it, and are not kept)."""
    if getattr(item, "_exportOpts", False):  # pyqtgraph's export mode: an export paints afresh
        return
    if item.cacheMode() != QGraphicsItem.CacheMode.DeviceCoordinateCache:
        _make_room_for_kept_paintings()
        item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)


def _keep_painted_if(item: QGraphicsItem, keep: bool) -> None:
    if keep:
        keep_painted(item)
    elif item.cacheMode() != QGraphicsItem.CacheMode.NoCache:
        item.setCacheMode(QGraphicsItem.CacheMode.NoCache)


#: screenfuls of pixels Qt's pixmap cache may hold for kept paintings (a curve's pixmap is up
#: to its plot's size, and the panels in front show a few curves each)
KEPT_SCREENFULS = 8
_room_made = False


def _make_room_for_kept_paintings() -> None:
    """Raise Qt's pixmap cache limit (10 MB by default) to hold what the charts in front keep:
    evicted pixmaps would be painted and copied again on every paint, slower than no cache.
    A hidden chart lets go of its pixmaps (:meth:`Chart.hideEvent`), so this bounds what the
    charts on screen use, not what every chart would."""
    global _room_made
    if _room_made:
        return
    _room_made = True
    screen = QGuiApplication.primaryScreen()
    if screen is None:
        return
    size, ratio = screen.size(), screen.devicePixelRatio()
    kilobytes = int(KEPT_SCREENFULS * size.width() * size.height() * ratio * ratio * 4 / 1024)
    if kilobytes > QPixmapCache.cacheLimit():
        QPixmapCache.setCacheLimit(kilobytes)


def discard_legend(legend) -> None:
    """Empty ``legend`` and take it off its scene (a new one is made in a new style)."""
    legend.clear()
    if legend.scene() is not None:
        legend.scene().removeItem(legend)


class _StaticLabel(pg.GraphicsWidget):
    """One line of plain text in a chart, measured once per text and painted as a static text.

    pyqtgraph's LabelItem typesets its text as rich text: each new text (a step time, a ridge
    in a legend) parsed markup and laid a text document out again, and every paint drew it
    through that document. Whatever the text holds is shown as it is here, never read as
    markup. It keeps pyqtgraph's look: the text in the style of ``opts`` (colour, size as
    "9pt", bold), 4 px of margin around it as a text document has."""

    #: room around the text, as a QGraphicsTextItem's document margin leaves it
    MARGIN = 4.0

    def __init__(self, parent=None, **opts):
        super().__init__(parent)
        #: the text on show, as plain text
        self.text = ""
        #: the look (``color``, ``size`` as "11.5pt", ``bold``), as pyqtgraph's labels take it
        self.opts: dict[str, Any] = {"color": None, "size": "11pt", "bold": False, **opts}
        #: the text prepared in the font (shared: its size is read from here, see prepared_text)
        self._prepared: PreparedText | None = None
        self._font = QFont()
        self._line = 0.0  # the height of the font's line as a document's (set with the font)
        self._ink = QColor("#000000")

    def setText(self, text: str, **args) -> bool:  # noqa: N802 - pyqtgraph naming
        """``text`` in the look given (``color``, ``size``, ``bold``), as pyqtgraph's
        LabelItem.setText takes it, but plain. True when the label's size changed (the
        caller's layout has to know)."""
        opts = {**self.opts, **args}
        look_changed = opts != self.opts
        if not look_changed and text == self.text and self._prepared is not None:
            return False
        self.opts = opts
        if look_changed or self._prepared is None:
            font = QFont()
            size = str(opts.get("size") or "11pt")
            font.setPointSizeF(float(size[:-2]) if size.endswith("pt") else 11.0)
            font.setBold(bool(opts.get("bold")))
            self._font = font
            self._line = document_line_height(font)
            self._ink = QColor(pg.mkColor(opts["color"] if opts.get("color") is not None
                                          else pg.getConfigOption("foreground")))
        before = self.text_size()
        self.text = text
        self._prepared = prepared_text(text, self._font)
        self.update()
        return self.text_size() != before or look_changed

    def setAttr(self, attr: str, value) -> None:  # noqa: N802 - pyqtgraph naming
        """A new look for the text on show (a legend's label colour or size)."""
        if self.opts.get(attr) != value:
            self.setText(self.text, **{attr: value})  # a new look asks for a new geometry

    def plain_text(self) -> str:
        return self.text

    def text_width(self) -> float:
        return self._prepared.size.width() if self._prepared is not None else 0.0

    def text_size(self) -> tuple[float, float]:
        """(width, height) of the text with its margins, as a text document of it measures
        (its line is a whole number of pixels tall)."""
        if self._prepared is None:
            return (0.0, 0.0)
        return (self.text_width() + 2 * self.MARGIN, self._line + 2 * self.MARGIN)

    def _draw_text(self, p, at: QPointF) -> None:
        if self._prepared is None or not self.text:
            return
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        p.setFont(self._font)
        p.setPen(self._ink)
        p.drawStaticText(at, self._prepared.static)


class _TitleLabel(_StaticLabel):
    """A plot's title: one line of bold text, centred in its row (see :class:`_StaticLabel`).
    Its text is no floor for the plot's width (the chart cuts the title to its width with "…"
    instead), and a new text asks the plot's layout for nothing unless its height changes."""

    def __init__(self, parent=None):
        super().__init__(parent, bold=True)
        self.setSizePolicy(pg.QtWidgets.QSizePolicy.Policy.Preferred, pg.QtWidgets.QSizePolicy.Policy.Fixed)

    def setText(self, text: str, **args) -> bool:  # noqa: N802 - pyqtgraph naming (PlotItem.setTitle)
        look, height = self.opts, self._height()
        changed = super().setText(text, **args)
        if changed and (self.opts != look or self._height() != height or self.text_width() > self.size().width()):
            self.updateGeometry()  # a new look, a row of another height, or a text its row cannot hold
        return changed

    def _height(self) -> float:
        return self.text_size()[1]

    def sizeHint(self, which, constraint=None):  # noqa: N802 - Qt naming
        if which == Qt.SizeHint.MaximumSize:
            return QSizeF(-1, -1)
        height = self._height()
        if which == Qt.SizeHint.MinimumSize:
            return QSizeF(0.0, height)
        return QSizeF(self.text_width() + 2 * self.MARGIN, height)

    def paint(self, p, *_args) -> None:
        if self._prepared is None:
            return
        size = self._prepared.size
        rect = self.rect()
        self._draw_text(p, QPointF(rect.center().x() - size.width() / 2.0, rect.center().y() - size.height() / 2.0))


class _LegendLabel(_StaticLabel):
    """A legend entry's name (see :class:`_StaticLabel`), at the top left of its cell as
    pyqtgraph's left-justified label sits, and as large as its text: the legend's box is
    sized from its labels."""

    def __init__(self, text: str, **opts):
        super().__init__(None, **opts)
        self.setText(text)

    def setText(self, text: str, **args) -> bool:  # noqa: N802 - pyqtgraph naming
        changed = super().setText(text, **args)
        if changed:
            width, height = self.text_size()
            self.setMinimumSize(width, height)
            self.updateGeometry()
        return changed

    def sizeHint(self, which, constraint=None):  # noqa: N802 - Qt naming
        if which == Qt.SizeHint.MaximumSize:
            return QSizeF(-1, -1)
        return QSizeF(*self.text_size())

    def paint(self, p, *_args) -> None:
        self._draw_text(p, QPointF(self.MARGIN, self.MARGIN))

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt naming
        return QRectF(0.0, 0.0, self.size().width(), self.size().height())


class _Legend(pg.LegendItem):
    """pyqtgraph's legend with its box filled without antialiasing.

    The box is a rectangle on whole pixels: antialiased, Qt's raster engine filled its
    translucent background through the path rasteriser, several times slower than a plain
    rectangle fill (a Scaling chart's legend box: ~6% of an edit's time). Aliased, its edges
    fall on the same pixels and the border is a crisp line.

    Its names are :class:`_LegendLabel` plain texts, not pyqtgraph's rich-text labels: a
    series is often named after a user's preset, and a renamed entry (a ridge's new value)
    cost a parse and a text document's layout."""

    def addItem(self, item, name: str) -> None:  # noqa: N802 - pyqtgraph naming
        """An entry for ``item`` named ``name`` (shown as it is), as pyqtgraph adds one."""
        label = _LegendLabel(name, color=self.opts["labelTextColor"], size=self.opts["labelTextSize"])
        sample = item if isinstance(item, self.sampleType) else self.sampleType(item)
        sample.sigClicked.connect(self.sigSampleClicked)
        self.items.append((sample, label))
        self._addItemToLayout(sample, label)
        self.updateSize()

    def paint(self, p, *args) -> None:
        if not self.frame:
            return
        p.save()
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        p.setPen(self.opts["pen"])
        p.setBrush(self.opts["brush"])
        p.drawRect(self.boundingRect())
        p.restore()


class ReferenceLine(pg.InfiniteLine):
    """pyqtgraph's infinite line, its line stroked in device pixels.

    pyqtgraph draws the line in the view's coordinates, under the painter's scaling: with a
    cosmetic dashed pen Qt then works out every dash through that transform, ~0.6 ms for one
    line across a 1,200 px chart against ~0.04 ms for the same line given in pixels (a
    ceiling's dashed line was an eighth of a Scaling edit's paint). The ends are mapped to the
    device here and the line drawn there: a cosmetic pen's width and dashes are in device
    pixels either way, and the same pixels are lit (an antialiased edge may differ by a level
    or two of grey). Markers and non-cosmetic pens are pyqtgraph's paint."""

    @pg.debug.warnOnException  # an exception escaping a paint crashes Qt
    def paint(self, p, *args):
        pen = self.currentPen
        if self.markers or not pen.isCosmetic():
            super().paint(p, *args)
            return
        if self.angle % 180 not in (0, 90):
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
        left, right = self._endPoints
        transform = p.transform()
        start, end = transform.map(QPointF(left, 0.0)), transform.map(QPointF(right, 0.0))
        pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)  # (as pyqtgraph's paint sets it)
        p.setWorldTransform(QTransform())  # (the view restores the painter after each item)
        p.setPen(pen)
        p.drawLine(start, end)


class _LineLabel(pg.InfLineLabel):
    """A reference line's label: its own words, shown as they are.

    pyqtgraph's label formats its text with the line's value (``format.format(value=...)``)
    and sets it again whenever the line moves: a "{" in a name (a preset's, a file's) raised
    inside Qt's call, and every move of the line laid the same words out again. Here the text
    is the words themselves, set only when they change; the label's place still follows. They
    are drawn as a static text (:mod:`ui.plain_text_item`), not a text document."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        use_plain_text(self)

    def set_words(self, words: str) -> None:
        """New words, set now: a pooled line takes them while it is still hidden (pyqtgraph's
        label sets its text only while shown, so a line reused at the same value kept its
        last words)."""
        self.format = words
        self._set_shown()

    def _set_shown(self) -> None:
        if self.format != getattr(self, "_shown", None):
            self._shown = self.format
            self.setText(self.format)

    def valueChanged(self) -> None:  # noqa: N802 - pyqtgraph naming
        if not self.isVisible():
            return
        self._set_shown()
        self.updatePosition()


def _use_title_label(plot: pg.PlotItem) -> None:
    """Put a :class:`_TitleLabel` where pyqtgraph put its own title label."""
    old = plot.titleLabel
    plot.layout.removeItem(old)
    if old.scene() is not None:
        old.scene().removeItem(old)
    plot.titleLabel = _TitleLabel(parent=plot)
    plot.layout.addItem(plot.titleLabel, 0, 1)
    plot.setTitle(None)  # hidden until the chart has a title, as pyqtgraph starts it


#: every chart alive, for :func:`hand_over_scene_changes`
_CHARTS: weakref.WeakSet = weakref.WeakSet()


def hand_over_scene_changes(window) -> None:
    """Let the scenes of ``window``'s charts pass their changed items to their views now.

    A scene queues that work; a chart whose items change while the event loop's round runs
    (its range settled, a linked view following) has it queued after the window's update
    request, and was painted in a repaint of its own after the rest of the window: one more
    pass per chart. Called when the window's update request arrives, every chart changed by
    one edit is painted in the same pass. Only the scenes' own queued calls run here."""
    meta_call = QEvent.Type.MetaCall.value
    for chart in list(_CHARTS):
        try:
            scene = chart.scene() if chart._alive() else None
            if scene is not None and chart.window() is window:
                QCoreApplication.sendPostedEvents(scene, meta_call)
        except RuntimeError:  # its Qt side is gone: nothing to hand over
            continue


class Chart(pg.PlotWidget):
    """The chart every panel draws into. All values passed in are real SI values.

    A redraw costs what changed, not what was drawn: a panel's redraw clears and adds its
    series and reference lines, and the chart keeps the items, so the next ``add_series`` or
    ``add_reference_line`` takes one back and gives it the new values instead of making it
    again (items not taken back stay hidden, out of the plot's lists, for later). The legend
    is kept and updated in place. What depends on the whole drawing (the legend's entries,
    where the operating point's label goes) is done once per change, by :meth:`settle`, which
    runs from the event loop before the chart is painted (a queued call) and before any
    export; reading :meth:`legend_visible` settles first too.
    """

    #: Data coordinates (real values, not log10) under the mouse.
    hovered = Signal(float, float)
    #: The mouse left the plot area.
    hoverLeft = Signal()
    #: hidden items kept for reuse, per kind; more are removed from the scene
    POOL_LIMIT = 16

    def __init__(
        self,
        parent=None,
        *,
        title: str = "",
        x_label: str = "",
        x_unit: str = "",
        y_label: str = "",
        y_unit: str = "",
        log_x: bool = False,
        log_y: bool = False,
        x_binary: bool = False,
        y_binary: bool = False,
    ):
        axes = {
            "bottom": LogUnitAxis("bottom", x_unit, binary=x_binary),
            "left": LogUnitAxis("left", y_unit, binary=y_binary),
            "top": FrameAxis("top"),
            "right": FrameAxis("right"),
        }
        self._theme = th.current_theme()
        super().__init__(parent, background=self._theme.background, axisItems=axes, viewBox=SteadyViewBox())
        self.setObjectName("chart")
        # What changed is repainted as one rectangle around it all: pyqtgraph's minimal updates
        # collected every changed item's rect into a many-rectangle clip that slowed every
        # draw under it (~2 ms of a 10,000-kernel roofline redraw), and the whole view each
        # time repainted a plot where only a point and its label moved (an All-reduce size).
        # The background is one flat colour: caching it saves nothing.
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.BoundingRectViewportUpdate)
        self.setCacheMode(QGraphicsView.CacheModeFlag.CacheNone)
        # No spatial index: an edit moves or reshapes many of a chart's few dozen items (lines,
        # labels, the point, the legend), and Qt's default BSP tree re-files each of them
        # before the paint, which then draws every item anyway. A list is cheaper to keep
        # (about 1 ms per All-reduce edit, and as much per GPU count typed in the toolbar).
        self.scene().setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)
        self._title = title
        self._labels = {"bottom": (x_label, x_unit), "left": (y_label, y_unit)}
        self._log = {"x": False, "y": False}
        self._presentation = th.presentation_enabled()
        self._series: dict[str, Series] = {}
        self._next_color = 0
        self._legend: pg.LegendItem | None = None
        #: series items kept for reuse (hidden, out of the plot's lists), in drawing order
        self._pool: list[pg.PlotDataItem] = []
        #: reference lines kept for reuse, by (vertical, labelled)
        self._line_pool: dict[tuple[bool, bool], list[pg.InfiniteLine]] = {}
        #: series and reference lines cleared since the last settle, still shown (see
        #: clear_series): a redraw that draws them again takes them back as they are
        self._leaving: dict[str, pg.PlotDataItem] = {}
        self._leaving_lines: list[tuple[pg.InfiniteLine, float, str, bool, object]] = []
        self._replacing = False  # inside replacing_series()
        self._settle_pending = False
        self._legend_dirty = False
        self._overlays_dirty = False
        self._settling = False
        #: series items given new values since the last settle (painted without a pixmap)
        self._redrawn: set[pg.PlotDataItem] = set()
        #: the view's x and y ranges and size at the last settle
        self._last_view: tuple = (None, None)
        self._painted_ratio: float | None = None  # the device pixel ratio of the last paint
        self._painting = False
        #: how many times the overlays were placed (the tests count one per change)
        self.overlay_placements = 0
        self._settler = _Settler(self)
        self.getPlotItem().getViewBox().fit_requested = self._fit_before_paint
        self._op: tuple[float, float, str] | None = None
        for side in ("left", "right"):
            self.getPlotItem().getAxis(side).geometryChanged.connect(self._fit_title)
        self._op_item: PointMarker | None = None
        self._op_label: pg.TextItem | None = None
        #: each curve's segments in scene pixels, as the operating point's label last avoided
        #: them, by series name (see _curve_segments)
        self._scene_segments: dict[str, tuple] = {}
        self._lines: list[tuple[pg.InfiniteLine, float, str, bool, object]] = []
        self._hover_items: tuple[pg.InfiniteLine, pg.InfiniteLine, pg.TextItem] | None = None
        self._hover_formatter: Callable[[float, float], str] | None = None
        self._hover_enabled = False

        plot = self.getPlotItem()
        _use_title_label(plot)
        plot.hideButtons()
        plot.layout.setContentsMargins(6, 6, 18, 6)  # room for the last tick label on the right
        plot.setMenuEnabled(False)
        self._show_grid(self._theme.grid_alpha)
        for name in ("bottom", "left"):
            # the grid (drawn by these axes) goes under the data, not over it: with opaque
            # grid lines (LogUnitAxis.generateDrawSpecs) it would otherwise cut through lines
            plot.getAxis(name).setZValue(-200)
        for name in ("top", "right"):
            plot.showAxis(name)
            plot.getAxis(name).setStyle(showValues=False, tickLength=0)
            # a frame line with no ticks at all: zero-length ticks drew nothing but stray 1 px
            # dots along the frame, and cost a tick layout per range change plus a stroked
            # polygon per tick in every repaint
            plot.getAxis(name).setTicks([])
        self.setAntialiasing(True)
        self.set_log_axes(log_x, log_y)
        plot.getViewBox().sigRangeChanged.connect(self._place_overlays)
        plot.getViewBox().sigResized.connect(self._place_overlays)  # the label's room is in pixels
        plot.getViewBox().sigRangeChanged.connect(self._apply_view_transform)
        # What an edit leaves alone keeps its painting (settle: _keep_what_stays_painted). Qt
        # would move a kept painting with its item, to the nearest pixel: a move in the layout
        # (which moves or resizes the view, and the axes beside it) paints them afresh instead.
        plot.getViewBox().geometryChanged.connect(self._repaint_kept_afresh)
        self._restyle()
        th.register(self)
        _CHARTS.add(self)

    def _set_grid_background(self, color: QColor | None) -> None:
        for side in ("bottom", "left"):
            ax = self.axis(side)
            if isinstance(ax, LogUnitAxis):
                ax.grid_background = QColor(color) if color is not None else None
                ax.picture = None  # regenerate the cached drawing
                ax.update()

    def _show_grid(self, alpha: float) -> None:
        """The grid, drawn once: by the bottom and left axes only. pyqtgraph's showGrid also
        gives it to the top and right axes (here plain frame lines), which drew every grid line
        a second time: twice the alpha, and most of a repaint's time at 1920 px. The single
        grid gets the alpha the two layers had together, so it looks the same."""
        plot = self.getPlotItem()
        plot.showGrid(x=True, y=True, alpha=1.0 - (1.0 - alpha) ** 2)
        for name in ("top", "right"):
            plot.getAxis(name).setGrid(False)

    # -- axes ------------------------------------------------------------------------------
    def axis(self, which: str) -> LogUnitAxis:
        return self.getPlotItem().getAxis({"x": "bottom", "y": "left"}.get(which, which))

    def set_axis_labels(self, x_label=None, x_unit=None, y_label=None, y_unit=None) -> None:
        """Axis titles and units ("Arithmetic intensity", "FLOP/B")."""
        before = dict(self._labels)
        for side, label, unit in (("bottom", x_label, x_unit), ("left", y_label, y_unit)):
            old_label, old_unit = self._labels[side]
            label = old_label if label is None else label
            unit = old_unit if unit is None else unit
            self._labels[side] = (label, unit)
            self.axis(side).unit = unit
        if self._labels != before:
            self._apply_labels()

    def set_log_axes(self, x: bool = True, y: bool = True) -> None:
        self._log = {"x": bool(x), "y": bool(y)}
        self.getPlotItem().setLogMode(x=bool(x), y=bool(y))
        for side in ("bottom", "left"):
            ax = self.axis(side)
            ax.enableAutoSIPrefix(not ax.logMode and not ax.binary)
        self._apply_labels()
        for entry in self._lines:  # lines sit at log10 of their value on a log axis
            self._position_line(entry)
        if self._op_item is not None:
            self._move_operating_point()
        self._place_overlays()

    def close(self) -> bool:
        # Not pyqtgraph's PlotWidget.close(): it removes the ViewBox from the scene, which hands
        # the ViewBox and its children (legend, curves) back to Python, and collecting them
        # later segfaults under PySide6 6.12; it also fails when called twice (plotItem is
        # None afterwards). A plain close leaves the scene to be deleted with the widget.
        return QGraphicsView.close(self)

    def _alive(self) -> bool:
        return getattr(self, "plotItem", None) is not None

    def log_axes(self) -> tuple[bool, bool]:
        return self._log["x"], self._log["y"]

    def to_view(self, x: float, y: float) -> tuple[float, float]:
        """Real values -> view coordinates (log10 on log axes)."""
        return (math.log10(x) if self._log["x"] else x, math.log10(y) if self._log["y"] else y)

    def from_view(self, vx: float, vy: float) -> tuple[float, float]:
        """View coordinates -> real values."""
        return (10.0**vx if self._log["x"] else vx, 10.0**vy if self._log["y"] else vy)

    def set_log_range(self, xmin=None, xmax=None, ymin=None, ymax=None, padding: float = 0.0, *,
                      hold: bool = False) -> None:
        """Set the visible range in real values; log axes are converted to log10 here.

        ``hold``: a redraw's fit of the data, not a range the user asked for: the axes hold still
        while the data stays well inside them (:func:`held_range`), so an edit that moves the
        data a little does not move the gridlines (nor record the axes again)."""
        kwargs = {}
        for axis, lo, hi, key in (("x", xmin, xmax, "xRange"), ("y", ymin, ymax, "yRange")):
            if lo is None or hi is None:
                continue
            if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
                raise ValueError(f"{axis} range must be finite with min < max, got {lo!r} to {hi!r}")
            if self._log[axis]:
                if lo <= 0:
                    raise ValueError(f"{axis} range on a log axis must be > 0, got {lo!r}")
                lo, hi = math.log10(lo), math.log10(hi)
            kwargs[key] = (lo, hi)
        vb = self.getPlotItem().getViewBox()
        if kwargs and hold and isinstance(vb, SteadyViewBox):
            pad = {k: (lo - (hi - lo) * padding, hi + (hi - lo) * padding) for k, (lo, hi) in kwargs.items()}
            x, y = vb.held(pad.get("xRange"), pad.get("yRange"))
            kwargs, padding = {k: r for k, r in (("xRange", x), ("yRange", y)) if r is not None}, 0.0
        if kwargs:
            # the view transform follows at once (_apply_view_transform): one paint, not two
            vb.setRange(padding=padding, **kwargs)

    def visible_range(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """((xmin, xmax), (ymin, ymax)) in real values."""
        (x0, x1), (y0, y1) = self.getPlotItem().getViewBox().viewRange()
        a, b = self.from_view(x0, y0)
        c, d = self.from_view(x1, y1)
        return (a, c), (b, d)

    # -- series ---------------------------------------------------------------------------
    def add_series(
        self,
        name: str,
        x: Sequence[float],
        y: Sequence[float],
        *,
        color: str | QColor | None = None,
        width: float | None = None,
        style: str = "solid",
        symbol: str | None = None,
        in_legend: bool = True,
    ) -> pg.PlotDataItem:
        """Draw a series (replacing one of the same name). Colours come from the palette in
        order unless given (semantic colours: ``th.MEMORY_BOUND`` etc.)."""
        xs, ys = self._checked(name, x, y)
        color_index = None
        if color is None:
            color_index = self._next_color
            self._next_color += 1
        old = self._series.pop(name, None)
        if old is not None:  # the same name again: its own item, in its place
            item = old.item
        elif name in self._leaving:  # cleared by this redraw and drawn again: shown all along
            item = self._leaving.pop(name)
        elif name in (pooled_names := [pooled.opts.get("name") for pooled in self._pool]):
            # the line that drew this name before (it holds its values: a curve switched off
            # and on again)
            item = self._pool.pop(pooled_names.index(name))
            self._unpark(item)
        elif self._leaving:
            # another name where a cleared one was (a curve named after its value): the first
            # cleared one not drawn again yet, still shown
            item = self._leaving.pop(next(iter(self._leaving)))
        elif self._pool:
            item = self._pool.pop(0)
            self._unpark(item)
        else:
            item = pg.PlotDataItem()  # unnamed here: the plot would put it in its legend itself
            self.getPlotItem().addItem(item)
        series = Series(
            name=name,
            x=xs,
            y=ys,
            item=item,
            color_index=color_index,
            color=QColor(color).name() if color is not None else None,
            width=th.BASE_LINE_WIDTH if width is None else float(width),
            style=_STYLES.get(style, Qt.PenStyle.SolidLine),
            symbol=symbol,
            in_legend=in_legend,
        )
        self._series[name] = series
        self._style_series(series)
        if self._holds(item, xs, ys, name):
            # the same curve again (a redraw after another value changed): pyqtgraph would
            # map, clip and path it anew; the view still learns of it for its automatic range
            item.informViewBoundsChanged()
        else:
            # the name goes into the item's options, not through setData: pyqtgraph takes a
            # name given to it as a change of style (two Qt property sets, their change events
            # dispatched through Python, and the curve restyled with the pens it already has)
            item.opts["name"] = name
            self._scene_segments.pop(name, None)  # the same arrays may hold new values
            item.setData(xs, ys)
            self._redrawn.add(item)
        self._legend_changed()
        return item

    @staticmethod
    def _holds(item: pg.PlotDataItem, xs: np.ndarray, ys: np.ndarray, name: str) -> bool:
        """Whether ``item`` already draws these values under this name (equal values in other
        arrays: the same array again may have been changed in place)."""
        x0, y0 = item.getOriginalDataset()  # views of the arrays it was given
        if (x0 is None or y0 is None or item.opts.get("name") != name
                or np.may_share_memory(x0, xs) or np.may_share_memory(y0, ys)):
            return False
        return x0.shape == xs.shape and y0.shape == ys.shape and np.array_equal(x0, xs) and np.array_equal(y0, ys)

    @contextlib.contextmanager
    def replacing_series(self) -> Iterator[None]:
        """Redraw every series at once: the series added inside replace all the chart had,
        exactly as ``clear_series()`` followed by those ``add_series()`` calls. Each name drawn
        again keeps its item (as every clear and add does), and at the end the items not
        reused leave the scene and the legend is updated, at once."""
        if self._replacing:  # nested: the outer one finishes the job
            yield
            return
        self._replacing = True
        self.clear_series()
        waiting = [*self._pool, *self._leaving.values()]
        for item in waiting:
            # a range change inside the block would make each line refit its (old) data to the
            # new range (pyqtgraph's dynamic range limit), just before it gets new data
            item._range_limit_suspended = item.opts.get("dynamicRangeLimit")
            item.opts["dynamicRangeLimit"] = None
        try:
            yield
        finally:
            self._replacing = False
            for item in waiting:
                self._resume_range_updates(item)
            if self._alive():
                self._park_leaving()
            self._trim_pools(0)
            if self._alive():
                self.update_legend()

    @staticmethod
    def _resume_range_updates(item: pg.PlotDataItem) -> None:
        if hasattr(item, "_range_limit_suspended"):
            item.opts["dynamicRangeLimit"] = item._range_limit_suspended
            del item._range_limit_suspended

    # pyqtgraph internals (the plot's bookkeeping lists), kept here: a pooled item is hidden
    # and out of the plot's lists, so everything that walks them sees only what is drawn
    def _park(self, item) -> None:
        self._resume_range_updates(item)
        item.setVisible(False)
        plot = self.getPlotItem()
        for bucket in (plot.items, plot.dataItems, plot.curves):
            if item in bucket:
                bucket.remove(item)
        plot.itemMeta.pop(item, None)

    def _unpark(self, item) -> None:
        plot = self.getPlotItem()
        plot.items.append(item)
        if isinstance(item, pg.PlotDataItem):
            plot.dataItems.append(item)
            plot.curves.append(item)
            plot.itemMeta[item] = {}
        item.setVisible(True)

    def _trim_pools(self, keep: int) -> None:
        """Remove pooled items beyond ``keep`` of each kind from the scene."""
        if not self._alive():
            return
        vb = self.getPlotItem().getViewBox()
        pools = [self._pool, *self._line_pool.values()]
        for pool in pools:
            while len(pool) > keep:
                item = pool.pop()
                vb.removeItem(item)

    def set_series_data(self, name: str, x: Sequence[float], y: Sequence[float]) -> None:
        series = self._series[name]
        series.x, series.y = self._checked(name, x, y)
        self._scene_segments.pop(name, None)
        series.item.setData(series.x, series.y)

    def remove_series(self, name: str) -> None:
        series = self._series.pop(name, None)
        if series is not None:
            self._park(series.item)
            self._pool.append(series.item)
            self._legend_changed()

    def clear_series(self) -> None:
        """Remove every series. A redraw clears and adds its series again, mostly the same
        names: the items stay shown until the next :meth:`settle`, and an ``add_series`` of a
        name cleared takes its item back as it is. Hiding an item and showing it again made
        Qt drop its kept painting (see keep_painted) and pyqtgraph walk the view's items
        twice. What is not taken back by then is hidden, to wait for a later redraw."""
        for series in self._series.values():
            self._leaving[series.name] = series.item
        self._series = {}
        self._next_color = 0
        self._legend_changed()

    def _park_leaving(self) -> None:
        """Hide what the last clears left that no add took back (see clear_series), before
        anything reads the drawing: the automatic range, the legend, the overlays."""
        for item in self._leaving.values():
            self._park(item)
            self._pool.append(item)
        self._leaving = {}
        for line, _value, label, vertical, _color in self._leaving_lines:
            self._park(line)
            self._line_pool.setdefault((bool(vertical), bool(label)), []).append(line)
        self._leaving_lines = []

    def series(self) -> list[Series]:
        return list(self._series.values())

    def _checked(self, name: str, x, y) -> tuple[np.ndarray, np.ndarray]:
        xs = np.asarray(x, dtype=float).ravel()
        ys = np.asarray(y, dtype=float).ravel()
        if xs.shape != ys.shape:
            raise ValueError(f"series {name!r}: x has {xs.size} values but y has {ys.size}")
        for axis, values in (("x", xs), ("y", ys)):
            if self._log[axis] and np.any(values[np.isfinite(values)] <= 0):
                raise ValueError(f"series {name!r}: a log {axis} axis cannot show values <= 0")
        return xs, ys

    def _pen(self, color: QColor, width: float, style=Qt.PenStyle.SolidLine):
        pen = pg.mkPen(color, width=width * th.scale_factor(self._presentation), style=style)
        # Not round caps: Qt's raster engine strokes a wide round-capped pen about twice as
        # slowly (every dash of a dashed reference line got two rounded ends). A solid curve
        # ends flat, at its last point; dashes and dots get square ends, which give them the
        # length (and the ink) round ones had: flat dots would be half as long.
        solid = style == Qt.PenStyle.SolidLine
        pen.setCapStyle(Qt.PenCapStyle.FlatCap if solid else Qt.PenCapStyle.SquareCap)
        pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        return pen

    def _series_color(self, series: Series) -> QColor:
        if series.color is not None:
            return QColor(series.color)
        return self._theme.series_color(series.color_index or 0)

    def _style_series(self, series: Series) -> None:
        color = self._series_color(series)
        s = th.scale_factor(self._presentation)
        pen = self._pen(color, series.width, series.style)
        if series.item.opts.get("pen") != pen:  # an equal pen would only redo the curve's style work
            series.item.setPen(pen)
        if series.symbol:
            series.item.setSymbol(series.symbol)
            series.item.setSymbolSize(th.BASE_MARKER_SIZE * 0.7 * s)
            series.item.setSymbolBrush(color)
            series.item.setSymbolPen(pg.mkPen(self._theme.background, width=1.0 * s))
        else:
            series.item.setSymbol(None)

    def update_legend(self) -> None:
        """Show a legend only when more than one series is named. The legend item is kept:
        its entries point at the series' items and are renamed in place; entries are made or
        removed only when their number changes (see also :meth:`_rebuild_legend`)."""
        self._legend_dirty = False
        plot = self.getPlotItem()
        shown = [s for s in self._series.values() if s.in_legend and s.name]
        legend = self._legend
        if len(shown) <= 1:
            if legend is not None:
                legend.setVisible(False)
            plot.legend = None
            return
        if legend is None:
            legend = self._legend = self._new_legend()
        self._fill_legend(legend, shown)
        legend.setVisible(True)
        plot.legend = legend

    def _new_legend(self) -> pg.LegendItem:
        """An empty legend in the chart's style, on the view, over the curves."""
        s = th.scale_factor(self._presentation)
        bg = QColor(self._theme.background)
        bg.setAlpha(225)
        legend = _Legend(
            offset=(12, 12),
            labelTextColor=self._theme.ink,
            labelTextSize=f"{th.BASE_TICK_FONT_PT * s:.0f}pt",
            brush=pg.mkBrush(bg),
            pen=pg.mkPen(self._theme.muted, width=1),
            verSpacing=-2,
        )
        legend.setParentItem(self.getPlotItem().getViewBox())
        legend.setZValue(50)
        return legend

    @staticmethod
    def _fill_legend(legend: pg.LegendItem, shown: Sequence[Series]) -> None:
        """Make ``legend`` list ``shown``: its entries are re-pointed and renamed in place, and
        made again only when their number changes. The names are plain text (a series can be
        named after a user's preset: it is shown as it is)."""
        # one line, its runs of spaces, tabs and line breaks as one space (as pyqtgraph's HTML
        # label showed a name, and the entry's height is one line)
        texts = [" ".join(s.name.split()) for s in shown]
        if len(legend.items) != len(shown):
            legend.clear()
            for series, text in zip(shown, texts, strict=True):
                legend.addItem(series.item, text)
            return
        resized = False
        for (sample, label), series, text in zip(legend.items, shown, texts, strict=True):
            if sample.item is not series.item:
                sample.item = series.item
            sample.update()  # its line is drawn with the item's (possibly new) pen
            if label.text != text and label.setText(text):
                resized = True  # another size: the box is sized again (a ridge "295" to "590" is not)
        if resized:
            # size the box as a new legend would: from the labels' own widths (the layout
            # has stretched them to the widest one, which may have been renamed shorter)
            for _sample, label in legend.items:
                label.resize(label.minimumSize())
            legend.updateSize()
            legend.layout.activate()  # now, not as a posted layout request after the paint

    def _restack_series(self) -> None:
        """The series drawn in the order they were added, the last on top, as new items would
        be: an item taken back from the pool keeps its old place in the scene's stacking (a
        curve could end up under one added before it)."""
        items = [s.item for s in self._series.values()]
        if len(items) < 2:
            return
        rank = {id(item): i for i, item in enumerate(self.getPlotItem().getViewBox().childGroup.childItems())}
        places = [rank.get(id(item), -1) for item in items]
        if all(a < b for a, b in zip(places, places[1:], strict=False)):
            return
        for lower, upper in zip(reversed(items[:-1]), reversed(items[1:]), strict=True):
            lower.stackBefore(upper)  # no effect between items of different Z values

    def _rebuild_legend(self) -> None:
        """A new legend item (a theme or presentation change restyles its box and labels)."""
        if self._legend is not None:
            discard_legend(self._legend)
            self.getPlotItem().legend = None
            self._legend = None
        self.update_legend()

    def _legend_changed(self) -> None:
        self._legend_dirty = True
        self._request_settle()

    def _sync_legend(self) -> None:  # kept for callers of the former name
        self.update_legend()

    def legend_visible(self) -> bool:
        self.settle()
        return self._legend is not None and self._legend.isVisible() and self.getPlotItem().legend is self._legend

    # -- operating point, reference lines ---------------------------------------------------
    def set_operating_point(self, x: float, y: float, label: str = "") -> None:
        """Mark the current scenario's point (a large vermillion dot, outlined)."""
        if self._log["x"] and x <= 0 or self._log["y"] and y <= 0:
            raise ValueError("the operating point must be > 0 on a log axis")
        self._op = (float(x), float(y), label)
        plot = self.getPlotItem()
        if self._op_item is None:
            self._op_item = PointMarker()
            self._op_item.setZValue(40)
            plot.addItem(self._op_item)
            self._op_label = PlainTextItem(anchor=(-0.08, 1.1))
            self._op_label.setZValue(41)
            plot.addItem(self._op_label, ignoreBounds=True)
            self._style_operating_point()
        elif self._op_label.toPlainText() != label:  # the style stays; only the text is new
            self._op_label.setText(label)
        self._move_operating_point()
        self._place_overlays()

    def _move_operating_point(self) -> None:
        """The marker sits at the point's place in the view's coordinates: a new value of the
        point is a move (the automatic range follows the item's position)."""
        vx, vy = self.to_view(self._op[0], self._op[1])
        if self._op_item.pos() != QPointF(vx, vy):
            self._op_item.setPos(vx, vy)

    def clear_operating_point(self) -> None:
        if self._op_item is not None:
            self.getPlotItem().removeItem(self._op_item)
            self.getPlotItem().removeItem(self._op_label)
        self._op = self._op_item = self._op_label = None

    def operating_point(self) -> tuple[float, float, str] | None:
        return self._op

    def _style_operating_point(self) -> None:
        if self._op_item is None:
            return
        s = th.scale_factor(self._presentation)
        color = self._theme.color("operating_point")
        self._op_item.set_style("o", th.BASE_MARKER_SIZE * s, pg.mkPen(self._theme.ink, width=1.5 * s),
                                pg.mkBrush(color))
        label = self._op[2] if self._op else ""
        self._op_label.setColor(self._theme.ink)
        self._op_label.setText(label)
        font = QFont()
        font.setPointSizeF(th.BASE_TICK_FONT_PT * s)
        font.setBold(True)
        self._op_label.setFont(font)

    def add_reference_line(self, value: float, *, vertical: bool = True, label: str = "", color=None) -> pg.InfiniteLine:
        """A dashed line at a real value (e.g. the ridge point), labelled."""
        if (self._log["x"] if vertical else self._log["y"]) and value <= 0:
            raise ValueError("a reference line on a log axis must be > 0")
        kind = (bool(vertical), bool(label))
        pool = self._line_pool.get(kind)
        leaving = [entry for entry in self._leaving_lines if (bool(entry[3]), bool(entry[2])) == kind]
        if leaving:  # cleared by this redraw and still shown (see clear_series): the same one if it is there
            same = [entry for entry in leaving if entry[1:] == (float(value), label, vertical, color)]
            taken = (same or leaving)[0]
            self._leaving_lines.remove(taken)
            line = taken[0]
            self._reset_line(line, label)
        elif pool:
            line = pool.pop(0)
            self._reset_line(line, label)
            self._unpark(line)
        else:
            line = ReferenceLine(angle=90 if vertical else 0, movable=False)
            line.setZValue(20)
            self.getPlotItem().addItem(line, ignoreBounds=True)
        entry = (line, float(value), label, vertical, color)
        self._lines.append(entry)
        self._style_line(entry)
        self._position_line(entry)
        self._place_overlays()
        return line

    def clear_reference_lines(self) -> None:
        """Remove the reference lines. As series (see clear_series), they stay shown until the
        next settle, for this redraw's ``add_reference_line`` to take back; the rest then wait,
        hidden, for a later one."""
        self._leaving_lines += self._lines
        self._lines = []
        self._request_settle()

    @staticmethod
    def _reset_line(line: pg.InfiniteLine, label: str) -> None:
        """A reused line as a new one is: what panels set on a line or its label put back
        (each only where it differs: a line drawn again as it was costs nothing)."""
        if line.toolTip():
            line.setToolTip("")
        text = getattr(line, "label", None)
        if text is None:
            return
        if text.toolTip():
            text.setToolTip("")
        if not text.isVisible():
            text.setVisible(True)
        if text.angle != 0:
            text.setAngle(0)
        text.orthoPos = 0.92
        text.anchors = [(0, 0), (0, 0)]
        if text.fill.style() != Qt.BrushStyle.NoBrush:
            text.fill = pg.mkBrush(None)
        if text.border.style() != Qt.PenStyle.NoPen:
            text.border = pg.mkPen(None)
        text.set_words(label)

    def _style_lines(self) -> None:
        for entry in self._lines:
            self._style_line(entry)

    def _style_line(self, entry) -> None:
        line, _value, label, _vertical, color = entry
        s = th.scale_factor(self._presentation)
        c = QColor(color) if color is not None else QColor(self._theme.muted)
        pen = self._pen(c, 1.5, Qt.PenStyle.DashLine)
        if line.pen != pen:
            line.setPen(pen)
        if label:
            if getattr(line, "label", None) is None:
                line.label = _LineLabel(line, label, position=0.92, anchors=[(0, 0), (0, 0)])
            ink = QColor(self._theme.ink)
            if line.label.color != ink:
                line.label.setColor(ink)
            size = th.BASE_TICK_FONT_PT * 0.9 * s
            if line.label.textItem.font().pointSizeF() != size:
                font = QFont()
                font.setPointSizeF(size)
                line.label.textItem.setFont(font)

    def _position_line(self, entry) -> None:
        line, value, _label, vertical, _color = entry
        pos = self.to_view(value, 1.0)[0] if vertical else self.to_view(1.0, value)[1]  # log10 on a log axis
        if line.value() != pos:
            line.setPos(pos)

    def _apply_view_transform(self, *_args) -> None:
        """The view transform for a new range, now: pyqtgraph defers it to the next paint
        (ViewBox.prepareForPaint), and changing it there dirties the scene again, so every set
        range, zoom or pan was painted twice."""
        if self._alive():
            self.getPlotItem().getViewBox().updateMatrix()

    def _place_overlays(self, *_args) -> None:
        """The operating point's label needs placing again (a new range, size, point, line,
        legend): done once, by :meth:`settle`, however many of these a redraw makes; at once
        when it comes while the chart paints (pyqtgraph's automatic range is applied then)."""
        self._overlays_dirty = True
        if self._painting and not self._settling:
            self._place_overlays_now()
        else:
            self._request_settle()

    def _fit_before_paint(self) -> bool:
        """The view's automatic range is to be fitted again: by the settle before the paint
        (False while settling or painting: the view then asks for a paint itself)."""
        if self._settling or self._painting or not self._alive():
            return False
        self._request_settle()
        return True

    def _request_settle(self) -> None:
        if not self._settle_pending and not self._settling:
            self._settle_pending = True
            self._settler.post()

    def settle(self) -> None:
        """Do the pending work of the last changes now: pyqtgraph's automatic range, items
        beyond the pools' limit out of the scene, the legend, the overlays. Runs by itself
        from the event loop before the next paint; call it to read or render the chart
        before that (exports do)."""
        self._settle_pending = False
        if self._settling or not self._alive():
            return
        self._settling = True
        try:
            self._park_leaving()
            scene = self.scene()
            if scene is not None:
                scene.prepareForPaint()  # the automatic range now, not during the paint
            self._trim_pools(self.POOL_LIMIT)
            if self._legend_dirty:  # series came or went
                self._restack_series()
                self.update_legend()  # a subclass's override too
            if self._overlays_dirty:
                self._place_overlays_now()
            self._keep_what_stays_painted()
        finally:
            self._settling = False

    def _kept_items(self) -> list[QGraphicsItem]:
        """The items of the chart's scene that keep their painting (see keep_painted)."""
        scene = self.scene()
        if scene is None or not self._alive():
            return []
        none = QGraphicsItem.CacheMode.NoCache
        return [item for item in scene.items() if item.cacheMode() != none]

    def _repaint_kept_afresh(self) -> None:
        """The view moved or was resized: whatever the scene keeps painted is painted again in
        place (Qt would only shift its pixmap, to the nearest pixel)."""
        for item in self._kept_items():
            item.update()

    def _keep_what_stays_painted(self) -> None:
        """What these changes left alone is kept as a pixmap (see keep_painted): an edit that
        moves only a marker then repaints no curve and no axis. What they changed is painted
        directly, which costs less than painting a pixmap and copying it: a series given new
        values, and on a new range or size of the view every curve and the axis along it."""
        redrawn, self._redrawn = self._redrawn, set()
        plot = self.getPlotItem()
        view = plot.getViewBox()
        if not self._may_keep_paintings():
            self._drop_kept_paintings(keep_modes=False)
            return
        (x0, x1), (y0, y1) = view.viewRange()
        size = view.size()
        now = ((x0, x1, size.width(), size.height()), (y0, y1, size.width(), size.height()))
        last, self._last_view = self._last_view, now
        x_moved, y_moved = now[0] != last[0], now[1] != last[1]
        still = not (x_moved or y_moved)
        wanted = []
        for series in self._series.values():
            keep = still and series.item not in redrawn
            wanted += [(series.item.curve, keep), (series.item.scatter, keep)]
        wanted += [(plot.getAxis("bottom"), not x_moved), (plot.getAxis("left"), not y_moved)]
        # The first paint into a pixmap costs more than painting in place (the pixmap is made,
        # cleared, painted and copied): a few items start being kept per edit, so that no
        # single edit pays for all of them (the All-reduce panel's second edit did: +6 ms, now +3).
        room = self.NEWLY_KEPT_PER_EDIT
        none = QGraphicsItem.CacheMode.NoCache
        for item, keep in wanted:
            if keep and item.cacheMode() == none and item.isVisible():
                if room <= 0:
                    keep = False
                room -= 1
            _keep_painted_if(item, keep)

    #: how many items may start keeping their painting in one edit (see _keep_what_stays_painted)
    NEWLY_KEPT_PER_EDIT = 2

    def _may_keep_paintings(self) -> bool:
        """Only at a whole device pixel ratio: at 1.25 or 1.5 Qt puts a kept pixmap on a whole
        logical pixel, half a device pixel away from where the item paints itself."""
        return float(self.devicePixelRatioF()).is_integer()

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt naming
        ratio = self.devicePixelRatioF()
        if ratio != self._painted_ratio:
            # another screen: paint everything afresh once (a scatter renews its symbols for
            # the new ratio only when it paints on the screen itself), keep again from the next edit
            if self._painted_ratio is not None:
                self._drop_kept_paintings(keep_modes=False)
            self._painted_ratio = ratio
        if self._settle_pending:  # painted before the queued settle ran (a grab, a repaint())
            self.settle()
        self._painting = True
        try:
            super().paintEvent(event)
        finally:
            self._painting = False

    def _place_overlays_now(self) -> None:
        """Re-place items positioned in view coordinates (they do not follow log mode)."""
        self._overlays_dirty = False
        self.overlay_placements += 1
        for entry in self._lines:
            self._position_line(entry)
        if self._op is not None and self._op_label is not None and not self._place_op_label():
            vx, vy = self.to_view(self._op[0], self._op[1])
            self._op_label.setPos(QPointF(vx, vy))
            # keep the label inside the plot: left of the point near the right edge, below it
            # near the top
            (x0, x1), (y0, y1) = self.getPlotItem().getViewBox().viewRange()
            right = x1 > x0 and vx > x0 + 0.7 * (x1 - x0)
            top = y1 > y0 and vy > y0 + 0.85 * (y1 - y0)
            self._op_label.setAnchor((1.08 if right else -0.08, -0.1 if top else 1.1))

    def _place_op_label(self) -> bool:
        """Put the operating point's label in the first place near the point that crosses no
        curve, reference line, line label or legend (``ui.label_placement``, as the roofline
        names its kernels). False, nothing moved, when there is none (or no layout yet)."""
        label = self._op_label
        if not label.toPlainText():
            return False
        vb = self.getPlotItem().getViewBox()
        area = vb.sceneBoundingRect()
        if area.width() < 80 or area.height() < 60:
            return False
        vb.updateMatrix()  # the range may have just changed
        to_scene = vb.childGroup.sceneTransform()
        vx, vy = self.to_view(self._op[0], self._op[1])
        point = to_scene.map(QPointF(vx, vy))
        obstacles = []
        legend = self._legend
        if legend is not None and legend.isVisible():
            r = legend.sceneBoundingRect()
            obstacles.append((r.left(), r.top(), r.width(), r.height()))
        segments: list[np.ndarray] = []  # (n, 4) arrays of x1, y1, x2, y2, one per curve
        for line, *_rest in self._lines:
            # a dashed reference line may run behind the label; its own text may not
            text = getattr(line, "label", None)
            if text is not None and text.isVisible():
                r = text.sceneBoundingRect()
                obstacles.append((r.left(), r.top(), r.width(), r.height()))
        placement = (to_scene.m11(), to_scene.m12(), to_scene.m21(), to_scene.m22(), to_scene.dx(),
                     to_scene.dy(), self._log["x"], self._log["y"])
        for series in self._series.values():
            if len(series.x) >= 2:  # (the point's marker is not a series)
                segments.append(self._curve_segments(series, placement))
        for gone in self._scene_segments.keys() - self._series.keys():  # curves named after a value
            del self._scene_segments[gone]
        r = label.textItem.boundingRect()
        s = th.scale_factor(self._presentation)
        at, size = (point.x(), point.y()), (r.width(), r.height())
        inside = (area.left() + 2, area.top() + 2, area.width() - 4, area.height() - 4)
        how = {"gap": 9.0 * s, "marker": 8.0 * s, "rings": (1.0, 2.0)}
        (box,) = place_labels([at], [size], inside, obstacles, np.concatenate(segments) if segments else (), **how)
        if box is None:
            # nowhere clear of everything (a point in a corner, presentation-sized text): near
            # the point and inside the plot, over a curve rather than over another label
            box = place_near(at, size, inside, obstacles, **how)
        if box is None:
            return False
        inverse, invertible = to_scene.inverted()
        if not invertible:
            return False
        label.setAnchor((0, 0))
        label.setPos(inverse.map(QPointF(box[0], box[1])))
        return True

    def _curve_segments(self, series: Series, placement: tuple) -> np.ndarray:
        """A curve's segments in scene pixels, (n, 4) of x1, y1, x2, y2, for the operating
        point's label to avoid. Kept while the curve holds the same arrays and the view maps
        them the same way: an edit that moves only the point (a new message size) leaves
        every curve where it was."""
        x0, y0 = series.item.getOriginalDataset()  # the arrays the item draws (see _holds)
        kept = self._scene_segments.get(series.name)
        if kept is not None and kept[0] is x0 and kept[1] is y0 and kept[2] == placement:
            return kept[3]
        m11, m12, m21, m22, dx, dy, log_x, log_y = placement
        with np.errstate(divide="ignore", invalid="ignore"):
            xs = np.log10(series.x) if log_x else np.asarray(series.x, dtype=float)
            ys = np.log10(series.y) if log_y else np.asarray(series.y, dtype=float)
        step = max(1, len(xs) // 120)  # a curve of thousands of points: every few is enough
        xs, ys = xs[::step], ys[::step]
        sx = m11 * xs + m21 * ys + dx
        sy = m12 * xs + m22 * ys + dy
        ok = np.isfinite(sx) & np.isfinite(sy)
        both = ok[:-1] & ok[1:]  # a segment between two drawn points
        segments = np.column_stack([sx[:-1], sy[:-1], sx[1:], sy[1:]])[both]
        if x0 is not None and y0 is not None:
            self._scene_segments[series.name] = (x0, y0, placement, segments)
        return segments

    # -- hover readout ----------------------------------------------------------------------
    def enable_hover(self, readout: bool = True, formatter: Callable[[float, float], str] | None = None) -> None:
        """Crosshair and readout under the mouse; ``hovered(x, y)`` carries real values."""
        self._hover_formatter = formatter
        if self._hover_enabled:
            return
        self._hover_enabled = True
        plot = self.getPlotItem()
        vline = ReferenceLine(angle=90, movable=False)
        hline = ReferenceLine(angle=0, movable=False)
        text = PlainTextItem(anchor=(0, 1))
        for item in (vline, hline, text):
            item.setZValue(60)
            item.setVisible(False)
            plot.addItem(item, ignoreBounds=True)
        text.setVisible(False)
        self._hover_items = (vline, hline, text)
        self._hover_readout = readout
        self._style_hover()
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)

    def hover_text(self, x: float, y: float) -> str:
        if self._hover_formatter is not None:
            return self._hover_formatter(x, y)
        (xl, xu), (yl, yu) = self._labels["bottom"], self._labels["left"]
        xs = si_label(x, xu, binary=self.axis("bottom").binary)
        ys = si_label(y, yu, binary=self.axis("left").binary)
        return f"{xl or 'x'}: {xs}\n{yl or 'y'}: {ys}"

    def hover_at_scene(self, scene_pos: QPointF) -> tuple[float, float] | None:
        """Update the crosshair for a scene position; returns the real (x, y) or None."""
        return self._on_mouse_moved(scene_pos)

    def hide_hover(self) -> None:
        """Take the crosshair and readout away (the mouse left the chart)."""
        self._hover_scene_pos = None
        if self._hover_items is not None and self._hover_items[0].isVisible():
            for item in self._hover_items:
                item.setVisible(False)
            self.hoverLeft.emit()

    def hover_shown(self) -> bool:
        return self._hover_items is not None and self._hover_items[0].isVisible()

    def hover_readout_text(self) -> str:
        return self._hover_items[2].toPlainText() if self.hover_shown() else ""

    def refresh_hover(self) -> None:
        """Say again what is under a resting mouse after the chart changed (a new precision or
        sparsity moves the roofs under it)."""
        pos = getattr(self, "_hover_scene_pos", None)
        if pos is not None and self.hover_shown():
            self._on_mouse_moved(pos)

    def leaveEvent(self, event) -> None:  # noqa: N802 - Qt naming
        self.hide_hover()  # no mouse-move reaches the scene once the mouse has left the widget
        super().leaveEvent(event)

    def _on_mouse_moved(self, scene_pos) -> tuple[float, float] | None:
        vb = self.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(scene_pos):
            self.hide_hover()
            return None
        self._hover_scene_pos = QPointF(scene_pos)
        p = vb.mapSceneToView(scene_pos)
        x, y = self.from_view(p.x(), p.y())
        if self._hover_items is not None:
            vline, hline, text = self._hover_items
            vline.setPos(p.x())
            hline.setPos(p.y())
            vline.setVisible(True)
            hline.setVisible(True)
            if self._hover_readout:
                text.setText(self.hover_text(x, y))
                text.setPos(p)
                (x0, x1), (y0, y1) = vb.viewRange()
                right = p.x() > x0 + 0.6 * (x1 - x0)
                top = p.y() > y0 + 0.7 * (y1 - y0)
                text.setAnchor((1.0 if right else -0.05, 0.0 if top else 1.0))
                text.setVisible(True)
        self.hovered.emit(x, y)
        return x, y

    def _style_hover(self) -> None:
        if self._hover_items is None:
            return
        vline, hline, text = self._hover_items
        pen = self._pen(QColor(self._theme.muted), 1.0, Qt.PenStyle.DotLine)
        vline.setPen(pen)
        hline.setPen(pen)
        bg = QColor(self._theme.background)
        bg.setAlpha(230)
        text.fill = pg.mkBrush(bg)
        text.border = pg.mkPen(self._theme.muted)
        text.setColor(self._theme.ink)
        font = QFont()
        font.setPointSizeF(th.BASE_TICK_FONT_PT * th.scale_factor(self._presentation))
        text.setFont(font)

    # -- data for CSV -------------------------------------------------------------------------
    def chart_data(self) -> list[tuple[str, np.ndarray, np.ndarray]]:
        """(name, x, y) per series, real values, in drawing order."""
        return [(s.name, s.x.copy(), s.y.copy()) for s in self._series.values()]

    def axis_header(self, which: str) -> str:
        """CSV header for an axis: "Arithmetic intensity (FLOP/B)"."""
        label, unit = self._labels["bottom" if which == "x" else "left"]
        return f"{label or which} ({unit or '1'})"

    def csv_columns(self) -> list[tuple[str, Sequence]] | None:
        """Wide columns when every series shares the same x, else ``None`` (use long format)."""
        data = self.chart_data()
        if not data:
            return []
        x0 = data[0][1]
        if any(x.shape != x0.shape or not np.array_equal(x, x0) for _, x, _ in data[1:]):
            return None
        _, y_unit = self._labels["left"]
        columns: list[tuple[str, Sequence]] = [(self.axis_header("x"), x0)]
        for name, _x, y in data:
            columns.append((f"{name} ({y_unit or '1'})", y))
        return columns

    # -- look ---------------------------------------------------------------------------------
    def set_title(self, title: str) -> None:
        if title == self._title and getattr(self, "_shown_title", None) is not None:
            return  # the same title: typesetting it again would only cost
        self._title = title
        # only the title: setting the (unchanged) axis labels again makes every axis
        # regenerate its ticks, grid and text on the next paint
        self._apply_title()

    def set_presentation(self, enabled: bool) -> None:
        """Thick lines and large fonts for a projector."""
        self._presentation = bool(enabled)
        if self._alive():
            self._restyle()

    def presentation(self) -> bool:
        return self._presentation

    def apply_theme(self, theme: th.Theme) -> None:
        self._theme = theme
        if self._alive():
            self._restyle()

    def theme(self) -> th.Theme:
        return self._theme

    def _apply_labels(self) -> None:
        s = th.scale_factor(self._presentation)
        style = {"color": self._theme.ink, "font-size": f"{th.BASE_LABEL_FONT_PT * s:.1f}pt"}
        for side in ("bottom", "left"):
            label, unit = self._labels[side]
            ax = self.axis(side)
            if label or unit:
                ax.setLabel(text=label, units=unit or None, **style)
            else:
                ax.showLabel(False)
        self._apply_title()

    def _apply_title(self) -> None:
        s = th.scale_factor(self._presentation)
        plot = self.getPlotItem()
        if self._title:
            size = th.BASE_LABEL_FONT_PT * 1.15 * s
            shown = self._elided_title(size)
            self._shown_title = (shown, size)
            label = plot.titleLabel
            if label.isVisible():  # only the text or look is new: no layout round of the plot
                label.setText(shown, color=self._theme.ink, size=f"{size:.1f}pt", bold=True)
            else:
                plot.setTitle(shown, color=self._theme.ink, size=f"{size:.1f}pt", bold=True)
            # the whole title on hover over the title (not the plot) when it had to be cut
            tip = self._title if shown != self._title else ""
            if label.toolTip() != tip:
                label.setToolTip(tip)
        else:
            self._shown_title = None
            plot.setTitle(None)

    def _elided_title(self, size_pt: float) -> str:
        """The title cut with "…" to the chart's width: its label sets no minimum width
        (:class:`_TitleLabel`), so a longer text would run past the chart's edges."""
        font = QFont()
        font.setPointSizeF(size_pt)
        font.setBold(True)
        # the axes and margins beside the title's row: at least 90 px, more when the axes are
        # wider (presentation fonts widen the left axis past it)
        plot = self.getPlotItem()
        beside = max(90.0, plot.getAxis("left").width() + plot.getAxis("right").width() + 24.0)
        width = max(self.width() - beside, 60)
        return QFontMetricsF(font).elidedText(self._title, Qt.TextElideMode.ElideRight, width)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt naming
        super().resizeEvent(event)
        self._fit_title()

    def hideEvent(self, event) -> None:  # noqa: N802 - Qt naming
        """Let go of the kept paintings (see keep_painted): a chart behind a tab needs none,
        and the next paint after it is shown makes them again."""
        super().hideEvent(event)
        self._drop_kept_paintings(keep_modes=True)

    def _drop_kept_paintings(self, *, keep_modes: bool) -> None:
        """Let go of every kept pixmap; with ``keep_modes`` the items keep painting into new
        ones, without it they paint directly until the next settle decides again."""
        for item in self._kept_items():
            mode = item.cacheMode()
            item.setCacheMode(QGraphicsItem.CacheMode.NoCache)
            if keep_modes:
                item.setCacheMode(mode)

    def _fit_title(self, *_args) -> None:
        """Cut the title again when the room beside it changed (a resize, or an axis grown by
        presentation fonts or longer tick labels)."""
        shown = getattr(self, "_shown_title", None)
        if shown is not None and self._alive() and self._elided_title(shown[1]) != shown[0]:
            self._apply_title()

    def _restyle(self) -> None:
        t = self._theme
        s = th.scale_factor(self._presentation)
        self.setBackground(t.background)
        # the view fills its exposed area with this opaque colour itself: Qt filling the
        # viewport with the palette's first was a second fill of the whole chart per paint
        opaque = QColor(t.background).alpha() == 255
        viewport = self.viewport()
        viewport.setAutoFillBackground(not opaque)
        viewport.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, opaque)
        plot = self.getPlotItem()
        tick_font = QFont()
        tick_font.setPointSizeF(th.BASE_TICK_FONT_PT * s)
        for side in ("bottom", "left", "top", "right"):
            ax = plot.getAxis(side)
            ax.setPen(pg.mkPen(t.ink, width=1.0 * s))
            ax.setTickPen(pg.mkPen(t.ink, width=1.0))  # also the grid: stays fine
            ax.setTextPen(pg.mkPen(t.ink))
            ax.setTickFont(tick_font)
            ax.setStyle(tickTextOffset=int(4 * s))
        self._show_grid(t.grid_alpha)
        self._set_grid_background(QColor(t.background))
        for series in self._series.values():
            self._style_series(series)
        self._apply_labels()
        self._style_operating_point()
        self._style_lines()
        self._style_hover()
        self._rebuild_legend()

    @contextlib.contextmanager
    def export_style(self, background: QColor) -> Iterator[None]:
        """For an export: ink readable on ``background``, the hover readout hidden."""
        self.settle()  # what the last changes left for the next paint: the export shows it
        saved_theme = self._theme
        target = th.theme_for_background(background)
        hidden = []
        if self._hover_items is not None:
            hidden = [item for item in self._hover_items if item.isVisible()]
            for item in hidden:
                item.setVisible(False)
        if target is not saved_theme:
            self.apply_theme(target)
        self._set_grid_background(background if background.alpha() == 255 else None)
        try:
            yield
        finally:
            if target is not saved_theme:
                self.apply_theme(saved_theme)
            self._set_grid_background(QColor(self._theme.background))
            for item in hidden:
                item.setVisible(True)
