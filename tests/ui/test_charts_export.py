"""Charts and their exports, asserted by content (sizes, pixels, parsed files), not golden images."""

from __future__ import annotations

import csv
import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6.QtCore import QCoreApplication, QPointF, Qt
from PySide6.QtGui import QColor, QImage

from ui import export
from ui import theme as th
from ui.charts import Chart, LogUnitAxis, si_label

SCENARIO = '{"kind": "roofline", "schema_version": 1, "name": "H100 \\u2013 GEMM"}'


@pytest.fixture(autouse=True)
def _light_theme(qapp):
    th.apply_theme(qapp, "light")
    th.set_presentation(False)
    yield
    th.apply_theme(qapp, "light")
    th.set_presentation(False)


@pytest.fixture
def roofline(qtbot):
    chart = Chart(title="Roofline", x_label="Arithmetic intensity", x_unit="FLOP/B",
                  y_label="Attainable", y_unit="FLOP/s", log_x=True, log_y=True)
    qtbot.addWidget(chart)
    chart.resize(800, 450)
    ai = np.logspace(-1, 4, 100)
    chart.add_series("H100", ai, np.minimum(989e12, ai * 3.35e12))
    chart.add_series("A100", ai, np.minimum(312e12, ai * 2.039e12))
    chart.set_operating_point(60.0, 201e12, "GEMM")
    chart.set_log_range(0.1, 1e4, 1e11, 3e15)
    return chart


def _colours(image: QImage, step: int = 7) -> set[int]:
    return {image.pixel(x, y) for x in range(0, image.width(), step) for y in range(0, image.height(), step)}


# -- chart behaviour ----------------------------------------------------------------------------
def test_palette_is_okabe_ito_in_projector_order():
    assert th.OKABE_ITO == ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
    light = [th.series_color(i, th.LIGHT).name().upper() for i in range(8)]
    assert set(light) == set(th.OKABE_ITO)
    assert light[-1] == "#F0E442"  # yellow, weakest on white, comes last
    assert th.series_color(8, th.LIGHT) == th.series_color(0, th.LIGHT)
    assert th.semantic_color("operating_point").name().upper() == th.VERMILLION


def test_log_axis_ticks_read_in_human_units(roofline):
    axis = roofline.axis("y")
    assert isinstance(axis, LogUnitAxis) and axis.logMode
    assert axis.autoSIPrefix is False
    assert axis.logTickStrings([12.0, 13.0, 14.0, 15.0], 1.0, 1.0) == ["1 T", "10 T", "100 T", "1 P"]
    assert "(FLOP/s)" in axis.labelString()
    assert roofline.axis("x").logTickStrings([-1.0, 0.0, 3.0], 1.0, 1.0) == ["0.1", "1", "1 k"]
    assert si_label(3.35e12, "B/s") == "3.35 TB/s"
    assert si_label(256 * 2**20, "B", binary=True) == "256 MiB"


def test_linear_axis_keeps_si_prefix_in_the_label(qtbot):
    chart = Chart(x_label="GPUs", y_label="Throughput", y_unit="FLOP/s")
    qtbot.addWidget(chart)
    assert chart.axis("y").autoSIPrefix is True
    chart.set_log_axes(x=False, y=True)
    assert chart.axis("y").autoSIPrefix is False


def test_log_range_takes_real_values(roofline):
    (x0, x1), (y0, y1) = roofline.getPlotItem().getViewBox().viewRange()
    assert (x0, x1) == pytest.approx((-1.0, 4.0), abs=1e-6)
    assert (y0, y1) == pytest.approx((11.0, math.log10(3e15)), abs=1e-6)
    (rx0, rx1), _ = roofline.visible_range()
    assert (rx0, rx1) == pytest.approx((0.1, 1e4))
    with pytest.raises(ValueError, match="> 0"):
        roofline.set_log_range(0, 10, 1, 10)


def test_log_axis_refuses_values_that_would_vanish(roofline):
    with pytest.raises(ValueError, match="<= 0"):
        roofline.add_series("bad", [0.0, 1.0], [1.0, 2.0])


def test_legend_only_with_more_than_one_series(qtbot):
    chart = Chart()
    qtbot.addWidget(chart)
    chart.add_series("only", [1, 2, 3], [1, 4, 9])
    assert not chart.legend_visible()
    chart.add_series("second", [1, 2, 3], [2, 3, 4])
    assert chart.legend_visible()
    chart.remove_series("second")
    assert not chart.legend_visible()


def test_series_use_the_palette_in_order(roofline):
    first, second = roofline.series()
    assert first.item.opts["pen"].color() == th.series_color(0)
    assert second.item.opts["pen"].color() == th.series_color(1)


def test_chart_data_returns_the_numbers(roofline):
    data = roofline.chart_data()
    assert [name for name, _, _ in data] == ["H100", "A100"]
    name, x, y = data[0]
    assert x[0] == pytest.approx(0.1) and y[-1] == pytest.approx(989e12)
    assert roofline.operating_point() == (60.0, 201e12, "GEMM")


def test_hover_reports_real_data_coordinates(qtbot, roofline):
    roofline.enable_hover()
    roofline.show()
    qtbot.waitExposed(roofline)
    vb = roofline.getPlotItem().getViewBox()
    target = vb.mapViewToScene(QPointF(math.log10(100.0), math.log10(1e13)))
    with qtbot.waitSignal(roofline.hovered, timeout=1000) as blocker:
        qtbot.mouseMove(roofline.viewport(), roofline.mapFromScene(target))
    x, y = blocker.args
    assert x == pytest.approx(100.0, rel=0.05) and y == pytest.approx(1e13, rel=0.05)
    assert "FLOP/B" in roofline.hover_text(x, y)
    with qtbot.waitSignal(roofline.hoverLeft, timeout=1000):
        roofline.hover_at_scene(QPointF(-50, -50))


def test_presentation_mode_thickens_lines_and_fonts(roofline):
    pen = roofline.series()[0].item.opts["pen"].widthF()
    font = roofline.axis("x").style["tickFont"].pointSizeF()
    roofline.set_presentation(True)
    assert roofline.series()[0].item.opts["pen"].widthF() == pytest.approx(pen * th.PRESENTATION_SCALE)
    assert roofline.axis("x").style["tickFont"].pointSizeF() == pytest.approx(font * th.PRESENTATION_SCALE)
    th.set_presentation(False)  # the global switch reaches every registered chart
    assert roofline.series()[0].item.opts["pen"].widthF() == pytest.approx(pen)


def test_dark_theme_restyles_charts_and_palette(qapp, roofline):
    th.apply_theme(qapp, "dark")
    assert roofline.backgroundBrush().color() == QColor(th.DARK.background)
    assert roofline.axis("x").textPen().color() == QColor(th.DARK.ink)
    assert qapp.palette().window().color().lightnessF() < 0.5
    th.apply_theme(qapp, "light")
    assert roofline.backgroundBrush().color() == QColor("#FFFFFF")


# -- PNG ----------------------------------------------------------------------------------------
def test_png_has_the_requested_width_is_not_blank_and_carries_the_scenario(tmp_path, roofline):
    path = export.export_png(roofline, tmp_path / "roofline.png", 1920, metadata={"Title": "Roofline"},
                             scenario_json=SCENARIO)
    image = QImage(str(path))
    assert not image.isNull()
    assert image.width() == 1920
    assert image.height() == round(450 * 1920 / 800)
    assert len(_colours(image)) > 10
    assert QColor.fromRgba(image.pixel(0, 0)) == QColor("white")
    assert image.text(export.SCENARIO_KEY) == SCENARIO  # read back by Qt, non-ASCII included
    assert export.read_png_scenario(path) == SCENARIO
    assert export.png_metadata(path)["Title"] == "Roofline"


def test_transparent_background_has_alpha_zero_in_a_corner(tmp_path, roofline):
    path = export.export_png(roofline, tmp_path / "clear.png", 900, background="transparent")
    image = QImage(str(path))
    assert image.hasAlphaChannel()
    assert QColor.fromRgba(image.pixel(0, 0)).alpha() == 0
    assert QColor.fromRgba(image.pixel(image.width() - 1, image.height() - 1)).alpha() == 0
    assert any(QColor.fromRgba(p).alpha() == 255 for p in _colours(image, 3))


def _blue_run(image: QImage, x: int) -> int:
    """How many pixels of a column are the first series' blue (the line's thickness)."""
    blue = th.series_color(0)
    count = 0
    for y in range(image.height()):
        c = QColor.fromRgba(image.pixel(x, y))
        if abs(c.red() - blue.red()) < 40 and abs(c.green() - blue.green()) < 40 and abs(c.blue() - blue.blue()) < 40:
            count += 1
    return count


def test_high_resolution_png_scales_line_widths_not_hairlines(tmp_path, qtbot):
    chart = Chart()
    qtbot.addWidget(chart)
    chart.resize(400, 300)
    chart.add_series("flat", [0, 10], [5, 5], width=2)
    chart.set_log_range(0, 10, 0, 10)
    small = export.render_image(chart, 400)
    large = export.render_image(chart, 1600)
    thin, thick = _blue_run(small, 200), _blue_run(large, 800)
    assert thin >= 2
    assert thick >= 3.2 * thin  # 4x the pixels, 4x the line (give or take antialiasing)
    # and the chart is as it was after the export
    assert chart.series()[0].item.opts["pen"].widthF() == pytest.approx(2.0)


def test_png_of_a_chart_never_shown_with_explicit_height(tmp_path, qtbot):
    chart = Chart(x_label="GPUs", y_label="Speedup")
    qtbot.addWidget(chart)
    chart.add_series("Amdahl", [1, 2, 4, 8], [1, 1.9, 3.5, 5.9])
    path = export.export_png(chart, tmp_path / "headless.png", 1920, height_px=1080)
    image = QImage(str(path))
    assert (image.width(), image.height()) == (1920, 1080)
    assert len(_colours(image)) > 5
    assert export.read_png_scenario(path) is None


def test_bad_width_and_unreadable_files_are_reported(tmp_path, roofline):
    with pytest.raises(ValueError, match="width"):
        export.export_png(roofline, tmp_path / "x.png", 0)
    not_png = tmp_path / "notes.png"
    not_png.write_text("not an image")
    with pytest.raises(ValueError, match="notes.png"):
        export.read_png_scenario(not_png)
    with pytest.raises(export.ExportError, match="does not exist"):
        export.export_png(roofline, tmp_path / "missing" / "x.png", 640)
    assert not list(tmp_path.glob(".*"))  # no temporary files left behind


# -- SVG ----------------------------------------------------------------------------------------
def test_svg_parses_with_an_svg_root(tmp_path, roofline):
    path = export.export_svg(roofline, tmp_path / "roofline.svg", title="Roofline")
    root = ET.parse(path).getroot()
    assert root.tag.rsplit("}", 1)[-1] == "svg"
    text = path.read_text(encoding="utf-8")
    assert "Roofline" in text and "<path" in text or "<polyline" in text


# -- CSV ----------------------------------------------------------------------------------------
def test_csv_round_trips_with_unit_headers(tmp_path):
    ai = [0.5, 1.0, 295.0]
    path = export.export_csv(tmp_path / "roof.csv", [
        ("intensity (FLOP/B)", ai),
        (export.quantity_header("attainable", "FLOP/s"), [1.675e12, 3.35e12, 989e12]),
        (export.quantity_header("efficiency", ""), [0.1, 0.2, 1.0]),
    ])
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["intensity (FLOP/B)", "attainable (FLOP/s)", "efficiency (1)"]
    assert [float(v) for v in rows[3]] == [295.0, 989e12, 1.0]
    assert len(rows) == 4


def test_csv_refuses_headers_without_units_and_ragged_columns(tmp_path):
    with pytest.raises(ValueError, match="unit"):
        export.export_csv(tmp_path / "a.csv", [("intensity", [1.0])])
    with pytest.raises(ValueError, match="long format"):
        export.export_csv(tmp_path / "b.csv", [("x (s)", [1, 2]), ("y (W)", [1])])
    assert not (tmp_path / "a.csv").exists() and not (tmp_path / "b.csv").exists()


def test_series_of_unequal_length_in_long_format(tmp_path, qtbot):
    chart = Chart(x_label="Message size", x_unit="B", y_label="Bus bandwidth", y_unit="B/s")
    qtbot.addWidget(chart)
    chart.add_series("ring", [1e6, 1e7, 1e8], [50e9, 150e9, 180e9])
    chart.add_series("tree", [1e6, 1e8], [60e9, 170e9])
    assert chart.csv_columns() is None
    path = export.export_chart_csv(chart, tmp_path / "bw.csv")
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["series", "Message size (B)", "Bus bandwidth (B/s)"]
    assert [r["series"] for r in rows] == ["ring"] * 3 + ["tree"] * 2
    assert float(rows[-1]["Bus bandwidth (B/s)"]) == 170e9


def test_wide_chart_csv_when_series_share_x(tmp_path, roofline):
    path = export.export_chart_csv(roofline, tmp_path / "roof.csv")
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        first = next(reader)
    assert header == ["Arithmetic intensity (FLOP/B)", "H100 (FLOP/s)", "A100 (FLOP/s)"]
    assert float(first[0]) == pytest.approx(0.1)


def test_grid_pen_and_legend_restore_after_export(tmp_path, roofline):
    axis_pen = roofline.axis("x").pen().widthF()
    export.render_image(roofline, 2400)
    assert roofline.axis("x").pen().widthF() == pytest.approx(axis_pen)
    legend = roofline.getPlotItem().legend
    assert legend.flags() & legend.GraphicsItemFlag.ItemIgnoresTransformations
    assert Qt.AlignmentFlag.AlignLeft  # keeps ruff quiet about the import on older Qt


def test_a_long_title_is_cut_to_the_chart_and_does_not_hold_it_wide(qtbot):
    from ui.charts import Chart

    title = "Roofline: NVIDIA H100 SXM against three other accelerators at BF16, 2:4 sparse"
    chart = Chart(title=title)
    qtbot.addWidget(chart)
    chart.resize(900, 500)
    chart.show()
    qtbot.waitExposed(chart)
    label = chart.getPlotItem().titleLabel
    assert title in label.text and label.toolTip() == ""
    chart.resize(320, 300)
    qtbot.waitUntil(lambda: "…" in label.text)
    assert label.toolTip() == title and chart.toolTip() == ""  # the whole title over the title only
    assert chart.getPlotItem().minimumWidth() <= chart.width()  # the plot fits the narrow chart
    chart.resize(900, 500)
    qtbot.waitUntil(lambda: title in label.text)


def test_the_operating_point_label_keeps_off_the_curves_and_line_labels(qtbot):
    import numpy as np

    from ui.charts import Chart
    from ui.label_placement import boxes_overlap, segment_hits_box

    chart = Chart(title="Speedup", log_x=True, log_y=True)
    qtbot.addWidget(chart)
    chart.resize(900, 600)
    chart.show()
    qtbot.waitExposed(chart)
    n = np.logspace(0, 3, 60)
    chart.add_series("Amdahl", n, 1 / (0.02 + 0.98 / n))
    chart.add_series("Ideal", n, n, style="dash")
    chart.add_reference_line(10.0, label="knee at 10 GPUs")
    chart.set_log_range(1, 1000, 1, 1000)
    chart.set_operating_point(8.0, 1 / (0.02 + 0.98 / 8), "8 GPUs: 7.02×")
    qtbot.waitUntil(lambda: chart._op_label.isVisible())
    QCoreApplication.processEvents()
    label = chart._op_label
    label.updateTransform(force=True)
    r = label.textItem.sceneBoundingRect()
    box = (r.left(), r.top(), r.width(), r.height())
    vb = chart.getPlotItem().getViewBox()
    for series in chart.series():
        pts = [vb.mapViewToScene(QPointF(np.log10(x), np.log10(y))) for x, y in zip(series.x, series.y, strict=True)]
        assert not any(segment_hits_box(((a.x(), a.y()), (b.x(), b.y())), box) for a, b in zip(pts, pts[1:], strict=False)), series.name
    line_label = chart._lines[0][0].label
    q = line_label.sceneBoundingRect()
    assert not boxes_overlap(box, (q.left(), q.top(), q.width(), q.height()))
    assert vb.sceneBoundingRect().contains(r)


def test_the_operating_point_label_is_placed_again_when_the_chart_is_resized(qtbot):
    import numpy as np

    from ui.charts import Chart
    from ui.label_placement import boxes_overlap

    chart = Chart(title="Throughput")
    qtbot.addWidget(chart)
    chart.resize(800, 500)
    chart.show()
    qtbot.waitExposed(chart)
    x = np.linspace(300, 700, 40)
    chart.add_series("rate", x, 3000 + 7 * (x - 300))
    chart.set_log_range(280, 720, 2500, 6200)
    chart.set_operating_point(700.0, 5800.0, "700 W (uncapped): 5.8k tokens/s")

    def clear_of_marker() -> bool:
        chart._op_label.updateTransform(force=True)
        r = chart._op_label.textItem.sceneBoundingRect()
        vb = chart.getPlotItem().getViewBox()
        p = vb.mapViewToScene(QPointF(*chart.to_view(700.0, 5800.0)))
        return not boxes_overlap((r.left(), r.top(), r.width(), r.height()), (p.x() - 6, p.y() - 6, 12, 12))

    assert clear_of_marker()
    chart.resize(330, 260)
    qtbot.waitUntil(lambda: chart.width() == 330)
    QCoreApplication.processEvents()
    assert clear_of_marker()  # the label did not keep its old place over the point


def test_an_export_right_after_an_edit_of_a_shown_chart_fits_its_axes_to_the_new_ticks(chart):
    """A script that changes a chart on screen and exports it at once (no event loop turn
    between): the axes have not painted their new tick labels, so they do not know their
    width yet; the export paints them first, and the axis title does not run into the tick
    labels (the first export was laid out for the old ticks: its axes differed from the
    second's)."""
    def axes(image: QImage) -> list[QImage]:
        # the left axis' strip and the bottom axis' strip, in the export's pixels
        scale = image.width() / chart.width()
        view = chart.getPlotItem().getViewBox().sceneBoundingRect()
        left = math.floor(view.left() * scale) - 2
        bottom = math.ceil(view.bottom() * scale) + 2
        return [image.copy(0, 0, left, image.height()), image.copy(0, bottom, image.width(), image.height() - bottom)]

    chart.add_series("ring", [1, 10, 100, 1000], [2, 20, 200, 2000])
    chart.set_operating_point(30.0, 60.0, "here")
    first = export.render_image(chart, 1280)
    assert axes(export.render_image(chart, 1280)) == axes(first)
    chart.add_series("ring", [1, 10, 100, 1000], [2e3, 2e4, 2e5, 2e6])  # wider tick labels
    first = export.render_image(chart, 1280)
    assert axes(export.render_image(chart, 1280)) == axes(first)


# -- reference lines, stroked in device pixels -----------------------------------------------
@pytest.mark.parametrize("scale", [1.0, 2.0])  # on screen, and an export at twice the size
@pytest.mark.parametrize("presenting", [False, True])
def test_reference_lines_light_the_pixels_pyqtgraphs_own_paint_lights(qtbot, roofline, scale, presenting):
    # ReferenceLine draws its dashed line from its ends mapped to the device (a cosmetic pen
    # dashed through the view's scaling was most of its paint): each line, painted both ways
    # where the view paints it, lights the same pixels
    import pyqtgraph as pg
    from chart_items import pixels
    from PySide6.QtGui import QPainter, QTransform

    from ui.charts import ReferenceLine

    roofline.set_presentation(presenting)
    lines = [roofline.add_reference_line(5e14, vertical=False, label="a ceiling"),
             roofline.add_reference_line(295.0, vertical=True, label="ridge")]
    roofline.show()
    qtbot.waitExposed(roofline)
    roofline.settle()
    size = roofline.viewport().size() * scale
    for line in lines:
        assert isinstance(line, ReferenceLine)
        line.boundingRect()  # (its ends are worked out with its bounds, before a paint)
        device = line.deviceTransform(roofline.viewportTransform()) * QTransform.fromScale(scale, scale)
        images = []
        for paint in (ReferenceLine.paint, pg.InfiniteLine.paint):
            image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
            image.fill(QColor("white"))
            painter = QPainter(image)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setTransform(device)
            paint(line, painter, None, None)
            painter.end()
            images.append(image)
        ours, theirs = (pixels(image) for image in images)
        # every pixel within a few levels of grey (a line a pixel off differs by far more): the
        # edges' antialiasing is worked out at another sub-pixel precision through a transform
        assert np.abs(ours - theirs).max() <= 4
        assert (ours.min(axis=2) < 128).sum() > 100  # (the line is in the picture)
