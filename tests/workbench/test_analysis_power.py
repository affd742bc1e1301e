"""The Power and carbon panel's analysis (``workbench.analyses.power``): its numbers are the
model's own (power, carbon, footprint), for a scenario on its own and one following the plan;
what cannot be analysed raises naming the field, with the sentence the panel shows."""

from __future__ import annotations

import numpy as np
import pytest

import presets
import presets.catalog
from workbench import InputError, carbon, footprint, mfu, power
from workbench import workspace as ws
from workbench.analyses import power as pa
from workbench.plan import predict
from workbench.scenarios import PowerScenario

CATALOG = presets.catalog.BUILTIN
H100 = CATALOG.hardware("h100-sxm")
H = 3600.0
PROFILE = tuple(float(x) for x in (420, 410, 400, 380, 360, 340, 300, 250, 200, 150, 120, 110, 100, 110, 130,
                                   180, 250, 320, 380, 420, 440, 450, 440, 430))
#: a partly capped job with idle hours, network power, an embodied figure and a profile
EVERYTHING = PowerScenario(n_gpus=1000, train_tokens=1.08e12, throughput_mfu=None, power_cap_w=500.0,
                           capped_gpus=1, idle_s=12 * H, idle_power_w_per_gpu=90.0, network_w_per_gpu=8.5,
                           embodied_gpu_g=150e3, embodied_server_g=2500e3, embodied_use_fraction=0.85,
                           region="fr", grid_g_per_kwh=51.28, hourly_g_per_kwh=PROFILE, gpu_hour_price=2.0)


def _model(s):
    return dict(compute_bound_share=s.compute_bound_share, static_fraction=s.static_fraction,
                min_voltage_fraction=s.min_voltage_fraction)


def _plan_view(plan=ws.DEFAULT_PLAN) -> ws.PlanView:
    return ws.PlanView(plan=plan, hardware=CATALOG.hardware(plan.hardware), prediction=predict(plan, CATALOG))


def _expected(s, gpus_per_node=8):
    """What the panel computed before it had an analysis: the model's functions, one by one."""
    tdp = CATALOG.hardware(s.hardware).tdp_w
    peak = carbon.plan_peak_flops(s, CATALOG.hardware(s.hardware))
    rate = carbon.scenario_tokens_per_s(s, peak)
    sweep = power.power_cap_sweep(tdp, rate, **_model(s))
    plan = carbon.plan_for_scenario(s, tdp, tokens_per_s_per_gpu=rate)
    partial = (footprint.partial_cap(s.n_gpus, s.capped_gpus, plan.cap_w, tdp, rate, **_model(s))
               if s.power_cap_w is not None else None)
    gpu_power = partial.mean_gpu_power_w if partial is not None and partial.stragglers else float(plan.performance.power_w)
    embodied = None
    if s.embodied_gpu_g is not None:
        embodied = footprint.embodied_kg_per_gpu_s(s.embodied_gpu_g / 1000, s.embodied_server_g / 1000,
                                                   s.embodied_gpus_per_server, s.embodied_lifetime_s,
                                                   s.embodied_use_fraction)
    fp = footprint.run_footprint(s.n_gpus, plan.summary.duration_s, gpu_power, s.pue, s.grid_g_per_kwh,
                                 host_w_per_gpu=s.host_overhead_w_per_gpu, network_w_per_gpu=s.network_w_per_gpu,
                                 idle_s=s.idle_s, idle_power_w_per_gpu=s.idle_power_w_per_gpu,
                                 embodied_kg_per_gpu_s=embodied, energy_price_per_kwh=s.energy_price_per_kwh,
                                 gpu_hour_price=s.gpu_hour_price)
    capped = s.capped_gpus if s.capped_gpus is not None and s.capped_gpus < s.n_gpus else None
    return dict(
        tdp=tdp, peak=peak, rate=rate, sweep=sweep, best=power.best_of_sweep(sweep, s.cap_objective, tdp, s.zeus_eta),
        plan=plan, llama=carbon.llama3_style_energy_kwh(plan.summary.gpu_hours, tdp), partial=partial,
        gpu_power=gpu_power, fp=fp, zeus=footprint.zeus_curve(sweep, tdp, s.train_tokens, s.n_gpus, s.zeus_eta),
        zeus_now=footprint.zeus_run_cost(plan.performance, tdp, s.train_tokens, s.n_gpus, s.zeus_eta),
        command=footprint.cap_commands(s.power_cap_w, tdp, capped, gpus_per_node),
    )


def _assert_same_performance(got, want):
    for name in ("cap_w", "clock_fraction", "tokens_per_s", "power_w", "tokens_per_joule", "joules_per_token"):
        np.testing.assert_allclose(np.asarray(getattr(got, name)), np.asarray(getattr(want, name)), rtol=1e-12)


def _assert_matches(a: pa.PowerAnalysis, want: dict) -> None:
    assert a.tdp_w == want["tdp"] and a.peak_flops == want["peak"]
    assert a.tokens_per_s_per_gpu == pytest.approx(want["rate"], rel=1e-12)
    _assert_same_performance(a.sweep, want["sweep"])
    _assert_same_performance(a.best, want["best"])
    assert a.plan.cap_w == want["plan"].cap_w
    _assert_same_performance(a.plan.performance, want["plan"].performance)
    assert a.plan.summary == want["plan"].summary
    assert a.llama3_energy_kwh == pytest.approx(want["llama"], rel=1e-12)
    assert a.gpu_power_w == pytest.approx(want["gpu_power"], rel=1e-12)
    assert a.footprint == want["fp"]
    assert a.facility_overhead_j == pytest.approx(want["fp"].it_energy_j * (want["fp"].pue - 1.0), rel=1e-12)
    for name in ("cap_w", "energy_j", "time_s", "energy_term_j", "time_term_j", "cost_j"):
        np.testing.assert_allclose(getattr(a.zeus, name), getattr(want["zeus"], name), rtol=1e-12)
    assert a.zeus.best == want["zeus"].best and a.zeus_now_j == pytest.approx(want["zeus_now"], rel=1e-12)
    assert a.command == want["command"]


def test_the_default_scenario_on_its_own_is_the_models_numbers():
    s = PowerScenario()
    a = pa.analyse(s, None, CATALOG)
    want = _expected(s)
    _assert_matches(a, want)
    assert a.hardware == H100 and a.tdp_w == 700.0
    # planned from 40% MFU of the BF16 dense peak over 6N FLOPs per token
    assert a.peak_flops == H100.peak_flops("bf16")
    assert a.flops_per_token == mfu.flops_per_token(8e9) == 48e9
    assert a.tokens_per_s_per_gpu == pytest.approx(0.4 * a.peak_flops / 48e9)
    # uncapped: no partial cap, the job's rate is the plan's, no plan numbers without a plan
    assert a.partial is None and a.uncapped_gpus == 0
    assert a.job_tokens_per_s == a.plan.job_tokens_per_s == pytest.approx(8 * a.tokens_per_s_per_gpu)
    assert a.plan_mfu is None and a.plan_compute_bound_share is None
    assert a.gpus_per_node == 8 and a.command.lines[0].startswith("sudo nvidia-smi -pl 700")


def test_a_partly_capped_job_with_its_whole_footprint():
    a = pa.analyse(EVERYTHING, None, CATALOG)
    want = _expected(EVERYTHING)
    _assert_matches(a, want)
    assert a.peak_flops is None and a.flops_per_token is None  # measured: no peak, no 6N
    p = want["partial"]
    assert a.partial.stragglers and a.partial.mean_gpu_power_w == pytest.approx(p.mean_gpu_power_w)
    assert a.uncapped_gpus == 999 and a.job_tokens_per_s == pytest.approx(p.job_tokens_per_s)
    assert a.gpu_power_w == pytest.approx(p.mean_gpu_power_w)
    assert a.gpu_power_w > float(a.plan.performance.power_w) == 500.0  # the waiting GPUs draw more
    assert a.footprint.embodied_co2e_kg > 0 and a.footprint.idle_it_j == pytest.approx(1000 * 90 * 12 * H)
    assert a.command.lines[0].startswith("sudo nvidia-smi -i 0 -pl 500")


def test_a_scenario_following_the_plan_reads_the_plans_prediction_and_node():
    plan = ws.DEFAULT_PLAN.with_changes(n_gpus=64, power_cap_w=600.0, gpus_per_node=4)
    view = _plan_view(plan)
    s = ws.follow_plan("power", PowerScenario(), view)
    assert (s.n_gpus, s.power_cap_w, s.throughput_mfu) == (64, 600.0, None)
    a = pa.analyse(s, view, CATALOG)
    _assert_matches(a, _expected(s, gpus_per_node=4))
    p = view.prediction
    assert a.tokens_per_s_per_gpu == pytest.approx(p.uncapped_tokens_per_s / 64, rel=1e-12)
    assert a.plan_mfu == p.mfu and a.plan_compute_bound_share == p.compute_bound_share
    assert a.gpus_per_node == 4
    # the panel's accounting is the plan's
    assert a.plan.summary.duration_s == pytest.approx(p.train_time_s, rel=1e-9)
    assert a.plan.summary.co2e_kg == pytest.approx(p.co2e_kg, rel=1e-9)
    # without the view, the same scenario is analysed as it stands: no plan numbers, 8 GPUs a node
    alone = pa.analyse(s, None, CATALOG)
    assert alone.plan_mfu is None and alone.gpus_per_node == 8
    assert alone.plan.summary == a.plan.summary


def test_a_plan_that_cannot_be_predicted_leaves_the_plan_numbers_out():
    view = ws.PlanView(plan=ws.DEFAULT_PLAN, hardware=H100, prediction=None, problem="no link")
    a = pa.analyse(PowerScenario(), view, CATALOG)
    assert a.plan_mfu is None and a.plan_compute_bound_share is None


def test_workspace_analyse_finds_this_module_for_the_power_kind():
    a = ws.analyse("power", PowerScenario(), None, CATALOG)
    assert isinstance(a, pa.PowerAnalysis)
    cache = ws.AnalysisCache()
    s, view = PowerScenario(), _plan_view()
    assert cache.get("power", s, view, CATALOG) is cache.get("power", s, view, CATALOG)
    assert cache.computed["power"] == 1


@pytest.mark.parametrize(("changes", "field", "sentence"), [
    (dict(hardware="no-such-gpu"), "hardware", "Hardware 'no-such-gpu' is not in the catalog: pick a GPU."),
    (dict(hardware="tpu-v4"), "hardware", "Google TPU v4 has no TDP, so its power cannot be modelled: pick "
                                          "another GPU or add its TDP in the preset manager."),
    (dict(hardware="a100-sxm-80gb", precision="fp8"), "precision",
     "NVIDIA A100 SXM 80GB has no FP8 rate for the MFU to refer to: pick another training precision, or plan "
     "from a measured throughput."),
])
def test_what_cannot_be_analysed_names_the_field_with_the_panels_sentence(changes, field, sentence):
    s = PowerScenario(**changes)
    with pytest.raises(pa.CannotAnalyse) as err:
        pa.analyse(s, None, CATALOG)
    assert isinstance(err.value, InputError)
    assert err.value.parameter == field and err.value.sentence == sentence
    assert str(err.value) == f"{field}: {sentence}"


def test_a_cap_below_the_lowest_the_model_honours_says_which_is_the_lowest():
    s = PowerScenario(power_cap_w=100.0)
    lowest = power.min_power_cap(700.0, s.static_fraction, s.min_voltage_fraction)
    assert 100.0 < lowest
    with pytest.raises(pa.CannotAnalyse) as err:
        pa.analyse(s, None, CATALOG)
    assert err.value.parameter == "power_cap_w"
    assert err.value.sentence == (f"The power cap is below the lowest this model can honour on NVIDIA H100 SXM "
                                  f"({lowest:.0f} W): raise it or clear it.")
    # check_cap gives the model's own message, for the field as the cap is typed
    with pytest.raises(InputError) as typed:
        pa.check_cap(s, CATALOG)
    assert typed.value.parameter == "power_cap_w" and ">=" in str(typed.value)
    assert not isinstance(typed.value, pa.CannotAnalyse)
    pa.check_cap(s.with_changes(power_cap_w=450.0), CATALOG)  # a cap it honours: nothing
    pa.check_cap(s.with_changes(power_cap_w=None), CATALOG)
    pa.check_cap(s.with_changes(hardware="no-such-gpu"), CATALOG)  # cannot say: nothing


def test_another_problem_is_the_models_own_error():
    # 1e15 tokens at 1 ms per token on one GPU: a run far beyond what the footprint counts
    s = PowerScenario(n_gpus=1, throughput_mfu=None, tokens_per_s_per_gpu=1e-3, train_tokens=1e15)
    with pytest.raises(InputError) as err:
        pa.analyse(s, None, CATALOG)
    assert not isinstance(err.value, pa.CannotAnalyse)
    assert err.value.parameter == "training_s" and str(err.value).startswith("training_s: must be between")


# -- where and when ------------------------------------------------------------------------------
GRIDS = tuple((g.key, g.g_per_kwh) for g in presets.load_grids())


def test_where_is_the_run_on_every_grid_and_the_best_start_on_the_profile():
    a = pa.analyse(EVERYTHING, None, CATALOG)
    found = pa.where(EVERYTHING, a, GRIDS)
    fp = a.footprint
    assert found.problem == ""
    assert found.regions == footprint.compare_regions(fp.facility_energy_kwh, GRIDS, fp.embodied_co2e_kg)
    assert len(found.regions) == len(GRIDS)  # France is a preset: no custom row
    best = footprint.best_start(PROFILE, fp.training_s, fp.training_facility_kwh)
    assert found.best_start.start_s == best.start_s and found.best_start.best_co2e_kg == best.best_co2e_kg
    # read again for the same change: compared once
    assert pa.where(EVERYTHING, a, GRIDS) is found


def test_a_typed_intensity_is_compared_as_the_custom_region_and_no_profile_no_start():
    s = PowerScenario(region="custom", grid_g_per_kwh=400.0)
    a = pa.analyse(s, None, CATALOG)
    found = pa.where(s, a, GRIDS)
    (mine,) = [r for r in found.regions if r.key == pa.CUSTOM]
    assert mine.g_per_kwh == 400.0
    assert mine.total_co2e_kg == pytest.approx(a.footprint.facility_energy_kwh * 0.4)
    assert len(found.regions) == len(GRIDS) + 1 and found.best_start is None


def test_where_holds_a_failed_comparison_as_its_problem():
    a = pa.analyse(PowerScenario(), None, CATALOG)
    found = pa.where(PowerScenario(), a, (("world", 475.0), ("nowhere", -1.0)))
    assert found.regions == () and found.best_start is None
    assert "regions[1] intensity" in found.problem
