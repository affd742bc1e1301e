"""Roofline model: reference values (shared/references/README.md), properties, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench import kernels as K
from workbench import roofline as R
from workbench.hardware import ComputeRate, Hardware, MemoryLevel
from workbench.kernels import Kernel

# H100 SXM, from shared/references/README.md: BF16 dense 989 TFLOP/s (1,979 sparse), 3.35 TB/s.
H100_BF16 = 989e12
H100_BW = 3.35e12


def h100(l2: bool = False) -> Hardware:
    memory = [MemoryLevel("HBM", H100_BW, source="datasheet", capacity=80e9, technology="HBM3")]
    if l2:
        memory.append(MemoryLevel("L2", 12e12, source="illustrative figure for the test"))
    return Hardware(
        name="NVIDIA H100 SXM",
        vendor="NVIDIA",
        compute=(
            ComputeRate("fp64", 67e12, source="datasheet"),
            ComputeRate("fp32", 67e12, source="datasheet"),
            ComputeRate("tf32", 494.5e12, source="datasheet", sparsity_factor=2.0),
            ComputeRate("bf16", H100_BF16, source="datasheet", sparsity_factor=2.0),
            ComputeRate("fp16", H100_BF16, source="datasheet", sparsity_factor=2.0),
            ComputeRate("fp8", 1979e12, source="datasheet", sparsity_factor=2.0),
        ),
        memory=tuple(memory),
    )


# -- reference values --------------------------------------------------------------------
def test_h100_bf16_ridge_is_about_295():
    assert R.ridge_point(H100_BF16, H100_BW) == pytest.approx(295.2, abs=0.1)


def test_sparsity_doubles_the_ridge_and_keeps_the_memory_roof():
    hw = h100()
    dense = R.ceilings(hw, "bf16")
    sparse = R.ceilings(hw, "bf16", sparse=True)
    assert sparse[0].peak_flops == pytest.approx(2 * dense[0].peak_flops)
    assert sparse[0].sparse and not dense[0].sparse
    assert sparse[0].ridge == pytest.approx(2 * dense[0].ridge)
    assert sparse[1].kind == dense[1].kind == "memory"
    assert sparse[1].mem_bw == dense[1].mem_bw == H100_BW
    assert R.attainable(10.0, sparse[0].peak_flops, H100_BW) == R.attainable(10.0, H100_BF16, H100_BW)


def test_gemm_8192_is_compute_bound_on_h100():
    p = R.place(K.gemm(8192, 8192, 8192, "bf16"), H100_BF16, H100_BW)
    assert 1000 < p.intensity < 10000
    assert p.bound == "compute"
    assert p.ceiling == H100_BF16


def test_attention_unfused_memory_bound_fused_compute_bound_on_h100():
    unfused = R.place(K.attention_unfused(8, 32, 4096, 128), H100_BF16, H100_BW)
    fused = R.place(K.attention_fused(8, 32, 4096, 128), H100_BF16, H100_BW)
    assert unfused.bound == "memory"
    assert fused.bound == "compute"
    assert unfused.ceiling < H100_BF16 / 3


# -- attainable and bound ----------------------------------------------------------------
def test_attainable_scalar_gives_float_and_array_gives_array():
    assert isinstance(R.attainable(1.0, H100_BF16, H100_BW), float)
    out = R.attainable(np.array([1.0, 1e4]), H100_BF16, H100_BW)
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, [H100_BW, H100_BF16])
    assert R.attainable([0.0], 1.0, 1.0).tolist() == [0.0]


def test_attainable_broadcasts_over_peaks():
    # AI 400 is above the dense ridge (295) but below the sparse one (590).
    out = R.attainable(400.0, np.array([H100_BF16, 2 * H100_BF16]), H100_BW)
    np.testing.assert_allclose(out, [H100_BF16, 400.0 * H100_BW])


def test_attainable_at_the_ridge_is_exactly_the_peak():
    ridge = R.ridge_point(H100_BF16, H100_BW)
    assert R.attainable(ridge, H100_BF16, H100_BW) == H100_BF16
    assert R.bound(ridge, H100_BF16, H100_BW) == "compute"
    assert R.bound(np.nextafter(ridge, 0), H100_BF16, H100_BW) == "memory"


def test_bound_vectorised():
    out = R.bound(np.array([1.0, 1000.0]), H100_BF16, H100_BW)
    assert out.tolist() == ["memory", "compute"]


rates = st.floats(min_value=1e6, max_value=1e18, allow_nan=False, allow_infinity=False)
intensities = st.floats(min_value=0.0, max_value=1e9, allow_nan=False, allow_infinity=False)


@given(ai=intensities, peak=rates, bw=rates)
def test_attainable_never_exceeds_peak(ai, peak, bw):
    assert R.attainable(ai, peak, bw) <= peak


@given(a=intensities, b=intensities, peak=rates, bw=rates)
def test_attainable_monotone_in_intensity(a, b, peak, bw):
    lo, hi = sorted((a, b))
    assert R.attainable(lo, peak, bw) <= R.attainable(hi, peak, bw)


@given(frac=st.floats(min_value=0.0, max_value=0.999999), peak=rates, bw=rates)
def test_attainable_is_ai_times_bw_below_the_ridge(frac, peak, bw):
    ai = frac * peak / bw
    assert R.attainable(ai, peak, bw) == pytest.approx(ai * bw, rel=1e-12, abs=0)


@given(ai=st.lists(intensities, min_size=1, max_size=50), peak=rates, bw=rates)
def test_attainable_vectorised_matches_scalar(ai, peak, bw):
    arr = R.attainable(np.array(ai), peak, bw)
    assert arr.tolist() == [R.attainable(x, peak, bw) for x in ai]


# -- ceilings ----------------------------------------------------------------------------
def test_ceilings_default_is_compute_and_memory_roof():
    roofs = R.ceilings(h100(), "bf16")
    assert [r.kind for r in roofs] == ["compute", "memory"]
    assert roofs[0].peak_flops == H100_BF16 and roofs[0].mem_bw == H100_BW
    assert roofs[0].label == "BF16 peak"
    assert "HBM3" in roofs[1].label


def test_ceilings_sparse_ignored_without_support():
    roofs = R.ceilings(h100(), "fp32", sparse=True)
    assert roofs[0].peak_flops == 67e12 and not roofs[0].sparse


def test_ceilings_extra_precisions_one_flat_roof_per_other_peak():
    roofs = R.ceilings(h100(), "bf16", extra_precisions=True)
    compute = [r for r in roofs if r.kind == "compute"]
    # BF16 and FP16 share a peak and a roof; FP64/FP32 share one too.
    assert compute[0].label == "BF16/FP16 peak"
    labels = [r.label for r in compute[1:]]
    assert labels == ["FP8 peak", "TF32 peak", "FP64/FP32 peak"]
    assert all(r.mem_bw == H100_BW for r in compute)


def test_ceilings_extra_precisions_follow_the_sparsity_setting():
    roofs = R.ceilings(h100(), "bf16", sparse=True, extra_precisions=True)
    by_label = {r.label: r for r in roofs}
    assert by_label["FP8 peak (2:4 sparse)"].peak_flops == pytest.approx(2 * 1979e12)
    assert by_label["FP64/FP32 peak"].peak_flops == 67e12  # no sparse rate there


def test_ceilings_l2_only_when_present():
    assert all(r.kind != "l2" for r in R.ceilings(h100(), "bf16", include_l2=True))
    roofs = R.ceilings(h100(l2=True), "bf16", include_l2=True)
    l2 = [r for r in roofs if r.kind == "l2"]
    assert len(l2) == 1 and l2[0].mem_bw == 12e12 and l2[0].peak_flops == H100_BF16
    assert l2[0].ridge < roofs[0].ridge


def test_roof_segments():
    compute, memory = R.ceilings(h100(), "bf16")
    x, y = compute.segment(0.1, 1e4)
    assert x[0] == pytest.approx(compute.ridge) and x[1] == 1e4
    assert y.tolist() == [H100_BF16, H100_BF16]
    x, y = memory.segment(0.1, 1e4)
    assert x[0] == 0.1 and y[0] == pytest.approx(0.1 * H100_BW)
    assert y[1] == H100_BF16
    assert compute.segment(0.1, 10.0)[0].size == 0  # roof starts right of the range


# -- roof_curve --------------------------------------------------------------------------
def test_roof_curve_contains_the_exact_ridge():
    ai, perf = R.roof_curve(H100_BF16, H100_BW, 0.01, 1e5, n=64)
    ridge = H100_BF16 / H100_BW
    assert ridge in ai
    assert perf[ai == ridge][0] == H100_BF16
    assert ai[0] == 0.01 and ai[-1] == 1e5
    assert np.all(np.diff(ai) > 0) and np.all(np.diff(perf) >= 0)
    assert len(ai) == 65


def test_roof_curve_without_ridge_in_range():
    ai, perf = R.roof_curve(H100_BF16, H100_BW, 1000, 1e5, n=10)
    assert len(ai) == 10 and np.all(perf == H100_BF16)


# -- placing kernels ---------------------------------------------------------------------
def test_place_without_time_sits_on_the_roof():
    p = R.place(Kernel("k", flops=1e9, bytes=1e9), H100_BF16, H100_BW)
    assert p.achieved == p.ceiling == pytest.approx(H100_BW)
    assert p.fraction_of_roof == 1.0 and not p.measured and p.bound == "memory"


def test_place_with_time_uses_measured_rate():
    k = Kernel("k", flops=1e12, bytes=1e9, time_s=0.01)  # 100 TFLOP/s at AI 1000
    p = R.place(k, H100_BF16, H100_BW)
    assert p.measured and p.achieved == pytest.approx(1e14)
    assert p.fraction_of_roof == pytest.approx(1e14 / H100_BF16)


def test_place_many_matches_place_for_10000_kernels():
    rng = np.random.default_rng(1)
    flops = rng.uniform(1e6, 1e13, 10_000)
    moved = rng.uniform(1e5, 1e10, 10_000)
    kernels = [
        Kernel(f"k{i}", flops=f, bytes=b, time_s=(None if i % 3 else f / 1e13))
        for i, (f, b) in enumerate(zip(flops, moved, strict=True))
    ]
    many = R.place_many(kernels, H100_BF16, H100_BW)
    assert len(many) == 10_000
    for i in (0, 1, 2, 4999, 9999):
        one = R.place(kernels[i], H100_BF16, H100_BW)
        assert many.intensity[i] == one.intensity
        assert many.ceiling[i] == one.ceiling
        assert many.achieved[i] == pytest.approx(one.achieved)
        assert many.fraction_of_roof[i] == pytest.approx(one.fraction_of_roof)
        assert many.bound[i] == one.bound
        assert bool(many.measured[i]) == one.measured
    assert not np.any(np.isnan(many.achieved))


def test_place_many_empty():
    many = R.place_many([], H100_BF16, H100_BW)
    assert len(many) == 0 and many.intensity.shape == (0,)


def test_explanation_mentions_the_remedies():
    text = R.EXPLANATION.lower()
    for word in ("ridge", "fuse", "flashattention", "batch", "min("):
        assert word in text


# -- bad input ---------------------------------------------------------------------------
BAD_RATES = [-1.0, 0.0, math.nan, math.inf, "989e12", True, None]


@pytest.mark.parametrize("bad", BAD_RATES)
def test_ridge_point_rejects(bad):
    with pytest.raises(ValueError, match="peak_flops"):
        R.ridge_point(bad, H100_BW)
    with pytest.raises(ValueError, match="mem_bw"):
        R.ridge_point(H100_BF16, bad)


@pytest.mark.parametrize("bad", BAD_RATES)
def test_attainable_rejects_bad_rates(bad):
    with pytest.raises(ValueError, match="peak_flops"):
        R.attainable(1.0, bad, H100_BW)
    with pytest.raises(ValueError, match="mem_bw"):
        R.attainable(1.0, H100_BF16, bad)


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, "1", True, [1.0, math.nan], ["1"], [True], [[1], [1, 2]]])
def test_attainable_and_bound_reject_bad_intensity(bad):
    with pytest.raises(ValueError, match="ai"):
        R.attainable(bad, H100_BF16, H100_BW)
    with pytest.raises(ValueError, match="ai"):
        R.bound(bad, H100_BF16, H100_BW)


def test_bound_rejects_bad_rates():
    with pytest.raises(ValueError, match="mem_bw"):
        R.bound(1.0, H100_BF16, -3)


def test_ceilings_reject_bad_input():
    hw = h100()
    with pytest.raises(ValueError, match="hardware"):
        R.ceilings("h100", "bf16")
    with pytest.raises(ValueError, match="precision"):
        R.ceilings(hw, "bf17")
    with pytest.raises(ValueError, match="precision"):
        R.ceilings(hw, "int8")  # the device has no INT8 rate
    for flag in ("sparse", "extra_precisions", "include_l2"):
        with pytest.raises(ValueError, match=flag):
            R.ceilings(hw, "bf16", **{flag: "yes"})


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"peak_flops": -1}, "peak_flops"),
        ({"mem_bw": math.nan}, "mem_bw"),
        ({"ai_min": 0}, "ai_min"),
        ({"ai_max": math.inf}, "ai_max"),
        ({"ai_max": 0.001}, "ai_max"),
        ({"n": 1}, "n"),
        ({"n": 2.5}, "n"),
        ({"n": True}, "n"),
    ],
)
def test_roof_curve_rejects(kwargs, name):
    args = {"peak_flops": H100_BF16, "mem_bw": H100_BW, "ai_min": 0.01, "ai_max": 1e4, "n": 16}
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        R.roof_curve(**args)


def test_place_rejects_bad_input():
    k = Kernel("k", 1.0, 1.0)
    with pytest.raises(ValueError, match="kernel"):
        R.place({"name": "k", "flops": 1, "bytes": 1}, H100_BF16, H100_BW)
    with pytest.raises(ValueError, match="peak_flops"):
        R.place(k, 0, H100_BW)
    with pytest.raises(ValueError, match="mem_bw"):
        R.place(k, H100_BF16, "fast")
    with pytest.raises(ValueError, match="kernels"):
        R.place_many([k, "k2"], H100_BF16, H100_BW)
    with pytest.raises(ValueError, match="kernels"):
        R.place_many(k, H100_BF16, H100_BW)
    with pytest.raises(ValueError, match="peak_flops"):
        R.place_many([k], math.inf, H100_BW)


def test_roof_rejects_bad_fields():
    with pytest.raises(ValueError, match="kind"):
        R.Roof("x", 1.0, 1.0, "dram", "bf16")
    with pytest.raises(ValueError, match="peak_flops"):
        R.Roof("x", -1.0, 1.0, "compute", "bf16")
    with pytest.raises(ValueError, match="ai_max"):
        R.Roof("x", 1.0, 1.0, "compute", "bf16").segment(10, 1)
