"""The Power and carbon panel in a window renders the document's analysis: one edit computes it
once, and what the panel shows, exports and hands the document is that one result."""

from __future__ import annotations

import pytest
from window_helpers import csv_rows, in_front, type_in

from ui import theme as th
from ui.panels.power import CAP_HEADER, FOOTPRINT_TAB, POWER_TAB, WHERE_TAB
from workbench import footprint, units
from workbench.analyses.power import PowerAnalysis


@pytest.fixture
def light_again(qapp):
    yield
    th.apply_theme(qapp, "light")


@pytest.fixture
def window(new_window):
    return new_window()


@pytest.fixture
def power(qtbot, window):
    """The Power and carbon panel in front."""
    return in_front(qtbot, window, "power")


def _shows(panel, a: PowerAnalysis) -> bool:
    """Whether the panel's table and chart are the numbers of ``a``."""
    return (panel.result_text("Throughput, all GPUs")[0] == units.format_quantity(a.plan.job_tokens_per_s, "")
            and panel.chart.operating_point()[:2] == pytest.approx((a.plan.cap_w,
                                                                    float(a.plan.performance.tokens_per_joule))))


def test_a_toolbar_edit_computes_the_analysis_once_and_the_panel_shows_it(qtbot, window, power):
    computed = window.document.analyses.computed
    before, shown = computed["power"], power.result_text("Throughput, all GPUs")
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "64")
    assert window.document.plan().n_gpus == 64
    assert computed["power"] == before + 1
    a = window.document.analysis("power")
    assert isinstance(a, PowerAnalysis) and a.plan.summary.n_gpus == 64
    assert computed["power"] == before + 1  # the document's read is the panel's result
    # the very object the panel drew: its plan, and the curve behind the Energy and time tab
    assert power.plan() is a.plan and power.tradeoff.curve() is a.zeus
    assert power.field("n_gpus").value() == 64 and _shows(power, a)
    assert power.result_text("Throughput, all GPUs") != shown


def test_a_theme_switch_a_second_read_and_the_exports_compute_nothing_more(qtbot, qapp, window, power,
                                                                          light_again, tmp_path, monkeypatch):
    computed = window.document.analyses.computed
    a = window.document.analysis("power")
    before = computed["power"]
    th.apply_theme(qapp, "dark")  # every series redrawn in the dark palette
    assert window.document.analysis("power") is a and power.plan() is a.plan
    # the sweep's CSV is the analysis's sweep
    path = tmp_path / "power.csv"
    power.chart_tabs.setCurrentIndex(POWER_TAB)
    power.export_to("csv", path)
    rows = csv_rows(path)
    assert rows[0][0] == CAP_HEADER
    assert [float(r[0]) for r in rows[1:]] == pytest.approx(list(a.sweep.cap_w))
    # the regions are compared when their tab needs them, once for this change
    compared = []
    real = footprint.compare_regions
    monkeypatch.setattr(footprint, "compare_regions", lambda *args: compared.append(args) or real(*args))
    power.chart_tabs.setCurrentIndex(WHERE_TAB)
    first = len(compared)
    assert first <= 1  # none when an earlier change had the same numbers: the comparison is kept
    power.export_to("csv", tmp_path / "regions.csv")
    power.chart_tabs.setCurrentIndex(FOOTPRINT_TAB)
    power.export_to("csv", tmp_path / "summary.csv")
    power.chart_tabs.setCurrentIndex(WHERE_TAB)
    assert len(compared) == first
    current = next(r for r in power.where.region_rows() if r.current)
    assert current.co2e_kg == pytest.approx(a.footprint.total_co2e_kg)
    assert computed["power"] == before


def test_an_edit_of_the_panels_own_fields_computes_once(qtbot, window, power):
    computed = window.document.analyses.computed
    before = computed["power"]
    type_in(qtbot, power.field("idle_s").edit, "12 h")  # the panel's own: not a plan field
    assert power.scenario().idle_s == 12 * 3600.0
    assert computed["power"] == before + 1
    a = window.document.analysis("power")
    assert a.footprint.idle_gpu_hours == pytest.approx(8 * 12)
    power.chart_tabs.setCurrentIndex(FOOTPRINT_TAB)
    summary = {q: value for q, value, _unit in power.footprint_view.table.rows()}
    assert summary["GPU-hours, idle allocation"] == "96"
    # a field that is the plan's, typed in this panel: the plan changes, the panel follows once
    type_in(qtbot, power.field("static_fraction").edit, "40%")
    assert window.document.plan().static_fraction == pytest.approx(0.4)
    assert computed["power"] == before + 2
    a = window.document.analysis("power")
    assert a.sweep.cap_w[0] > 275.0  # more static power: the lowest cap it honours is higher
    assert computed["power"] == before + 2
    power.chart_tabs.setCurrentIndex(POWER_TAB)
    assert _shows(power, a)


def test_a_built_panel_behind_a_tab_computes_nothing_until_it_is_shown(qtbot, window):
    in_front(qtbot, window, "run_plan")
    power = window.panel("power")  # built, behind the Run plan's tab
    assert not power.on_screen()
    computed = window.document.analyses.computed
    before = computed["power"]
    for n in ("16", "64"):
        type_in(qtbot, window.context_toolbar.gpu_field.edit, n)
    assert window.document.plan().n_gpus == 64
    assert computed["power"] == before and power.is_stale()
    in_front(qtbot, window, "power")
    assert computed["power"] == before + 1
    a = window.document.analysis("power")
    assert a.plan.summary.n_gpus == 64 and power.plan() is a.plan and _shows(power, a)
    assert computed["power"] == before + 1
