"""What keeps the roofline's redraw within a frame (issue 15), checked by counting, never by
timing (the benchmark, ``python -m tests.benchmarks.bench --only roofline``, measures it):

- a value change redraws into the same plot items: lines, labels, points, markers, legend;
  lines switched off and on again (the precision ceilings, the L2 roof) come back as the same
  objects, stacked in the order they are drawn;
- the kernel flags (above the roof, time possibly stale) are worked out again only when the
  kernels or the roof change, not for a display option;
- what the panel shows of them is still workbench's: the same flags and texts as
  ``Placements.roof_warnings`` for every kernel, the same counts in the results;
- a redraw gives new values only to what changed: a line drawn again with the same values is
  not given them again (nor hidden and shown, which dropped its kept painting), a label whose
  text a kept item shows takes that item back (a new text is laid out again), the form fills
  again only the part whose input changed, the points keep their positions along x and
  their bounding rectangle while those stay, the results keep their warning colour;
- ``RooflineChart.show_series`` draws what ``clear_series()`` and the same ``add_series()``
  calls draw;
- a device's memory slope and its compute roof, in one pen, are one line.
"""

from __future__ import annotations

import inspect

import numpy as np
import pyqtgraph as pg
import pytest
from chart_items import assert_draws_as, on_screen, pixels
from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtGui import QColor, QUndoStack

from ui.catalog import HardwareCatalog
from ui.panels.roofline import WARNING_MARK, RooflinePanel, _short
from workbench import roofline as rl
from workbench.kernels import Kernel, seed_examples
from workbench.scenarios import RooflineScenario


@pytest.fixture
def catalog(qapp):
    return HardwareCatalog()


def _panel(qtbot, catalog, **fields) -> RooflinePanel:
    panel = RooflinePanel(catalog, RooflineScenario(**fields), undo_stack=QUndoStack())
    qtbot.addWidget(panel)
    panel.resize(1600, 900)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def _drawn(panel) -> None:
    """Deliver what a change left for the event loop (the chart's settle, its paint)."""
    QCoreApplication.processEvents()
    panel.chart.settle()


def _plot_items(panel) -> list:
    """Every item in the chart's view (lines, points, markers, labels, the legend and its
    entries), shown or hidden."""
    vb = panel.chart.getPlotItem().getViewBox()
    out, todo = [], list(vb.childGroup.childItems()) + list(vb.childItems())
    while todo:
        item = todo.pop()
        out.append(item)
        todo.extend(item.childItems())
    return out


def _some_kernels(n: int = 300) -> tuple[Kernel, ...]:
    """Kernels on both sides of the ridge, a third of them with a time; some of those times
    are faster than the roof (flagged), some well under it."""
    rng = np.random.default_rng(7)
    flops = 10 ** rng.uniform(8, 13, n)
    intensity = 10 ** rng.uniform(-1, 3.5, n)
    out = []
    for i in range(n):
        time_s = None if i % 3 else float(flops[i] / 10 ** rng.uniform(12, 15.5))
        out.append(Kernel(f"k{i}", float(flops[i]), float(flops[i] / intensity[i]), time_s))
    return tuple(out)


# -- the same items --------------------------------------------------------------------------------
def test_a_value_change_redraws_into_the_same_plot_items(qtbot, catalog):
    panel = _panel(qtbot, catalog, hardware=("h100-sxm", "b200"), kernels=tuple(seed_examples()),
                   show_precision_ceilings=True, show_l2=True)
    _drawn(panel)
    items = _plot_items(panel)
    lines = {id(s.item) for s in panel.chart.series()}
    assert len(lines) >= 6 and panel.chart.legend_visible()
    assert sum(isinstance(i, pg.TextItem) and i.isVisible() for i in items) >= 8  # names on roofs and points
    labels = set(panel.roof_label_texts())
    for change in ({"show_precision_ceilings": False}, {"show_precision_ceilings": True}, {"show_l2": False},
                   {"show_l2": True}, {"sparse": True}, {"sparse": False}, {"hardware": ("h100-sxm",)},
                   {"hardware": ("h100-sxm", "b200")}):
        panel.edit(**change, _merge=False)
        _drawn(panel)
        now = _plot_items(panel)
        assert {id(i) for i in now} <= {id(i) for i in items}, f"{change}: new plot items"
    # back where it started: the same lines (not new ones), the same labels, in the same order
    assert {id(s.item) for s in panel.chart.series()} == lines
    assert set(panel.roof_label_texts()) == labels
    group = panel.chart.getPlotItem().getViewBox().childGroup.childItems()
    stacking = [group.index(s.item) for s in panel.chart.series()]
    assert stacking == sorted(stacking)  # the lines stack in the order they are drawn


def test_lines_switched_off_wait_hidden_out_of_the_plot(qtbot, catalog):
    panel = _panel(qtbot, catalog, show_precision_ceilings=True)
    _drawn(panel)
    every = [s.item for s in panel.chart.series()]
    assert len(every) > 4  # the roofs, the ridge line and three precision ceilings
    panel.edit(show_precision_ceilings=False)
    _drawn(panel)
    plot = panel.chart.getPlotItem()
    drawn = [s.item for s in panel.chart.series()]
    left = [item for item in every if item not in drawn]
    assert len(drawn) == len(every) - 3 and all(item in every for item in drawn)
    for item in left:  # hidden, out of the plot's lists (the legend, bounds, exports skip it), kept
        assert not item.isVisible() and item not in plot.dataItems and item.scene() is not None
    panel.edit(show_precision_ceilings=True)
    _drawn(panel)
    assert {id(s.item) for s in panel.chart.series()} == {id(item) for item in every}
    assert all(item.isVisible() and item in plot.dataItems for item in every)


def test_points_restyled_in_place_paint_as_pyqtgraph_paints_them(qtbot, catalog, monkeypatch):
    """A new roof moves some kernels across the ridge: only their symbols are written into the
    kept fragment buffer. What is painted is what pyqtgraph paints from the record array."""
    from ui.panels.roofline import KernelScatter

    monkeypatch.setattr(KernelScatter, "DISTINCT_FROM", 10**9)  # every point drawn, as pyqtgraph draws them
    panel = _panel(qtbot, catalog, hardware=("h100-sxm",), kernels=_some_kernels(2000))
    patched = []
    patch = KernelScatter._patch_fragments
    monkeypatch.setattr(KernelScatter, "_patch_fragments",
                        lambda self, rows, rects: patched.append(len(rows)) or patch(self, rows, rects))

    def grab() -> bytes:
        panel.chart.viewport().repaint()
        image = panel.chart.grab().toImage()
        return bytes(image.constBits())  # while ``image`` lives: the bits are its memory

    grab()
    for change in ({"sparse": True}, {"precision": "fp8"}, {"sparse": False}):
        panel.edit(**change, _merge=False)
        fast = grab()
        with monkeypatch.context() as m:
            m.setattr(KernelScatter, "_paint_fast", lambda self, p, widget: False)
            assert grab() == fast, change
    assert max(patched) > 0  # some kernels changed class and were restyled in place
    # the points' bounding rectangle, from the bounds set_points kept, is pyqtgraph's own
    points = panel.points
    assert points.boundingRect() == pg.ScatterPlotItem.boundingRect(points)
    assert points.boundingRect().width() > 0


# -- the kernel flags ------------------------------------------------------------------------------
def test_the_kernel_flags_are_not_worked_out_again_for_a_display_option(qtbot, catalog):
    panel = _panel(qtbot, catalog, hardware=("h100-sxm",), kernels=_some_kernels())
    model = panel.kernel_model
    flagged = model.flagged_rows()
    assert flagged  # the fixture has kernels above their roof
    count = panel.flag_updates
    for change in ({"show_precision_ceilings": True}, {"show_l2": True}, {"hardware": ("h100-sxm", "b200")},
                   {"show_precision_ceilings": False}, {"show_l2": False}):
        panel.edit(**change, _merge=False)
        assert panel.flag_updates == count, change
    panel.kernel_table.selectRow(3)  # a selection only shows them
    panel.kernel_table.clearSelection()
    assert panel.flag_updates == count
    assert model.flagged_rows() == flagged
    # a new roof: the flags follow it (once)
    panel.edit(sparse=True)
    assert panel.flag_updates == count + 1
    assert model.flagged_rows() != flagged
    # an edit of the counts under a measured time: the stale flag, worked out for the new kernels
    row = next(i for i, k in enumerate(panel.kernels()) if k.time_s is not None)
    old = panel.kernels()[row]
    model.kernelEdited.emit(row, Kernel(old.name, old.flops * 2, old.bytes, old.time_s))
    assert panel.flag_updates == count + 2 and model.time_stale(row)
    panel.edit(show_l2=True)
    assert panel.flag_updates == count + 2 and model.time_stale(row)


def _on_screen(widget) -> np.ndarray:
    """What the screen shows of ``widget`` now (the window's flushed pixels)."""
    QCoreApplication.processEvents()
    QCoreApplication.processEvents()
    return pixels(on_screen(widget))


def test_new_flags_repaint_their_cells_and_keep_the_order(qtbot, catalog):
    """A new roof flags other kernels: their cells are repainted (what the table shows is what
    a full repaint shows), and a table sorted by a column the roof does not change keeps its
    order without a layout change (which repaints every row)."""
    panel = _panel(qtbot, catalog, hardware=("h100-sxm",), kernels=_some_kernels())
    model, proxy, table = panel.kernel_model, panel.kernel_proxy, panel.kernel_table
    table.sortByColumn(model.FLOPS, Qt.SortOrder.DescendingOrder)
    order = proxy.source_rows()
    layouts = []
    proxy.layoutChanged.connect(lambda *_a: layouts.append(1))
    viewport = table.viewport()
    _on_screen(viewport)
    for change in ({"sparse": True}, {"sparse": False}, {"precision": "fp8"}, {"precision": "bf16"}):
        flagged = model.flagged_rows()
        panel.edit(**change, _merge=False)
        assert model.flagged_rows() != flagged, change  # the fixture's kernels cross their roof
        shown = _on_screen(viewport)
        viewport.repaint()  # all of it
        assert np.array_equal(shown, _on_screen(viewport)), change
    assert not layouts and np.array_equal(proxy.source_rows(), order)
    # a stale time confirmed: only the flag changes (no number does)
    at, row = next((i, int(r)) for i, r in enumerate(proxy.source_rows()) if panel.kernels()[r].time_s is not None)
    table.scrollTo(proxy.index(at, 0))  # its row on screen
    old = panel.kernels()[row]
    model.kernelEdited.emit(row, Kernel(old.name, old.flops, old.bytes * 2, old.time_s))
    assert model.time_stale(row)
    _on_screen(viewport)
    model.timeConfirmed.emit(row)
    assert not model.time_stale(row)
    shown = _on_screen(viewport)
    viewport.repaint()
    assert np.array_equal(shown, _on_screen(viewport))
    # sorted by a column the roof changes: sorted again, by the new values
    table.sortByColumn(model.FRACTION, Qt.SortOrder.DescendingOrder)
    panel.edit(sparse=True, _merge=False)
    fractions = panel.placements().fraction_of_roof[proxy.source_rows()]
    assert np.all(fractions[:-1] >= fractions[1:])


class _PaintedArea(QObject):
    """The area of the paint events a widget gets (pixels, summed)."""

    def __init__(self, widget):
        super().__init__()
        self.area = 0
        widget.installEventFilter(self)

    def eventFilter(self, obj, event):  # noqa: N802 - Qt naming
        if event.type() == QEvent.Type.Paint:
            self.area += sum(r.width() * r.height() for r in event.region())
        return False


def test_a_table_sorted_by_a_computed_column_repaints_only_what_moved(qtbot, catalog):
    """Sorted by "Of roof", a new roof sorts the kernels again; when the rows on screen show the
    same kernels, only their changed cells are repainted, not every row (Qt's relayout after
    a new order); when other kernels come on screen, all of it. Either way the table shows
    what a full repaint shows."""
    panel = _panel(qtbot, catalog, hardware=("h100-sxm",), kernels=_some_kernels(2000))
    model, proxy, table = panel.kernel_model, panel.kernel_proxy, panel.kernel_table
    viewport = table.viewport()
    changes = ({"sparse": True}, {"sparse": False}, {"precision": "fp8"}, {"precision": "bf16"})
    for change in changes:  # the results beside the table take their widest text (they only grow)
        panel.edit(**change, _merge=False)
    _on_screen(viewport)
    full = viewport.width() * viewport.height()
    painted = _PaintedArea(viewport)
    layouts, checked = [], []
    proxy.layoutChanged.connect(lambda *_a: layouts.append(1))
    for column, order in ((model.FRACTION, Qt.SortOrder.DescendingOrder), (model.BOUND, Qt.SortOrder.AscendingOrder)):
        table.sortByColumn(column, order)
        _on_screen(viewport)
        for change in changes:
            on_screen = proxy.source_rows_in(table.rowAt(0), table.rowAt(viewport.height() - 1))
            painted.area, layouts[:] = 0, []
            panel.edit(**change, _merge=False)
            shown = _on_screen(viewport)
            same = np.array_equal(on_screen, proxy.source_rows_in(table.rowAt(0), table.rowAt(viewport.height() - 1)))
            if layouts and same:  # sorted again, the same kernels on screen: their changed cells only
                assert painted.area < full / 2, (column, change)
                checked.append(change)
            viewport.repaint()  # all of it
            assert np.array_equal(shown, _on_screen(viewport)), (column, change)
        fractions = panel.placements().fraction_of_roof[proxy.source_rows()] if column == model.FRACTION else None
        assert fractions is None or np.all(fractions[:-1] >= fractions[1:])
    assert checked  # the case was there


def test_the_flags_shown_are_workbenchs(qtbot, catalog):
    kernels = _some_kernels()
    panel = _panel(qtbot, catalog, hardware=("h100-pcie",), kernels=kernels)
    model = panel.kernel_model
    hw = catalog.get("h100-pcie")
    caches = [(m.name, m.bandwidth) for m in hw.cache_levels]
    assert caches  # the warnings say when a point sits under the L2 roof
    for sparse in (False, True):
        panel.edit(sparse=sparse, _merge=False)
        roof = rl.ceilings(hw, "bf16", sparse)[0]
        placed = rl.place_many(kernels, roof.peak_flops, roof.mem_bw)
        texts = placed.roof_warnings(roof.peak_flops, caches)
        above = [i for i, t in enumerate(texts) if t]
        assert above and model.flagged_rows() == above
        # one kernel's text as its tip reads it (worked out for that kernel alone), all of them
        # at once as an export reads them: workbench's, word for word
        for row in above[:5]:
            tip = model.index(row, model.FRACTION).data(Qt.ItemDataRole.ToolTipRole)
            assert f"{WARNING_MARK} {texts[row]}" in tip.splitlines()
            assert model.warning(row) == texts[row]
        assert model.warning_texts() == texts
        assert panel.kernel_warnings() == {kernels[i].name: [texts[i]] for i in above}
        rows = {q: v for q, v, _u in panel.results.rows()}
        assert rows[f"{WARNING_MARK} Above the roof"] == f"{len(above):,}"
        assert rows["Kernels"] == f"{len(kernels):,}"
        n_compute = int(np.count_nonzero(placed.compute_bound))
        assert rows["  memory / compute-bound"] == f"{len(kernels) - n_compute:,} / {n_compute:,}"
        checks = dict(zip(*(panel.csv_columns()[i][1] for i in (1, 12)), strict=True))
        assert all(checks[kernels[i].name] == texts[i] for i in above)
        assert all(checks[k.name] == "" for i, k in enumerate(kernels) if i not in above)


# -- what a redraw leaves alone --------------------------------------------------------------------
class _Calls:
    """Counts the calls of a method (patched on its class), with the instances called on."""

    def __init__(self, monkeypatch, cls, name: str):
        self.on: list = []
        real = getattr(cls, name)

        def counted(obj, *args, **kwargs):
            self.on.append(obj)
            return real(obj, *args, **kwargs)

        static = isinstance(inspect.getattr_static(cls, name), staticmethod)
        monkeypatch.setattr(cls, name, staticmethod(counted) if static else counted)

    def __len__(self) -> int:
        return len(self.on)


def _toggle_ceilings(panel, times: int = 4) -> None:
    for _ in range(times):
        panel.edit(show_precision_ceilings=not panel.scenario().show_precision_ceilings, _merge=False)
        _drawn(panel)


def test_ceilings_switched_off_and_on_give_no_line_new_values(qtbot, catalog, monkeypatch):
    """The ceilings and the roofs keep their values while they come and go: every line comes
    back on the item that drew it (the axes held wider than the roofs ask are the same axes
    each time, not read back from the view a few ulps off)."""
    panel = _panel(qtbot, catalog, kernels=tuple(seed_examples()), show_precision_ceilings=True)
    _toggle_ceilings(panel, 2)  # the axes hold what the ceilings asked
    items = {s.name: s.item for s in panel.chart.series()}
    values = _Calls(monkeypatch, pg.PlotDataItem, "setData")
    _toggle_ceilings(panel)
    assert len(values) == 0
    assert {s.name: s.item for s in panel.chart.series()} == items


def test_lines_drawn_again_stay_shown_and_are_not_painted_again(qtbot, catalog, monkeypatch):
    """A redraw that leaves a roof as it was neither hides it nor gives it values: Qt keeps its
    painting (hiding an item drops it), so the roof is not painted again."""
    painted = _Calls(monkeypatch, pg.PlotCurveItem, "paint")  # before the items are made
    panel = _panel(qtbot, catalog, kernels=tuple(seed_examples()))
    roof = next(s.item for s in panel.chart.series() if ": ridge" in s.name)  # the slope and the flat roof
    hidden = []
    roof.visibleChanged.connect(lambda: hidden.append(roof.isVisible()))
    for _ in range(3):  # the chart starts keeping the paintings of what stays
        panel.edit(show_precision_ceilings=True, _merge=False)
        _on_screen(panel.chart)
        panel.edit(show_precision_ceilings=False, _merge=False)
        _on_screen(panel.chart)
    painted.on.clear()
    for _ in range(2):
        for ceilings in (True, False):
            panel.edit(show_precision_ceilings=ceilings, _merge=False)
            _on_screen(panel.chart)
    assert painted.on  # the ceilings came and were painted
    assert roof.curve not in painted.on and not hidden


def test_labels_take_back_the_items_that_show_their_text(qtbot, catalog, monkeypatch):
    """The ceilings' labels come and go on the items that showed them; only a label whose text
    no kept item shows is laid out again (the primary's peak reads "BF16/FP16" beside the
    ceilings, "BF16" without them), and in a font one of them had."""
    panel = _panel(qtbot, catalog, show_precision_ceilings=True)
    _toggle_ceilings(panel, 2)
    texts = _Calls(monkeypatch, pg.TextItem, "setPlainText")
    fonts = _Calls(monkeypatch, pg.TextItem, "setFont")
    for _ in range(4):
        before = {item.toPlainText(): item for item, *_rest in panel._overlays}
        _toggle_ceilings(panel, 1)
        now = {item.toPlainText(): item for item, *_rest in panel._overlays}
        assert all(now[text] is item for text, item in before.items() if text in now)
    assert len(texts) == 4 and all("peak" in item.toPlainText() for item in texts.on)
    assert len(fonts) == 0


def test_the_form_fills_again_only_what_an_edit_changed(qtbot, catalog, monkeypatch):
    panel = _panel(qtbot, catalog, hardware=("h100-sxm", "b200"))
    combos = _Calls(monkeypatch, RooflinePanel, "_fill_hardware_combo")
    filled = _Calls(monkeypatch, RooflinePanel, "_fill_combo")
    for change in ({"precision": "fp8"}, {"sparse": True}, {"show_precision_ceilings": True}, {"show_l2": True}):
        panel.edit(**change, _merge=False)
    assert len(combos) == 0 and len(filled) == 1  # the precision list once, for the new precision
    assert panel.precision_combo.currentData() == "fp8" and panel.ceilings_check.isChecked()
    panel.edit(hardware=("h100-sxm", "mi300x"), _merge=False)
    assert len(combos) == 4 and panel.compare_combos[0].currentData() == "mi300x"


def test_a_redraw_with_nothing_selected_and_no_kernels_does_no_work_for_them(qtbot, catalog, monkeypatch):
    from ui.panels.roofline import KernelScatter

    panel = _panel(qtbot, catalog)
    points = _Calls(monkeypatch, KernelScatter, "set_points")
    order = _Calls(monkeypatch, type(panel.kernel_proxy), "source_rows")
    panel.edit(sparse=True, _merge=False)
    panel.edit(show_precision_ceilings=True, _merge=False)
    assert [p for p in points.on if p is panel.points] == [] and len(order) == 0
    panel.add_kernels(seed_examples())
    panel.select_kernel(1)
    assert panel.selected_rows() == [1] and len(panel.points.data) == len(seed_examples())


def test_the_results_keep_their_warning_colour_while_the_warning_rows_stay(qtbot, catalog, monkeypatch):
    from PySide6.QtWidgets import QTableWidgetItem

    panel = _panel(qtbot, catalog, hardware=("h100-sxm",), kernels=_some_kernels())
    coloured = _Calls(monkeypatch, QTableWidgetItem, "setForeground")

    def warnings() -> list[tuple[int, str]]:
        return [(r, q) for r, (q, _v, _u) in enumerate(panel.results.rows()) if q.startswith(WARNING_MARK)]

    rows_before, warned = panel.results.rows(), warnings()
    panel.edit(precision="fp8", _merge=False)  # other numbers, the warnings in the same rows
    assert warned and warnings() == warned and panel.results.rows() != rows_before
    assert len(coloured) == 0
    error = QColor(panel.chart.theme().error)
    table = panel.results
    for r in range(table.rowCount()):
        warn = table.item(r, 0).text().startswith(WARNING_MARK)
        for c in range(table.columnCount()):
            shown = table.item(r, c).data(Qt.ItemDataRole.ForegroundRole)
            assert (shown is not None and QColor(shown.color()) == error) if warn else shown is None


def test_points_a_later_point_covers_exactly_are_drawn_once(qtbot, catalog, monkeypatch):
    """Many kernels sit at the same pixels (those with no time on the roof, a launch profiled
    many times): a point that a later point of its style covers exactly is not drawn again.
    One point is drawn per pixel and style, and the picture differs from drawing every point
    only in the soft edges a second draw darkened: no point goes missing."""
    from ui.panels.roofline import KernelScatter

    base = _some_kernels(600)
    kernels = tuple(Kernel(f"{k.name} launch {i}", k.flops, k.bytes, k.time_s) for i in range(4) for k in base)
    panel = _panel(qtbot, catalog, hardware=("h100-sxm",), kernels=kernels)
    points = panel.points

    def grab() -> np.ndarray:
        panel.chart.viewport().repaint()
        image = panel.chart.grab().toImage()
        return np.frombuffer(bytes(image.constBits()), np.uint8).astype(int)

    for change in ({}, {"sparse": True}, {"precision": "fp8"}):
        panel.edit(**change, _merge=False)
        once = grab()
        drawn = points.fragments_drawn
        # one per symbol corner (as Qt rounds it) and style, counted here another way
        frags = points._pixmapFragments.ndarray()
        corners = np.unique(np.stack([np.floor(frags[:, 0] - frags[:, 4] / 2 + 0.5),
                                      np.floor(frags[:, 1] - frags[:, 5] / 2 + 0.5),
                                      points._filled_classes], axis=1), axis=0)
        # (two corners may share a hash slot: that only draws a point more)
        assert len(corners) <= drawn <= 1.1 * len(corners) and drawn < len(kernels) / 2, change
        with monkeypatch.context() as m:
            m.setattr(KernelScatter, "DISTINCT_FROM", 10**9)
            every = grab()
            assert points.fragments_drawn == len(kernels)
        difference = np.abs(once - every)
        assert difference.any() and difference.max() < 128, change  # edges a shade lighter, no point gone
    # painted on a device of pixel ratio 2 (a render for a high-density screen): the device
    # scales what is drawn, the symbols land between its pixels, and every point is drawn
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QImage, QPainter

    view = panel.chart
    image = QImage(2 * view.width(), 2 * view.height(), QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(2.0)
    painter = QPainter(image)
    try:
        view.render(painter, QRectF(0, 0, view.width(), view.height()))
    finally:
        painter.end()
    assert points.fragments_drawn == len(kernels)


def test_the_points_keep_their_bounding_rectangle_and_positions_along_x(qtbot, catalog, monkeypatch):
    """Until the points or the view change, the points' bounding rectangle is the one worked
    out last (Qt asks for it several times per paint) and is pyqtgraph's own; a new roof moves
    them up or down only, and their positions along x stay in the fragment buffer. What is
    painted is what pyqtgraph paints, after a zoom and a resize too."""
    from ui.panels.roofline import KernelScatter

    monkeypatch.setattr(KernelScatter, "DISTINCT_FROM", 10**9)  # every point drawn, as pyqtgraph draws them
    panel = _panel(qtbot, catalog, hardware=("h100-sxm",), kernels=_some_kernels(2000))
    points = panel.points
    worked_out = _Calls(monkeypatch, KernelScatter, "_bounding_rect")

    def grab() -> bytes:
        panel.chart.viewport().repaint()
        image = panel.chart.grab().toImage()
        return bytes(image.constBits())

    def as_pyqtgraph_paints() -> bool:
        fast = grab()
        with monkeypatch.context() as m:
            m.setattr(KernelScatter, "_paint_fast", lambda self, p, widget: False)
            return grab() == fast

    grab()
    worked_out.on.clear()
    rect = points.boundingRect()
    assert [points.boundingRect() for _ in range(3)] == [rect] * 3 and len(worked_out) <= 1
    assert rect == pg.ScatterPlotItem.boundingRect(points)
    points.points()  # hovered: pyqtgraph made an item per point
    positions, counted = points._filled_x, len(worked_out)
    panel.edit(sparse=True, _merge=False)
    assert points._filled_x is positions and all(item is None for item in points.data["item"])
    assert points.boundingRect() == pg.ScatterPlotItem.boundingRect(points) and len(worked_out) > counted
    assert as_pyqtgraph_paints()
    assert points._frags_x[0] is positions  # the positions along x were kept in the buffer
    vb = panel.chart.getPlotItem().getViewBox()
    (x0, x1), (y0, y1) = vb.viewRange()
    vb.setRange(xRange=(x0 - 0.5, x1 + 0.3), yRange=(y0 - 0.2, y1 + 0.4), padding=0)
    assert points.boundingRect() == pg.ScatterPlotItem.boundingRect(points)
    assert as_pyqtgraph_paints()
    panel.resize(1300, 800)
    _drawn(panel)
    assert points.boundingRect() == pg.ScatterPlotItem.boundingRect(points)
    assert as_pyqtgraph_paints()


def test_a_new_roof_maps_the_rows_on_screen_in_one_go(qtbot, catalog, monkeypatch):
    """The cells a new roof changed are found for the rows on screen at once, not by mapping
    each row through the sort proxy; they are what a full repaint shows."""
    panel = _panel(qtbot, catalog, hardware=("h100-sxm",), kernels=_some_kernels())
    table, proxy = panel.kernel_table, panel.kernel_proxy
    table.sortByColumn(panel.kernel_model.FLOPS, Qt.SortOrder.DescendingOrder)
    viewport = table.viewport()
    _on_screen(viewport)
    mapped = _Calls(monkeypatch, type(proxy), "mapToSource")
    painted = _PaintedArea(viewport)
    panel.edit(sparse=True, _merge=False)
    shown = _on_screen(viewport)
    assert len(mapped) == 0 and 0 < painted.area < viewport.width() * viewport.height() / 2
    viewport.repaint()
    assert np.array_equal(shown, _on_screen(viewport))


def test_show_series_draws_what_clear_and_add_draw(qtbot):
    """RooflineChart.show_series(): the series, their order, styles, stacking and legend are
    those that clear_series() and the same add_series() calls give; a name drawn again keeps
    its item, and a name drawn before comes back on the item that drew it."""
    from ui.charts import Chart
    from ui.panels.roofline import RooflineChart

    def specs(names):
        return [(name, [1, 10, 100], [i + 1, i + 2, i + 3], {"width": 1 + i, "in_legend": i < 3,
                                                             "style": "dash" if i % 2 else "solid",
                                                             "color": ("#112233", "#445566")[i % 2]})
                for i, name in enumerate(names)]

    fresh, shown = Chart(log_x=True), RooflineChart(log_x=True)
    qtbot.addWidget(fresh)
    qtbot.addWidget(shown)
    shown.show_series(specs(["a", "b", "c", "d"]))
    items = {s.name: s.item for s in shown.series()}
    for names in (["c", "a"], ["a", "b", "c", "d"], ["c", "x", "a"], ["p", "q", "r", "s", "t"], ["only"], [],
                  ["d", "c"]):
        fresh.clear_series()
        for name, x, y, style in specs(names):
            fresh.add_series(name, x, y, **style)
        shown.show_series(specs(names))
        plotted = assert_draws_as(shown, fresh, names)
        assert all(i.isVisible() for i in plotted)
        group = shown.getPlotItem().getViewBox().childGroup.childItems()
        stacking = [group.index(s.item) for s in shown.series()]
        assert stacking == sorted(stacking)
        if names in (["c", "a"], ["a", "b", "c", "d"]):  # kept in place, or back from the pool
            assert all(s.item is items[s.name] for s in shown.series())


def test_a_precision_or_sparsity_toggle_renames_the_compute_roofs_in_place(qtbot, catalog, monkeypatch):
    """A compute roof's legend name carries its ridge, so every toggle renames it: the line
    keeps its item, shown all along, instead of going to the pool and another coming out."""
    from ui.charts import Chart

    panel = _panel(qtbot, catalog, hardware=("h100-sxm", "b200"), kernels=_some_kernels(200))
    _drawn(panel)
    items = sorted(id(s.item) for s in panel.chart.series())
    hidden = _Calls(monkeypatch, Chart, "_park")
    shown = _Calls(monkeypatch, Chart, "_unpark")
    names = {s.name for s in panel.chart.series()}
    for change in ({"precision": "fp8"}, {"sparse": True}, {"precision": "bf16"}, {"sparse": False}):
        panel.edit(**change, _merge=False)
        _drawn(panel)
        before, names = names, {s.name for s in panel.chart.series()}
        assert len(names - before) == 2, (change, names)  # both compute roofs renamed
        assert sorted(id(s.item) for s in panel.chart.series()) == items, change
        assert all(s.item.isVisible() and s.item.name() == s.name for s in panel.chart.series())
    assert len(hidden) == len(shown) == 0
    # a ceiling switched on takes lines from the pool; off again, they go back to it
    panel.edit(show_precision_ceilings=True, _merge=False)
    _drawn(panel)
    assert len(panel.chart.series()) > len(items)
    panel.edit(show_precision_ceilings=False, _merge=False)
    _drawn(panel)
    assert len(hidden) > 0 and sorted(id(s.item) for s in panel.chart.series()) == items


def test_a_devices_memory_slope_and_compute_roof_are_one_line(qtbot, catalog):
    """Both in one pen: drawn as one line from the left edge up to the ridge and on flat, one
    item per device to move on each edit (with a second device, the legend names each)."""
    panel = _panel(qtbot, catalog, hardware=("h100-sxm", "b200"), kernels=_some_kernels(200))
    for change in ({}, {"precision": "fp8"}, {"sparse": True}):
        if change:
            panel.edit(**change, _merge=False)
        _drawn(panel)
        drawn = {s.name: s for s in panel.chart.series()}
        assert not any("bandwidth" in name for name in drawn), change  # no separate slope
        for d, lines in zip(panel.devices(), panel._lines, strict=True):
            memory = next(line for line in lines if line.roof is d.memory)
            compute = next(line for line in lines if line.roof is d.compute)
            (line,) = [s for name, s in drawn.items() if name.startswith(f"{_short(d.hardware.name)}: ridge ")]
            assert line.in_legend
            np.testing.assert_allclose(line.x, [*memory.drawn_x[:-1], *compute.drawn_x])
            np.testing.assert_allclose(line.y, [*memory.drawn_y[:-1], *compute.drawn_y])
