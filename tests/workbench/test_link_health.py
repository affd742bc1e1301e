"""Link health of nccl-tests logs: healthy NVLink, a node fallen back to PCIe, two nodes over
400 Gb/s NICs, and the logs that cannot be judged."""

from __future__ import annotations

from pathlib import Path

import pytest

import presets.catalog
from workbench import comms, link_health, nccl
from workbench._validate import InputError

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "nccl"
GB = 1e9


def _result(name: str) -> nccl.NcclResult:
    return nccl.parse_nccl_tests((FIXTURES / name).read_text(encoding="utf-8"))


def test_a_healthy_h100_node_reaches_hundreds_of_gb_per_s():
    health = link_health.classify(_result("h100-node-healthy-allreduce.txt"))
    assert health.verdict == link_health.HEALTHY and health.healthy
    assert 360 * GB <= health.measured_busbw <= 480 * GB
    expected = health.expected
    assert expected.intra.key == "nvlink-4" and expected.inter is None
    assert expected.nodes == 1 and expected.n_ranks == 8
    assert expected.nominal_bw == pytest.approx(450 * GB)
    assert expected.achievable_bw == pytest.approx(360 * GB)  # the preset's sourced 80%
    assert health.ratio == pytest.approx(health.measured_busbw / (450 * GB))
    assert health.summary.startswith("Healthy: 412 GB/s busbw at 256 MiB and above, 91% of the 450 GB/s")
    assert "NVLink 4" in health.summary and "\n" not in health.summary
    assert any("80%" in source for source in expected.sources)


def test_a_node_fallen_back_to_pcie_is_degraded_to_a_pcie_class():
    health = link_health.classify(_result("h100-node-pcie-fallback-allreduce.txt"))
    assert health.verdict == link_health.DEGRADED and not health.healthy
    assert 20 * GB <= health.measured_busbw <= 50 * GB
    assert health.degraded_to == "PCIe Gen5 x16"
    assert health.summary.startswith("Degraded to PCIe Gen5 x16 class (63 GB/s): 38.7 GB/s busbw")
    assert "healthy from 60%" in health.summary


def test_below_pcie_gen4_names_gen4():
    text = (FIXTURES / "h100-node-pcie-fallback-allreduce.txt").read_text()
    slower = "\n".join(_scale_busbw(line, 0.5) for line in text.splitlines())
    result = nccl.parse_nccl_tests(slower)
    assert not result.skipped_lines
    health = link_health.classify(result)
    assert health.measured_busbw < 31 * GB and health.degraded_to == "PCIe Gen4 x16"


def _scale_busbw(line: str, factor: float, bus_factor: float = 1.75) -> str:
    """A row with every time divided by ``factor`` (so the bandwidths times it), re-printed
    (``bus_factor``: the log's all-reduce factor 2(n-1)/n)."""
    cells = line.split()
    if len(cells) != 13 or not cells[0].isdigit():
        return line
    size = int(cells[0])
    out = cells[:5]
    for at in (5, 9):
        time = float(cells[at]) / factor
        alg = size / (time * 1e3)
        out += [f"{time:.1f}", f"{alg:.2f}", f"{alg * bus_factor:.2f}", cells[at + 3]]
    return " ".join(out)


def test_two_nodes_over_400g_nics_are_judged_against_the_hierarchical_ring():
    result = _result("h100-2node-nic400-allreduce.txt")
    layout = link_health.node_layout(result)
    assert (layout.nodes, layout.ranks_per_node, layout.even) == (2, 8, True)
    health = link_health.classify(result, inter_node="nic-400g")
    expected = health.expected
    assert expected.inter.key == "nic-400g" and expected.nodes == 2 and expected.ranks_per_node == 8
    nvlink, nic = presets.interconnect_by_key("nvlink-4"), presets.interconnect_by_key("nic-400g")
    # the run plan's formula, not a copy: min(NVLink, 8 x NIC) at nominal rates
    assert expected.nominal_bw == comms.hierarchical_link(8, 16, nvlink.bw_per_direction, nvlink.latency_s,
                                                          nic.bw_per_direction, nic.latency_s)[0]
    assert expected.nominal_bw == pytest.approx(400 * GB)
    assert expected.alpha == nic.latency_s
    assert health.verdict == link_health.HEALTHY
    assert "2 nodes with NVLink 4 inside and 8 × 400 Gb/s NICs each" in health.summary
    assert "min(NVLink 4 450 GB/s, 8 × 50 GB/s) = 400 GB/s" in expected.rule


def test_slower_nics_make_the_same_log_exceed_the_bound():
    health = link_health.classify(_result("h100-2node-nic400-allreduce.txt"), inter_node="nic-200g")
    assert health.expected.nominal_bw == pytest.approx(200 * GB)
    assert health.verdict == link_health.HEALTHY and "above the nominal bound" in health.summary


def test_a_multi_node_log_at_one_nics_rate_is_said_to_be_so():
    text = (FIXTURES / "h100-2node-nic400-allreduce.txt").read_text()
    slow = "\n".join(_scale_busbw(line, 45 / 359, 1.875) for line in text.splitlines())
    result = nccl.parse_nccl_tests(slow)
    assert not result.skipped_lines and len(result.rows) == 24
    health = link_health.classify(result, inter_node="nic-400g")
    assert health.verdict == link_health.DEGRADED and 40 * GB < health.measured_busbw < 50 * GB
    assert health.degraded_to == "one 400 Gb/s NIC"


@pytest.mark.parametrize(("name", "reason"), [
    ("rccl-wrapped.txt", "no link preset for the device 'AMD Instinct MI300X'"),
    ("reducescatter-2020-pasted.txt", "lists no devices"),
    ("nccl-debug-info-allreduce.txt", "0 sizes of 256 MiB or more (largest 128 MiB; 2 needed)"),
    ("bad-values-allreduce.txt", "1 size of 256 MiB or more"),
])
def test_logs_that_cannot_be_judged_say_why(name, reason):
    health = link_health.classify(_result(name))
    assert health.verdict == link_health.NOT_COMPARABLE and health.ratio is None
    assert health.summary.startswith("Not comparable: ") and reason in health.summary


def test_mixed_devices_are_not_comparable():
    text = (FIXTURES / "h100-node-healthy-allreduce.txt").read_text()
    mixed = text.replace("device  7 [0000:db:00] NVIDIA H100 80GB HBM3", "device  7 [0000:db:00] NVIDIA A100-SXM4-80GB")
    health = link_health.classify(nccl.parse_nccl_tests(mixed))
    assert health.verdict == link_health.NOT_COMPARABLE and "mixes devices" in health.summary


@pytest.mark.parametrize(("device", "key"), [
    ("NVIDIA H100 80GB HBM3", "nvlink-4"),
    ("NVIDIA H200", "nvlink-4"),
    ("NVIDIA H100 PCIe", "pcie-5-x16"),
    ("NVIDIA H100 NVL", None),
    ("NVIDIA A100-SXM4-80GB", "nvlink-3"),
    ("A100-SXM4-40GB", "nvlink-3"),
    ("NVIDIA A100-PCIE-40GB", "pcie-4-x16"),
    ("NVIDIA A100 80GB PCIe", "pcie-4-x16"),
    ("Tesla V100-SXM2-32GB", "nvlink-2"),
    ("NVIDIA B200", "nvlink-5"),
    ("NVIDIA GB200", "nvlink-5"),
    ("NVIDIA L40S", "pcie-4-x16"),
    ("NVIDIA GeForce RTX 4090", "pcie-4-x16"),
    ("AMD Instinct MI300X", None),
])
def test_device_names_map_to_link_presets(device, key):
    found, why = link_health.device_link(device)
    assert found == key and why
    if key is not None:
        presets.interconnect_by_key(key)  # a preset that exists


def test_the_catalog_is_the_callers_and_the_nic_must_exist():
    result = _result("h100-2node-nic400-allreduce.txt")
    health = link_health.classify(result, presets.catalog.BUILTIN)
    assert health.verdict == link_health.HEALTHY
    with pytest.raises(InputError) as info:
        link_health.classify(result, inter_node="nic-9000g")
    assert info.value.parameter == "inter_node"
    # a plain catalog says KeyError for a key it lacks: still the caller's field, with what to fix
    with pytest.raises(InputError) as info:
        link_health.classify(result, presets.catalog.BUILTIN, inter_node="nic-9000g")
    assert info.value.parameter == "inter_node" and "nic-9000g" in str(info.value)
    with pytest.raises(InputError) as info:
        link_health.classify("not a result")
    assert info.value.parameter == "result"
    with pytest.raises(InputError) as info:
        link_health.classify(result, catalog=object())
    assert info.value.parameter == "catalog"


def test_large_message_busbw_counts_whole_buffer_sizes():
    result = _result("h100-node-sendrecv.txt")
    busbw, count = link_health.large_message_busbw(result)
    assert count == 3  # 256 MiB, 512 MiB, 1 GiB
    assert busbw == max(r.out_of_place.busbw for r in result.rows if r.size >= 2**28)
