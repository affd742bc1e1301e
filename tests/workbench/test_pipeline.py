"""Input-pipeline read bandwidth, checkpoint sizes and storage traffic."""

from __future__ import annotations

import numpy as np
import pytest
from bad_input import assert_rejected, bad_input_cases
from hypothesis import given
from hypothesis import strategies as st

from workbench import pipeline as pl


def test_read_bandwidth_arithmetic():
    # 1024 GPUs x 3,000 tokens/s x 2 bytes (uint16 ids) = 6.144 MB/s.
    assert pl.required_read_bandwidth(1024, 3000.0, 2) == pytest.approx(6.144e6)
    out = pl.required_read_bandwidth(np.array([8, 16]), 1000.0, 4)
    assert np.allclose(out, [32_000.0, 64_000.0])


def test_checkpoint_bytes_convention():
    # Mixed-precision Adam: 2 + 4 + 4 + 4 = 14 bytes per parameter by default.
    assert pl.CHECKPOINT_BYTES_PER_PARAM_MIXED_ADAM == 2 + 4 + 4 + 4
    assert pl.checkpoint_bytes(7e9) == pytest.approx(98e9)
    assert pl.checkpoint_bytes(7e9, bytes_per_param=pl.WEIGHTS_ONLY_BYTES_PER_PARAM_BF16) == pytest.approx(14e9)


def test_checkpoint_write_bandwidth():
    # 98 GB every 30 minutes = 54.4 MB/s on average.
    assert pl.checkpoint_write_bandwidth(98e9, 1800.0) == pytest.approx(98e9 / 1800)
    assert np.allclose(pl.checkpoint_write_bandwidth(1e9, [10.0, 100.0]), [1e8, 1e7])


def test_storage_traffic_summary():
    t = pl.storage_traffic(512, 4000.0, 4, 70e9, 3600.0, write_window_s=60.0)
    assert t.read_bytes_per_s == pytest.approx(512 * 4000 * 4)
    assert t.checkpoint_bytes == pytest.approx(70e9 * 14)
    assert t.checkpoint_write_bytes_per_s == pytest.approx(70e9 * 14 / 3600)
    assert t.total_bytes_per_s == pytest.approx(t.read_bytes_per_s + t.checkpoint_write_bytes_per_s)
    assert t.checkpoint_burst_bytes_per_s == pytest.approx(70e9 * 14 / 60)
    assert pl.storage_traffic(8, 1.0, 2, 1e6, 10.0).checkpoint_burst_bytes_per_s is None


@given(
    gpus=st.integers(1, 100_000),
    rate=st.floats(0, 1e6),
    size=st.floats(0.5, 16),
    k=st.integers(2, 10),
)
def test_read_bandwidth_linear_in_gpus(gpus, rate, size, k):
    one = pl.required_read_bandwidth(gpus, rate, size)
    assert pl.required_read_bandwidth(gpus * k, rate, size) == pytest.approx(k * one)


# -- bad input -----------------------------------------------------------------------------------


CASES = [
    (pl.required_read_bandwidth, dict(n_gpus=8, tokens_per_s_per_gpu=1000.0, bytes_per_token=2),
     {"n_gpus": [0, -1, 1.5], "tokens_per_s_per_gpu": [-1], "bytes_per_token": [0, -2]}),
    (pl.checkpoint_bytes, dict(n_params=1e9, bytes_per_param=14), {"n_params": [0, -1], "bytes_per_param": [0, -1]}),
    (pl.checkpoint_write_bandwidth, dict(checkpoint_bytes=1e9, interval_s=60.0),
     {"checkpoint_bytes": [-1], "interval_s": [0, -1]}),
    (pl.storage_traffic, dict(n_gpus=8, tokens_per_s_per_gpu=1000.0, bytes_per_token=2, n_params=1e9,
                              checkpoint_interval_s=600.0, bytes_per_param=14, write_window_s=30.0),
     {"n_gpus": [0, 1.5], "tokens_per_s_per_gpu": [-1], "bytes_per_token": [0], "n_params": [0],
      "checkpoint_interval_s": [0, -1], "bytes_per_param": [0], "write_window_s": [0, -1]}),
]
NONE_ALLOWED = {"write_window_s"}


@pytest.mark.parametrize("func, good, param, bad", list(bad_input_cases(CASES, NONE_ALLOWED)))
def test_bad_input_names_the_parameter(func, good, param, bad):
    assert_rejected(func, good, param, bad)
