"""One marker of a fixed size in pixels at a point of a plot: a chart's operating point.

It draws what a one-point ``pg.PlotDataItem`` with a symbol draws, pixel for pixel (the
symbol rendered once as pyqtgraph renders it into its atlas, then placed as pyqtgraph places
it), without the scatter's work on every paint and every bounds query: culling against the
view, mapping its points, a fragment buffer, a bounding rect from its data (together about
half a millisecond per paint and a tenth per query on a 2-core laptop, several times per
edit of each chart). It counts for the view's automatic range as that item did.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from pyqtgraph.graphicsItems.ScatterPlotItem import drawSymbol, renderSymbol
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QBrush, QGuiApplication, QPainter, QPen, QPixmap

#: pyqtgraph's reach of a symbol beyond its centre, in pixels per pixel of size and pen
_REACH = 0.7072


def _screen_ratio() -> float:
    """The primary screen's device pixel ratio, as pyqtgraph's scatter takes it for its atlas."""
    screen = QGuiApplication.primaryScreen()
    return screen.devicePixelRatio() if screen is not None else 1.0


class PointMarker(pg.GraphicsObject):
    """A symbol at the item's own origin, ``size`` pixels across whatever the view's scale.
    Place it with ``setPos`` in the view's coordinates."""

    def __init__(self) -> None:
        super().__init__()
        self._symbol = "o"
        self._size = 10.0
        self._pen = QPen()
        self._brush = QBrush()
        self._pixmaps: dict[float, QPixmap] = {}  # the rendered symbol, per device pixel ratio
        self._rect_for: tuple | None = None  # (pixel vectors, rect) of the last bounding rect

    def set_style(self, symbol: str, size: float, pen: QPen, brush: QBrush) -> None:
        self.prepareGeometryChange()
        self._symbol, self._size = symbol, float(size)
        self._pen, self._brush = QPen(pen), QBrush(brush)
        self._pixmaps.clear()
        self._rect_for = None
        self.update()

    def style(self) -> tuple[str, float, QPen, QBrush]:
        return self._symbol, self._size, QPen(self._pen), QBrush(self._brush)

    # -- what the view asks: its automatic range and what to repaint ---------------------------
    def dataBounds(self, ax: int, frac: float = 1.0, orthoRange=None):  # noqa: N802, N803 - pyqtgraph naming
        """The one point, at the item's origin (the view maps it through the item's position)."""
        if orthoRange is not None and not orthoRange[0] <= 0.0 <= orthoRange[1]:
            return (None, None)
        return (0.0, 0.0)

    def pixelPadding(self) -> float:  # noqa: N802 - pyqtgraph naming
        """No room is added around the point for its symbol: the view's own padding (a few
        percent of the range) already keeps it inside, and the one-point curve it replaces
        added none either (pyqtgraph took that item's padding from its curve, which has no
        pen), so the charts keep their ranges."""
        return 0.0

    def _reach(self) -> float:
        """How far the symbol reaches beyond its point, in pixels: as pyqtgraph's scatter
        reckons it, from the width of the rendered symbol (at the screen's pixel ratio)."""
        ratio = _screen_ratio()
        side = math.ceil(ratio * (self._size + max(math.ceil(self._pen.widthF()), 1)))
        return side / ratio * _REACH

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt naming
        vectors = self.pixelVectors()  # local lengths of a pixel; cached by pyqtgraph
        px, py = vectors
        if px is None or py is None:
            return QRectF()
        key = (px.x(), px.y(), py.x(), py.y())
        kept = self._rect_for
        if kept is not None and kept[0] == key:
            return QRectF(kept[1])
        pad = self._reach()
        try:
            w, h = px.length() * pad, py.length() * pad
        except OverflowError:
            w = h = 0.0
        rect = QRectF(-w, -h, 2 * w, 2 * h)
        self._rect_for = (key, rect)
        return QRectF(rect)

    def viewTransformChanged(self) -> None:  # noqa: N802 - pyqtgraph naming
        self.prepareGeometryChange()  # the rect in view units changes with the scale
        self._rect_for = None

    # -- drawing ------------------------------------------------------------------------------
    def _pixmap(self, ratio: float) -> QPixmap:
        pixmap = self._pixmaps.get(ratio)
        if pixmap is None:
            image = renderSymbol(self._symbol, self._size, self._pen, self._brush, dpr=ratio)
            image.setDevicePixelRatio(1.0)  # the fragment scales it, as pyqtgraph's atlas
            pixmap = self._pixmaps[ratio] = QPixmap.fromImage(image)
        return pixmap

    @pg.debug.warnOnException  # an exception escaping a paint crashes Qt
    def paint(self, p: QPainter, *args) -> None:
        widget = args[1] if len(args) > 1 else None
        centre = p.transform().map(QPointF(0.0, 0.0))  # in the device's pixels
        p.resetTransform()
        if self._exportOpts is not False:
            # an export draws the symbol's outline at the export's scale, as pyqtgraph does
            scale = self._exportOpts.get("resolutionScale", 1.0)
            p.setRenderHint(QPainter.RenderHint.Antialiasing, self._exportOpts.get("antialias", True))
            p.translate(centre)
            drawSymbol(p, self._symbol, self._size * scale, self._pen, self._brush)
            return
        ratio = widget.devicePixelRatioF() if widget is not None else _screen_ratio()
        pixmap = self._pixmap(ratio)
        source = QRectF(0.0, 0.0, pixmap.width(), pixmap.height())
        fragment = QPainter.PixmapFragment.create(centre, source, 1.0 / ratio, 1.0 / ratio, 0.0, 1.0)
        p.drawPixmapFragments(fragment, 1, pixmap)
