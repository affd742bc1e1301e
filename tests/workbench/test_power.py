"""The power-capping model: clock under a cap, throughput, energy per token, Zeus cost."""

from __future__ import annotations

import numpy as np
import pytest
from bad_input import assert_rejected, bad_input_cases
from hypothesis import given
from hypothesis import strategies as st

from workbench import power as pw
from workbench._validate import InputError

TDP = 700.0  # H100 SXM

model_params = st.fixed_dictionaries({
    "static_fraction": st.floats(0.0, 0.9),
    "min_voltage_fraction": st.floats(0.0, 1.0),
    "min_clock_fraction": st.floats(0.0, 0.9),
})


def _feasible_caps(params, tdp, count=2):
    """Caps strictly between the lowest feasible cap and a bit above TDP."""
    lowest = pw.min_power_cap(tdp, **params)
    return st.lists(st.floats(lowest * (1 + 1e-9) + 1e-9, tdp * 1.2), min_size=count, max_size=count)


# -- the model -----------------------------------------------------------------------------------


def test_power_at_clock_endpoints():
    assert pw.power_at_clock(1.0, TDP) == pytest.approx(TDP)
    assert pw.power_at_clock(0.0, TDP, static_fraction=0.3) == pytest.approx(0.3 * TDP)
    # f = 0.5, v0 = 0.6: V = 0.8, P = 700 * (0.3 + 0.7 * 0.5 * 0.64) = 366.8 W.
    assert pw.power_at_clock(0.5, TDP) == pytest.approx(366.8)


def test_clock_for_cap_inverts_power_at_clock():
    f = pw.clock_fraction_for_cap(366.8, TDP)
    assert f == pytest.approx(0.5, abs=1e-12)
    assert pw.clock_fraction_for_cap(TDP, TDP) == 1.0
    assert pw.clock_fraction_for_cap(900.0, TDP) == 1.0


def test_cap_below_the_minimum_says_the_smallest_cap():
    lowest = pw.min_power_cap(TDP)
    assert lowest == pytest.approx(pw.power_at_clock(0.2, TDP))
    with pytest.raises(InputError) as info:
        pw.clock_fraction_for_cap(lowest - 1, TDP)
    assert info.value.parameter == "cap_w"
    assert f"{lowest:g} W" in str(info.value)
    # With no minimum clock, the floor is the static power, itself out of reach.
    with pytest.raises(InputError) as info:
        pw.clock_fraction_for_cap(0.3 * TDP, TDP, min_clock_fraction=0.0)
    assert "210 W" in str(info.value)
    assert pw.clock_fraction_for_cap(0.3 * TDP + 1, TDP, min_clock_fraction=0.0) > 0


def test_capped_performance_arithmetic():
    r = pw.capped_performance(366.8, TDP, 1000.0, compute_bound_share=0.7)
    assert r.clock_fraction == pytest.approx(0.5)
    # t = t0 * (0.7 / 0.5 + 0.3) = 1.7 t0.
    assert r.tokens_per_s == pytest.approx(1000.0 / 1.7)
    assert r.power_w == pytest.approx(366.8)
    assert r.tokens_per_joule == pytest.approx(1000.0 / 1.7 / 366.8)
    assert r.joules_per_token == pytest.approx(1 / r.tokens_per_joule)
    full = pw.capped_performance(TDP, TDP, 1000.0)
    assert full.tokens_per_s == 1000.0 and full.power_w == pytest.approx(TDP)


def test_memory_bound_work_does_not_slow():
    r = pw.capped_performance(400.0, TDP, 1000.0, compute_bound_share=0.0)
    assert r.tokens_per_s == 1000.0


def test_sweep_steps_25_w_down_from_tdp():
    sweep = pw.power_cap_sweep(TDP, 1000.0)
    caps = sweep.cap_w
    assert caps[-1] == TDP
    assert np.allclose(np.diff(caps), 25.0)
    assert caps[0] >= pw.min_power_cap(TDP) > caps[0] - 25.0
    for field in ("clock_fraction", "tokens_per_s", "power_w", "tokens_per_joule", "joules_per_token"):
        assert getattr(sweep, field).shape == caps.shape


def test_sweep_over_given_caps():
    sweep = pw.power_cap_sweep(TDP, 1000.0, caps=[300.0, 500.0, 700.0])
    assert sweep.cap_w.tolist() == [300.0, 500.0, 700.0]


def test_default_params_have_an_interior_efficiency_optimum():
    sweep = pw.power_cap_sweep(TDP, 1000.0)
    best = pw.best_cap_for_efficiency(TDP, 1000.0)
    assert sweep.cap_w[0] < best.cap_w < TDP
    assert best.tokens_per_joule == pytest.approx(sweep.tokens_per_joule.max())
    assert best.tokens_per_joule > sweep.tokens_per_joule[0]
    assert best.tokens_per_joule > sweep.tokens_per_joule[-1]
    assert isinstance(best.cap_w, float)


def test_zeus_cost_formula():
    # eta * E + (1 - eta) * max_power * t
    assert pw.zeus_cost(1000.0, 2.0, 700.0) == pytest.approx(0.5 * 1000 + 0.5 * 700 * 2)
    assert pw.zeus_cost(1000.0, 2.0, 700.0, eta=1.0) == pytest.approx(1000.0)
    assert pw.zeus_cost(1000.0, 2.0, 700.0, eta=0.0) == pytest.approx(1400.0)
    assert np.allclose(pw.zeus_cost([1.0, 2.0], [1.0, 1.0], 100.0, eta=0.25), [75.25, 75.5])


# -- properties ----------------------------------------------------------------------------------


@given(data=st.data(), params=model_params)
def test_power_never_exceeds_the_cap(data, params):
    caps = np.array(data.draw(_feasible_caps(params, TDP, count=5)))
    r = pw.capped_performance(caps, TDP, 1000.0, **params)
    assert np.all(r.power_w <= caps)
    assert np.all(r.power_w <= TDP * (1 + 1e-12))


@given(data=st.data(), params=model_params, share=st.floats(0.0, 1.0))
def test_clock_and_throughput_monotone_in_cap(data, params, share):
    a, b = sorted(data.draw(_feasible_caps(params, TDP)))
    low = pw.capped_performance(a, TDP, 1000.0, compute_bound_share=share, **params)
    high = pw.capped_performance(b, TDP, 1000.0, compute_bound_share=share, **params)
    assert low.clock_fraction <= high.clock_fraction
    assert low.tokens_per_s <= high.tokens_per_s * (1 + 1e-12)
    assert low.power_w <= high.power_w


# Clocks below 1e-9 give caps of ~1e-100 W, which the model refuses as unresolvable
# (tests/workbench/test_review_edge_cases.py); no GPU is capped there.
@given(params=model_params, f=st.floats(1e-9, 1.0))
def test_solver_hits_the_model_power(params, f):
    target = pw.power_at_clock(
        f, TDP, static_fraction=params["static_fraction"], min_voltage_fraction=params["min_voltage_fraction"]
    )
    if target <= pw.min_power_cap(TDP, **params) or target >= TDP:
        return
    got = pw.clock_fraction_for_cap(target, TDP, **params)
    power = pw.power_at_clock(
        got, TDP, static_fraction=params["static_fraction"], min_voltage_fraction=params["min_voltage_fraction"]
    )
    assert power <= target
    assert power == pytest.approx(target, rel=1e-9)


# -- bad input -----------------------------------------------------------------------------------

MODEL_BAD = {
    "tdp_w": [0, -700],
    "static_fraction": [-0.1, 1.0, 1.5],
    "min_voltage_fraction": [-0.1, 1.5],
    "min_clock_fraction": [-0.1, 1.0],
    "compute_bound_share": [-0.1, 1.1],
    "tokens_per_s": [0, -1],
}
MODEL_GOOD = dict(static_fraction=0.3, min_voltage_fraction=0.6, min_clock_fraction=0.2)

CASES = [
    (pw.power_at_clock, dict(clock_fraction=0.5, tdp_w=TDP, static_fraction=0.3, min_voltage_fraction=0.6),
     {**MODEL_BAD, "clock_fraction": [-0.1, 1.1]}),
    (pw.min_power_cap, dict(tdp_w=TDP, **MODEL_GOOD), MODEL_BAD),
    (pw.clock_fraction_for_cap, dict(cap_w=400.0, tdp_w=TDP, **MODEL_GOOD), {**MODEL_BAD, "cap_w": [0, -1, 100.0]}),
    (pw.capped_performance, dict(cap_w=400.0, tdp_w=TDP, tokens_per_s=1000.0, compute_bound_share=0.7, **MODEL_GOOD),
     {**MODEL_BAD, "cap_w": [0, 100.0, [400.0, 100.0]]}),
    (pw.power_cap_sweep, dict(tdp_w=TDP, tokens_per_s=1000.0, step_w=25.0, compute_bound_share=0.7, **MODEL_GOOD),
     {**MODEL_BAD, "step_w": [0, -25]}),
    (pw.power_cap_sweep, dict(tdp_w=TDP, tokens_per_s=1000.0, caps=[400.0, 500.0], **MODEL_GOOD),
     {"caps": [[], [100.0, 500.0], [[400.0]], [0.0, 500.0]]}),
    (pw.best_cap_for_efficiency, dict(tdp_w=TDP, tokens_per_s=1000.0, step_w=25.0, compute_bound_share=0.7,
                                      **MODEL_GOOD), {**MODEL_BAD, "step_w": [0]}),
    (pw.zeus_cost, dict(energy_j=1000.0, time_s=2.0, max_power_w=TDP, eta=0.5),
     {"energy_j": [-1], "time_s": [-1], "max_power_w": [0, -1], "eta": [-0.1, 1.1]}),
]
NONE_ALLOWED = {"caps"}


@pytest.mark.parametrize("func, good, param, bad", list(bad_input_cases(CASES, NONE_ALLOWED)))
def test_bad_input_names_the_parameter(func, good, param, bad):
    assert_rejected(func, good, param, bad)
