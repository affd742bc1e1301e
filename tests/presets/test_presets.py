"""Built-in presets: every entry loads, every figure carries its source, spot checks against
the references table (/work/shared/references/README.md), and bad data files fail loudly."""

from __future__ import annotations

import json
import math
import tomllib
from importlib import resources
from pathlib import Path

import pytest

import presets
from presets import PresetError
from workbench.hardware import PRECISIONS, Hardware

KEYS = (
    "h100-sxm", "h100-pcie", "h200-sxm", "b200", "gb200", "a100-sxm-80gb", "a100-pcie-80gb",
    "v100-sxm2", "l40s", "rtx-4090", "mi300x", "mi250x", "tpu-v4", "tpu-v5p", "tpu-v5e",
    "a100-sxm-40gb", "gb300", "tpu-v3",
)


def rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


def data_text(name: str) -> str:
    return resources.files("presets").joinpath("data", name).read_text(encoding="utf-8")


# -- hardware -----------------------------------------------------------------------------------
def test_all_hardware_keys_exist_and_load():
    hws = presets.load_hardware()
    assert tuple(hw.key for hw in hws) == KEYS
    for hw in hws:
        assert isinstance(hw, Hardware)
        assert hw.builtin is True
        assert presets.hardware_by_key(hw.key) is hw


def test_unknown_hardware_key_raises_key_error():
    with pytest.raises(KeyError, match="no-such-gpu"):
        presets.hardware_by_key("no-such-gpu")


@pytest.mark.parametrize("key", KEYS)
def test_every_figure_has_a_source(key):
    hw = presets.hardware_by_key(key)
    assert hw.name.strip() and hw.vendor.strip()
    for rate in hw.compute:
        assert rate.source.strip(), f"{key} {rate.precision}"
        assert rate.precision in PRECISIONS
        assert 1e12 <= rate.dense_flops <= 2e16  # SI FLOP/s, not TFLOP/s
    for level in hw.memory:
        assert level.source.strip()
        assert 1e11 <= level.bandwidth <= 1e14  # bytes/s
    device = hw.device_memory
    assert device.name == "HBM"
    assert device.capacity is not None and 1e10 <= device.capacity <= 1e12  # bytes
    for level in hw.cache_levels:
        assert level.bandwidth > device.bandwidth  # a cache in front of device memory is faster
        assert level.note.strip()  # says whether it is a vendor peak or a measurement
    if hw.tdp_w is not None:
        assert hw.tdp_source.strip()
    if hw.interconnect_bw is not None:
        assert hw.interconnect_source.strip()
        assert 1e10 <= hw.interconnect_bw <= 1e13
    assert hw.interconnect.strip()


def test_data_file_cites_a_source_for_every_figure_group():
    data = tomllib.loads(data_text("hardware.toml"))
    for key, entry in data.items():
        for group in ("memory", "power"):
            if group in entry:
                tables = entry[group] if isinstance(entry[group], list) else [entry[group]]
                for table in tables:
                    assert table["source"].strip(), (key, group)
        compute = entry["compute"]
        for precision, rate in compute.items():
            if isinstance(rate, dict):
                assert (rate.get("source") or compute.get("source", "")).strip(), (key, precision)


def test_h100_sxm_against_references():
    hw = presets.hardware_by_key("h100-sxm")
    assert rel(hw.peak_flops("bf16"), 989e12) < 1e-3
    assert rel(hw.peak_flops("bf16", sparse=True), 1979e12) < 1e-3
    assert rel(hw.peak_flops("fp16"), 989e12) < 1e-3
    assert rel(hw.peak_flops("fp8"), 1979e12) < 1e-3
    assert rel(hw.peak_flops("tf32"), 494.5e12) < 1e-3
    assert hw.peak_flops("fp32") == pytest.approx(67e12)
    assert not hw.supports_sparsity("fp32")
    assert hw.mem_bw == pytest.approx(3.35e12)
    assert hw.mem_capacity == pytest.approx(80e9)
    assert hw.tdp_w == 700
    assert hw.interconnect_bw == pytest.approx(900e9)
    assert "3.072" in hw.memory[0].note  # the disagreeing figures are recorded


def test_rtx_4090_uses_fp32_accumulate_rate():
    hw = presets.hardware_by_key("rtx-4090")
    assert hw.peak_flops("bf16") == pytest.approx(165.2e12)
    assert hw.peak_flops("fp16") == pytest.approx(165.2e12)
    assert "330.3" in hw.rate("bf16").note
    assert hw.interconnect_bw is None


def test_v100_has_no_sparsity():
    hw = presets.hardware_by_key("v100-sxm2")
    assert all(rate.sparsity_factor is None for rate in hw.compute)
    assert hw.peak_flops("fp16", sparse=True) == pytest.approx(125e12)
    assert "tf32" not in hw.precisions


@pytest.mark.parametrize("key", ["tpu-v4", "tpu-v5p", "tpu-v5e", "mi250x"])
def test_dense_only_parts_have_no_sparsity(key):
    hw = presets.hardware_by_key(key)
    assert all(rate.sparsity_factor is None for rate in hw.compute)


@pytest.mark.parametrize("key", ["tpu-v4", "tpu-v5p", "tpu-v5e"])
def test_tpus_have_no_tdp(key):
    assert presets.hardware_by_key(key).tdp_w is None


def test_tpu_v4_memory_is_binary_and_measured_power_is_only_a_note():
    hw = presets.hardware_by_key("tpu-v4")
    assert hw.mem_capacity == 32 * 2**30
    assert "170" in hw.note
    assert hw.peak_flops("bf16") == pytest.approx(275e12)


def test_a100_sxm_memory_bandwidth():
    hw = presets.hardware_by_key("a100-sxm-80gb")
    assert hw.mem_bw == pytest.approx(2.039e12)
    assert hw.peak_flops("bf16", sparse=True) == pytest.approx(624e12)
    assert "fp8" not in hw.precisions


def test_blackwell_disagreements_recorded():
    b200 = presets.hardware_by_key("b200")
    assert b200.peak_flops("bf16") == pytest.approx(2.25e15)
    assert "1,100" in b200.rate("tf32").note
    gb200 = presets.hardware_by_key("gb200")
    assert gb200.peak_flops("bf16") == pytest.approx(2.5e15)
    assert "90" in gb200.rate("fp32").note


def test_pcie_only_parts_have_no_link_bandwidth():
    for key in ("l40s", "a100-pcie-80gb", "rtx-4090"):
        hw = presets.hardware_by_key(key)
        assert hw.interconnect_bw is None
        assert "PCIe" in hw.interconnect
    assert presets.hardware_by_key("l40s").interconnect == "PCIe Gen4, no NVLink"


def test_misc_spot_checks():
    assert presets.hardware_by_key("mi300x").peak_flops("bf16", sparse=True) == pytest.approx(2614.8e12)
    assert presets.hardware_by_key("mi250x").peak_flops("bf16") == pytest.approx(383.0e12)
    assert "2-GCD" in presets.hardware_by_key("mi250x").note
    assert "560" in presets.hardware_by_key("mi250x").note
    assert presets.hardware_by_key("tpu-v5p").interconnect_bw == pytest.approx(600e9)
    assert presets.hardware_by_key("h100-pcie").mem_bw == pytest.approx(2.0e12)


def test_hardware_round_trips_through_dict():
    for hw in presets.load_hardware():
        assert Hardware.from_dict(hw.to_dict()) == hw


# -- bad data files -----------------------------------------------------------------------------
GOOD = """
[x]
name = "Test GPU"
vendor = "Test"
[x.compute]
source = "a datasheet"
bf16 = { dense_tflops = 100, sparsity_factor = 2 }
[x.memory]
memory_gb = 10
mem_bw_tbs = 1.0
source = "a datasheet"
[x.power]
tdp_w = 300
source = "a datasheet"
"""


def write(tmp_path: Path, text: str, name: str = "hardware.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_good_temp_file_loads(tmp_path):
    (hw,) = presets.load_hardware(write(tmp_path, GOOD))
    assert hw.key == "x" and hw.peak_flops("bf16", sparse=True) == pytest.approx(200e12)


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ('source = "a datasheet"\nbf16', "bf16", "compute.bf16.source"),
        ("dense_tflops = 100", "dense_tflops = -100", "compute.bf16.dense_tflops"),
        ("mem_bw_tbs = 1.0", "mem_bw_tbs = 0", "memory.mem_bw_tbs"),
        ('mem_bw_tbs = 1.0\nsource = "a datasheet"', "mem_bw_tbs = 1.0", "memory.source"),
        ("tdp_w = 300", "tdp_w = -5", "power.tdp_w"),
        ("tdp_w = 300", 'tdp_w = "300 W"', "power.tdp_w"),
        ("sparsity_factor = 2", "sparsity_factor = 0.5", "compute.bf16.sparsity_factor"),
        ("bf16 =", "bf17 =", "compute.bf17"),
        ('vendor = "Test"', 'vendor = ""', "vendor"),
    ],
)
def test_bad_hardware_file_names_file_entry_and_field(tmp_path, old, new, field):
    assert old in GOOD
    path = write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(PresetError) as info:
        presets.load_hardware(path)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.field == field
    assert err.entry == "x"
    assert err.file == str(path)
    assert str(path) in str(err) and "'x'" in str(err) and field in str(err)


TWO_LEVELS = """
[y]
name = "Test GPU with an L2"
vendor = "Test"
[y.compute]
source = "a datasheet"
bf16 = { dense_tflops = 1000 }
[[y.memory]]
name = "HBM"
memory_gb = 80
technology = "HBM3"
mem_bw_tbs = 3.0
source = "a datasheet"
[[y.memory]]
name = "L2"
mem_bw_tbs = 12.5
capacity_mib = 50
source = "a microbenchmark of the test's own"
note = "Measured plateau."
[y.power]
tdp_w = 700
source = "a datasheet"
"""


def test_several_memory_levels_load_in_si_units(tmp_path):
    (hw,) = presets.load_hardware(write(tmp_path, TWO_LEVELS))
    assert [m.name for m in hw.memory] == ["HBM", "L2"]
    assert hw.mem_bw == 3.0e12 and hw.mem_capacity == 80e9  # device memory, as before
    (l2,) = hw.cache_levels
    assert l2.bandwidth == 12.5e12 and l2.capacity == 50 * 2**20
    assert l2.source == "a microbenchmark of the test's own" and l2.note == "Measured plateau."
    assert Hardware.from_dict(hw.to_dict()) == hw  # what a project file stores


def test_a_cache_level_may_leave_out_its_capacity(tmp_path):
    (hw,) = presets.load_hardware(write(tmp_path, TWO_LEVELS.replace("capacity_mib = 50\n", "")))
    assert hw.memory_level("L2").capacity is None


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ('name = "HBM"', 'name = "DRAM"', "memory"),  # no device-memory level
        ('name = "L2"', 'name = "HBM"', "memory[1].name"),  # two levels with one name
        ('mem_bw_tbs = 12.5\ncapacity_mib = 50\nsource = "a microbenchmark of the test\'s own"',
         "mem_bw_tbs = 12.5\ncapacity_mib = 50", "memory[1].source"),
        ("mem_bw_tbs = 12.5", "mem_bw_tbs = -1", "memory[1].mem_bw_tbs"),
        ("capacity_mib = 50", "capacity_mib = 50\nmemory_gb = 1", "memory[1].memory_gb"),
        ("memory_gb = 80\n", "", "memory[0].memory_gb"),  # device memory needs its capacity
        ('name = "L2"', 'name = ""', "memory[1].name"),
        ("capacity_mib = 50", "capacity_kb = 50", "memory[1].capacity_kb"),
    ],
)
def test_bad_memory_levels_name_the_level_and_field(tmp_path, old, new, field):
    assert old in TWO_LEVELS
    path = write(tmp_path, TWO_LEVELS.replace(old, new, 1))
    with pytest.raises(PresetError) as info:
        presets.load_hardware(path)
    assert info.value.entry == "y" and info.value.field == field, str(info.value)


GOOD_MEMORY = '[x.memory]\nmemory_gb = 10\nmem_bw_tbs = 1.0\nsource = "a datasheet"\n'


@pytest.mark.parametrize(("memory", "message"), [
    ("", "'memory': is missing"),
    ("memory = []\n", "must be a table, or one"),
    ("memory = 3\n", "must be a table, or one"),
])
def test_memory_that_is_neither_a_table_nor_levels_is_refused(tmp_path, memory, message):
    assert GOOD_MEMORY in GOOD
    text = GOOD.replace(GOOD_MEMORY, "").replace('vendor = "Test"\n', 'vendor = "Test"\n' + memory)
    with pytest.raises(PresetError, match=message):
        presets.load_hardware(write(tmp_path, text))


#: The built-in cache-level figures, each checked against what its source states.
CACHE_FIGURES = {
    ("h100-pcie", "L2"): 6.9e12,
    ("mi300x", "Infinity Cache"): 17e12,
}


def test_built_in_cache_levels_are_only_the_sourced_ones():
    found = {(hw.key, m.name): m for hw in presets.load_hardware() for m in hw.cache_levels}
    assert set(found) == set(CACHE_FIGURES)  # a new cache figure is added here, with its check
    for where, bandwidth in CACHE_FIGURES.items():
        assert found[where].bandwidth == bandwidth, where
    l2 = found[("h100-pcie", "L2")]
    assert "te42kyfo/gpu-benches" in l2.source and "h100_pcie.txt" in l2.source
    assert "measured" in l2.source.lower() and "not a vendor peak" in l2.note
    cache = found[("mi300x", "Infinity Cache")]
    assert "servethehome.com" in cache.source and "17 TB/s of peak bandwidth" in cache.source
    assert "vendor peak, not a measurement" in cache.note


def test_invalid_toml_and_missing_file(tmp_path):
    with pytest.raises(PresetError, match="not valid TOML"):
        presets.load_hardware(write(tmp_path, "[x\nname="))
    with pytest.raises(PresetError, match="cannot read"):
        presets.load_hardware(tmp_path / "missing.toml")


def test_bad_grid_pue_and_interconnect_files(tmp_path):
    grid = write(tmp_path, '[grids.a]\nname = "A"\ng_per_kwh = -1\nyear = 2020\nsource = "s"\n', "g.toml")
    with pytest.raises(PresetError, match="g_per_kwh") as info:
        presets.load_grids(grid)
    assert info.value.entry == "a"
    grid = write(tmp_path, '[grids.a]\nname = "A"\ng_per_kwh = 10\nyear = 2020\n', "g2.toml")
    with pytest.raises(PresetError, match="source"):
        presets.load_grids(grid)
    pue = write(tmp_path, '[pue.a]\nname = "A"\npue = 0.9\nsource = "s"\n', "p.toml")
    with pytest.raises(PresetError, match="'pue'"):
        presets.load_pue_classes(pue)
    link = write(tmp_path, '[interconnects.a]\nname = "A"\ntotal_gbs = 10\nper_direction_gbs = 5\n'
                 'latency_us = 1\nsource = "s"\nlatency_source = "s"\n', "i.toml")
    with pytest.raises(PresetError, match="exactly one"):
        presets.load_interconnects(link)


# -- grids, PUE, interconnects ------------------------------------------------------------------
def test_grids():
    grids = presets.load_grids()
    assert len(grids) >= 16
    world = presets.grid_by_key("world")
    assert grids[0] is world
    assert world.g_per_kwh == 475 and world.year == 2019
    assert "481" in world.note
    keys = [g.key for g in grids]
    assert len(set(keys)) == len(keys)
    for g in grids:
        assert g.source.strip() and g.name.strip()
        assert isinstance(g.year, int) and 2015 <= g.year <= 2025
        assert 0 <= g.g_per_kwh < 1500
    assert presets.grid_by_key("fr").g_per_kwh == pytest.approx(51.28)
    assert presets.grid_by_key("us").g_per_kwh == pytest.approx(423.94)


def test_generation_source_intensities():
    by_key = {g.key: g.g_per_kwh for g in presets.load_generation_intensities()}
    assert by_key == {
        "coal": 995, "petroleum": 816, "natural-gas": 743, "geothermal": 38,
        "hydro": 26, "nuclear": 29, "solar": 48, "wind": 26,
    }
    assert all("codecarbon" in g.source.lower() for g in presets.load_generation_intensities())


def test_pue_classes():
    classes = {c.key: c for c in presets.load_pue_classes()}
    assert classes["best-liquid-cooled"].pue == pytest.approx(1.1)
    assert classes["hyperscale-google"].pue == pytest.approx(1.12)
    assert classes["hyperscale-aws"].pue == pytest.approx(1.2)
    assert classes["hyperscale-azure"].pue == pytest.approx(1.12)
    assert classes["typical"].pue == pytest.approx(1.56)
    assert "1.58" in classes["typical"].note and "1.0" in classes["typical"].note
    assert classes["carbontracker-default"].pue == pytest.approx(1.58)
    assert classes["it-only"].pue == 1.0
    assert all(c.source.strip() for c in classes.values())


def test_interconnects():
    links = {i.key: i for i in presets.load_interconnects()}
    for gen, total in (("2", 300), ("3", 600), ("4", 900), ("5", 1800)):
        link = links[f"nvlink-{gen}"]
        assert link.bw_per_direction == pytest.approx(total * 1e9 / 2)
        assert link.latency_s == pytest.approx(3.4e-6)
        assert link.achievable_fraction == pytest.approx(0.8)
        assert link.achievable_bw == pytest.approx(0.8 * total * 1e9 / 2)
    assert links["pcie-4-x16"].bw_per_direction == pytest.approx(31e9)
    assert links["pcie-5-x16"].bw_per_direction == pytest.approx(63e9)
    assert links["pcie-4-x16"].latency_s == pytest.approx(5.7e-6)
    for gbit in (100, 200, 400, 800):
        nic = links[f"nic-{gbit}g"]
        assert nic.bw_per_direction == pytest.approx(gbit * 1e9 / 8)
        assert nic.latency_s == pytest.approx(9.6e-6)
        assert nic.achievable_fraction == pytest.approx(0.96)
    assert "24 GB/s" in links["nic-200g"].note
    for link in links.values():
        assert link.source.strip() and link.latency_source.strip()
    assert presets.interconnect_by_key("nvlink-4") is links["nvlink-4"]


def test_run_context_default_interconnect_is_a_preset():
    from workbench.context import RunContext

    ctx = RunContext()
    presets.interconnect_by_key(ctx.interconnect)
    presets.hardware_by_key(ctx.hardware)


# -- samples ------------------------------------------------------------------------------------
def _kinds() -> set[str]:
    from workbench.scenarios import SCENARIO_TYPES

    return set(SCENARIO_TYPES)


def test_sample_dicts_cover_every_kind_and_reference_real_presets():
    samples = presets.load_sample_dicts()
    assert {d["kind"] for _, d in samples} == _kinds()
    hw_keys = {hw.key for hw in presets.load_hardware()}
    link_keys = {i.key for i in presets.load_interconnects()}
    grid_keys = {g.key for g in presets.load_grids()}
    for name, d in samples:
        assert d["schema_version"] == 1, name
        hw = d.get("hardware")
        for key in (hw if isinstance(hw, list) else [hw] if hw else []):
            assert key in hw_keys, (name, key)
        for field in ("interconnect", "intra_node", "inter_node"):
            if d.get(field):
                assert d[field] in link_keys, (name, field)
        if "region" in d:
            assert d["region"] in grid_keys, name
        assert "NaN" not in json.dumps(d), name


def test_sample_gemm_kernel_by_formula():
    samples = dict(presets.load_sample_dicts())
    kernels = samples["Seed kernels on H100 vs B200"]["kernels"]
    gemm = next(k for k in kernels if k["name"].startswith("GEMM"))
    assert gemm["flops"] == 2 * 8192**3
    assert gemm["bytes"] == 3 * 8192**2 * 2


def test_all_samples_parse():
    pytest.importorskip("workbench.scenarios", reason="workbench/scenarios.py not written yet")
    parsed = presets.sample_scenarios()
    assert len(parsed) == len(presets.load_sample_dicts())
    from workbench.scenarios import scenario_from_dict

    assert {scenario.kind for _, scenario in parsed} == _kinds()
    for name, scenario in parsed:
        assert scenario_from_dict(scenario.to_dict()) == scenario, name


def test_bad_samples_file(tmp_path):
    path = write(tmp_path, json.dumps({"samples": [{"name": "a", "scenario": {}}]}), "s.json")
    with pytest.raises(PresetError, match="kind"):
        presets.load_sample_dicts(path)
    path = write(tmp_path, "{", "s2.json")
    with pytest.raises(PresetError, match="JSON"):
        presets.load_sample_dicts(path)


def test_no_nan_in_data_files():
    def floats(node):
        if isinstance(node, dict):
            for value in node.values():
                yield from floats(value)
        elif isinstance(node, float):
            yield node

    for name in ("hardware.toml", "grids.toml", "pue.toml", "interconnects.toml"):
        assert all(math.isfinite(x) for x in floats(tomllib.loads(data_text(name)))), name


def test_notes_read_as_sentences():
    # A group note and a figure's own note are joined as sentences, not with '.;'.
    for hw in presets.load_hardware():
        for note in [hw.note, *(c.note for c in hw.compute), *(m.note for m in hw.memory)]:
            assert ".;" not in note, (hw.key, note)


# -- figures added for the run plan -------------------------------------------------------------
@pytest.mark.parametrize(("key", "precision", "tflops"), [
    ("h100-sxm", "bf16", 794.5), ("h100-sxm", "fp8", 1402.6), ("a100-sxm-80gb", "bf16", 271.2),
    ("a100-sxm-40gb", "bf16", 271.2), ("b200", "bf16", 1745.0), ("gb200", "fp8", 3615.6),
    ("mi300x", "bf16", 668.4),
])
def test_measured_matmul_rates_carry_their_source(key, precision, tflops):
    rate = presets.hardware_by_key(key).rate(precision)
    assert rate.achievable_flops == pytest.approx(tflops * 1e12)
    assert "Maximum Achievable Matmul FLOPS" in rate.achievable_source
    assert 0.5 < rate.matmul_fraction < 0.9


def test_unmeasured_rates_have_no_matmul_fraction():
    assert presets.hardware_by_key("gb300").rate("bf16").matmul_fraction is None
    assert presets.hardware_by_key("h100-sxm").rate("fp16").achievable_flops is None


def test_new_presets_match_their_sources():
    a100 = presets.hardware_by_key("a100-sxm-40gb")
    assert a100.peak_flops("bf16") == 312e12 and a100.mem_capacity == 40e9 and a100.mem_bw == 1.555e12
    gb300 = presets.hardware_by_key("gb300")
    assert gb300.peak_flops("bf16") == 2.5e15 and gb300.peak_flops("fp8") == 5e15
    assert gb300.tdp_w == 1400 and gb300.mem_capacity == 279e9
    tpu = presets.hardware_by_key("tpu-v3")
    assert tpu.peak_flops("bf16") == 123e12 and tpu.mem_capacity == 32 * 2**30 and tpu.tdp_w is None


def test_nic_presets_reach_what_nccl_measures():
    # ~24 GB/s per HDR 200 Gb/s NIC (nccl issue 412), 48-49 GB/s per NDR 400 Gb/s NIC.
    assert presets.interconnect_by_key("nic-200g").achievable_bw == pytest.approx(24e9)
    assert presets.interconnect_by_key("nic-400g").achievable_bw == pytest.approx(48e9)
    for link in presets.load_interconnects():
        if link.achievable_fraction is not None:
            assert link.achievable_source


def test_a_measured_rate_without_its_source_is_refused(tmp_path):
    text = presets.loader._data_text("hardware.toml", None)[1]
    bad = text.replace('mamf_source = "stas00/ml-engineering compute/accelerator/README.md, Maximum '
                       'Achievable Matmul FLOPS table (mamf-finder', 'note_x = "(', 1)
    path = tmp_path / "hardware.toml"
    path.write_text(bad, encoding="utf-8")
    with pytest.raises(presets.PresetError, match="mamf_source|note_x"):
        presets.load_hardware(path)


def test_model_presets_carry_their_shapes_and_sources():
    models = {m.key: m for m in presets.load_models()}
    assert set(models) == {"llama3-8b", "llama3-70b", "llama3-405b", "gpt3-175b"}
    m = models["llama3-70b"]
    assert (m.n_layers, m.d_model, m.n_heads, m.n_kv_heads, m.d_ffn) == (80, 8192, 64, 8, 28672)
    assert "Llama 3" in m.source and m.gated_mlp
    assert models["gpt3-175b"].seq_len == 2048 and not models["gpt3-175b"].gated_mlp
    assert presets.model_by_key("llama3-8b") is models["llama3-8b"]


def test_a_sample_plan_named_after_a_model_preset_has_that_preset_s_shape():
    # the Run plan panel then shows the preset's name, not "Custom"
    from workbench import plan as plan_model

    models = presets.load_models()
    plans = [(name, s) for name, s in presets.sample_scenarios() if s.kind == "run_plan"]
    named = [(name, s, m) for name, s in plans for m in models if name.startswith(m.name + " ")]
    assert any(m.key == "llama3-70b" for _n, _s, m in named)
    for name, scenario, model in named:
        assert plan_model.shape_of(scenario) == model.fields(), name
