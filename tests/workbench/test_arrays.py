"""``workbench._arrays.distinct`` is ``np.unique`` for one array, without numpy.ma (issue 15)."""

import numpy as np
import pytest

from workbench._arrays import distinct

CASES = [
    [],
    [5.0],
    [3.0, 1.0, 1.0, 2.0],
    [[4, 4], [1, 9]],  # flattened, as np.unique does
    np.array([7, 7, 7], dtype=np.int64),
    [np.nan, 1.0, np.nan, 0.5, np.inf, -np.inf, np.inf],
    [np.nan, np.nan],
    [-0.0, 0.0, 1e-300, 1e300],
]


@pytest.mark.parametrize("values", CASES, ids=range(len(CASES)))
def test_distinct_gives_what_np_unique_gives(values):
    want, got = np.unique(values), distinct(values)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    if got.dtype.kind == "f":  # the same zero kept (-0.0 and 0.0 compare equal)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_distinct_matches_np_unique_on_random_grids():
    rng = np.random.default_rng(15)
    for _ in range(200):
        values = np.round(rng.uniform(0, 40, rng.integers(0, 60)))
        values[rng.random(values.size) < 0.1] = np.nan
        got, want = distinct(values), np.unique(values)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        ints = values[np.isfinite(values)].astype(np.int64)
        np.testing.assert_array_equal(distinct(ints), np.unique(ints))


def test_the_result_is_a_new_array_the_caller_may_write():
    source = np.array([2.0, 1.0, 2.0])
    out = distinct(source)
    out[0] = 9.0  # (the rank grid sets its ends exactly)
    assert source.tolist() == [2.0, 1.0, 2.0]
    one = np.array([4.0])
    distinct(one)[0] = 5.0  # a single value too
    assert one.tolist() == [4.0]
