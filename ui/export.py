"""Exports of charts and their numbers: PNG (with the scenario inside), SVG, CSV.

Headless-capable: the GUI and the command line ``export`` call the same functions under
``QT_QPA_PLATFORM=offscreen``. pyqtgraph's own exporters are not used: its SVGExporter crashes
on current Qt (pyqtgraph issues 3495, 3485) and its ImageExporter leaves cosmetic pens one
pixel thin at high resolution and paints a black background by default. Here the scene is
rendered with a plain scale transform, every cosmetic pen is widened by the same factor for
the duration of the export, and the background is always explicit. A panel never shown (a
headless export) is laid out first, so its charts have the size the panel would show.

Sizes: one logical pixel is 1/96 inch. An SVG says so (width and height in millimetres at
96 dpi); a PNG rendered at N times the logical size says 96 x N dpi in its pHYs chunk.

Every file is built in memory (a PNG is encoded into a buffer) and written with the
project's atomic write (``storage.fileio``): a temporary file beside the target, created
with the user's normal file mode, fsynced and renamed over the target. A failed export
(a full disk included) never leaves a cut or empty file and keeps the previous one.

:func:`export_panel` is a panel's export as a user asks for it: the chart with an optional
slide caption (a title and one line of assumptions), or the numbers headed by the panel's
results table.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import math
import numbers
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import (
    QBuffer,
    QByteArray,
    QCoreApplication,
    QEvent,
    QIODevice,
    QPoint,
    QPointF,
    QRect,
    QRectF,
    QSize,
    Qt,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QImage,
    QImageReader,
    QPainter,
    QPen,
    QRegion,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QAbstractGraphicsShapeItem,
    QGraphicsItem,
    QGraphicsScene,
    QGraphicsView,
    QGraphicsWidget,
    QSplitterHandle,
    QWidget,
)

import workbench
from storage import fileio
from storage.errors import ProjectError
from ui import png_writer
from ui import theme as th
from workbench import units

#: The PNG text key holding the scenario JSON.
SCENARIO_KEY = "scaling-workbench-scenario"
SOFTWARE = f"Scaling Workbench {workbench.__version__}"
#: Logical pixels per inch: what a chart's on-screen size means in print.
SCREEN_DPI = 96

_UNIT_SUFFIX = re.compile(r"\(\s*[^()]+\s*\)\s*$")


class ExportError(OSError):
    """An export could not be written; the message names the file and the reason."""


# ---------------------------------------------------------------------------------------------
# rendering
# ---------------------------------------------------------------------------------------------
def _color(background) -> QColor:
    if isinstance(background, QColor):
        return QColor(background)
    if background in (None, "transparent", "none"):
        return QColor(0, 0, 0, 0)
    color = QColor(background)
    if not color.isValid():
        raise ValueError(f"background must be 'white', 'transparent' or a colour, got {background!r}")
    return color


def _ensure_laid_out(widget: QWidget) -> None:
    """A widget never shown (headless export) has not had its resize events or layout yet."""
    for w in [widget, *widget.findChildren(QWidget)]:
        if w.testAttribute(Qt.WidgetAttribute.WA_PendingResizeEvent):
            QCoreApplication.sendEvent(w, QResizeEvent(w.size(), QSize()))
            w.setAttribute(Qt.WidgetAttribute.WA_PendingResizeEvent, False)
        if w.layout() is not None:
            w.layout().activate()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    _lay_out_scenes(widget)


def _lay_out_scenes(widget: QWidget) -> None:
    """Fit the plots in ``widget``'s charts to their views (their layouts, now)."""
    views = [widget] if isinstance(widget, QGraphicsView) else []
    for view in views + widget.findChildren(QGraphicsView):
        if isinstance(view, pg.GraphicsView) and view.sceneRect().size().toSize() != view.size():
            # pyqtgraph sizes its central item in resizeEvent, which a hidden widget never gets
            view.resizeEvent(None)
        if view.scene() is not None:
            for item in view.scene().items():
                if isinstance(item, QGraphicsWidget):
                    layout = QGraphicsWidget.layout(item)  # pyqtgraph shadows layout() with an attribute
                    if layout is not None:
                        layout.activate()


def _widget_of(target) -> QWidget | None:
    if isinstance(target, QWidget):
        return target
    if isinstance(target, QGraphicsScene) and target.views():
        return target.views()[0]
    return None


def _paint_once(widget: QWidget) -> None:
    """Paint ``widget`` into a scratch image and lay it out again: pyqtgraph axes widen to
    their tick labels while they paint, so an export laid out before its first paint would
    have tick labels over the axis titles (a window on screen repaints and recovers)."""
    if widget.width() <= 0 or widget.height() <= 0:
        return
    scratch = QImage(widget.size(), QImage.Format.Format_ARGB32_Premultiplied)
    painter = QPainter(scratch)
    try:
        # QWidget's render (a QGraphicsView overrides it with the scene's)
        QWidget.render(widget, painter, QPoint(0, 0), QRegion(), QWidget.RenderFlag.DrawChildren)
    finally:
        painter.end()


def _settle(target) -> None:
    """Lay out a widget that is not on screen, from its highest hidden ancestor.

    A panel built for a headless export is never shown: Qt then leaves every child at its
    default size (a chart 48 x 30 px) until the top-level layout runs. Activating the layouts
    from the top gives each chart the size the panel would show it at. A widget on screen is
    laid out and painted already, unless a chart in it changed since its last paint (a script
    exporting right after an edit, with no event loop turn between): its axes then paint once
    to find their width (see _paint_once)."""
    widget = _widget_of(target)
    if widget is None:
        return
    if widget.isVisible():
        charts = _charts_in(widget)
        for chart in charts:
            chart.settle()  # the automatic range of the change, which gives the axes their ticks
        if any(_axes_to_record(chart) for chart in charts):
            _paint_once(widget)
            _lay_out_scenes(widget)  # the plots, for their axes' new widths; the window as it is
        return
    root = widget
    while root.parentWidget() is not None and not root.parentWidget().isVisible():
        root = root.parentWidget()
    _ensure_laid_out(root)
    _paint_once(widget)
    _ensure_laid_out(root)


@contextlib.contextmanager
def _export_mode(scenes: Iterable[QGraphicsScene], factor: float, antialias: bool = True) -> Iterator[None]:
    """Widen cosmetic pens by ``factor`` and put pyqtgraph items in export mode; undo after."""
    undo: list = []

    def swap(setter, pen: QPen) -> None:
        """Set a widened copy of ``pen`` now, the original on the way out."""
        saved = QPen(pen)
        setter(th.widened_pen(saved, factor))
        undo.append(lambda: setter(saved))

    try:
        for scene in scenes:
            for item in scene.items():
                cached = item.cacheMode()
                if cached != QGraphicsItem.CacheMode.NoCache:  # painted afresh at the export's scale
                    item.setCacheMode(QGraphicsItem.CacheMode.NoCache)
                    undo.append(lambda item=item, cached=cached: item.setCacheMode(cached))
                if hasattr(item, "setExportMode"):
                    item.setExportMode(True, {"antialias": antialias, "resolutionScale": factor})
                    undo.append(lambda item=item: item.setExportMode(False))
                if factor == 1.0:
                    continue
                if isinstance(item, pg.PlotDataItem):
                    for key, setter in (("pen", item.setPen), ("shadowPen", item.setShadowPen)):
                        pen = item.opts.get(key)
                        if isinstance(pen, QPen):
                            swap(setter, pen)
                elif isinstance(item, pg.PlotCurveItem) and not isinstance(item.parentItem(), pg.PlotDataItem):
                    pen = item.opts.get("pen")
                    if isinstance(pen, QPen):
                        swap(item.setPen, pen)
                elif isinstance(item, pg.AxisItem):
                    saved = (item._pen, item._tickPen)
                    item._pen = th.widened_pen(item.pen(), factor)
                    # ticks and grid lines grow more slowly than lines: a grid must stay light
                    item._tickPen = th.widened_pen(item.tickPen(), max(1.0, factor / 2))
                    item.picture = None

                    def restore_axis(item=item, saved=saved):
                        item._pen, item._tickPen = saved
                        item.picture = None

                    undo.append(restore_axis)
                elif isinstance(item, pg.LegendItem):
                    # a legend ignores transformations to keep its on-screen size; for an
                    # export it must scale with everything else
                    flag = QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations
                    had_flag = bool(item.flags() & flag)
                    item.setFlag(flag, False)
                    pen = QPen(item.opts["pen"])
                    item.setPen(th.widened_pen(pen, factor))

                    def restore_legend(item=item, pen=pen, had_flag=had_flag, flag=flag):
                        item.setPen(pen)
                        item.setFlag(flag, had_flag)

                    undo.append(restore_legend)
                elif isinstance(item, pg.InfiniteLine):
                    swap(item.setPen, item.pen)
                elif isinstance(item, QAbstractGraphicsShapeItem):
                    swap(item.setPen, item.pen())
        yield
    finally:
        for action in reversed(undo):
            action()


def _scenes_in(widget: QWidget) -> list[QGraphicsScene]:
    views = [widget] if isinstance(widget, QGraphicsView) else []
    views += widget.findChildren(QGraphicsView)
    return [v.scene() for v in views if v.scene() is not None]


def _axes_to_record(chart) -> bool:
    """Whether an axis of ``chart`` has not painted its ticks since they changed (its width
    for them is not known yet)."""
    plot = chart.getPlotItem()
    return any(plot.getAxis(side).isVisible() and plot.getAxis(side).picture is None
               for side in ("left", "bottom", "right", "top"))


def _charts_in(target) -> list:
    from ui.charts import Chart

    if isinstance(target, Chart):
        return [target]
    if isinstance(target, QWidget):
        return list(target.findChildren(Chart))
    return []


def _source(target) -> tuple[QRectF, QWidget | QGraphicsScene | QGraphicsItem]:
    if isinstance(target, QGraphicsView):
        _ensure_laid_out(target)
        rect = target.mapToScene(target.viewport().rect()).boundingRect()
        return rect, target
    if isinstance(target, QWidget):
        _ensure_laid_out(target)
        return QRectF(target.rect()), target
    if isinstance(target, QGraphicsScene):
        views = target.views()
        if views:
            view = views[0]
            _ensure_laid_out(view)
            return view.mapToScene(view.viewport().rect()).boundingRect(), target
        return target.itemsBoundingRect(), target
    if isinstance(target, QGraphicsItem):
        return target.sceneBoundingRect(), target
    raise TypeError(f"cannot export a {type(target).__name__}: pass a plot widget, a widget, a scene or an item")


def _without_handles(widget: QWidget) -> QRegion:
    """The widget's area less its splitter handles: a chart pair exports without the grip
    drawn between them (the handle is for dragging, not part of the picture)."""
    region = QRegion(widget.rect())
    for handle in widget.findChildren(QSplitterHandle):
        if handle.isVisibleTo(widget):
            region -= QRegion(QRect(handle.mapTo(widget, QPoint(0, 0)), handle.size()))
    return region


def _paint(target, painter: QPainter, source: QRectF, size: tuple[float, float], factor: float,
           background: QColor) -> None:
    """Render ``target`` into ``painter`` covering (0, 0, *size*)."""
    scenes: list[QGraphicsScene]
    if isinstance(target, QWidget):
        scenes = _scenes_in(target)
    elif isinstance(target, QGraphicsScene):
        scenes = [target]
    else:
        scenes = [target.scene()] if target.scene() is not None else []
    with contextlib.ExitStack() as stack:
        for chart in _charts_in(target):
            stack.enter_context(chart.export_style(background))
        stack.enter_context(_export_mode(scenes, factor))
        if isinstance(target, QGraphicsView):
            target.scene().render(painter, QRectF(0, 0, *size), source, Qt.AspectRatioMode.IgnoreAspectRatio)
        elif isinstance(target, QWidget):
            painter.save()
            painter.scale(factor, factor)
            target.render(painter, QPoint(0, 0), _without_handles(target), QWidget.RenderFlag.DrawChildren)
            painter.restore()
        else:
            scene = target if isinstance(target, QGraphicsScene) else target.scene()
            scene.render(painter, QRectF(0, 0, *size), source, Qt.AspectRatioMode.IgnoreAspectRatio)


#: The smallest logical size a chart is exported at. A chart squeezed on screen (a dock
#: beside five others: 68 x 68 px) is laid out at this size for the export and put back,
#: instead of coming out as its axis titles magnified.
MIN_EXPORT_SIZE = QSize(400, 240)


def _roomy_size(target: QWidget) -> QSize:
    """``target``'s size, grown so each chart in it gets at least :data:`MIN_EXPORT_SIZE`
    (widths and heights grown apart: a chart squeezed in height only keeps its width)."""
    charts = [c for c in _charts_in(target) if c.isVisibleTo(target) or c is target] or [target]
    grow_w = max(MIN_EXPORT_SIZE.width() / max(1, c.width()) for c in charts)
    grow_h = max(MIN_EXPORT_SIZE.height() / max(1, c.height()) for c in charts)
    size = target.size()
    return QSize(math.ceil(size.width() * max(1.0, grow_w)), math.ceil(size.height() * max(1.0, grow_h)))


@contextlib.contextmanager
def _temporary_size(target, width_px: int | None, height_px: int | None) -> Iterator[None]:
    """For the export, give a widget room (see :func:`_roomy_size`) and, with an explicit
    ``height_px``, the aspect ratio of ``width_px`` x ``height_px``; restore it after."""
    if not isinstance(target, QWidget):
        yield
        return
    # a panel built a moment ago (its tab was never shown) still has its layout to do: done
    # first, or it would put the chart back in its slot in the middle of the export
    QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    old = target.size()
    roomy = _roomy_size(target)
    width = roomy.width()
    height = max(1, round(height_px * width / width_px)) if height_px is not None and width_px else roomy.height()
    new = QSize(width, height)
    if new == old:
        yield
        return

    def resize(size: QSize, before: QSize) -> None:
        target.resize(size)
        if not target.isVisible():
            QCoreApplication.sendEvent(target, QResizeEvent(size, before))
        _ensure_laid_out(target)
        if target.size() != size:  # laying out its hidden ancestors put it back in its splitter slot
            target.resize(size)
            if not target.isVisible():
                QCoreApplication.sendEvent(target, QResizeEvent(size, before))

    resize(new, old)
    _paint_once(target)
    _ensure_laid_out(target)
    try:
        yield
    finally:
        resize(old, new)


# ---------------------------------------------------------------------------------------------
# slide caption: a title and one line of assumptions above the chart
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Caption:
    """A title and one line of assumptions drawn above the chart (for a slide). Both are
    plain text on one line each, cut with "…" to the picture's width; empty ones are left out."""

    title: str = ""
    assumptions: str = ""

    def __post_init__(self):
        object.__setattr__(self, "title", " ".join(str(self.title or "").split()))
        object.__setattr__(self, "assumptions", " ".join(str(self.assumptions or "").split()))

    def __bool__(self) -> bool:
        return bool(self.title or self.assumptions)


# logical pixels (1/96 inch) at normal size; presentation mode scales them like the charts' fonts
CAPTION_TITLE_PX = 22.0
CAPTION_NOTE_PX = 15.0
CAPTION_PAD_PX = 10.0


def _caption_fonts() -> tuple[QFont, QFont]:
    s = th.scale_factor()
    title, note = QFont(), QFont()
    title.setPixelSize(max(1, round(CAPTION_TITLE_PX * s)))
    title.setBold(True)
    note.setPixelSize(max(1, round(CAPTION_NOTE_PX * s)))
    return title, note


def _caption_height(caption: Caption | None) -> float:
    """Logical height of the band the caption takes above the chart (0 without one)."""
    if not caption:
        return 0.0
    pad = CAPTION_PAD_PX * th.scale_factor()
    title_font, note_font = _caption_fonts()
    height = pad
    if caption.title:
        height += QFontMetricsF(title_font).height()
    if caption.assumptions:
        height += QFontMetricsF(note_font).height() + (pad / 3 if caption.title else 0.0)
    return height + pad


def _paint_caption(painter: QPainter, caption: Caption, width: float, background: QColor) -> None:
    """Draw ``caption`` in logical coordinates across ``width``, ink readable on ``background``."""
    theme = th.theme_for_background(background)
    if background.alpha() == 0:
        theme = th.LIGHT  # a transparent slide background is almost always light
    pad = CAPTION_PAD_PX * th.scale_factor()
    room = max(1.0, width - 2 * pad)
    y = pad
    title_font, note_font = _caption_fonts()
    painter.setPen(QColor(theme.ink))
    for text, font in ((caption.title, title_font), (caption.assumptions, note_font)):
        if not text:
            continue
        metrics = QFontMetricsF(font)
        painter.setFont(font)
        shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, room)
        painter.drawText(QPointF(pad, y + metrics.ascent()), shown)
        y += metrics.height() + pad / 3


def _active_caption(caption: Caption | None) -> Caption | None:
    if caption is not None:
        return caption or None
    extras = _EXTRAS.get()
    return extras.caption if extras is not None and extras.caption else None


def render_image(target, width_px: int = 1920, *, height_px: int | None = None, background="white",
                 antialias: bool = True, caption: Caption | None = None) -> QImage:
    """Render a plot widget, any widget, a scene or an item to an image ``width_px`` wide.

    Everything is scaled together: fonts, line widths and markers grow by the same factor,
    so a 1920 px export looks like the screen, only sharper. A ``caption`` (title and one
    line of assumptions) takes a band above the chart. The image's resolution (PNG pHYs)
    is 96 dpi times that factor, so the picture keeps the chart's size on screen when placed
    at its natural size."""
    if not isinstance(width_px, numbers.Integral) or isinstance(width_px, bool) or width_px < 16:
        raise ValueError(f"width must be a whole number of pixels >= 16, got {width_px!r}")
    if width_px > 20000:
        raise ValueError(f"width must be <= 20000 pixels, got {width_px}")
    bg = _color(background)
    caption = _active_caption(caption)
    _settle(target)
    band = _caption_height(caption)
    chart_height_px = height_px
    if height_px is not None and band:
        source, _ = _source(target)
        chart_height_px = max(1, height_px - round(band * width_px / max(1.0, source.width())))
    with _temporary_size(target, int(width_px), chart_height_px):
        source, _ = _source(target)
        if source.width() <= 0 or source.height() <= 0:
            raise ValueError("nothing to export: the chart has no size")
        factor = width_px / source.width()
        band_px = round(band * factor)
        chart_px = chart_height_px if chart_height_px is not None else max(1, round(source.height() * factor))
        image = QImage(int(width_px), int(chart_px + band_px), QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(bg)
        painter = QPainter(image)
        try:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, antialias)
            painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
            painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, True)
            if caption:
                painter.save()
                painter.scale(factor, factor)
                _paint_caption(painter, caption, source.width(), bg)
                painter.restore()
                painter.translate(0, band_px)
            _paint(target, painter, source, (float(width_px), float(chart_px)), factor, bg)
        finally:
            painter.end()
    # after painting: fonts on an image are sized by its resolution
    dots_per_meter = round(SCREEN_DPI * factor / 0.0254)
    image.setDotsPerMeterX(dots_per_meter)
    image.setDotsPerMeterY(dots_per_meter)
    return image


# ---------------------------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------------------------
def _reason(exc: BaseException) -> str:
    """What went wrong, in words a user acts on; a full disk says so."""
    err = getattr(exc, "errno", None)
    if err == errno.ENOSPC:
        return "disk full (no space left on the device)"
    if err == getattr(errno, "EDQUOT", None):
        return "disk full for this user (quota exceeded)"
    if err in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if err == errno.EROFS:
        return "the file system is read-only"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror[:1].lower() + exc.strerror[1:]
    return str(exc) or type(exc).__name__


def write_export(path, data: bytes, what: str) -> Path:
    """Write ``data`` to ``path`` through the project's atomic write: a temporary file beside
    it (mode from the umask, or the existing file's), fsynced, renamed over the target, the
    folder fsynced. On any failure the previous file is as it was and :class:`ExportError`
    says why in one line (a full disk as "disk full")."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise ExportError(f"{path}: the folder {folder} does not exist")
    if path.is_dir():
        raise ExportError(f"{path}: is a folder, not a file name")
    existed = path.exists()
    try:
        fileio.atomic_write_bytes(bytes(data), path, f"write the {what}")
    except ProjectError as exc:
        cause = exc.__cause__ if exc.__cause__ is not None else exc
        kept = "the previous file is unchanged" if existed else "nothing was written"
        raise ExportError(f"{path}: could not write the {what}: {_reason(cause)}; {kept}") from exc
    return path


def encode_png(image: QImage) -> bytes:
    """The PNG file of ``image`` (text chunks and resolution included), built in memory: an
    opaque one by :mod:`ui.png_writer` (a third of the time), anything else by Qt."""
    encoded = png_writer.encode_opaque(image)
    if encoded is not None:
        return encoded
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    ok = image.save(buffer, "PNG")
    buffer.close()
    if not ok:
        raise ExportError("could not encode the PNG image")
    return bytes(data.data())


def export_png(target, path, width_px: int = 1920, background="white", metadata: dict[str, str] | None = None,
               *, height_px: int | None = None, scenario_json: str | None = None,
               caption: Caption | None = None) -> Path:
    """Write a PNG exactly ``width_px`` wide. ``metadata`` goes into PNG text chunks;
    ``scenario_json`` (or ``metadata[SCENARIO_KEY]``) is what :func:`read_png_scenario` returns.
    The image is encoded in memory first and then written atomically, so a full disk is
    reported as such and never leaves a cut file."""
    path = Path(path)
    caption = _active_caption(caption)
    image = render_image(target, width_px, height_px=height_px, background=background, caption=caption or Caption())
    texts = {"Software": SOFTWARE}
    texts.update(metadata or {})
    if caption and caption.title:
        texts["Title"] = caption.title
    if caption and caption.assumptions:
        texts["Description"] = caption.assumptions
    if scenario_json is not None:
        texts[SCENARIO_KEY] = scenario_json
    for key, value in texts.items():
        image.setText(str(key), str(value))
    try:
        data = encode_png(image)
    except ExportError as exc:
        raise ExportError(f"{path}: {exc}") from None
    return write_export(path, data, "PNG image")


def read_png_scenario(path) -> str | None:
    """The scenario JSON carried by an exported PNG, or ``None`` if it carries none.
    Raises ``ValueError`` if the file is not a readable image."""
    reader = QImageReader(str(path))
    if not reader.canRead():
        raise ValueError(f"{path}: not a readable image ({reader.errorString()})")
    text = reader.text(SCENARIO_KEY)
    return text or None


def png_metadata(path) -> dict[str, str]:
    """All text chunks of a PNG."""
    reader = QImageReader(str(path))
    return {key: reader.text(key) for key in reader.textKeys()}


def render_svg(target, background="white", *, title: str = "Scaling Workbench chart", description: str = "",
               caption: Caption | None = None) -> bytes:
    """The SVG document of ``target`` (vector, one SVG unit per logical pixel, 96 dpi: its
    width and height say the chart's size on screen in millimetres)."""
    bg = _color(background)
    caption = _active_caption(caption)
    _settle(target)
    with _temporary_size(target, None, None):
        return _svg_document(target, bg, title, description, caption)


def _svg_document(target, bg: QColor, title: str, description: str, caption: Caption | None) -> bytes:
    from PySide6.QtSvg import QSvgGenerator

    source, _ = _source(target)
    band = _caption_height(caption)
    width, chart_height = max(1, round(source.width())), max(1, round(source.height()))
    height = chart_height + math.ceil(band)
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    generator = QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setResolution(SCREEN_DPI)
    generator.setSize(QSize(width, height))
    generator.setViewBox(QRectF(0, 0, width, height))
    generator.setTitle(title)
    generator.setDescription(description or SOFTWARE)
    painter = QPainter()
    if not painter.begin(generator):
        raise ExportError("could not start the SVG drawing")
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        if bg.alpha() > 0:
            painter.fillRect(QRectF(0, 0, width, height), bg)
        if caption:
            _paint_caption(painter, caption, float(width), bg)
            painter.translate(0, math.ceil(band))
        _paint(target, painter, source, (float(width), float(chart_height)), 1.0, bg)
    finally:
        painter.end()
    buffer.close()
    return bytes(data.data())


def export_svg(target, path, background="white", *, title: str = "Scaling Workbench chart",
               description: str = "", caption: Caption | None = None) -> Path:
    """Write an SVG by rendering the scene through ``QSvgGenerator`` (see :func:`render_svg`),
    built in memory and written atomically."""
    path = Path(path)
    caption = _active_caption(caption)
    if caption and caption.assumptions and not description:
        description = caption.assumptions
    try:
        data = render_svg(target, background, title=caption.title if caption and caption.title else title,
                          description=description, caption=caption or Caption())
    except ExportError as exc:
        raise ExportError(f"{path}: {exc}") from None
    return write_export(path, data, "SVG drawing")


# ---------------------------------------------------------------------------------------------
# CSV
# ---------------------------------------------------------------------------------------------
#: Significant digits of a number in a CSV: enough for any input or result, few enough that
#: float noise (424.9999999999999) reads as the number it is (425).
CSV_DIGITS = 12
RESULTS_HEADER = ("quantity", "value", "unit")


def quantity_header(name: str, unit: str) -> str:
    """A CSV header naming its unit: ("attainable", "FLOP/s") -> "attainable (FLOP/s)";
    a dimensionless quantity gets "(1)"."""
    return f"{name} ({unit or '1'})"


def format_number(value: float, digits: int = CSV_DIGITS) -> str:
    """The shortest text that reads back as ``value`` rounded to ``digits`` significant
    digits: 424.9999999999999 -> "425", 0.1 + 0.2 -> "0.3", 2**40 -> "1099511627776"
    (whole numbers stay exact), 1e-7 -> "1e-07"."""
    v = float(value)
    if math.isnan(v):
        return ""
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v.is_integer() and abs(v) < 2**53:
        return str(int(v))
    rounded = float(f"{v:.{digits}g}")
    if rounded.is_integer() and abs(rounded) < 2**53:
        return str(int(rounded))
    return repr(rounded)


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return format_number(value)
    return str(value)


def _is_text_column(values: Sequence) -> bool:
    return all(isinstance(v, str) or v is None for v in values) and any(isinstance(v, str) for v in values)


def _check_headers(columns: Sequence[tuple[str, Sequence]]) -> None:
    for header, values in columns:
        if not isinstance(header, str) or not header.strip():
            raise ValueError("every CSV column needs a header")
        if not _UNIT_SUFFIX.search(header) and not _is_text_column(list(values)):
            raise ValueError(f"CSV header {header!r} must name its unit, e.g. 'intensity (FLOP/B)'")


def _write_rows(path, header: list[str], rows: Iterable[Iterable]) -> Path:
    """One CSV file: the panel's results table first when a panel export asked for it
    (quantity, value, unit; then an empty line), then the data under ``header``."""
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    extras = _EXTRAS.get()
    if extras is not None and extras.results:
        writer.writerow(RESULTS_HEADER)
        writer.writerows(extras.results)
        writer.writerow([])
    writer.writerow(header)
    for row in rows:
        writer.writerow([_cell(v) for v in row])
    return write_export(path, text.getvalue().encode("utf-8"), "CSV file")


def export_csv(path, columns: Sequence[tuple[str, Sequence]]) -> Path:
    """Write columns side by side. Every numeric column's header names its unit; all columns
    must have the same length (use :func:`export_series_csv` for unequal series)."""
    columns = [(h, list(v)) for h, v in columns]
    if not columns:
        raise ValueError("nothing to export: no columns")
    _check_headers(columns)
    lengths = {h: len(v) for h, v in columns}
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{h}: {n}" for h, n in lengths.items())
        raise ValueError(f"columns differ in length ({detail}); use the long format (export_series_csv)")
    return _write_rows(path, [h for h, _ in columns], zip(*(v for _, v in columns), strict=True))


def export_series_csv(path, series: Sequence[tuple[str, Sequence, Sequence]], x_header: str, y_header: str,
                      series_header: str = "series") -> Path:
    """Several series of any lengths in long format: one row per point, (series, x, y)."""
    _check_headers([(x_header, [0.0]), (y_header, [0.0])])
    rows = []
    for name, xs, ys in series:
        xs, ys = list(xs), list(ys)
        if len(xs) != len(ys):
            raise ValueError(f"series {name!r}: x has {len(xs)} values but y has {len(ys)}")
        rows.extend((name, x, y) for x, y in zip(xs, ys, strict=True))
    return _write_rows(path, [series_header, x_header, y_header], rows)


def export_chart_csv(chart, path) -> Path:
    """A chart's numbers: wide columns when the series share x, long format otherwise."""
    columns = chart.csv_columns()
    if columns:
        return export_csv(path, columns)
    return export_series_csv(path, chart.chart_data(), chart.axis_header("x"), chart.axis_header("y"))


# ---------------------------------------------------------------------------------------------
# a panel's export: its chart with an optional caption, its numbers with its results table
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Extras:
    """What a panel export adds to the files its panel writes."""

    caption: Caption | None = None
    results: tuple[tuple[str, str, str], ...] = ()


# Set for the duration of export_panel only, so the panel's own export_to (and any override
# of it) writes through the functions above and still gets the caption and results table.
_EXTRAS: ContextVar[_Extras | None] = ContextVar("scaling_workbench_export_extras", default=None)


def panel_results(panel) -> tuple[tuple[str, str, str], ...]:
    """The panel's headline results as its table shows them: (quantity, value, unit) rows;
    a value the table shows as "–" (not available) is left empty."""
    table = getattr(panel, "results", None)
    rows = table.rows() if table is not None and hasattr(table, "rows") else []
    out = []
    for quantity, value, unit in rows:
        if not quantity.strip():
            continue
        out.append((quantity.strip(), "" if value.strip() in ("–", "-") else value.strip(), unit.strip()))
    return tuple(out)


def export_panel(panel, fmt: str, path, *, width_px: int = 1920, background="white",
                 caption: Caption | None = None, **options) -> Path:
    """Export what ``panel`` shows: its chart as PNG or SVG (with ``caption`` above it when
    given), or its numbers as CSV headed by its results table. Goes through
    ``panel.export_to`` so a panel's own choices (which chart, its export style) hold;
    ``options`` are passed on to it (e.g. the run plan's ``chart=``)."""
    extras = _Extras(caption=caption if fmt in ("png", "svg") and caption else None,
                     results=panel_results(panel) if fmt == "csv" else ())
    token = _EXTRAS.set(extras)
    try:
        return Path(panel.export_to(fmt, path, width_px=width_px, background=background, **options))
    finally:
        _EXTRAS.reset(token)


def _count(n: float, noun: str) -> str:
    return f"{int(n):,} {noun}" if float(n).is_integer() else f"{n:g} {noun}"


def _magnitude(n: float) -> str:
    """70e9 -> "70B", 15e12 -> "15T", 1.5e6 -> "1.5M": how parameters and tokens are quoted."""
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= scale:
            return f"{n / scale:.3g}{suffix}"
    return f"{n:g}"


def default_assumptions(scenario, hardware_name: Callable[[str], str] | None = None) -> str:
    """One line of what a scenario assumes, for a slide: hardware, GPUs, precision, model
    size and training tokens, whichever the scenario has (a collective: what is sent over
    which link). ``hardware_name`` turns a preset key into its name."""
    from workbench.hardware import PRECISION_LABELS
    from workbench.scenarios import VALUE_LABELS

    name = hardware_name or (lambda key: key)
    parts: list[str] = []
    hardware = getattr(scenario, "hardware", None)
    if isinstance(hardware, str) and hardware:
        parts.append(name(hardware))
    elif isinstance(hardware, (tuple, list)) and hardware:
        parts.append(" vs ".join(name(k) for k in hardware))
    if getattr(scenario, "n_gpus", None):
        parts.append(_count(scenario.n_gpus, "GPUs" if scenario.n_gpus != 1 else "GPU"))
    collective = getattr(scenario, "collective", None)
    if collective:
        label = VALUE_LABELS.get("collective", {}).get(collective, collective)
        if not parts:
            label = label[:1].upper() + label[1:]
        size = getattr(scenario, "size_bytes", None) or getattr(scenario, "message_bytes", None)
        parts.append(f"{label} of {units.format_quantity(size, 'B', binary=True)}" if size else label)
    if getattr(scenario, "n_ranks", None):
        parts.append(_count(scenario.n_ranks, "ranks"))
    if getattr(scenario, "link_bw", None):
        parts.append(f"{units.format_quantity(scenario.link_bw, 'B/s')} per link")
    if getattr(scenario, "alpha", None):
        parts.append(f"α {units.format_quantity(scenario.alpha, 's')}")
    precision = getattr(scenario, "precision", None)
    if precision:
        label = PRECISION_LABELS.get(precision, precision)
        parts.append(f"{label}, 2:4 sparse" if getattr(scenario, "sparse", False) else label)
    if getattr(scenario, "n_params", None):
        parts.append(f"{_magnitude(scenario.n_params)} parameters")
    if getattr(scenario, "train_tokens", None):
        parts.append(f"{_magnitude(scenario.train_tokens)} tokens")
    return " · ".join(parts)
