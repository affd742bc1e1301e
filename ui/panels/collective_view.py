"""The drawing of the Collectives panel: every rank's buffer, one step of a collective.

Each rank is a column of ``n`` cells (its buffer, one slot per chunk). A cell is coloured by
the chunk index it holds (the one palette of :mod:`ui.theme`); in a reducing collective a
pale cell with a bar at its foot is a partial sum (the bar's length is how many of the
``n`` ranks it already adds up, also written "Σ3/4" when the cell is big enough) and a
saturated cell is a complete sum. An empty slot is hatched. The transfers of the step are
arrows: a reduce (the receiver adds the chunk in) carries a "+" badge, a copy does not.

Two layouts:

- when every transfer goes to the next rank on the ring (ring schedules, pipelined
  broadcast/reduce), the arrow runs along the row of the chunk it carries, from one column
  to the next; the wrap-around link (last rank to rank 0) runs under the grid;
- otherwise (conceptual one-step schedules) there is one arrow per used link, drawn as an
  arc: above the grid for links to a higher rank, below for links to a lower one. Above
  :data:`MAX_ARROWS` links the arrows are left out (a hairball teaches nothing) and the
  subtitle says how many links there are.

Under the header a time strip shows every step as a segment as long as its alpha-beta
time (the step on screen highlighted), beside this step's time and the time so far.

The scene is laid out in viewport pixels and rebuilt on resize. No text is drawn smaller
than :data:`MIN_FONT_PX` (times the presentation scale): as the rank count grows the cells
shrink and their labels get shorter ("c3 / Σ4/16", then "Σ4/16", then "4"), and when not
even that fits the cells are colour only, the legend says how to read them and hovering a
cell tells what it holds. Slot and rank labels thin out instead of shrinking. The drawing
holds no formula: it shows the :class:`workbench.collectives.Frame`, step times and times so
far it is given (``workbench.analyses.collective``).
"""

from __future__ import annotations

import contextlib
import functools
import math
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import is_not, itemgetter

from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QImage,
    QPaintEngine,
    QPainter,
    QPainterPath,
    QPen,
    QPolygonF,
    QRegion,
    QTransform,
)
from PySide6.QtWidgets import (
    QFrame,
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QSizePolicy,
    QWidget,
)

from ui import theme as th
from workbench import units
from workbench.collectives import Collective, Frame, StepTime, Transfer

#: Above this many links in one step, arrows are not drawn (the subtitle says so).
MAX_ARROWS = 160
#: The item data key marking what an item shows ("arrow", "cells", "title", ...).
ROLE = 0
#: The smallest text of the drawing in pixels (times the presentation scale). A label that
#: would need less is shortened or left out, never drawn smaller.
MIN_FONT_PX = 10.0
#: How much a cell says, most first: "full" (chunk over sum or source, two lines), "short"
#: ("Σ3/16" or "c3"), "tiny" ("3"), "none" (colour only).
CELL_LABEL_MODES = ("full", "short", "tiny", "none")


def _blend(a: QColor, b: QColor, t: float) -> QColor:
    """``t`` of ``a`` over ``1 - t`` of ``b``."""
    return QColor.fromRgbF(
        a.redF() * t + b.redF() * (1 - t),
        a.greenF() * t + b.greenF() * (1 - t),
        a.blueF() * t + b.blueF() * (1 - t),
    )


def _text_on(fill: QColor) -> QColor:
    """Black or white, whichever reads better on ``fill``."""
    luminance = 0.2126 * fill.redF() + 0.7152 * fill.greenF() + 0.0722 * fill.blueF()
    return QColor("#000000") if luminance > 0.45 else QColor("#FFFFFF")


def _text_item(role: str) -> QGraphicsSimpleTextItem:
    """A text item of ``role``; ``shown`` keeps what it was last given (text, font, colour,
    width), so a redraw sets only what differs."""
    item = QGraphicsSimpleTextItem()
    item.setData(ROLE, role)
    item.shown = ("", None, None, 0.0)
    return item


@functools.lru_cache(maxsize=256)
def _font(px: float, bold: bool = False) -> QFont:
    """A font of ``px`` pixels (shared: callers set it, never change it)."""
    font = QFont()
    font.setPixelSize(max(6, round(px)))
    font.setBold(bold)
    return font


def _seconds(value: float) -> str:
    return units.format_quantity(value, "s")


def cell_texts(content, slot: int, n: int, reduces: bool, mode: str) -> tuple[str, ...]:
    """The lines a cell shows in label ``mode`` (see :data:`CELL_LABEL_MODES`)."""
    if content is None or mode == "none":
        return ()
    chunk = min(ci for _, ci in content)
    k = len(content)
    if reduces:
        full = (f"c{chunk}", f"Σ{k}/{n}")
        short, tiny = f"Σ{k}/{n}", f"{k}"
    else:
        sources = sorted({src for src, _ in content})
        full = (f"c{chunk}", f"r{sources[0]}" if len(sources) == 1 else f"{len(sources)} ranks")
        short, tiny = f"c{chunk}", f"{chunk}"
    return {"full": full, "short": (short,), "tiny": (tiny,)}[mode]


def describe_cell(content, rank: int, slot: int, n: int, reduces: bool) -> str:
    """A sentence for a cell's tooltip: what rank ``rank`` holds in ``slot``."""
    where = f"rank {rank}, slot {slot}"
    if content is None:
        return f"{where}: empty"
    chunks = sorted({ci for _, ci in content})
    sources = sorted({src for src, _ in content})
    what = f"chunk {chunks[0]}" if len(chunks) == 1 else f"chunks {', '.join(map(str, chunks))}"
    if len(sources) == 1:
        return f"{where}: {what} of rank {sources[0]}"
    if reduces and len(sources) == n:
        return f"{where}: {what} summed over all {n} ranks"
    listed = ", ".join(map(str, sources[:8])) + (", …" if len(sources) > 8 else "")
    return f"{where}: {what} summed over {len(sources)} of {n} ranks ({listed})"


@dataclass(frozen=True)
class Link:
    """One arrow of the arc layout: ``count`` chunks from ``src`` to ``dst``."""

    src: int
    dst: int
    count: int
    reduce: bool


class GridItem(QGraphicsItem):
    """All cells of all ranks in one item (4096 cells at 64 ranks stay cheap to paint).

    The cells are painted in batches, one ``drawRects`` per colour (empty slots, each chunk's
    complete and partial fill, the partial-sum bars), not one call per cell, into an image
    kept from one paint to the next: a step paints again only the cells it changed (2n of n²
    in a ring step) and their neighbours' edges, and every paint copies the image. A painter
    that scales (an export at another size) or draws vectors (SVG) gets the cells drawn
    straight onto it."""

    def __init__(self, view: CollectiveView, rect: QRectF):
        super().__init__()
        self._view = view
        self._rect = QRectF(rect)
        self._image: QImage | None = None
        self._image_of: tuple | None = None  # what the image shows: layout, look, area
        self._image_rects: list[list[QRectF]] | None = None
        self.setData(ROLE, "cells")
        self.setAcceptHoverEvents(True)

    def set_rect(self, rect: QRectF) -> None:
        """The grid's new extent, for a new frame or layout: painted again if its cells may
        look different. A drawing that changes no cell (a new message size, a new title) does
        not repaint the grid: copying its whole image was most of such a repaint."""
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = QRectF(rect)
            self.update()
        elif not self._image_holds_the_cells():
            self.update()

    def _image_holds_the_cells(self) -> bool:
        """Whether the kept image already shows the cells as the next paint would (the same
        layout, look and area, and no cell changed since it was painted)."""
        v = self._view
        geo, image_of, batches = v._geo, self._image_of, v._batches
        if self._image is None or image_of is None or geo is None or v._frame is None:
            return False
        if batches.pixels is None or batches.pixels or batches.has_regrouping(v._n, v._reduces, geo.cell_mode):
            return False
        return (self._image_rects is v._cell_rects(geo)
                and image_of[:5] == (geo, v._theme.name, v._reduces, v._n, self.boundingRect().toAlignedRect()))

    def cell_at(self, pos: QPointF) -> tuple[int, int] | None:
        """(rank, slot) of the cell under ``pos`` (item coordinates), or None."""
        geo = self._view._geo
        if geo is None:
            return None
        for r, x in enumerate(geo.col_x):
            if x <= pos.x() <= x + geo.cell_w:
                for j, y in enumerate(geo.row_y):
                    if y <= pos.y() <= y + geo.cell_h:
                        return r, j
                return None
        return None

    def hoverMoveEvent(self, event) -> None:  # noqa: N802 - Qt naming
        # one item draws every cell, so its tooltip follows the pointer
        cell = self.cell_at(event.pos())
        v = self._view
        if cell is None or v._frame is None:
            self.setToolTip("")
        else:
            r, j = cell
            self.setToolTip(describe_cell(v._frame.buffers[r][j], r, j, v._n, v._reduces))
        super().hoverMoveEvent(event)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt naming
        return self._rect.adjusted(-4, -4, 4, 4)

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: ARG002
        v = self._view
        geo = v._geo
        if v._frame is None or geo is None:
            return
        rects = v._cell_rects(geo)
        batches = v._batches
        batches.group(rects, v._n, v._reduces, geo.cell_mode, geo)
        t = painter.deviceTransform()
        device, engine = painter.device(), painter.paintEngine()
        if (engine is None or engine.type() != QPaintEngine.Type.Raster  # SVG, PDF: vector cells
                or t.type().value > QTransform.TransformationType.TxTranslate.value
                or t.dx() != round(t.dx()) or t.dy() != round(t.dy())
                or device is None or device.devicePixelRatioF() != 1):
            self._paint_cells(painter, geo, rects, None)
            return
        area = self.boundingRect().toAlignedRect()
        key = (geo, v._theme.name, v._reduces, v._n, area, painter.renderHints())
        if self._image is None or self._image_rects is not rects or self._image_of != key or batches.pixels is None:
            image = QImage(area.size(), QImage.Format.Format_ARGB32_Premultiplied)
            image.fill(Qt.GlobalColor.transparent)
            p = QPainter(image)
            p.setRenderHints(painter.renderHints())
            p.translate(-area.x(), -area.y())
            self._paint_cells(p, geo, rects, None)
            p.end()
            self._image, self._image_of, self._image_rects = image, key, rects
        elif batches.pixels:
            self._repaint_cells(geo, rects, batches.pixels, area, painter.renderHints())
        batches.pixels = set()
        painter.drawImage(area.topLeft(), self._image)

    def _repaint_cells(self, geo: _Geometry, rects, changed, area: QRect, hints) -> None:
        """Paint ``changed`` cells again in the image: each one's pixels (with a margin for
        the antialiased edges and the empty cells' outline) are cleared and painted again
        with every cell that reaches into them, in the usual order, so the image is what a
        full paint would give."""
        margin = 2.0 + max(1.0, geo.scale)
        pieces = [rects[r][j].adjusted(-margin, -margin, margin, margin).toAlignedRect() for r, j in changed]
        cw, ch = geo.cell_w, geo.cell_h
        col_x, row_y = geo.col_x, geo.row_y
        cells = set()
        for piece in pieces:
            cols = range(bisect_left(col_x, piece.left() - margin - cw), bisect_right(col_x, piece.right() + margin))
            rows = range(bisect_left(row_y, piece.top() - margin - ch), bisect_right(row_y, piece.bottom() + margin))
            cells.update((r, j) for r in cols for j in rows)
        region = QRegion()
        for piece in pieces:
            region += piece
        p = QPainter(self._image)
        p.setRenderHints(hints)
        p.translate(-area.x(), -area.y())
        p.setClipRegion(region)
        p.setCompositionMode(QPainter.CompositionMode.CompositionMode_Source)
        p.fillRect(region.boundingRect(), Qt.GlobalColor.transparent)
        p.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceOver)
        self._paint_cells(p, geo, rects, cells)
        p.end()

    def _paint_cells(self, painter: QPainter, geo: _Geometry, rects, cells: set | None) -> None:
        """Paint the cells (all of them, or those in ``cells``): empty slots (fill, hatch,
        outline), then fills, partial-sum bars, labels and this step's received outlines."""
        v = self._view
        theme = v._theme
        n = v._n
        batches = v._batches
        if cells is None:
            empty = list(batches.empty.values())
            fills = {key: list(batch.values()) for key, batch in batches.fills.items() if batch}
            bars = {chunk: list(batch.values()) for chunk, batch in batches.bars.items() if batch}
            texts = {key: list(batch.values()) for key, batch in batches.texts.items() if batch}
            received = v._received
        else:
            empty, fills, bars, texts = [], {}, {}, {}
            labelled = geo.cell_mode != "none"
            for cell in cells:
                fill, bar = batches.placed(cell)
                if fill is None:
                    empty.append(batches.empty[cell])
                    continue
                fills.setdefault(fill, []).append(batches.fills[fill][cell])
                if bar is not None:
                    bars.setdefault(bar, []).append(batches.bars[bar][cell])
                if labelled:
                    texts.setdefault(fill, []).append(batches.texts[fill][cell])
            received = [cell for cell in v._received if cell in cells]
        bg = QColor(theme.background)
        muted = QColor(theme.muted)
        no_pen = Qt.PenStyle.NoPen
        painter.setPen(no_pen)
        if empty:
            painter.setBrush(_blend(muted, bg, 0.08))
            painter.drawRects(empty)
            painter.setBrush(QBrush(_blend(muted, bg, 0.55), Qt.BrushStyle.BDiagPattern))
            painter.drawRects(empty)
            if geo.cell_outline:
                outline = QPen(_blend(muted, bg, 0.5), max(1.0, geo.scale))
                outline.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
                painter.setPen(outline)
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRects(empty)
                painter.setPen(no_pen)
        colors: dict[int, QColor] = {}

        def color_of(chunk: int) -> QColor:
            if chunk not in colors:
                colors[chunk] = th.series_color(chunk, theme)
            return colors[chunk]

        fill_colors: dict[tuple[int, bool], QColor] = {}
        for key, batch in fills.items():
            chunk, complete = key
            fill = fill_colors[key] = color_of(chunk) if complete else _blend(color_of(chunk), bg, 0.28)
            painter.setBrush(fill)
            painter.drawRects(batch)
        for chunk, batch in bars.items():
            painter.setBrush(color_of(chunk))
            painter.drawRects(batch)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        if geo.cell_mode != "none" and texts:
            mode = geo.cell_mode
            font = _font(geo.cell_font_px, bold=True)
            small = _font(geo.cell_font_px * (0.85 if mode == "full" else 1.0), bold=mode == "tiny")
            for key, batch in texts.items():
                painter.setPen(_text_on(fill_colors[key]))
                self._cell_texts(painter, batch, font, small, 0.0 if key[1] else geo.bar_h)
            painter.setPen(no_pen)
        if received and len(v._received) <= 2 * n:  # outlines on every cell would say nothing
            pen = QPen(QColor(theme.ink), geo.received_pen)
            pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            half = geo.received_pen / 2
            painter.drawRects([rects[r][j].adjusted(half, half, -half, -half) for r, j in received])

    @staticmethod
    def _cell_texts(
        painter: QPainter,
        batch: list[tuple[QRectF, tuple[str, ...]]],
        font: QFont,
        small: QFont,
        bar_h: float,
    ) -> None:
        """The labels of cells of one fill: first lines in ``font``, then second lines (or
        single ones) in ``small``, so the font changes twice, not twice per cell."""
        center = int(Qt.AlignmentFlag.AlignCenter)
        over = int(Qt.AlignmentFlag.AlignCenter | Qt.AlignmentFlag.AlignBottom)
        under = int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        foot = -max(1.0, bar_h)
        two = [(rect.adjusted(2, 1, -2, foot), lines) for rect, lines in batch if len(lines) >= 2]
        if two:
            painter.setFont(font)
            for text_rect, lines in two:
                top = QRectF(text_rect)
                top.setBottom(text_rect.center().y() + 1)
                painter.drawText(top, over, lines[0])
        painter.setFont(small)
        for text_rect, lines in two:
            bottom = QRectF(text_rect)
            bottom.setTop(text_rect.center().y() - 1)
            painter.drawText(bottom, under, lines[1])
        for rect, lines in batch:
            if len(lines) == 1:
                painter.drawText(rect.adjusted(2, 1, -2, foot), center, lines[0])


class TimeStripItem(QGraphicsItem):
    """The steps as segments as long as their times, the one on screen highlighted: done
    steps in ink, the current one in the operating-point colour, the rest pale."""

    def __init__(self, rect: QRectF, seconds: Sequence[float], current: int, theme: th.Theme):
        super().__init__()
        self._rect = QRectF(rect)
        self._seconds = list(seconds)
        self._current = current
        self._theme = theme
        self.setData(ROLE, "timeline")

    def set_steps(self, rect: QRectF, seconds: Sequence[float], current: int, theme: th.Theme) -> None:
        """Show other steps, or the same ones with another highlighted (painted again only
        when something changed)."""
        seconds = list(seconds)
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = QRectF(rect)
        elif (seconds, current, theme) == (self._seconds, self._current, self._theme):
            return
        self._seconds, self._current, self._theme = seconds, current, theme
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt naming
        return self._rect.adjusted(-2, -2, 2, 2)

    def segments(self) -> list[QRectF]:
        """One rectangle per step (step 1 first), widths in proportion to the step times."""
        total = math.fsum(self._seconds)
        rect = self._rect
        out, x = [], rect.left()
        for t in self._seconds:
            w = rect.width() * (t / total) if total > 0 else rect.width() / max(1, len(self._seconds))
            out.append(QRectF(x, rect.top(), w, rect.height()))
            x += w
        return out

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: ARG002
        theme = self._theme
        ink, muted, bg = QColor(theme.ink), QColor(theme.muted), QColor(theme.background)
        done, todo = _blend(ink, bg, 0.55), _blend(muted, bg, 0.22)
        now = th.semantic_color("operating_point", theme)
        painter.setPen(Qt.PenStyle.NoPen)
        segments = self.segments()
        gap = 1.0 if segments and min(r.width() for r in segments) >= 4 else 0.0
        for step, seg in enumerate(segments, start=1):
            color = now if step == self._current else done if step < self._current else todo
            painter.fillRect(seg.adjusted(0, 0, -gap, 0), color)
        painter.setPen(QPen(_blend(muted, bg, 0.6), 1))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(self._rect)


class ArrowItem(QGraphicsPathItem):
    """One transfer (ring layout) or one link (arc layout): a shaft, a head, and for a
    reduce a "+" badge in the middle."""

    def __init__(
        self,
        path: QPainterPath,
        *,
        reduce: bool,
        color: QColor,
        background: QColor,
        width: float,
        badge: float,
        src: int,
        dst: int,
        chunks: int = 1,
        tip: str = "",
    ):
        super().__init__()
        self.setBrush(Qt.BrushStyle.NoBrush)
        self.setData(ROLE, "arrow")
        self.setZValue(2)
        self._look: tuple = ()
        self._path = QPainterPath()
        self._tip_text = ""
        self._bounds = QRectF()
        self.restyle(path, reduce=reduce, color=color, background=background, width=width, badge=badge,
                     src=src, dst=dst, chunks=chunks, tip=tip)

    def restyle(
        self,
        path: QPainterPath,
        *,
        reduce: bool,
        color: QColor,
        background: QColor,
        width: float,
        badge: float,
        src: int,
        dst: int,
        chunks: int = 1,
        tip: str = "",
    ) -> None:
        """Another transfer on the same item (a redraw moves the arrows it has). What the
        paint needs (the shortened shaft, the head, the badge) is worked out here, once per
        change, not on every paint."""
        self.reduce = reduce
        self.src, self.dst, self.chunks = src, dst, chunks
        head = max(5.0, width * 3.2)
        badge = badge if reduce else 0.0
        look = (width, head, badge, color.rgba(), background.rgba())
        restyled = look != self._look
        if restyled or path != self._path:
            self.prepareGeometryChange()
            if restyled:
                self._restyle(look, color, background)
            self._place(path)
            if restyled:
                self.update()  # the head and the badge are painted in these colours, not the pen's
        if tip != self._tip_text:
            self._tip_text = tip
            self.setToolTip(tip)

    def _restyle(self, look: tuple, color: QColor, background: QColor) -> None:
        self._look = look
        width, head, badge = look[:3]
        self._width, self._head, self._badge = width, head, badge
        self._color, self._background = QColor(color), QColor(background)
        pen = QPen(self._color, width)
        pen.setCapStyle(Qt.PenCapStyle.FlatCap)
        pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        self._badge_pens = (QPen(self._color, max(1.0, width * 0.8)), QPen(self._color, max(1.2, badge * 0.28)))
        self.setPen(pen)

    def _place(self, path: QPainterPath) -> None:
        self._path = path  # the caller's: made for this arrow, not changed after
        head = self._head
        end = path.pointAtPercent(1.0)
        angle = math.radians(path.angleAtPercent(0.999))
        # shaft stops where the head begins, so a thick line does not poke through the tip
        dx, dy = math.cos(angle), -math.sin(angle)
        shaft = QPainterPath(path)
        if shaft.elementCount() >= 2:
            last = shaft.elementCount() - 1
            e = shaft.elementAt(last)
            shaft.setElementPositionAt(last, e.x - dx * head * 0.8, e.y - dy * head * 0.8)
        self._shaft = shaft
        h, w = head, head * 0.55
        base = QPointF(end.x() - dx * h, end.y() - dy * h)
        normal = QPointF(-dy * w, dx * w)
        self._tip = QPolygonF([QPointF(end), base + normal, base - normal])
        self._mid = path.pointAtPercent(0.5)
        extra = max(head, self._badge) + self._width
        self._bounds = path.boundingRect().adjusted(-extra, -extra, extra, extra)
        self.setPath(path)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt naming
        return self._bounds

    def shape(self) -> QPainterPath:
        path = QPainterPath()
        path.addRect(self._bounds)
        return path

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: ARG002
        painter.setPen(self.pen())
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self._shaft)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self._color)
        painter.drawPolygon(self._tip)
        if self._badge > 0:
            mid, r = self._mid, self._badge
            painter.setPen(self._badge_pens[0])
            painter.setBrush(self._background)
            painter.drawEllipse(mid, r, r)
            arm = r * 0.55
            painter.setPen(self._badge_pens[1])
            painter.drawLine(QPointF(mid.x() - arm, mid.y()), QPointF(mid.x() + arm, mid.y()))
            painter.drawLine(QPointF(mid.x(), mid.y() - arm), QPointF(mid.x(), mid.y() + arm))


class _CellBatches:
    """The grid's cells grouped the way they are painted (one ``drawRects`` per colour),
    kept from one frame to the next: a ring step changes 2n of the n² cells, so a step reads
    and regroups only the cells whose content changed (compared by identity first: a frame
    shares the unchanged contents of the one before)."""

    def __init__(self) -> None:
        self.buffers: Sequence | None = None  # the buffers read last
        #: (chunk, contributions) of each cell, None for an empty slot
        self.cells: list[list[tuple[int, int] | None]] = []
        #: filled slots j not holding chunk j (all-to-all): the legend says colours repeat
        self.misaligned = 0
        self._memo: dict[frozenset, tuple[int, int]] = {}
        self._dirty: set[tuple[int, int]] | None = None  # changed since grouped (None: all)
        self._key: tuple | None = None  # (rects, n, reduces, mode) of the grouping
        self.empty: dict[tuple[int, int], QRectF] = {}
        self.fills: dict[tuple[int, bool], dict[tuple[int, int], QRectF]] = {}  # (chunk, complete)
        self.bars: dict[int, dict[tuple[int, int], QRectF]] = {}  # chunk -> partial-sum bars
        self.texts: dict[tuple[int, bool], dict[tuple[int, int], tuple[QRectF, tuple[str, ...]]]] = {}
        self._placed: dict[tuple[int, int], tuple[tuple[int, bool] | None, int | None]] = {}
        #: cells whose pixels changed since the grid's image was painted (None: all)
        self.pixels: set[tuple[int, int]] | None = None

    def _info(self, content) -> tuple[int, int] | None:
        if content is None:
            return None
        known = self._memo.get(content)
        if known is None:
            if len(self._memo) > 50_000:
                self._memo.clear()
            known = self._memo[content] = (min(map(itemgetter(1), content)), len(content))
        return known

    def read(self, buffers: Sequence, n: int) -> None:
        """Take a frame's buffers, noting which cells differ from the last ones read."""
        old = self.buffers
        self.buffers = buffers
        if old is None or len(old) != n or len(self.cells) != n:
            self.cells = [[self._info(c) for c in row] for row in buffers]
            self.misaligned = sum(1 for row in self.cells for j, c in enumerate(row) if c is not None and c[0] != j)
            self._dirty = self.pixels = None
            return
        dirty, pixels = self._dirty, self.pixels
        slots = range(n)
        for r, (before_row, row) in enumerate(zip(old, buffers, strict=True)):
            if before_row is row:
                continue
            cells = self.cells[r]
            # the slots whose content is another object (most are the same: a step shares them)
            for j in compress(slots, map(is_not, before_row, row)):
                a, b = before_row[j], row[j]
                if a == b:
                    continue
                was = cells[j]
                now = cells[j] = self._info(b)
                self.misaligned += (now is not None and now[0] != j) - (was is not None and was[0] != j)
                if dirty is not None:
                    dirty.add((r, j))
                if pixels is not None:
                    pixels.add((r, j))

    def touch(self, cells) -> None:
        """``cells`` look different though they hold the same (a received outline)."""
        if self.pixels is not None:
            self.pixels.update(cells)

    def placed(self, cell: tuple[int, int]) -> tuple[tuple[int, bool] | None, int | None]:
        """(fill, partial-sum bar chunk) the cell is painted with."""
        return self._placed[cell]

    def has_regrouping(self, n: int, reduces: bool, mode: str) -> bool:
        """Whether :meth:`group` would regroup cells (changed ones, or all for another collective
        or label mode) for these."""
        return self._dirty is None or bool(self._dirty) or self._key is None or self._key[1:] != (n, reduces, mode)

    def group(self, rects: list[list[QRectF]], n: int, reduces: bool, mode: str, geo: _Geometry) -> None:
        """Bring the batches up to date for cells at ``rects`` (regrouped whole for a new
        layout, collective or label mode)."""
        key = (rects, n, reduces, mode)
        same = self._key is not None and self._key[0] is rects and self._key[1:] == key[1:]
        if self._dirty is None or not same:
            self._key = key
            self.empty, self.fills, self.bars, self.texts, self._placed = {}, {}, {}, {}, {}
            cells = [(r, j) for r in range(n) for j in range(n)]
        else:
            cells = self._dirty
            for cell in cells:
                self._unplace(cell)
        for r, j in cells:
            self._place(r, j, rects[r][j], n, reduces, mode, geo)
        self._dirty = set()

    def _place(self, r: int, j: int, rect: QRectF, n: int, reduces: bool, mode: str, geo: _Geometry) -> None:
        info = self.cells[r][j]
        if info is None:
            self.empty[(r, j)] = rect
            self._placed[(r, j)] = (None, None)
            return
        chunk, k = info
        complete = not reduces or k >= n
        fill = (chunk, complete)
        self.fills.setdefault(fill, {})[(r, j)] = rect
        bar = None
        if not complete:
            bar = chunk
            self.bars.setdefault(chunk, {})[(r, j)] = QRectF(
                rect.x(), rect.y() + geo.cell_h - geo.bar_h, geo.cell_w * k / n, geo.bar_h)
        if mode != "none":
            lines = cell_texts(self.buffers[r][j], j, n, reduces, mode)
            self.texts.setdefault(fill, {})[(r, j)] = (rect, lines)
        self._placed[(r, j)] = (fill, bar)

    def _unplace(self, cell: tuple[int, int]) -> None:
        fill, bar = self._placed.pop(cell)
        if fill is None:
            del self.empty[cell]
            return
        del self.fills[fill][cell]
        self.texts.get(fill, {}).pop(cell, None)
        if bar is not None:
            del self.bars[bar][cell]


@dataclass
class _Geometry:
    scale: float
    col_x: list[float]
    row_y: list[float]
    cell_w: float
    cell_h: float
    cell_font_px: float
    cell_mode: str  # one of CELL_LABEL_MODES
    cell_outline: bool
    received_pen: float
    bar_h: float


@dataclass
class _Layout:
    geo: _Geometry
    x0: float
    grid_top: float
    grid_w: float
    grid_h: float
    gap: float
    gap_ratio: float
    side_ratio: float
    rank_label_h: float
    arc_h: float
    wrap_h: float
    draw_arcs: bool


class CollectiveView(QGraphicsView):
    """Draws one :class:`~workbench.collectives.Frame` of a collective."""

    def __init__(self, parent: QWidget | None = None):
        self._scene = QGraphicsScene()
        # no spatial index: a step redraws most of the few hundred items, which Qt's default
        # BSP tree would re-file before a paint that draws them all anyway
        self._scene.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)
        super().__init__(self._scene, parent)
        self._scene.setParent(self)
        self.setObjectName("collectiveView")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMinimumSize(420, 300)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self._theme = th.current_theme()
        self._presentation = th.presentation_enabled()
        self._frame: Frame | None = None
        self._collective = Collective.ALL_REDUCE
        self._n = 2
        self._root: int | None = None
        self._context = ""
        self._chunk_text = ""
        self._reduces = False
        self._received: list[tuple[int, int]] = []
        self._links: list[Link] = []
        self._neighbour = True
        self._geo: _Geometry | None = None
        self._comparison = ""
        self._times: list[StepTime] = []
        self._elapsed: list[float] = []  # seconds from the start to the end of each frame
        self._legend_texts: list[str] = []
        self._batches = _CellBatches()
        #: the cells' rectangles for the last geometry
        self._rects_of: tuple[tuple, list[list[QRectF]]] | None = None
        #: the scene's items by kind, in drawing order: a redraw takes them back (new text,
        #: place, path) instead of making them again; the ones it does not take leave the scene
        self._items: dict[str, list[QGraphicsItem]] = {}
        self._free: dict[str, list[QGraphicsItem]] = {}
        self._order = 0
        th.register(self)

    # -- what to show ----------------------------------------------------------------------
    def show_frame(
        self,
        frame: Frame,
        *,
        collective: Collective,
        n: int,
        root: int | None = None,
        context: str = "",
        chunk_text: str = "",
        times: Sequence[StepTime] = (),
        elapsed: Sequence[float] = (),
    ) -> None:
        """Draw ``frame`` (a step of ``collective`` on ``n`` ranks). ``root`` marks the root
        column (None: no root); ``context`` is the small line above the title; ``chunk_text``
        the size of one chunk, for the subtitle; ``times`` the model time of every frame of
        the schedule (``times[k]`` for frame k, as ``workbench.collectives.step_times`` gives
        them) and ``elapsed`` the seconds from the start to the end of each (the last is the
        whole collective's), for the timing line and the time strip (none: neither is drawn)."""
        if len(elapsed) != len(times):
            raise ValueError(f"elapsed: one per step time ({len(times)}), got {len(elapsed)}")
        self._frame = frame
        self._times = list(times)
        self._elapsed = list(elapsed)
        self._collective = collective
        self._n = n
        self._root = root
        self._context = context
        self._chunk_text = chunk_text
        self._reduces = collective.reduces
        transfers: tuple[Transfer, ...] = frame.transfers
        received = sorted({(t.dst, t.target_chunk) for t in transfers})
        self._batches.read(frame.buffers, n)
        if received != self._received:
            self._batches.touch({*self._received, *received})
        self._received = received
        self._neighbour = all(
            t.dst == (t.src + 1) % n and t.target_chunk == t.chunk for t in transfers
        )
        if self._neighbour:
            self._links = []
        else:
            counts = Counter((t.src, t.dst) for t in transfers)
            reduces = {(t.src, t.dst): t.reduce for t in transfers}
            self._links = [Link(s, d, k, reduces[(s, d)]) for (s, d), k in sorted(counts.items())]
        self._rebuild()

    def frame(self) -> Frame | None:
        """The frame on screen."""
        return self._frame

    def _cell_rects(self, geo: _Geometry) -> list[list[QRectF]]:
        """``rects[rank][slot]``: every cell's rectangle, made once per layout."""
        key = (tuple(geo.col_x), tuple(geo.row_y), geo.cell_w, geo.cell_h)
        if self._rects_of is None or self._rects_of[0] != key:
            cw, ch = geo.cell_w, geo.cell_h
            self._rects_of = (key, [[QRectF(x, y, cw, ch) for y in geo.row_y] for x in geo.col_x])
        return self._rects_of[1]

    def displayed_buffers(self):
        """The buffers the cells show (``buffers[rank][slot]``)."""
        return None if self._frame is None else self._frame.buffers

    def arrow_items(self) -> list[ArrowItem]:
        """The arrows drawn for the current step."""
        return [
            item
            for item in self._scene.items()
            if isinstance(item, ArrowItem) and item.data(ROLE) == "arrow"
        ]

    def arrows_omitted(self) -> bool:
        """True when the step has too many links to draw arrows for."""
        return not self._neighbour and len(self._links) > MAX_ARROWS

    def cell_label_mode(self) -> str:
        """How much the cells say at the current size (one of :data:`CELL_LABEL_MODES`)."""
        return self._geo.cell_mode if self._geo is not None else "none"

    def cell_font_px(self) -> float:
        """Pixel size of the cell labels (0 when the cells are colour only)."""
        geo = self._geo
        return 0.0 if geo is None or geo.cell_mode == "none" else float(round(geo.cell_font_px))

    def min_font_px(self) -> float:
        """The smallest text this drawing allows itself, in pixels."""
        return MIN_FONT_PX * th.scale_factor(self._presentation)

    def text_items(self, role: str | None = None) -> list[QGraphicsSimpleTextItem]:
        """The text items of the scene (of one ``role``: "rank", "slot", "legend", "timing" ...)."""
        return [
            item
            for item in self._scene.items()
            if isinstance(item, QGraphicsSimpleTextItem) and (role is None or item.data(ROLE) == role)
        ]

    def legend_texts(self) -> list[str]:
        """The legend's entries as drawn (empty when there is no room for a legend)."""
        return list(self._legend_texts)

    def cell_rect(self, rank: int, slot: int) -> QRectF:
        """Where the cell of ``rank``'s ``slot`` is drawn (scene coordinates)."""
        geo = self._geo
        if geo is None:
            return QRectF()
        return QRectF(geo.col_x[rank], geo.row_y[slot], geo.cell_w, geo.cell_h)

    def grid_item(self) -> GridItem | None:
        return next((i for i in self._scene.items() if isinstance(i, GridItem)), None)

    def time_strip(self) -> TimeStripItem | None:
        return next((i for i in self._scene.items() if isinstance(i, TimeStripItem)), None)

    def set_comparison_note(self, text: str) -> None:
        self._comparison = text
        self._rebuild()

    # -- theme -----------------------------------------------------------------------------
    def apply_theme(self, theme: th.Theme) -> None:
        self._theme = theme
        self._rebuild()

    def presentation(self) -> bool:
        """Whether the drawing uses presentation sizes."""
        return self._presentation

    def set_presentation(self, enabled: bool) -> None:
        self._presentation = bool(enabled)
        self._rebuild()

    @contextlib.contextmanager
    def export_style(self, background) -> Iterator[None]:
        """For an export: the theme whose ink reads on ``background`` (white: light)."""
        saved = self._theme
        target = th.theme_for_background(QColor(background))
        if target is not saved:
            self.apply_theme(target)
        try:
            yield
        finally:
            if target is not saved:
                self.apply_theme(saved)

    # -- Qt ---------------------------------------------------------------------------------
    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt naming
        super().resizeEvent(event)
        self._rebuild()

    def keyPressEvent(self, event) -> None:  # noqa: N802 - Qt naming
        # stepping keys belong to the panel (QAbstractScrollArea would scroll with them)
        if event.key() in (
            Qt.Key.Key_Left,
            Qt.Key.Key_Right,
            Qt.Key.Key_Home,
            Qt.Key.Key_End,
            Qt.Key.Key_Space,
            Qt.Key.Key_PageUp,
            Qt.Key.Key_PageDown,
        ):
            event.ignore()
            return
        super().keyPressEvent(event)

    def wheelEvent(self, event) -> None:  # noqa: N802 - Qt naming
        event.ignore()  # nothing to scroll: the drawing always fits

    # -- drawing ----------------------------------------------------------------------------
    def _take(self, kind: str, make) -> QGraphicsItem:
        """An item of ``kind`` for this drawing: the next one the last drawing had (to be
        given new values), else a new one from ``make()``. Stacked in drawing order, as a
        freshly built scene would be (arrows above the rest)."""
        free = self._free.get(kind)
        if free:
            item = free.pop()
        else:
            item = make()
            self._scene.addItem(item)
        self._items.setdefault(kind, []).append(item)
        self._order += 1
        item.setZValue((2.0 if isinstance(item, ArrowItem) else 0.0) + self._order * 1e-4)
        return item

    def _text(
        self,
        text: str,
        font: QFont,
        color: QColor,
        x: float,
        y: float,
        role: str,
        align: str = "left",
    ) -> QGraphicsSimpleTextItem:
        item = self._take(f"text:{role}", lambda: _text_item(role))
        text0, font0, rgba0, width = item.shown
        rgba = color.rgba()
        if text != text0 or font is not font0:
            if text != text0:
                item.setText(text)
            if font is not font0:
                item.setFont(font)  # fonts are shared (_font): the same one is the same object
            width = item.boundingRect().width()
        if rgba != rgba0:
            item.setBrush(color)
        item.shown = (text, font, rgba, width)
        if align == "center":
            x -= width / 2
        elif align == "right":
            x -= width
        item.setPos(x, y)
        return item

    def _rect(self, kind: str, rect: QRectF, pen: QPen, brush: QBrush, role: str | None = None) -> QGraphicsRectItem:
        item = self._take(kind, QGraphicsRectItem)
        if item.rect() != rect:
            item.setRect(rect)
        if item.pen() != pen:
            item.setPen(pen)
        if item.brush() != brush:
            item.setBrush(brush)
        if role is not None and item.data(ROLE) != role:
            item.setData(ROLE, role)
        return item

    def _arrow(self, kind: str, path: QPainterPath, **style) -> ArrowItem:
        item = self._take(kind, lambda: ArrowItem(path, **style))
        item.restyle(path, **style)
        return item

    def _rebuild(self) -> None:
        """Draw the frame on screen: the last drawing's items take their new places and
        texts (a step moves the arrows, renames the title, repaints the cells); the ones left
        over leave the scene."""
        self._free = {kind: items[::-1] for kind, items in self._items.items()}
        self._items = {}
        self._order = 0
        try:
            self._draw()
        finally:
            for items in self._free.values():
                for item in items:
                    self._scene.removeItem(item)
            self._free = {}

    def _draw(self) -> None:
        scene = self._scene
        self._geo = None
        self._legend_texts = []
        theme = self._theme
        bg = QColor(theme.background)
        if scene.backgroundBrush() != QBrush(bg):
            scene.setBackgroundBrush(bg)  # repaints the whole view: only on a new theme
        vw, vh = max(self.viewport().width(), 320), max(self.viewport().height(), 240)
        if scene.sceneRect() != QRectF(0, 0, vw, vh):
            scene.setSceneRect(0, 0, vw, vh)
        frame = self._frame
        if frame is None:
            return
        s = th.scale_factor(self._presentation)
        ink, muted = QColor(theme.ink), QColor(theme.muted)
        n = self._n
        margin = 14 * s
        # -- header: context, title, subtitle, timing ---------------------------------------
        info_font = _font(14 * s)
        title_font = _font(22 * s, bold=True)
        label_font = _font(13.5 * s)
        y = margin * 0.6
        if self._context:
            y += (
                self._text(self._context, info_font, muted, margin, y, "context")
                .boundingRect()
                .height()
            )
        title = self._text(frame.title, title_font, ink, margin, y, "title")
        y += title.boundingRect().height() + 2 * s
        y += (
            self._text(self._subtitle(frame), info_font, ink, margin, y, "subtitle")
            .boundingRect()
            .height()
        )
        if self._comparison:
            y += (
                self._text(self._comparison, info_font, muted, margin, y, "comparison")
                .boundingRect()
                .height()
            )
        if len(self._times) > 1:
            y += self._timing(frame, y, margin, vw - 2 * margin, info_font, s)
        top = y + 10 * s

        # -- the grid, then the legend under it (wrapped to the width: its height is known
        # only once the cells' labels are, which depend on the room the legend leaves) ------
        line_h = QFontMetricsF(label_font).height() + 4 * s
        show_legend = vh > 300
        lines = 1
        for _ in range(3):
            legend_h = lines * line_h + 6 * s if show_legend else 0.0
            lay = self._layout(top, vh - margin * 0.6 - legend_h, vw, margin, label_font, s)
            rows = self._legend_rows(lay.geo.cell_mode, label_font, vw - 2 * margin, s)
            if not show_legend or len(rows) <= lines:
                break
            lines = len(rows)
        geo = lay.geo
        self._geo = geo
        col_x, row_y = geo.col_x, geo.row_y
        cell_w, cell_h = geo.cell_w, geo.cell_h
        grid_top, grid_h, grid_w, x0 = lay.grid_top, lay.grid_h, lay.grid_w, lay.x0
        gap, rank_label_h, label_metrics = lay.gap, lay.rank_label_h, QFontMetricsF(label_font)

        # root column frame
        if self._root is not None:
            pad = min(6 * s, gap * 0.3)
            rect = QRectF(
                col_x[self._root] - pad,
                grid_top - rank_label_h,
                cell_w + 2 * pad,
                grid_h + rank_label_h + pad,
            )
            root_pen = QPen(th.semantic_color("operating_point", theme), max(1.5, 2 * s))
            root_pen.setStyle(Qt.PenStyle.DashLine)
            self._rect("root", rect, root_pen, QBrush(Qt.BrushStyle.NoBrush), "root")

        # rank labels (thinned when they would collide)
        col_pitch = cell_w + gap
        long_labels = all(
            label_metrics.horizontalAdvance(f"rank {r}") + 6 <= col_pitch for r in range(n)
        )
        widest = label_metrics.horizontalAdvance(str(n - 1)) + 6 * s
        every = 1 if long_labels else max(1, math.ceil(widest / col_pitch))
        for r in range(n):
            is_root = r == self._root
            if r % every and not is_root and r != n - 1:
                continue
            if (
                not is_root
                and every > 1
                and r == n - 1
                and (n - 1) % every
                and (n - 1) % every <= every / 2
            ):
                continue
            text = f"rank {r}" if long_labels else str(r)
            if (
                is_root
                and long_labels
                and label_metrics.horizontalAdvance(f"root {r}") <= col_pitch
            ):
                text = f"root {r}"
            color = th.semantic_color("operating_point", theme) if is_root else ink
            font = _font(13.5 * s, bold=is_root)
            self._text(
                text, font, color, col_x[r] + cell_w / 2, grid_top - rank_label_h, "rank", "center"
            )
        # slot labels: every one, or every 2nd, 4th ... when the rows are lower than the text
        pitch = row_y[1] - row_y[0] if n > 1 else cell_h
        slot_every = next(
            (k for k in (1, 2, 4, 8, 16) if pitch * k >= label_metrics.height() * 0.95), 32
        )
        for j in range(0, n, slot_every):
            yy = row_y[j] + cell_h / 2 - label_metrics.height() / 2
            self._text(
                f"slot {j}",
                label_font,
                muted,
                x0 - 8 * s - (lay.side_ratio * cell_w),
                yy,
                "slot",
                "right",
            )

        grid_rect = QRectF(x0, grid_top, grid_w, grid_h)
        self._take("grid", lambda: GridItem(self, grid_rect)).set_rect(grid_rect)

        # -- arrows ---------------------------------------------------------------------------
        neighbour = self._neighbour
        arc_h, wrap_h, side_ratio, gap_ratio = lay.arc_h, lay.wrap_h, lay.side_ratio, lay.gap_ratio
        arrow_color = QColor(ink)
        width = max(1.2, min(3.2 * s, cell_h * 0.09, gap * 0.08 if neighbour else 99))
        badge = (
            max(4.0, min(9 * s, cell_h * 0.24, gap * 0.2 if neighbour else 99)) if n <= 32 else 0.0
        )
        if neighbour:
            lane = grid_top + grid_h + wrap_h * 0.6
            for t in frame.transfers:
                yy = row_y[t.chunk] + cell_h / 2
                path = QPainterPath()
                if t.dst == t.src + 1:
                    path.moveTo(col_x[t.src] + cell_w + 2, yy)
                    path.lineTo(col_x[t.dst] - 2, yy)
                else:  # the ring's wrap-around link, under the grid
                    out_x = col_x[t.src] + cell_w + gap * side_ratio / gap_ratio * 0.8
                    in_x = col_x[t.dst] - cell_w * side_ratio * 0.8
                    path.moveTo(col_x[t.src] + cell_w + 2, yy)
                    path.lineTo(out_x, yy)
                    path.lineTo(out_x, lane)
                    path.lineTo(in_x, lane)
                    path.lineTo(in_x, yy)
                    path.lineTo(col_x[t.dst] - 2, yy)
                kind = "adds chunk" if t.reduce else "copies chunk"
                self._arrow(
                    "arrow",
                    path,
                    reduce=t.reduce,
                    color=arrow_color,
                    background=bg,
                    width=width,
                    badge=badge,
                    src=t.src,
                    dst=t.dst,
                    tip=f"rank {t.src} → rank {t.dst}: {kind} {t.chunk}",
                )
        elif lay.draw_arcs:
            alpha = 235 if len(self._links) <= 24 else 150
            arrow_color.setAlpha(alpha)
            badge = badge if len(self._links) <= 64 else 0.0
            for link in self._links:
                xs = (
                    col_x[link.src]
                    + cell_w / 2
                    + (cell_w * 0.12 if link.dst > link.src else -cell_w * 0.12)
                )
                xd = (
                    col_x[link.dst]
                    + cell_w / 2
                    + (-cell_w * 0.12 if link.dst > link.src else cell_w * 0.12)
                )
                span = abs(link.dst - link.src) / max(1, n - 1)
                h = arc_h * (0.35 + 0.6 * span)
                if link.dst > link.src:
                    y_end = grid_top - rank_label_h - 2
                    ctrl = y_end - h * 1.33
                else:
                    y_end = grid_top + grid_h + 3
                    ctrl = y_end + h * 1.33
                path = QPainterPath(QPointF(xs, y_end))
                path.cubicTo(QPointF(xs, ctrl), QPointF(xd, ctrl), QPointF(xd, y_end))
                kind = "adds" if link.reduce else "copies"
                self._arrow(
                    "arrow",
                    path,
                    reduce=link.reduce,
                    color=arrow_color,
                    background=bg,
                    width=width * 0.85,
                    badge=badge,
                    src=link.src,
                    dst=link.dst,
                    chunks=link.count,
                    tip=f"rank {link.src} → rank {link.dst}: {kind} {link.count} chunk(s)",
                )

        if show_legend:
            y0 = vh - margin * 0.6 - len(rows) * line_h
            for i, row in enumerate(rows):
                self._legend_row(row, y0 + i * line_h, margin, label_font, s)

    def _layout(
        self, top: float, bottom: float, vw: float, margin: float, label_font: QFont, s: float
    ) -> _Layout:
        """Where the columns and rows go between ``top`` and ``bottom``, and how much the
        cells can say at that size."""
        n = self._n
        frame = self._frame
        label_metrics = QFontMetricsF(label_font)
        slot_w = label_metrics.horizontalAdvance(f"slot {n - 1}") + 8 * s
        avail_w = vw - 2 * margin - slot_w
        neighbour = self._neighbour
        draw_arcs = not neighbour and 0 < len(self._links) <= MAX_ARROWS
        # the gap holds the arrows of a ring step; past 8 ranks the cells need the width more
        gap_ratio = (0.62 if n <= 8 else 0.45) if neighbour else 0.28
        side_ratio = 0.45 if neighbour else 0.05
        cell_w = avail_w / (n + gap_ratio * (n - 1) + 2 * side_ratio)
        cell_w = min(cell_w, 170 * s)
        gap = cell_w * gap_ratio
        grid_w = n * cell_w + (n - 1) * gap
        x0 = margin + slot_w + (avail_w - grid_w) / 2

        rank_label_h = label_metrics.height() + 6 * s
        vh = self._scene.sceneRect().height()
        wrap_h = max(10.0, 0.9 * cell_w * 0.5) if neighbour and frame.transfers else 0.0
        wrap_h = min(wrap_h, 40 * s)
        arc_h = above = below = 0.0
        if draw_arcs:
            # arcs above (to a higher rank) and below (to a lower one), where there are some,
            # but never at the cost of rows too low for a label
            sides = any(k.dst > k.src for k in self._links) + any(k.dst < k.src for k in self._links)
            readable_rows = n * (MIN_FONT_PX * s + 6)
            spare = bottom - top - rank_label_h - wrap_h - readable_rows
            arc_h = max(24 * s, min(0.17 * vh, 110 * s, spare / max(1, sides)))
            above = arc_h if any(k.dst > k.src for k in self._links) else 0.0
            below = arc_h if any(k.dst < k.src for k in self._links) else 0.0
        grid_top = top + above + rank_label_h
        avail_h = bottom - grid_top - below - wrap_h
        pitch = max(2.0, avail_h / n)
        cell_h = min(pitch * 0.86, 92 * s, max(cell_w * 0.62, 4.0))
        row_gap = (
            max(1.0, min(pitch - cell_h, cell_h * 0.18)) if n <= 24 else max(0.6, pitch - cell_h)
        )
        pitch = cell_h + row_gap
        grid_h = n * pitch - row_gap
        # spare height goes half above, half below: the drawing sits in the middle
        grid_top += max(0.0, avail_h - grid_h) / 2
        bar_h = max(2.0, cell_h * 0.2)
        mode, font_px = self._cell_labels(cell_w, cell_h, bar_h, s)
        geo = _Geometry(
            scale=s,
            col_x=[x0 + r * (cell_w + gap) for r in range(n)],
            row_y=[grid_top + j * pitch for j in range(n)],
            cell_w=cell_w,
            cell_h=cell_h,
            cell_font_px=font_px,
            cell_mode=mode,
            cell_outline=cell_h >= 10,
            received_pen=max(1.0, min(3.0 * s, cell_h * 0.08)),
            bar_h=bar_h,
        )
        return _Layout(geo, x0, grid_top, grid_w, grid_h, gap, gap_ratio, side_ratio,
                       rank_label_h, arc_h, wrap_h, draw_arcs)

    def _cell_labels(self, cell_w: float, cell_h: float, bar_h: float, s: float) -> tuple[str, float]:
        """The most detailed label mode whose widest text fits a cell at :data:`MIN_FONT_PX`
        or more, with its font size; ("none", 0) when not even a number fits.

        Heights count the glyphs, not the font's line box: digits and "Σ" stand about 0.8 em
        tall, two centred lines (the second at 0.85 of the size) about 2 em."""
        n = self._n
        min_px, max_px = MIN_FONT_PX * s, 22 * s
        room_w = cell_w - 4
        room_h = cell_h - 1 - (bar_h if self._reduces else 0.0)
        if self._reduces:
            widest = {"full": (f"c{n - 1}", f"Σ{n}/{n}"), "short": (f"Σ{n}/{n}",), "tiny": (f"{n}",)}
        else:
            widest = {"full": (f"c{n - 1}", f"r{n - 1}"), "short": (f"c{n - 1}",), "tiny": (f"{n - 1}",)}
        ref = 100.0
        bold = QFontMetricsF(_font(ref, bold=True))
        plain = QFontMetricsF(_font(ref))
        for mode in ("full", "short", "tiny"):
            lines = widest[mode]
            if mode == "full":
                px = min(max_px, room_h / 2.0, ref * room_w / bold.horizontalAdvance(lines[0]),
                         ref * room_w / (0.85 * plain.horizontalAdvance(lines[1])))
                smallest = 0.85 * math.floor(px)  # the second line must itself stay readable
            else:
                metrics = bold if mode == "tiny" else plain
                # one line of a cell never outshouts the rank labels over it
                px = min(16 * s, room_h / 0.85, ref * room_w / metrics.horizontalAdvance(lines[0]))
                smallest = math.floor(px)
            if smallest >= min_px:
                return mode, float(math.floor(px))
        return "none", 0.0

    def _timing(self, frame: Frame, y: float, x: float, width: float, font: QFont, s: float) -> float:
        """This step's time and the time so far, over a strip of every step; the height used."""
        times = self._times
        step = min(frame.step, len(times) - 1)
        total = self._elapsed[-1]
        if step == 0:
            count = len(times) - 1
            text = (
                f"The whole {self._collective.label.lower()} takes {_seconds(total)} in {count} "
                f"step{'s' if count != 1 else ''} (alpha-beta model); step 0 is the start"
            )
        else:
            t = times[step]
            if t.latency_s > 0 and t.transfer_s > 0:
                detail = f" = {_seconds(t.latency_s)} latency + {_seconds(t.transfer_s)} transfer"
            elif t.latency_s > 0:
                detail = " (latency only: the pipeline is filling)"
            else:
                detail = " (transfer only: the pipeline streams)"
            elapsed = self._elapsed[step]
            text = f"This step {_seconds(t.seconds)}{detail} · {_seconds(elapsed)} of {_seconds(total)} so far"
        item = self._text(text, font, QColor(self._theme.ink), x, y, "timing")
        used = item.boundingRect().height() + 3 * s
        strip_h = max(6.0, 8 * s)
        rect, seconds = QRectF(x, y + used, width, strip_h), [t.seconds for t in times[1:]]
        strip = self._take("timeline", lambda: TimeStripItem(rect, seconds, step, self._theme))
        strip.set_steps(rect, seconds, step, self._theme)
        return used + strip_h + 2 * s

    def _subtitle(self, frame: Frame) -> str:
        from workbench import units

        if frame.step == 0:
            return "Before the first step: " + (
                "every rank holds its own data"
                if self._reduces or self._collective is Collective.ALL_TO_ALL
                else "only the ranks with data have filled slots"
            )
        per_link = units.format_quantity(frame.bytes_per_link, "B", binary=True)
        links = len(frame.link_bytes)
        text = f"{per_link} on the busiest link this step · {links} link{'s' if links != 1 else ''} in use"
        if self._chunk_text:
            text += f" · one chunk = {self._chunk_text}"
        if self.arrows_omitted():
            text += " · too many links to draw arrows"
        return text

    def _legend_entries(self, mode: str, short: bool) -> list[tuple[str, str]]:
        n = self._n
        entries = [("empty", "empty slot")]
        if self._reduces:
            entries += [
                ("partial", "partial sum" if short else "partial sum (bar: ranks added so far)"),
                ("full", "complete sum"),
                ("reduce", "adds into receiver"),
                ("copy", "copies"),
            ]
        else:
            entries += [("full", "colour = chunk index"), ("copy", "copies")]
        entries.append(("received", "received" if short else "received this step"))
        if mode == "tiny":
            entries.append(("note", f"number: ranks added, of {n}" if self._reduces else "number: chunk index"))
        if mode in ("tiny", "none") and n > len(self._theme.series):
            entries.append(
                ("note", "colour: chunk j, in slot j" if not self._batches.misaligned
                 else f"colours repeat every {len(self._theme.series)} chunks")
            )
        return entries

    def _entry_width(self, kind: str, text: str, metrics: QFontMetricsF, s: float) -> float:
        box = metrics.height() * 0.9
        swatch = 0.0 if kind == "note" else box * 1.5 + 6 * s + (box if kind in ("reduce", "copy") else 0.0)
        return swatch + metrics.horizontalAdvance(text) + 18 * s

    def _legend_rows(self, mode: str, font: QFont, room: float, s: float) -> list[list[tuple[str, str]]]:
        """The legend's entries in lines that fit ``room``: on one line if the long words fit,
        else the short ones, wrapped onto as many lines as they need."""
        metrics = QFontMetricsF(font)
        for short in (False, True):
            entries = self._legend_entries(mode, short)
            widths = [self._entry_width(k, t, metrics, s) for k, t in entries]
            if sum(widths) <= room or short:
                break
        rows: list[list[tuple[str, str]]] = [[]]
        used = 0.0
        for entry, w in zip(entries, widths, strict=True):
            if rows[-1] and used + w > room:
                rows.append([])
                used = 0.0
            rows[-1].append(entry)
            used += w
        return rows

    def _legend_row(self, entries: list[tuple[str, str]], y: float, x: float, font: QFont, s: float) -> None:
        theme = self._theme
        ink, muted, bg = QColor(theme.ink), QColor(theme.muted), QColor(theme.background)
        metrics = QFontMetricsF(font)
        box = metrics.height() * 0.9
        color = th.series_color(0, theme)

        def swatch(kind: str) -> None:
            nonlocal x
            if kind == "note":
                return
            rect = QRectF(x, y + (metrics.height() - box) / 2, box * 1.5, box)
            no_pen = QPen(Qt.PenStyle.NoPen)
            if kind == "empty":
                self._rect("legend", rect, QPen(_blend(muted, bg, 0.5), 1), QBrush(_blend(muted, bg, 0.08)))
                self._rect("legend", rect, no_pen, QBrush(_blend(muted, bg, 0.55), Qt.BrushStyle.BDiagPattern))
            elif kind == "partial":
                self._rect("legend", rect, no_pen, QBrush(_blend(color, bg, 0.28)))
                bar = QRectF(
                    rect.x(),
                    rect.bottom() - rect.height() * 0.25,
                    rect.width() * 0.4,
                    rect.height() * 0.25,
                )
                self._rect("legend", bar, no_pen, QBrush(color))
            elif kind == "full":
                self._rect("legend", rect, no_pen, QBrush(color))
            elif kind == "received":
                self._rect("legend", rect.adjusted(1, 1, -1, -1), QPen(ink, 2), QBrush(Qt.BrushStyle.NoBrush))
            elif kind in ("reduce", "copy"):
                path = QPainterPath(QPointF(rect.left(), rect.center().y()))
                path.lineTo(rect.right() + box, rect.center().y())
                item = self._arrow(
                    "legend-arrow",
                    path,
                    reduce=kind == "reduce",
                    color=ink,
                    background=bg,
                    width=max(1.5, 2 * s),
                    badge=box * 0.38,
                    src=-1,
                    dst=-1,
                )
                item.setData(ROLE, "legend")
                x += box
            x += box * 1.5 + 6 * s

        for kind, text in entries:
            swatch(kind)
            item = self._text(text, font, muted, x, y, "legend")
            self._legend_texts.append(text)
            x += item.boundingRect().width() + 18 * s
