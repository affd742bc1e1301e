"""What keeps a value change in the All-reduce panel within a frame (issue 15), checked by
counting and by identity, never by timing: the charts in front keep their items (curves,
reference lines and their labels, both legends and their entries, the operating point and its
label) and place their overlays once per change; the tab behind is drawn when it is chosen,
with the latest numbers, and only then; and what is shown is still what ``workbench`` says."""

from __future__ import annotations

from pathlib import Path

import pytest
from chart_items import deliver_events, item_ids

from ui import theme as th
from ui.catalog import HardwareCatalog
from ui.charts import si_label
from ui.panels.allreduce import SCALE_TAB, SIZE_TAB, AllReducePanel
from workbench import comms_sweep, units
from workbench.scenarios import AllReduceScenario

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "nccl"
HEALTHY = "h100-node-healthy-allreduce.txt"
TWO_NODES = "h100-2node-nic400-allreduce.txt"
MiB = 2**20
SIZES = (256 * MiB, 1024 * MiB, 64 * MiB, 256 * MiB)


@pytest.fixture
def panel(qtbot):
    p = AllReducePanel(HardwareCatalog(), AllReduceScenario(size_bytes=256 * MiB, n_ranks=8))
    qtbot.addWidget(p)
    p.resize(1800, 1000)
    p.show()
    qtbot.waitExposed(p)
    deliver_events()
    return p


def _row(panel, quantity):
    return {q: (value, unit) for q, value, unit in panel.results.rows()}[quantity]


def _shown(value, unit):
    return tuple(units.format_quantity(value, unit).split(" ", 1))


def test_a_size_change_keeps_every_item_in_front_and_places_the_overlays_once(panel):
    for name in (HEALTHY, TWO_NODES):  # the logs' points, their models and the second legend too
        assert panel.load_log_from(FIXTURES / name)
    panel.edit(size_bytes=SIZES[0])
    deliver_events()
    charts = [panel.chart, panel.busbw_chart]
    assert panel.chart.side_legend_names() == [HEALTHY, TWO_NODES]
    before = [item_ids(c) for c in charts]
    for size in SIZES[1:]:
        placed = [c.overlay_placements for c in charts]
        assert panel.edit(size_bytes=size)
        deliver_events()
        assert [item_ids(c) for c in charts] == before, size  # nothing made again, nothing left over
        assert [c.overlay_placements - p for c, p in zip(charts, placed, strict=True)] == [1, 1], size
        assert panel.chart.operating_point()[0] == size
    assert panel.chart.side_legend_names() == [HEALTHY, TWO_NODES]


def test_the_tab_behind_is_drawn_when_chosen_with_the_latest_numbers_and_only_then(panel):
    s = panel.scenario()
    behind = [panel.ranks_chart, panel.link_chart]
    front = [panel.chart, panel.busbw_chart]
    for tab in (SCALE_TAB, SIZE_TAB):  # shown once: laid out at their size (a resize places again)
        panel.chart_tabs.setCurrentIndex(tab)
        deliver_events()
    placed = [c.overlay_placements for c in behind]
    first = [c.operating_point() for c in behind]
    for size in SIZES[1:]:
        panel.edit(size_bytes=size)
        deliver_events()
    assert [c.overlay_placements for c in behind] == placed  # not drawn behind the other tab
    assert [c.operating_point() for c in behind] == first
    size = SIZES[-2]
    panel.edit(size_bytes=size)
    deliver_events()
    drawn = [c.overlay_placements for c in front]
    panel.chart_tabs.setCurrentIndex(SCALE_TAB)
    deliver_events()
    assert [c.overlay_placements - p for c, p in zip(behind, placed, strict=True)] == [1, 1]
    point = comms_sweep.operating_point(s.collective, size, s.n_ranks, s.link_bw, s.alpha)
    assert panel.ranks_chart.operating_point()[:2] == pytest.approx((s.n_ranks, point.best_time), rel=1e-12)
    assert panel.link_chart.operating_point()[:2] == pytest.approx((s.link_bw, point.best_time), rel=1e-12)
    assert units.format_quantity(size, "B", binary=True) in panel.link_chart._title
    assert [c.overlay_placements for c in front] == drawn  # the size tab, now behind, is left as it was
    # back to a tab that is up to date: nothing is drawn again
    placed = [c.overlay_placements for c in behind]
    panel.chart_tabs.setCurrentIndex(SIZE_TAB)
    deliver_events()
    panel.chart_tabs.setCurrentIndex(SCALE_TAB)
    deliver_events()
    assert [c.overlay_placements for c in front + behind] == drawn + placed
    # an edit on the scale tab: the size tab catches up when it is chosen
    panel.edit(size_bytes=SIZES[1])
    deliver_events()
    assert [c.overlay_placements for c in front] == drawn
    panel.chart_tabs.setCurrentIndex(SIZE_TAB)
    deliver_events()
    assert [c.overlay_placements - p for c, p in zip(front, drawn, strict=True)] == [1, 1]
    assert panel.chart.operating_point()[0] == SIZES[1]
    assert panel.chart_for_export() is panel.charts


def test_after_each_change_the_numbers_shown_are_the_workbench_numbers(panel):
    s = panel.scenario()
    sweep = comms_sweep.sweep(s.collective, s.n_ranks, s.link_bw, s.alpha, s.size_min, s.size_max)
    for size in SIZES:
        panel.edit(size_bytes=size)
        deliver_events()
        point = comms_sweep.operating_point(s.collective, size, s.n_ranks, s.link_bw, s.alpha)
        assert _row(panel, "Ring time") == _shown(point.ring_time, "s")
        assert _row(panel, "Tree time") == _shown(point.tree_time, "s")
        assert _row(panel, f"Bus bandwidth ({point.best_algorithm})") == _shown(point.busbw, "B/s")
        latency = comms_sweep.latency_takes_over(s.collective, size, s.link_bw, s.alpha)
        assert _row(panel, "Latency takes over from") == (f"{latency:,} ranks", "")
        x, y, label = panel.chart.operating_point()
        assert (x, y) == pytest.approx((size, point.best_time), rel=1e-12)
        assert label.endswith(f"{si_label(point.best_time, 's')} ({point.best_algorithm})")
        assert panel.busbw_chart.operating_point()[:2] == pytest.approx((size, point.busbw), rel=1e-12)
        curves = {c.name: c for c in panel.chart.series()}
        assert list(curves) == ["ring", "tree"]
        assert curves["ring"].x.tolist() == sweep.sizes.tolist()
        assert curves["ring"].y.tolist() == sweep.ring.tolist() and curves["tree"].y.tolist() == sweep.tree.tolist()
        shown = curves["ring"].item.getOriginalDataset()  # what pyqtgraph draws, not only what the chart keeps
        assert shown[1].tolist() == sweep.ring.tolist()


def test_the_logs_legend_is_kept_and_renamed_in_place(panel):
    for name in (HEALTHY, TWO_NODES):
        assert panel.load_log_from(FIXTURES / name)
    deliver_events()
    chart = panel.chart
    legend = chart._side_legend
    samples = [sample for sample, _label in legend.items]
    panel.edit(size_bytes=SIZES[1])
    deliver_events()
    assert chart._side_legend is legend and [sample for sample, _label in legend.items] == samples
    assert panel.remove_log(0)
    deliver_events()
    assert chart._side_legend is legend and chart.side_legend_names() == [TWO_NODES]
    assert legend.items[0][0].item is next(s.item for s in chart.series() if s.name == TWO_NODES)
    assert panel.clear_log()
    deliver_events()
    assert chart.side_legend_names() == [] and not legend.isVisible()  # hidden, kept for the next log
    assert panel.load_log_from(FIXTURES / HEALTHY)
    deliver_events()
    assert chart._side_legend is legend and legend.isVisible() and chart.side_legend_names() == [HEALTHY]


def test_a_theme_change_restyles_both_legends(qtbot, qapp, panel):
    assert panel.load_log_from(FIXTURES / HEALTHY)
    deliver_events()
    try:
        th.apply_theme(qapp, "dark")
        deliver_events()
        ink = th.current_theme().ink
        for legend in (panel.chart.getPlotItem().legend, panel.chart._side_legend):
            assert legend.isVisible()
            assert legend.opts["labelTextColor"] == ink
        assert panel.chart.side_legend_names() == [HEALTHY]
    finally:
        th.apply_theme(qapp, "light")


def test_a_new_size_moves_the_points_only_and_another_input_draws_the_curves_again(panel, monkeypatch):
    from ui.charts import Chart

    for name in (HEALTHY, TWO_NODES):
        assert panel.load_log_from(FIXTURES / name)
    deliver_events()
    added = []
    real = Chart.add_series

    def add_series(chart, name, *args, **kwargs):
        added.append((chart, name))
        return real(chart, name, *args, **kwargs)

    monkeypatch.setattr(Chart, "add_series", add_series)
    cells = [id(panel.logs_table.item(r, c)) for r in range(2) for c in range(6)]
    for size in SIZES:
        panel.edit(size_bytes=size)
        deliver_events()
        assert added == []  # the curves, the logs and their models are as they were
        assert panel.chart.operating_point()[0] == size == panel.busbw_chart.operating_point()[0]
    assert [id(panel.logs_table.item(r, c)) for r in range(2) for c in range(6)] == cells
    panel.edit(n_ranks=16)
    deliver_events()
    assert {name for chart, name in added if chart is panel.chart} >= {"ring", "tree", HEALTHY, TWO_NODES}
    s = panel.scenario()
    sweep = comms_sweep.sweep(s.collective, 16, s.link_bw, s.alpha, s.size_min, s.size_max)
    ring = next(c for c in panel.chart.series() if c.name == "ring")
    assert ring.y.tolist() == sweep.ring.tolist()
    assert panel.chart._title == "All-reduce time, 16 ranks"
    added.clear()
    panel.select_log(0)  # another log's fit line
    assert {chart for chart, _name in added} == {panel.chart, panel.busbw_chart}
    assert panel.logs_table.selectedItems()[0].row() == 0


def test_the_operating_points_are_placed_against_the_curves_as_arrays(panel, monkeypatch):
    import ui.label_placement as placement

    one_by_one, at_once = [], []
    real = placement.segments_hit_boxes
    monkeypatch.setattr(placement, "segment_hits_box", lambda *a: one_by_one.append(a) or False)
    monkeypatch.setattr(placement, "segments_hit_boxes",
                        lambda segments, boxes: at_once.append(len(segments)) or real(segments, boxes))
    for name in (HEALTHY, TWO_NODES):  # more curves to keep clear of
        assert panel.load_log_from(FIXTURES / name)
    deliver_events()
    one_by_one.clear(), at_once.clear()
    panel.edit(size_bytes=SIZES[1])
    deliver_events()
    # every curve of each chart tested at once, a few places at a time (label_placement)
    assert 2 <= len(at_once) <= 8 and min(at_once) > 100
    assert len(one_by_one) < 20  # only leader lines, if any (the curves took ~2,500 calls a change)


def test_a_new_size_fits_each_chart_range_once_and_the_labels_moved_after_it_ask_no_fit(panel, monkeypatch):
    import pyqtgraph as pg

    fits = []
    real = pg.ViewBox.updateAutoRange

    def update_auto_range(view):
        fits.append(view)
        return real(view)

    monkeypatch.setattr(pg.ViewBox, "updateAutoRange", update_auto_range)
    charts = [panel.chart, panel.busbw_chart]
    views = [c.getPlotItem().getViewBox() for c in charts]
    for size in SIZES[1:]:  # (the first is the size the panel opened with)
        fits.clear()
        assert panel.edit(size_bytes=size)
        deliver_events()
        # the operating point moved (it counts for the range); its label, placed after the
        # fit and left out of the range, did not ask for another
        assert sorted(map(id, fits)) == sorted(map(id, views)), size
        assert not any(v._autoRangeNeedsUpdate for v in views)
    # an item the range counts still asks for a fit when it moves
    item = panel.chart._op_item
    item.setPos(item.pos().x() + 0.01, item.pos().y())
    assert views[0]._autoRangeNeedsUpdate
    label = panel.chart._op_label
    deliver_events()
    label.setPos(label.pos().x() + 0.01, label.pos().y())
    assert not views[0]._autoRangeNeedsUpdate
