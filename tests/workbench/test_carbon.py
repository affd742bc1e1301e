"""Facility energy, emissions, run summaries and the Llama 3 energy convention."""

from __future__ import annotations

import numpy as np
import pytest
from bad_input import assert_rejected, bad_input_cases
from hypothesis import given
from hypothesis import strategies as st

from workbench import carbon as cb
from workbench._validate import InputError


def test_facility_energy_and_emissions_arithmetic():
    # 1,000 kWh of IT energy at PUE 1.58 (carbontracker's default) on a 475 g/kWh grid.
    facility = cb.facility_energy_kwh(1000.0, 1.58)
    assert facility == pytest.approx(1580.0)
    assert cb.emissions_kg(facility, 475.0) == pytest.approx(750.5)
    assert cb.facility_energy_kwh(1000.0, 1.0) == 1000.0
    assert np.allclose(cb.emissions_kg([1.0, 2.0], 1000.0), [1.0, 2.0])


def test_si_helpers():
    assert cb.J_PER_KWH == 3.6e6
    # 8 GPUs x (700 + 100) W x 1 hour = 6.4 kWh.
    assert cb.it_energy_j(8, 700.0, 3600.0, host_overhead_w_per_gpu=100.0) == pytest.approx(6.4 * cb.J_PER_KWH)
    assert cb.duration_from_tokens(1e12, 1e6) == pytest.approx(1e6)
    assert np.allclose(cb.it_energy_j(np.array([1, 2]), 500.0, 10.0), [5000.0, 10000.0])


def test_run_summary_like_a_dashboard_header():
    s = cb.run_summary(
        n_gpus=1024, duration_s=10 * 86400, gpu_power_w=600.0, pue=1.2, grid_g_per_kwh=400.0,
        energy_price_per_kwh=0.10, gpu_hour_price=2.0, host_overhead_w_per_gpu=150.0,
    )
    hours = 1024 * 240
    it_kwh = hours * 0.750
    assert s.gpu_hours == pytest.approx(hours)
    assert s.it_energy_j == pytest.approx(it_kwh * 3.6e6)
    assert s.facility_energy_kwh == pytest.approx(it_kwh * 1.2)
    assert s.facility_energy_j == pytest.approx(it_kwh * 1.2 * 3.6e6)
    assert s.co2e_kg == pytest.approx(it_kwh * 1.2 * 0.4)
    assert s.energy_cost == pytest.approx(it_kwh * 1.2 * 0.10)
    assert s.compute_cost == pytest.approx(hours * 2.0)
    assert s.total_cost == pytest.approx(s.energy_cost + s.compute_cost)


def test_llama3_style_energy():
    # Llama 3.1 8B: 1.46M H100 GPU-hours at 700 W peak = 1.022 GWh, no PUE.
    assert cb.llama3_style_energy_kwh(1.46e6, 700.0) == pytest.approx(1.022e6)
    # All three Llama 3.1 models, 39.3M GPU-hours: 27.51 GWh.
    assert cb.llama3_style_energy_kwh(39.3e6, 700.0) == pytest.approx(27.51e6)


@given(
    it=st.floats(0, 1e9),
    pue=st.floats(1.0, 3.0),
    grid=st.floats(0, 1200),
)
def test_emissions_scale_with_pue_and_grid(it, pue, grid):
    facility = cb.facility_energy_kwh(it, pue)
    assert facility >= it
    assert cb.emissions_kg(facility, grid) == pytest.approx(it * pue * grid / 1000.0)


@given(
    gpus=st.integers(1, 10_000),
    power=st.floats(0, 1500),
    hours=st.floats(0, 2000),
    pue=st.floats(1.0, 2.0),
)
def test_run_summary_agrees_with_the_kwh_contract(gpus, power, hours, pue):
    s = cb.run_summary(gpus, hours * 3600, power, pue, 475.0)
    it_kwh = cb.it_energy_j(gpus, power, hours * 3600) / cb.J_PER_KWH
    assert s.facility_energy_kwh == pytest.approx(cb.facility_energy_kwh(it_kwh, pue))
    assert s.co2e_kg == pytest.approx(cb.emissions_kg(s.facility_energy_kwh, 475.0))


# -- bad input -----------------------------------------------------------------------------------


CASES = [
    (cb.facility_energy_kwh, dict(it_energy_kwh=100.0, pue=1.2), {"it_energy_kwh": [-1], "pue": [0.9, 0, -1]}),
    (cb.emissions_kg, dict(facility_energy_kwh=100.0, grid_g_per_kwh=475.0),
     {"facility_energy_kwh": [-1], "grid_g_per_kwh": [-1]}),
    (cb.it_energy_j, dict(n_gpus=8, gpu_power_w=700.0, duration_s=3600.0, host_overhead_w_per_gpu=50.0),
     {"n_gpus": [0, -1, 1.5], "gpu_power_w": [-1], "duration_s": [-1], "host_overhead_w_per_gpu": [-1]}),
    (cb.duration_from_tokens, dict(tokens=1e9, tokens_per_s=1e5), {"tokens": [-1], "tokens_per_s": [0, -1]}),
    (cb.llama3_style_energy_kwh, dict(gpu_hours=1e6, peak_power_w=700.0),
     {"gpu_hours": [-1], "peak_power_w": [0, -1]}),
    (cb.run_summary, dict(n_gpus=8, duration_s=3600.0, gpu_power_w=700.0, pue=1.2, grid_g_per_kwh=475.0,
                          energy_price_per_kwh=0.1, gpu_hour_price=2.0, host_overhead_w_per_gpu=50.0),
     {"n_gpus": [0, 1.5], "duration_s": [-1], "gpu_power_w": [-1], "pue": [0.9, 0],
      "grid_g_per_kwh": [-1], "energy_price_per_kwh": [-1], "gpu_hour_price": [-1],
      "host_overhead_w_per_gpu": [-1]}),
]


@pytest.mark.parametrize("func, good, param, bad", list(bad_input_cases(CASES)))
def test_bad_input_names_the_parameter(func, good, param, bad):
    assert_rejected(func, good, param, bad)


# -- the planned run (the status bar's run summary) ----------------------------------------------

PLAN = dict(hardware_tdp_w=700.0, n_gpus=1024, train_tokens=15e12, tokens_per_s_per_gpu=3000.0,
            power_cap_w=None, static_fraction=0.3, min_voltage_fraction=0.6, compute_bound_share=0.7,
            pue=1.2, grid_g_per_kwh=400.0, energy_price_per_kwh=0.10, gpu_hour_price=2.0,
            host_overhead_w_per_gpu=100.0)


def test_plan_summary_uncapped_is_tokens_over_throughput_at_tdp():
    s = cb.plan_summary(**PLAN)
    duration = 15e12 / (1024 * 3000.0)
    assert s.duration_s == pytest.approx(duration)
    assert s.gpu_hours == pytest.approx(1024 * duration / 3600)
    it_kwh = 1024 * (700.0 + 100.0) * duration / cb.J_PER_KWH
    assert s.facility_energy_kwh == pytest.approx(it_kwh * 1.2)
    assert s.co2e_kg == pytest.approx(it_kwh * 1.2 * 0.4)
    assert s.energy_cost == pytest.approx(it_kwh * 1.2 * 0.10)
    assert s.compute_cost == pytest.approx(s.gpu_hours * 2.0)
    # a cap at (or above) the TDP is the same as no cap
    assert cb.plan_summary(**{**PLAN, "power_cap_w": 700.0}) == s
    assert cb.plan_summary(**{**PLAN, "power_cap_w": 900.0}) == s


def test_plan_summary_under_a_cap_matches_the_power_model():
    from workbench import power as pw

    perf = pw.capped_performance(500.0, 700.0, 3000.0, 0.7, 0.3, 0.6)
    s = cb.plan_summary(**{**PLAN, "power_cap_w": 500.0})
    expected = cb.run_summary(1024, 15e12 / (1024 * perf.tokens_per_s), perf.power_w, 1.2, 400.0, 0.10, 2.0, 100.0)
    assert s.__dict__ == pytest.approx(expected.__dict__)
    uncapped = cb.plan_summary(**PLAN)
    assert s.duration_s > uncapped.duration_s  # slower ...
    assert s.it_energy_j < uncapped.it_energy_j  # ... but cheaper in energy at this cap


def test_plan_run_and_plan_for_scenario():
    from workbench.scenarios import PowerScenario

    plan = cb.plan_run(**{**PLAN, "power_cap_w": 450.0})
    assert plan.cap_w == 450.0 and plan.tdp_w == 700.0
    assert plan.performance.power_w <= 450.0
    assert plan.job_tokens_per_s == pytest.approx(1024 * plan.performance.tokens_per_s)
    scenario = PowerScenario(n_gpus=8, power_cap_w=450.0, pue=1.1, grid_g_per_kwh=100.0, throughput_mfu=None)
    from_scenario = cb.plan_for_scenario(scenario, 700.0, n_gpus=1024)
    direct = cb.plan_run(700.0, 1024, scenario.train_tokens, scenario.tokens_per_s_per_gpu, 450.0,
                         scenario.static_fraction, scenario.min_voltage_fraction, scenario.compute_bound_share,
                         1.1, 100.0, scenario.energy_price_per_kwh, scenario.gpu_hour_price,
                         scenario.host_overhead_w_per_gpu)
    assert from_scenario == direct
    with pytest.raises(InputError) as info:
        cb.plan_for_scenario(scenario, 700.0, hardware="a100")
    assert info.value.parameter == "hardware"


def test_plan_for_scenario_plans_throughput_from_mfu_and_model_size():
    from workbench.scenarios import PowerScenario

    # 40% of an H100's 989.5 TFLOP/s dense BF16 on an 8B model: 6 x 8e9 = 48 GFLOP per token
    scenario = PowerScenario(throughput_mfu=0.4, n_params=8e9, precision="bf16")
    assert cb.scenario_tokens_per_s(scenario, 989.5e12) == pytest.approx(0.4 * 989.5e12 / 48e9)  # 8,246
    plan = cb.plan_for_scenario(scenario, 700.0, peak_flops=989.5e12)
    assert plan.performance.tokens_per_s == pytest.approx(8245.83, rel=1e-5)  # uncapped: the planned rate
    # a model 8.75x larger trains 8.75x slower on the same tokens
    bigger = cb.plan_for_scenario(scenario.with_changes(n_params=70e9), 700.0, peak_flops=989.5e12)
    assert bigger.summary.duration_s == pytest.approx(8.75 * plan.summary.duration_s)
    # the measured throughput is what counts once the MFU is cleared
    measured = scenario.with_changes(throughput_mfu=None, tokens_per_s_per_gpu=5000.0)
    assert cb.scenario_tokens_per_s(measured) == 5000.0
    with pytest.raises(InputError) as info:
        cb.plan_for_scenario(scenario, 700.0)
    assert info.value.parameter == "peak_flops"
    # the peak the MFU refers to: the device's dense rate at the plan's precision
    class Device:
        def peak_flops(self, precision):
            return {"bf16": 989.5e12}[precision]
    assert cb.plan_peak_flops(scenario, Device()) == 989.5e12
    assert cb.plan_peak_flops(measured, Device()) is None
    # an explicit throughput wins over both
    assert cb.plan_for_scenario(scenario, 700.0, tokens_per_s_per_gpu=1234.0).performance.tokens_per_s == 1234.0


def test_plan_summary_cap_below_the_lowest_names_the_cap():
    with pytest.raises(InputError) as info:
        cb.plan_summary(**{**PLAN, "power_cap_w": 100.0})
    assert info.value.parameter == "power_cap_w"
    assert "W" in str(info.value)


PLAN_BAD = {
    "hardware_tdp_w": [0, -1, None], "n_gpus": [0, 1.5, None], "train_tokens": [0, -1, None],
    "tokens_per_s_per_gpu": [0, -1, None], "power_cap_w": [0, -1], "static_fraction": [1.0, -0.1],
    "min_voltage_fraction": [1.5, -0.1], "compute_bound_share": [1.5, -0.1], "pue": [0.9],
    "grid_g_per_kwh": [-1], "energy_price_per_kwh": [-1], "gpu_hour_price": [-1],
    "host_overhead_w_per_gpu": [-1],
}


@pytest.mark.parametrize("param, bad", [
    pytest.param(p, b, id=f"{p}-{b!r}")
    for p, extra in PLAN_BAD.items()
    for b in [float("nan"), float("inf"), "3", True] + extra
])
def test_plan_summary_bad_input_names_the_parameter(param, bad):
    with pytest.raises(InputError) as info:
        cb.plan_summary(**{**PLAN, param: bad})
    assert info.value.parameter == param, str(info.value)
