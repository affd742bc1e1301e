"""Roofline panel: hardware ceilings, kernels as points, the measured ceilings of this machine.

The chart is attainable FLOP/s against arithmetic intensity on log-log axes: the memory roof,
the compute roof for the selected precision (dense or 2:4 sparse, said in the title and on the
roof), the ridge point marked and labelled, optional precision ceilings and L2 roof, up to three
more presets overlaid for comparison, saved scenarios overlaid dashed, and the scenario's
kernels as one scatter item coloured memory- or compute-bound.

Every number comes from the panel's analysis (``workbench.analyses.roofline``: the roofs, the
kernels placed under them and their flags, the axes, the readout under the mouse), read through
``PanelBase.analysis()`` so a window computes it once per change; saved scenarios overlaid get
the same analysis of their own. This module only draws what it gets. Edits go through the undo
stack; kernel and hardware edits are one step each (they never merge).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt import internals as Qt_internals
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QIcon,
    QPainter,
    QPainterPath,
    QPen,
    QPixmap,
    QTransform,
)
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ui import theme as th
from ui.bounded_cache import BoundedCache
from ui.charts import Chart, si_label
from ui.commands import push_scenario_edit
from ui.label_placement import leader, place_labels
from ui.panel import PanelBase, ResultRow
from ui.panels.roofline_kernels import (
    ImportReport,
    KernelBuilderDialog,
    KernelSortProxy,
    KernelTableModel,
    KernelTableView,
    import_report_lines,
    read_kernel_file,
)
from ui.panels.roofline_measure import MachineMeasurement
from ui.plain_text_item import PlainTextItem
from ui.widgets.combo_items import set_choices
from workbench.analyses import roofline as roofline_analysis
from workbench.analyses.roofline import DeviceRoofs, RooflineAnalysis, RoofWarnings
from workbench.hardware import PRECISION_LABELS, Hardware
from workbench.kernels import Kernel, seed_examples
from workbench.roofline import (
    ABOVE_ROOF_ADVICE,
    EXPLANATION,
    STALE_TIME_ADVICE,
    Placements,
    Roof,
    time_may_be_stale,
)
from workbench.scenarios import RooflineScenario
from workbench.workspace import precision_fallback

#: Roof colours per device slot: the primary in ink, compared presets in palette colours that
#: are not the memory-/compute-bound blue and orange of the points.
DEVICE_COLORS = (None, th.GREEN, th.PURPLE, th.SKY)  # None: the theme's ink
#: Saved scenarios overlaid by "Compare": dashed roofs in these colours.
COMPARISON_COLORS = (th.VERMILLION, th.SKY, th.PURPLE, th.GREEN)
#: When the primary preset lacks the selected precision, the first of these it has.
NONE_KEY = ""
#: Up to this many kernels, each point carries its name on the chart.
MAX_POINT_LABELS = 12


def _peak_label(precision: str, sparse: bool) -> str:
    """The results' label of the primary device's flat roof."""
    return f"Peak compute ({PRECISION_LABELS[precision]}, {'2:4 sparse' if sparse else 'dense'})"


def _short(name: str) -> str:
    """'NVIDIA H100 SXM' -> 'H100 SXM' (legend and hover lines stay short)."""
    for vendor in ("NVIDIA ", "AMD Instinct ", "AMD ", "Google ", "Intel "):
        if name.startswith(vendor):
            return name[len(vendor):]
    return name


def _q(value: float, unit: str) -> str:
    return si_label(value, unit)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: Marks what the panel warns about (the table's cells carry a drawn icon instead).
WARNING_MARK = "\u26a0"


def _names(names: Sequence[str], rows: Sequence[int], limit: int = 4) -> str:
    """'a', 'b' and 2 more."""
    shown = ", ".join(f"'{_cut(names[i], 40)}'" for i in rows[:limit])
    return shown + (f" and {len(rows) - limit:,} more" if len(rows) > limit else "")


def _label_lines(name: str, width: int = 26) -> str:
    """A kernel's name for its label: a long one on two lines, broken before its details
    ("attention fused" / "(b8 h32 s4096 d128 BF16)") or at a space, each line at most
    ``width`` + 8 characters (the full name is in the table and the hover tip)."""
    limit = width + 8
    if len(name) <= width:
        return name
    cut = name.find(" (")
    if cut <= 0:
        cut = name.rfind(" ", 0, width + 1)
    if cut <= 0:
        return _cut(name, limit)
    return f"{_cut(name[:cut].rstrip(), limit)}\n{_cut(name[cut:].strip(), limit)}"


def _same_key(a, b) -> bool:
    """Whether two cache keys (tuples, or None) hold the same values (Placements compare by
    identity; the same kernel tuple is not compared item by item)."""
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(x is y or x == y for x, y in zip(a, b, strict=True))


def _log10(values) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log10(np.asarray(values, dtype=float))


def _joined_slope(d, lines):
    """The device-memory roof's line of device ``d`` when it ends where its compute roof's
    starts (the ridge, inside the axes), so that both are drawn as one line; else None."""
    memory = next((line for line in lines if line.roof is d.memory and line.drawn_x.size), None)
    compute = next((line for line in lines if line.roof is d.compute and line.drawn_x.size), None)
    if memory is None or compute is None:
        return None
    if not (math.isclose(memory.drawn_x[-1], compute.drawn_x[0], rel_tol=1e-9)
            and math.isclose(memory.drawn_y[-1], compute.drawn_y[0], rel_tol=1e-9)):
        return None
    return memory


class KernelScatter(pg.ScatterPlotItem):
    """One scatter item for all kernels, styled by class (memory- / compute-bound) in numpy.

    ``ScatterPlotItem.setData`` with per-point brushes looks up every point's style in Python
    (~25 ms for 10,000 points); here the few styles are looked up once and assigned with
    boolean masks, into the same record array while the number of points stays, and only the
    points that changed class are restyled: a redraw of 10,000 kernels costs a fraction of a
    millisecond. Painting is pyqtgraph's pixmap-fragment drawing without its per-paint
    bookkeeping when every point is in view (``_paint_fast``, the same pixels), pyqtgraph's
    own otherwise; hover tips and clicks are pyqtgraph's. If pyqtgraph's internals ever
    differ, it falls back to ``setData``.
    """

    # what set_points last wrote (see _fast_set) and the bounding rectangle (see boundingRect)
    _filled = None
    _filled_x = None  # the read-only array the positions along x were written from
    _filled_classes: np.ndarray | None = None  # each point's style (an index into the styles)
    _filled_rects: np.ndarray | None = None  # each style's symbol rectangle in the atlas
    _x_span: tuple[float, float] | None = None  # its minimum and maximum
    _spot_items = False  # pyqtgraph made an item per point (points(): a hover, a click)
    _kept_rect: tuple | None = None
    # the fragment buffer _paint_fast keeps: (its address, length, pixel ratio) when its symbol
    # rectangles are the points', and (x array, scale, shift) of the positions along x in it
    _frags_ready: tuple | None = None
    _frags_x: tuple | None = None

    def set_points(self, x, y, classes, brushes, pens, size: float, symbol: str = "o") -> None:
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        classes = np.asarray(classes, dtype=int)
        pen_list = pens if isinstance(pens, (list, tuple)) else [pens] * len(brushes)
        try:
            self._fast_set(x, y, classes, list(brushes), list(pen_list), float(size), symbol)
        except (AttributeError, KeyError, ValueError, TypeError, IndexError):
            brush_arr = np.empty(len(brushes), dtype=object)
            brush_arr[:] = list(brushes)
            pen_arr = np.empty(len(pen_list), dtype=object)
            pen_arr[:] = list(pen_list)
            self.setData(x=x, y=y, data=np.arange(len(x)), brush=brush_arr[classes], pen=pen_arr[classes],
                         size=size, symbol=symbol)

    def _fast_set(self, x, y, classes, brushes, pens, size, symbol) -> None:
        n = len(x)
        data = self.data
        style = (tuple(map(id, brushes)), tuple(map(id, pens)), size, symbol)
        same = len(data) == n and n and data is self._filled
        if same:
            # the same number of points as last time: overwrite the record array in place.
            # A new one costs ~5 ms for 10,000 points (numpy fills its object fields one by
            # one); the point indices ("data") and the symbols are already there.
            self._drop_spot_items()
            if self._filled_symbol != symbol:
                data["symbol"] = symbol
        else:
            self.data["item"][...] = None
            data = np.empty(n, dtype=self.data.dtype)
            data["data"] = np.arange(n)
            symbols = np.empty(n, dtype=object)
            symbols[:] = symbol
            data["symbol"] = symbols
        # the kernels' intensities are one array while the kernels stay (a new roof moves the
        # points up or down only): written, and their span taken, when they change (the same
        # read-only array again has the same values)
        x_kept = bool(same) and x is self._filled_x
        if not x_kept:
            data["x"] = x
            self._x_span = (float(x.min()), float(x.max())) if n else None
        data["y"] = y
        data["visible"] = True
        data["hovered"] = False
        brush_arr = np.empty(len(brushes), dtype=object)
        brush_arr[:] = brushes
        pen_arr = np.empty(len(pens), dtype=object)
        pen_arr[:] = pens
        use_atlas = bool(self.opts["pxMode"] and self.opts["useCache"])
        rects = None
        if use_atlas:
            rects = np.zeros((len(brushes), 4), dtype=int)
            shown = np.bincount(classes, minlength=len(brushes)) > 0
            for c in range(len(brushes)):
                if shown[c]:
                    (coords,) = self.fragmentAtlas[[(symbol, size, pens[c], brushes[c])]]
                    rects[c] = coords
        previous = getattr(self, "_filled_classes", None)
        restyled = None  # (rows, their symbol rectangles) when only some points changed class
        if (same and previous is not None and len(previous) == n and getattr(self, "_filled_style", None) == style
                and getattr(self, "_filled_rects", None) is not None and np.array_equal(self._filled_rects, rects)):
            # the same styles: only the points that changed class get another brush, pen and
            # symbol (a new roof moves a few kernels across the ridge)
            changed = np.flatnonzero(classes != previous)
            restyled = (changed, rects[classes[changed]])
            if changed.size:
                now = classes[changed]
                data["brush"][changed] = brush_arr[now]
                data["pen"][changed] = pen_arr[now]
                # the rectangles' four ints as one row each (a view of the record array)
                data["sourceRect"].view((int, 4))[changed] = rects[now]
        else:
            data["size"] = size
            data["brush"] = brush_arr[classes]
            data["pen"] = pen_arr[classes]
            data["sourceRect"] = 0
            if use_atlas:
                for c in range(len(brushes)):
                    mask = classes == c
                    if mask.any():
                        data["sourceRect"][mask] = tuple(int(v) for v in rects[c])
        self._filled_classes = classes.copy()
        self._filled_style = style
        self._filled_rects = rects
        self.data = data
        self._filled = data
        self._filled_symbol = symbol
        self._filled_x = None if x.flags.writeable else x
        self._xy_bounds = None
        if n:
            bounds = (*self._x_span, float(y.min()), float(y.max()))
            if all(math.isfinite(b) for b in bounds):
                self._xy_bounds = bounds
        self.prepareGeometryChange()
        self.informViewBoundsChanged()
        self.bounds = [None, None]
        if restyled is None:
            self._frags_ready = None
        else:
            self._patch_fragments(*restyled)
        self._maybeRebuildAtlas()
        self._updateMaxSpotSizes(data=data)
        pg.ScatterPlotItem.invalidate(self)  # the drawing; the fragment buffer is kept (or dropped above)
        self.sigPlotChanged.emit(self)

    def _patch_fragments(self, rows: np.ndarray, rects: np.ndarray) -> None:
        """New symbol rectangles for some points, written into the fragment buffer that
        ``_paint_fast`` keeps (refilling it for 10,000 points was a part of every redraw)."""
        ready = self._frags_ready
        if ready is None or not len(rows):
            return
        frags = self._pixmapFragments.ndarray()
        if frags.__array_interface__["data"][0] != ready[0] or len(frags) != ready[1]:
            self._frags_ready = None
            return
        frags[rows, 2:6] = rects

    def move_points(self, x, y) -> bool:
        """New positions for the points already there, their styles kept (what setData with the
        same styles would give); False, and nothing done, if the number of points differs."""
        data = self.data
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        if len(data) != len(x) or len(x) != len(y):
            return False
        data["x"] = x
        data["y"] = y
        self._filled_x = None
        self._drop_spot_items()
        data["hovered"] = False
        if data is self._filled:
            self._xy_bounds = None
            if len(x):
                bounds = (float(x.min()), float(x.max()), float(y.min()), float(y.max()))
                if all(math.isfinite(b) for b in bounds):
                    self._xy_bounds = bounds
        self.prepareGeometryChange()
        self.informViewBoundsChanged()
        self.bounds = [None, None]
        pg.ScatterPlotItem.invalidate(self)  # the symbols stay: so does the fragment buffer
        self.sigPlotChanged.emit(self)
        return True

    def points(self):
        self._spot_items = True
        return super().points()

    def _drop_spot_items(self) -> None:
        """Forget the items pyqtgraph made per point (as setData does): they stood for the
        points before the change. Walking 10,000 records to learn there are none cost a part
        of every redraw, so points() notes that it made them."""
        if self._spot_items:
            self.data["item"] = None
            self._spot_items = False

    # -- painting ---------------------------------------------------------------------------
    def boundingRect(self):  # noqa: N802 - Qt naming
        """pyqtgraph's rectangle, kept until the points, their sizes or the view's transform
        change: Qt asks for it several times per paint (and the scene after every change), and
        pyqtgraph maps a pixel into the view each time to pad it."""
        kept = self._kept_rect
        sizes = (self._maxSpotWidth, self._maxSpotPxWidth)
        if kept is None or kept[1] is not self.data or kept[2] != sizes:
            kept = self._kept_rect = (self._bounding_rect(), self.data, sizes)
        return QRectF(kept[0])

    def prepareGeometryChange(self) -> None:  # noqa: N802 - Qt naming
        self._kept_rect = None  # every change of the points or their sizes comes through here
        super().prepareGeometryChange()

    def viewTransformChanged(self) -> None:  # noqa: N802 - pyqtgraph naming
        self._kept_rect = None  # the padding is a pixel in the view
        super().viewTransformChanged()

    def _bounding_rect(self) -> QRectF:
        """pyqtgraph's rectangle, from the bounds ``set_points`` keeps: its own takes the minimum
        and maximum of every point again after each change."""
        bounds = self._xy_bounds if self.data is self._filled and len(self.data) else None
        if bounds is None or self._maxSpotWidth:  # spot sizes in data units: pyqtgraph's own
            return super().boundingRect()
        xmn, xmx, ymn, ymx = bounds
        px = py = 0.0
        pad = self.pixelPadding()
        if pad > 0:
            vx, vy = self.pixelVectors()
            try:
                px = 0.0 if vx is None else vx.length() * pad
                py = 0.0 if vy is None else vy.length() * pad
            except OverflowError:
                return super().boundingRect()
        return QRectF(xmn - px, ymn - py, 2 * px + xmx - xmn, 2 * py + ymx - ymn)

    def invalidate(self) -> None:
        self._frags_ready = None
        super().invalidate()

    def updateSpots(self, dataSet=None) -> None:  # noqa: N802 - pyqtgraph naming
        self._frags_ready = None
        self._filled_classes = None  # pyqtgraph restyled the points: the next set is a full one
        super().updateSpots(dataSet)

    @pg.debug.warnOnException  # an exception escaping a paint crashes Qt
    def paint(self, p, option, widget) -> None:
        if not self._paint_fast(p, widget):
            self._frags_ready = None  # pyqtgraph fills the fragment buffer its own way
            super().paint(p, option, widget)

    def _paint_fast(self, p, widget) -> bool:
        """pyqtgraph's own pixmap-fragment drawing when every point is inside the view (the
        usual case: the panel sets the range around the kernels), without its per-paint
        culling mask, structured-array copies and conversions of the unchanged symbol
        rectangles: device positions are computed as pyqtgraph does, the rest of the fragment
        buffer is kept while the points' symbols stay. Anything else (points outside the
        view, an export, another device pixel ratio) is pyqtgraph's paint."""
        data = self.data
        if (not len(data) or self.opts["pxMode"] is not True or not self.opts["useCache"]
                or self._exportOpts is not False or self.opts.get("compositionMode") is not None):
            return False
        if data is self._filled:
            bounds = self._xy_bounds
        elif len(data) <= 64:  # a few points given to setData (the ridge markers)
            x, y = data["x"], data["y"]
            bounds = (float(x.min()), float(x.max()), float(y.min()), float(y.max()))
            if not all(math.isfinite(b) for b in bounds) or not data["visible"].all():
                return False
        else:
            return False
        if bounds is None:
            return False
        atlas = self.fragmentAtlas
        dpr = atlas.devicePixelRatio()
        if widget is not None and widget.devicePixelRatioF() != dpr:
            return False
        view = self.viewRect()
        transform = p.transform()
        if view is None or transform.type() == QTransform.TransformationType.TxProject:
            return False
        xmin, xmax, ymin, ymax = bounds
        if not (view.left() <= xmin and xmax <= view.right() and view.top() <= ymin and ymax <= view.bottom()):
            return False
        p.resetTransform()
        n = len(data)
        fragments = self._pixmapFragments
        fragments.resize(n)
        frags = fragments.ndarray()
        key = (frags.__array_interface__["data"][0], n, dpr)
        if self._frags_ready != key:
            rects = np.ascontiguousarray(data["sourceRect"])
            frags[:, 2:6] = np.frombuffer(rects, dtype=int).reshape((-1, 4))  # sx, sy, sw, sh
            frags[:, 6:10] = [1 / dpr, 1 / dpr, 0.0, 1.0]  # scaleX, scaleY, rotation, opacity
            self._frags_ready = key
            self._frags_x = None
        # device positions as pyqtgraph's fn.transformCoordinates: (m11 x + m21 y) + dx and
        # (m12 x + m22 y) + dy. The view neither rotates nor shears (m21 = m12 = 0): each is
        # then one product and a shift (the same numbers), and the positions along x, which a
        # new roof leaves (the kernels' intensities), stay in the fragment buffer.
        m11, m21, dx = transform.m11(), transform.m21(), transform.dx()
        m12, m22, dy = transform.m12(), transform.m22(), transform.dy()
        x, y = data["x"], data["y"]
        if m21 == 0.0 and m12 == 0.0:
            source = self._filled_x if data is self._filled else None
            kept = self._frags_x
            if source is None or kept is None or kept[0] is not source or kept[1:] != (m11, dx):
                frags[:, 0] = x * m11 + dx
                self._frags_x = None if source is None else (source, m11, dx)
            frags[:, 1] = y * m22 + dy
        else:
            px = x * m11 + y * m21
            px += dx
            py = x * m12 + y * m22
            py += dy
            frags[:, 0] = px
            frags[:, 1] = py
            self._frags_x = None
        distinct = self._distinct_fragments(frags, dpr, p) if n >= self.DISTINCT_FROM else None
        self.fragments_drawn = n if distinct is None else len(distinct.ndarray())
        p.drawPixmapFragments(*(fragments if distinct is None else distinct).drawargs(), atlas.pixmap)
        return True

    #: from this many points on, a point that a later point covers exactly is left out
    #: (_distinct_fragments); under it, every point is drawn as pyqtgraph draws it
    DISTINCT_FROM = 512
    #: how many symbols the last fast paint drew
    fragments_drawn = 0
    _SLOT_BITS = 15  # 32,768 hash slots (128 KB: they stay in the processor's cache)
    _slots: np.ndarray | None = None
    _distinct: object | None = None  # the fragment buffer of the points drawn (a PrimitiveArray)
    _distinct_x: tuple | None = None  # (_frags_x it was worked out for, symbol width, x bits)

    def _distinct_fragments(self, frags: np.ndarray, dpr: float, p: QPainter):
        """The fragments without those a later point covers exactly, or None to draw them all.

        Blending the symbols' pixels is most of the paint, and many points repeat: kernels with
        no measured time sit on the roof, side by side at the same pixels, and a profile lists
        the same launch many times. Qt puts an unscaled, unrotated pixmap at whole device pixels
        (its top-left corner rounded), so two points of one style rounded to the same corner
        light the same pixels: the later one, drawn over the earlier, is kept (the one on top,
        also over any point drawn between them). What changes is the soft edge of the symbol,
        which two draws blended twice (a shade darker). At another pixel ratio (of the atlas or
        of the device painted on: a render into a larger image) the pixmap is scaled and placed
        between pixels, and symbols of several sizes do not cover each other alike: every point
        is drawn."""
        classes, rects = self._filled_classes, self._filled_rects
        n = len(frags)
        device = p.deviceTransform()  # (the world transform is reset: this is the device's own)
        if (dpr != 1.0 or device.type().value > QTransform.TransformationType.TxTranslate.value
                or not (device.dx().is_integer() and device.dy().is_integer())
                or self.data is not self._filled or classes is None or len(classes) != n
                or rects is None or len(rects) > 256  # (a style is the key's lowest byte)
                or len({(int(w), int(h)) for _x, _y, w, h in rects if w}) != 1):
            return None
        width, height = (int(v) for v in next(r for r in rects if r[2])[2:4])
        # each symbol's corner as Qt rounds it (qRound of centre - size / 2), then offset to be
        # positive: along x in the bits above 29, kept while the positions along x stay
        kept_x, along_x = self._distinct_x, self._frags_x
        if along_x is None or kept_x is None or kept_x[0] is not along_x or kept_x[1] != width:
            x = np.floor(frags[:, 0] - 0.5 * width + 0.5)
            x_bits = (x.astype(np.int64) + 2**20) << 29 if -(2**20) <= x.min() and x.max() < 2**20 else None
            self._distinct_x = None if along_x is None else (along_x, width, x_bits)
        else:
            x_bits = kept_x[2]
        y = np.floor(frags[:, 1] - 0.5 * height + 0.5)
        if x_bits is None or not (-(2**20) <= y.min() and y.max() < 2**20):
            return None  # (points far outside any screen)
        key = x_bits | ((y.astype(np.int64) + 2**20) << 8) | classes
        # a later point of each key, through hash slots: each slot is given the index of every
        # point that falls in it, the later ones last, and a point is left out only if the one
        # its slot holds comes after it with its very key (two keys sharing a slot only draw a
        # point more; the last write winning is not relied on either)
        slot = ((key.view(np.uint64) * np.uint64(0x9E3779B97F4A7C15))
                >> np.uint64(64 - self._SLOT_BITS)).astype(np.intp)
        slots = self._slots
        if slots is None:
            slots = self._slots = np.zeros(1 << self._SLOT_BITS, dtype=np.intp)
        index = np.arange(n)
        slots[slot] = index
        later = slots[slot]
        kept = np.flatnonzero(~((later > index) & (key[later] == key)))
        if len(kept) == n:
            return None
        distinct = self._distinct
        if distinct is None:
            distinct = self._distinct = Qt_internals.PrimitiveArray(QPainter.PixmapFragment, 10)
        distinct.resize(len(kept))
        np.take(frags, kept, axis=0, out=distinct.ndarray())
        return distinct


def warning_icon(color: QColor, size: int = 14) -> QIcon:
    """A small warning triangle with an exclamation mark, drawn (no icon theme offscreen)."""
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    s = size / 14.0
    triangle = QPainterPath()
    triangle.moveTo(QPointF(7 * s, 1 * s))
    triangle.lineTo(QPointF(13.2 * s, 12.6 * s))
    triangle.lineTo(QPointF(0.8 * s, 12.6 * s))
    triangle.closeSubpath()
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(color))
    painter.drawPath(triangle)
    painter.setPen(QPen(QColor("#FFFFFF"), 1.7 * s, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
    painter.drawLine(QPointF(7 * s, 4.6 * s), QPointF(7 * s, 8.4 * s))
    painter.setBrush(QColor("#FFFFFF"))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawEllipse(QRectF(6.1 * s, 9.6 * s, 1.8 * s, 1.8 * s))
    painter.end()
    return QIcon(pixmap)


_DECORATION_ROLE = Qt.ItemDataRole.DecorationRole.value
_FOREGROUND_ROLE = Qt.ItemDataRole.ForegroundRole.value
_TOOLTIP_ROLE = Qt.ItemDataRole.ToolTipRole.value


_NO_FLAGS = np.zeros(0, dtype=bool)
#: the roles a kernel's flags show in (colour, icon, tip): none of them is a sort key
FLAG_ROLES = [_FOREGROUND_ROLE, _DECORATION_ROLE, _TOOLTIP_ROLE]


def _changed_flags(old: tuple[np.ndarray, ...], new: tuple[np.ndarray, ...]):
    """Per kernel, whether each flag changed from ``old`` to ``new`` (masks of one length, or
    empty for none set); None when their lengths disagree (other kernels)."""
    n = {len(m) for m in (*old, *new) if len(m)}
    if len(n) != 1:
        return None
    (n,) = n
    def full(m):
        return m if len(m) else np.zeros(n, dtype=bool)
    return tuple(full(a) != full(b) for a, b in zip(old, new, strict=True))


class FlaggedKernelModel(KernelTableModel):
    """The kernel table with the MFU trap marked: a kernel whose measured rate is above its
    roof (``Placements.above_roof``; the text from ``roof_warnings``) gets a warning icon and
    colour on its "Of roof" and "Achieved" cells, and a time that came with other FLOP/byte
    counts (the panel knows which: ``time_may_be_stale``) on its "Time" cell; the hover tip
    of both says what to check.

    Retyping a flagged time as it stands confirms it (``timeConfirmed``): the panel then stops
    calling it stale."""

    #: (row) the user retyped a time flagged as possibly stale, unchanged: it is the right one
    timeConfirmed = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._above = _NO_FLAGS  # per kernel: above its roof (or empty: none is)
        self._stale = _NO_FLAGS  # per kernel: time possibly stale (or empty: none is)
        self._any_flag = False
        self._texts: RoofWarnings | None = None
        self._flag_changes: tuple[np.ndarray, np.ndarray] | None = None  # rows whose flags changed
        self._warning_color = QColor(th.current_theme().error)
        self._warning_brush = QBrush(self._warning_color)
        self._icon = warning_icon(self._warning_color)

    def set_warning_color(self, color) -> None:
        """The theme's error colour, for the flags (a theme change sets it again)."""
        color = QColor(color)
        if color == self._warning_color:
            return
        self._warning_color = color
        self._warning_brush = QBrush(color)
        self._icon = warning_icon(color)
        self.announce_flags()

    #: Up to this many kernels changed in place (a cell edit, an undo of one): their rows are
    #: told to repaint instead of resetting the model, which closed the cell editor while Qt
    #: was still committing it ("commitData called with an editor that does not belong to this
    #: view") and dropped the selection.
    MAX_IN_PLACE = 16

    def set_kernels(self, kernels: tuple[Kernel, ...], placements: Placements | None) -> None:
        kernels = tuple(kernels)
        old = self.kernels()
        if len(kernels) == len(old) and kernels is not old and len(kernels):
            changed = [i for i, (a, b) in enumerate(zip(old, kernels, strict=True)) if a != b]
            if 0 < len(changed) <= self.MAX_IN_PLACE:
                self._kernels = kernels
                self._placements = placements if placements is not None and len(placements) == len(kernels) else None
                self._changed = None
                # every column: a sort proxy sorted by any of them sorts again
                self.dataChanged.emit(self.index(min(changed), 0),
                                      self.index(max(changed), self.columnCount() - 1))
                # the placements of the others may have changed too (a new roof with the edit)
                self.dataChanged.emit(self.index(0, self.ROOF), self.index(len(kernels) - 1, self.BOUND))
                return
        super().set_kernels(kernels, placements)

    def set_flags(self, above: np.ndarray, stale: np.ndarray, texts: RoofWarnings | None = None) -> bool:
        """Which kernels are above their roof (their texts from ``texts``) and which times may
        be stale, one bool per kernel (an empty array: none); returns whether a flag changed
        (a changed text alone repaints nothing: texts are read when shown)."""
        above = np.asarray(above, dtype=bool) if len(above) and above.any() else _NO_FLAGS
        stale = np.asarray(stale, dtype=bool) if len(stale) and stale.any() else _NO_FLAGS
        self._texts = texts if len(above) else None
        if np.array_equal(above, self._above) and np.array_equal(stale, self._stale):
            return False
        self._flag_changes = _changed_flags((self._above, self._stale), (above, stale))
        self._above, self._stale = above, stale
        self._any_flag = bool(len(above) or len(stale))
        return True

    def announce_flags(self) -> None:
        """Tell the view the flagged cells may have changed (after ``set_flags`` said so): the
        rows whose flags changed, when known, so that only their cells are repainted; with
        the roles a flag shows in, so that a sorted table is not sorted again (no flag is a
        sort key)."""
        n = len(self.kernels())
        changes, self._flag_changes = self._flag_changes, None
        if not n:
            return
        if changes is not None and len(changes[0]) == n:
            above, stale = changes
            self._changed = {self.NAME: above | stale, self.TIME: stale, self.ACHIEVED: above, self.FRACTION: above}
        try:
            self.dataChanged.emit(self.index(0, self.NAME), self.index(n - 1, self.FRACTION), FLAG_ROLES)
        finally:
            self._changed = None

    def above_roof(self, row: int) -> bool:
        return 0 <= row < len(self._above) and bool(self._above[row])

    def warning(self, row: int) -> str:
        """The above-the-roof warning of kernel ``row`` ("" if none)."""
        return self._texts.text(row) if self.above_roof(row) and self._texts is not None else ""

    def warning_texts(self) -> tuple[str, ...]:
        """Every kernel's warning ("" where none), in one call (an export reads them all)."""
        if self._texts is None:
            return ("",) * len(self.kernels())
        texts = self._texts.texts()
        return tuple(t if self.above_roof(i) else "" for i, t in enumerate(texts))

    def time_stale(self, row: int) -> bool:
        return 0 <= row < len(self._stale) and bool(self._stale[row])

    def above_rows(self) -> np.ndarray:
        """Rows of the kernels above their roof."""
        return np.flatnonzero(self._above)

    def stale_rows(self) -> np.ndarray:
        """Rows of the kernels whose time may be stale."""
        return np.flatnonzero(self._stale)

    def flagged_rows(self) -> list[int]:
        """Kernels with a warning of either kind."""
        n = len(self.kernels())
        flagged = np.zeros(n, dtype=bool)
        for mask in (self._above, self._stale):
            if len(mask) == n:
                flagged |= mask
        return [int(i) for i in np.flatnonzero(flagged)]

    def flag_lines(self, row: int) -> list[str]:
        lines = []
        if self.above_roof(row):
            lines.append(f"\u26a0 {self.warning(row)}")
        if self.time_stale(row):
            lines.append(f"\u26a0 {STALE_TIME_ADVICE} (or retype it as it is, to keep it)")
        return lines

    def tooltip(self, row: int) -> str:
        return "\n".join([super().tooltip(row), *self.flag_lines(row)])

    def role_data(self, row: int, col: int, role: int):
        if self._any_flag and row < len(self.kernels()):
            above = self.above_roof(row)
            stale = self.time_stale(row)
            if col == self.NAME and role == _FOREGROUND_ROLE and (above or stale):
                return self._warning_brush  # seen however far the table is scrolled
            above = above and col in (self.ACHIEVED, self.FRACTION)
            stale = stale and col == self.TIME
            if above or stale:
                if role == _DECORATION_ROLE and (stale or col == self.FRACTION):
                    return self._icon
                if role == _FOREGROUND_ROLE:
                    return self._warning_brush
        return super().role_data(row, col, role)

    def setData(self, index, value, role=Qt.ItemDataRole.EditRole):  # noqa: N802 - Qt naming
        if (role == Qt.ItemDataRole.EditRole and index.isValid() and index.column() == self.TIME
                and self.time_stale(index.row())):
            text = str(value).strip()
            if text and text == self._text(index.row(), self.TIME, digits=6).strip():
                self.timeConfirmed.emit(index.row())
                return True
        return super().setData(index, value, role)


class FlaggedKernelTableView(KernelTableView):
    """The kernel table view, its flag columns wide enough for the warning icon too."""

    ICON_COLUMNS = (KernelTableModel.TIME, KernelTableModel.FRACTION)
    WIDEST = tuple("8888%" if i == KernelTableModel.FRACTION else w for i, w in enumerate(KernelTableView.WIDEST))

    def set_column_widths(self) -> None:
        super().set_column_widths()
        extra = self.iconSize().width() if self.iconSize().width() > 0 else 16
        extra = max(extra, 16) + 6
        for col in self.ICON_COLUMNS:
            self.setColumnWidth(col, self.columnWidth(col) + extra)
        self._fit_name_column()


@dataclass(slots=True)
class _Label:
    """A label the chart shows: its text, where (real values, not log10) and how."""

    text: str
    x: float
    y: float
    anchor: tuple[float, float]
    color: QColor | None  # None: the theme's ink
    scale: float  # of the tick font
    bold: bool = False
    rotate: tuple[int, int] | None = None  # pyqtgraph's rotateAxis: the text along that direction
    angle: float = 0.0
    flat_from: float | None = None  # a flat roof's label: where its roof starts

    @property
    def kind(self) -> tuple:
        """Labels of one kind share a pool of text items (their rotation is set once)."""
        return (float(self.angle), self.rotate)


class RooflineChart(Chart):
    """A Chart that tells the panel when it restyles (theme, presentation, export), so the
    panel's own labels and points follow; and redraws its lines in place (``show_series``),
    the lines a redraw did not take back waiting hidden in the pool (up to POOL_LIMIT), so
    that the precision ceilings or L2 roof switched off come back as the same lines."""

    def _restyle(self) -> None:
        super()._restyle()
        hook = getattr(self, "restyle_hook", None)  # None while Chart.__init__ styles itself
        if hook is not None:
            hook()

    #: the names the last show_series drew
    _shown_names: frozenset[str] = frozenset()

    def show_series(self, series: Sequence[tuple[str, np.ndarray, np.ndarray, dict]]) -> None:
        """Draw exactly these series ((name, x, y, add_series' style), in this order, the
        last on top, its legend updated): what clear_series() and one add_series() per series
        draw, redrawn in place.

        A line whose name is drawn again keeps its item, shown all along (as after
        clear_series). A new name no pooled line drew takes, in order, the line of a name no
        longer drawn, renamed and shown all along (a compute roof's name carries its ridge:
        a precision or sparsity toggle renames it). The other names no longer drawn go back
        to the pool: a new name then takes the pooled line that drew it before (it holds its
        values: a ceiling switched off and on again), else one the last redraw did not draw,
        else the first; a clear would give a new name the first line cleared, which a later
        name of this redraw may want back."""
        before, self._shown_names = self._shown_names, frozenset(name for name, *_rest in series)
        gone = [name for name in self._series if name not in self._shown_names]
        pooled = {item.opts.get("name") for item in self._pool}
        fresh = [name for name, *_rest in series if name not in self._series and name not in pooled]
        for old, new in zip(gone, fresh, strict=False):
            self._series[new] = self._series.pop(old)  # add_series takes it as the same name's
        for name in gone[len(fresh):]:
            self.remove_series(name)
        pool = self._pool
        for name, x, y, style in series:
            if name not in self._series and len(pool) > 1:
                names = [item.opts.get("name") for item in pool]
                if name not in names:  # (the pooled line of this name add_series takes itself)
                    pool.insert(0, pool.pop(next((i for i, drew in enumerate(names) if drew not in before), 0)))
            self.add_series(name, x, y, **style)
        if self._alive():
            self._restack_series()  # a line taken from the pool keeps its old place in the stack
            self.update_legend()  # now: the kernels' names are placed clear of it


class RooflinePanel(PanelBase):
    kind = "roofline"
    title = "Roofline"

    def __init__(self, catalog, scenario=None, parent=None, *, undo_stack=None):
        self.catalog = catalog
        #: size of "Measure this machine" ("normal", or "tiny" in tests)
        self.measure_size = "normal"
        #: reasons the last import skipped rows ("line 3: ..."), or why the file was not read
        self.last_import_errors: list[str] = []
        self._comparison: list[tuple[str, RooflineScenario]] = []
        # what the last refresh drew, all of it from workbench.analyses.roofline
        self._analysis: RooflineAnalysis | None = None
        self._devices: tuple[DeviceRoofs, ...] = ()
        self._placements: Placements | None = None
        self._extent: roofline_analysis.Extent | None = None  # the axes drawn (widened by compared scenarios)
        self._lines: tuple = ()  # per device, its roofs' lines within the axes drawn
        #: the saved scenarios' analyses: (comparison list, catalog revision, [(slot, name, analysis)])
        self._compared_kept: tuple | None = None
        self._range_key: tuple | None = None
        self._asked_shown: tuple | None = None  # the axes last asked that the view took as asked
        #: the axes as set when they were held wider than the analysis asked (None: as asked)
        self._held: roofline_analysis.Extent | None = None
        self._overlays: list[tuple[pg.TextItem, str | None, float, tuple]] = []
        self._text_pool: dict[tuple, list[pg.TextItem]] = {}
        self._builder: KernelBuilderDialog | None = None
        #: kernels (as values) whose time came with other FLOP/byte counts: an edit of the counts
        #: left the time as it was. Undo brings back the old value, not in the set; redo the new.
        self._stale_times: set[Kernel] = set()
        #: what the kernel flags were last worked out for (_update_flags), and how many times
        self._flags_for: tuple = (None, None)
        self.flag_updates = 0
        self._hardware_items: list[tuple[str, str]] | None = None  # (name, key) of the catalog's presets
        self._synced_for: dict[str, tuple] = {}  # what each part of the form was last filled for
        self._catalog_version = 0
        self._shown_rows: tuple | None = None  # what the results table shows (rows, warning colour)
        self._marked_rows: tuple | None = None  # its rows in the warning colour (_mark_warning_rows)
        self._log_intensity: tuple[np.ndarray, np.ndarray] | None = None  # (intensity, its log10)
        # PanelBase.__init__ builds the form, chart and kernel table (_build) before it syncs the
        # fields, so nothing here runs on a half-built panel
        super().__init__(scenario if scenario is not None else RooflineScenario(), parent, undo_stack=undo_stack)
        self.measurement = MachineMeasurement(self)
        self.measurement.progress.connect(self._on_measure_progress)
        self.measurement.succeeded.connect(self._on_measured)
        self.measurement.failed.connect(self._on_measure_failed)
        self.measurement.cancelled.connect(self._on_measure_cancelled)
        self.measurement.finished.connect(self._on_measure_finished)
        catalog.changed.connect(self._catalog_changed)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)
        self.refresh()

    # -- building ------------------------------------------------------------------------------
    def _build(self) -> None:
        super()._build()
        self._build_form()
        self._build_chart()
        self._build_kernels()

    def _build_form(self) -> None:
        self.hardware_combo = QComboBox(self.form_widget)
        self.hardware_combo.setObjectName("field.hardware")
        self.hardware_combo.setToolTip("The device whose roofs the kernels are placed under")
        self.hardware_combo.activated.connect(self._primary_picked)
        self.form.addRow("Hardware", self.hardware_combo)
        self.compare_combos: list[QComboBox] = []
        for i in range(RooflineScenario.MAX_HARDWARE - 1):
            combo = QComboBox(self.form_widget)
            combo.setObjectName(f"field.compare{i + 1}")
            combo.setToolTip("Overlay another preset's roofs on the same axes")
            combo.setAccessibleName(f"Compare with, device {i + 1}")
            combo.activated.connect(lambda _i, slot=i: self._compare_picked(slot))
            self.form.addRow("Compare with" if i == 0 else "", combo)
            self.compare_combos.append(combo)
        self.precision_combo = self.add_choice("precision", [], "Precision")
        self.precision_combo.setToolTip("Only the precisions the primary preset lists")
        self.sparse_check = self.add_check("sparse", "2:4 sparsity")
        self.sparse_check.setToolTip("Structured 2:4 sparsity: raises the compute roof by the preset's factor; "
                                     "the memory roof stays")
        self.ceilings_check = self.add_check("show_precision_ceilings", "Precision ceilings")
        self.ceilings_check.setToolTip("Draw a flat roof for every other precision the preset has")
        self.l2_check = self.add_check("show_l2", "L2 roof")

        line = QFrame(self.form_widget)
        line.setFrameShape(QFrame.Shape.HLine)
        line.setFrameShadow(QFrame.Shadow.Sunken)
        self.form.addRow(line)
        self.measure_button = QPushButton("Measure this machine", self.form_widget)
        self.measure_button.setObjectName("measureButton")
        self.measure_button.setToolTip("Short numpy micro-benchmarks (STREAM triad for memory bandwidth, "
                                       "matmul for FLOP/s, float32 and float64) in the background; adds "
                                       "'This machine (measured)' as a preset")
        self.measure_button.clicked.connect(self.start_measurement)
        self.measure_cancel = QPushButton("Cancel", self.form_widget)
        self.measure_cancel.setObjectName("measureCancel")
        self.measure_cancel.clicked.connect(self.cancel_measurement)
        self.measure_cancel.setVisible(False)
        self.measure_progress = QProgressBar(self.form_widget)
        self.measure_progress.setObjectName("measureProgress")
        self.measure_progress.setRange(0, 1000)
        self.measure_progress.setTextVisible(False)
        self.measure_progress.setVisible(False)
        self.measure_status = QLabel(self.form_widget)
        self.measure_status.setObjectName("measureStatus")
        self.measure_status.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.measure_button, 1)
        row.addWidget(self.measure_cancel)
        self.form.addRow(row)
        self.form.addRow(self.measure_progress)
        self.form.addRow(self.measure_status)

    def _build_chart(self) -> None:
        self.chart = RooflineChart(title=self.title, x_label="Arithmetic intensity", x_unit="FLOP/B",
                                   y_label="Attainable", y_unit="FLOP/s", log_x=True, log_y=True)
        self.chart.setObjectName("rooflineChart")
        self.chart.enable_hover(readout=True, formatter=self.hover_text)
        self.add_chart(self.chart)
        plot = self.chart.getPlotItem()
        self.points = KernelScatter(pxMode=True, hoverable=True, tip=self._point_tip, name="kernels")
        self.points.setZValue(30)
        self.points.sigClicked.connect(self._points_clicked)
        plot.addItem(self.points)
        self.compared_points = KernelScatter(pxMode=True, hoverable=True, tip=self._compared_tip)
        self.compared_points.setZValue(29)
        plot.addItem(self.compared_points)
        self.ridge_marker = KernelScatter(pxMode=True)  # pyqtgraph's scatter, painted as KernelScatter is
        self.ridge_marker.setZValue(35)
        plot.addItem(self.ridge_marker)
        self.label_leaders = pg.PlotCurveItem()  # lines from names placed away from their points
        self.label_leaders.setZValue(44)
        plot.addItem(self.label_leaders, ignoreBounds=True)
        self._compared_names: list[str] = []
        self.chart.restyle_hook = self._style_overlays
        # the names beside the points are placed in pixels: again when those change
        plot.getViewBox().sigResized.connect(self._view_resized)
        plot.getViewBox().sigRangeChanged.connect(self._place_point_labels)

    def _build_kernels(self) -> None:
        box = QWidget()
        box.setObjectName("kernelsBox")
        self.kernels_box = box
        layout = QVBoxLayout(box)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(4)
        bar = QHBoxLayout()
        title = QLabel("<b>Kernels</b>")
        bar.addWidget(title)
        self.kernel_count = QLabel()
        self.kernel_count.setObjectName("kernelCount")
        bar.addWidget(self.kernel_count, 1)
        layout.addLayout(bar)
        # the buttons stand in a column beside the table, as in a list editor: in a row above
        # it they needed ~840 px and squeezed the table and the results on a 1366 px screen
        side = QVBoxLayout()
        side.setSpacing(4)
        self.builder_button = self._button("Add from shapes…", "kernelAdd",
                                           "GEMM, elementwise, layer norm, attention (unfused or fused), or counts",
                                           self.open_builder, side)
        self.seed_button = self._button("Seed examples", "kernelSeed",
                                        "Add the classic examples: elementwise add, layer norm, a large GEMM, "
                                        "attention unfused and fused", self.seed_examples, side)
        self.import_button = self._button("Import CSV…", "kernelImport",
                                          "Kernels from a CSV (name, flops, bytes[, time_s]) or an "
                                          "Nsight Compute export (ncu --csv)", self.import_kernels, side)
        self.remove_button = self._button("Remove", "kernelRemove", "Remove the selected kernels (Delete)",
                                          self.remove_selected_kernels, side)
        side.addStretch(1)
        self.kernel_model = FlaggedKernelModel(self)
        self.kernel_model.kernelEdited.connect(self._kernel_edited)
        self.kernel_model.editRejected.connect(self.show_status)
        self.kernel_model.timeConfirmed.connect(self._time_confirmed)
        self.kernel_proxy = KernelSortProxy(self)
        self.kernel_proxy.setSourceModel(self.kernel_model)
        self.kernel_table = FlaggedKernelTableView(box)
        self.kernel_table.setModel(self.kernel_proxy)
        self.kernel_table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.kernel_table.set_column_widths()
        self.kernel_table.selectionModel().selectionChanged.connect(self._selection_changed)
        self.kernel_table.deleteRequested.connect(self.remove_selected_kernels)
        table_row = QHBoxLayout()
        table_row.addWidget(self.kernel_table, 1)
        table_row.addLayout(side)
        layout.addLayout(table_row, 1)
        # what the last import said: rows not imported, notes, and the ncu command that
        # collects missing counters (ImportReport), with a Dismiss button
        self.import_report = ImportReport()
        self.import_errors_label = self.import_report.head
        self.import_errors_label.setObjectName("importErrorsLabel")
        self.import_errors = self.import_report.problems
        self.import_errors.setObjectName("importErrors")
        dismiss = QPushButton("Dismiss")
        dismiss.setObjectName("importErrorsDismiss")
        dismiss.clicked.connect(self.clear_import_errors)
        self.import_errors_box = QWidget()
        errors_layout = QHBoxLayout(self.import_errors_box)
        errors_layout.setContentsMargins(0, 0, 0, 0)
        errors_layout.addWidget(self.import_report, 1)
        errors_layout.addWidget(dismiss, 0, Qt.AlignmentFlag.AlignTop)
        self.import_errors_box.setVisible(False)
        layout.addWidget(self.import_errors_box)

        # results and kernels side by side under the chart
        self.bottom = QSplitter(Qt.Orientation.Horizontal)
        self.bottom.setObjectName("resultsSplitter")
        self.bottom.setChildrenCollapsible(False)
        self.results.keep_content_width = True
        # wide enough from the start for the peak's label at every precision, dense and sparse
        self.results.reserve_quantities(_peak_label(p, sparse) for p in PRECISION_LABELS
                                        for sparse in (False, True))
        self.bottom.addWidget(self.results)  # moves it out of the centre splitter
        self.bottom.addWidget(box)
        # the results keep the width of their text (their minimum); the kernels take the rest
        self.bottom.setStretchFactor(0, 0)
        self.bottom.setStretchFactor(1, 1)
        self.bottom.setSizes([1, 10_000])
        self.center.addWidget(self.bottom)
        self.center.setStretchFactor(0, 3)
        self.center.setStretchFactor(1, 1)
        self.center.setSizes([700, 290])

    def _button(self, text, name, tip, slot, layout) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.setToolTip(tip)
        button.clicked.connect(lambda _checked=False: slot())
        layout.addWidget(button)
        return button

    # -- form <-> scenario ---------------------------------------------------------------------
    def _hardware(self, key: str) -> Hardware | None:
        return self.catalog.get(key) if key in self.catalog else None

    @staticmethod
    def _fill_combo(combo: QComboBox, items: list[tuple[str, str]], selected: str) -> None:
        """Give ``combo`` these (text, data) items with ``selected`` current, without signals.
        Unchanged items are not cleared and added again (every edit syncs the form, and a
        refilled combo box repaints)."""
        set_choices(combo, items)
        combo.blockSignals(True)
        index = max(0, combo.findData(selected))
        if combo.currentIndex() != index:
            combo.setCurrentIndex(index)
        combo.blockSignals(False)

    def _fill_hardware_combo(self, combo: QComboBox, selected: str, allow_none: bool) -> None:
        if self._hardware_items is None:  # made again when the catalog changes
            self._hardware_items = [(hw.name, hw.key) for hw in self.catalog.items()]
        items = [("none", NONE_KEY)] if allow_none else []
        items += self._hardware_items
        if selected and selected not in {data for _text, data in items}:
            items.append((f"{selected} (not in this project)", selected))
        self._fill_combo(combo, items, selected)

    def _sync_fields(self) -> None:
        # Every edit syncs the form: each part is filled again only when what it shows changed
        # (the device combo boxes, the precisions and sparsity of the primary, its cache and
        # ceiling options); a precision or a ceiling toggled leaves the others as they are.
        s = self.scenario()
        version = self._catalog_version
        synced = self._synced_for
        if synced.get("devices") != (s.hardware, version) or not self._combos_show(s):
            synced["devices"] = (s.hardware, version)
            self._fill_hardware_combo(self.hardware_combo, s.primary, allow_none=False)
            for i, combo in enumerate(self.compare_combos):
                key = s.hardware[i + 1] if i + 1 < len(s.hardware) else NONE_KEY
                self._fill_hardware_combo(combo, key, allow_none=True)
        hw = self._hardware(s.primary)
        if synced.get("precision") != (s.primary, s.precision, version):
            synced["precision"] = (s.primary, s.precision, version)
            precisions = hw.precisions if hw is not None else (s.precision,)
            if s.precision not in precisions:
                precisions = (*precisions, s.precision)
            self._fill_combo(self.precision_combo, [(PRECISION_LABELS[p], p) for p in precisions], s.precision)
            has_sparse = hw is not None and s.precision in hw.precisions and hw.supports_sparsity(s.precision)
            tip = ("Structured 2:4 sparsity: raises the compute roof by the preset's factor; the memory roof stays"
                   if has_sparse else f"{hw.name if hw else s.primary} has no 2:4 sparse rate at "
                                      f"{PRECISION_LABELS[s.precision]}")
            if self.sparse_check.toolTip() != tip:  # (a tip set, even the same, is an event)
                self.sparse_check.setToolTip(tip)
        if synced.get("options") != (s.primary, s.show_l2, s.show_precision_ceilings, version):
            synced["options"] = (s.primary, s.show_l2, s.show_precision_ceilings, version)
            caches = hw.cache_levels if hw is not None else ()
            names = [m.name for m in caches]
            text = "L2 roof" if names in ([], ["L2"]) else ("Cache roofs" if len(names) > 1 else f"{names[0]} roof")
            if self.l2_check.text() != text:
                self.l2_check.setText(text)
            self.l2_check.setEnabled(bool(caches) or s.show_l2)
            if caches:
                listed = ", ".join(f"{m.name} {_q(m.bandwidth, 'B/s')}" for m in caches)
                self.l2_check.setToolTip(f"Draw the cache bandwidth roof{'s' if len(caches) > 1 else ''} ({listed}): "
                                         "what a kernel can attain when its bytes come from that cache")
            else:
                self.l2_check.setToolTip("This preset lists no L2 (or other cache) bandwidth. Duplicate it in "
                                         "Hardware presets and add the level with its source to draw one")
            self.ceilings_check.setEnabled(hw is None or len(hw.precisions) > 1 or s.show_precision_ceilings)
        super()._sync_fields()

    def _combos_show(self, s: RooflineScenario) -> bool:
        """Whether the device combo boxes show ``s`` (a refused pick leaves one on another)."""
        keys = [s.primary, *s.hardware[1:], *[NONE_KEY] * (len(self.compare_combos) + 1 - len(s.hardware))]
        return all(c.currentData() == k for c, k in zip([self.hardware_combo, *self.compare_combos], keys,
                                                        strict=True))

    def _catalog_changed(self) -> None:
        self._hardware_items = None
        self._catalog_version += 1
        self._sync_fields()
        self._range_key = None
        self.refresh()

    def _push(self, text: str, **changes) -> bool:
        """One undo step that never merges with the next (a kernel or a hardware pick)."""
        try:
            new = self.scenario().with_changes(**changes)
        except ValueError as exc:
            self.show_validation_error(exc, changes)
            return False
        self.clear_error()
        push_scenario_edit(self._stack, self, new, text, mergeable=False)
        return True

    def _precision_for(self, hw: Hardware | None, wanted: str) -> str:
        # the one fallback the whole window uses (the toolbar and the plan too)
        return wanted if hw is None else precision_fallback(hw, wanted)

    def set_primary_hardware(self, key: str) -> bool:
        """Make ``key`` the primary preset (an undo step); a precision it lacks is replaced."""
        s = self.scenario()
        if key == s.primary:
            return False
        hw = self._hardware(key)
        keys = (key, *(k for k in s.hardware[1:] if k != key))[: RooflineScenario.MAX_HARDWARE]
        changes = {"hardware": keys}
        precision = self._precision_for(hw, s.precision)
        text = f"Change hardware to {self.catalog.name(key)}"
        if precision != s.precision:
            changes["precision"] = precision
            text += f" ({PRECISION_LABELS[precision]})"
        return self._push(text, **changes)

    def set_compared_hardware(self, keys: Sequence[str]) -> bool:
        """Overlay these presets (up to three, besides the primary) as one undo step."""
        s = self.scenario()
        clean: list[str] = []
        for k in keys:
            if k and k != s.primary and k not in clean:
                clean.append(k)
        clean = clean[: RooflineScenario.MAX_HARDWARE - 1]
        new = (s.primary, *clean)
        if new == s.hardware:
            return False
        added = [k for k in clean if k not in s.hardware]
        removed = [k for k in s.hardware[1:] if k not in clean]
        if len(added) == 1 and not removed:
            text = f"Compare with {self.catalog.name(added[0])}"
        elif len(removed) == 1 and not added:
            text = f"Stop comparing with {self.catalog.name(removed[0])}"
        else:
            text = "Change compared hardware"
        return self._push(text, hardware=new)

    def _primary_picked(self, index: int) -> None:
        key = self.hardware_combo.itemData(index)
        if self.edit_context("hardware", key, "hardware"):
            self._sync_fields()  # the context brings the new device back (or refused it)
            return
        if not self.set_primary_hardware(key):
            self._sync_fields()

    def _compare_picked(self, slot: int) -> None:
        keys = [c.currentData() for c in self.compare_combos]
        if not self.set_compared_hardware(keys):
            self._sync_fields()

    def set_scenario(self, scenario) -> None:
        if scenario.primary != self.scenario().primary or scenario.hardware != self.scenario().hardware:
            self._range_key = None
        super().set_scenario(scenario)

    #: edited here, these change the run plan (the primary device too: _primary_picked);
    #: the plan's device, precision and sparsity come back by workbench.workspace.follow_plan
    CONTEXT_FIELDS = {"precision": "precision", "sparse": "sparse"}

    def adopt_as_plan(self) -> bool:
        """The roofline's main device, precision and sparsity become the plan's (one step)."""
        if self.context_sink is None or self._scenario is None:
            return False
        from ui.commands import push_override

        s = self._scenario
        self._stack.beginMacro("Make this the plan")
        try:
            self.context_sink({"hardware": s.primary, "precision": s.precision, "sparse": s.sparse})
            if self._override_context:
                push_override(self._stack, self, False)
        except ValueError as exc:
            self.show_status(f"Not made the plan. {exc}")
            return False
        finally:
            self._stack.endMacro()
        return True

    # -- kernels ------------------------------------------------------------------------------
    def kernels(self) -> tuple[Kernel, ...]:
        return self.scenario().kernels

    def add_kernels(self, kernels: Sequence[Kernel], text: str | None = None) -> bool:
        kernels = tuple(kernels)
        if not kernels:
            return False
        if text is None:
            text = f"Add kernel '{kernels[0].name}'" if len(kernels) == 1 else f"Add {len(kernels):,} kernels"
        return self._push(text, kernels=self.kernels() + kernels)

    def add_kernel(self, kernel: Kernel) -> bool:
        return self.add_kernels([kernel])

    def seed_examples(self) -> bool:
        """Add the classic examples (those not already in the table) as one step."""
        have = set(self.kernels())
        new = [k for k in seed_examples() if k not in have]
        if not new:
            self.show_status("The example kernels are already in the table")
            return False
        return self.add_kernels(new, "Add example kernels")

    def remove_kernels(self, rows: Sequence[int]) -> bool:
        rows = sorted({r for r in rows if 0 <= r < len(self.kernels())})
        if not rows:
            return False
        kernels = self.kernels()
        drop = set(rows)
        text = f"Remove kernel '{kernels[rows[0]].name}'" if len(rows) == 1 else f"Remove {len(rows):,} kernels"
        return self._push(text, kernels=tuple(k for i, k in enumerate(kernels) if i not in drop))

    def selected_rows(self) -> list[int]:
        """Selected kernels as rows of the scenario's kernel list."""
        # from the selection's ranges, mapped with the proxy's order in numpy: selectedRows()
        # asks every cell of every row (10,000 rows selected took seconds)
        selection = self.kernel_table.selectionModel().selection()
        if selection.isEmpty():
            return []  # (every redraw asks, mostly with nothing selected)
        order = self.kernel_proxy.source_rows()
        picked = np.zeros(len(order), dtype=bool)
        for span in selection:
            top, bottom = max(span.top(), 0), min(span.bottom(), len(order) - 1)
            if top <= bottom:
                picked[top:bottom + 1] = True
        return sorted(int(r) for r in order[picked])

    def select_kernel(self, row: int) -> None:
        index = self.kernel_proxy.mapFromSource(self.kernel_model.index(row, 0))
        if index.isValid():
            self.kernel_table.selectRow(index.row())
            self.kernel_table.scrollTo(index)

    def remove_selected_kernels(self) -> bool:
        return self.remove_kernels(self.selected_rows())

    def _kernel_edited(self, row: int, kernel: Kernel) -> None:
        kernels = list(self.kernels())
        if not 0 <= row < len(kernels):
            return
        old = kernels[row]
        kernels[row] = kernel
        if time_may_be_stale(old, kernel) or (old in self._stale_times and kernel.time_s == old.time_s):
            self._stale_times.add(kernel)  # the time was measured for other counts
        text = f"Rename kernel '{old.name}' to '{kernel.name}'" if old.name != kernel.name else f"Edit kernel '{kernel.name}'"
        if self._push(text, kernels=tuple(kernels)):
            self.select_kernel(row)

    def open_builder(self) -> KernelBuilderDialog:
        """The kernel builder (non-modal; one instance)."""
        if self._builder is None:
            self._builder = KernelBuilderDialog(self)
            self._builder.kernelBuilt.connect(self.add_kernel)
        self._builder.show()
        self._builder.raise_()
        return self._builder

    def import_kernels(self, path=None):
        """Import kernels from a CSV or an Nsight Compute export; asks for the file without
        ``path``. Returns the ImportResult (None if nothing was read)."""
        if path is None:
            path, _filter = QFileDialog.getOpenFileName(
                self, "Import kernels", "", "CSV files (*.csv *.txt);;All files (*)")
            if not path:
                return None
        return self.import_kernels_from(path)

    def import_kernels_from(self, path):
        path = Path(path)
        try:
            result, fmt = read_kernel_file(path)
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self._show_import_errors(f"Could not import {path.name}:", [reason])
            return None
        if result.kernels:
            n = len(result.kernels)
            self.add_kernels(result.kernels, f"Import {n:,} kernel{'s' if n != 1 else ''} from {path.name}")
        problems, notes = import_report_lines(result)
        if problems or notes or result.missing_counters or not result.kernels:
            self.import_report.show_result(result, fmt, path.name)
            self.last_import_errors = problems or ([] if result.kernels else [self.import_report.head.text()])
            self.import_errors_box.setVisible(True)
        else:
            self.clear_import_errors()
        return result

    def _show_import_errors(self, head: str, errors: list[str]) -> None:
        """A file that could not be read at all: its name and why."""
        self.last_import_errors = list(errors) if errors else [head]
        self.import_report.clear()
        self.import_report.head.setText(head)
        self.import_report.head.setStyleSheet(f"color: {th.current_theme().error};")
        self.import_report.problems.addItems(errors)
        self.import_report.problems.setVisible(bool(errors))
        self.import_report.setVisible(True)
        self.import_errors_box.setVisible(True)

    def clear_import_errors(self) -> None:
        self.last_import_errors = []
        self.import_report.clear()
        self.import_errors_box.setVisible(False)

    def import_error_texts(self) -> list[str]:
        """The reasons listed in the panel (what a person reads)."""
        return [self.import_errors.item(i).text() for i in range(self.import_errors.count())]

    # -- measuring this machine ----------------------------------------------------------------
    def start_measurement(self) -> bool:
        if not self.measurement.start(self.measure_size):
            return False
        self.measure_button.setEnabled(False)
        self.measure_cancel.setVisible(True)
        self.measure_cancel.setEnabled(True)
        self.measure_progress.setValue(0)
        self.measure_progress.setVisible(True)
        self.measure_status.setStyleSheet("")
        self.measure_status.setText("Starting…")
        return True

    def cancel_measurement(self) -> None:
        self.measurement.cancel()
        self.measure_cancel.setEnabled(False)
        self.measure_status.setText("Cancelling…")

    def shutdown(self) -> None:
        """Stop a running measurement and wait for its thread (before the panel goes away)."""
        self.measurement.shutdown()

    def closeEvent(self, event):  # noqa: N802 - Qt naming
        self.shutdown()
        super().closeEvent(event)

    def _on_measure_progress(self, fraction: float, message: str) -> None:
        self.measure_progress.setValue(int(round(max(0.0, min(1.0, fraction)) * 1000)))
        self.measure_status.setText(message)

    def _on_measured(self, hw: Hardware) -> None:
        key = self.catalog.add_user_preset(hw)
        hw = self._hardware(key) or hw
        fp32 = hw.peak_flops("fp32") if "fp32" in hw.precisions else None
        self.measure_status.setStyleSheet("")
        parts = [f"Measured: memory {_q(hw.mem_bw, 'B/s')}"]
        if fp32:
            parts.append(f"FP32 {_q(fp32, 'FLOP/s')}")
        if "fp64" in hw.precisions:
            parts.append(f"FP64 {_q(hw.peak_flops('fp64'), 'FLOP/s')}")
        self.measure_status.setText(", ".join(parts) + ". Added as a preset.")
        s = self.scenario()
        keys = (key, *(k for k in s.hardware if k != key))[: RooflineScenario.MAX_HARDWARE]
        precision = self._precision_for(hw, s.precision)
        if "fp32" in hw.precisions and s.precision not in hw.precisions:
            precision = "fp32"
        self._push(f"Use {hw.name}", hardware=keys, precision=precision)

    def _on_measure_failed(self, message: str) -> None:
        self.measure_status.setStyleSheet(f"color: {th.current_theme().error};")
        self.measure_status.setText(f"Measurement failed: {message}")

    def _on_measure_cancelled(self) -> None:
        self.measure_status.setStyleSheet("")
        self.measure_status.setText("Measurement cancelled; nothing was added.")

    def _on_measure_finished(self) -> None:
        self.measure_button.setEnabled(True)
        self.measure_cancel.setVisible(False)
        self.measure_progress.setVisible(False)

    # -- comparison with saved scenarios -----------------------------------------------------
    def set_comparison(self, items: Sequence[tuple[str, RooflineScenario]]) -> None:
        """Overlay saved scenarios: their primary roofs dashed, their kernels as hollow points."""
        self._comparison = [(str(name), scen) for name, scen in items if isinstance(scen, RooflineScenario)]
        self._range_key = None
        self.refresh()

    def clear_comparison(self) -> None:
        self.set_comparison([])

    def comparison(self) -> list[tuple[str, RooflineScenario]]:
        return list(self._comparison)

    # -- the model's numbers (workbench.analyses.roofline's) ---------------------------------------
    def devices(self) -> list[DeviceRoofs]:
        """What the chart shows per device, primary first."""
        return list(self._devices)

    def primary_roofs(self) -> tuple[Roof, ...] | None:
        return self._devices[0].roofs if self._devices else None

    def placements(self) -> Placements | None:
        return self._placements

    def ridge_label_text(self) -> str:
        return self._ridge_label.toPlainText() if getattr(self, "_ridge_label", None) is not None else ""

    def _compared_analyses(self, problems: list[str]) -> list:
        """(slot, name, analysis) of each saved scenario overlaid whose primary device has roofs
        (the others are named in ``problems``): the same analysis as the panel's own, of that
        scenario as it was saved (no plan), kept while the list and the presets stay."""
        revision = getattr(self.catalog, "revision", self._catalog_version)
        kept = self._compared_kept
        if kept is None or kept[0] is not self._comparison or kept[1] != revision:
            analysed = [(i, name, roofline_analysis.analyse(scen, None, self.presets()))
                        for i, (name, scen) in enumerate(self._comparison)]
            kept = self._compared_kept = (self._comparison, revision, analysed)
        out = []
        for i, name, a in kept[2]:
            if a.primary.roofs is None:
                problems.append(f"{name}: {a.primary.problem}")
            else:
                out.append((i, name, a))
        return out

    # -- drawing ------------------------------------------------------------------------------
    def refresh(self) -> None:
        s = self.scenario()
        a = self.analysis()
        self._analysis = a
        self._devices, self._placements = a.devices, a.placements
        problems = list(a.problems)
        compared = self._compared_analyses(problems)
        if compared:  # the saved scenarios' roofs and kernels widen the axes
            self._extent = roofline_analysis.chart_extent(a, [c for _i, _name, c in compared])
            self._lines = a.lines_within(self._extent)
            compared = [(i, name, c, c.lines_within(self._extent)[0][:2]) for i, name, c in compared]
        else:
            self._extent, self._lines = a.extent, a.lines
        # the flags first: the points' names carry them
        flags_changed = self._update_flags(s)
        self._draw_roofs(s, compared)
        self._draw_points()
        self._draw_compared_points(compared)
        self._update_title(s)
        self.kernel_model.set_kernels(s.kernels, self._placements)
        if flags_changed:
            self.kernel_model.announce_flags()
        n = len(s.kernels)
        self.kernel_count.setText(f"{n:,}" if n else "none yet: add from shapes, seed the examples or import")
        self.remove_button.setEnabled(n > 0)
        self._update_results()
        self.chart.refresh_hover()  # a readout under a resting mouse reads the new roofs
        if problems:
            self.show_status("; ".join(problems))

    def _update_flags(self, s: RooflineScenario) -> bool:
        """The MFU trap, marked: which kernels sit above their roof (the analysis says, and why)
        and which times came with other counts. Returns whether the flags changed.

        Shown again only when what they depend on changed: the analysis keeps the same flags
        (one object) while the kernels and the primary roof and caches stay; the stale times
        follow the kernels and the confirmed/stale times. A display option (ceilings, L2 roof,
        a compared device) changes neither."""
        a = self._analysis
        above_key = (a.warnings,) if a.warnings is not None else None
        stale_key = (s.kernels, frozenset(self._stale_times)) if self._stale_times else None
        last_above, last_stale = self._flags_for
        if _same_key(above_key, last_above) and _same_key(stale_key, last_stale):
            return False
        self.flag_updates += 1
        above, texts = self.kernel_model._above, self.kernel_model._texts
        if not _same_key(above_key, last_above):
            above, texts = (_NO_FLAGS, None) if above_key is None else (a.above_roof, a.warnings)
        stale = self.kernel_model._stale
        if not _same_key(stale_key, last_stale):
            stale = _NO_FLAGS
            if stale_key is not None:
                times = self._stale_times
                stale = np.fromiter((k in times for k in s.kernels), dtype=bool, count=len(s.kernels))
        self._flags_for = (above_key, stale_key)
        return self.kernel_model.set_flags(above, stale, texts)

    def kernel_warnings(self) -> dict[str, list[str]]:
        """{kernel name: what the table and its tip flag} for every flagged kernel (for tests
        and for reading the flags without hovering)."""
        m = self.kernel_model
        m.warning_texts()  # all at once: one call, not one per flagged kernel
        return {m.kernels()[i].name: [line.removeprefix("\u26a0 ") for line in m.flag_lines(i)]
                for i in m.flagged_rows()}

    def _time_confirmed(self, row: int) -> None:
        kernels = self.kernels()
        if 0 <= row < len(kernels):
            self._stale_times.discard(kernels[row])  # the flag goes: the time is the user's word
            self.refresh()

    def _update_range(self) -> bool:
        """The axes the analysis worked out; set only when they change (a user's zoom survives
        edits that do not move things), and held while what is drawn stays well inside them (a
        ceiling switched on and off again leaves the axes, and 10,000 kernels' places, still).
        Returns whether they are held wider than asked: the roofs are then drawn to their edges."""
        e = self._extent
        key = (e.xmin, e.xmax, e.ymin, e.ymax)
        if key != self._range_key:
            self._range_key = key
            self.chart.set_log_range(*key, hold=True)
            (x0, x1), (y0, y1) = self.chart.visible_range()
            # A bound the view shows as asked, now or when it last took the axes as asked, is
            # the one asked: read back from the view it is a few ulps off, and the roofs drawn to
            # it got new values on every toggle of a ceiling (held, then not).
            def as_asked(shown: float, *asked: float) -> float:
                return next((a for a in asked if math.isclose(shown, a, rel_tol=1e-9)), shown)

            held = tuple(map(as_asked, (x0, x1, y0, y1), key, self._asked_shown or key))
            if held == key:
                self._asked_shown = key
            self._held = None if held == key else roofline_analysis.Extent(*held)
        if self._held is None or self._held == e:
            return False
        self._extent = self._held
        self._lines = self._analysis.lines_within(self._held)
        return True

    def _device_color(self, slot: int) -> QColor:
        color = DEVICE_COLORS[slot % len(DEVICE_COLORS)]
        theme = self.chart.theme()
        return QColor(theme.ink) if color is None else theme.tone(color)

    def _draw_roofs(self, s: RooflineScenario, compared) -> None:
        # The axes, then the roof lines, redrawn in place: the chart keeps each line that is
        # drawn again (new values only where they changed) and renames the legend entries
        # (their names carry the ridge) instead of deleting and re-creating them.
        self._drawing = True
        try:
            if self._update_range() and compared:
                compared = [(i, name, c, c.lines_within(self._extent)[0][:2]) for i, name, c, _ in compared]
            labels, ridge = self._draw_roof_lines(s, compared)
            # the roofs' labels and the kernels' names at once, so that each text finds the item
            # that shows it (_show_labels)
            points = self._point_label_specs()
            items = self._show_labels([*labels, *(label for label, _row in points)])
        finally:
            self._drawing = False
        self._ridge_label = next((item for item, label in zip(items, labels, strict=False) if label is ridge), None)
        self._point_labels = [(item, row) for item, (_label, row) in zip(items[len(labels):], points, strict=True)]
        self._hide_unused_labels()
        # the kernels' names last: they keep clear of the lines, labels and legend just drawn
        self._place_point_labels()  # also clears the leader lines when there is nothing to name

    def _draw_roof_lines(self, s: RooflineScenario, compared) -> tuple[list[_Label], _Label | None]:
        """Draw the roofs; returns their labels, for the caller to show, and which is the ridge's."""
        series: list[tuple[str, np.ndarray, np.ndarray, dict]] = []  # drawn at once (show_series)

        def draw(name: str, x, y, **style) -> None:
            series.append((name, x, y, style))

        self._clear_overlays()
        self._ridge_drawn = None  # (text, ridge, peak, the roofs crossing its drop line), with its label
        e = self._extent
        xmin, xmax, ymin = e.xmin, e.xmax, e.ymin
        primary = self._devices[0]
        several = len(self._devices) > 1 or bool(compared)
        ridge_xy = []
        legend_entries = []
        labels: list[_Label] = []
        ridge = None
        for slot, d in enumerate(self._devices):
            if d.roofs is None:
                continue
            color = self._device_color(slot)
            name = _short(d.hardware.name)
            width = 3.0 if slot == 0 else 2.5
            legend_name = f"{name}: ridge {_q(d.compute.ridge, 'FLOP/B')}"
            slope = _joined_slope(d, self._lines[slot])
            for line in self._lines[slot]:
                roof, x, y = line.roof, line.drawn_x, line.drawn_y
                if x.size == 0:
                    continue
                if roof is d.compute:
                    if slope is not None:
                        # the memory slope and the compute roof in one pen: one line, the
                        # slope up to the ridge and on flat (one item to move on every edit)
                        x, y = np.concatenate([slope.drawn_x[:-1], x]), np.concatenate([slope.drawn_y[:-1], y])
                    # legend entries are added last (below): the legend is rebuilt per entry
                    legend_entries.append((legend_name, x, y, color, width, "solid"))
                elif roof is d.memory:
                    if slope is None:
                        draw(f"{name} {roof.label}", x, y, color=color, width=width, in_legend=False)
                elif roof.kind == "compute":  # another precision's ceiling
                    draw(f"{name} {roof.label}", x, y, color=color, width=1.5, style="dot", in_legend=False)
                    labels.append(_Label(f"{roof.label.replace(' peak', '')} {_q(roof.peak_flops, 'FLOP/s')}",
                                         x[-1], y[-1], (1.0, 1.0), None, 0.9, flat_from=float(x[0])))
                else:  # a cache level (L2 or another): its slope, then flat at the peak up to
                    # the device-memory ridge, where the drawn compute roof takes over
                    draw(f"{name} {roof.label}", x, y, color=color, width=1.5, style="dash", in_legend=False)
                    self._slope_label(labels, f"{roof.label} {_q(roof.mem_bw, 'B/s')}", roof, xmin, xmax)
            ridge_xy.append((d.compute.ridge, d.compute.peak_flops, color, slot))
        for i, name, saved, lines in compared:
            d = saved.primary
            color = QColor(COMPARISON_COLORS[i % len(COMPARISON_COLORS)])
            sparse = "2:4 sparse" if d.compute.sparse else "dense"
            legend_name = (f"{name} (saved: {_short(d.hardware.name)}, {PRECISION_LABELS[saved.scenario.precision]} "
                           f"{sparse})")
            # its slope and flat roof in one dashed line, as the panel's own roofs: two lines
            # started their dashes afresh at the ridge
            slope = _joined_slope(d, lines)
            for line in lines:
                roof, x, y = line.roof, line.x, line.y
                if not x.size:
                    continue
                if roof is d.compute:
                    if slope is not None:
                        x, y = np.concatenate([slope.x[:-1], x]), np.concatenate([slope.y[:-1], y])
                    legend_entries.append((legend_name, x, y, color, 2.0, "dash"))
                elif slope is None:
                    draw(f"{legend_name} memory", x, y, color=color, width=2.0, style="dash", in_legend=False)
        for name, x, y, color, width, style in legend_entries:
            draw(name, x, y, color=color, width=width, style=style, in_legend=several)
        if primary.roofs is not None:
            c, m = primary.compute, primary.memory
            mode = "2:4 sparse" if c.sparse else "dense"
            # the primary's roofs named where they are drawn: the peak over its roof, or under
            # it when another flat roof runs just above (the text would sit on that line)
            above = (1.0, 1.15) if self._room_above(c.peak_flops, compared) else (1.0, -0.15)
            labels.append(_Label(f"{c.label.replace(' (2:4 sparse)', '')} {_q(c.peak_flops, 'FLOP/s')} ({mode})",
                                 xmax, c.peak_flops, above, None, 1.0, bold=True, flat_from=c.ridge))
            self._slope_label(labels, f"{m.label} {_q(m.mem_bw, 'B/s')}", m, xmin, xmax)
            # the ridge: a dotted drop line to the axis, a marker and its value
            draw("ridge", [c.ridge, c.ridge], [ymin, c.peak_flops], color=self.chart.theme().muted, width=1.2,
                 style="dot", in_legend=False)
            # the label stands along the drop line, under the corner: the space left of the line
            # and under the roofs is empty (kernels sit on the roofs, their names hang right)
            text = f"ridge {_q(c.ridge, 'FLOP/B')}"
            crossings = self._roofs_under_corner(c.ridge, c.peak_flops, compared)
            self._ridge_drawn = (text, c.ridge, c.peak_flops, crossings)
            ridge = _Label(text, c.ridge, self._ridge_label_top(text, c.peak_flops, crossings),
                           (1.25, 1.05), None, 1.0, bold=True, angle=90)
            labels.append(ridge)
            self._label_compared_devices(labels, compared, xmin, xmax)
        self.chart.show_series(series)
        self._ridge_points = ridge_xy
        self._style_ridge_marker()
        return labels, ridge

    def roof_label_texts(self) -> list[str]:
        """The texts of the labels drawn on the roofs (peaks, bandwidths, ridge), as shown."""
        return [item.toPlainText() for item, *_rest in self._overlays if item.isVisible()]

    def presentation_widgets(self) -> list:
        return [*super().presentation_widgets(), self.kernels_box]

    def _label_compared_devices(self, labels: list[_Label], compared, xmin: float, xmax: float) -> None:
        """Each compared device's peak and bandwidth, in its roof's colour, where it is drawn.
        A roof that coincides with one already named (H100 and H200 share a peak) gets no
        second label on top of the first: the legend names both."""
        primary = self._devices[0]
        peaks, bandwidths = [primary.compute.peak_flops], [primary.memory.mem_bw]
        for slot, d in enumerate(self._devices[1:], start=1):
            if d.roofs is None:
                continue
            color = self._device_color(slot)
            name = _short(d.hardware.name)
            c, m = d.compute, d.memory
            if all(abs(math.log10(c.peak_flops / p)) > 0.1 for p in peaks):
                anchor = (1.0, 1.15) if self._room_above(c.peak_flops, compared) else (1.0, -0.15)
                labels.append(_Label(f"{name} {_q(c.peak_flops, 'FLOP/s')}", xmax, c.peak_flops, anchor, color,
                                     0.95, flat_from=c.ridge))
                peaks.append(c.peak_flops)
            if all(abs(math.log10(m.mem_bw / b)) > 0.1 for b in bandwidths):
                self._slope_label(labels, f"{name} {_q(m.mem_bw, 'B/s')}", m, xmin, xmax, color=color,
                                  along=slot)
                bandwidths.append(m.mem_bw)

    def _room_above(self, peak: float, compared) -> bool:
        """Whether a line of label text fits between the flat roof at ``peak`` and the next
        flat roof above it (another device's, a compared scenario's or another precision's)."""
        ymin, ymax = self._extent.ymin, self._extent.ymax
        height_px = self.chart.getPlotItem().getViewBox().height()
        if height_px <= 0 or ymax <= ymin:
            return True
        scale = th.scale_factor(self.chart.presentation())
        text_px = 2.4 * th.BASE_TICK_FONT_PT * scale + 6  # one line of the bold label, with margins
        decades = text_px * math.log10(ymax / ymin) / height_px
        return not any(0.0 < math.log10(r.peak_flops / peak) < decades for r in self._compute_roofs(compared))

    def _compute_roofs(self, compared) -> list:
        """Every compute roof drawn: each device's (its precision ceilings too) and each
        compared scenario's."""
        roofs = [r for d in self._devices for r in (d.roofs or ()) if r.kind == "compute"]
        return roofs + [line.roof for *_rest, lines in compared for line in lines if line.roof.kind == "compute"]

    def _roofs_under_corner(self, ridge: float, peak: float, compared) -> tuple[float, ...]:
        """Where the other roofs cross the ridge's drop line under ``peak``, highest first (in
        FLOP/s): another device's, a compared scenario's or another precision's, each on its
        flat part or on its slope there (the ridge's label hangs from the corner along that line)."""
        # a roof's height at x = ridge: its peak past its own ridge, its memory slope before it
        # (the corner's own roof, at ``peak``, is left out with every roof not under it)
        heights = {r.peak_flops if r.ridge <= ridge else r.peak_flops * ridge / r.ridge
                   for r in self._compute_roofs(compared)}
        return tuple(sorted((h for h in heights if 0.0 < h < peak), reverse=True))

    def _ridge_label_top(self, text: str, peak: float, crossings: tuple[float, ...]) -> float:
        """Where the ridge's label hangs from along its drop line: under the corner at
        ``peak``, or under the lowest of the roofs crossing that line (``crossings``, their
        heights there, highest first) that would cross its text at the view's present size and
        range."""
        vb = self.chart.getPlotItem().getViewBox()
        height_px = vb.height()
        (_x0, _x1), (ymin, ymax) = self.chart.visible_range()
        if not crossings or height_px <= 0 or not 0.0 < ymin < ymax:
            return peak
        font = QFont()
        font.setPointSizeF(self._text_style(None, 1.0, True)[1])
        font.setBold(True)
        # the label's far end: its anchor (1.25 along the text) leaves a quarter of it as a gap
        reach_px = 1.25 * QFontMetricsF(font).horizontalAdvance(text) + 6
        decades = reach_px * math.log10(ymax / ymin) / height_px
        top = peak
        for height in crossings:  # from the corner down: each roof inside the text pushes it under that roof
            if math.log10(top / height) < decades:
                top = height
        return top

    def _place_ridge_label(self) -> None:
        """The ridge's label again where it hangs clear of the other roofs at the view's size
        and range now (a resize or a zoom changes how far its text reaches in FLOP/s)."""
        item, drawn = getattr(self, "_ridge_label", None), getattr(self, "_ridge_drawn", None)
        if item is None or drawn is None or not item.isVisible():
            return
        text, ridge, peak, crossings = drawn
        pos = QPointF(math.log10(ridge), math.log10(self._ridge_label_top(text, peak, crossings)))
        if item.pos() != pos:
            item.setPos(pos)

    def _style_ridge_marker(self) -> None:
        s = th.scale_factor(self.chart.presentation())
        spots = []
        for ridge, peak, color, slot in getattr(self, "_ridge_points", []):
            brush, pen = self._styles(("ridge", QColor(color).rgba(), s), lambda color=color, s=s: (
                pg.mkBrush(color), pg.mkPen(self.chart.theme().background, width=1.5 * s)))
            spots.append({"pos": (math.log10(ridge), math.log10(peak)), "symbol": "d",
                          "size": (14 if slot == 0 else 11) * s, "brush": brush, "pen": pen})
        previous = getattr(self, "_ridge_spots", None)
        if spots == previous:
            return
        self._ridge_spots = spots
        style = ("symbol", "size", "brush", "pen")
        if (previous is not None and len(previous) == len(spots)
                and all(a[k] is b[k] or a[k] == b[k] for a, b in zip(previous, spots, strict=True) for k in style)
                and self.ridge_marker.move_points([sp["pos"][0] for sp in spots], [sp["pos"][1] for sp in spots])):
            return  # the same markers, moved (a new roof moves the ridge)
        self.ridge_marker.setData(spots=spots)

    def _styles(self, key: tuple, make):
        """Brushes and pens made once per theme and presentation: pyqtgraph renders a scatter
        symbol per brush/pen *object* into its atlas, so new but equal ones made on every redraw
        rendered new symbols and grew the atlas (rebuilt at every paint) without end."""
        theme = self.chart.theme()
        cache = self.__dict__.setdefault("_style_cache", BoundedCache(64))
        full = (id(theme), theme.background, *key)
        found = cache.get(full)
        return found if found is not None else cache.keep(full, make())

    def _show_labels(self, labels: Sequence[_Label]) -> list[pg.TextItem]:
        """Show ``labels`` (the overlays, in this order) on text items taken back from the pool;
        returns their items. Those not taken back are hidden by ``_hide_unused_labels``.

        Text items are kept and reused: a new one lays itself out in its first paint and asks
        for a second, so creating them on every refresh doubled the chart's paint work. A new
        text is laid out again (most of what a label costs), so every label first takes back an
        item that shows its text already, wherever it stood in the last redraw (a ceiling
        switched off and on again, a label that moved in the order); a label with a new text
        then takes an item in its font (a new font is another layout), else the one shown
        longest ago."""
        pools = self._text_pool
        items: list[pg.TextItem | None] = [None] * len(labels)
        for i, label in enumerate(labels):
            pool = pools.get(label.kind)
            if pool:
                j = next((j for j, item in enumerate(pool) if item._roofline_text == label.text), None)
                if j is not None:
                    items[i] = pool.pop(j)
        for i, label in enumerate(labels):
            item = items[i]
            if item is None:
                pool = pools.setdefault(label.kind, [])
                if pool:
                    style = self._text_style(label.color, label.scale, label.bold)
                    item = pool.pop(next((j for j, it in enumerate(pool) if it._roofline_style == style), 0))
                    item.setText(label.text)
                else:
                    item = PlainTextItem(label.text, anchor=label.anchor, rotateAxis=label.rotate, angle=label.angle)
                    item._roofline_style = None
                    item.setZValue(45)
                    self.chart.getPlotItem().addItem(item, ignoreBounds=True)
                item._roofline_text = label.text
                items[i] = item
            if tuple(item.anchor) != label.anchor:
                item.setAnchor(label.anchor)
            if not item.isVisible():
                item.setVisible(True)
            pos = QPointF(math.log10(label.x), math.log10(label.y))
            if item.pos() != pos:
                item.setPos(pos)
            # a flat roof's label (its roof runs from flat_from to x): kept clear of the others
            # that end at the right edge too (_separate_flat_labels)
            item._flat = None if label.flat_from is None else (pos.x(), math.log10(label.flat_from), label.anchor)
            self._overlays.append((item, label.color, label.scale * (-1.0 if label.bold else 1.0), label.kind))
            self._style_text(item, label.color, label.scale, label.bold)
        return items

    def _slope_label(self, labels: list[_Label], text: str, roof: Roof, xmin: float, xmax: float, *, color=None,
                     along: int = 0) -> None:
        """A label lying along a sloped roof, near its low end (``along`` steps further up the
        line, so the labels of parallel roofs do not stack on each other), added to ``labels``."""
        x = min(xmin * 4.0 * 6.0 ** along, roof.ridge / 3.0)
        if x <= xmin:
            return
        labels.append(_Label(text, x, x * roof.mem_bw, (0.0, 1.15), color, 0.95, rotate=(1, 1)))

    def _text_style(self, color, scale: float, bold: bool) -> tuple[int, float, bool]:
        """(colour as rgba, point size, bold) of a label's text in the chart's theme and size."""
        qcolor = QColor(self.chart.theme().ink) if color is None else QColor(color)
        size = th.BASE_TICK_FONT_PT * abs(scale) * th.scale_factor(self.chart.presentation())
        return (qcolor.rgba(), size, bool(bold))

    def _style_text(self, item: pg.TextItem, color, scale: float, bold: bool) -> None:
        style = self._text_style(color, scale, bold)
        if item._roofline_style == style:
            return  # setting the same font again lays the text out again
        item._roofline_style = style
        item.setColor(QColor(self.chart.theme().ink) if color is None else QColor(color))
        font = QFont()
        font.setPointSizeF(style[1])
        font.setBold(bold)
        item.setFont(font)

    def _clear_overlays(self) -> None:
        """Put the labels back in the pool; those not drawn again are hidden by
        ``_hide_unused_labels`` (hiding and showing each one on every redraw cost work)."""
        for item, _color, _scale, key in self._overlays:
            self._text_pool.setdefault(key, []).append(item)
        self._overlays = []
        self._point_labels = []

    def _hide_unused_labels(self) -> None:
        for pool in self._text_pool.values():
            for item in pool:
                if item.isVisible():
                    item.setVisible(False)

    def _style_overlays(self) -> None:
        """Theme, presentation or export changed: restyle the labels, points and markers."""
        for item, color, scale, _key in self._overlays:
            self._style_text(item, color, abs(scale), scale < 0)
        self.kernel_model.set_warning_color(self.chart.theme().error)
        self._draw_points()
        self._style_ridge_marker()
        compared = [c for c in getattr(self, "_compared_cache", [])]
        self._draw_compared_points(compared)
        self._place_point_labels()  # the font size may have changed

    def _point_styles(self, hollow: bool = False):
        """(brushes, pens) for memory-bound (0) and compute-bound (1) points (the same
        objects while the theme and presentation stay)."""
        theme = self.chart.theme()
        mem, comp = theme.color("memory_bound"), theme.color("compute_bound")
        s = th.scale_factor(self.chart.presentation())

        def make():
            if hollow:
                clear = pg.mkBrush(0, 0, 0, 0)
                return [clear, clear], [pg.mkPen(mem, width=2 * s), pg.mkPen(comp, width=2 * s)]
            return [pg.mkBrush(mem), pg.mkBrush(comp)], pg.mkPen(theme.background, width=1.0 * s)

        return self._styles(("points", hollow, QColor(mem).rgba(), QColor(comp).rgba(), s), make)

    def _draw_points(self) -> None:
        p = self._placements
        if p is None or len(p) == 0:
            if len(self.points.data):  # already empty: nothing to do
                self.points.set_points([], [], [], *self._point_styles(), size=7)
            return
        s = th.scale_factor(self.chart.presentation())
        brushes, pen = self._point_styles()
        # the intensities are the kernels' own: the same array under another roof (_place)
        if self._log_intensity is None or self._log_intensity[0] is not p.intensity:
            log_intensity = _log10(p.intensity)
            log_intensity.flags.writeable = False  # (the points keep it while it is the same)
            self._log_intensity = (p.intensity, log_intensity)
        self.points.set_points(self._log_intensity[1], _log10(p.achieved), p.compute_bound, brushes, pen,
                               size=(11 if len(p) <= 200 else 7) * s)
        self._mark_selection()

    def _point_label_specs(self) -> list[tuple[_Label, int]]:
        """(label, kernel row) of each point to name: when there are few, in level text beside
        the point where it touches no line, label or other point (``_place_point_labels``)."""
        p = self._placements
        if p is None or not 0 < len(p) <= MAX_POINT_LABELS:
            return []
        out = []
        for i, name in enumerate(p.names):
            x, y = float(p.intensity[i]), float(p.achieved[i])
            if not (math.isfinite(x) and math.isfinite(y) and x > 0 and y > 0):
                continue  # off a log axis (an intensity that underflowed to 0): no point to name
            if self.kernel_model.above_roof(i) or self.kernel_model.time_stale(i):
                label = _Label(f"{WARNING_MARK} {_label_lines(name)}", x, y, (0.0, 0.0),
                               QColor(self.chart.theme().error), 0.95)
            else:
                label = _Label(_label_lines(name), x, y, (0.0, 0.0), None, 0.95)
            out.append((label, i))
        return out

    def _view_resized(self, *_args) -> None:
        self._place_point_labels()
        # and once more when the resize has settled (the legend follows the view afterwards)
        QTimer.singleShot(0, self, self._place_point_labels)

    def _place_point_labels(self) -> None:
        """Put each kernel's name in the first free place around its point (see
        ``ui.label_placement``); a name with no free place is hidden (hover or the table
        gives it). Done again when the chart is resized or zoomed: the free space is in
        pixels."""
        labels = getattr(self, "_point_labels", [])
        p = self._placements
        if getattr(self, "_drawing", False):
            return
        vb = self.chart.getPlotItem().getViewBox()
        area = vb.sceneBoundingRect()
        if area.width() >= 50 and area.height() >= 50:
            vb.updateMatrix()
            self._separate_flat_labels(vb)
            self._place_ridge_label()
        if not labels or p is None or area.width() < 50 or area.height() < 50:
            # nothing to name, or not laid out yet (placed when it is: sigResized)
            if len(self.label_leaders.xData if self.label_leaders.xData is not None else ()):
                self.label_leaders.setData([], [])
            for item, _row in labels:
                item.setVisible(False)
            return
        # sigResized comes before the view's own matrix follows the new size: bring it up to
        # date, or the other labels' boxes are read with the old one
        vb.updateMatrix()
        own = {id(item) for item, _row in labels}
        obstacles = []
        segments = []
        for item, _color, _scale, _key in self._overlays:
            if id(item) not in own and item.isVisible():
                item.updateTransform(force=True)
                corners = item.textItem.mapToScene(item.textItem.boundingRect())
                pts = [(corners.at(i).x(), corners.at(i).y()) for i in range(4)]
                if len({round(x, 3) for x, _y in pts}) <= 2 and len({round(y, 3) for _x, y in pts}) <= 2:
                    r = item.textItem.sceneBoundingRect()  # level text: its box
                    obstacles.append((r.left(), r.top(), r.width(), r.height()))
                else:
                    # text along a sloped roof: its outline and diagonals, not the square box
                    # around it (which covered the points on the roof under it)
                    segments += [(pts[i], pts[(i + 1) % 4]) for i in range(4)] + [(pts[0], pts[2]), (pts[1], pts[3])]
        legend = self.chart.getPlotItem().legend
        if legend is not None and legend.isVisible():
            r = legend.sceneBoundingRect()
            obstacles.append((r.left(), r.top(), r.width(), r.height()))
        for series in self.chart.series():
            xs, ys = _log10(series.x), _log10(series.y)
            pts = [vb.mapViewToScene(QPointF(float(a), float(b))) for a, b in zip(xs, ys, strict=True)
                   if math.isfinite(a) and math.isfinite(b)]
            segments += [((a.x(), a.y()), (b.x(), b.y())) for a, b in zip(pts, pts[1:], strict=False)]
        anchors, sizes = [], []
        for item, row in labels:
            point = vb.mapViewToScene(QPointF(math.log10(p.intensity[row]), math.log10(p.achieved[row])))
            anchors.append((point.x(), point.y()))
            r = item.textItem.boundingRect()
            sizes.append((r.width(), r.height()))
        s = th.scale_factor(self.chart.presentation())
        boxes = place_labels(anchors, sizes, (area.left() + 2, area.top() + 2, area.width() - 4, area.height() - 4),
                             obstacles, segments, gap=7.0 * s, marker=6.0 * s)
        leaders_x, leaders_y = [], []
        for point, box in zip(anchors, boxes, strict=True):
            line = leader(point, box, 7.0 * s) if box is not None else None
            if line is not None:
                for end in line:
                    v = vb.mapSceneToView(QPointF(*end))
                    leaders_x.append(v.x())
                    leaders_y.append(v.y())
        pen = self._styles(("leaders", s), lambda: pg.mkPen(self.chart.theme().muted, width=1.0 * s))
        self.label_leaders.setData(leaders_x, leaders_y, connect="pairs", pen=pen)
        for (item, _row), box in zip(labels, boxes, strict=True):
            if box is None:
                if item.isVisible():
                    item.setVisible(False)
                continue
            pos = vb.mapSceneToView(QPointF(box[0], box[1]))
            if item.pos() != pos:
                item.setPos(pos)
            if not item.isVisible():
                item.setVisible(True)

    def _separate_flat_labels(self, vb) -> None:
        """The flat roofs' labels all end at the right edge: where one would overlap another (a
        compared device's peak just under the primary's, a precision ceiling beside it) it
        takes the other side of its roof, else moves left along its roof, never past the roof's
        start. The primary's bold peak keeps its place. Done in pixels, from each label's own
        place every time (a resize, a zoom, a new font)."""
        flat = [(item, scale) for item, _color, scale, _key in self._overlays
                if item.isVisible() and getattr(item, "_flat", None) is not None]
        flat.sort(key=lambda entry: 0 if entry[1] < 0 else 1)  # stable: then in the order drawn
        gap = 14.0 * th.scale_factor(self.chart.presentation())
        placed = []

        def put(item, x: float, anchor) -> object:
            if tuple(item.anchor) != tuple(anchor):
                item.setAnchor(anchor)
            if item.pos().x() != x:
                item.setPos(QPointF(x, item.pos().y()))
            item.updateTransform(force=True)
            return item.textItem.sceneBoundingRect()

        for item, _scale in flat:
            x_end, x_start, anchor = item._flat
            rect = put(item, x_end, anchor)
            if placed and any(r.intersects(rect) for r in placed):
                flipped = (anchor[0], 1.0 - anchor[1])
                start_px = vb.mapViewToScene(QPointF(x_start, item.pos().y())).x()
                end_px = vb.mapViewToScene(QPointF(x_end, item.pos().y())).x()
                found = None
                best = None  # (overlap in px², x, side): where it covers the others least
                for side in (anchor, flipped):
                    right = end_px
                    while found is None:
                        x = vb.mapSceneToView(QPointF(right, 0.0)).x()
                        rect = put(item, x, side)
                        hits = [r for r in placed if r.intersects(rect)]
                        if not hits:
                            found = rect
                            break
                        covered = sum(r.intersected(rect).width() * r.intersected(rect).height() for r in hits)
                        if best is None or covered < best[0]:
                            best = (covered, x, side)
                        right = min(r.left() for r in hits) - gap
                        if right - rect.width() < start_px:
                            break  # no room left of the others on this side
                    if found is not None:
                        break
                rect = found if found is not None else put(item, best[1], best[2])
            placed.append(rect)

    def point_label_boxes(self) -> list[tuple[str, tuple[float, float, float, float] | None]]:
        """(text, scene box or None if hidden) of each kernel's name label (for tests)."""
        out = []
        for item, _row in getattr(self, "_point_labels", []):
            if item.isVisible():
                item.updateTransform(force=True)
                r = item.textItem.sceneBoundingRect()
                out.append((item.toPlainText(), (r.left(), r.top(), r.width(), r.height())))
            else:
                out.append((item.toPlainText(), None))
        return out

    def _draw_compared_points(self, compared) -> None:
        self._compared_cache = compared
        xs, ys, bounds, labels = [], [], [], []
        for _i, name, saved, _lines in compared:
            p = saved.placements
            if p is None or not len(p):
                continue
            xs.append(p.intensity)
            ys.append(p.achieved)
            bounds.append(p.compute_bound)
            labels.extend(f"{name}: {n}" for n in p.names)
        self._compared_names = labels
        if not xs:
            if len(self.compared_points.data):  # already empty: nothing to do
                self.compared_points.set_points([], [], [], *self._point_styles(hollow=True), size=7)
            return
        s = th.scale_factor(self.chart.presentation())
        brushes, pens = self._point_styles(hollow=True)
        self.compared_points.set_points(_log10(np.concatenate(xs)), _log10(np.concatenate(ys)),
                                        np.concatenate(bounds), brushes, pens, size=11 * s)

    def _update_title(self, s: RooflineScenario) -> None:
        primary = self._devices[0]
        if primary.roofs is None:
            self._set_title(f"Roofline: {primary.problem}")
            return
        c = primary.compute
        if c.sparse:
            mode = "2:4 sparse"
        elif s.sparse:
            mode = f"dense ({PRECISION_LABELS[s.precision]} has no 2:4 sparse rate)"
        else:
            mode = "dense"
        self._set_title(f"Roofline: {primary.hardware.name}, {PRECISION_LABELS[s.precision]}, {mode}")

    def _set_title(self, title: str) -> None:
        # re-setting the same title re-lays out the plot and regenerates every axis drawing
        if title != getattr(self, "_title_text", None):
            self._title_text = title
            self.chart.set_title(title)

    # -- selection, hover, tooltips -----------------------------------------------------------
    def _selection_changed(self, *_args) -> None:
        self._mark_selection()
        self._update_results()

    def _selected_row(self) -> int | None:
        rows = self.selected_rows()
        return rows[0] if len(rows) == 1 and self._placements is not None and rows[0] < len(self._placements) else None

    def _mark_selection(self) -> None:
        row = self._selected_row()
        if row is None:
            self.chart.clear_operating_point()
            return
        p = self._placements
        # few kernels carry their names already; many get the selected one's name here
        label = "" if len(p) <= MAX_POINT_LABELS else p.names[row]
        self.chart.set_operating_point(float(p.intensity[row]), float(p.achieved[row]), label)

    def _points_clicked(self, _item, points, _ev) -> None:
        if len(points):
            self.select_kernel(int(points[0].data()))

    def _point_tip(self, x, y, data) -> str:
        try:
            return self.kernel_model.tooltip(int(data))
        except (IndexError, TypeError, ValueError):
            return ""

    def _compared_tip(self, x, y, data) -> str:
        try:
            name = self._compared_names[int(data)]
        except (IndexError, TypeError, ValueError):
            return ""
        return f"{name}\nintensity {_q(10.0 ** x, 'FLOP/B')}\nachieved {_q(10.0 ** y, 'FLOP/s')}"

    def hover_text(self, ai: float, flops: float) -> str:
        """The readout under the mouse: intensity, the cursor's FLOP/s, and what each shown
        device can attain at that intensity."""
        lines = [f"intensity {_q(ai, 'FLOP/B')}", f"cursor {_q(flops, 'FLOP/s')}"]
        if ai > 0 and self._analysis is not None:
            for r in self._analysis.readout(ai):
                bound = "compute" if r.compute_bound else "memory"
                lines.append(f"{_short(r.device.hardware.name)} attainable {_q(r.attainable, 'FLOP/s')} ({bound}-bound)")
                for roof, cached in r.cached:
                    lines.append(f"  from {roof.label.removesuffix(' bandwidth')}: {_q(cached, 'FLOP/s')}")
        return "\n".join(lines)

    # -- results ------------------------------------------------------------------------------
    def _update_results(self) -> None:
        s = self.scenario()
        rows: list[ResultRow] = []
        primary = self._devices[0] if self._devices else None
        if primary is not None and primary.roofs is not None:
            c, m = primary.compute, primary.memory
            rows += [
                ResultRow(_peak_label(s.precision, c.sparse), c.peak_flops, "FLOP/s",
                          f"{primary.hardware.name}: the flat roof"),
                ResultRow(f"Memory bandwidth ({m.label.replace(' bandwidth', '')})", m.mem_bw, "B/s",
                          "The sloped roof: attainable = intensity x bandwidth"),
                ResultRow("Ridge point", c.ridge, "FLOP/B",
                          "Peak / bandwidth: kernels left of it are memory-bound, right of it compute-bound"),
            ]
            for level, roof in primary.cache_roofs:
                rows.append(ResultRow(f"{level.name} bandwidth", level.bandwidth, "B/s",
                                      f"The dashed roof: what a kernel attains when its bytes come from "
                                      f"{level.name} (ridge {_q(roof.ridge, 'FLOP/B')}). Source: {level.source}"))
        for d in self._devices[1:]:
            name = _short(d.hardware.name) if d.hardware is not None else d.key
            if d.roofs is None:
                rows.append(ResultRow(f"Ridge point, {name}", "–", "", d.problem))
            else:
                mode = "2:4 sparse" if d.compute.sparse else "dense"
                rows.append(ResultRow(f"Ridge point, {name}", d.compute.ridge, "FLOP/B",
                                      f"{d.hardware.name}: {_q(d.compute.peak_flops, 'FLOP/s')} {mode} / "
                                      f"{_q(d.memory.mem_bw, 'B/s')}"))
        p = self._placements
        row = self._selected_row()
        if row is not None:
            measured = bool(p.measured[row])
            rows += [
                # a long name is cut here (the table and this tip give it whole), so the results
                # keep their width when a kernel is selected
                ResultRow("Kernel", _cut(p.names[row], 26), "", f"Selected in the table: {p.names[row]}"),
                ResultRow("  intensity", float(p.intensity[row]), "FLOP/B"),
                ResultRow("  attainable (roof)", float(p.ceiling[row]), "FLOP/s"),
                ResultRow("  achieved", float(p.achieved[row]), "FLOP/s",
                          "FLOPs / measured time" if measured else "No measured time: the kernel sits on the roof"),
                ResultRow("  fraction of roof", float(p.fraction_of_roof[row]), "%"),
                ResultRow("  bound", "compute-bound" if p.compute_bound[row] else "memory-bound", ""),
            ]
            warning = self.kernel_model.warning(row)
            if warning:
                rows.append(ResultRow(f"{WARNING_MARK}  above the roof", f"{float(p.fraction_of_roof[row]):.0%}",
                                      "", warning[:1].upper() + warning[1:]))
            if self.kernel_model.time_stale(row):
                rows.append(ResultRow(f"{WARNING_MARK}  time", "possibly stale", "",
                                      STALE_TIME_ADVICE[:1].upper() + STALE_TIME_ADVICE[1:]))
        elif p is not None and len(p):
            a = self._analysis
            rows.append(ResultRow("Kernels", f"{len(p):,}", "",
                                  "Select a kernel in the table (or click its point) for its numbers"))
            rows.append(ResultRow("  memory / compute-bound", f"{a.n_memory_bound:,} / {a.n_compute_bound:,}", "",
                                  "Kernels left of the ridge / right of it, on the primary device"))
            m = self.kernel_model
            above = m.above_rows()
            stale = m.stale_rows()
            if len(above):
                rows.append(ResultRow(f"{WARNING_MARK} Above the roof", f"{len(above):,}", "",
                                      f"{_names(p.names, above)}: {ABOVE_ROOF_ADVICE}. Select one for more."))
            if len(stale):
                rows.append(ResultRow(f"{WARNING_MARK} Time possibly stale", f"{len(stale):,}", "",
                                      f"{_names(p.names, stale)}: {STALE_TIME_ADVICE}"))
        shown = (tuple(rows), QColor(self.chart.theme().error).rgba())
        if shown == self._shown_rows:
            return  # the same rows (a display option changed): the table is left alone
        self._shown_rows = shown
        self.results.set_rows(rows)
        self._mark_warning_rows()

    def _mark_warning_rows(self) -> None:
        """Warning rows of the results in the theme's error colour (the others as they were)."""
        table = self.results
        error = QColor(self.chart.theme().error)
        warn_rows = [r for r in range(table.rowCount()) if (first := table.item(r, 0)) is not None
                     and first.text().startswith(WARNING_MARK)]
        # the same rows in the same colour: marked already (the table keeps its cells' items
        # while its number of rows stays; new numbers in them keep their colour)
        marked = (table.rowCount(), tuple(warn_rows), error.rgba())
        if marked == self._marked_rows:
            return
        self._marked_rows = marked
        color = QBrush(error)
        for r in range(table.rowCount()):
            warn = r in warn_rows
            for c in range(table.columnCount()):
                item = table.item(r, c)
                if item is None:
                    continue
                if warn:
                    item.setForeground(color)
                elif item.data(Qt.ItemDataRole.ForegroundRole) is not None:
                    item.setData(Qt.ItemDataRole.ForegroundRole, None)

    # -- explanation ----------------------------------------------------------------------------
    def explanation(self) -> str:
        """The roofline explained (rich text), with the current device's numbers."""
        parts = []
        for block in EXPLANATION.strip().split("\n\n"):
            lines = block.splitlines()
            items = [ln.strip()[2:] for ln in lines if ln.strip().startswith("- ")]
            if items:
                lead = [ln for ln in lines if not ln.strip().startswith("- ") and not ln.startswith("    ")]
                # continuation lines of a bullet start with four spaces
                merged: list[str] = []
                for ln in lines:
                    t = ln.strip()
                    if t.startswith("- "):
                        merged.append(t[2:])
                    elif ln.startswith("    ") and merged:
                        merged[-1] += " " + t
                parts.append(f"<p>{html.escape(' '.join(lead))}</p><ul>"
                             + "".join(f"<li>{html.escape(i)}</li>" for i in merged) + "</ul>")
            else:
                text = html.escape(" ".join(ln.strip() for ln in lines))
                parts.append(f"<p>{text}</p>")
        primary = self._devices[0] if self._devices else None
        if primary is not None and primary.roofs is not None:
            c, m = primary.compute, primary.memory
            mode = "2:4 sparse" if c.sparse else "dense"
            parts.append(
                f"<p><b>Here:</b> {html.escape(primary.hardware.name)} at {PRECISION_LABELS[self.scenario().precision]} "
                f"({mode}): {html.escape(_q(c.peak_flops, 'FLOP/s'))} / {html.escape(_q(m.mem_bw, 'B/s'))} = "
                f"ridge at {html.escape(_q(c.ridge, 'FLOP/B'))}.</p>")
        return "".join(parts)

    # -- export ---------------------------------------------------------------------------------
    def chart_for_export(self):
        return self.chart

    def csv_columns(self):
        """The roof lines (end points of each segment) and the kernel table, one row each,
        every numeric header naming its unit."""
        s = self.scenario()
        rows = []
        for d, lines in zip(self._devices, self._lines, strict=True):
            for line in lines:
                roof = line.roof
                for xi, yi in zip(line.x, line.y, strict=True):
                    rows.append(("roof", f"{d.hardware.name}: {roof.label}", PRECISION_LABELS[roof.precision],
                                 "2:4 sparse" if roof.sparse else "dense", float(xi), float(yi),
                                 None, None, None, None, None, "", ""))
        p = self._placements
        if p is not None:
            self.kernel_model.warning_texts()  # all at once, not one call per flagged kernel
        for i, k in enumerate(s.kernels):
            if p is None:
                continue
            check = "; ".join(self.kernel_model.flag_lines(i)).replace(f"{WARNING_MARK} ", "")
            rows.append(("kernel", k.name, PRECISION_LABELS[s.precision],
                         "2:4 sparse" if self._devices[0].compute.sparse else "dense",
                         float(p.intensity[i]), float(p.ceiling[i]), float(p.achieved[i]),
                         k.flops, k.bytes, k.time_s, float(p.fraction_of_roof[i]),
                         "compute" if p.compute_bound[i] else "memory", check))
        headers = ("row", "name", "precision", "sparsity", "intensity (FLOP/B)", "attainable (FLOP/s)",
                   "achieved (FLOP/s)", "flops (FLOP)", "bytes (B)", "time (s)", "fraction of roof (1)", "bound",
                   "check")
        if not rows:
            return None
        return [(h, [r[i] for r in rows]) for i, h in enumerate(headers)]

    def export_kernels_csv(self, path):
        """Only the kernel rows (same columns)."""
        from ui import export

        columns = self.csv_columns() or []
        keep = [i for i, v in enumerate(columns[0][1]) if v == "kernel"] if columns else []
        if not keep:
            raise ValueError("Roofline: no kernels to export")
        return export.export_csv(path, [(h, [vals[i] for i in keep]) for h, vals in columns])
