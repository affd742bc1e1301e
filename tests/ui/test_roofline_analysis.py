"""The Roofline panel renders the analysis the document keeps (``window.document.analyses``): a
change computes it once, a redraw, a second read or an export computes nothing more, and a
panel behind another tab computes nothing until it is shown."""

from __future__ import annotations

import pytest
from window_helpers import computed, csv_table, dark_theme, in_front, result_values, type_in

from workbench import units
from workbench.analyses import roofline as ar
from workbench.kernels import Kernel, seed_examples

KIND = "roofline"


@pytest.fixture
def window(new_window):
    return new_window()


def _pick(combo, key: str) -> None:
    """Choose ``key`` in a combo box as a user's click on its item does (one ``activated``)."""
    index = combo.findData(key)
    combo.setCurrentIndex(index)
    combo.activated.emit(index)


def _number(ridge: float) -> str:
    """A ridge as the results table shows it (the number; the unit has its own column)."""
    return units.format_quantity(ridge, "FLOP/B").split()[0]


def _with_kernels(qtbot, window):
    panel = in_front(qtbot, window, KIND)
    # one kernel timed faster than any roof: the analysis flags it
    assert panel.add_kernels([*seed_examples(), Kernel("too fast", 1e12, 1e9, 1e-6)])
    return panel


def test_a_device_picked_in_the_toolbar_computes_the_analysis_once_and_the_panel_shows_it(qtbot, window):
    panel = _with_kernels(qtbot, window)
    before = computed(window, KIND)
    _pick(window.context_toolbar.hardware_combo, "b200")
    assert window.document.plan().hardware == "b200" and panel.scenario().primary == "b200"
    assert computed(window, KIND) == before + 1
    analysis = window.document.analysis(KIND)
    assert computed(window, KIND) == before + 1  # the document hands over the panel's, not a second one
    assert analysis is panel._analysis  # what the panel drew is that very analysis
    b200 = analysis.primary
    assert b200.hardware.key == "b200"
    rows = result_values(panel)
    assert rows["Ridge point"] == _number(b200.compute.ridge)
    assert rows["Kernels"] == f"{len(panel.kernels()):,}"
    assert rows["  memory / compute-bound"] == f"{analysis.n_memory_bound:,} / {analysis.n_compute_bound:,}"
    assert panel.kernel_model.flagged_rows() == [len(panel.kernels()) - 1]
    assert panel.placements() is analysis.placements
    assert panel.chart._title.startswith("Roofline: NVIDIA B200")


def test_a_gpu_count_typed_in_the_toolbar_computes_it_once_and_changes_no_number(qtbot, window):
    panel = _with_kernels(qtbot, window)
    first = window.document.analysis(KIND)
    rows = result_values(panel)
    before = computed(window, KIND)
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "64")
    assert window.document.plan().n_gpus == 64
    again = window.document.analysis(KIND)
    window.document.analysis(KIND)
    assert computed(window, KIND) == before + 1  # a new plan is a change, read once however often
    # the roofline does not depend on the GPU count: the same kernels placed, nothing redrawn
    assert again.placements is first.placements and again.extent == first.extent
    assert result_values(panel) == rows


def test_a_theme_switch_a_second_read_and_an_export_compute_nothing_more(qtbot, window, tmp_path):
    panel = _with_kernels(qtbot, window)
    first = window.document.analysis(KIND)
    count = computed(window, KIND)
    with dark_theme(window):
        assert panel.chart.theme().dark  # the panel redrew in the new theme
    assert window.document.analysis(KIND) is first
    path = window.export_active("csv", tmp_path / "roofline.csv", kind=KIND)
    table = csv_table(path, "row", "name")  # after the results table's rows
    kernels = [row for row in table if row["row"] == "kernel"]
    assert [k["name"] for k in kernels] == [k.name for k in panel.kernels()]
    assert float(kernels[0]["intensity (FLOP/B)"]) == pytest.approx(float(first.placements.intensity[0]))
    assert kernels[-1]["check"] == first.warnings.texts()[-1] != ""
    assert computed(window, KIND) == count


def test_an_edit_of_the_panels_own_field_computes_once(qtbot, window):
    panel = _with_kernels(qtbot, window)
    before = computed(window, KIND)
    labels = panel.roof_label_texts()
    panel.ceilings_check.click()  # draw the other precisions' roofs
    assert panel.scenario().show_precision_ceilings and computed(window, KIND) == before + 1
    analysis = window.document.analysis(KIND)
    assert computed(window, KIND) == before + 1
    ceilings = [r for r in analysis.primary.roofs[2:] if r.kind == "compute"]
    assert ceilings and len(panel.roof_label_texts()) == len(labels) + len(ceilings)
    # a display option places no kernel again (the same placements, one object)
    assert analysis.placements is panel.placements()


def test_a_compared_scenario_gets_its_own_analysis_not_the_panels_again(qtbot, window):
    panel = _with_kernels(qtbot, window)
    count = computed(window, KIND)
    saved = panel.scenario().with_changes(hardware=("a100-sxm-80gb",), kernels=(Kernel("old", 1e9, 1e9, 1.0),))
    panel.set_comparison([("last year", saved)])
    assert computed(window, KIND) == count
    legend = [s.name for s in panel.chart.series()]
    assert any(name.startswith("last year (saved: A100") for name in legend)
    # its kernel, far under the panel's own axes, widens them: the saved scenario's analysis
    own = ar.analyse(saved, None, panel._preset_lookup)
    mine = window.document.analysis(KIND)
    assert panel._extent == ar.chart_extent(mine, [own]) and panel._extent.ymin < mine.extent.ymin
    assert panel.chart.getPlotItem().getViewBox().viewRange()[1][0] <= 9.0  # log10 of its 1 GFLOP/s
    assert len(panel.compared_points.data) == 1
    assert computed(window, KIND) == count


def test_a_panel_behind_another_tab_computes_nothing_until_it_is_shown(qtbot, window):
    panel = _with_kernels(qtbot, window)
    in_front(qtbot, window, "run_plan")
    assert not panel.on_screen()
    before = computed(window, KIND)
    _pick(window.context_toolbar.hardware_combo, "h200-sxm")
    assert window.document.plan().hardware == "h200-sxm"
    assert computed(window, KIND) == before and panel.is_stale()
    in_front(qtbot, window, KIND)
    assert computed(window, KIND) == before + 1
    assert panel.devices()[0].hardware.key == "h200-sxm"
    assert result_values(panel)["Ridge point"] == _number(window.document.analysis(KIND).primary.compute.ridge)
    assert computed(window, KIND) == before + 1
