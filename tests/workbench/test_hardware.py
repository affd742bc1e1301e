"""Hardware value type: construction, peak rates with and without sparsity, round-trips, errors."""

from __future__ import annotations

import json
import math

import pytest

from workbench.hardware import PRECISION_BYTES, PRECISIONS, ComputeRate, Hardware, MemoryLevel, slug


def make(**changes) -> Hardware:
    # H100 SXM figures from shared/references/README.md.
    fields = dict(
        name="NVIDIA H100 SXM",
        vendor="NVIDIA",
        compute=(
            ComputeRate("fp32", 67e12, source="datasheet"),
            ComputeRate("bf16", 989e12, source="datasheet", sparsity_factor=2.0),
            ComputeRate("fp8", 1979e12, source="datasheet", sparsity_factor=2.0),
        ),
        memory=(
            MemoryLevel("HBM", 3.35e12, source="datasheet", capacity=80e9, technology="HBM3"),
            MemoryLevel("L2", 12e12, source="illustrative"),
        ),
        tdp_w=700.0,
        tdp_source="datasheet",
        interconnect_bw=900e9,
        interconnect="NVLink 4",
        interconnect_source="datasheet",
    )
    fields.update(changes)
    return Hardware(**fields)


def test_construction_and_lookups():
    hw = make()
    assert hw.key == "nvidia-h100-sxm"
    assert hw.precisions == ("fp32", "bf16", "fp8")  # canonical order
    assert hw.mem_bw == 3.35e12 and hw.mem_capacity == 80e9
    assert hw.memory_level("L2").bandwidth == 12e12
    assert hw.rate("bf16").dense_flops == 989e12
    assert isinstance(hw.compute, tuple) and isinstance(hw.memory, tuple)


def test_precision_tables_agree():
    assert set(PRECISION_BYTES) == set(PRECISIONS)
    assert PRECISION_BYTES["bf16"] == 2 and PRECISION_BYTES["fp8"] == 1


def test_peak_flops_dense_and_sparse():
    hw = make()
    assert hw.peak_flops("bf16") == 989e12
    assert hw.peak_flops("bf16", sparse=True) == 1978e12
    assert hw.supports_sparsity("bf16")


def test_precision_without_sparsity_ignores_the_flag():
    hw = make()
    assert not hw.supports_sparsity("fp32")
    assert hw.peak_flops("fp32", sparse=True) == hw.peak_flops("fp32") == 67e12


def test_device_memory_is_the_hbm_level_wherever_listed():
    hw = make(memory=(MemoryLevel("L2", 12e12, source="x"), MemoryLevel("HBM", 3.35e12, source="y", capacity=80e9)))
    assert hw.mem_bw == 3.35e12 and hw.mem_capacity == 80e9


def test_to_dict_from_dict_round_trip_through_json():
    hw = make(note="a note", builtin=True, key="h100-sxm")
    data = json.loads(json.dumps(hw.to_dict()))
    assert data["key"] == "h100-sxm"
    assert "sparsity_factor" not in data["compute"][0]  # absent rather than null
    assert Hardware.from_dict(data) == hw
    minimal = Hardware(name="X", vendor="V", compute=(ComputeRate("fp64", 1e12, "s"),),
                       memory=(MemoryLevel("HBM", 1e12, "s"),))
    assert Hardware.from_dict(json.loads(json.dumps(minimal.to_dict()))) == minimal


def test_with_changes_validates_again():
    hw = make()
    assert hw.with_changes(tdp_w=400.0).tdp_w == 400.0
    with pytest.raises(ValueError, match="^tdp_w:"):
        hw.with_changes(tdp_w=-1)


def test_slug():
    assert slug("NVIDIA H100 SXM") == "nvidia-h100-sxm"
    assert slug("  AMD MI300X (OAM) ") == "amd-mi300x-oam"


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, "989e12", True, None])
def test_compute_rate_rejects_bad_flops(bad):
    with pytest.raises(ValueError, match="^dense_flops:"):
        ComputeRate("bf16", bad, source="s")


@pytest.mark.parametrize("bad", [1.0, 0.5, 17.0, math.nan, "2"])
def test_compute_rate_rejects_bad_sparsity_factor(bad):
    with pytest.raises(ValueError, match="^sparsity_factor:"):
        ComputeRate("bf16", 1e12, source="s", sparsity_factor=bad)


def test_field_validation():
    with pytest.raises(ValueError, match="^precision:"):
        ComputeRate("bf17", 1e12, source="s")
    with pytest.raises(ValueError, match="^source:"):
        ComputeRate("bf16", 1e12, source="")
    with pytest.raises(ValueError, match="^bandwidth:"):
        MemoryLevel("HBM", -1, source="s")
    with pytest.raises(ValueError, match="^capacity:"):
        MemoryLevel("HBM", 1e12, source="s", capacity=0)
    with pytest.raises(ValueError, match="^name:"):
        make(name=" ")
    with pytest.raises(ValueError, match="^compute:"):
        make(compute=())
    with pytest.raises(ValueError, match="^memory:"):
        make(memory=())
    with pytest.raises(ValueError, match="^compute:"):
        make(compute=(ComputeRate("bf16", 1e12, "s"), ComputeRate("bf16", 2e12, "s")))
    with pytest.raises(ValueError, match="^memory:"):
        make(memory=(MemoryLevel("HBM", 1e12, "s"), MemoryLevel("HBM", 2e12, "s")))
    with pytest.raises(ValueError, match="^compute:"):
        make(compute=({"precision": "bf16", "dense_flops": 1e12, "source": "s"},))
    with pytest.raises(ValueError, match="^memory:"):
        make(memory="HBM")
    with pytest.raises(ValueError, match="^tdp_source:"):
        make(tdp_source="")
    with pytest.raises(ValueError, match="^interconnect_bw:"):
        make(interconnect_bw=math.nan)
    with pytest.raises(ValueError, match="^builtin:"):
        make(builtin="no")


def test_lookup_errors_name_the_parameter():
    hw = make()
    with pytest.raises(ValueError, match="^precision:.*fp64"):
        hw.peak_flops("fp64")
    with pytest.raises(ValueError, match="^name:.*no memory level 'L3'"):
        hw.memory_level("L3")


@pytest.mark.parametrize(
    ("data", "name"),
    [
        ("not a mapping", "hardware"),
        ({"name": "x", "vendor": "v", "compute": [], "memory": [], "colour": "green"}, "colour"),
        ({"name": "x", "vendor": "v", "compute": ["bf16"], "memory": []}, r"compute\[0\]"),
        ({"name": "x", "vendor": "v", "compute": [{"precision": "bf16", "dense_flops": 1, "source": "s", "x": 1}],
          "memory": [{"name": "HBM", "bandwidth": 1, "source": "s"}]}, r"compute\[0\]\.x"),
        ({"name": "x", "vendor": "v", "compute": [{"precision": "bf16", "dense_flops": "fast", "source": "s"}],
          "memory": [{"name": "HBM", "bandwidth": 1, "source": "s"}]}, r"compute\[0\]\.dense_flops"),
        ({"name": "x", "vendor": "v", "compute": [{"precision": "bf16", "source": "s"}],
          "memory": [{"name": "HBM", "bandwidth": 1, "source": "s"}]}, r"compute\[0\]\.dense_flops"),
        ({"vendor": "v", "compute": [], "memory": []}, "name"),
        ({"name": "x", "vendor": "v", "compute": [{"precision": "bf16", "dense_flops": 1, "source": "s"}],
          "memory": []}, "memory"),
    ],
)
def test_from_dict_rejects_bad_data(data, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        Hardware.from_dict(data)
