"""How far a fitted latency and bandwidth can be trusted, the hierarchical ring link, and the
model against rank count and link bandwidth."""

from __future__ import annotations

import numpy as np
import pytest

from workbench import comms, comms_sweep, plan

US = 1e-6
GB = 1e9
MiB = 2**20


# --- fit quality -------------------------------------------------------------------------------
def test_a_full_sweep_measures_both_parameters_and_says_the_fit_is_good():
    s = 2.0 ** np.arange(3, 34)
    fit = comms.fit_alpha_beta(s, 20 * US + s / (150 * GB), "relative")
    assert fit.verdict == comms.FIT_GOOD and fit.usable
    assert fit.alpha_measured and fit.bandwidth_measured
    assert fit.half_size == pytest.approx(20 * US * 150 * GB)
    assert fit.n_latency + fit.n_bandwidth == s.size
    assert fit.n_latency >= 3 and fit.n_bandwidth >= 3
    assert fit.rel_rms == pytest.approx(0.0, abs=1e-9)
    assert "0% RMS" in fit.reason


def test_four_large_sizes_do_not_make_a_latency():
    # sendrecv_perf -b 128M -e 1G: every size is bandwidth-dominated, so the line's alpha of
    # some 500 us is an extrapolation, and the result says so instead of reporting a latency
    sizes = np.array([128, 256, 512, 1024], dtype=float) * MiB
    times = np.array([1076.0, 1646.0, 2774.0, 5042.0]) * US
    fit = comms.fit_alpha_beta(sizes, times, "relative")
    assert fit.alpha > 300 * US  # the line has one...
    assert not fit.alpha_measured and fit.bandwidth_measured  # ...but no point measured it
    assert fit.verdict == comms.FIT_NO_LATENCY and not fit.usable
    assert fit.n_latency == 0 and fit.n_bandwidth == 4
    assert "extrapolation" in fit.reason and "0 of the 4 sizes" in fit.reason
    assert "128 MiB to 1 GiB" in fit.reason


def test_only_small_sizes_leave_the_bandwidth_unmeasured():
    s = np.array([64, 256, 1024, 4096], dtype=float)
    fit = comms.fit_alpha_beta(s, 10 * US + s / (100 * GB), "relative")
    assert fit.alpha_measured and not fit.bandwidth_measured
    assert fit.verdict == comms.FIT_NO_BANDWIDTH and "bandwidth is an extrapolation" in fit.reason


def test_two_points_measure_nothing():
    fit = comms.fit_alpha_beta([0, 1000], [1.0, 2.0])
    assert fit.verdict == comms.FIT_TOO_FEW and not fit.usable


def test_a_line_that_misses_the_points_is_fair_or_poor():
    s = 2.0 ** np.arange(3, 34)
    t = 20 * US + s / (150 * GB)
    kinked = t * np.where(np.arange(s.size) % 2 == 0, 1.25, 0.8)  # protocol switches, exaggerated
    fair = comms.fit_alpha_beta(s, kinked, "relative")
    assert fair.verdict == comms.FIT_FAIR and fair.usable
    assert 0.1 < fair.rel_rms <= 0.35 and "NCCL changes protocol" in fair.reason
    wild = t * np.where(np.arange(s.size) % 2 == 0, 3.0, 0.3)
    poor = comms.fit_alpha_beta(s, wild, "relative")
    assert poor.verdict == comms.FIT_POOR and not poor.usable


def test_the_needed_count_per_region_is_the_module_constant(monkeypatch):
    s = 2.0 ** np.arange(3, 34)
    t = 20 * US + s / (150 * GB)
    monkeypatch.setattr(comms, "MIN_POINTS_PER_REGION", 20)
    assert comms.fit_alpha_beta(s, t).verdict in (comms.FIT_NO_LATENCY, comms.FIT_NO_BANDWIDTH, comms.FIT_TOO_FEW)


def test_old_style_fit_results_still_build():
    fit = comms.FitResult(alpha=140e-6, bandwidth=150e9, r2=1.0, n_points=10)
    assert fit.predict(0.0) == pytest.approx(140e-6)


# --- the hierarchical ring --------------------------------------------------------------------
def test_hierarchical_link_inside_one_node_across_nodes_and_one_rank_per_node():
    intra, nic = 360 * GB, 48 * GB
    assert comms.hierarchical_link(8, 8, intra, 3.4 * US, nic, 9.6 * US) == (intra, 3.4 * US)
    assert comms.hierarchical_link(8, 16, intra, 3.4 * US, nic, 9.6 * US) == (360 * GB, 9.6 * US)
    assert comms.hierarchical_link(4, 16, intra, 3.4 * US, nic, 9.6 * US) == (4 * nic, 9.6 * US)
    assert comms.hierarchical_link(1, 16, intra, 3.4 * US, nic, 9.6 * US) == (nic, 9.6 * US)


def test_the_plan_uses_the_same_hierarchical_link():
    links = plan.Links(intra_bw=360 * GB, intra_latency_s=3.4 * US, inter_bw=24 * GB, inter_latency_s=9.6 * US,
                       intra_name="NVLink", inter_name="NIC")
    for inside, group in ((8, 8), (8, 64), (4, 64), (1, 64)):
        assert plan._group_link(inside, group, links) == comms.hierarchical_link(
            inside, group, links.intra_bw, links.intra_latency_s, links.inter_bw, links.inter_latency_s)


# (the bad-value walk of the new functions is tests/workbench/test_public_api.py's, over __all__)


# --- against rank count and link bandwidth ----------------------------------------------------
def test_rank_sweep_splits_ring_time_into_latency_and_transfer():
    rs = comms_sweep.rank_sweep("all_reduce", 2.0**30, 360 * GB, 5 * US)
    assert rs.ranks[0] == 2 and rs.ranks[-1] == 100_000
    assert np.all(np.diff(rs.ranks) > 0) and np.all(rs.ranks == np.round(rs.ranks))
    assert rs.ring == pytest.approx(comms.ring_allreduce_time(2.0**30, rs.ranks, 360 * GB, 5 * US))
    assert rs.tree == pytest.approx(comms.tree_allreduce_time(2.0**30, rs.ranks, 360 * GB, 5 * US))
    assert rs.ring_latency + rs.ring_transfer == pytest.approx(rs.ring)
    assert rs.ring_latency == pytest.approx(2 * (rs.ranks - 1) * 5 * US)
    # 2(n-1) alpha >= 2(n-1)/n S/B from n = S / (alpha B) on
    n_star = rs.latency_from
    assert n_star == int(np.ceil(2.0**30 / (5 * US * 360 * GB)))
    assert comms_sweep.latency_takes_over("all_reduce", 2.0**30, 360 * GB, 5 * US) == n_star


@pytest.mark.parametrize("collective", ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all"])
@pytest.mark.parametrize("size", [1.0, 3e5, 2.0**30, 7e11])
def test_latency_takes_over_at_the_first_rank_count_where_the_ring_s_latency_wins(collective, size):
    bw, alpha, top = 200 * GB, 8 * US, 3000
    n = np.arange(2, top + 1)
    latency = np.asarray(comms_sweep._ring(collective, 0.0, n, bw, alpha))
    transfer = np.asarray(comms_sweep._ring(collective, size, n, bw, 0.0))
    wins = latency >= transfer
    expected = int(n[np.argmax(wins)]) if wins.any() else None
    assert comms_sweep.latency_takes_over(collective, size, bw, alpha, n_max=top) == expected


def test_a_new_message_size_reuses_the_rank_grid_and_hands_out_arrays_of_its_own():
    """The rank grid depends on the span alone: a size edit does not make it again; each
    sweep still gets an array it may change without touching the next one's."""
    first = comms_sweep.rank_sweep("all_reduce", 2.0**20, 360 * GB, 5 * US)
    made = comms_sweep._rank_grid.cache_info().misses
    second = comms_sweep.rank_sweep("all_reduce", 2.0**30, 360 * GB, 5 * US)
    assert comms_sweep._rank_grid.cache_info().misses == made
    assert np.array_equal(first.ranks, second.ranks) and first.ranks is not second.ranks
    first.ranks[0] = 7
    assert comms_sweep.rank_sweep("all_reduce", 2.0**25, 360 * GB, 5 * US).ranks[0] == 2
    # the latency bracket over the same ranks: as found by walking every rank count
    for size in (2.0**10, 2.0**24, 2.0**33):
        ns = np.arange(2, 100_001)
        wins = comms.ring_allreduce_time(0.0, ns, 360 * GB, 5 * US) >= comms.ring_allreduce_time(size, ns, 360 * GB, 0.0)
        expected = int(ns[np.argmax(wins)]) if wins.any() else None
        assert comms_sweep.latency_takes_over("all_reduce", size, 360 * GB, 5 * US) == expected


def test_latency_never_takes_over_a_huge_message_within_the_range():
    assert comms_sweep.latency_takes_over("all_reduce", 1e15, 360 * GB, 1 * US, n_max=1000) is None
    rs = comms_sweep.rank_sweep("all_gather", 1e15, 360 * GB, 1 * US, n_max=1000)
    assert rs.tree is None and rs.latency_from is None
    assert comms_sweep.latency_takes_over("sendrecv", 8, 360 * GB, 5 * US) == 2  # one hop: any n


def test_bandwidth_sweep_follows_the_model():
    bs = comms_sweep.bandwidth_sweep("reduce_scatter", 2.0**28, 16, 5 * US, 1e9, 2e12)
    assert bs.bandwidths[0] == 1e9 and bs.bandwidths[-1] == 2e12
    assert bs.ring == pytest.approx(comms.ring_time("reduce_scatter", 2.0**28, 16, bs.bandwidths, 5 * US))
    assert bs.tree is None and np.all(np.diff(bs.ring) < 0)


def test_a_measured_log_gives_its_time_at_a_size_between_its_rows():
    text = (
        "# Collective test starting: all_reduce_perf\n"
        "#  Rank  0 Group  0 Pid 1 on n1 device  0 [0000:18:00] NVIDIA H100 80GB HBM3\n"
        "#  Rank  1 Group  0 Pid 2 on n1 device  1 [0000:2a:00] NVIDIA H100 80GB HBM3\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "     1048576        262144     float     sum      -1    100.0   10.49   10.49      0    100.0   10.49   10.49      0\n"
        "     4194304       1048576     float     sum      -1    400.0   10.49   10.49      0    400.0   10.49   10.49      0\n"
    )
    log = comms_sweep.analyze_log(text)
    assert log.time_at(1048576) == pytest.approx(100e-6)
    assert log.time_at(2097152) == pytest.approx(200e-6)  # halfway on log-log axes
    assert log.time_at(512) is None and log.time_at(2**30) is None
