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

The scene is laid out in viewport pixels and rebuilt on resize, so fonts keep a readable
size whatever the rank count; cells shrink instead, and labels drop detail gracefully
(cell text goes first, then rank labels thin out). The drawing holds no formula: it shows
the :class:`workbench.collectives.Frame` it is given.
"""

from __future__ import annotations

import contextlib
import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPen,
    QPolygonF,
)
from PySide6.QtWidgets import (
    QFrame,
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QSizePolicy,
    QWidget,
)

from ui import theme as th
from workbench.collectives import Collective, Frame, Transfer

#: Above this many links in one step, arrows are not drawn (the subtitle says so).
MAX_ARROWS = 160
#: The item data key marking what an item shows ("arrow", "cells", "title", ...).
ROLE = 0


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


def _font(px: float, bold: bool = False) -> QFont:
    font = QFont()
    font.setPixelSize(max(6, round(px)))
    font.setBold(bold)
    return font


@dataclass(frozen=True)
class Link:
    """One arrow of the arc layout: ``count`` chunks from ``src`` to ``dst``."""

    src: int
    dst: int
    count: int
    reduce: bool


class GridItem(QGraphicsItem):
    """All cells of all ranks in one item (4096 cells at 64 ranks stay cheap to paint)."""

    def __init__(self, view: CollectiveView, rect: QRectF):
        super().__init__()
        self._view = view
        self._rect = rect
        self.setData(ROLE, "cells")

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt naming
        return self._rect.adjusted(-4, -4, 4, 4)

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: ARG002
        v = self._view
        theme, geo = v._theme, v._geo
        frame = v._frame
        if frame is None or geo is None:
            return
        n = v._n
        bg = QColor(theme.background)
        muted = QColor(theme.muted)
        ink = QColor(theme.ink)
        hatch = QBrush(_blend(muted, bg, 0.55), Qt.BrushStyle.BDiagPattern)
        empty_fill = _blend(muted, bg, 0.08)
        received = v._received
        cw, ch = geo.cell_w, geo.cell_h
        bar_h = max(2.0, ch * 0.2)
        font = _font(geo.cell_font_px, bold=True)
        small = _font(geo.cell_font_px * 0.85)
        painter.setPen(Qt.PenStyle.NoPen)
        outline = QPen(_blend(muted, bg, 0.5), max(1.0, geo.scale))
        outline.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
        for r in range(n):
            x = geo.col_x[r]
            row = frame.buffers[r]
            for j in range(n):
                y = geo.row_y[j]
                rect = QRectF(x, y, cw, ch)
                content = row[j]
                if content is None:
                    painter.fillRect(rect, empty_fill)
                    painter.fillRect(rect, hatch)
                    if geo.cell_outline:
                        painter.setPen(outline)
                        painter.setBrush(Qt.BrushStyle.NoBrush)
                        painter.drawRect(rect)
                        painter.setPen(Qt.PenStyle.NoPen)
                    continue
                chunk = min(ci for _, ci in content)
                color = th.series_color(chunk, theme)
                k = len(content)
                complete = not v._reduces or k >= n
                fill = color if complete else _blend(color, bg, 0.28)
                painter.fillRect(rect, fill)
                if not complete:
                    painter.fillRect(QRectF(x, y + ch - bar_h, cw * k / n, bar_h), color)
                if geo.cell_text_lines:
                    painter.setPen(_text_on(fill))
                    self._cell_text(
                        painter,
                        rect,
                        content,
                        chunk,
                        k,
                        n,
                        font,
                        small,
                        geo.cell_text_lines,
                        bar_h if not complete else 0.0,
                    )
                    painter.setPen(Qt.PenStyle.NoPen)
        if received and len(received) <= 2 * n:  # outlines on every cell would say nothing
            pen = QPen(ink, geo.received_pen)
            pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            half = geo.received_pen / 2
            for r, j in received:
                painter.drawRect(
                    QRectF(geo.col_x[r], geo.row_y[j], cw, ch).adjusted(half, half, -half, -half)
                )

    def _cell_text(
        self,
        painter: QPainter,
        rect: QRectF,
        content,
        chunk: int,
        k: int,
        n: int,
        font: QFont,
        small: QFont,
        lines: int,
        bar_h: float,
    ) -> None:
        reduces = self._view._reduces
        first = f"c{chunk}"
        if reduces:
            second = f"Σ{k}/{n}"
        else:
            sources = sorted({s for s, _ in content})
            second = f"r{sources[0]}" if len(sources) == 1 else f"{len(sources)} ranks"
        flags = Qt.AlignmentFlag.AlignCenter
        text_rect = rect.adjusted(2, 1, -2, -max(1.0, bar_h))
        if lines >= 2:
            top, bottom = QRectF(text_rect), QRectF(text_rect)
            top.setBottom(text_rect.center().y() + 1)
            bottom.setTop(text_rect.center().y() - 1)
            painter.setFont(font)
            painter.drawText(top, int(flags | Qt.AlignmentFlag.AlignBottom), first)
            painter.setFont(small)
            painter.drawText(
                bottom, int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop), second
            )
        else:
            painter.setFont(small)
            painter.drawText(text_rect, int(flags), second if reduces else first)


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
        super().__init__(path)
        self.reduce = reduce
        self.src, self.dst, self.chunks = src, dst, chunks
        self._color, self._background = QColor(color), QColor(background)
        self._width = width
        self._head = max(5.0, width * 3.2)
        self._badge = badge if reduce else 0.0
        pen = QPen(self._color, width)
        pen.setCapStyle(Qt.PenCapStyle.FlatCap)
        pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        self.setPen(pen)
        self.setBrush(Qt.BrushStyle.NoBrush)
        self.setData(ROLE, "arrow")
        self.setZValue(2)
        if tip:
            self.setToolTip(tip)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt naming
        extra = max(self._head, self._badge) + self._width
        return self.path().boundingRect().adjusted(-extra, -extra, extra, extra)

    def shape(self) -> QPainterPath:
        path = QPainterPath()
        path.addRect(self.boundingRect())
        return path

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: ARG002
        path = self.path()
        end = path.pointAtPercent(1.0)
        angle = math.radians(path.angleAtPercent(0.999))
        # shaft stops where the head begins, so a thick line does not poke through the tip
        dx, dy = math.cos(angle), -math.sin(angle)
        painter.setPen(self.pen())
        painter.setBrush(Qt.BrushStyle.NoBrush)
        shaft = QPainterPath(path)
        if shaft.elementCount() >= 2:
            last = shaft.elementCount() - 1
            e = shaft.elementAt(last)
            shaft.setElementPositionAt(
                last, e.x - dx * self._head * 0.8, e.y - dy * self._head * 0.8
            )
        painter.drawPath(shaft)
        h, w = self._head, self._head * 0.55
        tip = QPointF(end)
        base = QPointF(end.x() - dx * h, end.y() - dy * h)
        normal = QPointF(-dy * w, dx * w)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self._color)
        painter.drawPolygon(QPolygonF([tip, base + normal, base - normal]))
        if self._badge > 0:
            mid = path.pointAtPercent(0.5)
            r = self._badge
            painter.setPen(QPen(self._color, max(1.0, self._width * 0.8)))
            painter.setBrush(self._background)
            painter.drawEllipse(mid, r, r)
            arm = r * 0.55
            painter.setPen(QPen(self._color, max(1.2, r * 0.28)))
            painter.drawLine(QPointF(mid.x() - arm, mid.y()), QPointF(mid.x() + arm, mid.y()))
            painter.drawLine(QPointF(mid.x(), mid.y() - arm), QPointF(mid.x(), mid.y() + arm))


@dataclass
class _Geometry:
    scale: float
    col_x: list[float]
    row_y: list[float]
    cell_w: float
    cell_h: float
    cell_font_px: float
    cell_text_lines: int
    cell_outline: bool
    received_pen: float


class CollectiveView(QGraphicsView):
    """Draws one :class:`~workbench.collectives.Frame` of a collective."""

    def __init__(self, parent: QWidget | None = None):
        self._scene = QGraphicsScene()
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
    ) -> None:
        """Draw ``frame`` (a step of ``collective`` on ``n`` ranks). ``root`` marks the root
        column (None: no root); ``context`` is the small line above the title; ``chunk_text``
        the size of one chunk, for the subtitle."""
        self._frame = frame
        self._collective = collective
        self._n = n
        self._root = root
        self._context = context
        self._chunk_text = chunk_text
        self._reduces = collective.reduces
        transfers: tuple[Transfer, ...] = frame.transfers
        self._received = sorted({(t.dst, t.target_chunk) for t in transfers})
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

    def set_comparison_note(self, text: str) -> None:
        self._comparison = text
        self._rebuild()

    # -- theme -----------------------------------------------------------------------------
    def apply_theme(self, theme: th.Theme) -> None:
        self._theme = theme
        self._rebuild()

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
        item = QGraphicsSimpleTextItem(text)
        item.setFont(font)
        item.setBrush(color)
        item.setData(ROLE, role)
        width = item.boundingRect().width()
        if align == "center":
            x -= width / 2
        elif align == "right":
            x -= width
        item.setPos(x, y)
        self._scene.addItem(item)
        return item

    def _rebuild(self) -> None:
        scene = self._scene
        scene.clear()
        self._geo = None
        theme = self._theme
        bg = QColor(theme.background)
        scene.setBackgroundBrush(bg)
        vw, vh = max(self.viewport().width(), 320), max(self.viewport().height(), 240)
        scene.setSceneRect(0, 0, vw, vh)
        frame = self._frame
        if frame is None:
            return
        s = th.scale_factor(self._presentation)
        ink, muted = QColor(theme.ink), QColor(theme.muted)
        n = self._n
        margin = 14 * s
        # -- header: context, title, subtitle ------------------------------------------------
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
        top = y + 10 * s

        # -- legend at the bottom -------------------------------------------------------------
        legend_h = QFontMetricsF(label_font).height() + 10 * s if vh > 360 else 0.0
        bottom = vh - margin * 0.6 - legend_h

        # -- columns ----------------------------------------------------------------------
        label_metrics = QFontMetricsF(label_font)
        show_slots = n <= 16
        slot_w = label_metrics.horizontalAdvance(f"slot {n - 1}") + 8 * s if show_slots else 0.0
        avail_w = vw - 2 * margin - slot_w
        neighbour = self._neighbour
        draw_arcs = not neighbour and 0 < len(self._links) <= MAX_ARROWS
        gap_ratio = 0.62 if neighbour else 0.28
        side_ratio = 0.45 if neighbour else 0.05
        cell_w = avail_w / (n + gap_ratio * (n - 1) + 2 * side_ratio)
        cell_w = min(cell_w, 170 * s)
        gap = cell_w * gap_ratio
        grid_w = n * cell_w + (n - 1) * gap
        x0 = margin + slot_w + (avail_w - grid_w) / 2

        # -- rows ---------------------------------------------------------------------------
        rank_label_h = label_metrics.height() + 6 * s
        arc_h = min(0.17 * vh, 110 * s) if draw_arcs else 0.0
        wrap_h = max(10.0, 0.9 * cell_w * 0.5) if neighbour and frame.transfers else 0.0
        wrap_h = min(wrap_h, 40 * s)
        grid_top = top + arc_h + rank_label_h
        avail_h = bottom - grid_top - arc_h - wrap_h
        pitch = max(2.0, avail_h / n)
        cell_h = min(pitch * 0.86, 92 * s, max(cell_w * 0.62, 4.0))
        row_gap = (
            max(1.0, min(pitch - cell_h, cell_h * 0.18)) if n <= 24 else max(0.6, pitch - cell_h)
        )
        pitch = cell_h + row_gap
        grid_h = n * pitch - row_gap
        # spare height goes half above, half below: the drawing sits in the middle
        spare = max(0.0, avail_h - grid_h)
        grid_top += spare / 2
        col_x = [x0 + r * (cell_w + gap) for r in range(n)]
        row_y = [grid_top + j * pitch for j in range(n)]

        # level of detail: how much text fits in a cell
        cell_font_px = min(22 * s, cell_h * 0.34, cell_w * 0.2)
        probe = QFontMetricsF(_font(cell_font_px * 0.85))
        wide_text = f"Σ{n}/{n}" if self._reduces else f"r{n - 1}"
        lines = 0
        if cell_font_px >= 9 and probe.horizontalAdvance(wide_text) <= cell_w - 4:
            lines = (
                2
                if cell_font_px >= 11
                and cell_h >= 2.3 * cell_font_px + (cell_h * 0.1 if self._reduces else 0)
                else 1
            )
        self._geo = _Geometry(
            scale=s,
            col_x=col_x,
            row_y=row_y,
            cell_w=cell_w,
            cell_h=cell_h,
            cell_font_px=cell_font_px,
            cell_text_lines=lines,
            cell_outline=cell_h >= 10,
            received_pen=max(1.0, min(3.0 * s, cell_h * 0.08)),
        )

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
            item = scene.addRect(rect, root_pen, QBrush(Qt.BrushStyle.NoBrush))
            item.setData(ROLE, "root")

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
        if show_slots:
            for j in range(n):
                if cell_h < label_metrics.height() * 0.8 and j % 2:
                    continue
                yy = row_y[j] + cell_h / 2 - label_metrics.height() / 2
                self._text(
                    f"slot {j}",
                    label_font,
                    muted,
                    x0 - 8 * s - (side_ratio * cell_w),
                    yy,
                    "slot",
                    "right",
                )

        grid = GridItem(self, QRectF(x0, grid_top, grid_w, grid_h))
        scene.addItem(grid)

        # -- arrows ---------------------------------------------------------------------------
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
                scene.addItem(
                    ArrowItem(
                        path,
                        reduce=t.reduce,
                        color=arrow_color,
                        background=QColor(theme.background),
                        width=width,
                        badge=badge,
                        src=t.src,
                        dst=t.dst,
                        tip=f"rank {t.src} → rank {t.dst}: {kind} {t.chunk}",
                    )
                )
        elif draw_arcs:
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
                scene.addItem(
                    ArrowItem(
                        path,
                        reduce=link.reduce,
                        color=arrow_color,
                        background=QColor(theme.background),
                        width=width * 0.85,
                        badge=badge,
                        src=link.src,
                        dst=link.dst,
                        chunks=link.count,
                        tip=f"rank {link.src} → rank {link.dst}: {kind} {link.count} chunk(s)",
                    )
                )

        if legend_h:
            self._legend(vh - margin * 0.6 - legend_h + 6 * s, margin, label_font, s)

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

    def _legend_entries(self, short: bool) -> list[tuple[str, str]]:
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
        return entries

    def _legend_width(self, entries: list[tuple[str, str]], font: QFont, s: float) -> float:
        metrics = QFontMetricsF(font)
        box = metrics.height() * 0.9
        width = 0.0
        for kind, text in entries:
            width += box * 1.5 + 6 * s + (box if kind in ("reduce", "copy") else 0.0)
            width += metrics.horizontalAdvance(text) + 18 * s
        return width

    def _legend(self, y: float, x: float, font: QFont, s: float) -> None:
        theme = self._theme
        ink, muted, bg = QColor(theme.ink), QColor(theme.muted), QColor(theme.background)
        # one line that fits the width: shorter words first, then a smaller font
        room = self._scene.sceneRect().width() - 2 * x
        entries = self._legend_entries(short=False)
        if self._legend_width(entries, font, s) > room:
            entries = self._legend_entries(short=True)
        while self._legend_width(entries, font, s) > room and font.pixelSize() > 9:
            font = _font(font.pixelSize() - 1)
        metrics = QFontMetricsF(font)
        box = metrics.height() * 0.9
        color = th.series_color(0, theme)

        def swatch(kind: str) -> None:
            nonlocal x
            rect = QRectF(x, y + (metrics.height() - box) / 2, box * 1.5, box)
            if kind == "empty":
                self._scene.addRect(
                    rect, QPen(_blend(muted, bg, 0.5), 1), QBrush(_blend(muted, bg, 0.08))
                )
                self._scene.addRect(
                    rect,
                    QPen(Qt.PenStyle.NoPen),
                    QBrush(_blend(muted, bg, 0.55), Qt.BrushStyle.BDiagPattern),
                )
            elif kind == "partial":
                self._scene.addRect(rect, QPen(Qt.PenStyle.NoPen), QBrush(_blend(color, bg, 0.28)))
                bar = QRectF(
                    rect.x(),
                    rect.bottom() - rect.height() * 0.25,
                    rect.width() * 0.4,
                    rect.height() * 0.25,
                )
                self._scene.addRect(bar, QPen(Qt.PenStyle.NoPen), QBrush(color))
            elif kind == "full":
                self._scene.addRect(rect, QPen(Qt.PenStyle.NoPen), QBrush(color))
            elif kind == "received":
                self._scene.addRect(
                    rect.adjusted(1, 1, -1, -1), QPen(ink, 2), QBrush(Qt.BrushStyle.NoBrush)
                )
            elif kind in ("reduce", "copy"):
                path = QPainterPath(QPointF(rect.left(), rect.center().y()))
                path.lineTo(rect.right() + box, rect.center().y())
                item = ArrowItem(
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
                self._scene.addItem(item)
                x += box
            x += box * 1.5 + 6 * s

        def label(text: str) -> None:
            nonlocal x
            item = self._text(text, font, muted, x, y, "legend")
            x += item.boundingRect().width() + 18 * s

        for kind, text in entries:
            swatch(kind)
            label(text)
