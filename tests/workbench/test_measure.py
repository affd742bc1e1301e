"""Measuring this machine with numpy: shapes of the results, progress, cancel, bad input.

No timing asserts (speed is for benchmarks): only that the figures are positive and finite.
"""

from __future__ import annotations

import math
import re
from datetime import date

import pytest

from workbench import measure as M
from workbench.hardware import Hardware


def test_stream_triad_returns_bytes_per_second():
    calls = []
    bw = M.stream_triad(50_000, "float64", repeats=2, progress=lambda f, m: calls.append((f, m)))
    assert math.isfinite(bw) and bw > 0
    assert [f for f, _ in calls] == [0.5, 1.0]
    assert all("triad" in m.lower() for _, m in calls)
    assert M.stream_triad(1, "float32", repeats=1) > 0


def test_matmul_peak_returns_flops_per_second():
    rate = M.matmul_peak(32, "float64", repeats=1)
    assert math.isfinite(rate) and rate > 0


def test_measure_machine_tiny():
    progress = []
    hw = M.measure_machine("tiny", progress=lambda f, m: progress.append((f, m)))
    assert isinstance(hw, Hardware)
    assert hw.name == "This machine (measured)" and hw.vendor == "local" and hw.key == "this-machine"
    assert not hw.builtin
    assert hw.precisions == ("fp64", "fp32")
    assert hw.peak_flops("fp32") > 0 and hw.peak_flops("fp64") > 0
    level = hw.memory_level("HBM")
    assert level.bandwidth > 0 and level.technology == "DRAM"
    today = date.today().isoformat()
    for source in [level.source, hw.rate("fp32").source, hw.rate("fp64").source]:
        assert today in source and re.search(r"best of \d", source) and "n=" in source
    assert "STREAM triad" in level.source
    fractions = [f for f, _ in progress]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    assert Hardware.from_dict(hw.to_dict()) == hw  # can be saved like any other device


def test_measure_machine_cancel_stops_with_an_exception():
    polls = []

    def cancelled():
        polls.append(1)
        return len(polls) > 2

    with pytest.raises(M.MeasurementCancelled):
        M.measure_machine("tiny", cancelled=cancelled)
    assert len(polls) == 3  # stopped at the first poll that said yes


@pytest.mark.parametrize("run", [M.stream_triad, M.matmul_peak])
def test_micro_benchmarks_cancel_before_work(run):
    with pytest.raises(M.MeasurementCancelled):
        run(64, cancelled=lambda: True)


@pytest.mark.parametrize("bad", [0, -5, 2.5, math.nan, "100", True, None])
def test_bad_sizes(bad):
    with pytest.raises(ValueError, match="^n_elements:"):
        M.stream_triad(bad)
    with pytest.raises(ValueError, match="^n:"):
        M.matmul_peak(bad)
    with pytest.raises(ValueError, match="^repeats:"):
        M.stream_triad(16, repeats=bad)
    with pytest.raises(ValueError, match="^repeats:"):
        M.matmul_peak(16, repeats=bad)


@pytest.mark.parametrize("bad", ["float16", "bf16", "", None, 4])
def test_bad_dtype(bad):
    with pytest.raises(ValueError, match="^dtype:"):
        M.stream_triad(16, bad)
    with pytest.raises(ValueError, match="^dtype:"):
        M.matmul_peak(16, bad)


def test_bad_size_and_callbacks():
    for bad in ("huge", "", None, 1):
        with pytest.raises(ValueError, match="^size:"):
            M.measure_machine(bad)
    with pytest.raises(ValueError, match="^progress:"):
        M.measure_machine("tiny", progress="print")
    with pytest.raises(ValueError, match="^cancelled:"):
        M.stream_triad(16, cancelled=True)
