"""Amdahl, Gustafson, Karp-Flatt, scaling efficiency and the Amdahl fit."""

from __future__ import annotations

import numpy as np
import pytest
from bad_input import assert_rejected, bad_input_cases
from hypothesis import assume, given
from hypothesis import strategies as st

from workbench import scaling as sc
from workbench._validate import InputError

fractions = st.floats(0.0, 1.0)
counts = st.integers(1, 100_000)


# -- reference values ----------------------------------------------------------------------------


def test_amdahl_textbook_values():
    assert sc.amdahl_speedup(0.0, 64) == pytest.approx(64.0)
    assert sc.amdahl_speedup(1.0, 64) == pytest.approx(1.0)
    assert sc.amdahl_speedup(0.05, 1) == pytest.approx(1.0)
    # 5% serial on 20 GPUs: 1 / (0.05 + 0.95 / 20) = 10.256...
    assert sc.amdahl_speedup(0.05, 20) == pytest.approx(1 / (0.05 + 0.95 / 20))


def test_gustafson_textbook_values():
    assert sc.gustafson_speedup(0.05, 20) == pytest.approx(20 - 0.05 * 19)
    assert sc.gustafson_speedup(0.0, 8) == pytest.approx(8.0)
    assert sc.gustafson_speedup(1.0, 8) == pytest.approx(1.0)


def test_karp_flatt_of_a_measurement():
    # Speedup 6 on 8 GPUs: (1/6 - 1/8) / (1 - 1/8) = 1/21.
    assert sc.karp_flatt(6.0, 8) == pytest.approx(1 / 21)


def test_efficiencies():
    assert sc.scaling_efficiency(700.0, 8, 100.0) == pytest.approx(0.875)
    assert sc.strong_scaling_efficiency(80.0, 12.5, 8) == pytest.approx(0.8)
    assert sc.weak_scaling_efficiency(10.0, 12.5) == pytest.approx(0.8)
    out = sc.scaling_efficiency(np.array([100.0, 190.0, 360.0]), np.array([1, 2, 4]), 100.0)
    assert np.allclose(out, [1.0, 0.95, 0.9])


def test_speedup_curve_modes():
    n, strong = sc.speedup_curve(0.1, 16)
    assert n.tolist() == list(range(1, 17))
    assert np.allclose(strong, sc.amdahl_speedup(0.1, n))
    _, weak = sc.speedup_curve(0.1, 16, mode="weak")
    assert np.allclose(weak, sc.gustafson_speedup(0.1, n))


def test_vectorised_shapes_and_scalars():
    assert isinstance(sc.amdahl_speedup(0.1, 8), float)
    grid = sc.amdahl_speedup(np.array([[0.0], [0.1]]), np.array([1, 2, 4]))
    assert grid.shape == (2, 3)


# -- properties ----------------------------------------------------------------------------------


@given(s=fractions, n=counts)
def test_amdahl_bounded_by_n_and_inverse_serial_fraction(s, n):
    speedup = sc.amdahl_speedup(s, n)
    assert 1.0 - 1e-12 <= speedup <= n * (1 + 1e-12)
    if s > 0:
        assert speedup <= (1.0 / s) * (1 + 1e-12)


@given(s=fractions, n=counts, extra=st.integers(1, 1000))
def test_amdahl_monotone_in_n(s, n, extra):
    assert sc.amdahl_speedup(s, n + extra) >= sc.amdahl_speedup(s, n) * (1 - 1e-12)


@given(s=fractions, n=counts)
def test_gustafson_at_least_amdahl(s, n):
    assert sc.gustafson_speedup(s, n) >= sc.amdahl_speedup(s, n) * (1 - 1e-12)


@given(s=fractions, n=st.integers(2, 100_000))
def test_karp_flatt_inverts_amdahl(s, n):
    assert sc.karp_flatt(sc.amdahl_speedup(s, n), n) == pytest.approx(s, abs=1e-9)


@given(
    s=st.floats(0.0, 0.5),
    x1=st.floats(1.0, 1e7),
    gpus=st.lists(st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128, 256, 512]), min_size=2, max_size=8, unique=True),
)
def test_fit_recovers_serial_fraction_from_exact_data(s, x1, gpus):
    n = np.array(sorted(gpus), dtype=float)
    fit = sc.fit_serial_fraction(n, x1 * sc.amdahl_speedup(s, n))
    assert fit.serial_fraction == pytest.approx(s, abs=1e-6)
    assert fit.throughput_1 == pytest.approx(x1, rel=1e-6)
    assert fit.rms_residual <= 1e-6 * x1


def test_fit_with_noise_is_close_and_reports_residual():
    rng = np.random.default_rng(7)
    n = np.array([1, 2, 4, 8, 16, 32, 64])
    truth = 1000.0 * sc.amdahl_speedup(0.02, n)
    noisy = truth * (1 + 0.005 * rng.standard_normal(n.size))
    fit = sc.fit_serial_fraction(n, noisy)
    assert fit.serial_fraction == pytest.approx(0.02, abs=0.005)
    assert fit.rms_residual > 0
    assert np.allclose(fit.predict(n), truth, rtol=0.05)


def test_fit_clamps_superlinear_data_at_zero():
    fit = sc.fit_serial_fraction([1, 2, 4], [100.0, 210.0, 430.0])
    assert fit.serial_fraction == 0.0


@given(s=fractions, n=st.integers(1, 4096))
def test_efficiency_of_amdahl_throughput_is_speedup_over_n(s, n):
    x1 = 123.0
    eff = sc.scaling_efficiency(x1 * sc.amdahl_speedup(s, n), n, x1)
    assert eff == pytest.approx(sc.amdahl_speedup(s, n) / n)
    assert 0 < eff <= 1 + 1e-12


# -- bad input -----------------------------------------------------------------------------------


CASES = [
    (sc.amdahl_speedup, dict(serial_fraction=0.1, n=8), {"serial_fraction": [-0.1, 1.1], "n": [0, 0.5, -2]}),
    (sc.gustafson_speedup, dict(serial_fraction=0.1, n=8), {"serial_fraction": [-0.1, 1.1], "n": [0, -2]}),
    (sc.karp_flatt, dict(speedup=6.0, n=8), {"speedup": [0, -1], "n": [1, 0, -2]}),
    (sc.scaling_efficiency, dict(throughput_n=700.0, n=8, throughput_1=100.0),
     {"throughput_n": [-1], "n": [0], "throughput_1": [0, -1]}),
    (sc.strong_scaling_efficiency, dict(time_1=80.0, time_n=12.5, n=8),
     {"time_1": [0, -1], "time_n": [0, -1], "n": [0]}),
    (sc.weak_scaling_efficiency, dict(time_1=10.0, time_n=12.5), {"time_1": [0, -1], "time_n": [0, -1]}),
    (sc.speedup_curve, dict(serial_fraction=0.1, n_max=16, mode="strong"),
     {"serial_fraction": [-0.1, 1.1], "n_max": [0, 2.5], "mode": ["amdahl", 1]}),
    (sc.fit_serial_fraction, dict(gpus=[1, 2, 4], throughputs=[100.0, 190.0, 350.0]),
     {"gpus": [[1, 1, 1], [0, 2, 4], 4, [[1, 2, 4]]], "throughputs": [[100.0, 0.0, 350.0], [1.0, 2.0]]}),
]


@pytest.mark.parametrize("func, good, param, bad", list(bad_input_cases(CASES)))
def test_bad_input_names_the_parameter(func, good, param, bad):
    assert_rejected(func, good, param, bad)


@given(s=st.floats(allow_nan=True, allow_infinity=True), n=st.integers(1, 64))
def test_out_of_range_serial_fraction_always_rejected(s, n):
    assume(not 0.0 <= s <= 1.0)
    with pytest.raises(InputError):
        sc.amdahl_speedup(s, n)
