"""What keeps the Run plan panel quick (issue 15), checked by counting, never by timing.

- one GPU count typed in the toolbar, with the Run plan panel in front, runs the prediction
  and the what-if ladder once, and the panel's charts keep their bar and text items (given
  new values in place);
- what the panel then shows (bars, results, form fields) is what a fresh panel shows for the
  same plan, and the numbers are ``workbench.plan``'s;
- a chart's text block asks the chart for a new layout only when its size changed, and the
  toolbar refills its precision list only for another device;
- the charts' titles, captions and keys are plain text set as such: an edit typesets no rich
  text in them.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QCoreApplication, QRectF
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QGraphicsTextItem
from window_helpers import type_in

from ui.charts import BarsItem
from ui.flow_text import FlowText, words
from ui.panels.run_plan import RunPlanPanel, _percent, _seconds
from workbench import plan as plan_model


@pytest.fixture
def window(new_window):
    w = new_window()
    w.raise_panel("run_plan")
    return w


def _items(panel) -> dict[str, list[int]]:
    return {name: [id(i) for i in (chart.bar_item, *chart._text_items)] for name, chart in panel.charts().items()}


def _drawn(chart) -> list[tuple]:
    """What the chart's one bar item draws: (x0, width, y0, height, fill, edge, edge width)."""
    item = chart.bar_item
    return item.drawn() if item.isVisible() else []


def _specs(chart) -> list[tuple]:
    return [(b.x0, b.width, b.y0, b.height, b.fill, b.edge, b.edge_width) for b in chart.bars]


def _calls(monkeypatch, name: str) -> list:
    calls = []
    real = getattr(plan_model, name)
    monkeypatch.setattr(plan_model, name, lambda *a, **k: calls.append(a) or real(*a, **k))
    return calls


def test_a_toolbar_edit_predicts_once_and_moves_the_bars_it_has(qtbot, window, monkeypatch):
    panel = window.panel("run_plan")
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "64")
    assert panel.prediction() is not None
    items = _items(panel)
    predicts, ladders = _calls(monkeypatch, "predict"), _calls(monkeypatch, "what_if")
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "512")
    assert window.document.plan().n_gpus == 512 and panel.scenario().n_gpus == 512
    assert "512 ×" in window.summary_label.text()
    assert len(predicts) == 1 and len(ladders) == 1
    assert _items(panel) == items  # no bar or text item made or dropped: one bar item per chart
    for chart in panel.charts().values():
        assert chart.bars and _drawn(chart) == _specs(chart)  # the item draws the new bars
    # the bars are the new prediction's
    p = plan_model.predict(window.document.plan(), window.document.catalog)
    assert panel.prediction().step_time_s == pytest.approx(p.step_time_s)
    widths = [bar.width for bar in panel.step_chart.bars]
    assert widths == pytest.approx([s for _t, _l, s in panel.step_segments()])
    assert sum(widths) == pytest.approx(p.step_time_s)


def test_after_toolbar_edits_the_panel_shows_what_a_fresh_one_shows(qtbot, window):
    panel = window.panel("run_plan")
    for text in ("64", "512", "24"):
        type_in(qtbot, window.context_toolbar.gpu_field.edit, text)
    fresh = RunPlanPanel(window.catalog, window.document.plan())
    qtbot.addWidget(fresh)
    fresh.resize(panel.size())
    fresh.show()
    qtbot.waitExposed(fresh)
    assert panel.results.rows() == fresh.results.rows()
    for name in panel.CONTEXT_FIELDS:
        ours, theirs = panel.field(name), fresh.field(name)
        shown = getattr(ours, "edit", ours)
        expected = getattr(theirs, "edit", theirs)
        text = shown.text() if hasattr(shown, "text") else shown.currentText()
        assert text, name  # every field shows the plan's value (a placeholder is no text)
        assert text == (expected.text() if hasattr(expected, "text") else expected.currentText()), name
    for name, chart in panel.charts().items():
        other = fresh.charts()[name]
        assert [b.width for b in chart.bars] == pytest.approx([b.width for b in other.bars])
        assert chart.caption.plain_text() == other.caption.plain_text()
        assert chart.key.plain_text() == other.key.plain_text()
        assert [t.toPlainText() for t in chart.texts] == [t.toPlainText() for t in other.texts]
        # text items not needed by this drawing are hidden, the ones shown are the drawing's
        assert _drawn(chart) == _specs(chart) == _specs(other)
        assert all(item.isVisible() for item in chart.texts)
        assert not any(item.isVisible() for item in chart._text_items[len(chart.texts):])


def test_a_text_block_asks_for_a_layout_only_when_its_size_changes(qtbot, window, monkeypatch):
    block = window.panel("run_plan").step_chart.key
    asked = []
    monkeypatch.setattr(FlowText, "updateGeometry", lambda self: asked.append(self))
    assert block.line_count() == 1
    block.set_paragraphs([words("Compute 1.23 s (99.1%)"), words("and a second line")], "#000000", 9.0)
    assert asked and block.line_count() == 2  # one line more: the chart makes room
    asked.clear()
    block.set_paragraphs([words("Compute 4.56 s (99.7%)"), words("and a second line")], "#000000", 9.0)
    assert asked == [] and "4.56" in block.plain_text()  # other digits, the same lines
    block.set_paragraphs([words("Compute 4.56 s (99.7%)")], "#000000", 9.0)
    assert asked and block.line_count() == 1  # a line less: the chart gives the room back


def test_the_toolbar_keeps_its_precision_list_for_the_same_device(qtbot, window, monkeypatch):
    toolbar = window.context_toolbar
    combo = toolbar.precision_combo
    items = [combo.itemText(i) for i in range(combo.count())]
    cleared = []
    monkeypatch.setattr(combo, "clear", lambda: cleared.append(1))
    type_in(qtbot, toolbar.gpu_field.edit, "256")
    assert window.document.plan().n_gpus == 256
    assert cleared == [] and [combo.itemText(i) for i in range(combo.count())] == items
    assert combo.currentData() == window.document.plan().precision
    assert toolbar.gpu_field.edit.text() == "256"


def _padded_bars(item) -> QRectF:
    """The bars' rectangle padded by half the widest edge in pixels, worked out afresh."""
    rects = [QRectF(x0, y0, w, h).normalized() for x0, w, y0, h, *_look in item.drawn()]
    data = rects[0]
    for rect in rects[1:]:
        data = data.united(rect)
    pad = max(edge_width for *_rest, edge_width in item.drawn()) * 0.5
    px, py = (v.length() * pad for v in item.pixelVectors())
    return data.adjusted(-px, -py, px, py)


def test_a_bars_bounds_are_worked_out_once_per_change(qtbot, window, monkeypatch):
    panel = window.panel("run_plan")
    items = [chart.bar_item for chart in panel.charts().values()]
    computed = []  # the bounds measure the edge in pixels each time they are worked out
    real = BarsItem.pixelVectors
    monkeypatch.setattr(BarsItem, "pixelVectors", lambda self, *a: computed.append(self) or real(self, *a))
    for text in ("64", "512"):
        type_in(qtbot, window.context_toolbar.gpu_field.edit, text)
        window.grab()
        for item in items:
            assert item.boundingRect() == _padded_bars(item)  # the new bars, padded for the new view
        computed.clear()
        for item in items:  # the scene asks dozens of times per change (indexing, painting)
            for _ in range(5):
                item.boundingRect()
        assert computed == []
    panel.step_chart.set_band(panel.prediction().step_time_s * 2)  # another range: another pixel size
    item = panel.step_chart.bar_item
    assert item.boundingRect() == _padded_bars(item)


def test_the_bounds_leave_room_for_the_thickest_edge_wherever_it_is(qtbot, window):
    """pyqtgraph pads a multi-pen item for its last pen only: the largest drag's 2 px edge,
    first of three bars, would be cut at the item's edge on a repaint of that region."""
    chart = window.panel("run_plan").step_chart
    chart.begin_bars()
    chart.add_bar(0.0, 1.0, -0.32, 0.64, QColor("red"), pen=QColor("black"), pen_width=3.0)
    chart.add_bar(1.0, 1.0, -0.32, 0.64, QColor("blue"))
    chart.end_bars()
    window.grab()
    item = chart.bar_item
    px = item.pixelVectors()[0].length()
    assert item.boundingRect().left() == pytest.approx(-1.5 * px)  # half the 3 px edge, not of the last 1 px
    assert item.boundingRect().width() == pytest.approx(2.0 + 3.0 * px)


def test_bars_that_go_and_come_back_are_drawn_by_the_same_item(qtbot, window):
    chart = window.panel("run_plan").step_chart
    shown = _specs(chart)
    chart.clear_bars()
    assert chart.bars == [] and not chart.bar_item.isVisible()
    window.panel("run_plan")._draw_chart("step")
    assert chart.bar_item.isVisible() and _drawn(chart) == _specs(chart) == shown


def test_a_text_block_that_changes_size_is_laid_out_before_the_paint(qtbot, window):
    # laid out at once: the layout request Qt posts is handled after the change's paint, which
    # then drew the chart twice (the old layout, then the new)
    chart = window.panel("run_plan").memory_chart
    block = chart.caption
    qtbot.waitUntil(lambda: abs(block.geometry().height() - block.text_height()) < 1)
    one_line = block.geometry().height()
    block.set_paragraphs([words("Fits in 80 GiB"), words("a second line"), words("and a third")], "#000000",
                         chart.font_pt())
    assert block.text_height() > one_line + 10
    assert block.geometry().height() == pytest.approx(block.text_height(), abs=1)


def test_a_text_block_shown_again_is_laid_out_before_the_paint_too(qtbot, window):
    # from no text (hidden) to a line: shown first, then laid out at once like any new size
    chart = window.panel("run_plan").step_chart
    block = chart.key
    block.set_paragraphs([], "#000000", chart.font_pt())
    assert not block.isVisible()
    qtbot.waitUntil(lambda: block.geometry().height() < 1)
    block.set_paragraphs([words("Compute 1.23 s"), words("Bubble 0.2 s")], "#000000", chart.font_pt())
    assert block.isVisible() and block.text_height() > 10
    assert block.geometry().height() == pytest.approx(block.text_height(), abs=1)


def test_the_what_if_ladder_is_never_drawn_inside_its_own_drawing(qtbot, monkeypatch):
    # a resize rewraps its caption, whose layout resizes the ladder's view while it draws: the
    # drawing checks its room when it ends instead of a second drawing nested in the first
    from ui.catalog import HardwareCatalog

    depth, deepest = [0], [0]
    real = RunPlanPanel._draw_chart

    def draw(self, name, **kw):
        depth[0] += 1
        deepest[0] = max(deepest[0], depth[0])
        try:
            return real(self, name, **kw)
        finally:
            depth[0] -= 1

    monkeypatch.setattr(RunPlanPanel, "_draw_chart", draw)
    panel = RunPlanPanel(HardwareCatalog())  # its first drawing too
    qtbot.addWidget(panel)
    panel.resize(1600, 900)
    panel.show()
    qtbot.waitExposed(panel)
    for width, height in ((700, 500), (900, 700), (1100, 900), (1300, 500), (2000, 1200), (700, 1200), (1600, 900)):
        panel.resize(width, height)
        qtbot.waitUntil(lambda w=width, h=height: (panel.width(), panel.height()) == (w, h))
        QCoreApplication.processEvents()
    assert deepest[0] == 1
    # and it shows as many rows as its room holds now
    fit, _width = panel._what_if_room()
    assert len(panel.what_if_chart.texts) == min(fit, len(panel.what_if_rows()))


def test_a_toolbar_edit_typesets_no_rich_text_in_the_charts(qtbot, window, monkeypatch):
    # titles, captions and keys change on every edit: as rich text each was parsed and laid out
    # as a text document again; they are plain runs now, shown with the new numbers
    panel = window.panel("run_plan")
    typeset = []
    real = QGraphicsTextItem.setHtml
    monkeypatch.setattr(QGraphicsTextItem, "setHtml", lambda item, text: (typeset.append(text), real(item, text)))
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "64")
    p = panel.prediction()
    assert typeset == []
    step = panel.step_chart
    assert step.getPlotItem().titleLabel.plain_text() == f"One training step: {_seconds(p.step_time_s)}"
    assert f"({_percent(p.breakdown['compute'] / p.step_time_s)})" in step.key.plain_text()
    assert panel.memory_chart.caption.plain_text().startswith(panel.memory_summary())


def test_a_new_text_block_draws_in_the_size_it_is_given_whatever_the_application_font(qapp):
    # its first look (9 pt, black) is the one asked for here: the block must not keep the
    # application's font from before it had a look
    font = qapp.font()
    bigger = QFont(font)
    bigger.setPointSizeF(15.0)
    qapp.setFont(bigger)
    try:
        block = FlowText()
        block.set_paragraphs([words("Compute 1.23 s")], "#000000", 9.0)
        assert block._font.pointSizeF() == pytest.approx(9.0)
    finally:
        qapp.setFont(font)


def test_a_text_block_keeps_its_shaped_glyphs_for_the_paints(qapp):
    # QTextLayout drops its shaped glyphs at endLayout() unless asked to keep them, and each
    # paint then shapes the whole paragraph again
    block = FlowText()
    block.set_paragraphs([words("Compute 1.23 s"), words("Data-parallel all-reduce 0.2 s")], "#000000", 9.0)
    layouts = [layout for _para, _width, layout in block._layouts]
    assert len(layouts) == 2 and all(layout.cacheEnabled() for layout in layouts)


def test_a_bar_item_draws_its_bars_in_order_with_their_own_pen_and_brush(qtbot, window):
    chart = window.panel("run_plan").step_chart
    chart.begin_bars()
    chart.add_bar(0.0, 2.0, -0.32, 0.64, QColor("red"), pen=QColor("black"), pen_width=3.0)
    chart.add_bar(2.0, 1.0, -0.32, 0.64, QColor("blue"))
    chart.end_bars()
    edge = QColor(chart.theme().background)
    assert chart.bar_item.drawn() == [(0.0, 2.0, -0.32, 0.64, QColor("red"), QColor("black"), 3.0),
                                      (2.0, 1.0, -0.32, 0.64, QColor("blue"), edge, 1.0)]
    chart.begin_bars()
    chart.end_bars()
    assert chart.bar_item.drawn() == [] and not chart.bar_item.isVisible()


def test_an_export_at_a_higher_resolution_widens_the_bars_edges(qtbot, window):
    """A cosmetic edge is so many pixels wide at any scale: an export at three times the
    screen's resolution draws it three times as wide, as it does the other lines."""
    from PySide6.QtGui import QImage, QPainter

    chart = window.panel("run_plan").step_chart
    chart.begin_bars()
    chart.add_bar(0.0, 1.0, -0.32, 0.64, QColor("red"), pen=QColor("black"), pen_width=2.0)
    chart.end_bars()
    item = chart.bar_item

    def black_across(scale: float) -> int:
        item.setExportMode(scale != 1.0, {"resolutionScale": scale})
        try:
            image = QImage(200, 200, QImage.Format.Format_RGB32)
            image.fill(QColor("white"))
            painter = QPainter(image)
            painter.translate(50, 100)
            painter.scale(100, 100)  # the bar from x 50 to 150 px
            item.paint(painter, None, None)
            painter.end()
            return sum(QColor(image.pixel(x, 100)) == QColor("black") for x in range(200))
        finally:
            item.setExportMode(False)

    on_screen = black_across(1.0)
    assert on_screen >= 4  # both edges, 2 px each
    assert black_across(3.0) >= 3 * on_screen - 2
    assert black_across(1.0) == on_screen  # out of export mode, as before


def test_a_new_step_time_scales_the_bars_not_the_view(qtbot, window):
    """A view's range change re-maps every item through pyqtgraph's signals; the bar charts'
    views keep x from 0 to 1 and a new step time (or memory, or MFU) scales their content, so
    that bars, ticks, texts, lines and the hover still read in real units."""
    from PySide6.QtCore import QPointF

    panel = window.panel("run_plan")
    moved = []
    for chart in panel.charts().values():
        chart.getPlotItem().getViewBox().sigXRangeChanged.connect(lambda *_a, c=chart: moved.append(c))
    for text in ("64", "512", "4096"):
        type_in(qtbot, window.context_toolbar.gpu_field.edit, text)
        window.grab()
        p = panel.prediction()
        step = panel.step_chart
        vb = step.getPlotItem().getViewBox()
        assert vb.viewRange()[0] == [0.0, 1.0]
        # the bars' right end is where the axis puts the step time
        end = step.bar_item.mapToScene(QPointF(p.step_time_s, 0.0)).x()
        assert end == pytest.approx(vb.mapViewToScene(QPointF(p.step_time_s / (p.step_time_s * 1.005), 0.0)).x())
        assert step.axis("x").scale == pytest.approx(p.step_time_s * 1.005)
        assert step.from_view(0.5, 0.0)[0] == pytest.approx(p.step_time_s * 1.005 / 2)  # the hover's seconds
        # the memory chart's capacity line and GiB ticks at their real values
        memory = panel.memory_chart
        line = memory._lines[0]
        assert line[0].value() == pytest.approx(memory.to_view(line[1], 0.0)[0]) and 0.0 < line[0].value() < 1.0
        ticks = memory.axis("x")._tickLevels[0]
        assert ticks and all(0.0 <= v <= 1.0 for v, _text in ticks) and ticks[1][1] != ticks[0][1]
    assert moved == []  # no view moved along x


def test_a_paragraph_shown_again_is_not_laid_out_again(qtbot, window, monkeypatch):
    """Going back to a GPU count shown before (a toggle, an undo) lays none of the Run plan's
    captions and keys out again: the paragraphs shown lately keep their layouts. A new count,
    or a new look, lays them out afresh, and the text is the same as a fresh layout gives."""
    panel = window.panel("run_plan")
    laid = []
    real = FlowText._paragraph_layout
    monkeypatch.setattr(FlowText, "_paragraph_layout",
                        lambda self, para, width: laid.append(para) or real(self, para, width))
    field = window.context_toolbar.gpu_field.edit
    type_in(qtbot, field, "512")
    shown = {name: (chart.caption.plain_text(), chart.key.plain_text()) for name, chart in panel.charts().items()}
    type_in(qtbot, field, "64")
    assert laid  # other numbers: new paragraphs
    laid.clear()
    type_in(qtbot, field, "512")
    assert laid == []
    assert {name: (chart.caption.plain_text(), chart.key.plain_text())
            for name, chart in panel.charts().items()} == shown
    block = panel.step_chart.caption
    lines = block.line_count()
    block.set_paragraphs(block._paragraphs, "#336699", block.size_pt)  # another ink: laid out again
    assert laid and block.line_count() == lines and block.ink == QColor("#336699")
