"""workbench.comms_sweep: model curves, one operating point, measured logs and their fit."""

from __future__ import annotations

import numpy as np
import pytest

from workbench import comms, comms_sweep
from workbench._validate import InputError

GiB = 2**30
H100_LOG = "h100-16gpu-2node-allreduce-a3mega.txt"


def test_size_grid_covers_the_range_on_a_log_scale():
    sizes = comms_sweep.size_grid(1024, 16 * GiB, points_per_decade=10)
    assert sizes[0] == 1024 and sizes[-1] == 16 * GiB
    ratios = sizes[1:] / sizes[:-1]
    assert np.allclose(ratios, ratios[0])
    assert len(sizes) >= 70


@pytest.mark.parametrize("lo, hi", [(0, 10), (10, 10), (100, 10), (-1, 10)])
def test_size_grid_refuses_bad_ranges(lo, hi):
    with pytest.raises(InputError):
        comms_sweep.size_grid(lo, hi)


def test_sweep_uses_the_comms_formulas():
    sw = comms_sweep.sweep("all_reduce", 8, 360e9, 5e-6, 1024, 16 * GiB)
    assert np.allclose(sw.ring, comms.ring_allreduce_time(sw.sizes, 8, 360e9, 5e-6))
    assert np.allclose(sw.tree, comms.tree_allreduce_time(sw.sizes, 8, 360e9, 5e-6))
    assert np.allclose(sw.best, np.minimum(sw.ring, sw.tree))
    assert np.allclose(sw.ring_busbw, comms.busbw("all_reduce", sw.sizes, sw.ring, 8))
    # ring busbw approaches the link bandwidth for large messages
    assert sw.ring_busbw[-1] == pytest.approx(360e9, rel=1e-3)


def test_sweep_of_a_collective_without_tree():
    sw = comms_sweep.sweep("all_gather", 8, 100e9, 5e-6, 1e3, 1e9)
    assert sw.tree is None and sw.tree_busbw is None
    assert np.allclose(sw.ring, comms.ring_time("all_gather", sw.sizes, 8, 100e9, 5e-6))
    assert np.array_equal(sw.best, sw.ring)


def test_operating_point_matches_comms():
    p = comms_sweep.operating_point("all_reduce", GiB, 8, 360e9, 5e-6)
    assert p.ring_time == pytest.approx(comms.ring_allreduce_time(GiB, 8, 360e9, 5e-6))
    assert p.tree_time == pytest.approx(comms.tree_allreduce_time(GiB, 8, 360e9, 5e-6))
    assert p.best_algorithm == "ring" and p.best_time == p.ring_time
    assert p.crossover == pytest.approx(comms.crossover_size(8, 360e9, 5e-6))
    assert p.bus_factor == pytest.approx(2 * 7 / 8)
    assert p.busbw == pytest.approx(p.algbw * p.bus_factor)
    small = comms_sweep.operating_point("all_reduce", 1024, 8, 360e9, 5e-6)
    assert small.best_algorithm == "tree" and small.best_time == small.tree_time


@pytest.mark.parametrize("collective", ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce",
                                        "all_to_all", "scatter", "sendrecv"])
@pytest.mark.parametrize("n", [2, 3, 8, 64])
def test_ring_steps_count_the_latency_terms_of_ring_time(collective, n):
    assert comms.ring_time(collective, 0, n, 1e9, 1.0) == pytest.approx(comms_sweep.ring_steps(collective, n))


def test_ring_parameters_from_fit_reproduce_the_fitted_line():
    fit = comms.FitResult(alpha=140e-6, bandwidth=150e9, r2=1.0, n_points=10)
    bw, alpha = comms_sweep.ring_parameters_from_fit(fit, "all_reduce", 16)
    sizes = np.geomspace(1e3, 1e10, 20)
    assert np.allclose(comms.ring_allreduce_time(sizes, 16, bw, alpha), fit.predict(sizes))


def test_analyze_the_h100_log(nccl_logs_dir):
    log = comms_sweep.analyze_log((nccl_logs_dir / H100_LOG).read_text())
    assert log.collective == "all_reduce" and log.n_ranks == 16
    assert log.row_count == 31
    assert abs(log.computed_avg_busbw - log.printed_avg_busbw) <= 0.001e9
    assert len(log.sizes) == len(log.times) == len(log.busbw) == 31
    assert log.fit is not None and 50e-6 < log.fit.alpha < 500e-6
    xs, ys = log.fit_curve(log.sizes)
    assert len(xs) == len(ys) > 0 and np.all(ys > 0)
    bw, alpha = log.fitted_ring_parameters()
    assert 100e9 < bw < 500e9 and 0 < alpha < 50e-6


def test_analyze_refuses_text_without_rows():
    with pytest.raises(InputError):
        comms_sweep.analyze_log("hello\nthis is not a log\n")


def test_a_single_row_log_has_no_fit_but_still_reads(nccl_logs_dir):
    text = (nccl_logs_dir / H100_LOG).read_text()
    lines = [ln for ln in text.splitlines() if not ln.strip().startswith("8589934592")]
    rows = [ln for ln in lines if ln.strip() and ln.strip()[0].isdigit()]
    header = [ln for ln in lines if not (ln.strip() and ln.strip()[0].isdigit())]
    log = comms_sweep.analyze_log("\n".join(header + rows[-1:]))
    assert log.row_count == 1 and log.fit is None and "two distinct sizes" in log.fit_error
    assert log.fitted_ring_parameters() is None
