"""The notebook interface of design.md: these names are a contract users' scripts rely on."""

from __future__ import annotations

import inspect

import pytest

import workbench

CONTRACT = {
    "roofline.ridge_point": ["peak_flops", "mem_bw"],
    "roofline.attainable": ["ai", "peak_flops", "mem_bw"],
    "mfu.flops_per_token": ["n_params", "n_layers", "d_model", "seq_len"],
    "mfu.mfu": ["n_params", "tokens_per_s", "n_gpus", "peak_flops", "n_layers", "d_model", "seq_len"],
    "comms.ring_allreduce_time": ["size_bytes", "n_ranks", "link_bw", "alpha"],
    "comms.tree_allreduce_time": ["size_bytes", "n_ranks", "link_bw", "alpha"],
    "comms.bus_factor": ["collective", "n_ranks"],
    "comms.parse_nccl_tests": ["text"],
    "scaling.amdahl_speedup": ["serial_fraction", "n"],
    "scaling.gustafson_speedup": ["serial_fraction", "n"],
    "scaling.scaling_efficiency": ["throughput_n", "n", "throughput_1"],
    "scaling.karp_flatt": ["speedup", "n"],
    "carbon.facility_energy_kwh": ["it_energy_kwh", "pue"],
    "carbon.emissions_kg": ["facility_energy_kwh", "grid_g_per_kwh"],
}


@pytest.mark.parametrize("dotted", sorted(CONTRACT))
def test_contract_name_and_parameters(dotted):
    module_name, func_name = dotted.split(".")
    func = getattr(getattr(workbench, module_name), func_name)  # plain `import workbench` suffices
    params = list(inspect.signature(func).parameters)
    assert params[: len(CONTRACT[dotted])] == CONTRACT[dotted]


def test_contract_values_from_design():
    assert workbench.roofline.ridge_point(989e12, 3.35e12) == pytest.approx(295.22, rel=1e-3)
    assert workbench.comms.ring_allreduce_time(1e9, 8, 1e11, 5e-6) == pytest.approx(
        2 * 7 / 8 * 1e9 / 1e11 + 2 * 7 * 5e-6)
    assert workbench.comms.tree_allreduce_time(1e9, 8, 1e11, 5e-6) == pytest.approx(
        2 * 1e9 / 1e11 + 2 * 3 * 5e-6)
    assert workbench.comms.bus_factor("all_reduce", 8) == pytest.approx(2 * 7 / 8)
    assert workbench.comms.bus_factor(workbench.collectives.Collective.ALL_GATHER, 8) == pytest.approx(7 / 8)
    # PaLM 540B passes d_model = 48 heads x 256 = 12288.
    assert workbench.mfu.flops_per_token(540e9, 118, 12288, 2048) == pytest.approx(
        6 * 540e9 + 12 * 118 * 12288 * 2048)
    assert workbench.carbon.emissions_kg(workbench.carbon.facility_energy_kwh(1000, 1.2), 475) == pytest.approx(570)
