"""The Run plan panel renders the analysis the document keeps (``window.document.analyses``),
built on the document's own prediction: a change computes it once, a redraw, a second read or
an export computes nothing more, and a panel behind another tab computes nothing until shown."""

from __future__ import annotations

import pytest
from window_helpers import computed, csv_table, dark_theme, in_front, result_rows, type_in

from workbench import plan as plan_model
from workbench import units

KIND = "run_plan"


@pytest.fixture
def window(new_window):
    return new_window()


def test_a_gpu_count_typed_in_the_toolbar_computes_the_analysis_once_on_the_document_s_prediction(qtbot, window):
    panel = in_front(qtbot, window, KIND)
    before = computed(window, KIND)
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "64")
    assert window.document.plan().n_gpus == 64 and panel.plan().n_gpus == 64
    assert computed(window, KIND) == before + 1
    analysis = window.document.analysis(KIND)
    assert computed(window, KIND) == before + 1  # the document hands over the panel's, not a second one
    assert analysis is panel._shown  # what the panel drew is that very analysis
    p = window.document.prediction()
    assert analysis.prediction is p and panel.prediction() is p  # the document's, not predicted again
    rows = result_rows(panel)
    assert rows["Tokens/s"] == (units.format_quantity(p.tokens_per_s, ""), "tokens/s")
    assert rows["MFU"][1] == f"%, {plan_model.mfu_rating(p.mfu)}" == f"%, {analysis.mfu_rating}"
    assert float(rows["Training time"][0].replace(",", "")) == pytest.approx(analysis.train_days, rel=5e-3)
    assert analysis.train_days == pytest.approx(p.train_time_s / 86400)
    widths = [bar.width for bar in panel.step_chart.bars]
    assert widths == [seg.seconds for seg in analysis.segments]
    assert panel.what_if_rows() == list(analysis.what_if) == plan_model.what_if(p)


def test_a_theme_switch_a_second_read_and_an_export_compute_nothing_more(qtbot, window, tmp_path):
    panel = in_front(qtbot, window, KIND)
    first = window.document.analysis(KIND)
    count = computed(window, KIND)
    with dark_theme(window):
        assert panel.step_chart.theme().dark  # the panel redrew in the new theme
    assert window.document.analysis(KIND) is first is panel._shown
    path = window.export_active("csv", tmp_path / "plan.csv", kind=KIND)
    items = csv_table(path, "chart", "item")  # after the results table's rows
    ladder = [r for r in items if r["chart"] == "what-if"]
    assert [r["item"] for r in ladder] == [w.fix for w in first.what_if] and ladder
    assert [float(r["MFU after (fraction)"]) for r in ladder] == pytest.approx([w.mfu for w in first.what_if])
    memory = {r["item"]: float(r["memory per GPU (B)"]) for r in items if r["chart"] == "memory"}
    assert memory["Total per GPU"] == pytest.approx(first.memory_total)
    assert computed(window, KIND) == count


def test_an_edit_of_the_panels_own_field_computes_once(qtbot, window):
    panel = in_front(qtbot, window, KIND)
    before = computed(window, KIND)
    type_in(qtbot, panel.field("global_batch").edit, "128")
    assert window.document.plan().global_batch == 128  # the panel's field is the plan's
    assert computed(window, KIND) == before + 1
    analysis = window.document.analysis(KIND)
    assert analysis is panel._shown and analysis.plan.global_batch == 128 and computed(window, KIND) == before + 1
    assert analysis.prediction is window.document.prediction()
    assert panel.step_chart.getPlotItem().titleLabel.text.endswith(
        units.format_quantity(analysis.prediction.step_time_s, "s"))


def test_a_panel_behind_another_tab_computes_nothing_until_it_is_shown(qtbot, window):
    panel = in_front(qtbot, window, KIND)  # built
    in_front(qtbot, window, "scaling")
    assert not panel.on_screen()
    before = computed(window, KIND)
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "128")
    assert window.document.plan().n_gpus == 128
    assert computed(window, KIND) == before and panel.is_stale()
    in_front(qtbot, window, KIND)
    assert computed(window, KIND) == before + 1
    assert panel.plan().n_gpus == 128 and panel.prediction() is window.document.prediction()
    assert window.document.analysis(KIND) is panel._shown and computed(window, KIND) == before + 1
