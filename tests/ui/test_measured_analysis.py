"""The Plan vs actual panel renders the analysis the document keeps (``window.document.analyses``):
one edit computes it once, a redraw or an export reads it again for nothing, and a panel behind
another tab computes nothing until it is shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from window_helpers import computed, csv_rows, dark_theme, in_front, type_in

from workbench import measured as ms
from workbench import units

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
LOG_A = FIXTURES / "trainlogs" / "plan_vs_actual_a.log"
LOG_B = FIXTURES / "trainlogs" / "plan_vs_actual_b_torchtitan.log"
KIND = "measured"


@pytest.fixture
def window(new_window):
    return new_window()


def _measured(panel, quantity: str) -> str:
    """The first log's cell of row ``quantity``, without its difference from the plan."""
    return panel.table_row(quantity)[2].split(" (", 1)[0]


def test_a_toolbar_edit_computes_the_analysis_once_and_the_panel_shows_its_numbers(qtbot, window):
    panel = in_front(qtbot, window, KIND)
    before = computed(window, KIND)
    assert panel.load_file(LOG_A)
    assert computed(window, KIND) == before + 1  # opening a log is one change
    per_gpu_on_8 = _measured(panel, "Throughput per GPU (median)")

    before = computed(window, KIND)
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "16")
    assert window.document.plan().n_gpus == 16
    assert computed(window, KIND) == before + 1
    analysis = window.document.analysis(KIND)
    assert computed(window, KIND) == before + 1  # the document hands over the panel's, not a second one
    p16 = window.document.prediction()
    assert analysis.prediction is p16 and analysis.plan.n_gpus == 16
    assert panel.table_row("Throughput, whole job (median)")[1] == units.format_quantity(p16.tokens_per_s, "")
    assert panel.table_row("Training time at this rate")[1] == f"{p16.train_days:.3g}"
    # the log prints the whole job's rate and not its GPUs: per GPU it is now over the plan's 16
    run = analysis.runs[0]
    assert run.n_gpus == 16 and not run.n_gpus_from_log
    shown = _measured(panel, "Throughput per GPU (median)")
    assert shown == units.format_quantity(run.median_tokens_per_s_per_gpu, "") != per_gpu_on_8
    # what the panel drew is that very analysis
    assert panel.analyses()[0] is run
    drawn = {s.name: s for s in panel.rate_chart.series()}[LOG_A.name]
    assert drawn.y.tolist() == pytest.approx([float("nan") if t is None else t for t in run.tokens_per_s_per_gpu],
                                             nan_ok=True)


def test_a_theme_switch_a_second_read_and_an_export_compute_nothing_more(qtbot, window, tmp_path):
    panel = in_front(qtbot, window, KIND)
    assert panel.load_file(LOG_A) and panel.load_file(LOG_B)
    first = window.document.analysis(KIND)
    count = computed(window, KIND)
    with dark_theme(window):
        assert panel.rate_chart.theme().dark  # the panel redrew in the new theme
    assert window.document.analysis(KIND) is first
    path = window.export_active("csv", tmp_path / "measured.csv", kind=KIND)
    rows = csv_rows(path)
    assert sum(1 for row in rows if row and row[0] == LOG_B.name) == len(first.runs[1].steps) == 30
    assert panel.table_row("Steps that waited on data")[2] == f"{first.steady_waited[0]} of 36"
    assert computed(window, KIND) == count


def test_an_edit_of_the_panels_own_field_computes_once(qtbot, window):
    panel = in_front(qtbot, window, KIND)
    assert panel.load_file(LOG_A)
    before = computed(window, KIND)
    panel.auto_warmup.click()  # the warm-up becomes a step number, the same steps as before
    assert panel.scenario().warmup_steps == 4 and computed(window, KIND) == before + 1
    type_in(qtbot, panel.warmup_field.edit, "10")
    assert panel.scenario().warmup_steps == 10
    assert computed(window, KIND) == before + 2
    analysis = window.document.analysis(KIND)
    assert analysis.runs[0].first_steady_step == 11
    assert panel.table_row("Steady state")[2] == "steps 11–40"
    assert _measured(panel, "Step time (median)") == f"{analysis.runs[0].median_step_time_s:.3g}"
    assert computed(window, KIND) == before + 2


def test_a_compared_scenario_is_drawn_without_computing_the_panels_analysis_again(qtbot, window):
    panel = in_front(qtbot, window, KIND)
    assert panel.load_file(LOG_A)
    count = computed(window, KIND)
    other = ms.MeasuredScenario(runs=(ms.run_from_text(LOG_B.name, LOG_B.read_text()),))
    panel.set_comparison([("cluster B", other)])
    series = {s.name: s for s in panel.rate_chart.series()}
    assert series[f"cluster B: {LOG_B.name}"].style == Qt.PenStyle.DashLine
    assert computed(window, KIND) == count
    name = f"cluster B: {LOG_B.name}: recomputed with the plan"
    mfu_on_8b = {s.name: s for s in panel.mfu_chart.series()}[name].y.tolist()
    # the compared log is analysed against this panel's plan: the window's, after a new model size
    type_in(qtbot, window.context_toolbar.model_field.edit, "70B")
    plan, prediction = window.document.plan(), window.document.prediction()
    assert plan.n_params > 60e9 and computed(window, KIND) == count + 1
    theirs = ms.analyse_run(other.runs[0], plan, prediction)
    drawn = {s.name: s for s in panel.mfu_chart.series()}[name].y.tolist()
    assert drawn == pytest.approx([float("nan") if m is None else 100 * m for m in theirs.mfu_recomputed], nan_ok=True)
    assert drawn != pytest.approx(mfu_on_8b, nan_ok=True)
    assert computed(window, KIND) == count + 1


def test_a_built_panel_behind_another_tab_computes_nothing_until_shown(qtbot, window):
    panel = in_front(qtbot, window, KIND)
    assert panel.load_file(LOG_A)
    in_front(qtbot, window, "power")
    assert not panel.on_screen()
    count = computed(window, KIND)
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "16")
    assert window.document.plan().n_gpus == 16
    assert computed(window, KIND) == count and panel.is_stale()
    in_front(qtbot, window, KIND)
    assert computed(window, KIND) == count + 1
    p16 = window.document.prediction()
    assert panel.table_row("Throughput, whole job (median)")[1] == units.format_quantity(p16.tokens_per_s, "")
    assert window.document.analysis(KIND).prediction is p16 and computed(window, KIND) == count + 1
