"""The Plan vs actual panel's analysis (``workbench.analyses.measured``), without Qt: its numbers
are those the measured-data functions give directly, from the view's prediction when the view
holds the plan, and a plan that cannot be predicted still leaves the measured numbers."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import presets
import presets.catalog
from workbench import InputError
from workbench import measured as ms
from workbench import workspace as ws
from workbench.analyses import measured as am
from workbench.plan import predict

CATALOG = presets.catalog.BUILTIN
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
LOG_A = FIXTURES / "trainlogs" / "plan_vs_actual_a.log"
LOG_B = FIXTURES / "trainlogs" / "plan_vs_actual_b_torchtitan.log"
CODECARBON = FIXTURES / "energy" / "plan_vs_actual_codecarbon.csv"


def _run(path: Path) -> ms.RunLog:
    return ms.run_from_text(path.name, path.read_text())


@pytest.fixture(scope="module")
def two_logs() -> ms.MeasuredScenario:
    return ms.MeasuredScenario(runs=(_run(LOG_A), _run(LOG_B)),
                               energy=ms.energy_from_text(CODECARBON.name, CODECARBON.read_text()))


@pytest.fixture
def no_predict(monkeypatch):
    """Fails the test if the analysis predicts a plan itself."""

    def refuse(plan, catalog=None):
        raise AssertionError("the analysis predicted a plan the view already holds")

    monkeypatch.setattr(am, "predict", refuse)


def _view(plan=ws.DEFAULT_PLAN) -> ws.PlanView:
    return ws.PlanView(plan=plan, hardware=CATALOG.hardware(plan.hardware), prediction=predict(plan, CATALOG))


def _direct(scenario: ms.MeasuredScenario, prediction):
    """What the measured-data functions give for ``scenario`` against its plan and ``prediction``."""
    plan = scenario.plan
    peak = prediction.peak_flops
    runs = tuple(ms.analyse_run(r, plan, prediction, peak_flops=peak, warmup_steps=scenario.warmup_steps)
                 for r in scenario.runs)
    rate = next((a.median_tokens_per_s_per_gpu for a in runs if a.median_tokens_per_s_per_gpu), None)
    energy = ms.analyse_energy(scenario.energy, plan, prediction, tokens_per_s_per_gpu=rate) \
        if scenario.energy is not None else None
    return runs, energy, rate


# -- the numbers are the measured-data functions' --------------------------------------------------
def test_the_default_scenario_on_its_own_predicts_its_plan_and_has_no_logs():
    a = am.analyse(ms.MeasuredScenario(), None, CATALOG)
    assert a.plan == ws.DEFAULT_PLAN
    assert a.prediction == predict(ws.DEFAULT_PLAN, CATALOG) and a.problem == ""
    assert a.peak_flops == a.prediction.peak_flops
    assert a.runs == () and a.energy is None and a.energy_tokens_per_s_per_gpu is None
    assert a.csv_columns() == []


def test_two_logs_and_an_energy_log_on_their_own_are_what_analyse_run_and_analyse_energy_give(two_logs):
    a = am.analyse(two_logs, None, CATALOG)
    runs, energy, rate = _direct(two_logs, predict(two_logs.plan, CATALOG))
    assert a.runs == runs and a.energy == energy and a.energy_tokens_per_s_per_gpu == rate
    assert rate == runs[0].median_tokens_per_s_per_gpu  # the first log's rate, for tokens per joule
    # the steady steps that waited: 4 of log A's 36; log B reports no waits at all
    assert a.steady_waited == (4, None)
    assert a.steady_waited[0] == sum(1 for w, on in zip(runs[0].waited, runs[0].steady, strict=True) if w and on)
    assert a.adopt_tokens_per_s == (None, None)  # no window plan to adopt into


def test_a_warm_up_of_the_scenario_is_the_one_the_logs_are_cut_at(two_logs):
    scenario = two_logs.with_changes(warmup_steps=10)
    a = am.analyse(scenario, None, CATALOG)
    assert a.runs == _direct(scenario, predict(scenario.plan, CATALOG))[0]
    assert a.runs[0].first_steady_step == 11


def test_the_sample_scenario_analyses_as_the_functions_say():
    name, sample = next((n, s) for n, s in presets.sample_scenarios() if s.kind == "measured")
    a = am.analyse(sample, None, CATALOG)
    runs, energy, _rate = _direct(sample, predict(sample.plan, CATALOG))
    assert len(a.runs) == 2 and a.runs == runs and a.energy == energy, name


def test_the_csv_columns_are_the_series_rows_of_every_log(two_logs):
    a = am.analyse(two_logs, None, CATALOG)
    columns = a.csv_columns()
    assert [h for h, _ in columns] == list(ms.SERIES_HEADERS) == list(am.SERIES_HEADERS)
    rows = [row for run, r in zip(two_logs.runs, a.runs, strict=True) for row in ms.series_rows(run, r)]
    assert len(rows) == 40 + 30
    assert [tuple(col[i] for _, col in columns) for i in range(len(rows))] == rows


def test_the_result_is_frozen(two_logs):
    a = am.analyse(two_logs, None, CATALOG)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.runs = ()


# -- following the plan ----------------------------------------------------------------------------
def test_a_scenario_following_the_plan_takes_the_views_prediction_without_predicting(two_logs, no_predict):
    plan = ws.DEFAULT_PLAN.with_changes(n_gpus=16, global_batch=128)
    view = _view(plan)
    followed = ws.follow_plan("measured", two_logs, view)
    assert followed.plan == plan
    a = am.analyse(followed, view, CATALOG)
    assert a.prediction is view.prediction and a.plan == plan
    runs, energy, _rate = _direct(followed, view.prediction)
    assert a.runs == runs and a.energy == energy
    # the window's 16 GPUs: what adopting puts into the plan is each log's rate per GPU on them
    assert a.adopt_tokens_per_s == tuple(r.median_tokens_per_s_per_gpu * 16 for r in runs)
    assert a.runs[0].train_time_s == pytest.approx(plan.train_tokens / (runs[0].median_tokens_per_s_per_gpu * 16))


def test_through_the_workspace_the_kind_finds_this_analysis(two_logs):
    view = _view()
    followed = ws.follow_plan("measured", two_logs, view)
    assert ws.analyse("measured", followed, view, CATALOG) == am.analyse(followed, view, CATALOG)
    with pytest.raises(InputError) as err:
        ws.analyse("measured", ws.DEFAULT_PLAN, view, CATALOG)
    assert err.value.parameter == "scenario"


def test_local_override_compares_with_the_saved_plan_predicted_here(two_logs):
    view = _view(ws.DEFAULT_PLAN.with_changes(n_gpus=16, global_batch=128))
    a = am.analyse(two_logs, view, CATALOG)  # the scenario keeps its own 8-GPU plan
    assert a.plan == ws.DEFAULT_PLAN
    assert a.prediction == predict(ws.DEFAULT_PLAN, CATALOG) and a.prediction != view.prediction
    assert a.runs == _direct(two_logs, a.prediction)[0]
    # adopting still goes into the window's plan, on its 16 GPUs
    assert a.adopt_tokens_per_s[0] == a.runs[0].median_tokens_per_s_per_gpu * 16


# -- a plan that cannot be predicted ----------------------------------------------------------------
def test_a_plan_that_cannot_be_predicted_keeps_the_measured_numbers_and_says_why(two_logs):
    scenario = two_logs.with_changes(plan=ws.DEFAULT_PLAN.with_changes(hardware="no-such-gpu"))
    a = am.analyse(scenario, None, CATALOG)
    assert a.prediction is None and a.peak_flops is None
    assert a.problem.startswith("hardware: there is no hardware preset 'no-such-gpu'")
    direct = ms.analyse_run(scenario.runs[0], scenario.plan, None, warmup_steps=None)
    assert a.runs[0] == direct and a.runs[0].median_tokens_per_s_per_gpu is not None
    assert a.runs[0].gap is None and a.runs[0].median_mfu_recomputed is None  # no plan side to compare
    assert a.energy.planned_energy_j is None and a.energy.measured_energy_j is not None


def test_a_view_that_cannot_predict_its_plan_is_taken_at_its_word(two_logs, no_predict):
    h100 = CATALOG.hardware("h100-sxm")
    view = ws.PlanView(plan=ws.DEFAULT_PLAN, hardware=h100, prediction=None, problem="n_gpus: cannot be split")
    a = am.analyse(two_logs, view, CATALOG)
    assert a.prediction is None and a.problem == "n_gpus: cannot be split"
    # the device is still known: the logs' MFU is recomputed against its dense peak
    assert a.peak_flops == h100.peak_flops(ws.DEFAULT_PLAN.precision)
    assert a.runs[0] == ms.analyse_run(two_logs.runs[0], ws.DEFAULT_PLAN, None, peak_flops=a.peak_flops)
    assert a.runs[0].median_mfu_recomputed is not None
