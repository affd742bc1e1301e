"""Adversarial inputs found in review: each must give an InputError, never a crash or a NaN."""

from __future__ import annotations

import math

import numpy as np
import pytest

import workbench
from workbench import comms_sweep, power
from workbench._validate import InputError

# -- power: the default cap sweep must stay bounded --------------------------------------------


def test_power_cap_sweep_refuses_a_grid_too_large_to_draw():
    # Before: numpy tried to allocate 4e9 caps (MemoryError, or minutes of bisection).
    with pytest.raises(InputError) as info:
        power.power_cap_sweep(700.0, 1000.0, step_w=1e-7)  # a mistyped step
    assert info.value.parameter == "step_w"
    assert "at most" in str(info.value)


def test_a_mistyped_tdp_is_refused_by_its_bound_before_any_sweep():
    # "1 GW" per GPU: refused as a power no GPU draws (it used to ask for a 4e7-cap sweep).
    with pytest.raises(InputError) as info:
        power.power_cap_sweep(1e9, 1000.0)
    assert info.value.parameter == "tdp_w"
    assert "between 0.001 and 100,000 W" in str(info.value)


def test_power_cap_sweep_accepts_the_largest_allowed_grid():
    lowest = power.min_power_cap(700.0)
    step = (700.0 - lowest) / (power.MAX_SWEEP_CAPS - 1)
    sweep = power.power_cap_sweep(700.0, 1000.0, step_w=step)
    assert sweep.cap_w.size <= power.MAX_SWEEP_CAPS
    assert sweep.cap_w[-1] == 700.0


def test_power_cap_sweep_default_h100_grid_unchanged():
    sweep = power.power_cap_sweep(700.0, 1000.0)
    assert sweep.cap_w[-1] == 700.0
    assert np.all(np.diff(sweep.cap_w) == pytest.approx(power.ZEUS_STEP_W))


# -- power: a zero clock must not turn into NaN ------------------------------------------------


def test_capped_performance_never_returns_nan_for_a_vanishing_cap():
    # static 0, v0 0, no minimum clock: P(f) = tdp f^3, so any cap > 0 passes validation, but
    # bisection bottoms out at f = 0 below ~1e-54 W. Before: tokens_per_joule was NaN.
    with pytest.raises(InputError) as info:
        power.capped_performance(1e-300, 700.0, 1000.0, static_fraction=0.0,
                                 min_voltage_fraction=0.0, min_clock_fraction=0.0)
    assert info.value.parameter == "cap_w"


def test_capped_performance_small_but_resolvable_cap_is_finite():
    perf = power.capped_performance(1e-9, 700.0, 1000.0, static_fraction=0.0,
                                    min_voltage_fraction=0.0, min_clock_fraction=0.0)
    values = [perf.clock_fraction, perf.tokens_per_s, perf.power_w, perf.tokens_per_joule,
              perf.joules_per_token]
    assert all(math.isfinite(x) and x > 0 for x in values)
    assert perf.power_w <= 1e-9


# -- comms_sweep: the size grid must not overflow -----------------------------------------------


def test_size_grid_with_subnormal_minimum_does_not_overflow():
    # Before: log10(hi / lo) was log10(inf) and math.ceil raised OverflowError.
    sizes = comms_sweep.size_grid(1e-320, 1e308)
    assert sizes[0] == 1e-320 and sizes[-1] == 1e308
    assert np.all(np.isfinite(sizes)) and np.all(np.diff(sizes) > 0)


def test_size_grid_point_count_unchanged_for_ordinary_ranges():
    # 1 KiB .. 16 GiB at 24 points per decade, as the all-reduce calculator asks.
    lo, hi = 1024.0, 16.0 * 2**30
    expected = max(2, math.ceil(math.log10(hi / lo) * 24) + 1)
    assert comms_sweep.size_grid(lo, hi).size == expected


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize(
    "call",
    [
        lambda: workbench.comms.ring_allreduce_time(1e308, 8, 1e-300, 0.0),
        lambda: workbench.comms.tree_allreduce_time(1e308, 8, 1e-300, 0.0),
        lambda: workbench.comms.algbw(1e9, 1e-320),
        lambda: workbench.mfu.flops_per_token(1e308, 1, 1, 1),
        lambda: workbench.carbon.facility_energy_kwh(1e308, 10),
    ],
)
def test_overflowing_results_are_refused_not_returned_as_infinity(call):
    with pytest.raises(ValueError, match="overflow"):
        call()


# -- issue 14: the bad-value walk's findings, one example each ------------------------------------


def test_an_infinite_ridge_point_names_the_bandwidth_that_makes_it():
    with pytest.raises(InputError) as info:
        workbench.roofline.ridge_point(1e15, 1e-308)
    assert info.value.parameter == "mem_bw" and "too small" in str(info.value)


def test_a_checkpoint_beyond_any_float_names_the_parameter_count():
    with pytest.raises(InputError) as info:
        workbench.pipeline.checkpoint_bytes(1e308)
    assert info.value.parameter == "n_params" and "too large" in str(info.value)


def test_integers_beyond_the_float_range_are_input_errors_not_overflow_errors():
    for call, name in [
        (lambda: workbench.carbon.run_summary(10**400, 3600.0, 700.0, 1.2, 475.0), "n_gpus"),
        (lambda: workbench.mfu.flops_per_token(10**400), "n_params"),
        (lambda: workbench.comms.ring_allreduce_time(10**400, 8, 1e11, 5e-6), "size_bytes"),
        (lambda: workbench.kernels.gemm(10**400, 8, 8), "m"),
    ]:
        with pytest.raises(InputError) as info:
            call()
        assert info.value.parameter == name


def test_plan_run_with_an_absurd_gpu_count_blames_the_gpu_count_with_its_range():
    with pytest.raises(InputError) as info:
        workbench.carbon.plan_run(700.0, 1e308, 1e12, 3000.0)
    assert info.value.parameter == "n_gpus"
    assert "between 1 and 10,000,000" in str(info.value)


@pytest.mark.parametrize("field", ["energy_price_per_kwh", "gpu_hour_price", "duration_s", "gpu_power_w"])
def test_run_costs_that_would_overflow_name_the_input(field):
    good = dict(n_gpus=8, duration_s=86400.0, gpu_power_w=700.0, pue=1.2, grid_g_per_kwh=475.0,
                energy_price_per_kwh=0.1, gpu_hour_price=2.0)
    with pytest.raises(InputError) as info:
        workbench.carbon.run_summary(**{**good, field: 1e308})
    assert info.value.parameter == field


def test_speedup_curve_is_bounded_and_says_so():
    with pytest.raises(InputError) as info:
        workbench.scaling.speedup_curve(0.05, 10**8)  # before: a MemoryError (800 MB per array)
    assert info.value.parameter == "n_max" and "1,000,000" in str(info.value)
    n, s = workbench.scaling.speedup_curve(0.05, 10**6)
    assert n.size == 10**6 and np.all(np.isfinite(s))


def test_a_percentage_beyond_the_float_range_is_refused_with_the_limit():
    with pytest.raises(InputError) as info:  # before: "not enough values to unpack"
        workbench.units.format_quantity(1e307, "%")
    assert info.value.parameter == "value"
    assert workbench.units.parse_quantity(workbench.units.format_quantity(1e306, "%"), "%") == pytest.approx(1e306)


def test_the_largest_float_formats_to_text_that_reads_back():
    top = np.finfo(float).max
    for unit in ("W", "", "s", "B/s"):
        text = workbench.units.format_quantity(top, unit)
        assert workbench.units.parse_quantity(text, unit) == top, text


def test_a_workspace_with_a_model_of_10_to_the_400_parameters_opens_with_a_named_error():
    from workbench.workspace import DEFAULT_PLAN, Workspace

    data = Workspace().to_dict()
    data["plan"]["n_params"] = 10**400  # what json.loads gives for a 401-digit literal
    with pytest.raises(InputError) as info:
        Workspace.from_dict(data)
    assert info.value.parameter == "n_params" and "finite" in str(info.value)
    data["plan"]["n_params"] = 1e300  # finite, but no model is that large: refused at the boundary
    with pytest.raises(InputError) as info:
        Workspace.from_dict(data)
    assert info.value.parameter == "n_params" and "1e+16" in str(info.value)
    assert Workspace.from_dict(Workspace().to_dict())[0].plan == DEFAULT_PLAN


def test_a_scenario_with_a_gpu_count_beyond_the_bound_says_the_range():
    from workbench.scenarios import ScalingScenario

    with pytest.raises(InputError, match="n_gpus: must be between 1 and 10,000,000"):
        ScalingScenario(n_gpus=10**8)


def test_an_integer_past_pythons_digit_limit_is_described_not_printed():
    # str() of an int beyond 4,300 digits raises ValueError itself: the message must not try
    for bad in (10**5000, [10**5000]):
        with pytest.raises(InputError) as info:
            workbench.mfu.flops_per_token(bad)
        assert info.value.parameter == "n_params"
        assert "5001 digits" in str(info.value) or "too long to show" in str(info.value)
