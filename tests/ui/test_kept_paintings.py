"""A chart keeps, as pixmaps, the paintings of what an edit left alone (issue 15).

Every edit repaints a chart's whole view; the axes (ticks, grid, labels), the legend and the
curves an edit did not change are then copied from Qt's item cache instead of being painted
again. These tests check, by counting and by pixels, never by timing, that:

- an unchanged curve is kept and a changed one is painted directly;
- what is kept looks exactly as painting it afresh, also after the view moved in the layout;
- an export paints everything afresh, at its own scale, and the screen is right after it;
- in the main window, after edits, a theme switch and presentation mode, every panel with
  charts shows what painting it afresh shows.
"""

from __future__ import annotations

import numpy as np
import pytest
from chart_items import pixels
from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QGraphicsItem
from window_helpers import dark_theme, in_front

from ui import export
from ui.charts import Chart

KEPT = QGraphicsItem.CacheMode.DeviceCoordinateCache
NONE = QGraphicsItem.CacheMode.NoCache
SIZES = [1e3, 1e5, 1e7, 1e9]


def _events() -> None:
    for _ in range(3):
        QCoreApplication.processEvents()


def _draw(chart: Chart, tree_scale: float, point: float) -> None:
    """A panel's redraw: ring always the same, tree scaled, the operating point moved."""
    chart.add_series("ring", SIZES, [1e-5, 1e-4, 1e-3, 1e-2])
    chart.add_series("tree", SIZES, [tree_scale * t for t in (2e-5, 1e-4, 5e-4, 2e-3)])
    chart.set_operating_point(point, 1e-4, "here")


def _draw_twice(chart: Chart) -> None:
    """Two redraws with the same curves and the point moved: the curves are kept from the second."""
    for point in (1e5, 1e6):
        _draw(chart, 1.0, point)
        _events()


def _curve(chart: Chart, name: str):
    return next(s.item.curve for s in chart.series() if s.name == name)


def _every_item(chart: Chart) -> list[QGraphicsItem]:
    return list(chart.scene().items())


def _grab(chart: Chart):
    return chart.grab().toImage()


def _looks_the_same(a: QImage, b: QImage) -> bool:
    """Pixel for pixel, but for a level of rounding: a translucent item (the legend's box)
    painted on a pixmap and then copied rounds its blend once more than one painted in place."""
    return a.size() == b.size() and int(np.abs(pixels(a) - pixels(b)).max()) <= 2


def _grab_afresh(chart: Chart):
    """The chart painted with nothing kept: every item paints itself now."""
    modes = [(item, item.cacheMode()) for item in _every_item(chart)]
    for item, _mode in modes:
        item.setCacheMode(NONE)
    try:
        return _grab(chart)
    finally:
        for item, mode in modes:
            item.setCacheMode(mode)


def test_a_curve_an_edit_left_alone_is_kept_and_a_changed_one_is_painted_directly(chart):
    _draw(chart, 1.0, 1e5)
    _events()
    _draw(chart, 1.5, 1e6)  # tree changes, ring does not
    _events()
    assert _curve(chart, "ring").cacheMode() == KEPT
    assert _curve(chart, "tree").cacheMode() == NONE
    _draw(chart, 1.5, 1e7)  # only the point moves: both curves are kept now
    _events()
    assert _curve(chart, "ring").cacheMode() == KEPT
    assert _curve(chart, "tree").cacheMode() == KEPT
    plot = chart.getPlotItem()
    assert plot.getAxis("left").cacheMode() == KEPT and plot.getAxis("bottom").cacheMode() == KEPT
    # a legend's border lies on the edge of its rect, where Qt would cut a kept pixmap
    assert chart.legend_visible() and plot.legend.cacheMode() == NONE


def test_a_redraw_that_clears_and_adds_keeps_the_unchanged_curve_shown_and_kept(chart):
    """Panels redraw by clearing their series and reference lines and adding them again: a
    curve drawn again under its name is never hidden (Qt drops a hidden item's pixmap), a
    reference line drawn again as it was is the same line, and what is not drawn again
    leaves once the chart settles."""
    def redraw(tree_scale: float, *, with_tree: bool = True) -> None:
        chart.clear_series()
        chart.clear_reference_lines()
        chart.add_series("ring", SIZES, [1e-5, 1e-4, 1e-3, 1e-2])
        if with_tree:
            chart.add_series("tree", SIZES, [tree_scale * t for t in (2e-5, 1e-4, 5e-4, 2e-3)])
        chart.add_reference_line(1e6, label="crossover")

    redraw(1.0)
    _events()
    redraw(1.5)
    _events()
    ring = _curve(chart, "ring")
    line = chart._lines[0][0]
    assert ring.cacheMode() == KEPT
    hidden = []
    ring.visibleChanged.connect(lambda: hidden.append(ring.isVisible()))
    redraw(2.0)
    assert _curve(chart, "ring") is ring and chart._lines[0][0] is line
    _events()
    assert hidden == [] and ring.cacheMode() == KEPT  # shown all along, its pixmap kept
    assert _looks_the_same(_grab(chart), _grab_afresh(chart))
    tree = _curve(chart, "tree").parentItem()
    redraw(2.0, with_tree=False)
    assert tree.isVisible()  # until the chart settles: the redraw could still draw it
    _events()
    assert not tree.isVisible() and [s.name for s in chart.series()] == ["ring"]
    assert _looks_the_same(_grab(chart), _grab_afresh(chart))


def test_an_axis_keeps_a_pixmap_of_its_strip_and_its_grid_is_painted_apart(chart):
    """A kept pixmap is as big as its item: an axis whose rect took in its grid (the whole
    plot) blended a plot-sized pixmap on every repaint. The grid is an item of its own, under
    the axis, painted directly; the axis' rect is its strip."""
    _draw_twice(chart)
    _draw(chart, 1.0, 1e7)  # a few items start being kept per edit: the axes by now
    _events()
    plot = chart.getPlotItem()
    view_rect = plot.getViewBox().sceneBoundingRect()
    for side in ("bottom", "left"):
        axis = plot.getAxis(side)
        assert axis.cacheMode() == KEPT
        strip = axis.sceneBoundingRect()
        assert strip.height() < 0.5 * view_rect.height() if side == "bottom" else strip.width() < 0.5 * view_rect.width()
        grid = axis._grid_item
        assert grid.cacheMode() == NONE and grid.parentItem() is axis
        assert grid.flags() & QGraphicsItem.GraphicsItemFlag.ItemStacksBehindParent
        assert grid.sceneBoundingRect() == view_rect
    chart.resize(700, 420)  # a new size of the view: the grid covers it again
    _events()
    view_rect = plot.getViewBox().sceneBoundingRect()
    assert all(plot.getAxis(side)._grid_item.sceneBoundingRect() == view_rect for side in ("bottom", "left"))
    assert _looks_the_same(_grab(chart), _grab_afresh(chart))


def test_what_is_kept_looks_as_painting_it_afresh(chart):
    for scale, point in ((1.0, 1e5), (1.5, 1e6), (1.5, 1e7), (1.5, 1e4)):
        _draw(chart, scale, point)
        _events()
        assert _looks_the_same(_grab(chart), _grab_afresh(chart))


def test_a_view_moved_in_the_layout_paints_what_it_kept_afresh(chart):
    _draw_twice(chart)
    assert _curve(chart, "ring").cacheMode() == KEPT
    view = chart.getPlotItem().getViewBox()
    before = view.sceneBoundingRect()
    # a wider left axis (longer tick labels) moves the view right: Qt alone would only shift
    # the kept pixmaps, to the nearest pixel
    chart.getPlotItem().getAxis("left").setWidth(before.left() + 7.4)
    _events()
    assert view.sceneBoundingRect().left() != before.left()
    assert _looks_the_same(_grab(chart), _grab_afresh(chart))
    _draw(chart, 1.0, 1e7)  # the next edit keeps the curves again, where they are now
    _events()
    assert _curve(chart, "ring").cacheMode() == KEPT
    assert _looks_the_same(_grab(chart), _grab_afresh(chart))


def test_an_export_paints_everything_afresh_and_the_screen_stays_right(chart):
    _draw_twice(chart)
    assert _curve(chart, "ring").cacheMode() == KEPT
    export.render_image(chart, 1800)  # the first export after an edit differs from later ones by a few pixels of the label
    image = export.render_image(chart, 1800)
    _events()
    assert _looks_the_same(_grab(chart), _grab_afresh(chart))
    for item in _every_item(chart):
        item.setCacheMode(NONE)
    assert _looks_the_same(export.render_image(chart, 1800), image)


def test_a_hidden_chart_keeps_its_cache_modes_for_when_it_is_shown_again(chart, qtbot):
    _draw_twice(chart)
    chart.hide()
    chart.show()
    qtbot.waitExposed(chart)
    _events()
    assert _curve(chart, "ring").cacheMode() == KEPT
    assert _looks_the_same(_grab(chart), _grab_afresh(chart))


MIB = 2**20
#: per panel, edits that move only a marker, move the range, and leave everything alone
PANEL_EDITS = {
    "allreduce": [dict(size_bytes=256 * MIB), dict(size_bytes=1024 * MIB), dict(size_bytes=1024 * MIB)],
    "scaling": [dict(serial_fraction=0.05), dict(serial_fraction=0.02), dict(serial_fraction=0.02)],
    "power": [dict(static_fraction=0.4), dict(static_fraction=0.3), dict(static_fraction=0.3)],
    "roofline": [dict(show_precision_ceilings=True), dict(show_precision_ceilings=False), dict(sparse=True)],
}


def _views_of(widget):
    from PySide6.QtWidgets import QGraphicsView

    return [view for view in widget.findChildren(QGraphicsView) if view.scene() is not None]


def _window_looks_as_painted_afresh(top) -> tuple[int, int]:
    """(items kept as pixmaps, pixels that differ from painting every item afresh)."""
    shown = top.grab().toImage()
    items = [item for view in _views_of(top) for item in view.scene().items()]
    modes = [item.cacheMode() for item in items]
    for item in items:
        item.setCacheMode(NONE)
    try:
        afresh = top.grab().toImage()
    finally:
        for item, mode in zip(items, modes, strict=True):
            item.setCacheMode(mode)
    differing = int((np.abs(pixels(shown) - pixels(afresh)).max(axis=2) > 2).sum())
    return sum(mode == KEPT for mode in modes), differing


@pytest.mark.parametrize("kind", sorted(PANEL_EDITS))
def test_a_panel_shows_what_painting_it_afresh_shows_through_edits_themes_and_presentation(qtbot, new_window, kind):
    window = new_window()
    in_front(qtbot, window, kind)

    def edit(values) -> None:
        window.document.edit_scenario(kind, **values)
        _events()

    kept_somewhere = 0
    for values in PANEL_EDITS[kind]:
        edit(values)
    kept, differing = _window_looks_as_painted_afresh(window)
    kept_somewhere += kept
    assert differing == 0
    with dark_theme(window):
        _events()
        assert _window_looks_as_painted_afresh(window)[1] == 0
        for values in PANEL_EDITS[kind][-2:]:
            edit(values)
        assert _window_looks_as_painted_afresh(window)[1] == 0
        presentation = window.enter_presentation(kind)
        try:
            qtbot.waitExposed(presentation)
            _events()
            assert _window_looks_as_painted_afresh(presentation)[1] == 0
            for values in PANEL_EDITS[kind][:2] + PANEL_EDITS[kind][1:2]:
                edit(values)
            kept, differing = _window_looks_as_painted_afresh(presentation)
            kept_somewhere += kept
            assert differing == 0
        finally:
            window.exit_presentation()
        _events()
        assert _window_looks_as_painted_afresh(window)[1] == 0
    _events()
    assert _window_looks_as_painted_afresh(window)[1] == 0
    assert kept_somewhere > 0  # the check compared kept pixmaps, not only items painted in place


def test_at_a_fractional_device_pixel_ratio_nothing_is_kept(chart):
    """At 1.25 or 1.5 Qt would put a kept pixmap half a device pixel off."""
    chart.devicePixelRatioF = lambda: 1.5  # as on a screen scaled by 150 %
    for point in (1e5, 1e6, 1e7):
        _draw(chart, 1.0, point)
        _events()
    assert all(item.cacheMode() == NONE for item in _every_item(chart))
    del chart.devicePixelRatioF  # back on a whole ratio: kept again from the next edit on
    _draw_twice(chart)
    assert _curve(chart, "ring").cacheMode() == KEPT


def test_an_edit_starts_keeping_only_a_few_items_so_no_edit_pays_for_all_the_pixmaps(chart):
    names = [f"series {i}" for i in range(5)]

    def draw(point: float) -> None:
        for i, name in enumerate(names):
            chart.add_series(name, SIZES, [(i + 1) * t for t in (1e-5, 1e-4, 1e-3, 1e-2)])
        chart.set_operating_point(point, 1e-4, "here")
        _events()

    def kept() -> int:
        return sum(_curve(chart, name).cacheMode() == KEPT for name in names)

    draw(1e5)
    counts = []
    for point in (1e6, 1e7, 1e6, 1e7, 1e6):  # only the point moves
        draw(point)
        counts.append(kept())
    steps = [b - a for a, b in zip([0, *counts], counts, strict=False)]
    assert max(steps) <= Chart.NEWLY_KEPT_PER_EDIT
    assert counts[-1] == len(names)  # all of them, a few edits later
    assert _looks_the_same(_grab(chart), _grab_afresh(chart))
