"""The Run plan panel's analysis (``workbench.analyses.run_plan``): the document's prediction
when the view is this plan (never predicted again), else the plan predicted with the catalog;
every number drawn or listed is the prediction's or what_if's."""

from __future__ import annotations

import pytest

from presets.catalog import BUILTIN
from workbench import plan as pl
from workbench import workspace as ws
from workbench.analyses import run_plan as analysis
from workbench.scenarios import ScalingScenario

CATALOG = BUILTIN
PLAN = ws.DEFAULT_PLAN


def _view(plan=PLAN) -> ws.PlanView:
    return ws.PlanView(plan=plan, hardware=CATALOG.hardware(plan.hardware), prediction=pl.predict(plan, CATALOG))


def _lookup(key: str):
    try:
        return CATALOG.hardware(key)
    except KeyError:
        return None


@pytest.fixture
def predicts(monkeypatch) -> list:
    calls = []
    real = pl.predict
    monkeypatch.setattr(pl, "predict", lambda *a, **k: calls.append(a) or real(*a, **k))
    return calls


def test_on_its_own_the_plan_is_predicted_with_the_catalog_and_every_number_is_the_prediction_s(predicts):
    a = analysis.analyse(PLAN, None, CATALOG)
    assert len(predicts) == 1
    p = pl.predict(PLAN, CATALOG)
    assert a.plan is PLAN and a.problem == "" and a.prediction == p
    # the step bar: the non-zero terms in TERMS order, each with its share; the largest drag
    assert [(s.term, s.label, s.seconds) for s in a.segments] == [
        (t, pl.TERM_LABELS[t], p.breakdown[t]) for t in pl.TERMS if p.breakdown.get(t, 0.0) > 0]
    assert sum(s.share for s in a.segments) == pytest.approx(1.0)
    drag = a.largest_drag
    assert drag.term == p.largest_drag and drag.seconds == p.breakdown[p.largest_drag]
    assert drag.share == pytest.approx(drag.seconds / p.step_time_s)
    # the memory bar
    m = p.memory
    assert [(part.key, part.bytes) for part in a.memory_parts] == [
        ("weights", m.weights), ("gradients", m.gradients), ("optimizer", m.optimizer), ("activations", m.activations)]
    assert (a.memory_total, a.memory_capacity, a.memory_fits) == (m.total, m.capacity, m.fits)
    assert a.memory_spare == pytest.approx(m.capacity - m.total) and a.memory_shortfall == 0.0
    assert a.memory_fixes == ()
    # the ladder and the headline numbers
    assert a.what_if == tuple(pl.what_if(p)) and a.what_if
    assert a.mfu_rating == pl.mfu_rating(p.mfu)
    assert a.train_days == pytest.approx(p.train_time_s / 86400)
    assert a.facility_energy_mwh == pytest.approx(p.facility_energy_kwh / 1000)
    assert a.co2e_t == pytest.approx(p.co2e_kg / 1000)
    assert a.cost == p.total_cost
    assert a.measured_tokens_per_s_per_gpu is None and a.model_tokens_per_s is None


def test_following_the_document_s_view_it_takes_the_view_s_prediction_and_never_predicts(predicts):
    view = _view(PLAN.with_changes(n_gpus=64, global_batch=512))
    predicts.clear()
    plan = ws.follow_plan("run_plan", PLAN, view)
    assert plan is view.plan
    a = analysis.analyse(plan, view, CATALOG)
    assert predicts == []
    assert a.prediction is view.prediction
    assert a.what_if == tuple(pl.what_if(view.prediction))
    # an equal plan (not the same object) is the view's plan too
    assert analysis.analyse(PLAN.with_changes(n_gpus=64, global_batch=512), view, CATALOG).prediction is view.prediction
    assert predicts == []
    # the view's problem is the answer for its plan: not predicted again either
    broken = ws.PlanView(plan=plan, problem="hardware: there is no hardware preset 'x'")
    b = analysis.analyse(plan, broken, CATALOG)
    assert b.prediction is None and b.problem == broken.problem and predicts == []
    # a view of another plan says nothing of this one: this one is predicted
    c = analysis.analyse(PLAN, view, CATALOG)
    assert len(predicts) == 1 and c.prediction == pl.predict(PLAN, CATALOG)


def test_a_plan_that_cannot_be_predicted_holds_the_reason_and_no_numbers():
    plan = PLAN.with_changes(hardware="no-such-gpu")
    a = analysis.analyse(plan, None, CATALOG)
    assert a.prediction is None and "no-such-gpu" in a.problem
    assert a.segments == a.memory_parts == a.what_if == a.memory_fixes == ()
    assert a.largest_drag is None and a.mfu_rating == ""
    assert (a.train_days, a.facility_energy_mwh, a.co2e_t, a.cost, a.memory_total) == (None,) * 5


def test_a_plan_that_does_not_fit_says_by_how_much_and_what_would_fit():
    plan = PLAN.with_changes(zero=0)  # every replica holds the whole optimizer state
    p = pl.predict(plan, CATALOG)
    assert not p.fits_memory
    a = analysis.analyse(plan, None, CATALOG)
    assert a.memory_fits is False and a.memory_shortfall == p.memory.shortfall > 0
    assert a.memory_spare == pytest.approx(-p.memory.shortfall) and a.memory_spare < 0
    assert a.memory_fixes == p.memory_fixes and a.memory_fixes


def test_a_device_without_a_tdp_has_no_energy_and_a_cost_only_with_a_gpu_hour_price():
    plan = ws.edit_plan(PLAN, _lookup, hardware="tpu-v5p")
    a = analysis.analyse(plan, None, CATALOG)
    assert a.prediction is not None and not a.prediction.energy_known
    assert (a.facility_energy_mwh, a.co2e_t, a.cost) == (None, None, None)
    priced = analysis.analyse(plan.with_changes(gpu_hour_price=2.0), None, CATALOG)
    assert priced.cost == priced.prediction.total_cost > 0


def test_a_measured_throughput_gives_the_per_gpu_rate_and_the_model_s():
    plan = PLAN.with_changes(measured_tokens_per_s=50_000.0, measured_source="log.txt")
    a = analysis.analyse(plan, None, CATALOG)
    p = a.prediction
    assert p.model_step_time_s is not None
    assert a.measured_tokens_per_s_per_gpu == 50_000.0 / plan.n_gpus
    assert a.model_tokens_per_s == pytest.approx(plan.tokens_per_step / p.model_step_time_s)
    assert a.what_if == tuple(pl.what_if(p))


def test_the_workspace_finds_it_by_kind_and_another_kind_is_refused():
    view = _view()
    assert ws.analyse("run_plan", PLAN, view, CATALOG).prediction is view.prediction
    with pytest.raises(ValueError, match="plan"):
        analysis.analyse(ScalingScenario(), None, CATALOG)
    with pytest.raises(ValueError, match="catalog"):
        analysis.analyse(PLAN, None, object())
