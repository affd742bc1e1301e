"""Kernel builders: honest FLOP and byte counts, and bad input."""

from __future__ import annotations

import math

import pytest

from workbench import kernels as K
from workbench import roofline as R
from workbench.kernels import Kernel

H100_BF16 = 989e12  # shared/references/README.md, H100 SXM BF16 dense
H100_BW = 3.35e12


def test_kernel_value_unchanged():
    k = Kernel("k", 2.0, 4.0, time_s=1.0)
    assert k.intensity == 0.5 and k.achieved_flops == 2.0
    assert Kernel.from_dict(k.to_dict()) == k
    assert Kernel("k", 1, 1).to_dict() == {"name": "k", "flops": 1.0, "bytes": 1.0}


def test_gemm_counts():
    k = K.gemm(128, 256, 64, "bf16")
    assert k.flops == 2 * 128 * 256 * 64
    assert k.bytes == (128 * 64 + 64 * 256 + 128 * 256) * 2
    assert "128x256x64" in k.name and "BF16" in k.name
    assert K.gemm(1, 1, 1, "fp32", name="tiny").name == "tiny"
    assert K.gemm(2, 2, 2, "FP8").bytes == 12  # dtype names are case-insensitive


def test_gemm_8192_intensity_in_the_thousands():
    k = K.gemm(8192, 8192, 8192, "bf16")
    assert k.intensity == pytest.approx(8192 / 3)
    assert R.bound(k.intensity, H100_BF16, H100_BW) == "compute"


def test_elementwise_add():
    k = K.elementwise(1000, "bf16")
    assert k.flops == 1000 and k.bytes == 1000 * 3 * 2
    assert k.intensity == pytest.approx(1 / 6)
    assert K.elementwise(10, "fp32", reads=1, writes=1, flops_per_element=4).intensity == pytest.approx(0.5)
    assert K.elementwise(10, "fp8", reads=0, writes=1).bytes == 10


def test_layer_norm_counts():
    k = K.layer_norm(4, 1024, "bf16")
    assert k.flops == K.LAYER_NORM_FLOPS_PER_ELEMENT * 4 * 1024 == 8 * 4096
    assert k.bytes == (2 * 4 * 1024 + 2 * 1024) * 2
    assert R.bound(k.intensity, H100_BF16, H100_BW) == "memory"


def test_attention_counts():
    b, h, s, d = 2, 4, 128, 64
    unfused = K.attention_unfused(b, h, s, d, "bf16")
    fused = K.attention_fused(b, h, s, d, "bf16")
    matmul_flops = b * h * 4 * s * s * d
    assert unfused.flops == fused.flops == matmul_flops + b * h * K.SOFTMAX_FLOPS_PER_SCORE * s * s
    assert fused.bytes == b * h * 4 * s * d * 2
    assert unfused.bytes == fused.bytes + b * h * 4 * s * s * 2


def test_attention_at_seq_4096_on_h100():
    unfused = K.attention_unfused(8, 32, 4096, 128)
    fused = K.attention_fused(8, 32, 4096, 128)
    ridge = R.ridge_point(H100_BF16, H100_BW)
    assert unfused.intensity < ridge < fused.intensity
    assert fused.intensity > 5 * ridge


def test_seed_examples_span_the_roofline():
    examples = K.seed_examples()
    assert 4 <= len(examples) <= 8
    assert all(isinstance(k, Kernel) for k in examples)
    names = [k.name.lower() for k in examples]
    assert any("add" in n for n in names) and any("gemm" in n for n in names)
    bounds = [R.bound(k.intensity, H100_BF16, H100_BW) for k in examples]
    assert bounds == ["memory", "memory", "compute", "memory", "compute"]
    assert min(k.intensity for k in examples) < 0.5
    assert max(k.intensity for k in examples) > 1000


@pytest.mark.parametrize("bad", [0, -1, 2.5, math.nan, math.inf, "8", True, None])
def test_builders_reject_bad_sizes(bad):
    with pytest.raises(ValueError, match="^m:"):
        K.gemm(bad, 8, 8)
    with pytest.raises(ValueError, match="^k:"):
        K.gemm(8, 8, bad)
    with pytest.raises(ValueError, match="^n_elements:"):
        K.elementwise(bad)
    with pytest.raises(ValueError, match="^rows:"):
        K.layer_norm(bad, 8)
    with pytest.raises(ValueError, match="^cols:"):
        K.layer_norm(8, bad)
    with pytest.raises(ValueError, match="^seq_len:"):
        K.attention_unfused(1, 1, bad, 8)
    with pytest.raises(ValueError, match="^head_dim:"):
        K.attention_fused(1, 1, 8, bad)
    with pytest.raises(ValueError, match="^batch:"):
        K.attention_fused(bad, 1, 8, 8)


@pytest.mark.parametrize("bad", ["bf17", "", "float32", 2, None, True])
def test_builders_reject_bad_dtype(bad):
    for build in (
        lambda: K.gemm(8, 8, 8, bad),
        lambda: K.elementwise(8, bad),
        lambda: K.layer_norm(8, 8, bad),
        lambda: K.attention_unfused(1, 1, 8, 8, bad),
        lambda: K.attention_fused(1, 1, 8, 8, bad),
    ):
        with pytest.raises(ValueError, match="^dtype:"):
            build()


def test_elementwise_rejects_bad_counts():
    with pytest.raises(ValueError, match="^reads:"):
        K.elementwise(8, reads=-1)
    with pytest.raises(ValueError, match="^reads:"):
        K.elementwise(8, reads=0, writes=0)
    with pytest.raises(ValueError, match="^writes:"):
        K.elementwise(8, writes=1.5)
    for bad in (0, -1, math.nan, "1", True):
        with pytest.raises(ValueError, match="^flops_per_element:"):
            K.elementwise(8, flops_per_element=bad)


def test_builders_reject_bad_name():
    with pytest.raises(ValueError, match="^name:"):
        K.gemm(8, 8, 8, name="  ")
    with pytest.raises(ValueError, match="^name:"):
        K.elementwise(8, name=3)


@pytest.mark.parametrize(("flops", "bytes_", "time_s", "parameter"), [
    (1e-300, 1e300, None, "bytes"),   # intensity underflows to 0
    (1e300, 1e-300, None, "bytes"),   # intensity overflows
    (1e300, 1.0, 1e-300, "time_s"),   # achieved rate overflows
])
def test_kernel_refuses_counts_whose_ratios_leave_the_float_range(flops, bytes_, time_s, parameter):
    from workbench._validate import InputError

    with pytest.raises(InputError) as info:
        Kernel("k", flops, bytes_, time_s)
    assert info.value.parameter == parameter
