"""The power model's clock solve (``workbench.power._clock``) against a plain bisection.

The model once solved P(f) = cap by 64 halvings of [min_clock_fraction, 1]; it now finds the
same double faster (closed-form cubic, a Newton step, a search over neighbouring doubles). The
clock, and so every number the Power and carbon panel shows, must stay bit for bit what the
bisection gives, with P(f) <= cap, and the errors for caps the model cannot honour must read as
they did.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench import carbon
from workbench import power as pw
from workbench._validate import InputError


def _power(tdp, static, v0, f):
    """The model's P(f), in the model's order of operations."""
    volts = v0 + (1.0 - v0) * f
    return tdp * (static + (1.0 - static) * f * volts * volts)


def _reference(tdp, static, v0, f_min, caps):
    """The bisection the model used to run: 64 halvings of [f_min, 1], 1.0 for caps >= tdp."""
    caps = np.asarray(caps, dtype=float)
    lo = np.full(caps.shape, f_min)
    hi = np.ones(caps.shape)
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        below = _power(tdp, static, v0, mid) <= caps
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return np.where(caps >= tdp, 1.0, lo)


def _random_models(rng, count):
    """(tdp, static, v0, f_min) over the whole allowed range, ends and awkward values included."""
    for _ in range(count):
        tdp = float(rng.choice([rng.uniform(1e-3, 1e5), rng.uniform(50.0, 1500.0), 700.0]))
        static = float(rng.choice([0.0, 0.3, 0.4, rng.uniform(0.0, 1.0), 1.0 - 10 ** rng.uniform(-9, -1)]))
        v0 = float(rng.choice([0.0, 1.0, 0.6, rng.uniform(0.0, 1.0)]))
        f_min = float(rng.choice([0.0, 0.2, 0.125, rng.uniform(0.0, 0.99), 10 ** rng.uniform(-9, -1),
                                  math.nextafter(1.0, 0.0)]))
        if static < 1.0:
            yield tdp, static, v0, f_min


def _caps(rng, tdp, static, v0, f_min):
    """Caps the model accepts: random ones, a hair above the lowest, a hair below TDP, at and
    above TDP, the lowest itself (where allowed) and the cap of clock 1/8."""
    lowest = _power(tdp, static, v0, f_min)
    caps = np.concatenate([
        rng.uniform(lowest, tdp * 1.05, 40),
        lowest * (1.0 + 10.0 ** rng.uniform(-16, -1, 8)),
        tdp * (1.0 - 10.0 ** rng.uniform(-16, -1, 8)),
        [tdp, tdp * 2.0, lowest, _power(tdp, static, v0, 0.125)],
    ])
    caps = caps[caps > lowest] if f_min == 0.0 else caps[caps >= lowest]
    reference = _reference(tdp, static, v0, f_min, caps)
    keep = reference > 0.0  # a zero clock is refused (tested below)
    return caps[keep], reference[keep]


def _same_doubles(got, want):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    return got.shape == want.shape and bool(np.all(got.view(np.int64) == want.view(np.int64)))


@pytest.mark.parametrize("seed", range(6))
def test_the_solve_is_the_bisection_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    compared = 0
    for tdp, static, v0, f_min in _random_models(rng, 150):
        caps, want = _caps(rng, tdp, static, v0, f_min)
        if not caps.size:
            continue
        got = pw.clock_fraction_for_cap(caps, tdp, static, v0, f_min)
        assert _same_doubles(got, want), (tdp, static, v0, f_min, caps[got != want], got[got != want])
        assert np.all(_power(tdp, static, v0, got) <= np.maximum(caps, tdp))
        # one cap at a time takes its own path (plain floats): the same doubles
        for cap, expected in zip(caps[::5], want[::5], strict=True):
            one = pw.clock_fraction_for_cap(float(cap), tdp, static, v0, f_min)
            assert type(one) is float and _same_doubles(one, expected), (tdp, static, v0, f_min, cap)
        compared += caps.size
    assert compared > 3000


def test_the_clock_is_the_largest_double_within_the_cap():
    rng = np.random.default_rng(11)
    for tdp, static, v0, f_min in _random_models(rng, 200):
        caps, _ = _caps(rng, tdp, static, v0, f_min)
        caps = caps[caps < tdp]
        if not caps.size:
            continue
        f = pw.clock_fraction_for_cap(caps, tdp, static, v0, f_min)
        assert np.all(_power(tdp, static, v0, f) <= caps)
        # where the bisection resolves doubles (clocks from 1/8 up), the next double is over the cap
        resolved = f >= 0.125
        above = np.nextafter(f[resolved], 2.0)
        assert np.all(_power(tdp, static, v0, above) > caps[resolved])


def test_caps_at_or_above_tdp_run_at_full_clock():
    caps = np.array([700.0, 700.0000001, 900.0, 1e6])
    assert _same_doubles(pw.clock_fraction_for_cap(caps, 700.0), np.ones(4))
    assert pw.clock_fraction_for_cap(700.0, 700.0) == 1.0
    assert pw.clock_fraction_for_cap(1e300, 700.0) == 1.0


def test_the_lowest_cap_gives_the_lowest_clock():
    for f_min in (0.2, 0.125, 0.5, 1e-6):
        lowest = pw.min_power_cap(700.0, 0.3, 0.6, f_min)
        got = pw.clock_fraction_for_cap(lowest, 700.0, 0.3, 0.6, f_min)
        assert _same_doubles(got, _reference(700.0, 0.3, 0.6, f_min, lowest))
        assert got >= f_min


def test_sweeps_and_shapes_match_the_bisection():
    # the panel's default sweep, H100 at 25 W steps, for the static shares the panel edits
    for static in (0.3, 0.4, 0.85, 0.99):
        sweep = pw.power_cap_sweep(700.0, 1000.0, static_fraction=static)
        want = _reference(700.0, static, 0.6, 0.2, sweep.cap_w)
        assert _same_doubles(sweep.clock_fraction, want)
    grid = np.linspace(260.0, 760.0, 24).reshape(2, 3, 4)
    got = pw.capped_performance(grid, 700.0, 1000.0).clock_fraction
    assert _same_doubles(got, _reference(700.0, 0.3, 0.6, 0.2, grid))
    assert pw.clock_fraction_for_cap(np.zeros((0,)) + 300.0, 700.0).shape == (0,)
    # a long array is solved in slices: still the same doubles
    many = np.random.default_rng(5).uniform(255.4, 760.0, 10_001)
    assert _same_doubles(pw.clock_fraction_for_cap(many, 700.0), _reference(700.0, 0.3, 0.6, 0.2, many))


def test_a_cap_below_the_lowest_still_says_so_in_the_same_words():
    bounds = ("must be >= 255.315 W (the power at min_clock_fraction=0.2 of a tdp_w=700 W GPU with "
              "static_fraction=0.3, min_voltage_fraction=0.6), got ")
    with pytest.raises(InputError) as info:
        pw.clock_fraction_for_cap(200.0, 700.0)
    assert (info.value.parameter, str(info.value)) == ("cap_w", "cap_w: " + bounds + "200")
    with pytest.raises(InputError) as info:
        pw.clock_fraction_for_cap([300.0, 200.0], 700.0, 0.3, 0.6, 0.2)
    assert str(info.value) == "cap_w: " + bounds + "200"
    with pytest.raises(InputError) as info:
        pw.capped_performance(100.0, 700.0, 1000.0)
    assert str(info.value) == "cap_w: " + bounds + "100"
    with pytest.raises(InputError) as info:
        pw.power_cap_sweep(700.0, 1000.0, caps=[100.0, 500.0])
    assert str(info.value) == "caps: " + bounds + "100"
    with pytest.raises(InputError) as info:
        carbon.plan_run(700.0, 8, 1e12, 1000.0, 100.0)
    assert str(info.value) == ("power_cap_w: must be >= 255.315 W (the power at min_clock_fraction=0.2 of a "
                               "hardware_tdp_w=700 W GPU with static_fraction=0.3, min_voltage_fraction=0.6), got 100")


def test_no_minimum_clock_refuses_the_static_power_and_unresolvable_caps_as_before():
    with pytest.raises(InputError) as info:
        pw.clock_fraction_for_cap(210.0, 700.0, 0.3, 0.6, 0.0)
    assert str(info.value) == "cap_w: must be > 210 W (the static power: static_fraction=0.3 of tdp_w=700 W), got 210"
    for cap in (1e-300, 1e-60):
        with pytest.raises(InputError) as info:
            pw.clock_fraction_for_cap(cap, 700.0, 0.0, 0.0, 0.0)
        assert str(info.value) == f"cap_w: is too small for the model to resolve a clock, got {cap:g}"
