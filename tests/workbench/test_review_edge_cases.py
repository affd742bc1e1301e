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
    assert "at most 100,000 W" in str(info.value)


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
