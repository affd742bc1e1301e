"""The Power panel answers a value change by moving what it drew, not by drawing it again
(issue 15): the same plot items survive a change, a tab not shown is drawn when it is shown
(with the new numbers), the numbers shown are still workbench's. Mechanisms, not timings."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from ui.catalog import HardwareCatalog
from ui.panels.power import FOOTPRINT_TAB, POWER_TAB, TABS, TRADEOFF_TAB, WHERE_TAB, PowerPanel
from ui.panels.power_bars import HBarChart
from workbench import carbon, footprint, power
from workbench.scenarios import PowerScenario

H = 3600.0
PROFILE = tuple(float(v) for v in (420, 410, 400, 380, 360, 340, 300, 250, 200, 150, 120, 110, 100, 110, 130,
                                   180, 250, 320, 380, 420, 440, 450, 440, 430))


@pytest.fixture
def panel(qtbot, qapp):
    # every tab with something on it: a partial cap (stragglers), idle hours, a profile
    p = PowerPanel(HardwareCatalog(), PowerScenario(n_gpus=1000, train_tokens=1.08e12, throughput_mfu=None,
                                                    power_cap_w=500.0, capped_gpus=1, idle_s=12 * H,
                                                    idle_power_w_per_gpu=90.0, hourly_g_per_kwh=PROFILE))
    qtbot.addWidget(p)
    p.resize(1600, 900)
    p.show()
    qtbot.waitExposed(p)
    return p


def _charts(panel, tab):
    if tab == POWER_TAB:
        return [panel.chart, panel.rate_chart]
    if tab == TRADEOFF_TAB:
        return [panel.tradeoff.chart]
    if tab == WHERE_TAB:
        return [panel.where.region_chart, panel.where.profile_chart]
    return [panel.footprint_view.energy_chart, panel.footprint_view.co2_chart]


def _items(chart):
    """Every item the chart's plot holds (curves, points, lines, bars, texts) and its legend."""
    plot = chart.getPlotItem()
    return [*plot.items, plot.legend]


def _data(chart):
    bars = chart.bars() if isinstance(chart, HBarChart) else []
    return [np.asarray(s.y).copy() for s in chart.series()] + [b.value for b in bars]


@pytest.mark.parametrize("tab", range(len(TABS)), ids=TABS)
def test_a_value_change_moves_the_same_plot_items(qtbot, panel, tab):
    panel.chart_tabs.setCurrentIndex(tab)
    charts = _charts(panel, tab)
    before = [_items(c) for c in charts]
    data = [_data(c) for c in charts]
    assert all(len(items) > 2 for items in before)
    for value in (0.4, 0.3):  # and back: nothing piles up either
        assert panel.edit(static_fraction=value)
        for chart in charts:
            chart.settle()  # what the chart leaves to the event loop (legend, pooled items) done now
        after = [_items(c) for c in charts]
        assert [[id(i) for i in items] for items in after] == [[id(i) for i in items] for items in before]
        assert all(a is b for items_a, items_b in zip(after, before, strict=True)
                   for a, b in zip(items_a, items_b, strict=True))
    # ... and they did move: a static share of 0.4 draws other numbers than 0.3 (the default)
    panel.edit(static_fraction=0.4)
    moved = [_data(c) for c in charts]
    changed = [any(not np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(m, d, strict=True))
               for m, d in zip(moved, data, strict=True)]
    assert any(changed), "the change moved nothing on this tab"


def test_a_hidden_tab_is_drawn_when_shown_with_the_new_numbers(qtbot, panel, monkeypatch):
    assert panel.chart_tabs.currentIndex() == POWER_TAB
    draws = {name: 0 for name in ("tradeoff", "where", "footprint", "power")}

    def counting(name, real):
        def draw(*args, **kwargs):
            draws[name] += 1
            return real(*args, **kwargs)
        return draw

    monkeypatch.setattr(panel.tradeoff, "show_curve", counting("tradeoff", panel.tradeoff.show_curve))
    monkeypatch.setattr(panel.where, "show_regions", counting("where", panel.where.show_regions))
    monkeypatch.setattr(panel.footprint_view, "show_footprint",
                        counting("footprint", panel.footprint_view.show_footprint))
    monkeypatch.setattr(panel, "_draw", counting("power", panel._draw))
    energy = panel.footprint_view.energy_chart
    total_before = energy._bars[-1].text  # what the hidden tab shows (not read through bars(): that draws)

    assert panel.edit(pue=1.5)
    assert draws == {"tradeoff": 0, "where": 0, "footprint": 0, "power": 1}
    assert panel.stale_tabs() == {TRADEOFF_TAB, WHERE_TAB, FOOTPRINT_TAB}
    assert energy._bars[-1].text == total_before  # not redrawn behind its tab

    # shown as a person does: a click on its tab
    bar = panel.chart_tabs.tabBar()
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(FOOTPRINT_TAB).center())
    assert panel.chart_tabs.currentIndex() == FOOTPRINT_TAB
    assert draws["footprint"] == 1 and FOOTPRINT_TAB not in panel.stale_tabs()
    fp = panel.analysis().footprint
    assert energy._bars[-1].text == f"{fp.facility_energy_kwh / 1e3:.3g} MWh" != total_before
    summary = {q: (v, u) for q, v, u in panel.footprint_view.table.rows()}
    assert summary["Facility energy"] == (f"{fp.facility_energy_kwh / 1e3:.3g}", "MWh")
    # shown again without a change: not drawn again
    panel.chart_tabs.setCurrentIndex(POWER_TAB)
    panel.chart_tabs.setCurrentIndex(FOOTPRINT_TAB)
    assert draws["footprint"] == 1
    # a reader of a hidden tab's numbers gets the new ones (the tab draws first)
    assert draws["where"] == 0
    rows = panel.where.region_rows()
    assert draws["where"] == 1 and WHERE_TAB not in panel.stale_tabs()
    current = next(r for r in rows if r.current)
    assert current.co2e_kg == pytest.approx(fp.facility_energy_kwh * panel.scenario().grid_g_per_kwh / 1000.0)
    assert panel.tradeoff.curve() is panel.analysis().zeus and draws["tradeoff"] == 1


def test_the_numbers_shown_after_a_change_are_workbenchs(qtbot, panel):
    assert panel.edit(static_fraction=0.4)
    s = panel.scenario()
    tdp = panel.catalog.get(s.hardware).tdp_w
    model = dict(compute_bound_share=s.compute_bound_share, static_fraction=0.4,
                 min_voltage_fraction=s.min_voltage_fraction)
    sweep = power.power_cap_sweep(tdp, s.tokens_per_s_per_gpu, **model)
    efficiency = {x.name: x for x in panel.chart.series()}["NVIDIA H100 SXM"]
    rate = {x.name: x for x in panel.rate_chart.series()}["NVIDIA H100 SXM"]
    np.testing.assert_allclose(efficiency.x, sweep.cap_w)
    np.testing.assert_allclose(efficiency.y, sweep.tokens_per_joule)
    np.testing.assert_allclose(rate.y, sweep.tokens_per_s)
    capped = power.capped_performance(500.0, tdp, s.tokens_per_s_per_gpu, **model)
    assert panel.chart.operating_point()[:2] == pytest.approx((500.0, float(capped.tokens_per_joule)))
    best = power.best_of_sweep(sweep, s.cap_objective, tdp, s.zeus_eta)
    assert [value for _line, value, *_ in panel.chart._lines] == [pytest.approx(float(best.cap_w))]
    # the Energy and time tab, shown after the change
    panel.chart_tabs.setCurrentIndex(TRADEOFF_TAB)
    zeus = footprint.zeus_curve(sweep, tdp, s.train_tokens, s.n_gpus, s.zeus_eta)
    cost = {x.name: x for x in panel.tradeoff.chart.series()}["Zeus cost"]
    np.testing.assert_allclose(cost.y, zeus.cost_j)
    # the regions: the run's facility energy on every grid
    panel.chart_tabs.setCurrentIndex(WHERE_TAB)
    plan = carbon.plan_for_scenario(s, tdp, tokens_per_s_per_gpu=s.tokens_per_s_per_gpu)
    assert panel.plan().summary.duration_s == pytest.approx(plan.summary.duration_s)
    fp = panel.analysis().footprint
    regions = [(g.key, g.g_per_kwh) for g in panel._grids]
    expected = footprint.compare_regions(fp.facility_energy_kwh, regions, 0.0)
    shown = {r.key: r.co2e_kg for r in panel.where.region_rows()}
    assert shown == {r.key: pytest.approx(r.total_co2e_kg) for r in expected}
    bars = panel.where.region_chart.bars()
    assert [b.value for b in bars] == pytest.approx([r.total_co2e_kg / 1000.0 for r in expected])


def test_a_change_that_moves_no_curve_leaves_the_charts_alone(qtbot, panel, monkeypatch):
    calls = []
    for chart in (panel.chart, panel.rate_chart):
        for series in chart.series():
            real = series.item.setData
            monkeypatch.setattr(series.item, "setData",
                                lambda *a, real=real, **k: (calls.append(a), real(*a, **k))[1])
    ranges = [c.visible_range() for c in (panel.chart, panel.rate_chart)]
    assert panel.edit(gpu_hour_price=3.0)  # the cost rows change, no curve does
    assert panel.result_text("Compute cost")[0] != "not set"
    assert calls == []
    assert [c.visible_range() for c in (panel.chart, panel.rate_chart)] == ranges
    assert panel.edit(static_fraction=0.4)  # a curve that moves does get its new data
    assert len(calls) >= 2


def test_a_footprint_chart_draws_every_row_with_its_one_bar_item(qtbot, panel):
    """The footprint's bars are one pyqtgraph item per chart (as the Run plan's): each row's
    bar from 0 to its value, centred on its row, the total in ink with an ink edge."""
    panel.chart_tabs.setCurrentIndex(FOOTPRINT_TAB)
    energy = panel.footprint_view.energy_chart
    item = energy.bar_item
    bars = energy.bars()
    drawn = item.drawn()  # (x0, width, y0, height, fill, edge, edge width) per bar
    assert item.isVisible() and len(drawn) == len(bars)
    assert [d[1] for d in drawn] == pytest.approx([max(b.value, 0.0) for b in bars])
    assert [d[0] for d in drawn] == [0.0] * len(bars)
    assert [d[2] + d[3] / 2 for d in drawn] == pytest.approx([-i for i in range(len(bars))])
    ink = QColor(energy.theme().ink)
    assert bars[-1].bold and drawn[-1][4:6] == (ink, ink)
    before = [d[1] for d in drawn]
    assert panel.edit(pue=1.5)
    assert energy.bar_item is item and [d[1] for d in item.drawn()] != before  # the same item, new widths
    energy.clear_bars()
    assert not item.isVisible()
