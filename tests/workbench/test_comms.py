"""Communication cost models and nccl-tests bandwidth conventions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench import comms
from workbench._validate import InputError
from workbench.collectives import Collective
from workbench.comms import (
    algbw,
    best_algorithm,
    bus_factor,
    busbw,
    crossover_size,
    fit_alpha_beta,
    ring_allreduce_time,
    ring_time,
    tree_allreduce_time,
)

GB = 1e9
US = 1e-6

# --- reference values ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("collective", "factor_8"),
    [
        ("all_reduce", 2 * 7 / 8),
        ("reduce_scatter", 7 / 8),
        ("all_gather", 7 / 8),
        ("all_to_all", 7 / 8),
        ("alltoall", 7 / 8),
        ("scatter", 7 / 8),
        ("gather", 7 / 8),
        ("broadcast", 1.0),
        ("reduce", 1.0),
        ("sendrecv", 1.0),
        (Collective.ALL_REDUCE, 1.75),
        ("allreduce", 1.75),
        ("reduce_scatter_perf", 7 / 8),
    ],
)
def test_bus_factor_table(collective, factor_8):
    assert bus_factor(collective, 8) == pytest.approx(factor_8)


def test_bus_factor_edges_and_arrays():
    assert bus_factor("all_reduce", 1) == 0.0  # nccl-tests prints busbw 0 on one rank
    assert bus_factor("all_reduce", 2) == 1.0
    assert bus_factor("all_gather", 16) == pytest.approx(15 / 16)
    np.testing.assert_allclose(bus_factor("all_reduce", np.array([2, 4, 8])), [1.0, 1.5, 1.75])
    np.testing.assert_allclose(bus_factor("broadcast", np.array([2, 4])), [1.0, 1.0])
    assert isinstance(bus_factor("reduce", 8), float)


def test_ring_and_tree_allreduce_formulas():
    s, n, b, a = 1e9, 8, 100 * GB, 5 * US
    assert ring_allreduce_time(s, n, b, a) == pytest.approx(2 * 7 / 8 * s / b + 2 * 7 * a)
    assert tree_allreduce_time(s, n, b, a) == pytest.approx(2 * s / b + 2 * 3 * a)
    assert tree_allreduce_time(s, 9, b, a) == pytest.approx(2 * s / b + 2 * 4 * a)  # ceil(log2 9)
    assert tree_allreduce_time(s, 1024, b, a) == pytest.approx(2 * s / b + 2 * 10 * a)
    assert ring_allreduce_time(s, 1, b, a) == 0.0 and tree_allreduce_time(s, 1, b, a) == 0.0
    assert ring_allreduce_time(0, 8, b, 0) == 0.0


def test_formulas_are_vectorised():
    sizes = np.array([0.0, 1e6, 1e9])
    t = ring_allreduce_time(sizes, 8, 100 * GB, 5 * US)
    assert isinstance(t, np.ndarray) and t.shape == (3,)
    np.testing.assert_allclose(t, [ring_allreduce_time(x, 8, 100 * GB, 5 * US) for x in sizes])
    grid = tree_allreduce_time(sizes[:, None], np.array([1, 2, 8, 64])[None, :], 100 * GB, 5 * US)
    assert grid.shape == (3, 4) and np.all(grid[:, 0] == 0)
    assert ring_time("all_gather", sizes, np.array([2, 4, 8]), 100 * GB, 0).shape == (3,)
    assert isinstance(ring_allreduce_time(1e6, 8, 100 * GB, 5 * US), float)


@pytest.mark.parametrize(
    ("collective", "expected"),
    [
        ("all_reduce", 2 * 3 / 4 * 10.0 + 2 * 3 * 0.5),
        ("reduce_scatter", 3 / 4 * 10.0 + 3 * 0.5),
        ("all_gather", 3 / 4 * 10.0 + 3 * 0.5),
        ("all_to_all", 3 / 4 * 10.0 + 3 * 0.5),
        ("scatter", 3 / 4 * 10.0 + 3 * 0.5),
        ("gather", 3 / 4 * 10.0 + 3 * 0.5),
        ("broadcast", 10.0 + 3 * 0.5),
        ("reduce", 10.0 + 3 * 0.5),
        ("sendrecv", 10.0 + 0.5),
    ],
)
def test_ring_time_per_collective(collective, expected):
    # S / B = 10 s, alpha = 0.5 s, n = 4
    assert ring_time(collective, 1000.0, 4, 100.0, 0.5) == pytest.approx(expected)
    assert ring_time(collective, 1000.0, 1, 100.0, 0.5) == 0.0


def test_ring_time_of_all_reduce_matches_the_contract_function():
    sizes = np.logspace(0, 10, 11)
    np.testing.assert_allclose(
        ring_time("all_reduce", sizes, 16, 50 * GB, 8 * US),
        ring_allreduce_time(sizes, 16, 50 * GB, 8 * US),
    )


def test_algbw_and_busbw_on_a_printed_row():
    # h100 log, 8 GiB out-of-place: 47535 us, 180.71 GB/s algbw, 338.82 GB/s busbw, 16 ranks.
    size, time = 8589934592, 47535 * US
    assert algbw(size, time) == pytest.approx(180.71 * GB, abs=0.005 * GB)
    assert busbw("all_reduce", size, time, 16) == pytest.approx(338.82 * GB, abs=0.01 * GB)
    assert algbw(0, 1.0) == 0.0
    np.testing.assert_allclose(algbw(np.array([1.0, 2.0]), 2.0), [0.5, 1.0])


def test_crossover_size_closed_form_and_edges():
    b, a = 100 * GB, 10 * US
    # n = 8: ring 2*7/8 S/B + 14a, tree 2 S/B + 6a -> S* = a*B*8*(7-3)
    s = crossover_size(8, b, a)
    assert s == pytest.approx(a * b * 8 * 4)
    assert ring_allreduce_time(s, 8, b, a) == pytest.approx(tree_allreduce_time(s, 8, b, a))
    for n in (1, 2, 3):
        assert crossover_size(n, b, a) == 0.0  # tree never wins: ring is no slower anywhere
    assert crossover_size(64, b, 0.0) == 0.0
    np.testing.assert_allclose(crossover_size(np.array([4, 8]), b, a), [a * b * 4 * 1, a * b * 8 * 4])


def test_best_algorithm_small_tree_large_ring():
    b, a = 100 * GB, 10 * US
    assert best_algorithm(1e3, 64, b, a) == "tree"
    assert best_algorithm(1e10, 64, b, a) == "ring"
    assert best_algorithm(1e3, 2, b, a) == "ring"  # tie at small sizes goes to ring
    assert best_algorithm(1e3, 1, b, a) == "ring"


# --- properties ----------------------------------------------------------------------------

sizes = st.floats(0, 1e12, allow_nan=False)
ranks = st.integers(2, 4096)
bandwidths = st.floats(1e6, 1e13)
alphas = st.floats(0, 1e-3)
collectives = st.sampled_from([c.value for c in Collective] + ["sendrecv", "gather"])


@settings(max_examples=200, deadline=None)
@given(collectives, sizes, sizes, ranks, bandwidths, alphas)
def test_ring_time_is_monotone_in_size(collective, s1, s2, n, b, a):
    small, large = sorted((s1, s2))
    assert ring_time(collective, small, n, b, a) <= ring_time(collective, large, n, b, a)


@settings(max_examples=200, deadline=None)
@given(collectives, sizes, ranks, ranks, bandwidths, alphas)
def test_ring_time_is_monotone_in_rank_count(collective, s, n1, n2, b, a):
    few, many = sorted((n1, n2))
    t_few, t_many = ring_time(collective, s, few, b, a), ring_time(collective, s, many, b, a)
    assert t_few <= t_many * (1 + 1e-12)
    assert ring_allreduce_time(s, few, b, a) <= ring_allreduce_time(s, many, b, a) * (1 + 1e-12)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 4096), bandwidths, st.floats(1e-7, 1e-3), st.floats(1e-3, 1e3))
def test_crossover_agrees_with_best_algorithm(n, b, a, factor):
    s_star = crossover_size(n, b, a)
    below, above = s_star / (1 + factor), s_star * (1 + factor) + 1.0
    assert best_algorithm(above, n, b, a) == "ring"
    if s_star > 0:
        assert best_algorithm(below, n, b, a) == "tree"
    # Times meet at the crossover.
    ring = ring_allreduce_time(s_star, n, b, a)
    assert ring == pytest.approx(tree_allreduce_time(s_star, n, b, a), rel=1e-9)


@settings(max_examples=200, deadline=None)
@given(collectives, st.floats(0, 1e12), st.floats(1e-7, 1e3), st.integers(1, 4096))
def test_busbw_is_algbw_times_the_factor(collective, s, t, n):
    assert busbw(collective, s, t, n) == pytest.approx(algbw(s, t) * bus_factor(collective, n))


# --- fitting -------------------------------------------------------------------------------


@pytest.mark.parametrize(("alpha", "bandwidth"), [(5 * US, 100 * GB), (0.0, 1e6), (1e-3, 400 * GB)])
def test_fit_recovers_alpha_and_bandwidth_exactly(alpha, bandwidth):
    s = 2.0 ** np.arange(3, 34)  # 8 B .. 8 GiB, like nccl-tests
    t = alpha + s / bandwidth
    for weighting in ("absolute", "relative"):
        fit = fit_alpha_beta(s, t, weighting=weighting)
        assert fit.alpha == pytest.approx(alpha, rel=1e-9, abs=1e-15 * t.max())  # rounding only
        assert fit.bandwidth == pytest.approx(bandwidth, rel=1e-9)
        assert fit.r2 == pytest.approx(1.0) and fit.n_points == s.size
        np.testing.assert_allclose(fit.predict(s), t, rtol=1e-9, atol=1e-15 * t.max())


def test_fit_with_two_points_and_lists():
    fit = fit_alpha_beta([0, 1000], [1.0, 2.0])
    assert (fit.alpha, fit.bandwidth) == (pytest.approx(1.0), pytest.approx(1000.0))


@pytest.mark.parametrize(
    ("sizes", "times", "parameter"),
    [
        ([100, 100, 100], [1, 2, 3], "sizes"),  # one distinct size
        ([100], [1], "sizes"),
        ([1, 2, 3], [1, 2], "times"),  # lengths differ
        ([1, 2, 3], [3, 2, 1], "times"),  # falls with size: no bandwidth
        ([1, 2, 3], [1, 1, 1], "times"),  # flat: infinite bandwidth
        ([1, 2, -3], [1, 2, 3], "sizes"),
        ([1, 2, 3], [1, 0, 3], "times"),
        ([1, math.nan, 3], [1, 2, 3], "sizes"),
        ([1, 2, 3], [1, math.inf, 3], "times"),
        ("123", [1, 2, 3], "sizes"),
        ([1, 2, 3], ["1", "2", "3"], "times"),
        ([True, False], [1, 2], "sizes"),
    ],
)
def test_fit_refuses_bad_points(sizes, times, parameter):
    with pytest.raises(InputError) as info:
        fit_alpha_beta(sizes, times)
    assert info.value.parameter == parameter


def test_a_relative_fit_of_times_near_the_smallest_float_names_the_times():
    # weights 1/t of a time of 2e-309 overflowed the least-squares solver (LinAlgError)
    with pytest.raises(InputError) as info:
        fit_alpha_beta([1e3, 1e6, 1e9], [1.0, 1.0, 2.225073858507203e-309], weighting="relative")
    assert info.value.parameter == "times"
    # the same points scaled in time fit the same line scaled: the weights' scale is no input
    fit = fit_alpha_beta([1e3, 1e6, 1e9], [1e-5, 2e-5, 0.011], weighting="relative")
    slow = fit_alpha_beta([1e3, 1e6, 1e9], [1e-2, 2e-2, 11.0], weighting="relative")
    assert slow.alpha == pytest.approx(fit.alpha * 1e3, rel=1e-9)
    assert slow.bandwidth == pytest.approx(fit.bandwidth / 1e3, rel=1e-9)


def test_fit_refuses_unknown_weighting():
    with pytest.raises(InputError) as info:
        fit_alpha_beta([1, 2], [1, 2], weighting="log")
    assert info.value.parameter == "weighting"


# --- bad input, every public function ------------------------------------------------------

BAD_NUMBERS = [math.nan, math.inf, -math.inf, "8", "abc", True, None, [1, "x"], object()]
GOOD = {"size_bytes": 1e6, "n_ranks": 8, "link_bw": 100 * GB, "alpha": 5 * US}

LINK_FUNCTIONS = {
    "ring_allreduce_time": lambda **k: ring_allreduce_time(**k),
    "tree_allreduce_time": lambda **k: tree_allreduce_time(**k),
    "ring_time": lambda **k: ring_time("all_gather", **k),
    "best_algorithm": lambda **k: best_algorithm(**k),
}


def bad_values(parameter):
    """Values each parameter must refuse, beyond BAD_NUMBERS."""
    extra = {
        "size_bytes": [-1.0, np.array([1.0, -2.0])],
        "n_ranks": [0, -4, 2.5, np.array([2, 0]), np.array([2.0, 3.5])],
        "link_bw": [0.0, -1.0],
        "alpha": [-1e-6],
        "time_s": [0.0, -1.0],
    }
    return BAD_NUMBERS + extra[parameter]


@pytest.mark.parametrize("function", list(LINK_FUNCTIONS))
@pytest.mark.parametrize("parameter", list(GOOD))
def test_link_functions_name_the_bad_parameter(function, parameter):
    for bad in bad_values(parameter):
        with pytest.raises(ValueError) as info:
            LINK_FUNCTIONS[function](**{**GOOD, parameter: bad})
        assert isinstance(info.value, InputError) and info.value.parameter == parameter, bad


@pytest.mark.parametrize("parameter", ["n_ranks", "link_bw", "alpha"])
def test_crossover_size_names_the_bad_parameter(parameter):
    good = {k: GOOD[k] for k in ("n_ranks", "link_bw", "alpha")}
    for bad in bad_values(parameter):
        with pytest.raises(InputError) as info:
            crossover_size(**{**good, parameter: bad})
        assert info.value.parameter == parameter, bad


@pytest.mark.parametrize("parameter", ["size_bytes", "time_s", "n_ranks"])
def test_bandwidth_functions_name_the_bad_parameter(parameter):
    good = {"size_bytes": 1e6, "time_s": 1e-3, "n_ranks": 8}
    for bad in bad_values(parameter):
        if parameter != "n_ranks":
            with pytest.raises(InputError) as info:
                algbw(**{k: v for k, v in {**good, parameter: bad}.items() if k != "n_ranks"})
            assert info.value.parameter == parameter, bad
        with pytest.raises(InputError) as info:
            busbw("all_reduce", **{**good, parameter: bad})
        assert info.value.parameter == parameter, bad
    if parameter == "n_ranks":
        for bad in bad_values("n_ranks"):
            with pytest.raises(InputError) as info:
                bus_factor("all_reduce", bad)
            assert info.value.parameter == "n_ranks", bad


@pytest.mark.parametrize("bad", ["allreduc", "", None, 3, True, "hypercube"])
def test_unknown_collective_is_refused_everywhere(bad):
    for call in (
        lambda: bus_factor(bad, 8),
        lambda: busbw(bad, 1e6, 1e-3, 8),
        lambda: ring_time(bad, 1e6, 8, GB, US),
    ):
        with pytest.raises(InputError) as info:
            call()
        assert info.value.parameter == "collective"


def test_shapes_that_do_not_broadcast_are_refused():
    with pytest.raises(InputError):
        ring_allreduce_time(np.ones(3), np.array([2, 4]), GB, US)


def test_public_names():
    for name in ("ring_allreduce_time", "tree_allreduce_time", "bus_factor", "parse_nccl_tests"):
        assert callable(getattr(comms, name))


@pytest.mark.parametrize("n_ranks", [8, 8.0, 1, 2.5, 0, -3, 10**9, float("nan"), float("inf"), 10**400, True])
def test_a_plain_number_of_ranks_is_checked_as_a_numpy_one_is(n_ranks):
    """Plain ints and floats take a shorter path through the checks (issue 15): the same time,
    or the same error naming n_ranks, as the number given as a numpy array."""
    from workbench.comms import ring_allreduce_time

    def outcome(value):
        try:
            return ring_allreduce_time(2**20, value, 100e9, 5e-6)
        except Exception as exc:  # noqa: BLE001 - the error itself is compared
            return type(exc), str(exc)

    as_array = n_ranks if isinstance(n_ranks, bool) or n_ranks == 10**400 else np.asarray(n_ranks)
    plain, numpy_given = outcome(n_ranks), outcome(as_array)
    if isinstance(plain, float):
        assert isinstance(numpy_given, float) and plain == numpy_given
    else:
        assert plain == numpy_given and "n_ranks" in plain[1]
    # a one-element array takes the array checks: the same value, or the same error
    if as_array is not n_ranks:
        in_array = outcome(np.asarray([n_ranks]))
        if isinstance(plain, float):
            assert isinstance(in_array, np.ndarray) and float(in_array[0]) == plain
        else:
            assert in_array == plain
