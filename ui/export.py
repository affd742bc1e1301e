"""Exports of charts and their numbers: PNG (with the scenario inside), SVG, CSV.

Headless-capable: the GUI and the command line ``export`` call the same functions under
``QT_QPA_PLATFORM=offscreen``. pyqtgraph's own exporters are not used: its SVGExporter crashes
on current Qt (pyqtgraph issues 3495, 3485) and its ImageExporter leaves cosmetic pens one
pixel thin at high resolution and paints a black background by default. Here the scene is
rendered with a plain scale transform, every cosmetic pen is widened by the same factor for
the duration of the export, and the background is always explicit.

Every file is written to a temporary name beside the target and moved into place, so a
failed export never leaves a half-written file.
"""

from __future__ import annotations

import contextlib
import csv
import math
import numbers
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, QPoint, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QImageReader, QPainter, QPen, QRegion, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractGraphicsShapeItem,
    QGraphicsItem,
    QGraphicsScene,
    QGraphicsView,
    QGraphicsWidget,
    QWidget,
)

import workbench

#: The PNG text key holding the scenario JSON.
SCENARIO_KEY = "scaling-workbench-scenario"
SOFTWARE = f"Scaling Workbench {workbench.__version__}"

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


def _scaled(pen: QPen, factor: float) -> QPen:
    pen = QPen(pen)
    if pen.isCosmetic() or pen.widthF() == 0:
        pen.setWidthF((pen.widthF() or 1.0) * factor)
    return pen


@contextlib.contextmanager
def _export_mode(scenes: Iterable[QGraphicsScene], factor: float, antialias: bool = True) -> Iterator[None]:
    """Widen cosmetic pens by ``factor`` and put pyqtgraph items in export mode; undo after."""
    undo: list = []

    def swap(setter, pen: QPen) -> None:
        """Set a widened copy of ``pen`` now, the original on the way out."""
        saved = QPen(pen)
        setter(_scaled(saved, factor))
        undo.append(lambda: setter(saved))

    try:
        for scene in scenes:
            for item in scene.items():
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
                    item._pen = _scaled(item.pen(), factor)
                    # ticks and grid lines grow more slowly than lines: a grid must stay light
                    item._tickPen = _scaled(item.tickPen(), max(1.0, factor / 2))
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
                    item.setPen(_scaled(pen, factor))

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
            target.render(painter, QPoint(0, 0), QRegion(), QWidget.RenderFlag.DrawChildren)
            painter.restore()
        else:
            scene = target if isinstance(target, QGraphicsScene) else target.scene()
            scene.render(painter, QRectF(0, 0, *size), source, Qt.AspectRatioMode.IgnoreAspectRatio)


@contextlib.contextmanager
def _temporary_size(target, width_px: int, height_px: int | None) -> Iterator[None]:
    """With an explicit height, resize a widget so its aspect ratio matches, then restore."""
    if height_px is None or not isinstance(target, QWidget):
        yield
        return
    old = target.size()
    factor = width_px / max(1, old.width())
    new = QSize(old.width(), max(1, round(height_px / factor)))
    target.resize(new)
    if not target.isVisible():
        QCoreApplication.sendEvent(target, QResizeEvent(new, old))
    try:
        yield
    finally:
        target.resize(old)
        if not target.isVisible():
            QCoreApplication.sendEvent(target, QResizeEvent(old, new))


def render_image(target, width_px: int = 1920, *, height_px: int | None = None, background="white",
                 antialias: bool = True) -> QImage:
    """Render a plot widget, any widget, a scene or an item to an image ``width_px`` wide.

    Everything is scaled together: fonts, line widths and markers grow by the same factor,
    so a 1920 px export looks like the screen, only sharper.
    """
    if not isinstance(width_px, numbers.Integral) or isinstance(width_px, bool) or width_px < 16:
        raise ValueError(f"width must be a whole number of pixels >= 16, got {width_px!r}")
    if width_px > 20000:
        raise ValueError(f"width must be <= 20000 pixels, got {width_px}")
    bg = _color(background)
    with _temporary_size(target, int(width_px), height_px):
        source, _ = _source(target)
        if source.width() <= 0 or source.height() <= 0:
            raise ValueError("nothing to export: the chart has no size")
        factor = width_px / source.width()
        height = height_px if height_px is not None else max(1, round(source.height() * factor))
        image = QImage(int(width_px), int(height), QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(bg)
        painter = QPainter(image)
        try:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, antialias)
            painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
            painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, True)
            _paint(target, painter, source, (float(width_px), float(height)), factor, bg)
        finally:
            painter.end()
    return image


# ---------------------------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------------------------
@contextlib.contextmanager
def _atomic(path, suffix: str) -> Iterator[str]:
    """Yield a temporary path beside ``path``; move it into place if the block succeeds."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise ExportError(f"{path}: folder {directory} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=directory)
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def export_png(target, path, width_px: int = 1920, background="white", metadata: dict[str, str] | None = None,
               *, height_px: int | None = None, scenario_json: str | None = None) -> Path:
    """Write a PNG exactly ``width_px`` wide. ``metadata`` goes into PNG text chunks;
    ``scenario_json`` (or ``metadata[SCENARIO_KEY]``) is what :func:`read_png_scenario` returns."""
    image = render_image(target, width_px, height_px=height_px, background=background)
    texts = {"Software": SOFTWARE}
    texts.update(metadata or {})
    if scenario_json is not None:
        texts[SCENARIO_KEY] = scenario_json
    for key, value in texts.items():
        image.setText(str(key), str(value))
    path = Path(path)
    with _atomic(path, ".png") as tmp:
        if not image.save(tmp, "PNG"):
            raise ExportError(f"{path}: could not write the PNG image")
    return path


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


def export_svg(target, path, background="white", *, title: str = "Scaling Workbench chart",
               description: str = "") -> Path:
    """Write an SVG by rendering the scene through ``QSvgGenerator`` (vector, logical size)."""
    from PySide6.QtSvg import QSvgGenerator

    bg = _color(background)
    source, _ = _source(target)
    width, height = max(1, round(source.width())), max(1, round(source.height()))
    path = Path(path)
    with _atomic(path, ".svg") as tmp:
        generator = QSvgGenerator()
        generator.setFileName(tmp)
        generator.setSize(QSize(width, height))
        generator.setViewBox(QRectF(0, 0, width, height))
        generator.setTitle(title)
        generator.setDescription(description or SOFTWARE)
        painter = QPainter()
        if not painter.begin(generator):
            raise ExportError(f"{path}: could not start the SVG file")
        try:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            if bg.alpha() > 0:
                painter.fillRect(QRectF(0, 0, width, height), bg)
            _paint(target, painter, source, (float(width), float(height)), 1.0, bg)
        finally:
            painter.end()
        del generator  # flush and close the file before it is moved
    return path


# ---------------------------------------------------------------------------------------------
# CSV
# ---------------------------------------------------------------------------------------------
def quantity_header(name: str, unit: str) -> str:
    """A CSV header naming its unit: ("attainable", "FLOP/s") -> "attainable (FLOP/s)";
    a dimensionless quantity gets "(1)"."""
    return f"{name} ({unit or '1'})"


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        v = float(value)
        return "" if math.isnan(v) else repr(v)
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
    path = Path(path)
    with _atomic(path, ".csv") as tmp:
        with open(tmp, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(header)
            for row in rows:
                writer.writerow([_cell(v) for v in row])
    return path


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
