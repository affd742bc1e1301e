"""The Scaling and MFU panel's numbers, without Qt: analyse_scaling, sweeps, measured points."""

from __future__ import annotations

import numpy as np
import pytest

from workbench import scaling as sc
from workbench import scaling_analysis as sa
from workbench._validate import InputError
from workbench.scenarios import ScalingScenario

H100_BF16 = 989.5e12
MPT_7B = ScalingScenario(n_gpus=8, n_params=6_658_859_008, n_layers=32, d_model=4096, seq_len=2048,
                         tokens_per_s=85_144)


def test_mpt_7b_mfu_and_hfu():
    a = sa.analyse_scaling(MPT_7B, H100_BF16, 1e12)
    assert abs(100 * a.mfu - 46.44) <= 0.01
    assert a.hfu == a.mfu
    assert a.flops_per_token == pytest.approx(6 * 6_658_859_008 + 12 * 32 * 4096 * 2048)
    full = sa.analyse_scaling(MPT_7B.with_changes(recompute="full"), H100_BF16, 1e12)
    assert full.hfu == pytest.approx(a.mfu * 4 / 3)


def test_speedup_and_efficiency_follow_the_mode():
    s = MPT_7B.with_changes(n_gpus=512, serial_fraction=0.02)
    a = sa.analyse_scaling(s, H100_BF16, 1e12)
    assert a.law == "Amdahl"
    assert a.speedup == pytest.approx(sc.amdahl_speedup(0.02, 512))
    assert a.efficiency == pytest.approx(a.speedup / 512)
    weak = sa.analyse_scaling(s.with_changes(mode="weak"), H100_BF16, 1e12)
    assert weak.law == "Gustafson" and weak.speedup == pytest.approx(512 - 0.02 * 511)


def test_step_breakdown_and_predicted_mfu():
    s = MPT_7B.with_changes(pipeline_stages=2, microbatches=4, comm_time_s=0.1, overlap=0.5,
                            dataloader_wait_s=0.01)
    a = sa.analyse_scaling(s, H100_BF16, 1e12)
    # one sequence per data-parallel replica per microbatch: 2048 x 4 x (8 / 2)
    assert a.tokens_per_step == 2048 * 4 * 4
    b = a.breakdown
    assert b.compute_s == pytest.approx(a.tokens_per_step / 85_144)
    assert b.exposed_comm_s == pytest.approx(0.05)
    assert b.bubble_s == pytest.approx(b.compute_s * 1 / 4)
    assert a.predicted_mfu == pytest.approx(a.mfu * b.compute_s / b.total_s)
    # no overheads: the prediction is the measured MFU
    assert sa.analyse_scaling(MPT_7B, H100_BF16, 1e12).predicted_mfu == pytest.approx(a.mfu)
    # 6N only: no sequence length, no step
    six_n = sa.analyse_scaling(MPT_7B.with_changes(n_layers=0, d_model=0, seq_len=0), H100_BF16, 1e12)
    assert six_n.breakdown is None and six_n.predicted_mfu is None


def test_storage_and_training_time():
    s = MPT_7B.with_changes(bytes_per_token=2, checkpoint_bytes=0, checkpoint_interval_s=1800)
    a = sa.analyse_scaling(s, H100_BF16, 1e12)
    assert a.read_bytes_per_s == pytest.approx(85_144 * 2)
    assert a.checkpoint_estimated and a.checkpoint_bytes == pytest.approx(14 * 6_658_859_008)
    assert a.checkpoint_write_bytes_per_s == pytest.approx(a.checkpoint_bytes / 1800)
    assert a.training_time_s == pytest.approx(1e12 / 85_144)
    given = sa.analyse_scaling(s.with_changes(checkpoint_bytes=1e9, bytes_per_token=0), H100_BF16, 1e12)
    assert not given.checkpoint_estimated and given.checkpoint_write_bytes_per_s == pytest.approx(1e9 / 1800)
    assert given.read_bytes_per_s == 0.0


def test_measured_points_fit_and_karp_flatt():
    points = tuple((n, 1000.0 * sc.amdahl_speedup(0.05, n)) for n in (1, 8, 64))
    a = sa.analyse_scaling(MPT_7B.with_changes(measured=points), H100_BF16, 1e12)
    assert a.measured.fit.serial_fraction == pytest.approx(0.05, abs=1e-6)
    assert a.measured.speedup == pytest.approx([sc.amdahl_speedup(0.05, n) for n in (1, 8, 64)], rel=1e-6)
    assert a.karp_flatt_gpus == 64 and a.karp_flatt == pytest.approx(0.05, abs=1e-6)
    one = sa.analyse_scaling(MPT_7B.with_changes(measured=((8, 1e5),)), H100_BF16, 1e12)
    assert one.measured is None and one.karp_flatt is None


def test_speedup_sweep_passes_through_powers_of_two():
    n, speedup, eff = sa.speedup_sweep(0.02, 1024, "strong", points=50)
    assert n[0] == 1 and n[-1] == 1024 and np.all(np.diff(n) > 0)
    for p in 2 ** np.arange(11):
        assert p in n
    assert speedup == pytest.approx(sc.amdahl_speedup(0.02, n))
    assert eff == pytest.approx(speedup / n)
    with pytest.raises(InputError, match="n_max"):
        sa.speedup_sweep(0.02, 0.5)
    with pytest.raises(InputError, match="mode"):
        sa.speedup_sweep(0.02, 8, "sideways")


def test_a_new_serial_fraction_reuses_the_gpu_grid_and_hands_out_arrays_of_its_own():
    first, _speedup, _eff = sa.speedup_sweep(0.05, 4096)
    made = sa._gpu_grid.cache_info().misses
    second, speedup, _eff = sa.speedup_sweep(0.02, 4096)
    assert sa._gpu_grid.cache_info().misses == made  # the span did not change: nor did the grid
    assert np.array_equal(first, second) and first is not second
    assert speedup == pytest.approx(sc.amdahl_speedup(0.02, second))
    first[0] = 9.0
    assert sa.speedup_sweep(0.05, 4096)[0][0] == 1.0


def test_measured_text_round_trip_and_errors():
    pairs = sa.parse_measured("8: 85,144; 64 = 610k\n512 4.1M")
    assert [g for g, _ in pairs] == [8, 64, 512]
    assert [x for _, x in pairs] == pytest.approx([85_144.0, 610_000.0, 4_100_000.0])
    assert sa.parse_measured(sa.format_measured(pairs)) == pairs
    assert sa.parse_measured("  ") == ()
    for bad, hint in (("8: abc", "pair 1"), ("0: 5k", "whole number"), ("8: 5k; 2.5: 1k", "pair 2"),
                      ("8", "GPUs: tokens/s")):
        with pytest.raises(InputError, match=hint) as info:
            sa.parse_measured(bad)
        assert info.value.parameter == "measured"
