"""The Scaling and MFU panel renders the analysis the document keeps
(``window.document.analyses``): a change computes it once, a redraw, a second read or an export
computes nothing more, and a panel behind another tab computes nothing until it is shown."""

from __future__ import annotations

import pytest
from window_helpers import computed, csv_table, dark_theme, in_front, result_values, type_in

from workbench import measured_scaling as ms

KIND = "scaling"


@pytest.fixture
def window(new_window):
    return new_window()


def test_a_gpu_count_typed_in_the_toolbar_computes_the_analysis_once_and_the_panel_shows_it(qtbot, window):
    panel = in_front(qtbot, window, KIND)
    before = computed(window, KIND)
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "64")
    assert window.document.plan().n_gpus == 64 and panel.scenario().n_gpus == 64
    assert computed(window, KIND) == before + 1
    analysis = window.document.analysis(KIND)
    assert computed(window, KIND) == before + 1  # the document hands over the panel's, not a second one
    assert analysis is panel._shown  # what the panel drew is that very analysis
    rows = result_values(panel)
    assert rows["Amdahl speedup at 64 GPUs"] == ms.plain_number(analysis.figures.speedup)
    assert rows["MFU (run plan)"] == ms.plain_number(window.document.prediction().mfu * 100)
    assert analysis.plan_step.mfu == window.document.prediction().mfu
    assert panel.chart.operating_point()[:2] == (64, analysis.operating_speedup)
    assert analysis.gpus_top == 1024 and panel.chart.series()[0].y.tolist() == analysis.curve_speedup.tolist()


def test_a_theme_switch_a_second_read_and_an_export_compute_nothing_more(qtbot, window, tmp_path):
    panel = in_front(qtbot, window, KIND)
    assert panel.edit(measured=((8, 1000.0), (64, 6500.0), (256, 19000.0)), _merge=False)
    first = window.document.analysis(KIND)
    count = computed(window, KIND)
    with dark_theme(window):
        assert panel.chart.theme().dark  # the panel redrew in the new theme
    assert window.document.analysis(KIND) is first is panel._shown
    path = window.export_active("csv", tmp_path / "scaling.csv", kind=KIND)
    curve = csv_table(path, "GPUs (count)")  # after the results table's rows
    assert [int(r["GPUs (count)"]) for r in curve] == list(first.csv_gpus)
    assert [float(r["speedup (x)"]) for r in curve] == pytest.approx(list(first.csv_speedup))
    table = panel.export_measured_csv(tmp_path / "measured.csv")
    assert table.read_text(encoding="utf-8") == first.measured_csv()
    assert computed(window, KIND) == count


def test_an_edit_of_the_panels_own_field_computes_once(qtbot, window):
    panel = in_front(qtbot, window, KIND)
    before = computed(window, KIND)
    type_in(qtbot, panel.field("serial_fraction").edit, "5%")
    assert panel.scenario().serial_fraction == pytest.approx(0.05) and not panel.override_context()
    assert computed(window, KIND) == before + 1
    analysis = window.document.analysis(KIND)
    assert analysis is panel._shown and computed(window, KIND) == before + 1
    assert analysis.ceiling == pytest.approx(20.0)
    assert panel.ceiling_labels() == [c.label for c in analysis.ceilings] == [ms.ceiling_label(0.05)]
    assert result_values(panel)["Amdahl ceiling (1/s)"] == "20"


def test_a_panel_behind_another_tab_computes_nothing_until_it_is_shown(qtbot, window):
    panel = in_front(qtbot, window, KIND)  # built
    in_front(qtbot, window, "run_plan")
    assert not panel.on_screen()
    before = computed(window, KIND)
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "128")
    assert window.document.plan().n_gpus == 128
    assert computed(window, KIND) == before and panel.is_stale()
    in_front(qtbot, window, KIND)
    assert computed(window, KIND) == before + 1
    assert panel.scenario().n_gpus == 128 and "Amdahl speedup at 128 GPUs" in result_values(panel)
    assert window.document.analysis(KIND) is panel._shown and computed(window, KIND) == before + 1


def test_a_compared_scenario_gets_its_own_analysis_on_this_chart_s_gpu_axis(qtbot, window):
    from workbench.analyses import scaling as analysis_of
    from workbench.scenarios import ScalingScenario

    panel = in_front(qtbot, window, KIND)
    count = computed(window, KIND)
    saved = ScalingScenario(serial_fraction=0.005, n_gpus=1024)  # its own count would stretch its curve to 4,096
    panel.set_comparison([("baseline", saved)])
    assert computed(window, KIND) == count  # the panel's own analysis is kept; the compared one is its own
    curve = next(series for series in panel.chart.series() if series.name.startswith("baseline"))
    expected = analysis_of.analyse(saved.with_changes(n_gpus=panel.scenario().n_gpus), None, window.document.catalog)
    assert curve.x.tolist() == panel._shown.curve_gpus.tolist() and curve.x[-1] == 1024
    assert curve.y.tolist() == expected.curve_speedup.tolist() and expected.curve_speedup[-1] > 100
    columns = dict(panel.csv_columns())
    assert columns["baseline speedup (x)"] == list(expected.csv_speedup)
    assert computed(window, KIND) == count
